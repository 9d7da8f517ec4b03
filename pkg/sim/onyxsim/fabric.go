package onyxsim

// The routed-fabric part of the simulated switch: routed ports (`interface
// ethernet 1/N no switchport force`) and their addresses (`interface
// ethernet 1/N ip address A/L primary`), loopbacks (`interface loopback N
// ip address A/L`) and BGP in the default VRF in ONYX's flat form (`router
// bgp ASN vrf default …`: router-id, maximum-paths, bestpath as-path
// multipath-relax, neighbor remote-as, network). The forms are those of the
// mellanox.onyx Ansible collection's onyx_bgp module (its RETURN sample)
// and of the NVIDIA Onyx manual's "interface ethernet … ip address …
// primary"; the loopback form is not shown in any public config and is a
// guess [INF], as are the error texts, the sub-mode's prompt and the place
// of these lines in running-config (the L3 section, after the static
// routes, 3-space indented as onyx_bgp's parser expects). With prefix
// modes, `router bgp ASN vrf default` enters the router's sub-mode (onyx_bgp
// sends `exit` after it); `router bgp ASN [vrf default] no …` removes a
// setting, as onyx_bgp sends it.

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Ranks of the fabric lines in the L3 section, after the static routes.
const (
	rankLoopback = rankRoute + 1 + iota
	rankLoopbackAddr
	rankProtocolBGP
	rankBGP
)

// OnChange registers f to run, in its own goroutine, after every
// configuration command that changed the configuration (from a session or
// Configure). A data plane that follows the configuration (a network
// namespace routing as the switch would) reads RunningConfig there.
func (s *Server) OnChange(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChange = f
}

// changed runs the OnChange callback (s.mu held).
func (s *Server) changed() {
	if f := s.onChange; f != nil {
		go f()
	}
}

// routedPortCommand handles `no switchport force` and `[no] ip address
// A/L [primary]` on an ethernet port; handled is false for other commands.
func (c *config) routedPortCommand(id string, w []string, neg bool) (o outcome, handled bool) {
	slot := "eth|" + id + "|routed"
	switch {
	case w[0] == "switchport" && neg && len(w) == 2 && w[1] == "force":
		return ok(func() {
			c.set(slot, &entry{sec: secIfEth, rank: 5, prefix: "interface ethernet", id: id, body: "no switchport force"})
		}), true
	case w[0] == "switchport" && !neg && len(w) == 1:
		return ok(func() {
			c.del(slot)
			c.del("eth|" + id + "|address")
		}), true
	case w[0] == "ip" && len(w) >= 3 && len(w) <= 4 && w[1] == "address":
		if neg {
			return ok(func() { c.del("eth|" + id + "|address") }), true
		}
		p, err := netip.ParsePrefix(w[2])
		if err != nil || !p.Addr().Is4() || (len(w) == 4 && w[3] != "primary") {
			return fail("Invalid IP address %s", strings.Join(w[2:], " ")), true
		}
		if c.slots[slot] == nil {
			return fail("Interface ethernet %s is a switchport: configure `no switchport force` first", id), true
		}
		return ok(func() {
			c.set("eth|"+id+"|address", &entry{sec: secL3, rank: rankAddr, prefix: "interface ethernet", id: id,
				body: "ip address " + p.String() + " primary"})
		}), true
	}
	return outcome{}, false
}

// loopbackCommand is `[no] interface loopback N [ip address A/L]`.
func (c *config) loopbackCommand(id string, w []string, neg bool) outcome {
	n, err := strconv.Atoi(id)
	if err != nil || n < 0 || n > 31 {
		return fail("Invalid loopback interface %s", id)
	}
	slot := "lo|" + id
	if len(w) == 0 {
		if neg {
			return ok(func() { c.del(slot); c.del(slot + "|address") })
		}
		return ok(func() {
			c.set(slot, &entry{sec: secL3, rank: rankLoopback, order: uint64(n), body: "interface loopback " + id})
		})
	}
	if len(w) < 3 || len(w) > 4 || w[0] != "ip" || w[1] != "address" {
		return unrecognized(w[0])
	}
	if neg {
		return ok(func() { c.del(slot + "|address") })
	}
	p, err := netip.ParsePrefix(w[2])
	if err != nil || !p.Addr().Is4() || (len(w) == 4 && w[3] != "primary") {
		return fail("Invalid IP address %s", strings.Join(w[2:], " "))
	}
	body := "interface loopback " + id + " ip address " + p.String()
	if len(w) == 4 {
		body += " primary" // shown as typed, as the ethernet ports' addresses are
	}
	return ok(func() {
		c.set(slot, &entry{sec: secL3, rank: rankLoopback, order: uint64(n), body: "interface loopback " + id})
		c.set(slot+"|address", &entry{sec: secL3, rank: rankLoopbackAddr, order: uint64(n), body: body})
	})
}

// bgpCommand is `[no] router bgp ASN vrf default [setting]`.
func (c *config) bgpCommand(w []string, neg, prefixModes bool) outcome {
	if len(w) < 3 || w[1] != "bgp" {
		return unrecognized(w[len(w)-1])
	}
	asn, err := strconv.ParseUint(w[2], 10, 32)
	if err != nil || asn == 0 {
		return fail("Invalid AS number %s", w[2])
	}
	rest := w[3:]
	if len(rest) >= 2 && rest[0] == "vrf" {
		if rest[1] != "default" {
			return fail("VRF %s does not exist", rest[1])
		}
		rest = rest[2:]
	}
	if len(rest) >= 2 && rest[0] == "no" {
		// `router bgp 320 vrf default no neighbor …`, as onyx_bgp sends it
		// (and as a `no …` line typed in the router's sub-mode arrives).
		neg, rest = true, rest[1:]
	}
	head := "router bgp " + w[2] + " vrf default"
	if cur := c.slots["bgp|"]; cur != nil && cur.body != head {
		return fail("BGP is already running with AS number %s", strings.Fields(cur.body)[2])
	}
	if len(rest) == 0 {
		if neg {
			return ok(func() {
				for k := range c.slots {
					if strings.HasPrefix(k, "bgp|") {
						c.del(k)
					}
				}
			})
		}
		o := ok(func() { c.set("bgp|", &entry{sec: secL3, rank: rankBGP, body: head}) })
		if prefixModes {
			// onyx_bgp sends `router bgp 320 vrf default` then `exit`: the
			// command enters the router's sub-mode.
			o.enter = head
		}
		return o
	}
	if c.slots["bgp|"] == nil {
		return fail("BGP instance with AS number %s does not exist", w[2])
	}
	var key, body string
	switch {
	case len(rest) >= 2 && rest[0] == "router-id" && (len(rest) == 2 || len(rest) == 3 && rest[2] == "force"):
		if a, err := netip.ParseAddr(rest[1]); err != nil || !a.Is4() {
			return fail("Invalid router-id %s", rest[1])
		}
		key, body = "router-id", "router-id "+rest[1]+" force"
	case len(rest) == 2 && rest[0] == "maximum-paths":
		if n, err := strconv.Atoi(rest[1]); err != nil || n < 1 || n > 64 {
			return fail("Invalid maximum-paths %s", rest[1])
		}
		key, body = "maximum-paths", "maximum-paths "+rest[1]
	case len(rest) >= 3 && rest[0] == "bestpath" && rest[1] == "as-path" && rest[2] == "multipath-relax" && (len(rest) == 3 || len(rest) == 4 && rest[3] == "force"):
		key, body = "multipath-relax", "bestpath as-path multipath-relax force"
	case len(rest) == 4 && rest[0] == "neighbor" && rest[2] == "remote-as":
		if a, err := netip.ParseAddr(rest[1]); err != nil || !a.Is4() {
			return fail("Invalid neighbor address %s", rest[1])
		}
		if n, err := strconv.ParseUint(rest[3], 10, 32); err != nil || n == 0 {
			return fail("Invalid AS number %s", rest[3])
		}
		key, body = "neighbor|"+rest[1], "neighbor "+rest[1]+" remote-as "+rest[3]
	case len(rest) == 4 && rest[0] == "neighbor" && rest[2] == "fall-over" && rest[3] == "bfd":
		if c.slots["bgp|neighbor|"+rest[1]] == nil {
			return fail("Neighbor %s does not exist", rest[1])
		}
		key, body = "neighbor|"+rest[1]+"|bfd", "neighbor "+rest[1]+" fall-over bfd"
	case rest[0] == "network" && (len(rest) == 2 || len(rest) == 3 && strings.HasPrefix(rest[2], "/")):
		p, err := netip.ParsePrefix(strings.Join(rest[1:], ""))
		if err != nil || !p.Addr().Is4() || p.Masked() != p {
			return fail("Invalid network %s", strings.Join(rest[1:], " "))
		}
		key, body = "network|"+p.String(), fmt.Sprintf("network %s /%d", p.Addr(), p.Bits())
	default:
		return unrecognized(rest[0])
	}
	if neg {
		return ok(func() { c.del("bgp|" + key) })
	}
	return ok(func() {
		c.set("bgp|"+key, &entry{sec: secL3, rank: rankBGP, order: 1, body: head + " " + body})
	})
}

// protocolCommand is `protocol bgp` (and its `no`): ONYX enables the BGP
// protocol before any `router bgp` line (CANU's ONYX configs: protocol bgp
// before its features). Like the other fabric lines its place in
// running-config (the L3 section, before the router lines) is a guess
// [INF]. The simulator does not refuse `router bgp` without it.
func (c *config) protocolCommand(w []string, neg bool) outcome {
	if len(w) != 2 || w[1] != "bgp" {
		return unrecognized(w[len(w)-1])
	}
	if neg {
		return ok(func() { c.del("protocol bgp") })
	}
	return ok(func() { c.set("protocol bgp", &entry{sec: secL3, rank: rankProtocolBGP, body: "protocol bgp"}) })
}
