package fabricnet

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/onyx"
)

// Router is what a switch OS programs from its configuration: the FRR
// configuration its routing daemons run, and the kernel state of its
// interfaces (addresses, MTU), keyed by Linux interface name (IfName).
type Router struct {
	// FRR is the frr.conf text zebra, staticd, bfdd and bgpd read.
	FRR string
	// Interfaces are the addresses and MTUs to set, by Linux interface
	// name ("lo", "swp31", "eth1-31"); an interface the configuration does
	// not name keeps the OS default (DefaultMTU).
	Interfaces map[string]Interface
	// DefaultMTU is the MTU of a port the configuration leaves alone, in
	// bytes: 9216 on Cumulus Linux (ifupdown2's default for swp ports),
	// 1500 on ONYX (its default port MTU; `mtu 1500` is not shown in
	// running-config).
	DefaultMTU int
	// Forwarding is IPv4 forwarding: always on Cumulus Linux, `ip routing`
	// on ONYX.
	Forwarding bool
	// Access maps each bridged port (Linux name) to its access VLAN: the
	// port is an untagged member of that VLAN (in the data plane, of the
	// VLAN's bridge vlan<id>). A VLAN's IP interface (SVI) is
	// Interfaces["vlan<id>"].
	// A port mapped to 0 is routed (not bridged). A port absent from Access
	// is routed when DefaultAccess is 0, else in VLAN DefaultAccess: Cumulus
	// bridges only the ports configured so (DefaultAccess 0); ONYX's ports
	// are switchports in VLAN 1 until `no switchport force` makes them
	// routed (DefaultAccess 1).
	Access        map[string]int
	DefaultAccess int
}

// Bridge is NVUE's default VLAN-aware bridge, br_default ("VLAN-aware
// Bridge Mode"), the one whose access ports RenderNVUE reads.
const Bridge = "br_default"

// Interface is the kernel state of one interface.
type Interface struct {
	// Addresses are the IPv4 addresses with their prefix length.
	Addresses []netip.Prefix
	// MTU in bytes; 0 for the OS default.
	MTU int
}

// bgp is the BGP configuration both renderers fill.
type bgp struct {
	asn       string
	routerID  string
	neighbors []bgpNeighbor
	networks  []string
	redist    []string // "connected", "static"
	maxPaths  string
	relax     bool
}

type bgpNeighbor struct {
	peer     string // an interface name (unnumbered) or an address
	unnumbrd bool
	remoteAS string // "external", "internal" or a number
	// bfd: the session follows a BFD session with these timers (detect
	// multiplier, min rx and min tx in ms); nil for none.
	bfd *bfdTimers
}

// bfdTimers are a BFD session's detect multiplier and min rx/tx, in ms.
type bfdTimers struct{ mult, rx, tx int }

// frrConf renders FRR 8.4's configuration: `frr defaults datacenter` (the
// profile Cumulus Linux runs: eBGP timers of 3/9 s, multipath on, no policy
// required for eBGP; FRR's "Defaults" section of bgpd's documentation),
// static routes for staticd, then `router bgp`.
func frrConf(hostname string, b *bgp, routes []string) string {
	var s strings.Builder
	s.WriteString("frr version 8.4\nfrr defaults datacenter\nhostname " + hostname + "\nservice integrated-vtysh-config\n!\n")
	for _, r := range routes {
		s.WriteString("ip route " + r + "\n")
	}
	if len(routes) > 0 {
		s.WriteString("!\n")
	}
	if b == nil || b.asn == "" {
		return s.String()
	}
	s.WriteString("router bgp " + b.asn + "\n")
	if b.routerID != "" {
		s.WriteString(" bgp router-id " + b.routerID + "\n")
	}
	if b.relax {
		s.WriteString(" bgp bestpath as-path multipath-relax\n")
	}
	for _, n := range b.neighbors {
		if n.unnumbrd {
			s.WriteString(" neighbor " + n.peer + " interface remote-as " + n.remoteAS + "\n")
		} else {
			s.WriteString(" neighbor " + n.peer + " remote-as " + n.remoteAS + "\n")
		}
		if t := n.bfd; t != nil {
			// bgpd registers the session with bfdd (FRR's `neighbor PEER
			// bfd (2-255) (50-60000) (50-60000)`: multiplier, rx, tx).
			fmt.Fprintf(&s, " neighbor %s bfd %d %d %d\n", n.peer, t.mult, t.rx, t.tx)
		}
	}
	s.WriteString(" !\n address-family ipv4 unicast\n")
	for _, p := range b.networks {
		s.WriteString("  network " + p + "\n")
	}
	for _, r := range b.redist {
		s.WriteString("  redistribute " + r + "\n")
	}
	if b.maxPaths != "" {
		s.WriteString("  maximum-paths " + b.maxPaths + "\n")
	}
	s.WriteString(" exit-address-family\nexit\n!\n")
	return s.String()
}

// RenderNVUE renders what Cumulus Linux programs from an applied NVUE
// configuration tree (the JSON object `GET /nvue_v1/?rev=applied` returns,
// as nvuesim holds it), for the switch named hostname (system.hostname
// wins when set). The paths are those of NVIDIA's NVUE command reference
// ("Set and Unset Commands": BGP, Interface, Static Routing):
//
//   - router.bgp.autonomous-system, router.bgp.router-id;
//   - router.bgp.enable and vrf.default.router.bgp.enable (off: no BGP at
//     all; state disabled from Cumulus Linux 5.15);
//   - vrf.default.router.bgp.neighbor.<id>.remote-as (external, internal or
//     a number) and .type (unnumbered or numbered; without it an address
//     is numbered, an interface unnumbered); a neighbor with enable off
//     (state disabled) is not rendered;
//   - vrf.default.router.bgp.neighbor.<id>.bfd: enable on, with
//     detect-multiplier, min-rx-interval and min-tx-interval (FRR's
//     defaults 3, 300, 300 when unset) → `neighbor <id> bfd <mult> <rx>
//     <tx>`, run by bfdd;
//   - vrf.default.router.bgp.address-family.ipv4-unicast.enable (off: no
//     networks or redistribution);
//   - vrf.default.router.bgp.address-family.ipv4-unicast.network.<prefix>
//     and .redistribute.{connected,static}.enable (on; from Cumulus Linux
//     5.15 .state, enabled);
//   - vrf.default.router.bgp.path-selection.multipath.aspath-ignore (on),
//     which NVIDIA's BGP page equates with FRR's `bgp bestpath as-path
//     multipath-relax`;
//   - vrf.default.router.static.<prefix>.via.<address|interface|blackhole>;
//   - interface.<id>.ip.address.<prefix> and, from Cumulus Linux 5.15,
//     interface.<id>.ipv4.address.<prefix> (both are read);
//   - interface.<id>.link.mtu;
//   - interface.<swp>.bridge.domain.br_default.access <vid> (the port is an
//     untagged member of that VLAN of the VLAN-aware bridge br_default) and
//     the VLAN's IP interface interface.vlan<vid> (type svi, vlan <vid>)
//     with its ip/ipv4 addresses ("VLAN-aware Bridge Mode", "VLAN Layer 3
//     Addressing").
//
// Other paths are ignored. An error names the path that is malformed.
func RenderNVUE(tree map[string]any, hostname string) (Router, error) {
	r := Router{Interfaces: map[string]Interface{}, DefaultMTU: 9216, Forwarding: true, Access: map[string]int{}}
	if h, ok := at(tree, "system", "hostname").(string); ok && h != "" {
		hostname = h
	}
	ifaces, _ := at(tree, "interface").(map[string]any)
	for _, name := range sortedKeys(ifaces) {
		var ic Interface
		for _, fam := range []string{"ip", "ipv4"} {
			addrs, _ := at(ifaces, name, fam, "address").(map[string]any)
			for _, a := range sortedKeys(addrs) {
				p, err := netip.ParsePrefix(a)
				if err != nil || !p.Addr().Is4() {
					continue // IPv6 addresses and dhcp are not modelled
				}
				ic.Addresses = append(ic.Addresses, p)
			}
		}
		if v := at(ifaces, name, "bridge", "domain", Bridge, "access"); v != nil {
			vid, err := number(v)
			if err != nil || vid < 1 || vid > 4094 {
				return r, fmt.Errorf("interface.%s.bridge.domain.%s.access: %v is not a VLAN", name, Bridge, v)
			}
			r.Access[name] = vid
		}
		if v := at(ifaces, name, "vlan"); v != nil && strings.HasPrefix(name, "vlan") {
			if vid, err := number(v); err != nil || "vlan"+strconv.Itoa(vid) != name {
				return r, fmt.Errorf("interface.%s.vlan: %v is not the VLAN its name says", name, v)
			}
		}
		if v := at(ifaces, name, "link", "mtu"); v != nil {
			n, err := number(v)
			if err != nil {
				return r, fmt.Errorf("interface.%s.link.mtu: %v", name, err)
			}
			ic.MTU = n
		}
		if len(ic.Addresses) > 0 || ic.MTU != 0 {
			r.Interfaces[name] = ic
		}
	}
	var routes []string
	static, _ := at(tree, "vrf", "default", "router", "static").(map[string]any)
	for _, dst := range sortedKeys(static) {
		if _, err := netip.ParsePrefix(dst); err != nil {
			return r, fmt.Errorf("vrf.default.router.static.%s: not a prefix", dst)
		}
		vias, _ := at(static, dst, "via").(map[string]any)
		for _, via := range sortedKeys(vias) {
			routes = append(routes, dst+" "+via+"")
		}
	}
	b := &bgp{}
	if v := at(tree, "router", "bgp", "autonomous-system"); v != nil && !off(at(tree, "router", "bgp")) && !off(at(tree, "vrf", "default", "router", "bgp")) {
		n, err := number(v)
		if err != nil {
			return r, fmt.Errorf("router.bgp.autonomous-system: %v", err)
		}
		b.asn = strconv.Itoa(n)
	}
	if v, ok := at(tree, "router", "bgp", "router-id").(string); ok {
		b.routerID = v
	}
	vb, _ := at(tree, "vrf", "default", "router", "bgp").(map[string]any)
	neigh, _ := at(vb, "neighbor").(map[string]any)
	for _, id := range sortedKeys(neigh) {
		if off(at(neigh, id)) {
			continue // `neighbor <id> enable off`: NVUE renders no neighbor
		}
		n := bgpNeighbor{peer: id}
		_, err := netip.ParseAddr(id)
		n.unnumbrd = err != nil
		switch t, _ := at(neigh, id, "type").(string); t {
		case "unnumbered":
			n.unnumbrd = true
		case "numbered":
			n.unnumbrd = false
		}
		ras := at(neigh, id, "remote-as")
		switch v := ras.(type) {
		case string:
			n.remoteAS = v
		case nil:
			return r, fmt.Errorf("vrf.default.router.bgp.neighbor.%s.remote-as: missing", id)
		default:
			k, err := number(v)
			if err != nil {
				return r, fmt.Errorf("vrf.default.router.bgp.neighbor.%s.remote-as: %v", id, err)
			}
			n.remoteAS = strconv.Itoa(k)
		}
		if bf := at(neigh, id, "bfd"); bf != nil && on(bf) {
			t := &bfdTimers{mult: 3, rx: 300, tx: 300}
			for key, dst := range map[string]*int{"detect-multiplier": &t.mult, "min-rx-interval": &t.rx, "min-tx-interval": &t.tx} {
				if v := at(bf, key); v != nil {
					k, err := number(v)
					if err != nil {
						return r, fmt.Errorf("vrf.default.router.bgp.neighbor.%s.bfd.%s: %v", id, key, err)
					}
					*dst = k
				}
			}
			n.bfd = t
		}
		b.neighbors = append(b.neighbors, n)
	}
	af, _ := at(vb, "address-family", "ipv4-unicast").(map[string]any)
	if off(af) {
		af = nil
	}
	nets, _ := at(af, "network").(map[string]any)
	b.networks = sortedKeys(nets)
	for _, kind := range []string{"connected", "static"} {
		if on(at(af, "redistribute", kind)) {
			b.redist = append(b.redist, kind)
		}
	}
	if v, _ := at(vb, "path-selection", "multipath", "aspath-ignore").(string); v == "on" || v == "enabled" {
		b.relax = true
	}
	r.FRR = frrConf(hostname, b, routes)
	return r, nil
}

// RenderONYX renders what an ONYX switch routes with from its
// running-config (as onyxsim prints it), read with pkg/onyx's Parse:
//
//   - `ip routing [vrf default]` turns IPv4 forwarding on;
//   - `interface ethernet 1/N ip address A/L [primary]` and `interface
//     loopback N ip address A/L` are the interfaces' addresses (ethernet
//     ports under IfName's name, loopbacks on lo);
//   - `interface ethernet 1/N mtu B [force]` the port MTU;
//   - `ip route [vrf default] P/L NH` a static route;
//   - `router bgp ASN [vrf default]` with `router-id X [force]`,
//     `maximum-paths N`, `bestpath as-path multipath-relax [force]`,
//     `neighbor IP remote-as N` and `network A /L` (the mellanox.onyx
//     collection's onyx_bgp forms), and `neighbor IP fall-over bfd`: the
//     session follows BFD, with the timers of `ip bfd vrf default interval
//     min-rx|multiplier|transmit-rate N force` (ONYX's defaults when unset
//     taken as FRR's: 3 × 300 ms).
//
// Other lines are ignored.
func RenderONYX(running, hostname string) (Router, error) {
	r := Router{Interfaces: map[string]Interface{}, DefaultMTU: 1500, Access: map[string]int{}}
	routed := map[string]bool{}
	access := map[string]int{}
	b := &bgp{}
	fallOver := map[string]bool{}
	timers := bfdTimers{mult: 3, rx: 300, tx: 300}
	var routes []string
	addIf := func(name string, f func(*Interface)) {
		ic := r.Interfaces[name]
		f(&ic)
		r.Interfaces[name] = ic
	}
	for _, st := range onyx.Parse(running) {
		w := strings.Fields(st.Body)
		if len(w) == 0 {
			continue
		}
		if !st.Iface.IsZero() {
			name := ""
			switch st.Iface.Type {
			case "ethernet":
				name = IfName(ONYX, st.Iface.ID)
			case "loopback":
				name = "lo"
			case "vlan":
				name = "vlan" + st.Iface.ID
			default:
				continue
			}
			switch {
			case st.Iface.Type == "ethernet" && st.Body == "no switchport force":
				routed[name] = true
			case st.Iface.Type == "ethernet" && len(w) == 4 && w[0] == "switchport" && w[1] == "access" && w[2] == "vlan":
				vid, err := strconv.Atoi(w[3])
				if err != nil {
					return r, fmt.Errorf("%s: %v", st.Command(), err)
				}
				access[name] = vid
			case len(w) >= 3 && w[0] == "ip" && w[1] == "address":
				p, err := netip.ParsePrefix(w[2])
				if err != nil {
					return r, fmt.Errorf("%s: %v", st.Command(), err)
				}
				addIf(name, func(i *Interface) { i.Addresses = append(i.Addresses, p) })
			case len(w) >= 2 && w[0] == "mtu" && name != "lo":
				n, err := strconv.Atoi(w[1])
				if err != nil {
					return r, fmt.Errorf("%s: %v", st.Command(), err)
				}
				addIf(name, func(i *Interface) { i.MTU = n })
			}
			continue
		}
		switch {
		case w[0] == "hostname" && len(w) == 2:
			hostname = w[1]
		case w[0] == "ip" && len(w) >= 2 && w[1] == "routing":
			r.Forwarding = true
		case st.Kind == onyx.KindBFD && len(w) == 8:
			v, err := strconv.Atoi(w[6])
			if err != nil {
				return r, fmt.Errorf("%s: %v", st.Body, err)
			}
			switch w[5] {
			case "min-rx":
				timers.rx = v
			case "multiplier":
				timers.mult = v
			case "transmit-rate":
				timers.tx = v
			}
		case w[0] == "ip" && len(w) >= 4 && w[1] == "route":
			rest := w[2:]
			if rest[0] == "vrf" && len(rest) > 2 {
				rest = rest[2:]
			}
			if len(rest) == 3 && strings.HasPrefix(rest[1], "/") {
				rest = []string{rest[0] + rest[1], rest[2]}
			}
			if len(rest) == 2 {
				routes = append(routes, rest[0]+" "+rest[1])
			}
		case w[0] == "router" && len(w) >= 3 && w[1] == "bgp":
			b.asn = w[2]
			rest := w[3:]
			if len(rest) >= 2 && rest[0] == "vrf" {
				rest = rest[2:]
			}
			switch {
			case len(rest) >= 2 && rest[0] == "router-id":
				b.routerID = rest[1]
			case len(rest) == 2 && rest[0] == "maximum-paths":
				b.maxPaths = rest[1]
			case len(rest) >= 3 && rest[0] == "bestpath" && rest[2] == "multipath-relax":
				b.relax = true
			case len(rest) == 4 && rest[0] == "neighbor" && rest[2] == "remote-as":
				b.neighbors = append(b.neighbors, bgpNeighbor{peer: rest[1], remoteAS: rest[3]})
			case len(rest) == 4 && rest[0] == "neighbor" && rest[2] == "fall-over" && rest[3] == "bfd":
				fallOver[rest[1]] = true
			case len(rest) >= 2 && rest[0] == "network":
				p, err := netip.ParsePrefix(strings.Join(rest[1:], ""))
				if err != nil {
					return r, fmt.Errorf("%s: %v", st.Body, err)
				}
				b.networks = append(b.networks, p.String())
			}
		}
	}
	for i := range b.neighbors {
		if fallOver[b.neighbors[i].peer] {
			t := timers
			b.neighbors[i].bfd = &t
		}
	}
	r.Access = onyxAccess{routed: routed, access: access}.ports()
	r.DefaultAccess = 1
	for name, ic := range r.Interfaces {
		sort.Slice(ic.Addresses, func(i, j int) bool { return ic.Addresses[i].String() < ic.Addresses[j].String() })
		r.Interfaces[name] = ic
	}
	r.FRR = frrConf(hostname, b, routes)
	return r, nil
}

// on reports whether an NVUE object is turned on: `enable: on` (Cumulus
// Linux 5.0–5.14) or `state: enabled` (5.15's renamed form, NVIDIA's "New
// and Changed NVUE Commands" for 5.15).
func on(v any) bool {
	e, _ := at(v, "enable").(string)
	st, _ := at(v, "state").(string)
	return e == "on" || st == "enabled"
}

// off reports whether an NVUE object is turned off: `enable: off` or
// `state: disabled` (an object that says neither is on).
func off(v any) bool {
	e, _ := at(v, "enable").(string)
	st, _ := at(v, "state").(string)
	return e == "off" || st == "disabled"
}

// onyxAccess is what running-config says of ONYX's switchports: the routed
// ones and the access VLANs set; every other port is a switchport in VLAN 1
// (ONYX's default, which running-config does not show).
type onyxAccess struct {
	routed map[string]bool
	access map[string]int
}

// ports returns the access VLAN of each port running-config names: 0 for a
// routed one.
func (o onyxAccess) ports() map[string]int {
	m := map[string]int{}
	for p, v := range o.access {
		if !o.routed[p] {
			m[p] = v
		}
	}
	for p := range o.routed {
		m[p] = 0 // routed: not bridged
	}
	return m
}

// at walks a JSON object by keys; nil when a key is missing.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// number reads a JSON integer as nvuesim or encoding/json holds it.
func number(v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		if n == float64(int(n)) {
			return int(n), nil
		}
	case json.Number:
		k, err := n.Int64()
		return int(k), err
	case string:
		return strconv.Atoi(n)
	}
	return 0, fmt.Errorf("%v is not an integer", v)
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
