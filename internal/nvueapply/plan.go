package nvueapply

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// Tree is an NVUE configuration tree as the API's JSON carries it (the
// shape of pkg/cumulus's intent): objects keyed by NVUE's names, leaves
// strings, numbers and booleans, a set member an empty object.
type Tree = map[string]any

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

// value is a leaf for a person: "lossless", "9216", "(set)" for a set
// member, "(unset)" for nothing.
func value(v any, present bool) string {
	if !present || v == nil {
		return "(unset)"
	}
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if len(x) == 0 {
			return "(set)"
		}
		// An object (a removed route): its leaves, "via[31.31.31.41].type=ipv4-address".
		paths, values := cumulus.Leaves(x)
		parts := make([]string, len(paths))
		for i, p := range paths {
			parts[i] = PathString(p) + "=" + value(values[i], true)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// String is the plan line: "qos.roce.mode: lossy → lossless".
func (c Change) String() string {
	return fmt.Sprintf("%s: %s → %s", c.Key(), value(c.From, c.From != nil), value(c.To, c.To != nil))
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
			words = append(words, value(to, true))
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
			node[last] = clone(c.To)
		}
	}
	return body
}

// Diff compares the intent with the applied configuration leaf by leaf on
// the parsed trees (never as text), in cumulus.Walk's order (swp2 before
// swp10): a leaf of the intent that is absent or holds another value is a
// change; a set member (an empty object) is satisfied by the key being
// there. What the applied configuration has beyond the intent is never a
// change: it is the user's.
func Diff(intent, applied Tree) []Change {
	var out []Change
	paths, values := cumulus.Leaves(intent)
	for i, p := range paths {
		want := values[i]
		have, present := lookup(applied, p)
		switch {
		case !present:
			out = append(out, Change{Path: p, To: want, Op: applyplan.Add})
		case isEmptyObject(want):
			if _, ok := have.(map[string]any); !ok {
				out = append(out, Change{Path: p, From: have, To: want, Op: applyplan.Update})
			}
		case !jsonEqual(want, have):
			out = append(out, Change{Path: p, From: have, To: want, Op: applyplan.Update})
		}
	}
	return out
}

// owned reports whether path matches one of cumulus.Owned's patterns.
func owned(path []string) bool {
	for _, q := range cumulus.Owned() {
		if cumulus.Path(path).Match(q) {
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
// rdggen configured and the inventory no longer wants. The switch does not
// say who set a value, so ownership is decided from the inventory, as for
// ONYX (docs/rules.md, "What rdggen made"):
//
//   - a static route of the default VRF is rdggen's when its prefix lies
//     inside docker.pool and every next hop is the data address of a host
//     of the inventory; one the intent does not have is removed (after a
//     change of docker.pool or of a host's subnet, and all of them when
//     docker.routing goes from switch to hosts). A route into the pool
//     with another next hop is kept and named;
//   - the gateway address (docker.gateway, set in both modes) on a VLAN
//     interface is rdggen's; when the intent has no gateway, it is removed.
//
// Nothing else is removed.
func Reconcile(inv *inventory.Inventory, sw inventory.Switch, intent, applied Tree) Plan {
	var p Plan
	removals, kept := stale(inv, intent, applied)
	for _, path := range removals {
		from, _ := lookup(applied, path)
		p.Changes = append(p.Changes, Change{Path: path, From: from, Op: applyplan.Remove})
	}
	for _, c := range Diff(intent, applied) {
		if !owned(c.Path) {
			// An intent outside cumulus.Owned is a bug of its generator:
			// rdggen changes only the paths it owns.
			p.Warnings = append(p.Warnings, c.Key()+": not a path rdggen owns (cumulus.Owned); left as it is")
			continue
		}
		p.Changes = append(p.Changes, c)
	}
	p.Kept = kept
	for _, k := range kept {
		p.Warnings = append(p.Warnings, PathString(k.Path)+": "+k.Reason+" (to remove it: "+k.Command+")")
	}
	return p
}

func stale(inv *inventory.Inventory, intent, applied Tree) (removals [][]string, kept []Kept) {
	hosts := map[netip.Addr]bool{}
	for _, h := range inv.Hosts {
		hosts[h.Data.Address.Addr()] = true
	}
	pool := inv.Docker.Pool
	inPool := func(p netip.Prefix) bool {
		return pool.IsValid() && pool.Contains(p.Addr()) && p.Bits() >= pool.Bits()
	}
	staticPath := []string{"vrf", "default", "router", "static"}
	routes, _ := lookup(applied, staticPath)
	wantRoutes, _ := lookup(intent, staticPath)
	rm, _ := routes.(map[string]any)
	wm, _ := wantRoutes.(map[string]any)
	for _, dst := range sortedKeys(rm) {
		if _, wanted := wm[dst]; wanted {
			continue
		}
		p, err := netip.ParsePrefix(dst)
		if err != nil || !inPool(p) {
			continue
		}
		route, _ := rm[dst].(map[string]any)
		via, _ := route["via"].(map[string]any)
		ours, foreign := 0, 0
		for hop := range via {
			if a, err := netip.ParseAddr(hop); err == nil && hosts[a] {
				ours++
			} else {
				foreign++
			}
		}
		path := append(append([]string(nil), staticPath...), dst)
		switch {
		case ours > 0 && foreign == 0:
			removals = append(removals, path)
		case ours > 0:
			kept = append(kept, Kept{Path: path, Reason: "a route into docker.pool via a host's data address and via addresses that are no host's: it may be rdggen's, but is not shown to be",
				Command: NVCommand(path, nil)})
		}
	}
	gw := inv.Docker.Gateway
	if gw.IsValid() && !hasGateway(intent, gw) {
		ifaces, _ := applied["interface"].(map[string]any)
		for _, name := range sortedKeys(ifaces) {
			if !strings.HasPrefix(name, "vlan") {
				continue
			}
			addrs, _ := lookup(applied, []string{"interface", name, "ip", "address"})
			am, _ := addrs.(map[string]any)
			for _, a := range sortedKeys(am) {
				if p, err := netip.ParsePrefix(a); err == nil && p.Addr() == gw {
					removals = append(removals, []string{"interface", name, "ip", "address", a})
				}
			}
		}
	}
	return removals, kept
}

// hasGateway reports whether the intent puts address gw on an interface.
func hasGateway(intent Tree, gw netip.Addr) bool {
	ifaces, _ := intent["interface"].(map[string]any)
	for name := range ifaces {
		addrs, _ := lookup(intent, []string{"interface", name, "ip", "address"})
		am, _ := addrs.(map[string]any)
		for a := range am {
			if p, err := netip.ParsePrefix(a); err == nil && p.Addr() == gw {
				return true
			}
		}
	}
	return false
}

// lookup is the value at path in t.
func lookup(t Tree, path []string) (any, bool) {
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

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonEqual compares two values as JSON (9216 == 9216.0).
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
