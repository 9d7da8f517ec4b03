package cumulus

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// RecordPrefix starts rdggen's record (Record.String) in the description
// of the data VLAN's interface.
const RecordPrefix = "rdggen:"

// RecordMax is the longest record rdggen writes, in bytes: 255, what an
// interface alias holds on Linux (IFALIASZ is 256 with the final NUL,
// include/uapi/linux/if.h); NVUE's `interface <id> description` is that
// alias (docs/nvue.md). A record that would be longer keeps the routes that
// fit; Record.Dropped counts the others.
const RecordMax = 255

// RecordedRoute is one static route rdggen wrote: Prefix via Via, in the
// default VRF.
type RecordedRoute struct {
	Prefix netip.Prefix
	Via    netip.Addr
}

// Record is what rdggen wrote on a Cumulus switch that it may later remove:
// the gateway address of the data VLAN's interface and the static routes
// of the routed container pool (docker.routing: switch). rdggen keeps it in
// the switch's own configuration, as `nv set interface vlan1 description
// <Record.String>`, so that it is saved and reloaded with the rest of the
// configuration and read by every later apply, from any machine. What the
// record does not name is the user's, whatever its shape. The form is
//
//	rdggen:gw=31.31.31.254/24;rt=172.16.41.0/24@31.31.31.41*8
//
// where a route written P@V*N stands for N routes: P, the next N-1
// prefixes of P's length in address order, each via V and the next N-1
// addresses (the guide's subnets, one /24 per host at the host's offset,
// make one run).
type Record struct {
	Gateway netip.Prefix
	Routes  []RecordedRoute
	// Dropped is the number of routes left out to stay within RecordMax
	// (String); ParseRecord sets none.
	Dropped int
}

// IsZero reports whether r records nothing.
func (r Record) IsZero() bool { return !r.Gateway.IsValid() && len(r.Routes) == 0 }

// RecordOf is the record of what intent writes: the address on interface
// SVI (under `ip address`, or `ipv4 address` from 5.15) and the routes of
// the default VRF, routes sorted by prefix.
func RecordOf(intent Tree) Record {
	var r Record
	for _, fam := range []string{"ip", "ipv4"} {
		if addrs, ok := at(intent, "interface", SVI, fam, "address").(Tree); ok {
			for a := range addrs {
				if p, err := netip.ParsePrefix(a); err == nil {
					r.Gateway = p
				}
			}
		}
	}
	static, _ := at(intent, "vrf", "default", "router", "static").(Tree)
	for dst, v := range static {
		p, err := netip.ParsePrefix(dst)
		if err != nil {
			continue
		}
		via, _ := at(Tree{"r": v}, "r", "via").(Tree)
		for hop := range via {
			if a, err := netip.ParseAddr(hop); err == nil {
				r.Routes = append(r.Routes, RecordedRoute{p, a})
			}
		}
	}
	slices.SortFunc(r.Routes, func(a, b RecordedRoute) int {
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		return a.Via.Compare(b.Via)
	})
	return r
}

func at(t Tree, path ...string) any {
	var v any = t
	for _, k := range path {
		m, ok := v.(Tree)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// String is the record's text, at most RecordMax bytes: the routes that do
// not fit are left out and counted in r.Dropped (of the returned text's
// record, not r's).
func (r *Record) String() string {
	head := RecordPrefix
	if r.Gateway.IsValid() {
		head += "gw=" + r.Gateway.String()
	}
	runs := runsOf(r.Routes)
	text := head
	kept := 0
	for i, run := range runs {
		sep := ";rt="
		if i > 0 {
			sep = ","
		}
		next := text + sep + run.text
		if len(next) > RecordMax {
			break
		}
		text = next
		kept += run.n
	}
	r.Dropped = len(r.Routes) - kept
	return text
}

type run struct {
	text string
	n    int
}

// runsOf groups sorted routes into runs of consecutive prefixes of one
// length via consecutive addresses.
func runsOf(routes []RecordedRoute) []run {
	var out []run
	for i := 0; i < len(routes); {
		j := i
		for j+1 < len(routes) && follows(routes[j], routes[j+1]) {
			j++
		}
		text := routes[i].Prefix.String() + "@" + routes[i].Via.String()
		if n := j - i + 1; n > 1 {
			text += "*" + strconv.Itoa(n)
		}
		out = append(out, run{text, j - i + 1})
		i = j + 1
	}
	return out
}

// follows reports whether b is the route after a in a run.
func follows(a, b RecordedRoute) bool {
	next, ok := nextPrefix(a.Prefix)
	return ok && b.Prefix == next && a.Via.Next() == b.Via
}

// nextPrefix is the prefix of p's length right after p.
func nextPrefix(p netip.Prefix) (netip.Prefix, bool) {
	if !p.Addr().Is4() || p.Bits() == 0 {
		return netip.Prefix{}, false
	}
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	step := uint32(1) << (32 - p.Bits())
	if n+step < n {
		return netip.Prefix{}, false
	}
	n += step
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), p.Bits()), true
}

// ParseRecord reads a description written by Record.String; ok is false
// for any other text (a user's description).
func ParseRecord(s string) (r Record, ok bool) {
	rest, isRecord := strings.CutPrefix(s, RecordPrefix)
	if !isRecord {
		return r, false
	}
	for _, field := range strings.Split(rest, ";") {
		if field == "" {
			continue
		}
		key, val, found := strings.Cut(field, "=")
		if !found {
			return Record{}, false
		}
		switch key {
		case "gw":
			p, err := netip.ParsePrefix(val)
			if err != nil {
				return Record{}, false
			}
			r.Gateway = p
		case "rt":
			for _, item := range strings.Split(val, ",") {
				routes, err := parseRun(item)
				if err != nil {
					return Record{}, false
				}
				r.Routes = append(r.Routes, routes...)
			}
		default:
			return Record{}, false
		}
	}
	return r, true
}

func parseRun(s string) ([]RecordedRoute, error) {
	n := 1
	if body, count, found := strings.Cut(s, "*"); found {
		c, err := strconv.Atoi(count)
		if err != nil || c < 1 || c > 4096 {
			return nil, fmt.Errorf("bad count %q", count)
		}
		s, n = body, c
	}
	dst, via, found := strings.Cut(s, "@")
	if !found {
		return nil, fmt.Errorf("no @ in %q", s)
	}
	p, err := netip.ParsePrefix(dst)
	if err != nil {
		return nil, err
	}
	a, err := netip.ParseAddr(via)
	if err != nil {
		return nil, err
	}
	out := []RecordedRoute{{p, a}}
	for len(out) < n {
		last := out[len(out)-1]
		np, ok := nextPrefix(last.Prefix)
		if !ok {
			return nil, fmt.Errorf("run %q runs past the address space", s)
		}
		out = append(out, RecordedRoute{np, last.Via.Next()})
	}
	return out, nil
}
