package nvueapply

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// find is the result of check on subject.
func find(rs []readiness.Result, check, subject string) *readiness.Result {
	for i := range rs {
		if rs[i].Check == check && rs[i].Subject == subject {
			return &rs[i]
		}
	}
	return nil
}

func TestCheck(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)

	// Before apply: the plan is the drift, qos roce is off.
	rs, err := Check(context.Background(), inv, inv.Switches, r.o)
	if err != nil {
		t.Fatal(err)
	}
	if c := find(rs, CheckConfig, "qos.roce.mode"); c == nil || c.Status != readiness.Failed || c.Fix != "nv set qos roce mode lossless && nv config apply (or rdggen apply --target switch)" {
		t.Errorf("config drift: %+v", c)
	}
	if c := find(rs, CheckRoCE, "mode"); c == nil || c.Status != readiness.Failed || c.Found != "operational disabled, applied (none)" {
		t.Errorf("qos roce mode before apply: %+v", c)
	}
	if configPatches(r.sim) != 0 || r.sim.Count("POST", "") != 0 {
		t.Fatalf("check changed something: %v", r.sim.Requests())
	}

	if _, err := r.run(t, inv); err != nil {
		t.Fatal(err)
	}
	r.sim.SetPauseCounters("swp2", 3, 7, 9)
	rs, err = Check(context.Background(), inv, inv.Switches, r.o)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rs {
		if x.Status != readiness.Passed {
			t.Errorf("after apply: %s", x.Line())
		}
	}
	if c := find(rs, CheckPauseCounters, "swp2"); c == nil || c.Found != "priority 3: 7 pause frames received, 9 sent" {
		t.Errorf("pause counters: %+v", c)
	}
	if c := find(rs, CheckRoCE, "ecn"); c == nil || c.Found != "ECN, 150 KB-1500 KB (shown rounded as 150.00 KB-1.46 MB)" {
		t.Errorf("ecn: %+v", c)
	}
	if n := len(rs); n != 1+4+8*3 {
		t.Errorf("%d results, want config, 4 qos-roce and 3 per data port", n)
	}

	// The data plane leaves the applied configuration; a port goes down.
	r.sim.SetRoCEOperational("mode", "lossy")
	r.sim.SetRoCEOperational("pfc-priority", "4")
	r.sim.SetRoCEOperational("enabled-tc", "0")
	r.sim.SetRoCEOperational("max-threshold", "2.00 MB")
	r.sim.SetLink("swp5", false)
	rs, _ = Check(context.Background(), inv, inv.Switches, r.o)
	want := map[string]string{
		CheckRoCE + " mode":         "nv set qos roce mode lossless && nv config apply",
		CheckRoCE + " pfc-priority": "nv set qos roce mode lossless && nv config apply",
		CheckRoCE + " enabled-tc":   "nv set qos roce mode lossless && nv config apply",
		CheckRoCE + " ecn":          "ecn_min_kb",
		CheckLink + " swp5":         "check the cable",
	}
	for key, fix := range want {
		check, subject, _ := strings.Cut(key, " ")
		c := find(rs, check, subject)
		if c == nil || c.Status != readiness.Failed || !strings.Contains(c.Fix, fix) {
			t.Errorf("%s: %+v, want a failure with fix %q", key, c, fix)
		}
	}
	if c := find(rs, CheckRoCE, "mode"); c.Found != "operational lossy, applied lossless" {
		t.Errorf("mode found: %q", c.Found)
	}
}

func TestCheckPortDrift(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	if _, err := r.run(t, inv); err != nil {
		t.Fatal(err)
	}
	// Someone lowers swp3's MTU and shuts swp4 down by hand.
	r2 := newRig(t, nvuesim.Options{Applied: func() Tree {
		a := r.sim.Applied()
		a["interface"].(Tree)["swp3"].(Tree)["link"].(Tree)["mtu"] = int64(1500)
		a["interface"].(Tree)["swp4"].(Tree)["link"].(Tree)["state"] = Tree{"down": Tree{}}
		return a
	}()})
	inv2 := loadInv(t, "cumulus", r2.sim.Addr)
	rs, err := Check(context.Background(), inv2, inv2.Switches, r2.o)
	if err != nil {
		t.Fatal(err)
	}
	if c := find(rs, CheckMTU, "swp3"); c == nil || c.Status != readiness.Failed || c.Found != "1500" || c.Fix != "nv set interface swp3 link mtu 9216 && nv config apply" {
		t.Errorf("mtu: %+v", c)
	}
	if c := find(rs, CheckLink, "swp4"); c == nil || c.Status != readiness.Failed || c.Fix != "nv set interface swp4 link state up && nv config apply" {
		t.Errorf("link: %+v", c)
	}
	if c := find(rs, CheckConfig, "interface.swp3.link.mtu"); c == nil || c.Status != readiness.Failed {
		t.Errorf("config drift of the mtu: %+v", c)
	}
}

func TestCheckUnreachable(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", "")
	rs, err := Check(context.Background(), inv, inv.Switches, r.o)
	if err == nil || len(rs) != 1 || rs[0].Status != readiness.Unknown || !strings.Contains(rs[0].Found, "no mgmt address") {
		t.Errorf("%v %+v", err, rs)
	}
}

func TestApplyBringsDataPortUp(t *testing.T) {
	r := newRig(t, nvuesim.Options{Applied: Tree{"interface": Tree{"swp4": Tree{"link": Tree{"state": Tree{"down": Tree{}}}}}}})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	if _, err := r.run(t, inv); err != nil {
		t.Fatal(err)
	}
	if st := leaf(r.sim.Applied(), "interface", "swp4", "link", "state"); !cumulus.JSONEqual(st, Tree{"up": Tree{}}) {
		t.Errorf("swp4 link state: %v", st)
	}
	rs, _ := Check(context.Background(), inv, inv.Switches, r.o)
	if c := find(rs, CheckLink, "swp4"); c == nil || c.Status != readiness.Passed {
		t.Errorf("swp4 after apply: %+v", c)
	}
}

// Counters reads, on the Cumulus golden fabric's leaf1, the pause frames
// of roce.priority (received + sent) on its host ports and on its two
// uplinks, named as pkg/bench names Cumulus ports; GET requests only.
func TestCountersFabricLeaf(t *testing.T) {
	r := newRig(t, nvuesim.Options{Ports: 64}) // an SN5600
	inv := loadInv(t, "fabric-cumulus", "")
	leaf1 := inv.Switch("leaf1")
	leaf1.Mgmt = r.sim.Addr
	if res, err := Run(context.Background(), inv, []inventory.Switch{*leaf1}, r.o); err != nil {
		t.Fatalf("%v: %v\n%s", err, res[0].Err, r.out)
	}
	r.sim.ResetRequests()
	r.sim.SetPauseCounters("swp64", 3, 120, 4000)
	r.sim.SetPauseCounters("swp1s0", 3, 0, 5)
	r.sim.SetPauseCounters("swp63", 5, 99, 99) // another priority: not counted
	got, err := Counters(context.Background(), inv, []inventory.Switch{*leaf1}, r.o)
	if err != nil {
		t.Fatal(err)
	}
	want := "[{leaf1 swp1s0 5} {leaf1 swp1s1 0} {leaf1 swp63 0} {leaf1 swp64 4120}]"
	if fmt.Sprint(got) != want {
		t.Errorf("counters %v, want %s", got, want)
	}
	if configPatches(r.sim) != 0 || r.sim.Count("POST", "") != 0 || r.sim.Count("PATCH", "") != 0 {
		t.Errorf("counters changed something: %v", r.sim.Requests())
	}
	// A switch that cannot be reached is named; nothing is returned for it.
	leaf1.Mgmt = ""
	if got, err := Counters(context.Background(), inv, []inventory.Switch{*leaf1}, r.o); err == nil || len(got) != 0 || !strings.Contains(err.Error(), "leaf1 has no mgmt address") {
		t.Errorf("no mgmt: %v %v", got, err)
	}
}
