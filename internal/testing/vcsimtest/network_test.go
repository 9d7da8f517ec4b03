package vcsimtest

import (
	"context"
	"slices"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// Options.PortGroups: the port group is one Network of the datacenter,
// which both named hosts connect to (and the third not), on DataVSwitch
// of each (config.network), as a client reads it over the API; a second
// AddPortGroup changes nothing, and a host that does not exist is an error.
func TestPortGroups(t *testing.T) {
	src := `name: pg
switches: [{name: sw, model: SN2700, onyx: 3.6.8190}]
docker: {version: "24.0"}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  gpus: [{model: A100-PCIE-40GB, memory_gb: 40}]
  nic: {model: ConnectX-6 Dx, pf: vmnic4, vfs: 4, portgroup: roce-pg}
hosts:
  - {name: a, esxi: esx-a, data: {address: 10.0.0.1/24, port: 1/1}}
  - {name: b, esxi: esx-b, data: {address: 10.0.0.2/24, port: 1/2}}
  - {name: c, esxi: esx-c, data: {address: 10.0.0.3/24, port: 1/3}}
`
	inv, err := inventory.Load("pg.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(inv, Options{PortGroups: map[string][]string{"esx-a": {"roce-pg"}, "esx-b": {"roce-pg"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddPortGroup("esx-a", "roce-pg"); err != nil {
		t.Fatalf("again: %v", err)
	}
	if err := s.AddPortGroup("esx-z", "roce-pg"); err == nil || err.Error() != "no ESXi host esx-z" {
		t.Errorf("a host that does not exist: %v", err)
	}
	ctx := context.Background()
	c, err := s.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Logout(ctx) }()
	f := find.NewFinder(c.Client, true)
	dc, err := f.DefaultDatacenter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.SetDatacenter(dc)
	nets, err := f.NetworkList(ctx, "*")
	if err != nil {
		t.Fatal(err)
	}
	var pg []object.NetworkReference
	for _, n := range nets {
		if n.GetInventoryPath() == "/DC0/network/roce-pg" {
			pg = append(pg, n)
		}
	}
	if len(pg) != 1 {
		t.Fatalf("networks named roce-pg: %d (%v)", len(pg), nets)
	}
	ref := pg[0].Reference()
	for _, tc := range []struct {
		esxi string
		want bool
	}{{"esx-a", true}, {"esx-b", true}, {"esx-c", false}} {
		var h mo.HostSystem
		if err := object.NewHostSystem(c.Client, s.Host(tc.esxi).Self).Properties(ctx, s.Host(tc.esxi).Self, []string{"network", "config.network"}, &h); err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(h.Network, ref); got != tc.want {
			t.Errorf("%s connected to roce-pg: %v, want %v (%v)", tc.esxi, got, tc.want, h.Network)
		}
		var onVSwitch, listed int
		for _, vs := range h.Config.Network.Vswitch {
			if vs.Name == DataVSwitch && slices.Contains(vs.Portgroup, "key-vim.host.PortGroup-roce-pg") {
				onVSwitch++
			}
		}
		for _, p := range h.Config.Network.Portgroup {
			if p.Spec.Name == "roce-pg" && p.Spec.VswitchName == DataVSwitch {
				listed++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[tc.want]; onVSwitch != want || listed != want {
			t.Errorf("%s: roce-pg %d time(s) on %s's list, %d in config.network.portgroup; want %d", tc.esxi, onVSwitch, DataVSwitch, listed, want)
		}
	}
}
