package nvueapply

// The routes check of a Cumulus fabric switch: the default VRF's IPv4
// routing table holds every prefix the other switches advertise, installed,
// over every path the cabling plans (ECMP across the spines).

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// CheckRoutes reads, on a fabric switch (a role), the default VRF's IPv4
// routing table (GET /nvue_v1/vrf/default/router/rib/ipv4/route, `nv show
// vrf default router rib ipv4 route`, and where that table does not show a
// route's next hops, GET …/route/<prefix>, `nv show vrf default router rib
// ipv4 route <prefix>`; NVUE command reference, "RIB",
// https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Show-Commands/RIB/,
// and the user guide's "Routing Tables"). One result per prefix another
// switch advertises (Subject the prefix): on a leaf, every other leaf's
// data subnet, its hosts' container subnets and its loopback, and each
// spine's loopback; on a spine, the prefixes of each leaf cabled to it.
// A prefix passes when it is installed, learnt by BGP, with exactly the
// next hops the plan gives it, one over each of its uplinks: on a leaf, one
// per uplink to a spine that is cabled to the prefix's leaf (ECMP across
// the spines); towards a switch cabled directly, the uplinks to it. A
// missing prefix, one not installed or installed from another protocol, a
// missing next hop, or one more (over an interface the plan does not route
// the prefix over, or a second over an uplink) fails, naming the next hops
// found, the uplink and spine without one, the interface with one too many
// and where to look; a view whose shape rdggen cannot read, or whose next
// hops name no interface, is Unknown, never a pass or a failure.
const CheckRoutes = "routes"

// ribRoutePath is the NVUE path of the default VRF's IPv4 routes.
var ribRoutePath = []string{"vrf", "default", "router", "rib", "ipv4", "route"}

// wantRoute is one prefix a fabric switch must route, and over which
// uplinks (inventory.FabricPlan.Routes).
type wantRoute = inventory.FabricRoute

// routes checks the routing table of a fabric switch: one GET of the
// table, and one per listed prefix only where the table does not show its
// next hops.
func (k *checker) routes() {
	want := k.fp.Routes(&k.sw)
	if len(want) == 0 {
		return
	}
	ix := newUplinkIndex(k.sw, k.fp.Uplinks(k.sw.Name))
	deps := newRouteDeps(k.fp, &k.sw)
	path := "/nvue_v1/" + strings.Join(ribRoutePath, "/")
	table, err := k.c.GetTree(k.ctx, ribRoutePath, "")
	if err != nil {
		for _, w := range want {
			k.unsure(CheckRoutes, w.Prefix.String(), "GET "+path+": "+err.Error())
		}
		return
	}
	if !tableOfPrefixes(table) {
		for _, w := range want {
			k.unsure(CheckRoutes, w.Prefix.String(), "GET "+path+" is not keyed by prefix as `nv show vrf default router rib ipv4 route` lists it: compare the table with "+w.Prefix.String()+" by hand")
		}
		return
	}
	for _, w := range want {
		p := w.Prefix.String()
		view, present := table[p]
		var entries []ribEntry
		if present {
			m, _ := view.(map[string]any)
			entries = ribEntries(m)
			if !anyHops(entries) {
				// The table lists the prefix without its next hops: read
				// the route itself.
				one, err := k.c.GetTree(k.ctx, append(slices.Clone(ribRoutePath), p), "")
				if err != nil {
					k.unsure(CheckRoutes, p, err.Error()) // the error names the request
					continue
				}
				entries = ribEntries(one)
			}
		}
		v := judgeEntries(ix, w, entries, present)
		r := v.result(k.sw.Name, p)
		if r.Status != readiness.Passed {
			// Causes reads the After of findings only.
			r.After = deps.of(w).Join(deps.over(v.unplanned))
		}
		k.rs = append(k.rs, r)
	}
}

// routeDeps makes the After of a switch's routes results: what route w
// follows from is sw's sessions and LLDP neighbors on the uplinks it is
// planned over; through a spine, that spine's routes check of the prefix
// and its sessions to the announcing switch; the announcing switch's host
// link under a container subnet; a foreign AS at either end; and, for a
// next hop over an uplink the plan does not route w over (a miswired
// uplink whose session is with another switch), sw's session and LLDP
// neighbor on that uplink (over). The parts
// each uplink and each spine and owner contribute are made once per
// switch.
type routeDeps struct {
	fp      *inventory.FabricPlan
	sw      *inventory.Switch
	uplink  map[int]readiness.Deps       // link → sw's session and LLDP there
	toOwner map[[2]string]readiness.Deps // spine, owner → the spine's sessions to it
	self    readiness.Deps
}

func newRouteDeps(fp *inventory.FabricPlan, sw *inventory.Switch) *routeDeps {
	return &routeDeps{fp: fp, sw: sw, uplink: map[int]readiness.Deps{}, toOwner: map[[2]string]readiness.Deps{},
		self: readiness.DependsOn(foreignASRef(sw))}
}

// on is what a route over uplink u of d.sw follows from: sw's session and
// LLDP neighbor there.
func (d *routeDeps) on(u inventory.Uplink) readiness.Deps {
	ud, ok := d.uplink[u.Link]
	if !ok {
		ud = readiness.DependsOn(sessionRef(d.sw, u), portRef(d.sw, CheckLLDP, u.Port))
		d.uplink[u.Link] = ud
	}
	return ud
}

// over is what a route with a next hop over each of ups, uplinks the plan
// does not route it over, follows from: the session and LLDP neighbor on
// each (a miswired uplink's session is with another switch, which
// announces the prefix over it).
func (d *routeDeps) over(ups []inventory.Uplink) readiness.Deps {
	var out readiness.Deps
	for _, u := range ups {
		out = out.Join(d.on(u))
	}
	return out
}

func (d *routeDeps) of(w wantRoute) readiness.Deps {
	parts := make([]readiness.Deps, 0, 2*len(w.Via)+1)
	var own []readiness.Ref // this prefix's own references
	p := w.Prefix.String()
	for _, u := range w.Via {
		parts = append(parts, d.on(u))
		if w.Direct || u.Peer == nil {
			continue
		}
		key := [2]string{u.Peer.Name, w.Owner.Name}
		od, ok := d.toOwner[key]
		if !ok {
			var refs []readiness.Ref
			for _, su := range d.fp.Uplinks(u.Peer.Name) {
				if su.Peer != nil && su.Peer.Name == w.Owner.Name {
					refs = append(refs, sessionRef(u.Peer, su))
				}
			}
			od = readiness.DependsOn(refs...)
			d.toOwner[key] = od
		}
		parts = append(parts, od)
		own = append(own, readiness.Ref{Machine: u.Peer.Name, Check: CheckRoutes, Subject: p})
	}
	if w.Host != nil {
		own = append(own, portRef(w.Owner, CheckLink, w.Host.Data.Port))
	}
	own = append(own, foreignASRef(w.Owner))
	return d.self.Join(append(parts, readiness.DependsOn(own...))...)
}

// tableOfPrefixes reports whether the route table is keyed by prefixes
// (an empty table is).
func tableOfPrefixes(t map[string]any) bool {
	if len(t) == 0 {
		return true
	}
	for key := range t {
		if _, err := netip.ParsePrefix(key); err == nil {
			return true
		}
	}
	return false
}

// ribEntry is one route entry of a prefix, as read from the view.
type ribEntry struct {
	Protocol string
	// Flags are the entry's flags ("installed", "selected", …); FlagsKnown
	// says the view shows them.
	Flags      []string
	FlagsKnown bool
	Hops       []ribHop
}

// ribHop is one next hop (a via) of a route entry.
type ribHop struct {
	// ID is the via's key: the next hop's address, or an interface.
	ID string
	// Interface is the port it leaves by ("" when the view does not say).
	Interface string
	// Flags are the next hop's flags ("active", "installed"); FlagsKnown
	// says the view shows them.
	Flags      []string
	FlagsKnown bool
}

// usable reports whether the next hop forwards: active or installed when
// the view shows its flags, else assumed (the entry's flags decide).
func (h ribHop) usable() bool {
	return !h.FlagsKnown || slices.Contains(h.Flags, "active") || slices.Contains(h.Flags, "installed")
}

// anyHops reports whether a route entry has a next hop (the route table
// may list prefixes only).
func anyHops(es []ribEntry) bool {
	for _, e := range es {
		if len(e.Hops) > 0 {
			return true
		}
	}
	return false
}

// ribEntries reads a prefix's view (`nv show vrf default router rib ipv4
// route <prefix> -o json`). NVIDIA shows no JSON of it, so two shapes are
// read: the reference page's command tree, protocol.<protocol>.
// entry-index.<n>.{flags, via.<via-id>.{flags, resolved-via}} (5.0–5.15),
// and the 5.16 user guide's table route-entry.<n> with a protocol column;
// a via's interface is its "interface" (or "resolved-via-intf", or a
// resolved-via entry's interface, or the via's key when that is an
// interface), read off the tables' ResolvedViaIntf column. Flags are an
// object's keys ({"installed": {}}), a list or a string.
func ribEntries(v map[string]any) []ribEntry {
	var out []ribEntry
	if protos, ok := v["protocol"].(map[string]any); ok {
		for proto, pv := range protos {
			pm, _ := pv.(map[string]any)
			if idx, ok := pm["entry-index"].(map[string]any); ok {
				for _, e := range sortedValues(idx) {
					out = append(out, readEntry(proto, e))
				}
			} else if _, ok := pm["via"]; ok {
				out = append(out, readEntry(proto, pm))
			}
		}
	}
	for _, key := range []string{"route-entry", "entry-index"} {
		if idx, ok := v[key].(map[string]any); ok {
			for _, e := range sortedValues(idx) {
				proto, _ := e["protocol"].(string)
				out = append(out, readEntry(proto, e))
			}
		}
	}
	slices.SortStableFunc(out, func(a, b ribEntry) int { return strings.Compare(a.Protocol, b.Protocol) })
	return out
}

// sortedValues are m's object values in the order of their keys.
func sortedValues(m map[string]any) []map[string]any {
	var out []map[string]any
	for _, k := range sortedKeys(m) {
		if e, ok := m[k].(map[string]any); ok {
			out = append(out, e)
		}
	}
	return out
}

func readEntry(proto string, e map[string]any) ribEntry {
	r := ribEntry{Protocol: proto}
	r.Flags, r.FlagsKnown = flagList(e["flags"])
	if inst, ok := e["installed"]; ok && !slices.Contains(r.Flags, "installed") {
		r.FlagsKnown = true
		if on(inst) {
			r.Flags = append(r.Flags, "installed")
		}
	}
	vias, _ := e["via"].(map[string]any)
	ids := make([]string, 0, len(vias))
	for id := range vias {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		hv, _ := vias[id].(map[string]any)
		h := ribHop{ID: id, Interface: viaInterface(id, hv)}
		h.Flags, h.FlagsKnown = flagList(hv["flags"])
		r.Hops = append(r.Hops, h)
	}
	return r
}

// viaInterface is the port a via leaves by ("" when not shown).
func viaInterface(id string, hv map[string]any) string {
	for _, key := range []string{"interface", "resolved-via-intf", "resolved-via-interface"} {
		if s, ok := hv[key].(string); ok && s != "" {
			return s
		}
	}
	if rv, ok := hv["resolved-via"].(map[string]any); ok {
		for rid, r := range rv {
			if s, ok := r.(map[string]any)["interface"].(string); ok && s != "" {
				return s
			}
			if _, err := netip.ParseAddr(rid); err != nil && rid != "" {
				return rid
			}
		}
	}
	if _, err := netip.ParseAddr(strings.SplitN(id, "%", 2)[0]); err != nil && id != "" {
		return id // the via is an interface
	}
	return ""
}

// flagList reads flags shown as an object's keys, a list or a string
// ("installed, selected"); known is false when there are none to read.
func flagList(v any) (flags []string, known bool) {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return nil, false
		}
		for k, f := range x {
			if f == nil || f == false || f == "off" {
				continue
			}
			flags = append(flags, strings.ToLower(k))
		}
		known = true
	case []any:
		for _, f := range x {
			flags = append(flags, strings.ToLower(fmt.Sprint(f)))
		}
		known = true
	case string:
		flags = strings.FieldsFunc(strings.ToLower(x), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })
		known = true
	}
	slices.Sort(flags)
	return flags, known
}

// on reads a boolean as NVUE may show it: true, "on", "yes", "true".
func on(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x == "on" || x == "yes" || x == "true" || x == "enabled"
	}
	return false
}

// verdict is a judged route.
type verdict struct {
	status                 readiness.Status
	found, expected, fixed string
	// unplanned are the uplinks of the switch that carry a next hop the
	// plan does not route the prefix over (a failure's), in port order.
	unplanned []inventory.Uplink
}

// result is v as switch machine's result for subject.
func (v verdict) result(machine, subject string) readiness.Result {
	return readiness.Result{Target: readiness.TargetSwitch, Machine: machine, Check: CheckRoutes, Subject: subject,
		Status: v.status, Found: v.found, Expected: v.expected, Fix: v.fixed}
}

// uplinkIndex is a switch and its uplinks by link and by port name, made
// once per switch so that judging a route costs its next hops and planned
// uplinks, not their product.
type uplinkIndex struct {
	sw     inventory.Switch
	ups    []inventory.Uplink
	name   map[int]string // link index → this switch's port name
	byPort map[string]inventory.Uplink
}

func newUplinkIndex(sw inventory.Switch, ups []inventory.Uplink) *uplinkIndex {
	ix := &uplinkIndex{sw: sw, ups: ups, name: make(map[int]string, len(ups)), byPort: make(map[string]inventory.Uplink, len(ups))}
	for _, u := range ups {
		n := sw.PortName(u.Port)
		ix.name[u.Link] = n
		ix.byPort[n] = u
	}
	return ix
}

// judgeRoute judges prefix w's view (present: the table lists it) on
// switch ix.sw.
func judgeRoute(ix *uplinkIndex, w wantRoute, view any, present bool) verdict {
	m, _ := view.(map[string]any)
	return judgeEntries(ix, w, ribEntries(m), present)
}

// judgeEntries is judgeRoute of the view's route entries.
func judgeEntries(ix *uplinkIndex, w wantRoute, entries []ribEntry, present bool) verdict {
	sw := ix.sw
	p := w.Prefix.String()
	owner := w.Owner.Name
	wantPorts := make([]string, len(w.Via))
	for i, u := range w.Via {
		wantPorts[i] = ix.name[u.Link]
	}
	// What is expected is said only by a route that does not pass.
	paths := func() string { return describeUplinks(ix, w.Via) }
	expected := func() string {
		e := fmt.Sprintf("%s (%s of %s) installed by BGP, %s", p, w.What, owner, nextHops(len(w.Via)))
		if len(w.Via) > 0 {
			e += ": " + paths()
		}
		return e
	}
	if len(w.Via) == 0 {
		return verdict{status: readiness.Failed, found: "the plan cables " + sw.Name + " to no spine that " + owner + " is cabled to", expected: expected(),
			fixed: fmt.Sprintf("%s's hosts cannot reach %s's: cable %s to a spine %s is cabled to (fabric.links), apply, and check again", sw.Name, owner, sw.Name, owner)}
	}
	showHere := "`nv show vrf default router rib ipv4 route " + p + "` on " + sw.Name
	if !present {
		// From here to the announcing switch: this switch's sessions, the
		// spines' routes, the announcement itself.
		fix := fmt.Sprintf("look at %s's bgp checks of %s", sw.Name, strings.Join(wantPorts, ", "))
		if !w.Direct {
			fix += ", then the spines' routes checks of " + p
		}
		fix += fmt.Sprintf(", then %s: it announces %s with a BGP network statement, and only while %s is in its own routing table", owner, p, p)
		if w.Host != nil {
			fix += fmt.Sprintf(": its static route to %s via %s, installed only while %s's data link is up (%s's link check of %s)",
				p, w.Host.Data.Address.Addr(), w.Host.Name, owner, w.Owner.PortName(w.Host.Data.Port))
		}
		fix += fmt.Sprintf(" (%s's config and bgp checks; %s)", owner, ownerShow(w.Owner, p))
		return verdict{status: readiness.Failed, found: "not in the routing table", expected: expected(), fixed: fix}
	}
	if len(entries) == 0 {
		return verdict{status: readiness.Unknown, found: "the route's view has no route entry rdggen can read (protocol.<protocol>.entry-index or route-entry): compare " + showHere + " with " + expected()}
	}
	var installed []ribEntry
	flagsShown := false
	for _, e := range entries {
		flagsShown = flagsShown || e.FlagsKnown
		if slices.Contains(e.Flags, "installed") {
			installed = append(installed, e)
		}
	}
	if !flagsShown {
		return verdict{status: readiness.Unknown, found: "the route's view shows no flags, so whether it is installed is not known: compare " + showHere + " with " + expected()}
	}
	if len(installed) == 0 {
		return verdict{status: readiness.Failed, found: "in the routing table, not installed (" + describeEntries(entries) + ")", expected: expected(),
			fixed: fmt.Sprintf("the route is not in %s's forwarding table: see %s and `nv show router nexthop rib <NHGId>` for why (an unresolved next hop), and the bgp checks of %s", sw.Name, showHere, strings.Join(wantPorts, ", "))}
	}
	e := installed[0]
	for _, c := range installed {
		if c.Protocol == "bgp" {
			e = c
		}
	}
	if e.Protocol != "" && e.Protocol != "bgp" {
		return verdict{status: readiness.Failed, found: "installed from " + quote.Terminal(e.Protocol) + ", not BGP (" + describeEntries(installed) + ")", expected: expected(),
			fixed: fmt.Sprintf("a %s route to %s on %s wins over the fabric's BGP route (a lower distance) and sends %s's traffic elsewhere: remove it unless it is meant (%s)",
				quote.Terminal(e.Protocol), p, sw.Name, owner, showHere)}
	}
	planned := make(map[string]bool, len(wantPorts))
	for _, n := range wantPorts {
		planned[n] = true
	}
	got := map[string]bool{}
	var shown, extra []string
	unnamed := 0
	for _, h := range e.Hops {
		if !h.usable() {
			continue
		}
		if h.Interface == "" {
			unnamed++
			shown = append(shown, quote.Terminal(h.ID))
			continue
		}
		if !planned[h.Interface] || got[h.Interface] {
			// Not an uplink the plan routes the prefix over, or a second
			// path over one: the plan's paths, exactly, are the check.
			extra = append(extra, h.Interface)
		}
		got[h.Interface] = true
		shown = append(shown, quote.Terminal(h.Interface))
	}
	var missing []inventory.Uplink
	for i, u := range w.Via {
		if !got[wantPorts[i]] {
			missing = append(missing, u)
		}
	}
	slices.Sort(shown)
	slices.Sort(extra)
	found := fmt.Sprintf("bgp, installed, %s", nextHops(len(shown)))
	if len(shown) > 0 {
		found += ": " + strings.Join(shown, ", ")
	}
	switch {
	case len(missing) == 0 && len(extra) == 0 && unnamed == 0:
		// Each planned uplink carries one, and nothing else does: name its
		// planned peer (the lldp check proves the cabling). A failure
		// names the ports only: on a miswired link the planned peer is not
		// the one behind it.
		var named []string
		for _, iface := range shown {
			named = append(named, describePort(ix, iface))
		}
		return verdict{status: readiness.Passed, found: fmt.Sprintf("bgp, installed, %s: %s", nextHops(len(shown)), strings.Join(named, ", "))}
	case unnamed > 0 && len(extra) == 0 && len(missing) <= unnamed:
		// The unnamed next hops may be the missing uplinks, or paths the
		// plan does not have.
		return verdict{status: readiness.Unknown, found: found + ": the view does not name the next hops' interfaces, so which uplinks carry them is not known (expected " + paths() + ")"}
	}
	var fixes []string
	var unplanned []inventory.Uplink
	for _, u := range missing {
		port := ix.name[u.Link]
		peer := "?"
		if u.Peer != nil {
			peer = u.Peer.Name
		}
		f := fmt.Sprintf("no path over %s to %s: its BGP session (bgp check of %s) and the link %s %s ↔ %s (link and lldp checks)", port, peer, port, sw.Name, port, peerEnd(u))
		if !w.Direct {
			f += fmt.Sprintf(", then whether %s has %s from %s (%s's routes check of %s)", peer, p, owner, peer, p)
		}
		fixes = append(fixes, f)
	}
	for _, x := range slices.Compact(extra) {
		u, uplink := ix.byPort[x]
		switch {
		case planned[x]:
			fixes = append(fixes, fmt.Sprintf("a second path over %s: a second BGP neighbor over that port announces %s (`nv show vrf default router bgp neighbor` on %s lists them)",
				describePort(ix, x), p, sw.Name))
		case uplink:
			unplanned = append(unplanned, u)
			fixes = append(fixes, fmt.Sprintf("a path over %s, the uplink to %s, which the plan does not route %s over: its session is not with the switch the plan cables there (the lldp and bgp checks of %s)",
				quote.Terminal(x), peerEnd(u), p, quote.Terminal(x)))
		default:
			fixes = append(fixes, fmt.Sprintf("a path over %s, %s, which the plan does not route %s over: traffic to %s is split onto it; a BGP neighbor there that is not one of the fabric's sessions announces it (`nv show vrf default router bgp neighbor` on %s lists them; a user's neighbor whose announcements should not be used needs an inbound filter)",
				quote.Terminal(x), describeInterface(x), p, owner, sw.Name))
		}
	}
	return verdict{status: readiness.Failed, found: found, expected: expected(), fixed: strings.Join(fixes, "; "), unplanned: unplanned}
}

// describeInterface says what interface iface, which is no uplink, is:
// the hosts' data VLAN, a port, or something else.
func describeInterface(iface string) string {
	if iface == cumulus.SVI {
		return "the interface of the hosts' data VLAN (a next hop among the hosts)"
	}
	if strings.HasPrefix(iface, "swp") {
		return "a port that is no uplink of the plan (a host's port, or one fabric.links does not cable)"
	}
	return "not a port of the plan"
}

// ownerShow is the command that shows prefix p's network statement and
// route on switch x.
func ownerShow(x *inventory.Switch, p string) string {
	if x.OS() == inventory.OSCumulus {
		return "`nv show vrf default router bgp address-family ipv4-unicast network` and `nv show vrf default router rib ipv4 route " + p + "` there"
	}
	return "`show running-config | include network` and `show ip route " + p + "` there"
}

// describeUplinks names uplinks of ix.sw as "swp63 (spine1), swp64
// (spine2)".
func describeUplinks(ix *uplinkIndex, ups []inventory.Uplink) string {
	var s strings.Builder
	for i, u := range ups {
		peer := "?"
		if u.Peer != nil {
			peer = u.Peer.Name
		}
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(ix.name[u.Link] + " (" + peer + ")")
	}
	return s.String()
}

// describePort names a next hop's interface with the uplink's planned
// peer: "swp63 (spine1)".
func describePort(ix *uplinkIndex, iface string) string {
	if u, ok := ix.byPort[iface]; ok && u.Peer != nil {
		return quote.Terminal(iface) + " (" + u.Peer.Name + ")"
	}
	return quote.Terminal(iface)
}

// describeEntries summarises route entries: "bgp [selected], static
// [installed, selected]".
func describeEntries(es []ribEntry) string {
	var s []string
	for _, e := range es {
		proto := e.Protocol
		if proto == "" {
			proto = "?"
		}
		s = append(s, quote.Terminal(proto)+" ["+quote.Terminal(strings.Join(e.Flags, ", "))+"]")
	}
	return strings.Join(s, ", ")
}

func nextHops(n int) string {
	if n == 1 {
		return "1 next hop"
	}
	return strconv.Itoa(n) + " next hops"
}
