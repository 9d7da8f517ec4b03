package onyxapply

import (
	"fmt"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// CheckBFD reads, on a fabric switch, `show ip bfd neighbors`
// (onyx.ShowBFDNeighborsCommand, whose form is inferred: its doc comment
// says from what): each planned BGP session follows a BFD session
// (`router bgp <asn> vrf default neighbor <a> fall-over bfd`, onyx.BGPBFD),
// and passes when the default VRF's row of that neighbor is UP, with the
// planned timers (inventory.BFDDetectMultiplier, BFDIntervalMs: 3 × 300 ms)
// where the row shows them, Subject the neighbor's address as the bgp
// check names it. A row in another state fails with the far switch and
// the link to look at; no row fails with the `fall-over bfd` apply writes;
// a row with other timers fails with the `ip bfd` timer lines. A failure
// follows from (readiness.Causes) the BGP session it serves — BGP
// registers the session, so a BGP that is down has none, and the far
// end's stops answering — and from the cable, both its ends (link and
// lldp). Unknown when the output is not a table of BFD sessions, with how
// to look by hand.
const CheckBFD = "bfd"

// bfd checks the BFD session of every planned BGP session of a fabric
// switch.
func (c *checker) bfd() {
	sw := &c.t.sw
	var planned []inventory.Uplink
	for _, u := range c.fp.Uplinks(sw.Name) {
		if u.Numbered && u.Remote.IsValid() && u.Peer != nil {
			planned = append(planned, u) // as onyx.Fabric writes `fall-over bfd`
		}
	}
	if len(planned) == 0 {
		return
	}
	out, err := c.send(onyx.ShowBFDNeighborsCommand)
	var sessions []onyx.BFDSession
	if err == nil {
		sessions, err = onyx.ParseBFDNeighbors(out)
	}
	want := fmt.Sprintf("up, detect multiplier %d, %d ms min-rx and transmit-rate", inventory.BFDDetectMultiplier, inventory.BFDIntervalMs)
	var timerFix []string
	for _, st := range onyx.BFDTimers() {
		timerFix = append(timerFix, st.Command())
	}
	for _, u := range planned {
		key := u.Remote.Addr().String()
		if err != nil {
			c.unsure(CheckBFD, key, fmt.Sprintf("%v; look by hand: `%s` on %s (the session to %s must be up), `show running-config | include bfd` (`fall-over bfd` on the neighbor, the `ip bfd` timers)",
				err, onyx.ShowBFDNeighborsCommand, sw.Name, key))
			continue
		}
		var s *onyx.BFDSession
		for i := range sessions {
			if sessions[i].Neighbor == u.Remote.Addr() && (sessions[i].VRF == "" || sessions[i].VRF == "default") {
				s = &sessions[i]
				break
			}
		}
		peerBFD := fmt.Sprintf("`%s` on %s", onyx.ShowBFDNeighborsCommand, u.Peer.Name)
		if u.Peer.OS() == inventory.OSCumulus {
			peerBFD = "`nv show vrf default router bfd peers` on " + u.Peer.Name
		}
		// What a failed session follows from: the BGP session it serves
		// and the cable, both its ends.
		deps := []readiness.Ref{sessionRef(sw, u), portRef(sw, CheckLink, u.Port), portRef(u.Peer, CheckLink, u.PeerPort),
			portRef(sw, CheckLLDP, u.Port), portRef(u.Peer, CheckLLDP, u.PeerPort)}
		timers := ""
		if s != nil && s.HasTimers() {
			timers = fmt.Sprintf(", detect multiplier %d, %d/%d ms min-rx/transmit-rate", s.Multiplier, s.MinRx, s.TransmitRate)
		}
		switch {
		case s == nil:
			c.fail(CheckBFD, key, fmt.Sprintf("no BFD session to %s in `%s`", key, onyx.ShowBFDNeighborsCommand), want,
				fmt.Sprintf("%s, or in config mode: %s; if `show running-config` has it, BGP registers no BFD session while it does not run the session (see the bgp check)",
					applyCommand, onyx.BGPBFD(sw.Fabric.ASN, u.Remote.Addr()).Command()))
			c.after(deps...)
		case !s.Up():
			c.fail(CheckBFD, key, quote.Terminal(s.State+timers), want,
				fmt.Sprintf("%s does not answer BFD on %s %s ↔ %s: check its BFD (%s) and the link (link and lldp checks); BGP drops the session each time BFD goes down",
					u.Peer.Name, sw.Name, sw.PortName(u.Port), peerEnd(&u), peerBFD))
			c.after(deps...)
		case s.HasTimers() && (s.Multiplier != inventory.BFDDetectMultiplier || s.MinRx != inventory.BFDIntervalMs || s.TransmitRate != inventory.BFDIntervalMs):
			c.fail(CheckBFD, key, quote.Terminal("up"+timers), want,
				fmt.Sprintf("%s, or in config mode: %s (a changed timer takes effect when the session comes up again)", applyCommand, strings.Join(timerFix, "; ")))
		default:
			c.pass(CheckBFD, key, quote.Terminal("up with "+u.Peer.Name+timers))
		}
	}
}
