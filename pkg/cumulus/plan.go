package cumulus

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// Change is one difference between the intent and the applied
// configuration, on one leaf (a value, or a set member) of the tree.
type Change struct {
	// Path are the NVUE names down to the leaf: qos, roce, mode.
	Path []string
	// From is the applied value (nil: absent); To the wanted one (nil:
	// unset, a removal). A set member's value is an empty object.
	From, To any
	// Op is applyplan.Add (absent → value), Update or Remove.
	Op applyplan.Op
}

// Key is the path as a person reads it: "qos.roce.mode",
// "vrf.default.router.static[172.16.41.0/24].via[31.31.31.41]" (a name
// holding a dot or a slash is bracketed).
func (c Change) Key() string { return PathString(c.Path) }

// PathString is Key for any path.
func PathString(path []string) string {
	var b strings.Builder
	for i, s := range path {
		s = quote.Terminal(s) // a key read from the switch is shown as one line
		switch {
		case strings.ContainsAny(s, "./: []"):
			b.WriteString("[" + s + "]")
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// LeafText is a leaf for a person: "lossless", "9216", "(set)" for a set
// member, "(unset)" for nothing.
func LeafText(v any, present bool) string {
	if !present || v == nil {
		return "(unset)"
	}
	switch x := v.(type) {
	case string:
		return quote.Terminal(x)
	case map[string]any:
		if len(x) == 0 {
			return "(set)"
		}
		// An object (a removed route): its leaves, "via[31.31.31.41].type=ipv4-address".
		paths, values := Leaves(x)
		parts := make([]string, len(paths))
		for i, p := range paths {
			parts[i] = PathString(p) + "=" + LeafText(values[i], true)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// String is the plan line: "qos.roce.mode: lossy → lossless".
func (c Change) String() string {
	return fmt.Sprintf("%s: %s → %s", c.Key(), LeafText(c.From, c.From != nil), LeafText(c.To, c.To != nil))
}

// Command is the `nv` command that makes the change by hand: `nv set qos
// roce mode lossless`, `nv unset vrf default router static 172.16.1.0/24`.
func (c Change) Command() string { return NVCommand(c.Path, c.To) }

// NVCommand is `nv set PATH VALUE` (`nv unset PATH` for nil), the NVUE
// CLI form of a leaf (NVUE command reference): path names and value are
// shell-quoted where they need it.
func NVCommand(path []string, to any) string {
	words := make([]string, 0, len(path)+3)
	if to == nil {
		words = append(words, "nv", "unset")
	} else {
		words = append(words, "nv", "set")
	}
	words = append(words, path...)
	if to != nil {
		if m, ok := to.(map[string]any); !ok || len(m) > 0 {
			words = append(words, LeafText(to, true))
		}
	}
	return quote.ShJoin(words)
}

// Kept is configuration that may be rdggen's but is not shown to be, left
// in place and named in the plan.
type Kept struct {
	Path []string
	// Reason says why it is kept; Command removes it by hand.
	Reason, Command string
}

// Plan is what apply changes on one switch.
type Plan struct {
	// Changes are in tree order: removals first (so that an apply cut off
	// midway keeps what the next one needs to find), then the settings.
	Changes []Change
	// Kept are left in place (see Kept); Warnings are remarks.
	Kept     []Kept
	Warnings []string
}

// Empty reports whether nothing is to change.
func (p Plan) Empty() bool { return len(p.Changes) == 0 }

// String is the plan, one change a line.
func (p Plan) String() string {
	var b strings.Builder
	for _, c := range p.Changes {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Patch is the body of the one root PATCH that makes the plan: the wanted
// leaves, and null for each removal.
func (p Plan) Patch() Tree {
	body := Tree{}
	for _, c := range p.Changes {
		node := body
		for _, seg := range c.Path[:len(c.Path)-1] {
			next, ok := node[seg].(map[string]any)
			if !ok {
				next = map[string]any{}
				node[seg] = next
			}
			node = next
		}
		last := c.Path[len(c.Path)-1]
		if c.To == nil {
			node[last] = nil
		} else {
			node[last] = CloneTree(c.To)
		}
	}
	return body
}

// Diff compares the intent with the applied configuration leaf by leaf on
// the parsed trees (never as text), in Walk's order (swp2 before
// swp10): a leaf of the intent that is absent or holds another value is a
// change; a set member (an empty object) is satisfied by the key being
// there. What the applied configuration has beyond the intent is never a
// change: it is the user's.
func Diff(intent, applied Tree) []Change {
	var out []Change
	paths, values := Leaves(intent)
	for i, p := range paths {
		want := values[i]
		have, present := Lookup(applied, p)
		switch {
		case !present:
			out = append(out, Change{Path: p, To: want, Op: applyplan.Add})
		case isEmptyObject(want):
			if _, ok := have.(map[string]any); !ok {
				out = append(out, Change{Path: p, From: have, To: want, Op: applyplan.Update})
			}
		case !JSONEqual(want, have):
			out = append(out, Change{Path: p, From: have, To: want, Op: applyplan.Update})
		}
	}
	return out
}

// Owns reports whether path matches one of Owned's patterns.
func Owns(path []string) bool {
	for _, q := range Owned() {
		if Path(path).Match(q) {
			return true
		}
	}
	return false
}

func isEmptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// Reconcile is the plan for one switch: Diff, and the removal of what
// rdggen wrote and the inventory no longer wants. The switch does not say
// who set a value, so rdggen keeps a record of what it wrote that it may
// later remove (Record: the gateway address of the data VLAN's
// interface and the routed pool's static routes) in the switch's own
// configuration, the description of that interface, and removes only what
// the record names (docs/nvue.md, "What rdggen removes"):
//
//   - the recorded gateway address, when the intent has another or none
//     (docker.routing back to hosts, or a new docker.gateway);
//   - each recorded route the intent no longer has (after a change of
//     docker.pool or of a host's subnet or address, and all of them when
//     docker.routing goes from switch to hosts): the whole route when its
//     only next hop is the recorded one, else that next hop only;
//   - the record itself, when the intent writes nothing to record.
//
// The intent gets the record of what it writes (unless the interface
// carries a description of the user's: then nothing is recorded, and the
// plan says so). Nothing else is removed, whatever its shape: an address
// equal to docker.gateway on another interface, a route into the pool via
// a host's data address that the record does not name. Where such
// configuration conflicts with the intent (the gateway address on another
// interface, another next hop beside rdggen's route), or may be an earlier
// rdggen's on a switch without a record, it is kept and named in Kept with
// the `nv unset` command that removes it.
func Reconcile(inv *inventory.Inventory, sw inventory.Switch, intent, applied Tree) Plan {
	var p Plan
	intent, asNote := foreignBGP(sw, intent, applied)
	intent, descNotes := userDescriptions(intent, applied)
	asNote = append(asNote, descNotes...)
	want, notes := WithRecord(intent, applied)
	notes = append(notes, asNote...)
	removals, kept := stale(inv, want, applied)
	removals = append(removals, otherBreakouts(want, applied)...)
	for _, path := range removals {
		from, _ := Lookup(applied, path)
		p.Changes = append(p.Changes, Change{Path: path, From: from, Op: applyplan.Remove})
	}
	for _, c := range Diff(want, applied) {
		if !Owns(c.Path) {
			// An intent outside Owned is a bug of its generator:
			// rdggen changes only the paths it owns.
			p.Warnings = append(p.Warnings, c.Key()+": not a path rdggen owns (Owned); left as it is")
			continue
		}
		p.Changes = append(p.Changes, c)
	}
	p.Kept = kept
	for _, k := range kept {
		p.Warnings = append(p.Warnings, PathString(k.Path)+": "+k.Reason+" (to remove it: "+k.Command+")")
	}
	p.Warnings = append(p.Warnings, breakoutWarnings(p.Changes)...)
	p.Warnings = append(p.Warnings, notes...)
	return p
}

// otherBreakouts are the breakout modes the applied configuration gives a
// port the intent splits in another mode: a port has one breakout, so the
// intent's mode replaces them (the port is rdggen's: the inventory cables
// its lanes or names it in switches[].breakout).
func otherBreakouts(intent, applied Tree) [][]string {
	var out [][]string
	ifaces, _ := intent["interface"].(map[string]any)
	for _, name := range stringKeys(ifaces) {
		want, ok := Lookup(ifaces, []string{name, "link", "breakout"})
		if !ok {
			continue
		}
		have, _ := Lookup(applied, []string{"interface", name, "link", "breakout"})
		hm, _ := have.(map[string]any)
		wm, _ := want.(map[string]any)
		for _, mode := range stringKeys(hm) {
			if _, wanted := wm[mode]; !wanted {
				out = append(out, []string{"interface", name, "link", "breakout", mode})
			}
		}
	}
	return out
}

// breakoutWarnings say of each breakout the plan sets that it flaps the
// port: the switch resets the port's links to apply a breakout (the
// parent and every lane go down, and the hosts cabled to them lose their
// link until the lanes come up; NVIDIA Cumulus Linux user guide, "Switch
// Port Attributes": a breakout change reloads the port's configuration).
func breakoutWarnings(changes []Change) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range changes {
		if len(c.Path) < 5 || c.Path[0] != "interface" || c.Path[2] != "link" || c.Path[3] != "breakout" || c.To == nil || seen[c.Path[1]] {
			continue
		}
		seen[c.Path[1]] = true
		port := quote.Terminal(c.Path[1])
		if c.Path[4] == BreakoutDisabled {
			out = append(out, fmt.Sprintf("interface %s link breakout disabled: the port goes down for good: the breakout of the port before it takes its logical ports (inventory: nothing is cabled to %s); apply it when that port's link may drop",
				port, port))
			continue
		}
		out = append(out, fmt.Sprintf("interface %s link breakout %s: the breakout flaps the port: the switch resets %s's links to apply it, and every lane (%ss0, %ss1, …) with the host or uplink on it goes down until the lanes come up again; apply it when that link may drop",
			port, quote.Terminal(c.Path[4]), port, port, port))
	}
	return out
}

// foreignBGP leaves BGP alone on a switch whose applied configuration
// already runs BGP as another AS than the inventory's (`router bgp
// autonomous-system`): rdggen would otherwise rewrite BGP configuration it
// did not write. The intent's `router bgp` and `vrf default router bgp`
// subtrees are dropped and a note names the AS and the two ways out. A
// user's own neighbors and networks under rdggen's AS are never touched
// either: Diff changes only what the intent names.
func foreignBGP(sw inventory.Switch, intent, applied Tree) (Tree, []string) {
	have, ok := Lookup(applied, []string{"router", "bgp", "autonomous-system"})
	want, wanted := Lookup(intent, []string{"router", "bgp", "autonomous-system"})
	if !ok || !wanted || JSONEqual(have, want) {
		return intent, nil
	}
	out := CloneTree(intent).(map[string]any)
	if r, ok := out["router"].(map[string]any); ok {
		delete(r, "bgp")
		if len(r) == 0 {
			delete(out, "router")
		}
	}
	if r, ok := Lookup(out, []string{"vrf", "default", "router"}); ok {
		delete(r.(map[string]any), "bgp")
	}
	return out, []string{fmt.Sprintf("the switch runs BGP as AS %v, not rdggen's AS %v for %s: rdggen writes no BGP setting here and leaves that configuration alone; change it yourself (nv set router bgp autonomous-system %v) or set switches[].asn to %v, then apply again",
		LeafText(have, true), LeafText(want, true), sw.Name, LeafText(want, true), LeafText(have, true))}
}

// userDescriptions leaves the user's port descriptions alone: the
// intent's description of a port is dropped where the applied
// configuration gives the port another description that is not in one of
// rdggen's forms (inventory.IsPortDescription), and a note names it;
// rdggen's own earlier one (a host recabled) is replaced.
func userDescriptions(intent, applied Tree) (Tree, []string) {
	ifaces, _ := intent["interface"].(map[string]any)
	var drop []string
	var notes []string
	for _, name := range stringKeys(ifaces) {
		want, ok := Lookup(ifaces, []string{name, "description"})
		if !ok {
			continue
		}
		have, present := Lookup(applied, []string{"interface", name, "description"})
		text, isText := have.(string)
		if !present || !isText || text == "" || JSONEqual(have, want) || inventory.IsPortDescription(text) {
			continue
		}
		drop = append(drop, name)
		notes = append(notes, fmt.Sprintf("interface %s carries the description %q, which is not one of rdggen's: rdggen leaves it (it would write %q)",
			quote.Terminal(name), quote.Terminal(text), LeafText(want, true)))
	}
	if len(drop) == 0 {
		return intent, nil
	}
	out := CloneTree(intent).(map[string]any)
	for _, name := range drop {
		delete(out["interface"].(map[string]any)[name].(map[string]any), "description")
	}
	return out, notes
}

// recordPath is where rdggen keeps its record: the description of the data
// VLAN's interface.
var recordPath = []string{"interface", SVI, "description"}

// IsRecord reports whether c changes rdggen's record (not the switch's
// behaviour).
func (c Change) IsRecord() bool { return slices.Equal(c.Path, recordPath) }

// switchRecord reads rdggen's record on the applied configuration: ok when
// the description is one; user when it is a description of someone else.
func switchRecord(applied Tree) (rec Record, ok bool, user string) {
	v, present := Lookup(applied, recordPath)
	text, isText := v.(string)
	if !present || !isText || text == "" {
		return rec, false, ""
	}
	if rec, ok = ParseRecord(text); ok {
		return rec, true, ""
	}
	return rec, false, text
}

// WithRecord is the intent with the record of what it writes in the data
// VLAN interface's description, when it writes something to record and
// that description is not the user's.
func WithRecord(intent, applied Tree) (Tree, []string) {
	rec := RecordOf(intent)
	if rec.IsZero() {
		return intent, nil
	}
	if _, _, user := switchRecord(applied); user != "" {
		return intent, []string{fmt.Sprintf("interface %s carries the description %q, which is not rdggen's record: rdggen does not record there what it writes, so it will not remove it later (an earlier gateway address or route is named, not removed)",
			SVI, quote.Terminal(user))}
	}
	text := rec.String()
	out := CloneTree(intent).(map[string]any)
	node := out
	for _, k := range recordPath[:len(recordPath)-1] {
		next, ok := node[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			node[k] = next
		}
		node = next
	}
	node[recordPath[len(recordPath)-1]] = text
	var notes []string
	if rec.Dropped > 0 {
		notes = append(notes, fmt.Sprintf("rdggen's record on interface %s holds %d of the %d routes (a description holds %d bytes): after a change, the %d others are named, not removed",
			SVI, len(rec.Routes)-rec.Dropped, len(rec.Routes), RecordMax, rec.Dropped))
	}
	return out, notes
}

var staticPath = []string{"vrf", "default", "router", "static"}

// addressFamilies are the keys an interface's addresses are under: ip
// (Cumulus Linux 5.14 and earlier) and ipv4 (5.15 and later).
var addressFamilies = []string{"ip", "ipv4"}

func stale(inv *inventory.Inventory, want, applied Tree) (removals [][]string, kept []Kept) {
	old, hasOld, _ := switchRecord(applied)
	rec := RecordOf(want)
	routes, _ := Lookup(applied, staticPath)
	rm, _ := routes.(map[string]any)
	wantRoutes, _ := Lookup(want, staticPath)
	wm, _ := wantRoutes.(map[string]any)
	routePath := func(dst string, rest ...string) []string {
		return append(append(append([]string(nil), staticPath...), dst), rest...)
	}
	if hasOld {
		if g := old.Gateway; g.IsValid() && g != rec.Gateway {
			for _, fam := range addressFamilies {
				path := []string{"interface", SVI, fam, "address", g.String()}
				if _, ok := Lookup(applied, path); ok {
					removals = append(removals, path)
				}
			}
		}
		for _, r := range old.Routes {
			dst, hop := r.Prefix.String(), r.Via.String()
			route, _ := rm[dst].(map[string]any)
			via, _ := route["via"].(map[string]any)
			if _, ok := via[hop]; !ok {
				continue // gone already
			}
			if _, wanted := Lookup(want, routePath(dst, "via", hop)); wanted {
				continue
			}
			if _, wanted := wm[dst]; !wanted && len(via) == 1 {
				removals = append(removals, routePath(dst))
			} else {
				removals = append(removals, routePath(dst, "via", hop))
			}
		}
		if rec.IsZero() {
			removals = append(removals, recordPath)
		}
	}
	recorded := func(dst, hop string) bool {
		for _, r := range old.Routes {
			if r.Prefix.String() == dst && r.Via.String() == hop {
				return true
			}
		}
		return false
	}
	// Conflicts: the gateway address on another interface.
	if g := rec.Gateway; g.IsValid() {
		ifaces, _ := applied["interface"].(map[string]any)
		for _, name := range stringKeys(ifaces) {
			for _, fam := range addressFamilies {
				if vrf, _ := Lookup(applied, []string{"interface", name, fam, "vrf"}); vrf != nil && vrf != "default" {
					continue // another VRF: no conflict with the default VRF's gateway
				}
				addrs, _ := Lookup(applied, []string{"interface", name, fam, "address"})
				am, _ := addrs.(map[string]any)
				for _, a := range stringKeys(am) {
					if pf, err := netip.ParsePrefix(a); err == nil && pf.Addr() == g.Addr() && name != SVI {
						path := []string{"interface", name, fam, "address", a}
						kept = append(kept, Kept{Path: path, Command: NVCommand(path, nil),
							Reason: fmt.Sprintf("the gateway address %s that rdggen puts on %s (docker.gateway) is also on %s, and rdggen did not write it there: left as it is", g.Addr(), SVI, name)})
					}
				}
			}
		}
	}
	hosts := map[netip.Addr]bool{}
	for _, h := range inv.Hosts {
		hosts[h.Data.Address.Addr()] = true
	}
	pool := inv.Docker.Pool
	for _, dst := range stringKeys(rm) {
		route, _ := rm[dst].(map[string]any)
		via, _ := route["via"].(map[string]any)
		if _, wanted := wm[dst]; wanted {
			// Another next hop beside rdggen's: the switch spreads the
			// subnet's traffic over both (ECMP).
			for _, hop := range stringKeys(via) {
				if _, ok := Lookup(want, routePath(dst, "via", hop)); ok || recorded(dst, hop) {
					continue
				}
				path := routePath(dst, "via", hop)
				kept = append(kept, Kept{Path: path, Command: NVCommand(path, nil),
					Reason: fmt.Sprintf("a next hop beside rdggen's route to %s that rdggen did not write: the switch spreads the subnet's traffic over both", dst)})
			}
			continue
		}
		if hasOld {
			continue // the record says what is rdggen's; the rest is the user's
		}
		pf, err := netip.ParsePrefix(dst)
		if err != nil || !pool.IsValid() || !pool.Contains(pf.Addr()) || pf.Bits() < pool.Bits() {
			continue
		}
		for _, hop := range stringKeys(via) {
			if a, err := netip.ParseAddr(hop); err == nil && hosts[a] {
				path := routePath(dst)
				kept = append(kept, Kept{Path: path, Command: NVCommand(path, nil),
					Reason: fmt.Sprintf("a route into docker.pool via %s's data address that rdggen has no record of (interface %s holds none): it may be an earlier rdggen's, or the user's; left as it is", hop, SVI)})
				break
			}
		}
	}
	return removals, kept
}

// Lookup is the value at path in t.
func Lookup(t Tree, path []string) (any, bool) {
	var v any = t
	for _, seg := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

// CloneTree is a deep copy of v (a Tree, a JSON array or a leaf).
func CloneTree(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = CloneTree(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = CloneTree(e)
		}
		return out
	}
	return v
}

func stringKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// JSONEqual compares two values as JSON (9216 == 9216.0).
func JSONEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
