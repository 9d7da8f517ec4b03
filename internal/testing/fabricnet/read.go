package fabricnet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// BGPPeer is one session of `show bgp summary json` (FRR 8.4's
// ipv4Unicast.peers).
type BGPPeer struct {
	// Neighbor is the peer as configured: an interface for an unnumbered
	// session ("swp31"; for an ONYX switch the port, "1/31"), else an
	// address.
	Neighbor string
	// Hostname is the peer's hostname (FRR's hostname capability), "" when
	// the peer did not send one.
	Hostname string
	// RemoteAS is the peer's AS number (0 until known).
	RemoteAS uint32
	// State is FRR's session state: Idle, Connect, Active, OpenSent,
	// OpenConfirm or Established.
	State string
	// PfxRcd is the number of prefixes received (accepted), PfxSnt sent.
	PfxRcd, PfxSnt int
	// Uptime is FRR's peerUptime text ("00:00:12"; "never").
	Uptime string
	// MsgRcvd and MsgSent are the BGP messages received and sent;
	// UptimeMsec is peerUptimeMsec, the uptime in milliseconds.
	MsgRcvd, MsgSent int
	UptimeMsec       int64
}

// BGPSummary is a switch's IPv4 unicast BGP summary.
type BGPSummary struct {
	// RouterID and AS are the local router-id and AS number.
	RouterID string
	AS       uint32
	// Peers sorted by Neighbor.
	Peers []BGPPeer
}

// Established reports whether every peer is Established (and there is one).
func (s BGPSummary) Established() bool {
	for _, p := range s.Peers {
		if p.State != "Established" {
			return false
		}
	}
	return len(s.Peers) > 0
}

// String prints the summary as a table, one peer a line.
func (s BGPSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "BGP router identifier %s, local AS number %d\n", s.RouterID, s.AS)
	fmt.Fprintf(&b, "%-12s %-10s %-8s %-12s %-9s %6s %6s\n", "Neighbor", "Hostname", "AS", "State", "Up/Down", "PfxRcd", "PfxSnt")
	for _, p := range s.Peers {
		fmt.Fprintf(&b, "%-12s %-10s %-8d %-12s %-9s %6d %6d\n", p.Neighbor, p.Hostname, p.RemoteAS, p.State, p.Uptime, p.PfxRcd, p.PfxSnt)
	}
	return b.String()
}

// vtysh runs one vtysh command against switch sw's daemons.
func (f *Fabric) vtysh(sw, command string) ([]byte, error) {
	n := f.node(sw)
	// Bounded: a daemon that accepts on its vty socket but does not
	// answer (one starting, or a machine stalled in namespace teardown)
	// must not hold a simulator's request, and with it the check, for ever.
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.ns, Vtysh, "--vty_socket", n.dir, "-c", command)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("fabricnet: %s: vtysh -c %q: %v: %s", sw, command, err, out)
	}
	return out, nil
}

// BGPSummary reads switch sw's `show bgp summary json` (an error when bgpd
// is not running).
func (f *Fabric) BGPSummary(sw string) (BGPSummary, error) {
	out, err := f.vtysh(sw, "show bgp summary json")
	if err != nil {
		return BGPSummary{}, err
	}
	s, err := ParseBGPSummary(out)
	if err != nil {
		return s, fmt.Errorf("fabricnet: %s: %v", sw, err)
	}
	n := f.node(sw)
	for i := range s.Peers {
		s.Peers[i].Neighbor = PortName(n.sw.OS, s.Peers[i].Neighbor)
	}
	return s, nil
}

// ParseBGPSummary reads FRR 8.4's `show bgp summary json`.
func ParseBGPSummary(b []byte) (BGPSummary, error) {
	var doc struct {
		IPv4 *struct {
			RouterID string `json:"routerId"`
			AS       uint32 `json:"as"`
			Peers    map[string]struct {
				Hostname string `json:"hostname"`
				RemoteAS uint32 `json:"remoteAs"`
				State    string `json:"state"`
				PfxRcd   int    `json:"pfxRcd"`
				PfxSnt   int    `json:"pfxSnt"`
				Uptime   string `json:"peerUptime"`
				MsgRcvd  int    `json:"msgRcvd"`
				MsgSent  int    `json:"msgSent"`
				Msec     int64  `json:"peerUptimeMsec"`
			} `json:"peers"`
		} `json:"ipv4Unicast"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return BGPSummary{}, fmt.Errorf("show bgp summary json: %v: %.200s", err, b)
	}
	var s BGPSummary
	if doc.IPv4 == nil {
		return s, nil
	}
	s.RouterID, s.AS = doc.IPv4.RouterID, doc.IPv4.AS
	for name, p := range doc.IPv4.Peers {
		s.Peers = append(s.Peers, BGPPeer{Neighbor: name, Hostname: p.Hostname, RemoteAS: p.RemoteAS,
			State: p.State, PfxRcd: p.PfxRcd, PfxSnt: p.PfxSnt, Uptime: p.Uptime, MsgRcvd: p.MsgRcvd, MsgSent: p.MsgSent, UptimeMsec: p.Msec})
	}
	sort.Slice(s.Peers, func(i, j int) bool { return s.Peers[i].Neighbor < s.Peers[j].Neighbor })
	return s, nil
}

// NextHop is one next hop of a kernel route.
type NextHop struct {
	// Via is the gateway (an IPv6 link-local address for an unnumbered BGP
	// route, RFC 5549); invalid for a directly connected route.
	Via netip.Addr
	// Dev is the outgoing port, as the switch names it.
	Dev string
}

// Route is one IPv4 kernel route of a switch.
type Route struct {
	Dst netip.Prefix
	// Protocol is the kernel's: "bgp", "static", "kernel", …
	Protocol string
	// NextHops has one entry per ECMP path.
	NextHops []NextHop
}

// Routes reads switch sw's IPv4 kernel routes (`ip -j -4 route show`),
// sorted by destination.
func (f *Fabric) Routes(sw string) ([]Route, error) {
	n := f.node(sw)
	out, err := exec.Command("ip", "-n", n.ns, "-j", "-4", "route", "show").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("fabricnet: %s: ip route: %v: %s", sw, err, out)
	}
	routes, err := ParseRoutes(out)
	if err != nil {
		return nil, fmt.Errorf("fabricnet: %s: %v", sw, err)
	}
	for i := range routes {
		for j := range routes[i].NextHops {
			routes[i].NextHops[j].Dev = PortName(n.sw.OS, routes[i].NextHops[j].Dev)
		}
	}
	return routes, nil
}

// Route returns sw's route to exactly dst (ok false when there is none).
func (f *Fabric) Route(sw string, dst netip.Prefix) (Route, bool, error) {
	routes, err := f.Routes(sw)
	if err != nil {
		return Route{}, false, err
	}
	for _, r := range routes {
		if r.Dst == dst {
			return r, true, nil
		}
	}
	return Route{}, false, nil
}

// ParseRoutes reads iproute2's `ip -j route show`: a route has either
// gateway/via and dev, or "nexthops" (ECMP); "via" is {"family", "host"}
// for a next hop of another family (RFC 5549), "default" is 0.0.0.0/0,
// and a host route has no "/".
func ParseRoutes(b []byte) ([]Route, error) {
	type hop struct {
		Gateway string `json:"gateway"`
		Via     *struct {
			Host string `json:"host"`
		} `json:"via"`
		Dev string `json:"dev"`
	}
	var raw []struct {
		hop
		Dst      string `json:"dst"`
		Protocol string `json:"protocol"`
		NextHops []hop  `json:"nexthops"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("ip -j route: %v: %.200s", err, b)
	}
	conv := func(h hop) NextHop {
		nh := NextHop{Dev: h.Dev}
		gw := h.Gateway
		if h.Via != nil {
			gw = h.Via.Host
		}
		nh.Via, _ = netip.ParseAddr(gw)
		return nh
	}
	var out []Route
	for _, r := range raw {
		dst := r.Dst
		if dst == "default" {
			dst = "0.0.0.0/0"
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		p, err := netip.ParsePrefix(dst)
		if err != nil {
			continue // multicast, unreachable … forms
		}
		rt := Route{Dst: p, Protocol: r.Protocol}
		if len(r.NextHops) > 0 {
			for _, h := range r.NextHops {
				rt.NextHops = append(rt.NextHops, conv(h))
			}
		} else {
			rt.NextHops = []NextHop{conv(r.hop)}
		}
		out = append(out, rt)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dst.Addr() != out[j].Dst.Addr() {
			return out[i].Dst.Addr().Less(out[j].Dst.Addr())
		}
		return out[i].Dst.Bits() < out[j].Dst.Bits()
	})
	return out, nil
}

// LinkState is a port's kernel state.
type LinkState struct {
	// MTU in bytes.
	MTU int
	// Up is the operational state (carrier).
	Up bool
	// AdminUp is the administrative state: the kernel's UP flag, which
	// `ip link set dev … down` (or NVUE's `link state down`) clears. A port
	// administratively down is not Up; its far end loses its carrier.
	AdminUp bool
	// Addresses are the IPv4 addresses.
	Addresses []netip.Prefix
}

// Link reads the kernel state of switch sw's port (as the switch names it).
func (f *Fabric) Link(sw, port string) (LinkState, error) {
	n := f.node(sw)
	name := IfName(n.sw.OS, port)
	out, err := exec.Command("ip", "-n", n.ns, "-j", "addr", "show", "dev", name).CombinedOutput()
	if err != nil {
		return LinkState{}, fmt.Errorf("fabricnet: %s: ip addr show %s: %v: %s", sw, name, err, out)
	}
	ls, err := parseLinks(out)
	l, ok := ls[name]
	if err != nil || len(ls) != 1 || !ok {
		return LinkState{}, fmt.Errorf("fabricnet: %s: ip -j addr show %s: %v: %s", sw, name, err, out)
	}
	return l, nil
}

// links reads the kernel state of every interface of switch sw's
// namespace with one `ip -j addr show`, by Linux interface name: what Link
// reads of one port, for the operational views that read every cabled port.
func (f *Fabric) links(sw string) (map[string]LinkState, error) {
	n := f.node(sw)
	out, err := exec.Command("ip", "-n", n.ns, "-j", "addr", "show").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("fabricnet: %s: ip addr show: %v: %s", sw, err, out)
	}
	ls, err := parseLinks(out)
	if err != nil {
		return nil, fmt.Errorf("fabricnet: %s: ip -j addr show: %v: %s", sw, err, out)
	}
	return ls, nil
}

// parseLinks reads `ip -j addr show`: each interface's MTU, carrier
// (operstate UP), administrative state (flag UP) and IPv4 addresses, by
// name.
func parseLinks(out []byte) (map[string]LinkState, error) {
	var raw []struct {
		Name      string   `json:"ifname"`
		MTU       int      `json:"mtu"`
		OperState string   `json:"operstate"`
		Flags     []string `json:"flags"`
		AddrInfo  []struct {
			Family    string `json:"family"`
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, err
	}
	m := map[string]LinkState{}
	for _, r := range raw {
		ls := LinkState{MTU: r.MTU, Up: r.OperState == "UP", AdminUp: slices.Contains(r.Flags, "UP")}
		for _, a := range r.AddrInfo {
			if a.Family == "inet" {
				if p, err := netip.ParsePrefix(a.Local + "/" + strconv.Itoa(a.PrefixLen)); err == nil {
					ls.Addresses = append(ls.Addresses, p)
				}
			}
		}
		m[r.Name] = ls
	}
	return m, nil
}

// RIBRoute is one route entry of FRR's RIB (zebra), as `show ip route json`
// gives it: a prefix may have several (one per protocol that offers it),
// of which one is selected.
type RIBRoute struct {
	Prefix netip.Prefix
	// Protocol is FRR's name: "bgp", "static", "connected", "kernel", …
	Protocol string
	// Selected is zebra's choice among the prefix's entries; Installed
	// says it is in the kernel's FIB.
	Selected, Installed bool
	// Distance and Metric are the administrative distance and metric;
	// Table the kernel table (254 main); NHGId the next hop group id.
	Distance, Metric, Table, NHGId int
	// Uptime is FRR's text ("00:01:54").
	Uptime   string
	NextHops []RIBNextHop
}

// RIBNextHop is one next hop of a RIB entry.
type RIBNextHop struct {
	// IP is the gateway (an IPv6 link-local address for an unnumbered BGP
	// route, RFC 5549); invalid for a directly connected route.
	IP netip.Addr
	// Interface is the outgoing port, as the switch names it.
	Interface string
	// Active says zebra resolved it; FIB that it is installed.
	Active, FIB bool
	Weight      int
	// Connected marks a directly connected next hop.
	Connected bool
}

// RIB reads switch sw's IPv4 RIB (`show ip route json` from zebra; an
// error when zebra does not answer), sorted by prefix.
func (f *Fabric) RIB(sw string) ([]RIBRoute, error) {
	out, err := f.vtysh(sw, "show ip route json")
	if err != nil {
		return nil, err
	}
	rs, err := ParseRIB(out)
	if err != nil {
		return nil, fmt.Errorf("fabricnet: %s: %v", sw, err)
	}
	n := f.node(sw)
	for i := range rs {
		for j := range rs[i].NextHops {
			if h := &rs[i].NextHops[j]; h.Interface != "" {
				h.Interface = PortName(n.sw.OS, h.Interface)
			}
		}
	}
	return rs, nil
}

// ParseRIB reads FRR 8.4's `show ip route json`: an object keyed by
// prefix, each an array of route entries with "protocol", "selected" and
// "installed" (present when true), "distance", "metric", "table",
// "nexthopGroupId", "uptime" and "nexthops" (each "ip", "interfaceName",
// "active", "fib", "weight", "directlyConnected").
func ParseRIB(b []byte) ([]RIBRoute, error) {
	var raw map[string][]struct {
		Protocol  string `json:"protocol"`
		Selected  bool   `json:"selected"`
		Installed bool   `json:"installed"`
		Distance  int    `json:"distance"`
		Metric    int    `json:"metric"`
		Table     int    `json:"table"`
		NHGId     int    `json:"nexthopGroupId"`
		Uptime    string `json:"uptime"`
		NextHops  []struct {
			IP        string `json:"ip"`
			Interface string `json:"interfaceName"`
			Active    bool   `json:"active"`
			FIB       bool   `json:"fib"`
			Weight    int    `json:"weight"`
			Connected bool   `json:"directlyConnected"`
		} `json:"nexthops"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("show ip route json: %v: %.200s", err, b)
	}
	var out []RIBRoute
	for k, entries := range raw {
		p, err := netip.ParsePrefix(k)
		if err != nil {
			continue
		}
		for _, e := range entries {
			r := RIBRoute{Prefix: p, Protocol: e.Protocol, Selected: e.Selected, Installed: e.Installed, Distance: e.Distance,
				Metric: e.Metric, Table: e.Table, NHGId: e.NHGId, Uptime: e.Uptime}
			for _, h := range e.NextHops {
				nh := RIBNextHop{Interface: h.Interface, Active: h.Active, FIB: h.FIB, Weight: h.Weight, Connected: h.Connected}
				nh.IP, _ = netip.ParseAddr(h.IP)
				r.NextHops = append(r.NextHops, nh)
			}
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Prefix, out[j].Prefix
		if a.Addr() != b.Addr() {
			return a.Addr().Less(b.Addr())
		}
		return a.Bits() < b.Bits()
	})
	return out, nil
}

// BFDPeer is one session of FRR 8.4's `show bfd peers json`.
type BFDPeer struct {
	// Peer is the peer's address (an IPv6 link-local one for a session
	// on an unnumbered BGP link), Interface the local port it runs on
	// (as the switch OS names it: "swp63", "1/31"; "" for a multihop one).
	Peer, Interface string
	// Status is bfdd's: "up", "down", "init" or "shutdown".
	Status string
	// DetectMultiplier and ReceiveInterval, TransmitInterval (ms) are the
	// local timers.
	DetectMultiplier, ReceiveInterval, TransmitInterval int
}

// BFDPeers reads switch sw's `show bfd peers json` (an error when bfdd
// is not running), sorted by interface, then peer.
func (f *Fabric) BFDPeers(sw string) ([]BFDPeer, error) {
	out, err := f.vtysh(sw, "show bfd peers json")
	if err != nil {
		return nil, err
	}
	ps, err := ParseBFDPeers(out)
	if err != nil {
		return nil, fmt.Errorf("fabricnet: %s: %v", sw, err)
	}
	n := f.node(sw)
	for i := range ps {
		ps[i].Interface = PortName(n.sw.OS, ps[i].Interface)
	}
	return ps, nil
}

// ParseBFDPeers reads FRR 8.4's `show bfd peers json`: a list of sessions
// with "peer", "interface", "status", "detect-multiplier",
// "receive-interval" and "transmit-interval" (bfdd's bfdd_vty.c).
func ParseBFDPeers(b []byte) ([]BFDPeer, error) {
	var raw []struct {
		Peer      string `json:"peer"`
		Interface string `json:"interface"`
		Status    string `json:"status"`
		Mult      int    `json:"detect-multiplier"`
		Rx        int    `json:"receive-interval"`
		Tx        int    `json:"transmit-interval"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("show bfd peers json: %v: %.200s", err, b)
	}
	out := make([]BFDPeer, len(raw))
	for i, r := range raw {
		out[i] = BFDPeer{Peer: r.Peer, Interface: r.Interface, Status: r.Status, DetectMultiplier: r.Mult, ReceiveInterval: r.Rx, TransmitInterval: r.Tx}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Interface != out[j].Interface {
			return out[i].Interface < out[j].Interface
		}
		return out[i].Peer < out[j].Peer
	})
	return out, nil
}
