package onyxsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The operational state of a fabric switch that its configuration does not
// decide — its BGP and BFD sessions, its LLDP neighbors, its ports' links
// and MTU —
// read from whatever runs the switch's data plane (in the tests, FRR and
// lldpd in a network namespace: internal/testing/fabricnet's FollowONYX
// installs the hooks). Without a hook the simulator runs no routing and
// hears no neighbor, and says so: `show ip bgp summary` lists no session,
// `show lldp interfaces ethernet remote` has no neighbor, and the ports
// show PortState, and `show ip bfd neighbors` lists no session.

// Operational are the hooks that give the switch's live state; a nil
// field leaves that part as the simulator keeps it. Each is called, without
// the server's lock held, for every show command that prints its part.
type Operational struct {
	// BGP returns the default VRF's BGP sessions; ok false when the BGP
	// process does not answer (the summary then lists no session).
	BGP func() (b BGP, ok bool)
	// BFD returns the default VRF's BFD sessions; ok false when the BFD
	// process does not answer (the table then lists no session).
	BFD func() (peers []BFDPeer, ok bool)
	// LLDP returns the neighbors heard, by local port ID ("1/31").
	LLDP func() map[string][]LLDPNeighbor
	// Links returns the data plane's state of ports by ID ("1/31"); a
	// port it leaves out shows its PortState and configured MTU.
	Links func() map[string]Link
}

// BGP is the state of a BGP process.
type BGP struct {
	// RouterID and AS are the running process's; "" and 0 print the
	// running-config's.
	RouterID string
	AS       uint32
	// Peers are the sessions, in any order (printed by address).
	Peers []BGPPeer
}

// BGPPeer is one session as a routing daemon reports it.
type BGPPeer struct {
	// Neighbor is the peer's address.
	Neighbor string
	// RemoteAS is the peer's AS number.
	RemoteAS uint32
	// State is the session state ("Established", "Active", "Connect",
	// "Idle", "OpenSent", "OpenConfirm"); ONYX prints it in capitals.
	State string
	// MsgRcvd, MsgSent, TableVersion, InQ and OutQ are the table's
	// counters.
	MsgRcvd, MsgSent, TableVersion, InQ, OutQ int
	// Uptime is the time since the session came up or went down.
	Uptime time.Duration
	// PfxRcd is the number of prefixes received.
	PfxRcd int
}

// BFDPeer is one BFD session as a BFD daemon reports it.
type BFDPeer struct {
	// Neighbor is the peer's address.
	Neighbor string
	// Port is the local port ID the session runs over ("1/31"); "" when
	// not known.
	Port string
	// State is RFC 5880's session state: "up", "down", "init" or
	// "admin-down" (FRR's bfdd says "shutdown" for the last); ONYX prints
	// it in capitals.
	State string
	// Multiplier is the local detect multiplier, MinRx and TransmitRate
	// the local receive and transmit intervals in ms.
	Multiplier, MinRx, TransmitRate int
}

// LLDPNeighbor is one neighbor heard on a port, as its LLDPDUs say.
type LLDPNeighbor struct {
	// SystemName is the neighbor's system name, PortID its port id (an ONYX
	// neighbor's "Eth1/1", a Cumulus one's "swp1"), ChassisID its chassis
	// id ("" when unknown).
	SystemName, PortID, ChassisID string
}

// Link is a port's state in the data plane.
type Link struct {
	// Up is the carrier.
	Up bool
	// MTU in bytes; 0 shows the configured one.
	MTU int
	// Speed is the speed the link came up at, as ONYX prints "Actual
	// speed" ("400 Gbps"); "" shows the simulator's (Options.Speed,
	// SetLink).
	Speed string
}

// SetOperational installs the hooks that give the switch's operational
// state (see Operational).
func (s *Server) SetOperational(o Operational) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.op = o
}

// live is what the hooks say, fetched for one show command.
type live struct {
	bgp    BGP
	bgpOK  bool
	bfd    []BFDPeer
	lldp   map[string][]LLDPNeighbor
	links  map[string]Link
	hasBGP bool
}

// fetch calls the hooks the show command line needs, without s.mu held.
func (s *Server) fetch(cmd string) live {
	s.mu.Lock()
	op := s.op
	s.mu.Unlock()
	var l live
	switch {
	case strings.HasPrefix(cmd, "show ip bgp") && op.BGP != nil:
		l.bgp, l.bgpOK = op.BGP()
		l.hasBGP = true
	case strings.HasPrefix(cmd, "show ip bfd") && op.BFD != nil:
		if peers, ok := op.BFD(); ok {
			l.bfd = peers
		}
	case strings.HasPrefix(cmd, "show lldp") && op.LLDP != nil:
		l.lldp = op.LLDP()
	case strings.HasPrefix(cmd, "show interfaces ethernet") && op.Links != nil:
		l.links = op.Links()
	}
	return l
}

// showBGPSummary is `show ip bgp summary` (and `show ip bgp vrf all
// summary`, the default VRF being the only one) in the layout of HPE's
// Cray System Management documentation (github.com/Cray-HPE/docs-csm,
// operations/network/metallb_bgp/Check_BGP_Status_and_Reset_Sessions.md);
// in JSON, the structure of CANU's fixture bgp_status_mellanox
// (github.com/Cray-HPE/canu, tests/test_validate_network_bgp.py): the VRF
// name, then each neighbor's "State/PfxRcd". A session that is not
// established shows its state word alone in capitals ("ACTIVE"): the
// documentation shows only established rows [INF]. The header counters
// the documentation shows beyond the VRF, router identifier and AS (table
// versions, prefix counts) are printed as 0; the Up/Down column as
// d:hh:mm:ss, as its rows read. Without `router bgp` the simulator
// answers with an error line of its own wording [INF]. s.mu held.
func (s *Server) showBGPSummary(l live, jsonOut bool) string {
	head := s.cfg.slots["bgp|"]
	if head == nil {
		return "% BGP is not running\n"
	}
	as, _ := strconv.ParseUint(strings.Fields(head.body)[2], 10, 32)
	routerID := "0.0.0.0"
	if e := s.cfg.slots["bgp|router-id"]; e != nil {
		if f := strings.Fields(e.body); len(f) >= 7 {
			routerID = f[6]
		}
	}
	var peers []BGPPeer
	if l.hasBGP && l.bgpOK {
		if l.bgp.RouterID != "" {
			routerID = l.bgp.RouterID
		}
		if l.bgp.AS != 0 {
			as = uint64(l.bgp.AS)
		}
		peers = slices.Clone(l.bgp.Peers)
		slices.SortFunc(peers, func(a, b BGPPeer) int { return strings.Compare(a.Neighbor, b.Neighbor) })
	}
	statePfx := func(p BGPPeer) string {
		st := strings.ToUpper(p.State)
		if strings.EqualFold(p.State, "established") {
			st += "/" + strconv.Itoa(p.PfxRcd)
		}
		return st
	}
	if jsonOut {
		out := []any{map[string]string{"VRF name": "default"}}
		for _, p := range peers {
			out = append(out, map[string]any{p.Neighbor: []map[string]string{{"State/PfxRcd": statePfx(p)}}})
		}
		return jsonText(out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, " \nVRF name                  : default\nBGP router identifier     : %s\nlocal AS number           : %d\n", routerID, as)
	b.WriteString("BGP table version         : 0\nMain routing table version: 0\nIPV4 Prefixes             : 0\nIPV6 Prefixes             : 0\nL2VPN EVPN Prefixes       : 0\n \n")
	dashes := strings.Repeat("-", 114) + "\n"
	b.WriteString(dashes)
	fmt.Fprintf(&b, "%-17s %-4s %-12s %-9s %-9s %-9s %-6s %-6s %-13s %s\n", "Neighbor", "V", "AS", "MsgRcvd", "MsgSent", "TblVer", "InQ", "OutQ", "Up/Down", "State/PfxRcd")
	b.WriteString(dashes)
	for _, p := range peers {
		fmt.Fprintf(&b, "%-17s %-4d %-12d %-9d %-9d %-9d %-6d %-6d %-13s %s\n", p.Neighbor, 4, p.RemoteAS, p.MsgRcvd, p.MsgSent, p.TableVersion, p.InQ, p.OutQ, upDown(p.Uptime), statePfx(p))
	}
	return b.String()
}

// showBFDNeighbors is `show ip bfd neighbors` (onyx.ShowBFDNeighborsCommand,
// whose doc comment says why its form is inferred): the VRF, then one row
// per session of the default VRF between lines of dashes, with the
// session's neighbor, local port ("Eth1/31", "-" when not known), state in
// capitals ("UP", "DOWN", "INIT", "ADMIN-DOWN") and local timers, the
// columns named by the words of `ip bfd … interval min-rx … multiplier …
// transmit-rate …`. A session is there only while the application that
// uses it (BGP's `fall-over bfd`) has registered it, as the Onyx User
// Manual's BFD chapter says a session "is established by the application
// that uses it": a stopped BGP leaves none. s.mu held.
func (s *Server) showBFDNeighbors(l live) string {
	peers := slices.Clone(l.bfd)
	slices.SortFunc(peers, func(a, b BFDPeer) int { return strings.Compare(a.Neighbor, b.Neighbor) })
	var b strings.Builder
	dashes := strings.Repeat("-", 84) + "\n"
	b.WriteString(" \nVRF name: default\n")
	b.WriteString(dashes)
	fmt.Fprintf(&b, "%-17s %-12s %-11s %-11s %-7s %s\n", "Neighbor", "Interface", "State", "Multiplier", "Min-rx", "Transmit-rate")
	b.WriteString(dashes)
	for _, p := range peers {
		port := "-"
		if _, ok := s.cfg.port(p.Port); ok {
			port = "Eth" + p.Port
		}
		st := strings.ToUpper(p.State)
		if st == "SHUTDOWN" {
			st = "ADMIN-DOWN"
		}
		fmt.Fprintf(&b, "%-17s %-12s %-11s %-11d %-7d %d\n", p.Neighbor, port, st, p.Multiplier, p.MinRx, p.TransmitRate)
	}
	return b.String()
}

// upDown prints a duration as d:hh:mm:ss ("1:01:50:41").
func upDown(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%d:%02d:%02d:%02d", s/86400, s/3600%24, s/60%60, s%60)
}

// showLLDPRemote is `show lldp interfaces ethernet remote`: in JSON the
// structure of CANU's fixture lldp_json_mellanox (github.com/Cray-HPE/canu,
// tests/test_report_switch_cabling.py), one object per port with
// neighbors, keyed by the port ("Eth1/31"; no port channel is simulated),
// or {"Lines": ["", "No lldp remote information.", ""]} when there is
// none; as text the lines the ska-sa switch_exporter reads
// (src/switch_exporter/switch.py): the port, then "Remote chassis id",
// "Remote port-id … ; port id subtype: …" and "Remote system name" (the
// spacing and the order of those lines are guesses [INF]). The port id
// subtype is "Interface Name (5)": lldpd sends interface names. s.mu held.
func (s *Server) showLLDPRemote(l live, jsonOut bool) string {
	var ports []int
	for id := range l.lldp {
		if n, ok := s.cfg.port(id); ok && len(l.lldp[id]) > 0 {
			ports = append(ports, n)
		}
	}
	slices.Sort(ports)
	if len(ports) == 0 {
		if jsonOut {
			return jsonText([]any{map[string][]string{"Lines": {"", "No lldp remote information.", ""}}})
		}
		return "\nNo lldp remote information.\n\n"
	}
	var list []any
	var b strings.Builder
	for _, n := range ports {
		id := "1/" + strconv.Itoa(n)
		var rows []map[string]string
		for _, nb := range l.lldp[id] {
			row := map[string]string{"port id subtype": "Interface Name (5)", "Remote port-id": orNotAdvertised(nb.PortID),
				"Remote system name": orNotAdvertised(nb.SystemName), "Remote chassis id": orNotAdvertised(nb.ChassisID)}
			rows = append(rows, row)
			fmt.Fprintf(&b, "\nEth%s\n", id)
			fmt.Fprintf(&b, "Remote chassis id        : %s\n", row["Remote chassis id"])
			fmt.Fprintf(&b, "Remote port-id           : %s ; port id subtype: %s\n", row["Remote port-id"], row["port id subtype"])
			fmt.Fprintf(&b, "Remote system name       : %s\n", row["Remote system name"])
		}
		list = append(list, map[string]any{"Eth" + id: rows})
	}
	if jsonOut {
		return jsonText(list)
	}
	return b.String()
}

func orNotAdvertised(s string) string {
	if s == "" {
		return "Not Advertised"
	}
	return s
}
