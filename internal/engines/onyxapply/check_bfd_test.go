package onyxapply

import (
	"slices"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// The bfd check reads `show ip bfd neighbors` from the simulator (its
// Operational BFD hook): an UP session with the planned timers passes; a
// DOWN one fails naming the far switch and the link; one with other timers
// fails with the `ip bfd` timer lines; a missing one fails with the
// `fall-over bfd` apply writes; and a failed session follows from its BGP
// session and its cable (readiness.Causes): with every cable as planned
// (LLDP) and leaf1's BGP session to spine2 down, leaf1's BFD finding to
// spine2 is explained by a BGP finding, not a cause of its own.
func TestCheckBFD(t *testing.T) {
	inv := goldenONYXFabric(t)
	r := newRig(t, inv)
	if _, err := r.run(t); err != nil {
		t.Fatal(err)
	}
	leaf1, spine1 := r.sims[2], r.sims[0]
	r.sims[1].SetOperational(onyxsim.Operational{LLDP: oneNeighbor(map[string]onyxsim.LLDPNeighbor{
		"1/1": {SystemName: "leaf1", PortID: "Eth1/32"}, "1/2": {SystemName: "leaf2", PortID: "Eth1/32"}})})
	r.sims[3].SetOperational(onyxsim.Operational{LLDP: oneNeighbor(map[string]onyxsim.LLDPNeighbor{
		"1/31": {SystemName: "spine1", PortID: "Eth1/2"}, "1/32": {SystemName: "spine2", PortID: "Eth1/2"}})})
	leaf1.SetOperational(onyxsim.Operational{
		LLDP: oneNeighbor(map[string]onyxsim.LLDPNeighbor{
			"1/31": {SystemName: "spine1", PortID: "Eth1/1"}, "1/32": {SystemName: "spine2", PortID: "Eth1/1"}}),
		BGP: func() (onyxsim.BGP, bool) {
			return onyxsim.BGP{Peers: []onyxsim.BGPPeer{
				{Neighbor: "10.254.0.1", RemoteAS: 65100, State: "Established", PfxRcd: 5},
				{Neighbor: "10.254.0.3", RemoteAS: 65100, State: "Active"},
			}}, true
		},
		BFD: func() ([]onyxsim.BFDPeer, bool) {
			return []onyxsim.BFDPeer{
				{Neighbor: "10.254.0.1", Port: "1/31", State: "up", Multiplier: 3, MinRx: 300, TransmitRate: 300},
				{Neighbor: "10.254.0.3", Port: "1/32", State: "down", Multiplier: 3, MinRx: 300, TransmitRate: 300},
			}, true
		},
	})
	spine1.SetOperational(onyxsim.Operational{
		LLDP: oneNeighbor(map[string]onyxsim.LLDPNeighbor{
			"1/1": {SystemName: "leaf1", PortID: "Eth1/31"}, "1/2": {SystemName: "leaf2", PortID: "Eth1/31"}}),
		BFD: func() ([]onyxsim.BFDPeer, bool) {
			return []onyxsim.BFDPeer{{Neighbor: "10.254.0.0", Port: "1/1", State: "up", Multiplier: 5, MinRx: 300, TransmitRate: 300}}, true
		},
	})
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.sims {
		readOnly(t, s)
	}
	wantLines(t, rs, map[string]string{
		"leaf1 bfd 10.254.0.1":  "passed (up with spine1, detect multiplier 3, 300/300 ms min-rx/transmit-rate)",
		"leaf1 bfd 10.254.0.3":  "FAILED: found DOWN, detect multiplier 3, 300/300 ms min-rx/transmit-rate; expected up, detect multiplier 3, 300 ms min-rx and transmit-rate; fix: spine2 does not answer BFD on leaf1 1/32 ↔ spine2 1/1: check its BFD (`show ip bfd neighbors` on spine2) and the link (link and lldp checks); BGP drops the session each time BFD goes down",
		"spine1 bfd 10.254.0.0": "FAILED: found up, detect multiplier 5, 300/300 ms min-rx/transmit-rate; expected up, detect multiplier 3, 300 ms min-rx and transmit-rate; fix: rdggen apply --target switch, or in config mode: ip bfd vrf default interval min-rx 300 force; ip bfd vrf default interval multiplier 3 force; ip bfd vrf default interval transmit-rate 300 force (a changed timer takes effect when the session comes up again)",
		"spine1 bfd 10.254.0.4": "FAILED: found no BFD session to 10.254.0.4 in `show ip bfd neighbors`; expected up, detect multiplier 3, 300 ms min-rx and transmit-rate; fix: rdggen apply --target switch, or in config mode: router bgp 65100 vrf default neighbor 10.254.0.4 fall-over bfd; if `show running-config` has it, BGP registers no BFD session while it does not run the session (see the bgp check)",
	})
	// The results come after the bgp ones, one per planned session.
	var order []string
	for _, x := range rs {
		if x.Machine == "leaf1" && (x.Check == CheckBGP || x.Check == CheckBFD) {
			order = append(order, x.Check+" "+x.Subject)
		}
	}
	if want := []string{"bgp 10.254.0.1", "bgp 10.254.0.3", "bfd 10.254.0.1", "bfd 10.254.0.3"}; !slices.Equal(order, want) {
		t.Errorf("leaf1's bgp and bfd results: %v, want %v", order, want)
	}
	// leaf1's BFD to spine2 follows from the BGP session it serves.
	explainedBy := ""
	for _, c := range readiness.Causes(rs) {
		if c.Ref.String() == "leaf1 bfd 10.254.0.3" {
			t.Errorf("leaf1's DOWN BFD session is a cause of its own: %v", c.Explains)
		}
		if slices.ContainsFunc(c.Explains, func(e readiness.Ref) bool { return e.String() == "leaf1 bfd 10.254.0.3" }) {
			explainedBy = c.Ref.String()
		}
	}
	if !strings.Contains(explainedBy, " bgp ") {
		t.Errorf("leaf1 bfd 10.254.0.3 is explained by %q, want a bgp finding", explainedBy)
	}
}
