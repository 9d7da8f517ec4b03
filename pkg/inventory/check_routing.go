package inventory

// The container routing rules: docker.routing and docker.gateway. They run
// after every host is resolved (build calls routing last), and read only the
// resolved Inventory, so that they depend on no other check's helpers.

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"sort"
	"strings"
)

func (c *checker) routing(r *DockerSpec) {
	if r == nil {
		r = &DockerSpec{}
	}
	inv := c.inv
	d := &inv.Docker
	d.Routing = RoutingHosts
	if r.Routing != nil {
		switch *r.Routing {
		case RoutingHosts, RoutingSwitch:
			d.Routing = *r.Routing
		default:
			c.errf("docker.routing", "%q is neither %q (each host routes to every other host's container subnet, the guide's design) nor %q (the switch routes the container pool: one route on each host, one per host on the switch)",
				*r.Routing, RoutingHosts, RoutingSwitch)
		}
	}
	switched := d.SwitchRouted()
	dataNet, haveNet := routingDataNet(inv)

	// The gateway address: written, or derived from the data network.
	if r.Gateway != nil {
		a, err := netip.ParseAddr(*r.Gateway)
		switch {
		case err != nil || !a.Is4():
			c.errf("docker.gateway", "%q is not an IPv4 address like 31.31.31.254 (the switch's address on the data network)", *r.Gateway)
		case !haveNet:
			// The data addresses have their own findings.
		case !dataNet.Contains(a):
			c.errf("docker.gateway", "%s is not on the data network %s: the hosts reach the container pool through it, so it must be on-link", a, dataNet)
		case dataNet.Bits() < 31 && (a == dataNet.Addr() || a == broadcastOf(dataNet)):
			c.errf("docker.gateway", "%s is the network or broadcast address of %s, not a host address", a, dataNet)
		default:
			if at := c.gatewayTaken(a); at != "" {
				c.errf("docker.gateway", "%s is %s: the switch needs an address of its own on the data network", a, at)
			} else {
				d.Gateway = a
			}
		}
	} else if haveNet {
		a, ok := DefaultGateway(dataNet)
		at := ""
		if ok {
			at = c.gatewayTaken(a)
		}
		switch {
		case at == "" && ok:
			d.Gateway = a
		case !switched:
			// Unused in hosts mode: no gateway, and nothing to report.
		case !ok:
			c.errf("docker.routing", "the data network %s has no address to spare for the switch (routing: switch needs one; a /30 or larger network): widen the data network or use routing: hosts", dataNet)
		default:
			c.errf("docker.routing", "the switch's gateway address defaults to %s, the last host address of the data network %s, but that is %s: set docker.gateway to a free address on %s",
				a, dataNet, at, dataNet)
		}
	}
	if !switched {
		return
	}

	// One switch must reach every host: it carries the gateway address and
	// every host's route.
	bySwitch := map[string]int{}
	for _, h := range inv.Hosts {
		if h.Data.Switch != "" {
			bySwitch[h.Data.Switch]++
		}
	}
	if len(bySwitch) > 1 {
		names := make([]string, 0, len(bySwitch))
		for n := range bySwitch {
			names = append(names, n)
		}
		sort.Strings(names)
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %d", n, bySwitch[n]))
		}
		c.errf("docker.routing", "routing: switch makes one switch the gateway of every host and holds every host's route, but the hosts are cabled to %d switches (hosts per switch: %s): cable every data port to one switch, or use routing: hosts (each host routes to the others itself)",
			len(bySwitch), strings.Join(parts, ", "))
	}

	// Every host sends the whole pool to the switch: nothing else the hosts
	// need may be inside it.
	pool := d.Pool
	if haveNet && pool.Overlaps(dataNet) {
		c.errf("docker.routing", "the pool %s overlaps the data network %s: with routing: switch every host sends the whole pool to the switch; use a pool that holds only container subnets", pool, dataNet)
	}
	for _, o := range routingOthers(inv) {
		if pool.Contains(o.addr) {
			c.errf("docker.routing", "the pool %s contains %s (%s): with routing: switch every host would send it to the switch; use a pool that holds only container subnets", pool, o.addr, o.what)
		}
	}
}

// routingDataNet is the data network most hosts are on; ok is false when no
// host has a valid data address (those are reported elsewhere).
func routingDataNet(inv *Inventory) (netip.Prefix, bool) {
	count := map[netip.Prefix]int{}
	best := netip.Prefix{}
	for _, h := range inv.Hosts {
		if !h.Data.Address.IsValid() {
			continue
		}
		n := h.Data.Address.Masked()
		count[n]++
		if !best.IsValid() || count[n] > count[best] {
			best = n
		}
	}
	return best, best.IsValid()
}

// broadcastOf is the last address of the IPv4 network n.
func broadcastOf(n netip.Prefix) netip.Addr {
	b := n.Masked().Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= 1<<(32-n.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// gatewayTaken names the machine whose data or management address a is
// ("hosts[3]'s (clx-mld-44) data address"), or "" when a is free.
func (c *checker) gatewayTaken(a netip.Addr) string {
	for i, h := range c.inv.Hosts {
		if h.Data.Address.IsValid() && h.Data.Address.Addr() == a {
			return fmt.Sprintf("hosts[%d]'s (%s) data address", i, h.Name)
		}
	}
	for _, o := range routingOthers(c.inv) {
		if o.addr == a && o.mgmt {
			return o.what
		}
	}
	return ""
}

// routedOther is an address the hosts reach that is not a container.
type routedOther struct {
	addr netip.Addr
	what string
	mgmt bool // a machine's management address
}

// routingOthers lists the addresses written as IP literals that the hosts
// must reach outside the container pool: management endpoints of hosts and
// switches, vCenter and the containers' DNS servers.
func routingOthers(inv *Inventory) []routedOther {
	var out []routedOther
	ip := func(endpoint string) (netip.Addr, bool) {
		if h, _, err := net.SplitHostPort(endpoint); err == nil {
			endpoint = h
		}
		a, err := netip.ParseAddr(endpoint)
		return a.Unmap(), err == nil
	}
	for i, h := range inv.Hosts {
		if a, ok := ip(h.Mgmt); ok {
			out = append(out, routedOther{a, fmt.Sprintf("hosts[%d]'s (%s) management address", i, h.Name), true})
		}
	}
	for i, s := range inv.Switches {
		if a, ok := ip(s.Mgmt); ok {
			out = append(out, routedOther{a, fmt.Sprintf("switches[%d]'s (%s) management address", i, s.Name), true})
		}
	}
	if u, err := url.Parse(inv.VCenter); err == nil && inv.VCenter != "" {
		if a, ok := ip(u.Hostname()); ok {
			out = append(out, routedOther{a, "vCenter's address", false})
		}
	}
	for i, a := range inv.Docker.DNS {
		out = append(out, routedOther{a.Unmap(), fmt.Sprintf("docker.dns[%d]", i), false})
	}
	return out
}
