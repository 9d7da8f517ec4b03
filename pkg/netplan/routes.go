package netplan

import (
	"iter"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// Route is one static route of a definition: To via Via, a next hop on the
// interface's own network, or To on the link itself (no Via, Scope link).
// Unset (zero) fields other than To are left out: yaml.v3 writes a Route
// through MarshalYAML, in the order to, via, scope, metric, table.
type Route struct {
	// To is the destination, e.g. 172.16.42.0/24 (0.0.0.0/0: the default
	// route).
	To netip.Prefix `yaml:"to"`
	// Via is the next hop's address, e.g. 31.31.31.42; the zero Addr
	// leaves it out (a route on the link, with Scope link).
	Via netip.Addr `yaml:"via"`
	// Scope is the route's scope: "" (unsaid: netplan's default, global
	// with a Via, link without one), ScopeLink, "host" or "global".
	Scope string `yaml:"scope,omitempty"`
	// Metric is the route's metric (the kernel's priority: among routes
	// to one destination in one table the lowest wins); 0 leaves it
	// unsaid (netplan requires a positive value; the kernel's default
	// for IPv4 is 0).
	Metric int `yaml:"metric,omitempty"`
	// Table is the routing table the route goes into, 1…2³²−1; 0 leaves
	// it unsaid: the main table (254). See /etc/iproute2/rt_tables for
	// the numbers the system reserves (253 default, 254 main, 255 local).
	Table int `yaml:"table,omitempty"`
}

// ScopeLink is the scope of a route to a destination on the link itself
// (no next hop), as `ip route … scope link` and netplan's `scope: link`.
const ScopeLink = "link"

// routeYAML is a Route as yaml.v3 writes it: Via left out when unset
// (yaml.v3's omitempty cannot tell a netip.Addr's zero value, whose fields
// are unexported, from a set one).
type routeYAML struct {
	To     netip.Prefix `yaml:"to"`
	Via    *netip.Addr  `yaml:"via,omitempty"`
	Scope  string       `yaml:"scope,omitempty"`
	Metric int          `yaml:"metric,omitempty"`
	Table  int          `yaml:"table,omitempty"`
}

// MarshalYAML writes r as netplan reads a route: to, then via (left out
// when unset), scope, metric and table (each left out when zero). It never
// fails.
func (r Route) MarshalYAML() (any, error) {
	out := routeYAML{To: r.To, Scope: r.Scope, Metric: r.Metric, Table: r.Table}
	if r.Via.IsValid() {
		out.Via = &r.Via
	}
	return out, nil
}

// RouteList is a list of routes with each one's YAML entry made once, for
// routes that many documents list: in a cluster whose hosts route to each
// other's container subnets, the route to a host is in every other host's
// file (Except). It is safe for concurrent use; its routes must not change
// after NewRouteList.
type RouteList struct {
	routes []Route
	mu     sync.Mutex
	text   map[string]*entries // by the indentation of the list's "- " lines
}

// entries are a RouteList's YAML entries at one indentation, one after
// the other in one string.
type entries struct {
	text string // every entry, each line indented and ended by "\n"
	off  []int  // entry i is text[off[i]:off[i+1]]
}

// entry is the i-th entry.
func (e *entries) entry(i int) string { return e.text[e.off[i]:e.off[i+1]] }

// NewRouteList returns a RouteList of routes, in that order.
func NewRouteList(routes []Route) *RouteList { return &RouteList{routes: routes} }

// All is every route of l.
func (l *RouteList) All() Routes { return Routes{list: l} }

// Except is every route of l but the one at index i (0 ≤ i < the list's
// length): a host's routes to every other host.
func (l *RouteList) Except(i int) Routes { return Routes{list: l, omit: i + 1} }

// entries returns l's entries with each line indented by indent (spaces).
func (l *RouteList) entries(indent string) *entries {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.text[indent]; ok {
		return e
	}
	e := &entries{off: make([]int, 0, len(l.routes)+1)}
	b := make([]byte, 0, len(l.routes)*(2*len(indent)+48))
	for _, r := range l.routes {
		e.off = append(e.off, len(b))
		b = appendEntry(b, indent, r)
	}
	e.off = append(e.off, len(b))
	e.text = string(b)
	if l.text == nil {
		l.text = map[string]*entries{}
	}
	l.text[indent] = e
	return e
}

// appendEntry appends r as one entry of a route list, each line indented
// by indent: what yaml.v3 writes for the one-element sequence []Route{r}
// ("- to: …\n  via: …\n", then scope, metric and table when set). An IPv4
// route is written from its addresses' text and its numbers' digits:
// netip writes an IPv4 prefix or address as digits, dots and a slash, an
// int is an optional minus and digits, and the scopes netplan knows are
// plain words, all of which yaml.v3 writes as plain scalars
// (TestEntryIsYAMLv3 compares the two); anything else is yaml.v3's own
// encoding.
func appendEntry(b []byte, indent string, r Route) []byte {
	if r == (Route{To: r.To, Via: r.Via, Scope: r.Scope, Metric: r.Metric, Table: r.Table}) &&
		r.To.IsValid() && r.To.Addr().Is4() && (r.Via.Is4() || !r.Via.IsValid()) && plainScope(r.Scope) {
		b = append(append(b, indent...), "- to: "...)
		b = append(r.To.AppendTo(b), '\n')
		if r.Via.IsValid() {
			b = append(append(b, indent...), "  via: "...)
			b = append(r.Via.AppendTo(b), '\n')
		}
		if r.Scope != "" {
			b = append(append(append(b, indent...), "  scope: "...), r.Scope...)
			b = append(b, '\n')
		}
		if r.Metric != 0 {
			b = append(append(b, indent...), "  metric: "...)
			b = append(strconv.AppendInt(b, int64(r.Metric), 10), '\n')
		}
		if r.Table != 0 {
			b = append(append(b, indent...), "  table: "...)
			b = append(strconv.AppendInt(b, int64(r.Table), 10), '\n')
		}
		return b
	}
	for line := range strings.Lines(string(Marshal([]Route{r}))) {
		b = append(append(b, indent...), line...)
	}
	return b
}

// Routes is the routes of one definition: a RouteList, or all of it but
// one route. The zero Routes is empty. yaml.v3 writes it as a sequence of
// Route (MarshalYAML).
type Routes struct {
	list *RouteList
	omit int // 1 + the index of the list's route left out; 0: none
	mark int // in a document being written by AppendYAML: this list's number, 1…
}

// NewRoutes returns routes as Routes, in that order.
func NewRoutes(routes ...Route) Routes {
	if len(routes) == 0 {
		return Routes{}
	}
	return NewRouteList(routes).All()
}

// Len is the number of routes.
func (r Routes) Len() int {
	switch {
	case r.list == nil:
		return 0
	case r.omit > 0:
		return len(r.list.routes) - 1
	}
	return len(r.list.routes)
}

// IsZero reports whether r has no routes: yaml.v3's omitempty leaves an
// empty list out (netplan refuses a routes key without a sequence).
func (r Routes) IsZero() bool { return r.Len() == 0 && r.mark == 0 }

// All yields the routes in order.
func (r Routes) All() iter.Seq[Route] {
	return func(yield func(Route) bool) {
		if r.list == nil {
			return
		}
		for i, rt := range r.list.routes {
			if i+1 != r.omit && !yield(rt) {
				return
			}
		}
	}
}

// MarshalYAML writes r as a sequence of Route; within AppendYAML, a
// placeholder that it replaces with the list's entries.
func (r Routes) MarshalYAML() (any, error) {
	if r.mark > 0 {
		return []string{markText(r.mark)}, nil
	}
	out := make([]Route, 0, r.Len())
	for rt := range r.All() {
		out = append(out, rt)
	}
	return out, nil
}

// plainScope reports whether yaml.v3 writes scope as a plain scalar that
// appendEntry may write itself: "" (left out) or a scope netplan knows.
func plainScope(scope string) bool {
	switch scope {
	case "", ScopeLink, "host", "global":
		return true
	}
	return false
}
