package esxiapply_test

import (
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
)

func jumbo(t testing.TB) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.Load("jumbo.yaml", []byte(strings.Replace(string(inventory.ReferenceYAML), "  # data_mtu: 9000", "  data_mtu: 9000", 1)))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// A jumbo-frame data network: one apply raises the MTU of the standard
// vSwitch that carries each host's PF to 9000; the second changes nothing.
func TestVSwitchMTU(t *testing.T) {
	t.Parallel()
	e := newEnv(t, jumbo(t), vcsimtest.Options{})
	_, out := e.apply(t, true)
	if !strings.Contains(out, "host esx-41.example:\n  SR-IOV on vmnic4") || !strings.Contains(out, "  vSwitch vSwitch1 (uplink vmnic4): MTU 1500 → 9000\n") {
		t.Fatalf("dry run:\n%s", out)
	}
	if got := e.sim.VSwitchMTU("esx-41.example"); got != 1500 {
		t.Fatalf("the dry run set MTU %d", got)
	}
	if res, out := e.apply(t, false); res.Err() != nil {
		t.Fatalf("%v\n%s", res.Err(), out)
	}
	for _, h := range e.inv.ESXiHosts() {
		if got := e.sim.VSwitchMTU(h); got != 9000 {
			t.Errorf("%s: vSwitch1 MTU %d", h, got)
		}
	}
	res, out := e.apply(t, false)
	if res.HostsChanged != 0 || strings.Contains(out, "MTU") {
		t.Errorf("second apply:\n%s", out)
	}
}

// The PF on a distributed switch: its maximum MTU is raised once, for all
// its hosts, with the switch's config version. (vcsim takes the request but
// does not keep maxMtu, so the request is what is checked.)
func TestDVSMaxMTU(t *testing.T) {
	t.Parallel()
	e := newEnv(t, jumbo(t), vcsimtest.Options{DVPortGroups: 1, PFOnDVS: true})
	e.counter.Watch("<maxMtu>9000</maxMtu>")
	before := e.counter.Count("ReconfigureDvs_Task")
	res, out := e.apply(t, false)
	if res.Err() != nil || !strings.Contains(out, "distributed switch DVS0 (uplink vmnic4): maximum MTU 1500 → 9000 (one setting for all its hosts)") {
		t.Fatalf("apply: %v\n%s", res.Err(), out)
	}
	if n := e.counter.Count("ReconfigureDvs_Task") - before; n != 1 || e.counter.Matched("<maxMtu>9000</maxMtu>") != 1 {
		t.Errorf("%d ReconfigureDvs_Task calls (%d with maxMtu 9000), want 1", n, e.counter.Matched("<maxMtu>9000</maxMtu>"))
	}
}
