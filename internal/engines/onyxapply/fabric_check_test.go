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
	got := byKey(rs)
	for key, want := range map[string]string{
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
	} {
		r, ok := got[key]
		if !ok {
			t.Errorf("no result %q", key)
			continue
		}
		if line := strings.TrimPrefix(r.Line(), r.Machine+": "+r.Check+" "+r.Subject+": "); line != want {
			t.Errorf("%s:\n got %s\nwant %s", key, line, want)
		}
	}
	// Every switch: 2 uplinks × (5 port checks + lldp) and 2 sessions;
	// the leaves' 2 host ports × 5.
	n := map[string]int{}
	for _, r := range rs {
		n[r.Machine]++
	}
	for sw, want := range map[string]int{"spine1": 1 + 12 + 2, "spine2": 1 + 12 + 2, "leaf1": 1 + 10 + 12 + 2, "leaf2": 1 + 10 + 12 + 2} {
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
	no := onyxsim.Options{NoShow: []string{"show ip bgp", "show lldp"}}
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
		if r.Check != CheckBGP && r.Check != CheckLLDP {
			if r.Status != readiness.Passed {
				t.Errorf("%s", r.Line())
			}
			continue
		}
		seen++
		hint := "`show lldp interfaces ethernet remote` on " + r.Machine + " by hand"
		if r.Check == CheckBGP {
			hint = "look by hand: `show ip bgp summary` on " + r.Machine
		}
		if r.Status != readiness.Unknown || !strings.Contains(r.Found, "Unrecognized command") || !strings.Contains(r.Found, hint) {
			t.Errorf("%s", r.Line())
		}
	}
	if seen != 16 {
		t.Errorf("%d bgp and lldp results, want 16", seen)
	}
}
