package dockernet

import (
	"bytes"
	"net/netip"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/netplan"
)

// Route is one static route on a host to another host's container subnet
// (docs/rules.md#docker-networking): "Dst via Via dev Dev".
type Route struct {
	// Dst is the other host's container subnet, e.g. 172.16.42.0/24.
	Dst netip.Prefix
	// Via is the other host's data address, an on-link next hop (validation
	// guarantees one shared data network), e.g. 31.31.31.42.
	Via netip.Addr
	// Dev is this host's data interface, e.g. enp1f0.
	Dev string
	// Host names the other host, for comments and plans.
	Host string
}

// RouteTo is the destination and next hop of the route that every other host
// uses to reach host o's containers: o's container subnet via o's data address.
func RouteTo(o *inventory.Host) (dst netip.Prefix, via netip.Addr) {
	return o.Subnet, o.Data.Address.Addr()
}

// Routes returns host h's routes: one per other host, in inventory order. It
// never contains h's own subnet: that route would replace docker0's connected
// route and cut h's containers off (docs/rules.md#routes).
//
// With docker.routing: switch it is one route instead, PoolRoute: the whole
// pool via the switch's gateway address. h's own subnet is inside the pool,
// but docker0's connected route to it is more specific and wins.
func Routes(inv *inventory.Inventory, h *inventory.Host) []Route {
	if inv.IsFabric() {
		return FabricRoutes(inv, h)
	}
	if inv.Docker.SwitchRouted() {
		return []Route{PoolRoute(inv, h)}
	}
	out := make([]Route, 0, len(inv.Hosts))
	for i := range inv.Hosts {
		o := &inv.Hosts[i]
		if o.Name == h.Name {
			continue
		}
		dst, via := RouteTo(o)
		out = append(out, Route{Dst: dst, Via: via, Dev: h.DataInterface, Host: o.Name})
	}
	return out
}

// PoolRoute is host h's one route with docker.routing: switch: docker.pool
// via the switch's address on the data network (docker.gateway), on h's
// data interface. The switch routes each host's subnet on to that host.
//
// In a leaf-spine fabric the next hop is h's leaf's gateway (the leaf's
// address on h's data subnet), and the leaf routes the subnet on.
func PoolRoute(inv *inventory.Inventory, h *inventory.Host) Route {
	if leaf := inv.LeafOf(h); leaf != nil {
		return Route{Dst: inv.Docker.Pool, Via: leaf.Fabric.Gateway, Dev: h.DataInterface, Host: "the container pool, routed by leaf " + leaf.Name}
	}
	name := "the switch"
	if sw := inv.GatewaySwitch(); sw != nil {
		name = "switch " + sw.Name
	}
	return Route{Dst: inv.Docker.Pool, Via: inv.Docker.Gateway, Dev: h.DataInterface, Host: "the container pool, routed by " + name}
}

// FabricRoutes are host h's routes in a leaf-spine fabric: the container
// pool (PoolRoute) and each other leaf's data subnet, all via h's leaf's
// gateway, in the leaves' file order. The other leaves' subnets are what
// RoCE v2 between VFs on different leaves is routed through (the data
// addresses are the RoCE endpoints); h's own subnet is on-link. The
// number of routes grows with the leaves, not with the hosts.
func FabricRoutes(inv *inventory.Inventory, h *inventory.Host) []Route {
	pool := PoolRoute(inv, h)
	out := []Route{pool}
	for _, n := range inv.OtherLeafSubnets(h) {
		out = append(out, Route{Dst: n, Via: pool.Via, Dev: h.DataInterface, Host: "another leaf's data subnet, via leaf " + h.Data.Switch})
	}
	return out
}

// Command is the route as an `ip -batch` line (the arguments of `ip`):
// "route replace 172.16.42.0/24 via 31.31.31.42 dev enp1f0". `replace` is
// idempotent where `add` fails on a re-run with "File exists".
func (r Route) Command() string {
	return "route replace " + r.Dst.String() + " via " + r.Via.String() + " dev " + r.Dev
}

// routeTable holds, per host, the text every other host's route lines repeat
// ("172.16.42.0/24 via 31.31.31.42") and the netplan list of the same
// routes, whose entries are made once, so that n hosts' n-1 routes each are
// written without formatting n² addresses.
//
// With docker.routing: switch every host has the same one route instead,
// pool, and the per-host fragments are not made.
type routeTable struct {
	frag     []string
	netplan  *netplan.RouteList // the same routes for netplan, in inventory order
	fragLen  int                // Σ len(frag)
	namesLen int                // Σ len(host name)
	pool     *Route             // the pool route (Dev unset), in switch-routed mode
	fabric   bool               // a leaf-spine fabric: each host's Routes, made per host
}

func newRouteTable(inv *inventory.Inventory) *routeTable {
	if inv.IsFabric() {
		return &routeTable{fabric: true}
	}
	if inv.Docker.SwitchRouted() {
		r := PoolRoute(inv, &inventory.Host{})
		return &routeTable{pool: &r}
	}
	t := &routeTable{frag: make([]string, len(inv.Hosts))}
	np := make([]netplan.Route, len(inv.Hosts))
	for i := range inv.Hosts {
		dst, via := RouteTo(&inv.Hosts[i])
		t.frag[i] = dst.String() + " via " + via.String()
		np[i] = netplan.Route{To: dst, Via: via}
		t.fragLen += len(t.frag[i])
		t.namesLen += len(inv.Hosts[i].Name)
	}
	t.netplan = netplan.NewRouteList(np)
	return t
}

// batchSize is the exact length of ipBatchLines' output for host h.
func (t *routeTable) batchSize(inv *inventory.Inventory, h *inventory.Host, comments bool) int {
	if t.fabric {
		return 256 * (1 + len(inv.Switches))
	}
	if t.pool != nil {
		return 256
	}
	n := len(inv.Hosts) - 1
	size := t.fragLen - len(t.frag[h.Index]) + n*len("route replace  dev \n") + n*len(h.DataInterface)
	if comments {
		size += t.namesLen - len(h.Name) + n*len("  # ")
	}
	return size
}

// lineFunc writes one route line into b; i is the other host's index.
type lineFunc func(b *bytes.Buffer, i int)

// eachOther calls line for every host but self, in inventory order.
func eachOther(inv *inventory.Inventory, self int, b *bytes.Buffer, line lineFunc) {
	for i := range inv.Hosts {
		if i != self {
			line(b, i)
		}
	}
}

// ipBatchLines writes host h's routes as `ip -batch` lines (Route.Command),
// each with a trailing "# <host>" comment when comments is set.
func (t *routeTable) ipBatchLines(inv *inventory.Inventory, h *inventory.Host, b *bytes.Buffer, comments bool) {
	if t.fabric {
		for _, r := range Routes(inv, h) {
			b.WriteString(r.Command())
			if comments {
				b.WriteString("  # " + r.Host)
			}
			b.WriteByte('\n')
		}
		return
	}
	if t.pool != nil {
		r := *t.pool
		r.Dev = h.DataInterface
		b.WriteString(r.Command())
		if comments {
			b.WriteString("  # " + r.Host)
		}
		b.WriteByte('\n')
		return
	}
	dev := " dev " + h.DataInterface
	eachOther(inv, h.Index, b, func(b *bytes.Buffer, i int) {
		b.WriteString("route replace ")
		b.WriteString(t.frag[i])
		b.WriteString(dev)
		if comments {
			b.WriteString("  # ")
			b.WriteString(inv.Hosts[i].Name)
		}
		b.WriteByte('\n')
	})
}

// netplanRoutes is host h's routes as a netplan routes list: with
// routing: hosts the table's list less h's own route, whose entries every
// host's file shares.
func (t *routeTable) netplanRoutes(inv *inventory.Inventory, h *inventory.Host) netplan.Routes {
	if t.fabric || t.pool != nil {
		var rs []netplan.Route
		for _, r := range Routes(inv, h) {
			rs = append(rs, netplan.Route{To: r.Dst, Via: r.Via})
		}
		return netplan.NewRoutes(rs...)
	}
	return t.netplan.Except(h.Index)
}
