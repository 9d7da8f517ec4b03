package workerapply

import (
	"net/netip"
	"strings"
)

// The rule check judges a new connection between two workers by the
// iptables rules a host prints with `iptables -S CHAIN`, in the form
// iptables(8) and iptables-extensions(8) document
// (https://ipset.netfilter.org/iptables.man.html,
// https://ipset.netfilter.org/iptables-extensions.man.html): the first rule
// whose matches all hold decides with its target, as the kernel walks a
// chain. Only the matches rdggen's own chains use are understood (-s, -d,
// -i, -o, each optionally negated with "!", and the conntrack/state match
// on the connection state); a rule with any other match cannot be judged,
// and neither can the rest of the chain after it.

// ipRule is one "-A CHAIN …" line of `iptables -S`.
type ipRule struct {
	text     string
	src, dst netip.Prefix // invalid: any address
	srcNot   bool
	dstNot   bool
	in, out  string // "": any interface; a trailing "+" matches a prefix
	inNot    bool
	outNot   bool
	states   string // conntrack --ctstate / state --state list, "" for none
	statesNo bool   // the state list is negated
	target   string // -j TARGET ("" for none: the rule only counts)
	known    bool   // every match is one the check understands
}

// parseRule reads one `iptables -S` rule line.
func parseRule(line string) ipRule {
	r := ipRule{text: strings.TrimSpace(line), known: true}
	f := strings.Fields(r.text)
	if len(f) < 2 || f[0] != "-A" {
		r.known = false
		return r
	}
	not := false
	for i := 2; i < len(f); i++ {
		arg := func() string {
			if i+1 < len(f) {
				i++
				return f[i]
			}
			r.known = false
			return ""
		}
		switch f[i] {
		case "!":
			not = true
			continue
		case "-s", "-d":
			opt := f[i]
			p, ok := parsePrefix(arg())
			r.known = r.known && ok
			if opt == "-s" {
				r.src, r.srcNot = p, not
			} else {
				r.dst, r.dstNot = p, not
			}
		case "-i":
			r.in, r.inNot = arg(), not
		case "-o":
			r.out, r.outNot = arg(), not
		case "-m":
			if m := arg(); m != "conntrack" && m != "state" {
				r.known = false
			}
		case "--ctstate", "--state":
			r.states, r.statesNo = arg(), not
		case "-j":
			r.target = arg()
		default:
			r.known = false
		}
		not = false
	}
	return r
}

// parsePrefix reads an address as iptables -S prints it ("10.0.0.1/32",
// "172.16.0.0/16"; a bare address is a /32).
func parsePrefix(s string) (netip.Prefix, bool) {
	if !strings.Contains(s, "/") {
		s += "/32"
	}
	p, err := netip.ParsePrefix(s)
	return p.Masked(), err == nil && p.Addr().Is4()
}

// newConn is the first packet of a new connection between two workers, as
// a chain sees it: its addresses and, where the chain's hook has them, the
// interfaces it arrives on and leaves by ("" when the hook has none).
type newConn struct {
	src, dst netip.Addr
	in, out  string
}

// matches reports whether r's matches all hold for c.
func (r ipRule) matches(c newConn) bool {
	ok := func(p netip.Prefix, neg bool, a netip.Addr) bool { return !p.IsValid() || p.Contains(a) != neg }
	iface := func(want string, neg bool, have string) bool {
		if want == "" {
			return true
		}
		m := have == want || strings.HasSuffix(want, "+") && strings.HasPrefix(have, strings.TrimSuffix(want, "+"))
		return m != neg
	}
	state := true
	if r.states != "" {
		state = strings.Contains(","+r.states+",", ",NEW,") != r.statesNo
	}
	return ok(r.src, r.srcNot, c.src) && ok(r.dst, r.dstNot, c.dst) && iface(r.in, r.inNot, c.in) && iface(r.out, r.outNot, c.out) && state
}

// decide walks rules (the -A lines of one chain, in order) for c: the
// target of the first rule that matches and has one, and that rule's text;
// target "" when none matches (the packet returns to the calling chain).
// known is false when a rule the check cannot judge comes first; rule is
// then that rule.
func decide(rules []ipRule, c newConn) (target, rule string, known bool) {
	for _, r := range rules {
		if !r.known {
			return "", r.text, false
		}
		if r.target != "" && r.matches(c) {
			return r.target, r.text, true
		}
	}
	return "", "", true
}

// chainRules returns the rules ("-A" lines) of `iptables -S CHAIN`.
func chainRules(out string) []ipRule {
	var rs []ipRule
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "-A ") {
			rs = append(rs, parseRule(l))
		}
	}
	return rs
}
