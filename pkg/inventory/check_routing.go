package inventory

// The container routing rules: docker.routing and docker.gateway. They run
// after every host is resolved (build calls routing last), and read the
// resolved Inventory.

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
)

func (c *checker) routing(r *DockerSpec) {
	if r == nil {
		r = &DockerSpec{}
	}
	if c.inv.IsFabric() {
		c.fabricRouting(r)
		return
	}
	inv := c.inv
	d := &inv.Docker
	d.Routing = RoutingHosts
	if r.Routing != nil {
		switch RoutingMode(*r.Routing) {
		case RoutingHosts, RoutingSwitch:
			d.Routing = RoutingMode(*r.Routing)
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
				if !switched {
					c.warnf("docker.gateway", "%s is not used with routing: hosts (the default), where every host routes to the others itself: set docker.routing: switch to route the pool through it, or remove the key (apply uses it only to find and remove this address on the switch, should rdggen have put it there in routing: switch mode)", a)
				}
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
			if free, ok := c.freeDataAddr(dataNet); ok {
				c.errf("docker.routing", "routing: switch needs an address for the switch on the data network %s, and docker.gateway defaults to the last host address of a /30 or larger network, which a /%d does not have: set docker.gateway to a free address (%s is free), or widen the data network", dataNet, dataNet.Bits(), free)
			} else {
				c.errf("docker.routing", "the data network %s has no address to spare for the switch (routing: switch needs one; every address is a host's): widen the data network or use routing: hosts", dataNet)
			}
		default:
			c.errf("docker.routing", "the switch's gateway address defaults to %s, the last host address of the data network %s, but that is %s: set docker.gateway to a free address on %s",
				a, dataNet, at, dataNet)
		}
	}
	if !switched {
		c.dnsInSubnets()
		if n := len(inv.Hosts); n > RoutingHostsWarnAbove {
			c.warnf("docker.routing", "routing: hosts with %d hosts gives every host %d routes to the other hosts' container subnets (and as many NAT exemptions and firewall rules): the generated tree is about %s, and it grows with the square of the hosts. With docker.routing: switch each host has one route and the tree is about %s (the switch then routes the pool: every data port on one switch)",
				n, n-1, approxBytes(EstimateTreeBytes(n, RoutingHosts)), approxBytes(EstimateTreeBytes(n, RoutingSwitch)))
		}
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

// gatewayTaken names what else has address a: a host's data address
// ("hosts[3]'s (clx-mld-44) data address"), a machine's management address,
// vCenter's address (when the URL's host is an IP address) or a DNS
// server ("the address of docker.dns[0]"); "" when a is free.
func (c *checker) gatewayTaken(a netip.Addr) string {
	for i, h := range c.inv.Hosts {
		if h.Data.Address.IsValid() && h.Data.Address.Addr() == a {
			return fmt.Sprintf("hosts[%d]'s (%s) data address", i, h.Name)
		}
	}
	for _, o := range routingOthers(c.inv) {
		if o.addr == a {
			if o.mgmt {
				return o.what
			}
			return "the address of " + o.what
		}
	}
	return ""
}

// freeDataAddr is an address of the data network n (a /31 or /32, which
// DefaultGateway cannot serve) that no host's data address and no other
// address of the inventory is.
func (c *checker) freeDataAddr(n netip.Prefix) (netip.Addr, bool) {
	for a := n.Masked().Addr(); n.Contains(a); a = a.Next() {
		if c.gatewayTaken(a) == "" {
			return a, true
		}
	}
	return netip.Addr{}, false
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
	if a, ok := vcenterAddr(inv.VCenter); ok {
		out = append(out, routedOther{a, "vcenter", false})
	}
	for i, a := range inv.Docker.DNS {
		out = append(out, routedOther{a.Unmap(), fmt.Sprintf("docker.dns[%d]", i), false})
	}
	return out
}

// dnsInSubnets refuses, with routing: hosts, a DNS server inside a host's
// container subnet: every other host routes that subnet to the host's
// docker0, so the server would be a container's address (or unreachable).
// A management address there is crossHost's finding; with routing: switch
// the whole pool is refused (routing).
func (c *checker) dnsInSubnets() {
	dns := c.inv.Docker.DNS
	if len(dns) == 0 {
		return
	}
	list := make([]ownedAddr, len(dns))
	for k, a := range dns {
		list[k] = ownedAddr{addr: a.Unmap()}
	}
	in := newAddrIndex(list)
	reported := make([]bool, len(dns))
	for i, h := range c.inv.Hosts {
		if !h.Subnet.IsValid() {
			continue
		}
		for _, k := range in.within(h.Subnet) {
			if reported[k] {
				continue
			}
			reported[k] = true
			c.errf(fmt.Sprintf("docker.dns[%d]", k), "%s is inside hosts[%d]'s (%s) container subnet %s: the other hosts route that subnet to %s's docker0, so the containers would not reach a DNS server there; use one outside the container subnets",
				dns[k], i, h.Name, h.Subnet, h.Name)
		}
	}
}

// RoutingHostsWarnAbove is the number of hosts above which an inventory
// with routing: hosts gets a warning. Every host then routes to every
// other host's container subnet, so the generated tree holds n × (n − 1)
// routes (with as many NAT exemptions and firewall rules): on
// internal/render's benchmark clusters 146 MB at 1,024 hosts, 543 MB at
// 2,048, 2.1 GB at 4,096 and about 12 GB at 10,000 (EstimateTreeBytes),
// against 14 MB, 28 MB, 56 MB and 140 MB with routing: switch. Above 2,048
// hosts the per-host tree passes half a gigabyte and quadruples with every
// doubling, and each host's route, NAT and firewall lists pass 2,047
// entries: the routed pool is the sane choice there.
const RoutingHostsWarnAbove = 2048

// Sizes of the generated tree, measured on internal/render's synthetic
// clusters (host names h1 … hN, Ubuntu 20.04, two GPUs per VM, the data
// network 100.64.0.0/19; TestTreeEstimate holds the estimate within 25 %
// of the real tree): bytes per host route (a line in routes.sh, in the
// persistent route file, and a firewall and a NAT rule), and bytes per host
// of the files that do not grow with the cluster, in either routing mode.
const (
	treeBytesPerRoute      = 120
	treeBytesPerHost       = 20_000
	treeBytesPerRoutedHost = 14_000
)

// EstimateTreeBytes is about how many bytes the tree rdggen generates
// (`rdggen -o DIR`) holds for a cluster of hosts hosts with the given
// docker.routing: with RoutingHosts hosts × (hosts − 1) routes and a fixed
// part per host, with RoutingSwitch only the fixed part. It is an estimate
// from measured averages (longer names and more GPUs make files larger).
func EstimateTreeBytes(hosts int, routing RoutingMode) int64 {
	n := int64(max(hosts, 0))
	if routing == RoutingSwitch {
		return n * treeBytesPerRoutedHost
	}
	return n*treeBytesPerHost + n*max(n-1, 0)*treeBytesPerRoute
}

// approxBytes writes b in decimal units, as "12 GB" or "540 MB".
func approxBytes(b int64) string {
	switch {
	case b >= 10e9:
		return fmt.Sprintf("%.0f GB", float64(b)/1e9)
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(b)/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(b)/1e6)
	}
	return fmt.Sprintf("%.0f KB", float64(b)/1e3)
}
