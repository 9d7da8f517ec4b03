package hostapply

import (
	"net/netip"
	"strings"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// planRoutes plans the routes into the container pool: what is missing or
// different is replaced, stale routes via the data interface are deleted.
func (p *plan) planRoutes(inv *inventory.Inventory, st *hostState) {
	h := p.d.Host
	d := p.d
	// Routes: replace what is missing or different, delete stale routes into
	// the pool via the data interface (a host that left the inventory).
	table := parseRoutes(st.Routes.Out)
	byDst := map[netip.Prefix][]routeEntry{}
	for _, e := range table {
		byDst[e.Dst] = append(byDst[e.Dst], e)
	}
	want := map[netip.Prefix]bool{}
	for _, r := range d.Routes {
		want[r.Dst] = true
		ok := false
		for _, e := range byDst[r.Dst] {
			ok = ok || (e.Via == r.Via && e.Dev == r.Dev)
		}
		if !ok {
			p.routes = append(p.routes, routeChange{Route: r, Was: byDst[r.Dst]})
		}
	}
	pool := inv.Docker.Pool
	for _, e := range table {
		if e.Via.IsValid() && e.Dev == h.DataInterface && pool.Contains(e.Dst.Addr()) && e.Dst.Bits() >= pool.Bits() && !want[e.Dst] {
			p.stale = append(p.stale, e)
		}
	}
}

// applyRoutes appends the routes step (one ip -batch).
func (p *plan) applyRoutes(w *remote.Script) {
	if len(p.routes)+len(p.stale) > 0 {
		// New routes first, then the stale ones go: switching the routing
		// mode (per-host routes <-> one route for the pool) never leaves a
		// moment without a path between the containers.
		var b strings.Builder
		for _, r := range p.routes {
			b.WriteString(r.Route.Command() + "\n")
		}
		for _, e := range p.stale {
			b.WriteString("route del " + e.String() + "\n")
		}
		w.Line("step routes ip -force -batch ", w.Data([]byte(b.String())))
	}
}
