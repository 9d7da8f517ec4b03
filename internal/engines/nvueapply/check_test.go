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
	if res, err := pushAll(context.Background(), inv, []inventory.Switch{*leaf1}, r.o); err != nil {
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
	if got, err := Counters(context.Background(), inv, []inventory.Switch{*leaf1}, r.o); err == nil || len(got) != 0 || !strings.Contains(err.Error(), "leaf1: no mgmt address") {
		t.Errorf("no mgmt: %v %v", got, err)
	}
}

// fabricLeaf1 is the golden Cumulus fabric's leaf1 applied on a simulator
// of its SN5600 (64 ports), with its data plane's view set by a test: the
// rig, the inventory and leaf1 (its mgmt the simulator).
func fabricLeaf1(t *testing.T) (*rig, *inventory.Inventory, *inventory.Switch) {
	t.Helper()
	r := newRig(t, nvuesim.Options{Ports: 64})
	inv := loadInv(t, "fabric-cumulus", "")
	leaf1 := inv.Switch("leaf1")
	leaf1.Mgmt = r.sim.Addr
	if res, err := pushAll(context.Background(), inv, []inventory.Switch{*leaf1}, r.o); err != nil {
		t.Fatalf("%v: %v\n%s", err, res[0].Err, r.out)
	}
	return r, inv, leaf1
}

// checkOf is the check of sw's results of one check name.
func checkOf(t *testing.T, r *rig, inv *inventory.Inventory, sw *inventory.Switch, check string) []readiness.Result {
	t.Helper()
	rs, err := Check(context.Background(), inv, []inventory.Switch{*sw}, r.o)
	if err != nil {
		t.Fatal(err)
	}
	var out []readiness.Result
	for _, x := range rs {
		if x.Check == check {
			out = append(out, x)
		}
	}
	return out
}

// The link check compares the speed each port came up at with the speed
// the inventory plans for both ends: on the golden fabric's leaf1 the
// hosts' lanes at their ConnectX-7's 400G, the uplinks at the SN5600's
// 800G. A lane at 100G fails, naming both ends' planned speeds and the
// cable, optics and port setting to look at; an uplink at 400G fails with
// its far end; a port that shows no speed is COULD NOT TELL, never passed.
func TestCheckLinkSpeed(t *testing.T) {
	r, inv, leaf1 := fabricLeaf1(t)
	speeds := map[string]string{"swp1s0": "400G", "swp1s1": "400G", "swp63": "800G", "swp64": "800G"}
	r.sim.SetInterfaces(func() map[string]any {
		out := map[string]any{}
		for port, sp := range speeds {
			out[port] = map[string]any{"link": map[string]any{"speed": sp}}
		}
		return out
	})
	for _, x := range checkOf(t, r, inv, leaf1, CheckLink) {
		if x.Status != readiness.Passed || x.Found != "up, "+speeds[x.Subject] {
			t.Errorf("as planned: %s", x.Line())
		}
	}
	speeds["swp1s0"], speeds["swp64"], speeds["swp1s1"] = "100G", "400G", ""
	got := map[string]readiness.Result{}
	for _, x := range checkOf(t, r, inv, leaf1, CheckLink) {
		got[x.Subject] = x
	}
	if x := got["swp1s0"]; x.Status != readiness.Failed || x.Found != "up, 100G" || x.Expected != "up at 400 Gb/s (leaf1 swp1s0 400 Gb/s, h11's NIC 400 Gb/s)" ||
		!strings.Contains(x.Fix, "slower than both ends allow") || !strings.Contains(x.Fix, "h11 (esx-11.example vmnic4)") {
		t.Errorf("a host lane at 100G: %s", x.Line())
	}
	if x := got["swp64"]; x.Status != readiness.Failed || x.Expected != "up at 800 Gb/s (leaf1 swp64 800 Gb/s, spine2 swp1 800 Gb/s)" ||
		!strings.Contains(x.Fix, "the link leaf1 swp64 ↔ spine2 swp1") {
		t.Errorf("an uplink at 400G: %s", x.Line())
	}
	if x := got["swp1s1"]; x.Status != readiness.Unknown || !strings.Contains(x.Found, "shows the speed \"\"") && !strings.Contains(x.Found, "shows no speed") {
		t.Errorf("no speed shown: %s", x.Line())
	}
	if x := got["swp63"]; x.Status != readiness.Passed {
		t.Errorf("swp63: %s", x.Line())
	}
}

// The interfaces are read with one GET of the collection: no GET per port
// for its link, LLDP or counters when the collection shows them (the
// uplinks' LLDP neighbors from the data plane, as fabricnet gives them);
// an uplink the collection shows without LLDP is read by itself.
func TestCheckPortsOneGET(t *testing.T) {
	r, inv, leaf1 := fabricLeaf1(t)
	lldp := func(sys, port string) map[string]any {
		return map[string]any{"lldp": map[string]any{"neighbor": map[string]any{sys: map[string]any{"chassis": map[string]any{"system-name": sys}, "port": map[string]any{"name": port}}}}}
	}
	r.sim.SetInterfaces(func() map[string]any {
		return map[string]any{"swp63": lldp("spine1", "swp1"), "swp64": lldp("spine2", "swp1")}
	})
	r.sim.ResetRequests()
	if rs := checkOf(t, r, inv, leaf1, CheckPauseCounters); len(rs) != 4 {
		t.Fatalf("%d pause-counters results, want 4 (2 host lanes, 2 uplinks)", len(rs))
	}
	var ifaces []string
	for _, q := range r.sim.Requests() {
		if q.Method == "GET" && strings.HasPrefix(q.Path, "/interface") {
			ifaces = append(ifaces, q.Path)
		}
	}
	if strings.Join(ifaces, " ") != "/interface" {
		t.Errorf("GETs of interfaces: %v, want one of /interface", ifaces)
	}
	r.sim.SetInterfaces(func() map[string]any { return map[string]any{"swp63": lldp("spine1", "swp1")} })
	r.sim.ResetRequests()
	if rs := checkOf(t, r, inv, leaf1, CheckLLDP); len(rs) != 2 || rs[0].Status != readiness.Passed || rs[1].Status != readiness.Unknown {
		t.Errorf("lldp: %v", rs)
	}
	ifaces = nil
	for _, q := range r.sim.Requests() {
		if q.Method == "GET" && strings.HasPrefix(q.Path, "/interface") {
			ifaces = append(ifaces, q.Path)
		}
	}
	if strings.Join(ifaces, " ") != "/interface /interface/swp64" {
		t.Errorf("GETs of interfaces without swp64's LLDP: %v", ifaces)
	}
}

// A BGP session is compared with the plan's peer, not only its state:
// leaf1's swp63 established with leaf2 (AS 65102) where the plan has spine1
// (AS 65100) fails as a wrong peer; so does spine2 (the spines' shared AS,
// told apart by the peer's host name); a session with the spines' AS and
// no host name shown is COULD NOT TELL; the planned peer passes.
func TestCheckBGPPeer(t *testing.T) {
	r, inv, leaf1 := fabricLeaf1(t)
	peer := map[string][2]any{"swp63": {"leaf2", int64(65102)}, "swp64": {"spine2", int64(65100)}}
	r.sim.SetBGPNeighbors(func() map[string]any {
		out := map[string]any{}
		for k, v := range peer {
			e := map[string]any{"state": "established", "remote-as": v[1], "address-family": map[string]any{"ipv4-unicast": map[string]any{"rx-prefix": int64(5)}}}
			if v[0] != "" {
				e["peer-hostname"] = v[0]
			}
			out[k] = e
		}
		return out
	})
	got := map[string]readiness.Result{}
	for _, x := range checkOf(t, r, inv, leaf1, CheckBGP) {
		got[x.Subject] = x
	}
	if x := got["swp63"]; x.Status != readiness.Failed || x.Found != "established with leaf2 (AS 65102), 5 prefixes received" || x.Expected != "established with spine1 (AS 65100)" ||
		!strings.HasPrefix(x.Fix, "wrong peer: leaf1 swp63 peers with leaf2 (AS 65102), the plan with spine1 swp1 (fabric.links[0])") {
		t.Errorf("leaf2 on swp63: %s", x.Line())
	}
	if x := got["swp64"]; x.Status != readiness.Passed || x.Found != "established with spine2 (AS 65100), 5 prefixes received" {
		t.Errorf("spine2 on swp64: %s", x.Line())
	}
	peer["swp63"] = [2]any{"spine2", int64(65100)}
	peer["swp64"] = [2]any{"", int64(65100)}
	got = map[string]readiness.Result{}
	for _, x := range checkOf(t, r, inv, leaf1, CheckBGP) {
		got[x.Subject] = x
	}
	if x := got["swp63"]; x.Status != readiness.Failed || !strings.HasPrefix(x.Fix, "wrong peer: leaf1 swp63 peers with spine2 (AS 65100)") {
		t.Errorf("spine2 on swp63: %s", x.Line())
	}
	if x := got["swp64"]; x.Status != readiness.Unknown || !strings.Contains(x.Found, "which more than one switch of the fabric has") {
		t.Errorf("no host name: %s", x.Line())
	}
}

// A switch whose applied configuration runs BGP as another AS gets none of
// rdggen's BGP settings from apply; the check fails its configuration
// rather than pass it, naming both ASes and both ways out.
func TestCheckForeignAS(t *testing.T) {
	r := newRig(t, nvuesim.Options{Ports: 64, Applied: Tree{"router": Tree{"bgp": Tree{"autonomous-system": int64(64999)}}}})
	inv := loadInv(t, "fabric-cumulus", "")
	leaf1 := inv.Switch("leaf1")
	leaf1.Mgmt = r.sim.Addr
	if res, err := pushAll(context.Background(), inv, []inventory.Switch{*leaf1}, r.o); err != nil {
		t.Fatalf("%v: %v\n%s", err, res[0].Err, r.out)
	}
	rs := checkOf(t, r, inv, leaf1, CheckConfig)
	x := find(rs, CheckConfig, ForeignASSubject)
	if x == nil || x.Status != readiness.Failed || !strings.HasPrefix(x.Found, "BGP runs as AS 64999") || x.Expected != "AS 65101 (leaf1's, the inventory's) with rdggen's BGP settings" ||
		!strings.Contains(x.Fix, "set switches[].asn: 64999 for leaf1") || !strings.Contains(x.Fix, "nv set router bgp autonomous-system 65101 && nv config apply") {
		t.Errorf("foreign AS: %+v", x)
	}
	if c := find(rs, CheckConfig, ""); c != nil {
		t.Errorf("the configuration passes beside a foreign AS: %s", c.Line())
	}
}

// Two cables swapped at leaf1 (swp63 hears spine2 swp1, swp64 spine1
// swp1) are one fault: each port's finding follows from the other's, a
// cycle that readiness.Causes makes one cause, swp63 (the first checked),
// which keeps its miswire fix, where before each named the far end it
// reached, making two causes. A single moved cable still follows from the
// end it reached.
func TestCheckLLDPSwap(t *testing.T) {
	r, inv, leaf1 := fabricLeaf1(t)
	lldp := func(sys, port string) map[string]any {
		return map[string]any{"lldp": map[string]any{"neighbor": map[string]any{sys: map[string]any{"chassis": map[string]any{"system-name": sys}, "port": map[string]any{"name": port}}}}}
	}
	nbs := map[string]any{"swp63": lldp("spine2", "swp1"), "swp64": lldp("spine1", "swp1")}
	r.sim.SetInterfaces(func() map[string]any { return nbs })
	got := map[string]readiness.Result{}
	for _, x := range checkOf(t, r, inv, leaf1, CheckLLDP) {
		got[x.Subject] = x
	}
	if x, want := got["swp63"], readiness.DependsOn(readiness.Ref{Machine: "leaf1", Check: CheckLLDP, Subject: "swp64"}); x.Status != readiness.Failed || x.After != want ||
		!strings.Contains(x.Fix, "miswired: leaf1 swp63 is cabled to spine2 swp1, the plan cables it to spine1 swp1: move the cable at leaf1 swp63 to spine1 swp1") {
		t.Errorf("swp63: %s; after %v, want %v", x.Line(), x.After.Refs(), want.Refs())
	}
	if x, want := got["swp64"], readiness.DependsOn(readiness.Ref{Machine: "leaf1", Check: CheckLLDP, Subject: "swp63"}); x.Status != readiness.Failed || x.After != want {
		t.Errorf("swp64: %s; after %v, want %v", x.Line(), x.After.Refs(), want.Refs())
	}
	if c := readiness.Causes([]readiness.Result{got["swp63"], got["swp64"]}); len(c) != 1 || c[0].Ref.Subject != "swp63" || len(c[0].Explains) != 1 {
		t.Errorf("causes: %+v", c)
	}
	// One cable moved: swp64 to leaf2's swp63 (spine1 swp2 planned there).
	nbs = map[string]any{"swp63": lldp("spine1", "swp1"), "swp64": lldp("spine1", "swp2")}
	for _, x := range checkOf(t, r, inv, leaf1, CheckLLDP) {
		if want := readiness.DependsOn(readiness.Ref{Machine: "spine1", Check: CheckLLDP, Subject: "swp2"}); x.Subject == "swp64" && (x.Status != readiness.Failed || x.After != want) {
			t.Errorf("swp64 moved: %s; after %v, want %v", x.Line(), x.After.Refs(), want.Refs())
		}
	}
}

// Three cables rotated at leaf1 (a third uplink, swp62 to spine1 swp3;
// swp62 hears swp63's planned end, swp63 swp64's, swp64 swp62's) are one
// fault: the check's LLDP findings make a cycle and leaf1's results give
// one LLDP cause, swp62, the first rotated port checked, explaining the
// other two. (Taking the first
// of two swapped ports in fabric.links as a root, as before, made swp62
// and swp63 two causes.)
func TestCheckLLDPRotation(t *testing.T) {
	r := newRig(t, nvuesim.Options{Ports: 64})
	inv := loadInvEdit(t, "fabric-cumulus", "", "  links:\n", "  links:\n    - {switch: leaf1, port: swp62, peer: spine1, peer_port: swp3}\n")
	leaf1 := inv.Switch("leaf1")
	leaf1.Mgmt = r.sim.Addr
	if res, err := pushAll(context.Background(), inv, []inventory.Switch{*leaf1}, r.o); err != nil {
		t.Fatalf("%v: %v\n%s", err, res[0].Err, r.out)
	}
	lldp := func(sys, port string) map[string]any {
		return map[string]any{"lldp": map[string]any{"neighbor": map[string]any{sys: map[string]any{"chassis": map[string]any{"system-name": sys}, "port": map[string]any{"name": port}}}}}
	}
	nbs := map[string]any{"swp62": lldp("spine1", "swp1"), "swp63": lldp("spine2", "swp1"), "swp64": lldp("spine1", "swp3")}
	r.sim.SetInterfaces(func() map[string]any { return nbs })
	rs, err := Check(context.Background(), inv, []inventory.Switch{*leaf1}, r.o)
	if err != nil {
		t.Fatal(err)
	}
	var lldpBad []string
	for _, x := range rs {
		if x.Check == CheckLLDP && x.Status != readiness.Passed {
			lldpBad = append(lldpBad, x.Ref().String())
		}
	}
	if got := strings.Join(lldpBad, "; "); got != "leaf1 lldp swp62; leaf1 lldp swp63; leaf1 lldp swp64" {
		t.Errorf("lldp findings: %s", got)
	}
	// (The simulator runs no BGP and shows no link speeds: those
	// findings are causes of their own.)
	causes := readiness.Causes(rs)
	var lldpCauses []readiness.Cause
	for _, c := range causes {
		if c.Check == CheckLLDP {
			lldpCauses = append(lldpCauses, c)
		}
		for _, e := range c.Explains {
			if e.Check == CheckLLDP && c.Ref.String() != "leaf1 lldp swp62" {
				t.Errorf("%s explains %s", c.Ref, e)
			}
		}
	}
	if len(lldpCauses) != 1 || lldpCauses[0].Ref.String() != "leaf1 lldp swp62" {
		t.Fatalf("LLDP causes: %+v, want one: leaf1 lldp swp62", lldpCauses)
	}
	explained := map[string]bool{}
	for _, e := range lldpCauses[0].Explains {
		explained[e.String()] = true
	}
	if !explained["leaf1 lldp swp63"] || !explained["leaf1 lldp swp64"] {
		t.Errorf("swp62 explains %v", lldpCauses[0].Explains)
	}
}
