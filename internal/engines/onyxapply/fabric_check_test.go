package onyxapply

import (
	"os"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// goldenONYXFabric is testdata/golden/fabric-onyx's inventory.
func goldenONYXFabric(t *testing.T) *inventory.Inventory {
	t.Helper()
	src, err := os.ReadFile("../../../testdata/golden/fabric-onyx/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// byKey indexes results by "machine check subject".
// oneNeighbor is an onyxsim LLDP hook that gives each port of m its one
// neighbor.
func oneNeighbor(m map[string]onyxsim.LLDPNeighbor) func() map[string][]onyxsim.LLDPNeighbor {
	return func() map[string][]onyxsim.LLDPNeighbor {
		out := map[string][]onyxsim.LLDPNeighbor{}
		for port, n := range m {
			out[port] = []onyxsim.LLDPNeighbor{n}
		}
		return out
	}
}

// wantLines fails t unless each key of want ("machine check subject") is a
// result of rs whose line, after its "machine: check subject: ", is want's.
func wantLines(t *testing.T, rs []readiness.Result, want map[string]string) {
	t.Helper()
	got := byKey(rs)
	for key, line := range want {
		r, ok := got[key]
		if !ok {
			t.Errorf("no result %q", key)
			continue
		}
		if g := strings.TrimPrefix(r.Line(), r.Machine+": "+r.Check+" "+r.Subject+": "); g != line {
			t.Errorf("%s:\n got %s\nwant %s", key, g, line)
		}
	}
}

func byKey(rs []readiness.Result) map[string]readiness.Result {
	m := map[string]readiness.Result{}
	for _, r := range rs {
		m[r.Machine+" "+r.Check+" "+r.Subject] = r
	}
	return m
}

// On a fabric switch the check reads every uplink like a data port, its
// LLDP neighbor against fabric.links and every planned BGP session, from
// what the switch shows (here the simulator's Operational hooks): an
// established session and the planned neighbor pass, a session in another
// state and a neighbor that is another switch's port fail with their fix;
// a switch without hooks shows no session and no neighbor, which fail.
func TestCheckFabric(t *testing.T) {
	inv := goldenONYXFabric(t)
	r := newRig(t, inv)
	if _, err := r.run(t); err != nil {
		t.Fatal(err)
	}
	leaf1 := r.sims[2]
	leaf1.SetOperational(onyxsim.Operational{
		BGP: func() (onyxsim.BGP, bool) {
			return onyxsim.BGP{Peers: []onyxsim.BGPPeer{
				{Neighbor: "10.254.0.1", RemoteAS: 65100, State: "Established", PfxRcd: 5},
				{Neighbor: "10.254.0.3", RemoteAS: 65100, State: "Active"},
			}}, true
		},
		LLDP: func() map[string][]onyxsim.LLDPNeighbor {
			return map[string][]onyxsim.LLDPNeighbor{
				"1/31": {{SystemName: "spine1", PortID: "Eth1/1"}},
				"1/32": {{SystemName: "spine1", PortID: "Eth1/2"}}, // spine2 1/1 planned
			}
		},
	})
	// spine2 1/1 lists an entry with nothing advertised: no neighbor.
	r.sims[1].SetOperational(onyxsim.Operational{LLDP: func() map[string][]onyxsim.LLDPNeighbor {
		return map[string][]onyxsim.LLDPNeighbor{"1/1": {{}}, "1/2": {{SystemName: "leaf2", PortID: "Eth1/32"}}}
	}})
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.sims {
		readOnly(t, s)
	}
	wantLines(t, rs, map[string]string{
		"leaf1 bgp 10.254.0.1":  "passed (established with spine1 (AS 65100), 5 prefixes received, up 0:00:00:00)",
		"leaf1 bgp 10.254.0.3":  "FAILED: found ACTIVE; expected established with spine2 (AS 65100); fix: check spine2's BGP (`show ip bgp summary` on spine2) and the link leaf1 1/32 ↔ spine2 1/1 (link and lldp checks)",
		"leaf1 lldp Eth1/31":    "passed (spine1 1/1)",
		"leaf1 lldp Eth1/32":    "FAILED: found spine1 1/2; expected spine2 1/1 (fabric.links[1]); fix: miswired: leaf1 1/32 is cabled to spine1 1/2, the plan cables it to spine2 1/1: move the cable at leaf1 1/32 to spine2 1/1 (or, if this cabling is the intended one, correct fabric.links[1] and apply again)",
		"leaf1 link Eth1/31":    "passed (up, 100 Gbps, uplink to spine1 1/1)",
		"leaf1 mtu Eth1/32":     "passed (9216 bytes)",
		"leaf1 pfc Eth1/32":     "passed (PFC enabled, priority 3 enabled, Eth1/32 PFC admin on, oper Enabled)",
		"leaf1 ecn Eth1/31":     "passed (traffic class 3: ECN, absolute 150-1500 KB, 0 packets marked)",
		"spine1 mtu Eth1/2":     "passed (9216 bytes)",
		"spine2 lldp Eth1/1":    "FAILED: found no LLDP neighbor; expected leaf1 1/32 (fabric.links[1]); fix: no LLDP frames arrive on spine2 1/1: check the cable to leaf1 1/32 and that LLDP runs on leaf1",
		"spine2 lldp Eth1/2":    "passed (leaf2 1/32)",
		"spine1 lldp Eth1/1":    "FAILED: found no LLDP neighbor; expected leaf1 1/31 (fabric.links[0]); fix: no LLDP frames arrive on spine1 1/1: check the cable to leaf1 1/31 and that LLDP runs on leaf1",
		"spine1 bgp 10.254.0.0": "FAILED: found no session to 10.254.0.0 in `show ip bgp summary`; expected established with leaf1 (AS 65101); fix: rdggen apply --target switch, or in config mode: router bgp 65100 vrf default neighbor 10.254.0.0 remote-as 65101; if `show running-config` has it, BGP does not run it: `show protocols | include bgp` must say enabled (`protocol bgp`), then `clear ip bgp all`",
	})
	// Every switch: 2 uplinks × (5 port checks + lldp) and 2 sessions
	// × (bgp + bfd); the leaves' 2 host ports × 5.
	n := map[string]int{}
	for _, r := range rs {
		n[r.Machine]++
	}
	for sw, want := range map[string]int{"spine1": 1 + 12 + 4, "spine2": 1 + 12 + 4, "leaf1": 1 + 10 + 12 + 4, "leaf2": 1 + 10 + 12 + 4} {
		if n[sw] != want {
			t.Errorf("%s: %d results, want %d", sw, n[sw], want)
		}
	}
}

// A switch that refuses the fabric's show commands (an older ONYX, a user
// without the right, BGP not enabled) gives COULD NOT TELL with how to look
// by hand, never a failure.
func TestCheckFabricUnreadable(t *testing.T) {
	inv := goldenONYXFabric(t)
	no := onyxsim.Options{NoShow: []string{"show ip bgp", "show lldp", "show ip bfd"}}
	r := newRig(t, inv, no, no, no, no)
	if _, err := r.run(t); err != nil {
		t.Fatal(err)
	}
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range rs {
		if r.Check != CheckBGP && r.Check != CheckLLDP && r.Check != CheckBFD {
			if r.Status != readiness.Passed {
				t.Errorf("%s", r.Line())
			}
			continue
		}
		seen++
		hint := "`show lldp interfaces ethernet remote` on " + r.Machine + " by hand"
		switch r.Check {
		case CheckBGP:
			hint = "look by hand: `show ip bgp summary` on " + r.Machine
		case CheckBFD:
			hint = "look by hand: `show ip bfd neighbors` on " + r.Machine
		}
		if r.Status != readiness.Unknown || !strings.Contains(r.Found, "Unrecognized command") || !strings.Contains(r.Found, hint) {
			t.Errorf("%s", r.Line())
		}
	}
	if seen != 24 {
		t.Errorf("%d bgp, bfd and lldp results, want 24", seen)
	}
}

// The check compares what it reads with the plan, not only states: a
// session established with another AS than the planned peer's fails as a
// wrong peer; one that carries fewer prefixes than the plan routes over it
// (leaf1 from spine2: spine2's loopback and leaf2's four) fails, naming
// them, and 0 is fewer; a switch whose BGP runs as another AS fails every
// session; two LLDP neighbors on one port are two (a miswire), not one; an
// uplink that came up at 40G where both ends run 100G fails its link.
func TestCheckFabricAgainstPlan(t *testing.T) {
	inv := goldenONYXFabric(t)
	r := newRig(t, inv)
	if _, err := r.run(t); err != nil {
		t.Fatal(err)
	}
	leaf1, spine1 := r.sims[2], r.sims[0]
	leaf1.SetOperational(onyxsim.Operational{
		BGP: func() (onyxsim.BGP, bool) {
			return onyxsim.BGP{Peers: []onyxsim.BGPPeer{
				{Neighbor: "10.254.0.1", RemoteAS: 65102, State: "Established", PfxRcd: 5},
				{Neighbor: "10.254.0.3", RemoteAS: 65100, State: "Established", PfxRcd: 0},
			}}, true
		},
		LLDP: func() map[string][]onyxsim.LLDPNeighbor {
			return map[string][]onyxsim.LLDPNeighbor{
				"1/31": {{SystemName: "spine1", PortID: "Eth1/1"}, {SystemName: "spine2", PortID: "Eth1/3"}},
				"1/32": {{SystemName: "spine2", PortID: "Eth1/1"}},
			}
		},
		Links: func() map[string]onyxsim.Link { return map[string]onyxsim.Link{"1/32": {Up: true, Speed: "40 Gbps"}} },
	})
	spine1.SetOperational(onyxsim.Operational{BGP: func() (onyxsim.BGP, bool) {
		return onyxsim.BGP{AS: 64999, Peers: []onyxsim.BGPPeer{
			{Neighbor: "10.254.0.0", RemoteAS: 65101, State: "Established", PfxRcd: 4},
			{Neighbor: "10.254.0.4", RemoteAS: 65102, State: "Established", PfxRcd: 4},
		}}, true
	}})
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, rs, map[string]string{
		"leaf1 bgp 10.254.0.1":  "FAILED: found established with AS 65102; expected established with spine1 (AS 65100); fix: wrong peer: leaf1 1/31 peers with AS 65102 at 10.254.0.1, the plan with spine1 1/1 (AS 65100, fabric.links[0]): the lldp check of 1/31 names what is cabled there, and spine1's config check whether it runs rdggen's AS",
		"leaf1 bgp 10.254.0.3":  "FAILED: found established with spine2 (AS 65100), 0 prefixes received, up 0:00:00:00; expected established with spine2 (AS 65100), at least 5 prefixes received: 10.10.10.2/32, 10.1.2.0/24, 172.16.21.0/24, 172.16.22.0/24, 10.10.10.4/32; fix: the session is up but carries 0 of them: look at what spine2 announces to leaf1 (`show ip bgp neighbors 10.254.0.2 advertised-routes` on spine2: its network statements and outbound filters) and, for another switch's prefixes, at spine2's sessions to it",
		"spine1 bgp 10.254.0.0": "FAILED: found established, but spine1's BGP runs as AS 64999; expected established with leaf1 (AS 65101), spine1 as AS 65100; fix: the switch runs another BGP instance than rdggen's (its config check names it): remove it (no router bgp 64999 vrf default) and apply, or set switches[].asn: 64999 for spine1",
		"leaf1 lldp Eth1/31":    "FAILED: found 2 neighbors: spine1 1/1, spine2 1/3; expected one: spine1 1/1 (fabric.links[0]); fix: more than one device on leaf1 1/31, a point-to-point uplink to spine1 1/1: something joins the link (an unmanaged switch, a bridge, a tap); remove it and cable leaf1 1/31 straight to spine1 1/1",
		"leaf1 link Eth1/32":    "FAILED: found up, 40 Gbps; expected up at 100 Gb/s (leaf1 1/32 100 Gb/s, spine2 1/1 100 Gb/s); fix: the link runs slower than both ends allow (RoCE bandwidth and the benchmarks' pass lines follow the planned speed): check the link leaf1 1/32 ↔ spine2 1/1: the cable and the optics at both ends, and the speed set on each port (`show interfaces ethernet 1/32` on leaf1, and on spine2)",
		"leaf1 link Eth1/31":    "passed (up, 100 Gbps, uplink to spine1 1/1)",
	})
}

// A switch that already runs BGP as another AS gets none of rdggen's BGP
// lines from apply (the plan leaves them out and says so); the check fails
// its configuration rather than say it has every statement.
func TestCheckForeignBGP(t *testing.T) {
	inv := goldenONYXFabric(t)
	r := newRig(t, inv, onyxsim.Options{Seed: []string{"protocol bgp", "router bgp 64999 vrf default"}})
	if _, err := r.run(t); err != nil {
		t.Fatal(err)
	}
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	got := byKey(rs)
	x, ok := got["spine1 config router bgp"]
	if !ok || x.Status != readiness.Failed || x.Found != "router bgp 64999 vrf default: BGP runs as AS 64999, so none of rdggen's 7 BGP statements are sent" ||
		x.Expected != "router bgp 65100 vrf default (spine1's AS, the inventory's) with rdggen's BGP statements" ||
		x.Fix != "if that BGP instance is yours, set switches[].asn: 64999 for spine1 in the inventory and apply again; else in config mode: no router bgp 64999 vrf default, then rdggen apply --target switch" {
		t.Errorf("foreign BGP: %s", x.Line())
	}
	if p, ok := got["spine1 config "]; ok {
		t.Errorf("the configuration passes beside a foreign AS: %s", p.Line())
	}
}

// Two cables swapped at leaf1 (1/31 to spine2 1/1, 1/32 to spine1 1/1) are
// one fault: all four ends hear the wrong neighbor, and the four LLDP
// findings form one cause, leaf1's first swapped port, which keeps its
// miswire fix. (The simulators run no BGP here: the LLDP results alone
// are grouped.)
func TestCheckFabricSwapOneCause(t *testing.T) {
	inv := goldenONYXFabric(t)
	r := newRig(t, inv)
	if _, err := r.run(t); err != nil {
		t.Fatal(err)
	}
	r.sims[0].SetOperational(onyxsim.Operational{LLDP: oneNeighbor(map[string]onyxsim.LLDPNeighbor{
		"1/1": {SystemName: "leaf1", PortID: "Eth1/32"}, "1/2": {SystemName: "leaf2", PortID: "Eth1/31"}})})
	r.sims[1].SetOperational(onyxsim.Operational{LLDP: oneNeighbor(map[string]onyxsim.LLDPNeighbor{
		"1/1": {SystemName: "leaf1", PortID: "Eth1/31"}, "1/2": {SystemName: "leaf2", PortID: "Eth1/32"}})})
	r.sims[2].SetOperational(onyxsim.Operational{LLDP: oneNeighbor(map[string]onyxsim.LLDPNeighbor{
		"1/31": {SystemName: "spine2", PortID: "Eth1/1"}, "1/32": {SystemName: "spine1", PortID: "Eth1/1"}})})
	r.sims[3].SetOperational(onyxsim.Operational{LLDP: oneNeighbor(map[string]onyxsim.LLDPNeighbor{
		"1/31": {SystemName: "spine1", PortID: "Eth1/2"}, "1/32": {SystemName: "spine2", PortID: "Eth1/2"}})})
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	var lldpBad []string
	var lldpRs []readiness.Result
	for _, x := range rs {
		if x.Check == CheckLLDP {
			lldpRs = append(lldpRs, x)
			if x.Status != readiness.Passed {
				lldpBad = append(lldpBad, x.Ref().String())
			}
		}
	}
	rs = lldpRs
	if got := strings.Join(lldpBad, "; "); got != "spine1 lldp Eth1/1; spine2 lldp Eth1/1; leaf1 lldp Eth1/31; leaf1 lldp Eth1/32" {
		t.Errorf("lldp findings: %s", got)
	}
	causes := readiness.Causes(rs)
	var roots []string
	for _, c := range causes {
		roots = append(roots, c.Ref.String())
	}
	if len(causes) != 1 || causes[0].Ref.String() != "leaf1 lldp Eth1/31" {
		t.Fatalf("causes: %v, want one: leaf1 lldp Eth1/31", roots)
	}
	explained := map[string]bool{}
	for _, e := range causes[0].Explains {
		explained[e.String()] = true
	}
	for _, x := range rs {
		if x.Status != readiness.Passed && x.Ref() != causes[0].Ref && !explained[x.Ref().String()] {
			t.Errorf("not explained by the swap: %s", x.Line())
		}
	}
	for _, want := range []string{"spine1 lldp Eth1/1", "spine2 lldp Eth1/1", "leaf1 lldp Eth1/32"} {
		if !explained[want] {
			t.Errorf("%s does not follow from the swap: %v", want, causes[0].Explains)
		}
	}
	if x := byKey(rs)["leaf1 lldp Eth1/31"]; !strings.Contains(x.Fix, "miswired: leaf1 1/31 is cabled to spine2 1/1, the plan cables it to spine1 1/1: move the cable at leaf1 1/31 to spine1 1/1") {
		t.Errorf("leaf1 1/31's fix: %s", x.Fix)
	}
	t.Logf("%s", readiness.NotReady(rs, causes, 0))
}
