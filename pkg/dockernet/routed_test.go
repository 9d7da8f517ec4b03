package dockernet

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// oneSwitchInventory is n hosts on one SN4600C (64 ports), 16 VMs per ESXi
// host sharing its port, on one /16 data network, with docker.routing set
// and the hosts' OS os.
func oneSwitchInventory(tb testing.TB, n int, routing, os string) *inventory.Inventory {
	tb.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "name: big\ndocker: {pool: 172.16.0.0/12, prefix: 24, routing: %s}\nswitches: [{name: sw, model: SN4600C, onyx: 3.6.8190}]\n", routing)
	fmt.Fprintf(&b, "defaults:\n  os: %s\n  data_interface: enp1f0\n  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]\n  nic: {model: ConnectX-5, pf: vmnic4, vfs: 16}\nhosts:\n", os)
	for i := 0; i < n; i++ {
		off := i + 1
		fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 10.99.%d.%d/16, port: 1/%d}}\n", i, i/16, off>>8, off&255, i/16+1)
	}
	inv, err := inventory.Load("big.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

// hostFiles are the artifacts of host h0, by file name.
func hostFiles(inv *inventory.Inventory) map[string]artifact.File {
	out := map[string]artifact.File{}
	for _, f := range Artifacts(inv) {
		if name, ok := strings.CutPrefix(f.Path, "hosts/h0/"); ok {
			out[name] = f
		}
	}
	return out
}

// In routed-pool mode a host's files are the same bytes whatever the
// cluster's size: one route (the pool via the switch), one ACCEPT rule and
// one NAT exemption (the pool). In per-host mode they grow with it.
func TestSwitchRoutedFilesIndependentOfClusterSize(t *testing.T) {
	for _, os := range []string{"ubuntu-16.04", "ubuntu-20.04"} {
		small, big := hostFiles(oneSwitchInventory(t, 8, "switch", os)), hostFiles(oneSwitchInventory(t, 1024, "switch", os))
		if len(small) != 6 || len(big) != 6 {
			t.Fatalf("%s: files %d, %d", os, len(small), len(big))
		}
		for name, f := range small {
			if string(big[name].Data) != string(f.Data) {
				t.Errorf("%s: %s differs between 8 and 1024 hosts", os, name)
			}
		}
		perHost := hostFiles(oneSwitchInventory(t, 1024, "hosts", os))
		for _, name := range []string{RoutesScriptName, FirewallScriptName, RoutesPersistName(&oneSwitchInventory(t, 1, "hosts", os).Hosts[0])} {
			t.Logf("%s, 1024 hosts: hosts/h0/%s is %d bytes per-host, %d bytes routed by the switch", os, name, len(perHost[name].Data), len(big[name].Data))
		}
	}
}

func TestSwitchRoutedRulesAndRoutes(t *testing.T) {
	inv := oneSwitchInventory(t, 40, "switch", "ubuntu-20.04")
	h := &inv.Hosts[3]
	gw := netip.MustParseAddr("10.99.255.254")
	if rs := Routes(inv, h); len(rs) != 1 || rs[0].Dst != inv.Docker.Pool || rs[0].Via != gw || rs[0].Dev != "enp1f0" ||
		rs[0].Command() != "route replace 172.16.0.0/12 via 10.99.255.254 dev enp1f0" {
		t.Errorf("routes: %+v", rs)
	}
	if s := FirewallSources(inv, h); !slices.Equal(s, []netip.Prefix{inv.Docker.Pool}) {
		t.Errorf("sources: %v", s)
	}
	wantFilter := []string{
		"-A RDGGEN-CONTAINERS -s 172.16.0.0/12 -d 172.16.4.0/24 -i enp1f0 -o docker0 -j ACCEPT",
		"-A RDGGEN-CONTAINERS -d 172.16.4.0/24 -i enp1f0 -o docker0 -m conntrack ! --ctstate RELATED,ESTABLISHED -j DROP",
	}
	if got := FirewallRules(inv, h); !slices.Equal(got, wantFilter) {
		t.Errorf("filter rules:\n%s", strings.Join(got, "\n"))
	}
	if got := NATRules(inv, h); !slices.Equal(got, []string{"-A RDGGEN-POSTROUTING -s 172.16.4.0/24 -d 172.16.0.0/12 -j ACCEPT"}) {
		t.Errorf("nat rules: %q", got)
	}
	np := string(NetplanFor(inv, h, "data", "its set-name"))
	if !strings.HasSuffix(np, "      routes:\n        - to: 172.16.0.0/12\n          via: 10.99.255.254\n") {
		t.Errorf("netplan:\n%s", np)
	}
}
