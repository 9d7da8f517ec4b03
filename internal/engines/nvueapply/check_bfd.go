package nvueapply

import (
	"fmt"
	"strings"

	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// CheckBFD reads, on a fabric switch whose BGP neighbors run BFD (Cumulus
// Linux 5.0–5.14: cumulus.BFDPerNeighbor), the operational view of the
// default VRF's BFD sessions (GET /nvue_v1/vrf/default/router/bfd/peers,
// `nv show vrf default router bfd peers`): each planned session, Subject
// the neighbor as the bgp check names it (the uplink's port, or the
// peer's /31 address), passes when its state is up with the planned
// timers (inventory.BFDDetectMultiplier and BFDIntervalMs: detect
// multiplier 3, 300 ms min rx and tx). The view's shape is inferred
// (nvuesim.Server.SetBFDPeers).
const CheckBFD = "bfd"

// bfd is CheckBFD for the switch being checked.
func (k *checker) bfd() {
	if !cumulus.BFDPerNeighbor(k.sw) {
		return
	}
	const path = "/nvue_v1/vrf/default/router/bfd/peers"
	op, err := k.c.GetTree(k.ctx, []string{"vrf", "default", "router", "bfd", "peers"}, "")
	want := fmt.Sprintf("up, detect-multiplier %d, %d ms min rx and tx", inventory.BFDDetectMultiplier, inventory.BFDIntervalMs)
	for _, u := range k.inv.Uplinks(k.sw.Name) {
		if u.Peer == nil {
			continue
		}
		port := k.sw.PortName(u.Port)
		key := port
		if u.Numbered {
			key = u.Remote.Addr().String()
		}
		if err != nil {
			k.unsure(CheckBFD, key, "GET "+path+": "+err.Error())
			continue
		}
		var session map[string]any
		for _, id := range sortedKeys(op) {
			s, _ := op[id].(map[string]any)
			if s["interface"] == port || (u.Numbered && s["peer"] == key) {
				session = s
				break
			}
		}
		neighbor := []string{"vrf", "default", "router", "bgp", "neighbor", key, "bfd"}
		// How to look at the far end's BFD: its OS's own view, which that
		// switch's bfd check reads as well (onyxapply.CheckBFD on ONYX).
		var peerBFD string
		switch {
		case u.Peer.OS() == inventory.OSCumulus:
			peerBFD = "its BFD (`nv show vrf default router bfd peers` on " + u.Peer.Name + ")"
		case u.Peer.OS() == inventory.OSONYX && u.Numbered:
			peerBFD = fmt.Sprintf("its BFD (`%s` on %s: the session to %s)", onyx.ShowBFDNeighborsCommand, u.Peer.Name, u.Local.Addr())
		case u.Peer.OS() == inventory.OSONYX:
			peerBFD = fmt.Sprintf("its BFD (`%s` on %s)", onyx.ShowBFDNeighborsCommand, u.Peer.Name)
		default:
			peerBFD = "its BFD (on " + u.Peer.Name + ")"
		}
		// What a failed session follows from (readiness.Causes): the BGP
		// session it serves (bgpd registers it with bfdd: a stopped bgpd
		// leaves none) and the cable, both its ends.
		deps := []readiness.Ref{sessionRef(&k.sw, u), portRef(&k.sw, CheckLink, u.Port), portRef(u.Peer, CheckLink, u.PeerPort),
			portRef(&k.sw, CheckLLDP, u.Port), portRef(u.Peer, CheckLLDP, u.PeerPort)}
		state, _ := session["state"].(string)
		mult, rx, tx := fmt.Sprint(session["detect-multiplier"]), fmt.Sprint(session["min-rx-interval"]), fmt.Sprint(session["min-tx-interval"])
		timers := fmt.Sprintf("detect-multiplier %s, %s/%s ms min rx/tx", mult, rx, tx)
		planned := fmt.Sprint(inventory.BFDDetectMultiplier) == mult && fmt.Sprint(inventory.BFDIntervalMs) == rx && fmt.Sprint(inventory.BFDIntervalMs) == tx
		switch {
		case session == nil:
			k.fail(CheckBFD, key, "no BFD session for "+key, want,
				fmt.Sprintf("on %s: `%s`%s (or rdggen apply --target switch); if it is set, FRR does not run it (bgpd registers the session with bfdd; see the bgp check): `sudo systemctl restart frr`, then `nv show vrf default router bfd peers`",
					k.sw.Name, cumulus.NVCommand(append(neighbor, "enable"), "on"), applyFix))
			k.after(deps...)
		case !strings.EqualFold(state, "up"):
			k.fail(CheckBFD, key, state+", "+timers, want,
				fmt.Sprintf("%s does not answer BFD on %s %s ↔ %s: check %s and the link (link and lldp checks); BGP drops the session each time BFD goes down",
					u.Peer.Name, k.sw.Name, port, peerEnd(u), peerBFD))
			k.after(deps...)
		case !planned:
			k.fail(CheckBFD, key, "up, "+timers, want,
				fmt.Sprintf("on %s: `%s`, `%s`, `%s`%s (a changed timer takes effect when the session comes up again)", k.sw.Name,
					cumulus.NVCommand(append(neighbor, "detect-multiplier"), fmt.Sprint(inventory.BFDDetectMultiplier)),
					cumulus.NVCommand(append(neighbor, "min-rx-interval"), fmt.Sprint(inventory.BFDIntervalMs)),
					cumulus.NVCommand(append(neighbor, "min-tx-interval"), fmt.Sprint(inventory.BFDIntervalMs)), applyFix))
		default:
			k.pass(CheckBFD, key, fmt.Sprintf("up with %s, %s", u.Peer.Name, timers))
		}
	}
}
