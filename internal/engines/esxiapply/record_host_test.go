package esxiapply_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
)

// Marks of the host vSwitch reads in a retrieve request: by key (the
// record's hint) and whole.
const (
	vswitchKeyed = "config.network.vswitch["
	vswitchWhole = "config.network.vswitch</pathSet>"
	// managers marks the reads of the hosts' manager references, which
	// only an apply that changes a host needs.
	managers = "configManager.networkSystem"
)

// The record names, per ESXi host, the vSwitch that carries its PF; a no-op
// reads only that vSwitch of every host. A vSwitch changed behind rdggen's
// back (its MTU lowered by another client) is still read, found and
// corrected; a PF moved to another vSwitch is not on the one the hint
// names, so that host's whole list is read (one more retrieve) and the new
// vSwitch's MTU corrected; --full and check read every vSwitch.
func TestRecordVSwitchChangesBehindItsBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, jumbo(t), vcsimtest.Options{})
	healthy(t, e)
	if res, out := e.applyRecord(t, false); res.Err() != nil || res.HostsChanged != 0 {
		t.Fatalf("apply without a record: %s\n%s", res.Summary(), out)
	}
	e.counter.Watch(vswitchKeyed)
	e.counter.Watch(vswitchWhole)
	e.counter.Watch(managers)
	esxi := e.inv.ESXiHosts()
	want := "key-vim.host.VirtualSwitch-" + vcsimtest.DataVSwitch
	for _, name := range esxi {
		if r := e.record.Hosts[name]; r.VSwitch != want || r.Ref == "" {
			t.Fatalf("record of host %s: %+v, want vSwitch %q", name, r, want)
		}
	}
	mtu := int32(e.inv.DataMTU())
	if mtu <= 1500 {
		t.Fatalf("the reference's data MTU is %d: the test needs one above 1500", mtu)
	}

	res, out := e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.HostsChanged != 0 {
		t.Fatalf("no-op: %s\n%s", res.Summary(), out)
	}
	if k, w, r := e.counter.Matched(vswitchKeyed), e.counter.Matched(vswitchWhole), e.counter.Count("RetrievePropertiesEx"); k != 1 || w != 0 || r != 1 {
		t.Errorf("no-op: %d keyed and %d whole vSwitch reads (want 1, 0), %d retrieves (want 1): %s", k, w, r, e.counter)
	}
	if n := e.counter.Matched(managers); n != 0 {
		t.Errorf("no-op: %d reads of the hosts' managers, want 0: %s", n, e.counter)
	}

	// Another client lowers the data vSwitch's MTU on one host, through
	// the API.
	lowered, moved := esxi[0], esxi[1]
	ctx := context.Background()
	c, err := e.sim.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Logout(ctx) }()
	h := e.sim.Host(lowered)
	ns := object.NewHostNetworkSystem(c.Client, *h.ConfigManager.NetworkSystem)
	var spec types.HostVirtualSwitchSpec
	e.sim.Lock(h.Self, func() {
		for _, vs := range h.Config.Network.Vswitch {
			if vs.Name == vcsimtest.DataVSwitch {
				spec = vs.Spec
			}
		}
	})
	spec.Mtu = 1500
	if err := ns.UpdateVirtualSwitch(ctx, vcsimtest.DataVSwitch, spec); err != nil {
		t.Fatal(err)
	}
	// On another host, the PF moves to a new vSwitch (MTU 1500), and the
	// data vSwitch stays, without it.
	if !e.sim.EditHostNetwork(moved, func(net *types.HostNetworkInfo) {
		for i := range net.Vswitch {
			vs := &net.Vswitch[i]
			if vs.Name != vcsimtest.DataVSwitch {
				continue
			}
			nvs := *vs
			nvs.Name, nvs.Key, nvs.Mtu = "vSwitchNew", "key-vim.host.VirtualSwitch-vSwitchNew", 1500
			nvs.Spec.Mtu = 1500
			vs.Pnic = nil
			vs.Spec.Bridge = nil
			net.Vswitch = append(net.Vswitch, nvs)
			return
		}
		t.Fatalf("%s has no %s", moved, vcsimtest.DataVSwitch)
	}) {
		t.Fatalf("no host %s", moved)
	}

	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.HostsChanged != 2 {
		t.Fatalf("apply after the changes: %s\n%s", res.Summary(), out)
	}
	for _, w := range []string{"vSwitch " + vcsimtest.DataVSwitch + " (uplink", "vSwitch vSwitchNew (uplink"} {
		if !strings.Contains(out, w) {
			t.Errorf("plan lacks %q:\n%s", w, out)
		}
	}
	if k, w, r := e.counter.Matched(vswitchKeyed), e.counter.Matched(vswitchWhole), e.counter.Count("RetrievePropertiesEx"); k != 1 || w != 1 {
		t.Errorf("apply: %d keyed and %d whole vSwitch reads (want 1, 1; %d retrieves): %s", k, w, r, e.counter)
	}
	// The two hosts to change add no device: their network systems are
	// read for the change, in one retrieve.
	if n := e.counter.Matched(managers); n != 1 {
		t.Errorf("apply: %d reads of the hosts' managers, want 1: %s", n, e.counter)
	}
	if got := e.sim.VSwitchMTU(lowered); got != mtu {
		t.Errorf("%s: %s MTU %d after apply, want %d", lowered, vcsimtest.DataVSwitch, got, mtu)
	}
	e.sim.Lock(e.sim.Host(moved).Self, func() {
		for _, vs := range e.sim.Host(moved).Config.Network.Vswitch {
			if vs.Name == "vSwitchNew" && vs.Mtu != mtu {
				t.Errorf("%s: vSwitchNew MTU %d after apply, want %d", moved, vs.Mtu, mtu)
			}
		}
	})
	if r := e.record.Hosts[moved]; r.VSwitch != "key-vim.host.VirtualSwitch-vSwitchNew" {
		t.Errorf("record of %s after the move: %+v", moved, r)
	}

	// On a third host the PF moves to a distributed switch's proxy switch:
	// read with the whole vSwitch list (the first retrieve leaves proxy
	// switches out when it reads vSwitches by key), the plan sees it there.
	onDVS := esxi[2]
	var saved types.HostNetworkInfo
	e.sim.EditHostNetwork(onDVS, func(net *types.HostNetworkInfo) {
		saved = *net
		saved.Vswitch = slices.Clone(net.Vswitch)
		for i := range net.Vswitch {
			vs := &net.Vswitch[i]
			if vs.Name == vcsimtest.DataVSwitch {
				net.ProxySwitch = append(net.ProxySwitch, types.HostProxySwitch{DvsUuid: "uuid-elsewhere", DvsName: "DVS-elsewhere", Key: "uuid-elsewhere", Pnic: vs.Pnic, Mtu: 1500})
				vs.Pnic, vs.Spec.Bridge = nil, nil
			}
		}
	})
	res, out = e.applyRecord(t, false)
	if res.Err() != nil || !strings.Contains(out, "is on distributed switch DVS-elsewhere, which vCenter did not list") {
		t.Fatalf("apply with the PF on a distributed switch: %s\n%s", res.Summary(), out)
	}
	if k, w := e.counter.Matched(vswitchKeyed), e.counter.Matched(vswitchWhole); k != 1 || w != 1 {
		t.Errorf("apply with the PF on a distributed switch: %d keyed and %d whole vSwitch reads, want 1 and 1: %s", k, w, e.counter)
	}
	if r, ok := e.record.Hosts[onDVS]; ok {
		t.Errorf("record of %s, whose PF is on no vSwitch: %+v", onDVS, r)
	}
	// Back on its vSwitch: with a host the record names no vSwitch of,
	// every vSwitch is read whole, once, and the host recorded again.
	e.sim.EditHostNetwork(onDVS, func(net *types.HostNetworkInfo) { *net = saved })
	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.HostsChanged != 0 {
		t.Fatalf("apply with the PF back: %s\n%s", res.Summary(), out)
	}
	if k, w := e.counter.Matched(vswitchKeyed), e.counter.Matched(vswitchWhole); k != 0 || w != 1 {
		t.Errorf("apply with the PF back: %d keyed and %d whole vSwitch reads, want 0 and 1: %s", k, w, e.counter)
	}

	// Nothing left to do: the next apply reads by key again (two keys now)
	// and changes nothing.
	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.HostsChanged != 0 || res.VMsChanged != 0 {
		t.Fatalf("no-op after the fix: %s\n%s", res.Summary(), out)
	}
	if k, w, r := e.counter.Matched(vswitchKeyed), e.counter.Matched(vswitchWhole), e.counter.Count("RetrievePropertiesEx"); k != 1 || w != 0 || r != 1 {
		t.Errorf("no-op after the fix: %d keyed and %d whole vSwitch reads (want 1, 0), %d retrieves (want 1): %s", k, w, r, e.counter)
	}

	// --full and check read every vSwitch whole.
	if res, out := e.applyRecord(t, true); res.Err() != nil || res.HostsChanged != 0 {
		t.Fatalf("--full: %s\n%s", res.Summary(), out)
	}
	if k, w := e.counter.Matched(vswitchKeyed), e.counter.Matched(vswitchWhole); k != 0 || w != 1 {
		t.Errorf("--full: %d keyed and %d whole vSwitch reads, want 0 and 1: %s", k, w, e.counter)
	}
	e.check(t)
	if k, w := e.counter.Matched(vswitchKeyed), e.counter.Matched(vswitchWhole); k != 0 || w != 1 {
		t.Errorf("check: %d keyed and %d whole vSwitch reads, want 0 and 1: %s", k, w, e.counter)
	}
}
