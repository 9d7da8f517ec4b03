package hostapply

import (
	"net/netip"

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
