package nvueapply

import (
	"context"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// TestCumulus515: on a 5.15 switch (which, in the simulator, refuses the
// names 5.15 renamed) the engine writes qos roce state and interface vlan1
// ipv4 address, a second run changes nothing, check passes, and going back
// to routing: hosts removes the recorded gateway from ipv4 address.
func TestCumulus515(t *testing.T) {
	r := newRig(t, nvuesim.Options{Version: "5.15.0"})
	routed := loadInvEdit(t, "cumulus-routed", r.sim.Addr, "cumulus: 5.6.0", "cumulus: 5.15.0")
	if _, err := r.run(t, routed); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	applied := r.sim.Applied()
	if leaf(applied, "qos", "roce", "state") != "enabled" || leaf(applied, "qos", "roce", "enable") != nil {
		t.Errorf("qos roce: %v", leaf(applied, "qos", "roce"))
	}
	if _, ok := cumulus.Lookup(applied, []string{"interface", "vlan1", "ipv4", "address", "31.31.31.254/24"}); !ok {
		t.Errorf("no ipv4 address on vlan1: %v", leaf(applied, "interface", "vlan1"))
	}
	if _, ok := cumulus.Lookup(applied, []string{"system", "lldp"}); !ok {
		t.Error("no system lldp")
	}
	r.sim.ResetRequests()
	if res, err := r.run(t, routed); err != nil || !res.Plan.Empty() || configPatches(r.sim) != 0 {
		t.Errorf("second run: %v, %v", err, res.Plan.Changes)
	}
	rs, err := Check(context.Background(), routed, routed.Switches, r.o)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rs {
		if x.Status != readiness.Passed {
			t.Errorf("check: %s", x.Line())
		}
	}
	r.out.Reset()
	perHost := loadInvEdit(t, "cumulus", r.sim.Addr, "cumulus: 5.9.1", "cumulus: 5.15.0")
	if _, err := r.run(t, perHost); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if !strings.Contains(r.out.String(), "interface.vlan1.ipv4.address[31.31.31.254/24]: (set) → (unset)") {
		t.Errorf("the recorded gateway is not removed:\n%s", r.out)
	}
	if _, ok := cumulus.Lookup(r.sim.Applied(), []string{"interface", "vlan1", "ipv4", "address", "31.31.31.254/24"}); ok {
		t.Error("gateway still on vlan1")
	}
}
