package onyxsim

// The L3 part of the simulated switch: `ip routing vrf default`, VLAN IP
// interfaces (`interface vlan N`, its primary and secondary addresses,
// `ip icmp redirect`, `mtu`, `description`) and static routes of the
// default VRF, held and printed the way published ONYX running-configs
// show them (HPE HPCM's 3.9.3210 config, CANU's ONYX templates;
// docs/research/onyx-l3.md). What those do not show is a guess, marked
// [INF]: the banner of static routes (here "L3 configuration", after the
// interfaces), whether the switch prints `ip route` with `vrf default`
// when it was typed without (here it does), that a VLAN interface's
// description prints as a flat line, unquoted, as a port's does, and the
// error texts.

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// Ranks of the L3 lines within their section, in the order of CANU's
// templates: routing, interfaces, addresses, ICMP redirects, MTUs, routes.
const (
	rankRouting = iota + 1
	rankVLANIf
	rankAddr
	rankRedirect
	rankVLANMTU
	rankDescription
	rankRoute
)

// maxAddrs is the number of IPv4 addresses an IP interface holds (NVIDIA
// Onyx manual, "IP Routing Overview": up to 16).
const maxAddrs = 16

// vlanExists reports whether VLAN id exists: VLAN 1 always does (ONYX's
// default VLAN), others once created with `vlan N`.
func (c *config) vlanExists(id string) bool { return id == "1" || c.slots["vlan|"+id] != nil }

// ipCommand handles `[no] ip routing …` and `[no] ip route [vrf default] …`;
// handled is false for the other `ip` commands (routes in other VRFs stay
// unmodelled lines).
func (c *config) ipCommand(w []string, neg bool) (o outcome, handled bool) {
	if len(w) < 2 {
		return fail("Incomplete command"), true
	}
	switch w[1] {
	case "bfd":
		return c.bfdCommand(w[2:], neg) // split.go
	case "routing":
		vrf := "default"
		switch {
		case len(w) == 2:
		case len(w) == 4 && w[2] == "vrf":
			vrf = w[3]
		default:
			return unrecognized(w[len(w)-1]), true
		}
		if vrf != "default" {
			return fail("VRF %s does not exist", vrf), true
		}
		if neg {
			return ok(func() { c.del("iprouting") }), true
		}
		return ok(func() {
			c.set("iprouting", &entry{sec: secL3, rank: rankRouting, body: "ip routing vrf default"})
		}), true
	case "route":
		rest := w[2:]
		if len(rest) >= 2 && rest[0] == "vrf" {
			if rest[1] != "default" {
				return outcome{}, false
			}
			rest = rest[2:]
		}
		dst, via, msg := parseRoute(rest)
		if msg != "" {
			return fail("%s", msg), true
		}
		slot := "route|" + dst.String() + "|" + via.String()
		if neg {
			if c.slots[slot] == nil {
				return fail("Static route %s %s does not exist", dst, via), true
			}
			return ok(func() { c.del(slot) }), true
		}
		a := dst.Addr().As4()
		order := uint64(a[0])<<40 | uint64(a[1])<<32 | uint64(a[2])<<24 | uint64(a[3])<<16 | uint64(dst.Bits())<<8
		return ok(func() {
			c.set(slot, &entry{sec: secL3, rank: rankRoute, order: order,
				body: "ip route vrf default " + dst.String() + " " + via.String()})
		}), true
	}
	return outcome{}, false
}

// parseRoute reads `<prefix> <next hop>` with the prefix as a.b.c.d/m,
// a.b.c.d /m or a.b.c.d <mask>; msg says what is wrong.
func parseRoute(w []string) (dst netip.Prefix, via netip.Addr, msg string) {
	var err error
	switch {
	case len(w) == 2:
		dst, err = netip.ParsePrefix(w[0])
	case len(w) == 3 && strings.HasPrefix(w[1], "/"):
		dst, err = netip.ParsePrefix(w[0] + w[1])
	case len(w) == 3:
		m := net.ParseIP(w[1]).To4()
		ones, bits := net.IPMask(m).Size()
		if m == nil || bits == 0 {
			return dst, via, fmt.Sprintf("Invalid network mask %s", w[1])
		}
		var a netip.Addr
		if a, err = netip.ParseAddr(w[0]); err == nil {
			dst = netip.PrefixFrom(a, ones)
		}
	default:
		return dst, via, "Incomplete command"
	}
	if err != nil || !dst.Addr().Is4() {
		return dst, via, fmt.Sprintf("Invalid prefix %s", w[0])
	}
	if dst.Masked() != dst {
		return dst, via, fmt.Sprintf("Invalid prefix %s: host bits are set (the network is %s)", dst, dst.Masked())
	}
	via, err = netip.ParseAddr(w[len(w)-1])
	if err != nil || !via.Is4() || via.IsUnspecified() || via.IsMulticast() || via == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return dst, via, fmt.Sprintf("Invalid next hop %s", w[len(w)-1])
	}
	return dst, via, ""
}

// vlanIfaceCommand is `[no] interface vlan <id> [<setting>]`.
func (c *config) vlanIfaceCommand(id string, w []string, neg bool, raw string, prefixModes bool) outcome {
	n, err := strconv.Atoi(id)
	if err != nil || n < 1 || n > 4094 || strconv.Itoa(n) != id {
		return unrecognized(id)
	}
	base := "vlanif|" + id
	exists := c.slots[base] != nil
	if len(w) == 0 {
		switch {
		case neg:
			if !exists {
				return fail("Interface vlan %s does not exist", id)
			}
			return ok(func() {
				for k := range c.slots {
					if k == base || strings.HasPrefix(k, base+"|") {
						delete(c.slots, k)
					}
				}
			})
		case !c.vlanExists(id):
			return fail("VLAN %s does not exist", id)
		}
		create := func() {
			if c.slots[base] == nil {
				c.set(base, &entry{sec: secL3, rank: rankVLANIf, prefix: "interface vlan", id: id})
			}
		}
		if prefixModes {
			return outcome{apply: create, enter: "interface vlan " + id}
		}
		return ok(create)
	}
	if !exists {
		return fail("Interface vlan %s does not exist", id)
	}
	if w[0] == "no" {
		if neg {
			return unrecognized("no")
		}
		neg, w = true, w[1:]
	}
	put := func(slot string, rank int, body string, noFirst bool) func() {
		return func() {
			c.set(base+"|"+slot, &entry{sec: secL3, rank: rank, prefix: "interface vlan", id: id, body: body, noFirst: noFirst})
		}
	}
	drop := func(slot string) func() { return func() { c.del(base + "|" + slot) } }
	switch {
	case is(w, "ip", "address") && neg:
		return ok(func() {
			for k := range c.slots {
				if strings.HasPrefix(k, base+"|addr") {
					delete(c.slots, k)
				}
			}
		})
	case len(w) >= 3 && w[0] == "ip" && w[1] == "address" && !neg:
		rest := w[2:]
		primary := rest[len(rest)-1] == "primary"
		if primary {
			rest = rest[:len(rest)-1]
		}
		if len(rest) == 0 || len(rest) > 2 {
			return unrecognized(w[len(w)-1])
		}
		p, err := netip.ParsePrefix(strings.Join(rest, ""))
		if err != nil || !p.Addr().Is4() || p.Bits() == 0 {
			return fail("Invalid IP address %s", strings.Join(rest, " "))
		}
		if p.Bits() < 31 && (p.Addr() == p.Masked().Addr() || p.Addr() == lastOf(p)) {
			return fail("Invalid IP address %s: the network or broadcast address of %s", p, p.Masked())
		}
		cur := c.slots[base+"|addr"]
		switch {
		case cur == nil:
			return ok(put("addr", rankAddr, "ip address "+p.String()+" primary", false))
		case cur.body == "ip address "+p.String()+" primary":
			return ok(func() {})
		case primary:
			// NVIDIA Onyx manual, "IP Routing Overview": a primary address
			// cannot be modified once assigned.
			return fail("Primary address %s cannot be modified; remove the interface's addresses first (no ip address)", strings.Fields(cur.body)[2])
		}
		if c.countPrefix(base+"|addr") >= maxAddrs {
			return fail("Interface vlan %s already has %d IP addresses", id, maxAddrs)
		}
		return ok(put("addr2|"+p.String(), rankAddr, "ip address "+p.String(), false))
	case is(w, "ip", "icmp", "redirect"):
		if neg {
			return ok(put("redirect", rankRedirect, "ip icmp redirect", true))
		}
		return ok(drop("redirect")) // on is the default: not shown
	case is(w, "mtu", "*") && !neg:
		v, err := strconv.Atoi(w[1])
		if err != nil || v < 1500 || v > 9216 {
			return fail("MTU %s is out of range 1500-9216", w[1])
		}
		if v == 1500 {
			return ok(drop("mtu"))
		}
		return ok(put("mtu", rankVLANMTU, "mtu "+w[1], false))
	case len(w) >= 1 && w[0] == "description":
		if neg {
			return ok(drop("description"))
		}
		if len(w) < 2 {
			return fail("Incomplete command")
		}
		text := strings.TrimSpace(raw[strings.Index(raw, "description")+len("description"):])
		return ok(put("description", rankDescription, "description "+text, false))
	}
	return unrecognized(w[0])
}

func (c *config) countPrefix(prefix string) int {
	n := 0
	for k := range c.slots {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// is reports whether w equals want; "*" matches any one word.
func is(w []string, want ...string) bool {
	if len(w) != len(want) {
		return false
	}
	for i := range want {
		if want[i] != "*" && w[i] != want[i] {
			return false
		}
	}
	return true
}

// lastOf is the broadcast address of p's network.
func lastOf(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= 1<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// StaticRoute is one static route of the default VRF.
type StaticRoute struct {
	// Dst is the destination prefix, e.g. 172.16.42.0/24.
	Dst netip.Prefix
	// Via is the next hop, e.g. 31.31.31.42.
	Via netip.Addr
}

// Routes returns the static routes of the default VRF, by prefix, as the
// running-config holds them now.
func (s *Server) Routes() []StaticRoute {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []StaticRoute
	for k := range s.cfg.slots {
		f := strings.Split(k, "|")
		if len(f) != 3 || f[0] != "route" {
			continue
		}
		out = append(out, StaticRoute{netip.MustParsePrefix(f[1]), netip.MustParseAddr(f[2])})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Dst != out[b].Dst {
			return out[a].Dst.Addr().Less(out[b].Dst.Addr()) || (out[a].Dst.Addr() == out[b].Dst.Addr() && out[a].Dst.Bits() < out[b].Dst.Bits())
		}
		return out[a].Via.Less(out[b].Via)
	})
	return out
}

// VLANAddresses returns the IPv4 addresses of interface vlan n, the primary
// first; nil when the interface does not exist or has none.
func (s *Server) VLANAddresses(n int) []netip.Prefix {
	s.mu.Lock()
	defer s.mu.Unlock()
	base := "vlanif|" + strconv.Itoa(n) + "|addr"
	var out []netip.Prefix
	if e := s.cfg.slots[base]; e != nil {
		out = append(out, netip.MustParsePrefix(strings.Fields(e.body)[2]))
	}
	var sec []netip.Prefix
	for k, e := range s.cfg.slots {
		if strings.HasPrefix(k, base+"2|") {
			sec = append(sec, netip.MustParsePrefix(strings.Fields(e.body)[2]))
		}
	}
	sort.Slice(sec, func(a, b int) bool { return sec[a].Addr().Less(sec[b].Addr()) })
	return append(out, sec...)
}

// L3 is what the switch routes with, for a test that makes a Linux
// namespace route like the simulated switch.
type L3 struct {
	// Routing: `ip routing vrf default` is on.
	Routing bool
	// Addresses are interface vlan DataVLAN's addresses, primary first.
	Addresses []netip.Prefix
	// Redirects: ICMP redirects are on for that interface (ONYX's default).
	Redirects bool
	// MTU is that interface's IP MTU, bytes (1500 unless set).
	MTU int
	// Routes are the static routes of the default VRF.
	Routes []StaticRoute
}

// L3State returns the switch's routing state for interface vlan vlan.
func (s *Server) L3State(vlan int) L3 {
	l := L3{Addresses: s.VLANAddresses(vlan), Routes: s.Routes(), MTU: 1500, Redirects: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	base := "vlanif|" + strconv.Itoa(vlan)
	l.Routing = s.cfg.slots["iprouting"] != nil
	l.Redirects = s.cfg.slots[base+"|redirect"] == nil
	if e := s.cfg.slots[base+"|mtu"]; e != nil {
		l.MTU, _ = strconv.Atoi(strings.TrimPrefix(e.body, "mtu "))
	}
	return l
}
