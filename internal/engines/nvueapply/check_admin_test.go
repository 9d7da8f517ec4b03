package nvueapply

import (
	"context"
	"testing"

	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// A port set administratively down by hand (`ip link set swp63 down` on
// leaf2, which the data plane shows as admin-status down) is the cause:
// its far end's link, down without a carrier, follows from it (the cable
// leaf2 swp63 ↔ spine1 swp2 of the golden Cumulus fabric).
func TestCheckLinkAdminDownIsTheCause(t *testing.T) {
	inv := loadInv(t, "fabric-cumulus", "")
	var o Options
	var sws []inventory.Switch
	for _, name := range []string{"spine1", "leaf2"} {
		sw := inv.Switch(name)
		sim := nvuesim.Start(t, nvuesim.Options{Version: sw.Cumulus.String(), Hostname: sw.Name, Ports: sw.Ports, Model: sw.Model,
			Applied: nvuesim.Tree(cumulus.Intent(inv, *sw))})
		port, admin := "swp2", "up" // spine1's end: no carrier
		if name == "leaf2" {
			port, admin = "swp63", "down"
		}
		sim.SetInterfaces(func() map[string]any {
			return map[string]any{port: map[string]any{"link": map[string]any{"mtu": int64(9216), "admin-status": admin, "oper-status": "down"}}}
		})
		sw.Mgmt = sim.Addr
		sws = append(sws, *sw)
		if o.User == "" {
			o = newRigOptions(t, sim) // every simulator serves httptest's one certificate
		}
	}
	rs, _ := Check(context.Background(), inv, sws, o)
	var links []readiness.Result
	for _, r := range rs {
		if r.Check == CheckLink && r.Status != readiness.Passed && (r.Subject == "swp63" || r.Subject == "swp2") { // the others: the simulators' 100G
			links = append(links, r)
		}
	}
	if len(links) != 2 {
		t.Fatalf("failed links: %+v, want leaf2 swp63 and spine1 swp2", links)
	}
	byRef := map[string]readiness.Result{}
	for _, r := range links {
		byRef[r.Ref().String()] = r
	}
	// NVUE's applied configuration says up (the intent's `link state
	// up`): an nv set changes nothing, the fix is outside NVUE.
	wantFix := "NVUE's applied configuration already sets swp63 up (`nv set interface swp63 link state up` changes nothing): the port was set down outside NVUE " +
		"(`ip link set swp63 down` or `ifdown swp63` on the switch); bring it up there with `sudo ip link set swp63 up`, and if it stays without link, check the cable to spine1 swp2 and that port there (fabric.links[2])"
	if r := byRef["leaf2 link swp63"]; r.Found != "administratively down" || r.Fix != wantFix {
		t.Errorf("leaf2 swp63: %s", r.Line())
	}
	if r := byRef["spine1 link swp2"]; r.Found != "down (down)" {
		t.Errorf("spine1 swp2: %s", r.Line())
	}
	causes := readiness.Causes(links)
	if len(causes) != 1 || causes[0].Ref.String() != "leaf2 link swp63" || len(causes[0].Explains) != 1 || causes[0].Explains[0].String() != "spine1 link swp2" {
		t.Errorf("causes %+v, want leaf2 link swp63 explaining spine1 link swp2", causes)
	}
	if got, want := readiness.NotReady(links, causes, 20), "leaf2 link swp63 (1 follows from it); then: spine1 link swp2"; got != want {
		t.Errorf("not ready: %q, want %q", got, want)
	}
}
