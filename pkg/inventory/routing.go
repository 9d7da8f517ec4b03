package inventory

import "net/netip"

// RoutingMode is how the container pool is routed between hosts: the
// value of docker.routing.
type RoutingMode string

// String is the mode as the inventory writes it.
func (m RoutingMode) String() string { return string(m) }

// Container routing modes, the values of docker.routing.
const (
	// RoutingHosts is the deployment guide's design and the default: each
	// host has a route to every other host's container subnet via that
	// host's data address, so every host's routes, NAT exemptions and
	// firewall rules grow with the cluster (n-1 of each).
	RoutingHosts RoutingMode = "hosts"
	// RoutingSwitch is the routed pool: each host has one route, for the
	// whole docker.pool via Docker.Gateway on the data network; the switch
	// carries that address on the data VLAN's interface and one static
	// route per host's container subnet via the host's data address. A
	// host's files then do not depend on the cluster's size; the switch
	// config grows by one line per host.
	RoutingSwitch RoutingMode = "switch"
)

// SwitchRouted reports whether the switch routes the container pool
// (docker.routing: switch).
func (d Docker) SwitchRouted() bool { return d.Routing == RoutingSwitch }

// DataNet is the data network every host's data address is on (validation
// holds them on one), e.g. 31.31.31.0/24; the zero Prefix without hosts.
func (inv *Inventory) DataNet() netip.Prefix {
	if len(inv.Hosts) == 0 {
		return netip.Prefix{}
	}
	return inv.Hosts[0].Data.Address.Masked()
}

// GatewaySwitch is the switch that routes the container pool when the
// routing is RoutingSwitch: the one every host's data port is cabled to
// (validation holds them on one switch). It is nil in RoutingHosts mode or
// without hosts.
func (inv *Inventory) GatewaySwitch() *Switch {
	if !inv.Docker.SwitchRouted() || len(inv.Hosts) == 0 || inv.IsFabric() {
		return nil // in a fabric each leaf routes its own hosts (Inventory.LeafOf)
	}
	return inv.Switch(inv.Hosts[0].Data.Switch)
}

// GatewayPrefix is Docker.Gateway with the data network's prefix length,
// the switch interface's address, e.g. 31.31.31.254/24; the zero Prefix
// when there is no gateway address.
func (inv *Inventory) GatewayPrefix() netip.Prefix {
	if !inv.Docker.Gateway.IsValid() || len(inv.Hosts) == 0 {
		return netip.Prefix{}
	}
	return netip.PrefixFrom(inv.Docker.Gateway, inv.DataNet().Bits())
}

// DefaultGateway is the gateway address docker.gateway defaults to on the
// data network n: its last host address (the broadcast address minus one,
// 31.31.31.254 in 31.31.31.0/24), a common choice for a router on a host
// subnet that stays clear of hosts numbered from the bottom. ok is false
// when n (a /31 or /32) has no address to spare.
func DefaultGateway(n netip.Prefix) (a netip.Addr, ok bool) {
	n = n.Masked()
	if !n.Addr().Is4() || n.Bits() > 30 {
		return netip.Addr{}, false
	}
	b := n.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= 1<<(32-n.Bits()) - 1 // the broadcast address
	v--
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
