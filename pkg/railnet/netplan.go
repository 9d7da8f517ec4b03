package railnet

import (
	"net/netip"
	"strconv"

	"github.com/rdggen/rdggen/pkg/netplan"
	"github.com/rdggen/rdggen/pkg/quote"
)

// Where the hosts target installs this package's files on a VM, and their
// names under hosts/<host>/ in the output tree.
const (
	// NetplanPath holds the rails' definitions (Guest.Netplan): after
	// pkg/dockernet's 60-rdggen.yaml, so that netplan reads it later and its
	// rail 0 definition amends the same one (lists are appended).
	NetplanPath = "/etc/netplan/61-rdggen-rails.yaml"
	// SysctlPath holds the ARP and reverse-path settings (Guest.Sysctl):
	// systemd-sysctl reads /etc/sysctl.d in the order of the files' names,
	// a later file's value winning, so 60 comes after the distributions'
	// own (Ubuntu's 10-network-security.conf, systemd's 50-default.conf).
	SysctlPath = "/etc/sysctl.d/60-rdggen-rails.conf"

	NetplanName = "61-rdggen-rails.yaml"
	SysctlName  = "60-rdggen-rails.conf"
	ScriptName  = "rails.sh"
)

// Ethernets are the rails' netplan definitions, one per rail in rail
// order. Rail r's, under its NetplanID:
//
//   - match.macaddress and set-name Interface when the rail has a MAC;
//   - addresses: [Address]; mtu: MTU;
//   - routes: each peer via Gateway in the main table with metric
//     Metric(r); then in table Table(r) the rail's own subnet on the link
//     (scope link: what the rail's address sends to its own subnet goes
//     straight to the neighbour, also when a peer prefix aggregates that
//     subnet) and each peer via Gateway;
//   - routing-policy: from Address/32, table Table(r), priority Priority(r).
//
// The rule makes what the rail's address sends leave through the rail's
// own port, whatever the main table prefers for the destination; the
// main-table route through every rail serves the kernel's RoCE lookup,
// which is bound to the interface that owns the GID (Linux
// drivers/infiniband/core/addr.c: the lookup carries that interface as its
// output interface, so a route through another rail does not match).
// dhcp4 is left unsaid, so that rail 0's definition leaves the host's own
// setting alone. The caller may adapt the values (for example leave rail
// 0's address out where the host's own file sets it, or add its container
// routes there).
func (g *Guest) Ethernets() netplan.Ethernets {
	es := make(netplan.Ethernets, len(g.vm.Rails))
	for i, r := range g.vm.Rails {
		e := netplan.Ethernet{ID: r.NetplanID(), Addresses: []netip.Prefix{r.Address}, MTU: r.MTU,
			Routes: netplan.NewRouteList(g.routes(i)).All(),
			RoutingPolicy: []netplan.RoutingPolicy{{
				From: netip.PrefixFrom(r.Address.Addr(), 32), Table: Table(i), Priority: Priority(i)}}}
		if g.macs[i] != "" {
			e.Match, e.SetName = &netplan.Match{MACAddress: g.macs[i]}, r.Interface
		}
		es[i] = e
	}
	return es
}

// routes are rail i's routes in the order Ethernets gives them.
func (g *Guest) routes(i int) []netplan.Route {
	r := g.vm.Rails[i]
	rs := make([]netplan.Route, 0, 2*len(r.Peers)+1)
	for _, p := range r.Peers {
		rs = append(rs, netplan.Route{To: p, Via: r.Gateway, Metric: Metric(i)})
	}
	rs = append(rs, netplan.Route{To: r.Subnet(), Scope: netplan.ScopeLink, Table: Table(i)})
	for _, p := range r.Peers {
		rs = append(rs, netplan.Route{To: p, Via: r.Gateway, Table: Table(i)})
	}
	return rs
}

// Netplan is the netplan file of the rails (Ethernets), to be installed at
// NetplanPath with mode 0600 (netplan warns about files others can read).
func (g *Guest) Netplan() []byte { return g.NetplanWith(g.Ethernets()) }

// NetplanWith is Netplan's file with es as its definitions: Ethernets as
// the caller adapted them. The hosts target leaves out a rail's rule that
// the host's own netplan files already give the same definition: netplan
// merges a later file's addresses and routes that repeat an earlier one's,
// but writes every routing-policy rule it reads (a rule given twice comes
// twice into systemd-networkd's file; netplan.io 0.106).
func (g *Guest) NetplanWith(es netplan.Ethernets) []byte {
	n := len(g.vm.Rails)
	b := []byte("# rdggen: the " + strconv.Itoa(n) + " rails of " + quote.Line(g.vm.Name) + ": per rail its interface, address, MTU and policy routing.\n" +
		"# Installed as " + NetplanPath + " (mode 0600); `netplan apply` or the next boot sets it up.\n" +
		"# Rail r's address sends through rail r's own port: `ip rule from <address> table " + strconv.Itoa(TableBase) + "+r`\n" +
		"# (priority " + strconv.Itoa(PriorityBase) + "+r), and table " + strconv.Itoa(TableBase) + "+r holds the rail's subnet on the link and every\n" +
		"# peer subnet via the rail's gateway. The main table reaches the peers through every rail,\n" +
		"# metric " + strconv.Itoa(MetricBase) + "+r: the kernel resolves a RoCE peer only through the interface of its GID.\n")
	f := netplan.File{Network: netplan.Config{Version: netplan.Version, Ethernets: es}}
	return f.AppendYAML(b)
}
