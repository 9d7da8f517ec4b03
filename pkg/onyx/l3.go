package onyx

// The routed container pool (docker.routing: switch): the switch carries a
// gateway address on the data VLAN's interface and one static route per
// host's container subnet. The commands and their forms are the ones NVIDIA
// documents for ONYX and that published ONYX configurations use; the
// sources are listed in docs/research/onyx-l3.md:
//
//   - NVIDIA Onyx User Manual, "IP Routing Overview" and "General IP Routing
//     Commands" (docs.nvidia.com/networking/display/onyxv31040100/general+ip+routing+commands):
//     VLAN interfaces, the primary address rule, `ip routing`;
//   - ansible-collections/mellanox.onyx, plugins/modules/onyx_l3_interface.py
//     and onyx_protocol.py with their unit tests (`interface vlan N ip
//     address A/M`, `ip routing vrf default`);
//   - Cray-HPE/canu, network_modeling/configs/templates/1.2/dellmellanox/full/sw-spine.primary.j2
//     (`ip routing vrf default`, `interface vlan N`, `interface vlan N ip
//     address A/M primary`, `no interface vlan N ip icmp redirect`,
//     `interface vlan N mtu M`, in that order);
//   - HPE Cray System Management network docs (`ip route vrf default
//     0.0.0.0/0 10.102.255.13`) and HPE HPCM's published ONYX 3.9.3210
//     running-config ("L3 configuration": `ip routing vrf default`,
//     `interface vlan 1`, `interface vlan 1 ip address 10.1.0.2/16 primary`).

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// DataVLAN is the VLAN of the hosts' data ports, whose IP interface carries
// the gateway address: 1, ONYX's default VLAN, in which every access port
// is until `switchport access vlan` moves it. rdggen configures no VLANs
// (the deployment guide does not either), so the data ports are in VLAN 1;
// Reconcile warns when the running-config puts a data port elsewhere.
const DataVLAN = 1

// VLAN is the IP interface of VLAN n, `interface vlan <n>`.
func VLAN(n int) Iface { return Iface{Type: "vlan", ID: strconv.Itoa(n)} }

// IPRouting is `ip routing vrf default`: IPv4 routing on in the default VRF,
// as published ONYX running-configs print it (HPE HPCM 3.9.3210; CANU's
// templates; onyx_protocol's `ip_routing`).
func IPRouting() Statement {
	return Statement{Kind: KindIPRouting, Key: "ip routing vrf default", Body: "ip routing vrf default"}
}

// VLANInterface is `interface vlan <n>`: the VLAN's IP interface, a line of
// its own before any of its settings, as running-config lists it. With
// prefix modes on, the command enters the interface's context.
func VLANInterface(n int) Statement { return vlanInterface(VLAN(n)) }

func vlanInterface(i Iface) Statement {
	return Statement{Kind: KindVLANIface, Iface: i, Key: "interface"}
}

// VLANAddress is `interface vlan <n> ip address <a.b.c.d/m> primary`: the
// interface's primary IPv4 address, in the form running-config prints. ONYX
// makes the first address of an interface its primary, and a primary
// "cannot be modified once assigned": a different one is removed first
// (`interface vlan <n> no ip address`), which Reconcile does.
func VLANAddress(n int, a netip.Prefix) Statement { return vlanAddress(VLAN(n), a) }

func vlanAddress(i Iface, a netip.Prefix) Statement {
	return Statement{Kind: KindVLANAddress, Iface: i, Key: "ip address", Body: "ip address " + a.String() + " primary"}
}

// ICMPRedirect is `interface vlan <n> ip icmp redirect` (on, ONYX's
// default) or `no interface vlan <n> ip icmp redirect` (off). rdggen turns
// redirects off on the gateway, as CANU does on every routed VLAN: the
// switch routes between hosts of one subnet, and redirects would tell the
// hosts to bypass it.
func ICMPRedirect(n int, on bool) Statement { return icmpRedirect(VLAN(n), on) }

func icmpRedirect(i Iface, on bool) Statement {
	s := Statement{Kind: KindICMPRedirect, Iface: i, Key: "ip icmp redirect", Body: "ip icmp redirect"}
	if !on {
		s.Body = "no ip icmp redirect"
	}
	return s
}

// VLANMTU is `interface vlan <n> mtu <bytes>`: the interface's IP MTU, in
// bytes (default 1500). The gateway's is the data network's MTU, so that
// routed jumbo frames are not fragmented or dropped.
func VLANMTU(n, bytes int) Statement { return vlanMTU(VLAN(n), bytes) }

func vlanMTU(i Iface, bytes int) Statement {
	return Statement{Kind: KindVLANMTU, Iface: i, Key: "mtu", Body: "mtu " + strconv.Itoa(bytes)}
}

// DefaultVLANMTU is the IP MTU of a VLAN interface that sets none, in
// bytes (`show interfaces vlan` prints "MTU": "1500 bytes"; mellanox.onyx
// fixture onyx_l3_vlan_interface_show.cfg).
const DefaultVLANMTU = 1500

// Route is `ip route vrf default <dst> <via>`: a static route in the
// default VRF (HPE CSM's ONYX procedures). A route is identified by its
// prefix and next hop: a second next hop for one prefix adds an ECMP path
// rather than replacing the first, so a wrong route is removed with `no
// ip route vrf default <dst> <via>`, never overwritten.
func Route(dst netip.Prefix, via netip.Addr) Statement {
	k := "ip route vrf default " + dst.String() + " " + via.String()
	return Statement{Kind: KindRoute, Key: k, Body: k}
}

// negated is s's `no` form: the same ID, so Diff and the plan relate them.
func negated(s Statement) Statement {
	switch {
	case s.Kind == KindVLANIface:
		s.Body = "no"
	case s.Kind == KindVLANAddress:
		s.Body = "no ip address"
	default:
		s.Body = "no " + s.Key
	}
	return s
}

// RouteOf returns the prefix and next hop of a KindRoute statement.
func (s Statement) RouteOf() (dst netip.Prefix, via netip.Addr, ok bool) {
	f := strings.Fields(s.Key)
	if s.Kind != KindRoute || len(f) != 6 {
		return dst, via, false
	}
	dst, err1 := netip.ParsePrefix(f[4])
	via, err2 := netip.ParseAddr(f[5])
	return dst, via, err1 == nil && err2 == nil
}

// AddressOf returns the address of a positive KindVLANAddress statement.
func (s Statement) AddressOf() (netip.Prefix, bool) {
	f := strings.Fields(s.Body)
	if s.Kind != KindVLANAddress || len(f) < 3 || f[0] != "ip" {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(f[2])
	return p, err == nil
}

// PoolRecordPrefix starts the description that PoolRecord gives the
// gateway's interface.
const PoolRecordPrefix = "rdggen-pool-"

// PoolRecord is `interface vlan <n> description rdggen-pool-<pool>`, e.g.
// `interface vlan 1 description rdggen-pool-172.16.0.0/16`: rdggen's record
// of the container pool it routes on this switch, kept in the switch's own
// configuration, so that every later apply, from any machine, and a switch
// configured by pasting switch/<name>.cfg, can tell which routes are
// rdggen's after docker.pool changes (Reconcile). A VLAN interface has a
// description (NVIDIA Onyx User Manual, "IP Routing Overview": admin state,
// address, MTU, description, counters), which Mellanox's onyx_interface
// module sets for VLAN interfaces too; running-configs print an interface's
// description as a flat line, `interface ethernet 1/1 description TRUNK TO
// Dell7048` (docs/research/onyx-l3.md). The text has no spaces and at most
// 30 characters.
func PoolRecord(n int, pool netip.Prefix) Statement {
	return vlanDescription(VLAN(n), PoolRecordPrefix+pool.String())
}

func vlanDescription(i Iface, text string) Statement {
	return Statement{Kind: KindVLANDescription, Iface: i, Key: "description", Body: "description " + text}
}

// RecordedPool returns the pool of a PoolRecord statement, also when the
// switch prints the description in quotes; ok is false for any other
// statement, a description of the user's included.
func (s Statement) RecordedPool() (pool netip.Prefix, ok bool) {
	text, isDesc := strings.CutPrefix(s.Body, "description ")
	if s.Kind != KindVLANDescription || !isDesc {
		return pool, false
	}
	rest, isRecord := strings.CutPrefix(strings.Trim(text, `"`), PoolRecordPrefix)
	if !isRecord {
		return pool, false
	}
	pool, err := netip.ParsePrefix(rest)
	return pool, err == nil && pool.Addr().Is4() && pool.Masked() == pool
}

// L3 returns the statements that make switch sw the container pool's
// gateway (docker.routing: switch), in running-config order: routing on,
// the data VLAN's interface with the gateway address (Inventory.GatewayPrefix),
// ICMP redirects off, the data MTU when it is above 1500, rdggen's record
// of the pool (PoolRecord), and one static route per host's container
// subnet via the host's data address, in inventory order. It returns
// nothing for a switch that is not the gateway (Inventory.GatewaySwitch),
// which is every switch in RoutingHosts mode.
//
//	ip routing vrf default
//	interface vlan 1
//	interface vlan 1 ip address 31.31.31.254/24 primary
//	no interface vlan 1 ip icmp redirect
//	interface vlan 1 description rdggen-pool-172.16.0.0/16
//	ip route vrf default 172.16.41.0/24 31.31.31.41
//	…
func L3(inv *inventory.Inventory, sw inventory.Switch) []Statement {
	gw := inv.GatewaySwitch()
	if gw == nil || gw.Name != sw.Name || !inv.GatewayPrefix().IsValid() {
		return nil
	}
	out := make([]Statement, 0, 6+len(inv.Hosts))
	out = append(out, IPRouting(), VLANInterface(DataVLAN), VLANAddress(DataVLAN, inv.GatewayPrefix()), ICMPRedirect(DataVLAN, false))
	if mtu := inv.DataMTU(); mtu > DefaultVLANMTU {
		out = append(out, VLANMTU(DataVLAN, mtu))
	}
	out = append(out, PoolRecord(DataVLAN, inv.Docker.Pool))
	for _, h := range inv.HostsOnSwitch(sw.Name) {
		out = append(out, Route(h.Subnet, h.Data.Address.Addr()))
	}
	return out
}

// Reconcile is the plan that `rdggen apply --target switch` sends to
// switch sw, and that `rdggen check` reports: Diff of Desired against the
// switch's current statements, preceded by the removal of the routed-pool
// configuration rdggen made and the inventory no longer wants (a switch
// that was the gateway and no longer is, a route into an earlier pool, a
// gateway address that changed).
//
// How rdggen knows what it made. A switch does not say who typed a line,
// and rdggen keeps no state of its own: a record beside the backups
// (rdg-backup/) is lost, or stale, as soon as apply runs from another
// machine or checkout. What rdggen knows comes from the inventory and from
// the switch's own configuration, which every apply and every reader share.
// A static route `ip route vrf default P N` is rdggen's when N is the data
// address of a host h of the inventory (rdggen routes only via hosts'
// data addresses) and
//   - P is h's container subnet: it is exactly the route rdggen writes for
//     h; or
//   - P lies inside the pool recorded on the switch by PoolRecord, or inside
//     docker.pool when this plan writes that record: rdggen routes that pool
//     there. This is what finds rdggen's routes after a change of
//     docker.pool or of a host's docker.subnet, which the first rule cannot.
//
// Nothing else is ever removed. A route that may still be rdggen's but is
// not shown to be is left, and named in Plan.Kept with the command that
// removes it: one via a host's data address on a switch that holds no
// record yet (configured by hand or by an rdggen without records, or its
// interface carries a description of the user's); one via an address that
// is no host's, into the pool rdggen routes there or to a container subnet
// that rdggen routes too (an ECMP path beside rdggen's) — what is left when
// a host leaves the inventory or changes its data address, which a rule on
// next hops cannot tell from a route of the user's. Other routes are left
// without a word: with other arguments or in other VRFs, via an address
// that is no host's on a switch rdggen does not route the pool on, and,
// where the record is, outside its pool and not a host's subnet.
//
// The rest of what rdggen removes:
//   - on the gateway switch, a primary address of the data VLAN's
//     interface other than the gateway's: ONYX cannot change a primary, so
//     it is removed (`interface vlan 1 no ip address`) before the new one
//     is set; the plan shows the address it replaces.
//   - on a switch that is not (or no longer) the gateway, and only while it
//     still holds rdggen's record or one of rdggen's routes: the gateway
//     address (exactly Inventory.Docker.Gateway) on the data VLAN's
//     interface. The interface goes with it (`no interface vlan 1`) when it
//     holds nothing but rdggen's settings; otherwise only rdggen's settings
//     are undone (address removed, ICMP redirects and MTU back to ONYX's
//     defaults, the record removed). `ip routing vrf default` is turned off
//     too when nothing else on the switch routes (no other interface
//     address, no static route outside the pool and the mgmt VRF, no
//     routing protocol); otherwise it stays, with a warning.
//
// Removals come first, in this order: interface settings, the gateway
// address, routing, routes, and last the interface or the record, so that
// an apply that stops midway leaves the evidence and the next one
// finishes the job.
//
// When the data VLAN's interface carries a description that is not
// rdggen's record, the record is not written (a description is one
// setting, and it is the user's): the plan warns, and rdggen then knows its
// routes by the first rule only.
func Reconcile(inv *inventory.Inventory, sw inventory.Switch, current []Statement) Plan {
	desired := Desired(inv, sw)
	var notes []string
	vlan := VLAN(DataVLAN)
	if d, ok := currentStatement(current, ID{vlan, "description"}); ok && !d.Negated() {
		if _, ours := d.RecordedPool(); !ours {
			for i, s := range desired {
				if s.Kind == KindVLANDescription {
					desired = slices.Delete(slices.Clone(desired), i, i+1)
					notes = append(notes, fmt.Sprintf("%s is not rdggen's, so rdggen does not record there the pool it routes (%s): after a change of docker.pool or of a host's docker.subnet it names its earlier routes instead of removing them",
						d.Command(), s.Command()))
					break
				}
			}
		}
	}
	desired, notes = foreignBGP(sw, desired, current, notes)
	desired, notes = userDescriptions(desired, current, notes)
	plan := Diff(desired, current)
	rm, kept, warnings := stale(inv, sw, desired, current)
	if len(rm) > 0 {
		changes := make([]Change, 0, len(rm)+len(plan.Changes))
		for _, r := range rm {
			changes = append(changes, Change{Line: Line{Kind: r.s.Kind, Command: r.s.Command(), Statements: []Statement{r.s}}, Removed: r.was})
		}
		plan.Changes = append(changes, plan.Changes...)
	}
	plan.Kept = kept
	for _, k := range kept {
		plan.Warnings = append(plan.Warnings, k.Command+": "+k.Reason)
	}
	plan.Warnings = append(plan.Warnings, splitWarnings(plan)...)
	plan.Warnings = append(plan.Warnings, notes...)
	plan.Warnings = append(plan.Warnings, warnings...)
	return plan
}

// foreignBGP leaves BGP alone on a switch that already runs a BGP instance
// of another AS in the default VRF: ONYX holds one instance per VRF, so
// rdggen's `router bgp <asn> vrf default` lines would rewrite (or be
// refused over) configuration that is not rdggen's. The desired BGP lines
// are dropped and a note says so, naming the instance. A user's own
// neighbors, networks and route maps under rdggen's AS are never touched
// either: Diff only adds lines, and Reconcile removes no BGP line.
func foreignBGP(sw inventory.Switch, desired, current []Statement, notes []string) ([]Statement, []string) {
	foreign := ForeignBGP(sw, current)
	if foreign == "" {
		return desired, notes
	}
	kept := desired[:0:0]
	for _, d := range desired {
		if d.Kind != KindBGP && d.Kind != KindBGPBFD {
			kept = append(kept, d)
		}
	}
	return kept, append(notes, fmt.Sprintf("the switch runs %q, not rdggen's AS %d (ONYX holds one BGP instance per VRF): rdggen writes no BGP line here and leaves that instance alone; remove it yourself (no %s) or set switches[].asn to its AS, then apply again",
		foreign, sw.Fabric.ASN, foreign))
}

// ForeignBGP is the BGP instance of another AS than fabric switch sw's
// that current (a parsed running-config) runs in the default VRF, as
// "router bgp 65000 vrf default"; "" when there is none (or sw is not in a
// fabric). Reconcile then plans no BGP line (foreignBGP), and `rdggen
// check` fails the switch's configuration rather than pass it.
func ForeignBGP(sw inventory.Switch, current []Statement) string {
	if sw.Fabric.ASN == 0 {
		return ""
	}
	asn := strconv.Itoa(sw.Fabric.ASN)
	for _, s := range current {
		w := strings.Fields(s.Body)
		if s.Kind == KindBGP && !s.Negated() && len(w) >= 5 && w[3] == "vrf" && w[4] == "default" && w[2] != asn {
			return strings.Join(w[:5], " ")
		}
	}
	return ""
}

// currentStatement is the statement with the given ID that the switch
// keeps: the last one.
func currentStatement(current []Statement, id ID) (Statement, bool) {
	for i := len(current) - 1; i >= 0; i-- {
		if current[i].ID() == id {
			return current[i], true
		}
	}
	return Statement{}, false
}

// removal is a `no` command and the switch's commands it takes away.
type removal struct {
	s   Statement
	was []string
}

// stale finds the removals of Reconcile, the routes it keeps and its
// warnings: the routes rdggen made that the inventory no longer wants
// (staleView.routes), then what is left of the routed pool's gateway on
// the data VLAN (staleView.gateway), in the order they are sent.
func stale(inv *inventory.Inventory, sw inventory.Switch, desired, current []Statement) ([]removal, []Kept, []string) {
	v := newStaleView(inv, desired, current)
	routes, kept := v.routes()
	rm, warnings := v.gateway(sw, routes)
	return rm, kept, warnings
}

// staleView is what stale compares: the desired and current statements
// by ID (current in the switch's order, the last of a repeated ID
// counting), the hosts by data address, and the pools rdggen routes on
// this switch by its record.
type staleView struct {
	inv                     *inventory.Inventory
	desired                 []Statement
	want, cur               map[ID]Statement
	order                   []ID
	gatewayHere, recordHere bool // this plan writes the gateway address, the record
	hostAt                  map[netip.Addr]*inventory.Host
	vlan                    Iface
	record                  netip.Prefix // the pool the switch's record names
	hasRecord               bool
	routed                  []netip.Prefix
	wantDst                 map[netip.Prefix]bool // made on first use by wanted
}

func newStaleView(inv *inventory.Inventory, desired, current []Statement) *staleView {
	v := &staleView{inv: inv, desired: desired, want: make(map[ID]Statement, len(desired)),
		cur: make(map[ID]Statement, len(current)), hostAt: map[netip.Addr]*inventory.Host{}, vlan: VLAN(DataVLAN)}
	for _, d := range desired {
		v.want[d.ID()] = d
		v.gatewayHere = v.gatewayHere || d.Kind == KindVLANAddress
		v.recordHere = v.recordHere || d.Kind == KindVLANDescription
	}
	for _, s := range current {
		if _, seen := v.cur[s.ID()]; !seen {
			v.order = append(v.order, s.ID())
		}
		v.cur[s.ID()] = s // the switch keeps the last
	}
	for i := range inv.Hosts {
		if a := inv.Hosts[i].Data.Address.Addr(); v.hostAt[a] == nil {
			v.hostAt[a] = &inv.Hosts[i]
		}
	}
	v.record, v.hasRecord = v.cur[ID{v.vlan, "description"}].RecordedPool()
	// The pools rdggen routes on this switch, by its record: the one on
	// the switch, and docker.pool when this plan writes the record.
	if v.hasRecord {
		v.routed = append(v.routed, v.record)
	}
	if v.recordHere && !slices.Contains(v.routed, inv.Docker.Pool) {
		v.routed = append(v.routed, inv.Docker.Pool)
	}
	return v
}

// wanted reports whether a desired route goes to p (a route via an
// address that is no host's is rare, so the set is made on first use).
func (v *staleView) wanted(p netip.Prefix) bool {
	if v.wantDst == nil {
		v.wantDst = map[netip.Prefix]bool{}
		for _, d := range v.desired {
			if dst, _, ok := d.RouteOf(); ok {
				v.wantDst[dst] = true
			}
		}
	}
	return v.wantDst[p]
}

// within is the routed pool that holds p, if one does.
func (v *staleView) within(p netip.Prefix) (netip.Prefix, bool) {
	for _, pool := range v.routed {
		if pool.Contains(p.Addr()) && p.Bits() >= pool.Bits() {
			return pool, true
		}
	}
	return netip.Prefix{}, false
}

// routes are the removals of the routes rdggen made that are no longer
// wanted, and the routes that may be rdggen's but are left alone, each
// with why and the command that would remove it.
func (v *staleView) routes() ([]removal, []Kept) {
	inv := v.inv
	recordCmd := PoolRecord(DataVLAN, inv.Docker.Pool).Command()
	var routes []removal
	var kept []Kept
	keep := func(s Statement, format string, a ...any) {
		remove := negated(s).Command()
		kept = append(kept, Kept{Command: s.Command(), Reason: fmt.Sprintf("%s; left alone (if rdggen made it: %s)", fmt.Sprintf(format, a...), remove)})
	}
	for _, id := range v.order {
		s := v.cur[id]
		dst, via, ok := s.RouteOf()
		if _, wanted := v.want[id]; !ok || s.Negated() || wanted {
			continue
		}
		h := v.hostAt[via]
		pool, inPool := v.within(dst)
		switch {
		case h != nil && dst == h.Subnet, h != nil && inPool:
			routes = append(routes, removal{negated(s), []string{s.Command()}})
		case h != nil && !v.hasRecord:
			keep(s, "a route via %s's data address, but not to its container subnet %s, and the switch holds no record of a pool rdggen routes (%s); it may be rdggen's, for an earlier docker.pool or hosts[].docker.subnet", h.Name, h.Subnet, recordCmd)
		case h == nil && v.wanted(dst):
			keep(s, "%s is also routed by rdggen, via a host's data address, and %s is no host's: the switch spreads the subnet's traffic over both next hops (ECMP); it may be rdggen's, from before the host's data address changed", dst, via)
		case h == nil && inPool:
			keep(s, "a route into %s, a pool that rdggen routes on this switch by its record, via %s, which is no host's data address; it may be rdggen's, for a host that left the inventory or changed its data address", pool, via)
		}
	}
	return routes, kept
}

// gateway is every removal in the order it is sent (routes, the stale
// routes, among them) and the warnings: what is left of the routed pool's
// gateway on the data VLAN, the interface or the record last as the
// evidence, and `ip routing` when nothing else needs it.
func (v *staleView) gateway(sw inventory.Switch, routes []removal) ([]removal, []string) {
	inv, vlan, cur, order, want := v.inv, v.vlan, v.cur, v.order, v.want
	hasRecord := v.hasRecord
	recordCmd := PoolRecord(DataVLAN, inv.Docker.Pool).Command()
	var onVLAN []Statement
	for _, id := range order {
		if id.Iface == vlan {
			onVLAN = append(onVLAN, cur[id])
		}
	}
	addr, hasAddr := cur[ID{vlan, "ip address"}].AddressOf()
	var warnings []string
	var rm []removal
	// `no ip address` takes every address of the interface: never while it
	// has a secondary address, which is not rdggen's.
	secondary := ""
	for _, s := range onVLAN {
		if s.Kind == KindOther && strings.HasPrefix(s.Body, "ip address ") {
			secondary = s.Command()
		}
	}
	if v.gatewayHere {
		if d := want[ID{vlan, "ip address"}]; hasAddr && cur[ID{vlan, "ip address"}].Body != d.Body {
			old := cur[ID{vlan, "ip address"}]
			if secondary == "" {
				rm = append(rm, removal{negated(old), []string{old.Command()}})
			} else {
				warnings = append(warnings, fmt.Sprintf("interface vlan %d's primary address %s is not the gateway's, and ONYX changes a primary only after all addresses are removed, but it also has %q, which is not rdggen's: remove the addresses yourself, or set docker.gateway to %s",
					DataVLAN, addr, secondary, addr.Addr()))
			}
		}
		warnings = append(warnings, portVLANWarnings(inv, sw, order, cur)...)
		return append(rm, routes...), warnings
	}

	gw := inv.Docker.Gateway
	gwHere := hasAddr && gw.IsValid() && addr.Addr() == gw
	ours := hasRecord || len(routes) > 0 // evidence that rdggen made this switch the gateway
	switch {
	case !ours && gwHere:
		return routes, []string{fmt.Sprintf("interface vlan %d carries %s, the routed pool's gateway address, but the switch holds neither rdggen's record of a routed pool (%s) nor a route of rdggen's: left alone (if rdggen put it there: %s)",
			DataVLAN, addr, recordCmd, negated(vlanAddress(vlan, addr)).Command())}
	case !ours:
		return routes, nil
	}
	removed := map[ID]bool{}
	var last []removal // the interface or the record: the evidence goes last
	mine := func(s Statement) bool {
		switch s.Kind {
		case KindVLANIface, KindICMPRedirect, KindVLANMTU:
			return true
		case KindVLANAddress:
			return gwHere
		case KindVLANDescription:
			_, rec := s.RecordedPool()
			return rec
		}
		return false
	}
	foreign := slices.ContainsFunc(onVLAN, func(s Statement) bool { return !mine(s) })
	switch {
	case len(onVLAN) > 0 && !foreign && (gwHere || hasRecord):
		for _, s := range onVLAN {
			removed[s.ID()] = true
		}
		last = append(last, removal{negated(vlanInterface(vlan)), lineCommands(onVLAN)})
	case len(onVLAN) > 0:
		if gwHere {
			if s, ok := cur[ID{vlan, "ip icmp redirect"}]; ok && s.Body != "ip icmp redirect" {
				rm = append(rm, removal{icmpRedirect(vlan, true), []string{s.Command()}})
			}
			if s, ok := cur[ID{vlan, "mtu"}]; ok && s.Kind == KindVLANMTU && s.Body != vlanMTU(vlan, DefaultVLANMTU).Body {
				rm = append(rm, removal{vlanMTU(vlan, DefaultVLANMTU), []string{s.Command()}})
			}
			old := cur[ID{vlan, "ip address"}]
			if secondary == "" {
				rm = append(rm, removal{negated(old), []string{old.Command()}})
				removed[old.ID()] = true
			} else {
				warnings = append(warnings, fmt.Sprintf("%s stays: the interface also has %q, which is not rdggen's, and `no ip address` would take both", old.Command(), secondary))
			}
		}
		if hasRecord {
			s := cur[ID{vlan, "description"}]
			last = append(last, removal{negated(s), []string{s.Command()}})
			removed[s.ID()] = true
		}
	}
	for _, r := range routes {
		removed[r.s.ID()] = true
	}
	if s, ok := cur[IPRouting().ID()]; ok && !s.Negated() {
		if other := otherL3(order, cur, removed); other == "" {
			rm = append(rm, removal{negated(s), []string{s.Command()}})
		} else {
			warnings = append(warnings, fmt.Sprintf("%s stays on: %q still needs it (%s turns it off)", s.Command(), other, negated(s).Command()))
		}
	}
	rm = append(rm, routes...)
	return append(rm, last...), warnings
}

// lineCommands are the statements' commands, ranges merged.
func lineCommands(stmts []Statement) []string {
	var out []string
	for _, l := range Lines(stmts) {
		out = append(out, l.Command)
	}
	return out
}

// otherL3 returns a command that routing in the default VRF serves besides
// the statements being removed: an IP address on another interface, a
// static route outside the mgmt VRF, a routing protocol; "" when there is
// none.
func otherL3(order []ID, cur map[ID]Statement, removed map[ID]bool) string {
	for _, id := range order {
		s := cur[id]
		if removed[id] || s.Negated() {
			continue
		}
		b := s.Body
		switch {
		case s.Kind == KindVLANAddress, s.Kind == KindRoute:
			return s.Command()
		case !s.Iface.IsZero() && strings.HasPrefix(b, "ip address "):
			return s.Command()
		case s.Iface.IsZero() && strings.HasPrefix(b, "ip route ") && !strings.HasPrefix(b, "ip route vrf mgmt "):
			return s.Command()
		case s.Iface.IsZero() && (strings.HasPrefix(b, "router ") || b == "protocol ospf" || b == "protocol bgp"):
			return s.Command()
		}
	}
	return ""
}

// portVLANWarnings names the data ports that the running-config puts in a
// VLAN other than DataVLAN (or makes trunks): their hosts cannot reach the
// gateway on interface vlan 1.
func portVLANWarnings(inv *inventory.Inventory, sw inventory.Switch, order []ID, cur map[ID]Statement) []string {
	hosts := map[Iface]*inventory.Host{}
	for _, h := range inv.HostsOnSwitch(sw.Name) {
		p := Ethernet(h.Data.Port.Module, h.Data.Port.Number)
		if hosts[p] == nil {
			hosts[p] = h
		}
	}
	var out []string
	access := "switchport access vlan " + strconv.Itoa(DataVLAN)
	for _, id := range order {
		s, h := cur[id], hosts[id.Iface]
		if h == nil || s.Kind != KindOther && s.Kind != KindAccessVLAN { // Parse reads switchport access vlan as KindAccessVLAN (rails)
			continue
		}
		if b := s.Body; (strings.HasPrefix(b, "switchport access vlan ") && b != access) || b == "switchport mode trunk" || b == "switchport mode hybrid" {
			out = append(out, fmt.Sprintf("data port %s (%s) has %q, but the routed pool's gateway is on interface vlan %d: its host cannot reach the gateway; put the port in VLAN %d",
				h.Data.Port, h.Name, s.Command(), DataVLAN, DataVLAN))
		}
	}
	return out
}
