package onyx

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Parse reads ONYX running-config text (`show running-config`, a saved
// config or a generated .cfg) into normalised statements, in file order:
//   - comment lines (`#`, including the `##` banners and secrets that the
//     switch hides as `# … ********`) and blank lines are skipped;
//   - the prefix-mode wrapper (`[no] cli default prefix-modes enable`) is
//     skipped;
//   - the leading indent is stripped (it is cosmetic, docs/rules.md#running-config-format) and
//     words are single-spaced;
//   - interface ranges (`interface ethernet 1/1-1/32 …`, `1-9`, comma lists)
//     and `vlan 101-116` are expanded into one statement per interface/VLAN;
//   - the settings rdggen owns are recognised and rebuilt with the same
//     constructors the generator uses, so `memory percent 50` and
//     `memory percent 50.00` give the same Statement, as do
//     `dcb priority-flow-control enable` and `… enable force`.
//
// Parse never fails: a line it does not recognise is a KindOther statement,
// which Diff leaves alone.
func Parse(text string) []Statement {
	var out []Statement
	for _, line := range strings.Split(text, "\n") {
		out = append(out, ParseLine(line)...)
	}
	return out
}

// ParseLine parses one running-config line; see Parse. It returns nothing
// for comments, blank lines and the prefix-mode wrapper, and several
// statements for a range.
func ParseLine(line string) []Statement {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || trimmed[0] == '#' {
		return nil
	}
	// Fast path for the bulk of a running-config: a single-spaced global
	// command whose first word no owned setting starts with.
	if head, _, _ := strings.Cut(trimmed, " "); !ownedHeads[head] && singleSpaced(trimmed) {
		return []Statement{other(Iface{}, trimmed)}
	}
	words := strings.Fields(trimmed)
	if isPrefixModeWrapper(words) {
		return nil
	}
	if words[0] == "interface" && len(words) >= 3 && rangeTypes[words[1]] {
		ids, ok := expandIDs(words[2])
		if ok {
			out := make([]Statement, 0, len(ids))
			for _, id := range ids {
				out = append(out, classifyIface(Iface{Type: words[1], ID: id}, words[3:])...)
			}
			return out
		}
	}
	// `no interface vlan 1 ip icmp redirect`: a negated interface setting
	// with the `no` in front, as ONYX prints some of them.
	if len(words) >= 4 && words[0] == "no" && words[1] == "interface" && rangeTypes[words[2]] {
		if ids, ok := expandIDs(words[3]); ok {
			out := make([]Statement, 0, len(ids))
			for _, id := range ids {
				out = append(out, classifyIface(Iface{Type: words[2], ID: id}, append([]string{"no"}, words[4:]...))...)
			}
			return out
		}
	}
	if words[0] == "vlan" && len(words) >= 2 && !strings.ContainsRune(words[1], '/') {
		if ids, ok := expandIDs(words[1]); ok && len(ids) > 1 {
			out := make([]Statement, 0, len(ids))
			for _, id := range ids {
				if n, err := strconv.Atoi(id); err == nil && len(words) == 2 {
					out = append(out, VLANCreate(n))
					continue
				}
				body := strings.Join(append([]string{"vlan", id}, words[2:]...), " ")
				out = append(out, other(Iface{}, body))
			}
			return out
		}
		if n, err := strconv.Atoi(words[1]); err == nil && len(words) == 2 && n > 0 {
			return []Statement{VLANCreate(n)}
		}
	}
	return classifyGlobal(words)
}

// ownedHeads are the first words of every line Parse treats specially.
var ownedHeads = map[string]bool{
	"interface": true, "vlan": true, "no": true, "cli": true, "traffic": true,
	"dcb": true, "lldp": true, "hostname": true, "roce": true, "ip": true,
	"protocol": true, "router": true,
}

func singleSpaced(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\t' || c == '\r' || (c == ' ' && i+1 < len(s) && s[i+1] == ' ') {
			return false
		}
	}
	return true
}

func isPrefixModeWrapper(w []string) bool {
	if len(w) > 0 && w[0] == "no" {
		w = w[1:]
	}
	return len(w) == 4 && w[0] == "cli" && w[1] == "default" && w[2] == "prefix-modes" && w[3] == "enable"
}

// is reports whether words equal want; "*" in want matches any one word.
func is(words []string, want ...string) bool {
	if len(words) != len(want) {
		return false
	}
	for i := range want {
		if want[i] != "*" && words[i] != want[i] {
			return false
		}
	}
	return true
}

// optForce drops one trailing "force".
func optForce(w []string) []string {
	if len(w) > 0 && w[len(w)-1] == "force" {
		return w[:len(w)-1]
	}
	return w
}

func smallInt(s string, max int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n <= max
}

// withBody returns an owned statement read in another form (a `no` form,
// `mode auto`): same ID, the words as the switch printed them.
func withBody(s Statement, words []string) Statement {
	s.Body = strings.Join(words, " ")
	return s
}

func classifyGlobal(w []string) []Statement {
	one := func(s Statement) []Statement { return []Statement{s} }
	body := strings.Join(w, " ")
	switch {
	case is(w, "traffic", "pool", "*", "type", "*") && validPoolType(w[4]):
		return one(PoolType(w[2], w[4]))
	case is(w, "traffic", "pool", "*", "memory", "percent", "*"):
		if f, err := strconv.ParseFloat(w[5], 64); err == nil && f >= 0 && f <= 100 {
			return one(PoolMemory(w[2], f))
		}
	case len(w) >= 6 && is(w[:5], "traffic", "pool", "*", "map", "switch-priority"):
		var out []Statement
		for _, p := range w[5:] {
			sp, ok := smallInt(p, 7)
			if !ok {
				return one(other(Iface{}, body))
			}
			out = append(out, PoolMap(w[2], sp))
		}
		return out
	case is(optForce(w), "dcb", "priority-flow-control", "enable"):
		return one(PFC())
	case is(optForce(w), "no", "dcb", "priority-flow-control", "enable"):
		return one(withBody(PFC(), w))
	case is(w, "dcb", "priority-flow-control", "priority", "*", "enable"):
		if sp, ok := smallInt(w[3], 7); ok {
			return one(PFCPriority(sp))
		}
	case is(w, "no", "dcb", "priority-flow-control", "priority", "*", "enable"):
		if sp, ok := smallInt(w[4], 7); ok {
			return one(withBody(PFCPriority(sp), w))
		}
	case is(w, "protocol", "bgp"):
		return one(ProtocolBGP())
	case len(w) >= 5 && is(w[:2], "router", "bgp") && w[3] == "vrf":
		if asn, err := strconv.Atoi(w[2]); err == nil && asn > 0 {
			if len(w) == 9 && w[4] == "default" && w[5] == "neighbor" && w[7] == "fall-over" && w[8] == "bfd" {
				if a, err := netip.ParseAddr(w[6]); err == nil {
					return one(BGPBFD(asn, a))
				}
			}
			return one(Statement{Kind: KindBGP, Key: body, Body: body})
		}
	case len(w) >= 4 && w[0] == "ip" && w[1] == "bfd":
		if st := parseBFD(w[2:]); st != nil {
			return st
		}
	case is(w, "lldp"):
		return one(LLDP())
	case is(w, "no", "lldp"):
		return one(withBody(LLDP(), w))
	case is(w, "hostname", "*"):
		return one(Hostname(w[1]))
	case is(w, "roce"):
		return one(RoCE("lossless"))
	case is(w, "roce", "*") && validRoCEMode(w[1]):
		return one(RoCE(w[1]))
	case is(w, "no", "roce"):
		return one(withBody(RoCE("lossless"), w))
	case is(w, "ip", "routing") || is(w, "ip", "routing", "vrf", "default"):
		return one(IPRouting())
	case is(w, "no", "ip", "routing") || is(w, "no", "ip", "routing", "vrf", "default"):
		return one(negated(IPRouting()))
	case len(w) >= 4 && w[0] == "ip" && w[1] == "route":
		if r, ok := parseRoute(w[2:]); ok {
			return one(r)
		}
	case len(w) >= 5 && w[0] == "no" && w[1] == "ip" && w[2] == "route":
		if r, ok := parseRoute(w[3:]); ok {
			return one(negated(r))
		}
	}
	return one(other(Iface{}, body))
}

// parseBFD reads the words after `ip bfd` of the default VRF's timers:
// running-config's `vrf default interval min-rx|multiplier|transmit-rate
// <n> force`, one per line, or the command's `[vrf default] interval
// min-rx <ms> multiplier <n> transmit-rate <ms> [force]` (onyx_bfd), both
// as BFDTimers' three statements; nil for any other form.
func parseBFD(w []string) []Statement {
	if len(w) >= 2 && w[0] == "vrf" {
		if w[1] != "default" {
			return nil
		}
		w = w[2:]
	}
	w = optForce(w)
	if len(w) < 3 || w[0] != "interval" || len(w)%2 != 1 {
		return nil
	}
	var out []Statement
	for i := 1; i+1 < len(w); i += 2 {
		n, err := strconv.Atoi(w[i+1])
		if err != nil || n < 0 || (w[i] != "min-rx" && w[i] != "multiplier" && w[i] != "transmit-rate") {
			return nil
		}
		k := "ip bfd vrf default interval " + w[i]
		out = append(out, Statement{Kind: KindBFD, Key: k, Body: k + " " + w[i+1] + " force"})
	}
	return out
}

// parseRoute reads the words after `ip route` of a static route in the
// default VRF: `[vrf default] <prefix> <next hop>`, the prefix written as
// a.b.c.d/m, a.b.c.d /m or a.b.c.d <dotted mask> (the forms NVIDIA's
// manuals of this CLI family show). A route with more arguments (a
// distance, an interface) or in another VRF is not one rdggen writes, and
// stays KindOther.
func parseRoute(w []string) (Statement, bool) {
	if len(w) >= 2 && w[0] == "vrf" {
		if w[1] != "default" {
			return Statement{}, false
		}
		w = w[2:]
	}
	var dst netip.Prefix
	var err error
	switch {
	case len(w) == 2:
		dst, err = netip.ParsePrefix(w[0])
	case len(w) == 3 && strings.HasPrefix(w[1], "/"):
		dst, err = netip.ParsePrefix(w[0] + w[1])
	case len(w) == 3:
		dst, err = maskPrefix(w[0], w[1])
	default:
		return Statement{}, false
	}
	via, err2 := netip.ParseAddr(w[len(w)-1])
	if err != nil || err2 != nil || !dst.Addr().Is4() || !via.Is4() || dst.Masked() != dst {
		return Statement{}, false
	}
	return Route(dst, via), true
}

// maskPrefix reads an address with a dotted network mask (255.255.255.0)
// as a prefix.
func maskPrefix(addr, mask string) (netip.Prefix, error) {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Prefix{}, err
	}
	m, err := netip.ParseAddr(mask)
	if err != nil || !m.Is4() {
		return netip.Prefix{}, fmt.Errorf("bad mask %q", mask)
	}
	b := m.As4()
	ones, _ := net.IPv4Mask(b[0], b[1], b[2], b[3]).Size()
	if ones == 0 && b != [4]byte{} {
		return netip.Prefix{}, fmt.Errorf("bad mask %q", mask)
	}
	return a.Prefix(ones)
}

// parseAddress reads the words after `ip address`: a.b.c.d/m or
// a.b.c.d /m (as onyx_l3_interface sends and mgmt0 prints), with
// `primary` or not.
func parseAddress(w []string) (netip.Prefix, bool) {
	if n := len(w); n > 0 && w[n-1] == "primary" {
		w = w[:n-1]
	}
	s := strings.Join(w, "")
	if len(w) == 0 || len(w) > 2 {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(s)
	return p, err == nil && p.Addr().Is4()
}

func classifyIface(i Iface, w []string) []Statement {
	one := func(s Statement) []Statement { return []Statement{s} }
	if i.Type == "loopback" || i.Type == "ethernet" { // a fabric's loopback and routed uplinks (fabric.go)
		switch {
		case len(w) == 0 && i.Type == "loopback":
			return one(vlanInterface(i))
		case len(w) >= 3 && w[0] == "ip" && w[1] == "address" && w[len(w)-1] == "primary":
			if p, ok := parseAddress(w[2:]); ok {
				return one(vlanAddress(i, p))
			}
		case i.Type == "ethernet" && is(optForce(w), "no", "switchport"):
			return one(RoutedPort(i))
		case i.Type == "ethernet" && is(w, "switchport", "access", "vlan", "*"):
			if n, err := strconv.Atoi(w[3]); err == nil && n > 0 {
				return one(AccessVLAN(i, n))
			}
		case i.Type == "ethernet" && is(optForce(w), "module-type", "*") && strings.HasPrefix(w[1], "qsfp-split-"):
			if mode, err := strconv.Atoi(strings.TrimPrefix(w[1], "qsfp-split-")); err == nil {
				if n, ok := ethernetNumber(i); ok {
					return one(ModuleType(n, mode))
				}
			}
		case i.Type == "ethernet" && is(optForce(w), "module-type", "*"):
			// `module-type qsfp`: the port whole again; same setting.
			if n, ok := ethernetNumber(i); ok {
				return one(withBody(ModuleType(n, 0), w))
			}
		case i.Type == "ethernet" && len(w) >= 2 && w[0] == "description":
			return one(Description(i, strings.Trim(strings.Join(w[1:], " "), `"`)))
		}
	}
	if i.Type == "vlan" {
		switch {
		case len(w) == 0:
			return one(vlanInterface(i))
		case is(w, "no"):
			return one(negated(vlanInterface(i)))
		case len(w) >= 3 && w[0] == "ip" && w[1] == "address" && w[len(w)-1] == "primary":
			if p, ok := parseAddress(w[2:]); ok {
				return one(vlanAddress(i, p))
			}
		case is(w, "no", "ip", "address"):
			return one(negated(vlanAddress(i, netip.Prefix{})))
		case is(w, "ip", "icmp", "redirect"):
			return one(icmpRedirect(i, true))
		case is(w, "no", "ip", "icmp", "redirect"):
			return one(icmpRedirect(i, false))
		case is(w, "mtu", "*"):
			if n, err := strconv.Atoi(w[1]); err == nil && n > 0 {
				return one(vlanMTU(i, n))
			}
		case len(w) >= 2 && w[0] == "description":
			return one(vlanDescription(i, strings.Join(w[1:], " ")))
		case is(w, "no", "description"):
			return one(negated(vlanDescription(i, "")))
		}
	}
	switch {
	case is(w, "qos", "trust", "*"):
		if m, ok := trustMode(w[2]); ok {
			return one(Trust(i, m))
		}
	case is(w, "qos", "rewrite", "dscp"):
		s := NoRewriteDSCP(i)
		s.Body = "qos rewrite dscp"
		return one(s)
	case is(w, "no", "qos", "rewrite", "dscp"):
		return one(NoRewriteDSCP(i))
	case is(w, "traffic-class", "*", "congestion-control", "*", "*", "*", "*", "*"):
		tc, ok := smallInt(w[1], 7)
		if !ok || !validCongestionMode(w[3]) {
			break
		}
		for _, unit := range []string{"absolute", "relative"} {
			if w[4] == "minimum-"+unit && w[6] == "maximum-"+unit {
				lo, err1 := strconv.Atoi(w[5])
				hi, err2 := strconv.Atoi(w[7])
				if err1 == nil && err2 == nil {
					return one(congestion(i, tc, w[3], unit, lo, hi))
				}
			}
		}
	case is(w, "no", "traffic-class", "*", "congestion-control"):
		if tc, ok := smallInt(w[2], 7); ok {
			return one(withBody(ECN(i, tc, 0, 0), w))
		}
	case is(w, "traffic-class", "*", "dcb", "ets", "strict"):
		if tc, ok := smallInt(w[1], 7); ok {
			return one(ETSStrict(i, tc))
		}
	case is(w, "traffic-class", "*", "dcb", "ets", "wrr", "*"):
		tc, ok := smallInt(w[1], 7)
		if wt, err := strconv.Atoi(w[5]); ok && err == nil {
			return one(ets(i, tc, "wrr "+strconv.Itoa(wt)))
		}
	case is(optForce(w), "mtu", "*"):
		if n, err := strconv.Atoi(w[1]); err == nil && n > 0 {
			return one(MTU(i, n))
		}
	case is(optForce(w), "dcb", "priority-flow-control", "mode", "on"):
		return one(PFCPort(i))
	case len(w) >= 4 && is(w[:4], "dcb", "priority-flow-control", "mode", "*"):
		// e.g. `mode auto force`: same setting, another value.
		return one(withBody(PFCPort(i), w))
	case is(optForce(w), "no", "dcb", "priority-flow-control", "mode"):
		return one(withBody(PFCPort(i), w))
	}
	return one(other(i, strings.Join(w, " ")))
}

// ethernetNumber is N of ethernet port 1/N (not a lane).
func ethernetNumber(i Iface) (int, bool) {
	v, ok := i.nums()
	if !ok || v.len != 2 || v.n[0] != 1 {
		return 0, false
	}
	return v.n[1], true
}

func validPoolType(t string) bool { return t == "lossless" || t == "lossy" || t == "lossy-mc" }

func validRoCEMode(m string) bool { return m == "lossless" || m == "semi-lossless" || m == "lossy" }

func validCongestionMode(m string) bool { return m == "ecn" || m == "red" || m == "both" }

// trustMode normalises a trust mode to the switch's spelling (L2, L3, both).
func trustMode(m string) (string, bool) {
	switch strings.ToLower(m) {
	case "l2":
		return "L2", true
	case "l3":
		return "L3", true
	case "both":
		return "both", true
	}
	return "", false
}
