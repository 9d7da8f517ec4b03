package onyx

// The routed container pool (docker.routing: switch): the switch carries a
// gateway address on the data VLAN's interface and one static route per
// host's container subnet. The commands and their forms are the ones NVIDIA
// documents for ONYX and that published ONYX configurations use; the
// sources are listed in docs/research/onyx-l3.md:
//
//   - NVIDIA Onyx User Manual, "IP Routing Overview" and "General IP Routing
//     Commands" (docs.nvidia.com/networking/display/onyxv31040100/general+ip+routing+commands):
//     VLAN interfaces, the primary address rule, `ip routing`;
//   - ansible-collections/mellanox.onyx, plugins/modules/onyx_l3_interface.py
//     and onyx_protocol.py with their unit tests (`interface vlan N ip
//     address A/M`, `ip routing vrf default`);
//   - Cray-HPE/canu, network_modeling/configs/templates/1.2/dellmellanox/full/sw-spine.primary.j2
//     (`ip routing vrf default`, `interface vlan N`, `interface vlan N ip
//     address A/M primary`, `no interface vlan N ip icmp redirect`,
//     `interface vlan N mtu M`, in that order);
//   - HPE Cray System Management network docs (`ip route vrf default
//     0.0.0.0/0 10.102.255.13`) and HPE HPCM's published ONYX 3.9.3210
//     running-config ("L3 configuration": `ip routing vrf default`,
//     `interface vlan 1`, `interface vlan 1 ip address 10.1.0.2/16 primary`).

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// DataVLAN is the VLAN of the hosts' data ports, whose IP interface carries
// the gateway address: 1, ONYX's default VLAN, in which every access port
// is until `switchport access vlan` moves it. rdggen configures no VLANs
// (the deployment guide does not either), so the data ports are in VLAN 1;
// Reconcile warns when the running-config puts a data port elsewhere.
const DataVLAN = 1

// VLAN is the IP interface of VLAN n, `interface vlan <n>`.
func VLAN(n int) Iface { return Iface{Type: "vlan", ID: strconv.Itoa(n)} }

// IPRouting is `ip routing vrf default`: IPv4 routing on in the default VRF,
// as published ONYX running-configs print it (HPE HPCM 3.9.3210; CANU's
// templates; onyx_protocol's `ip_routing`).
func IPRouting() Statement {
	return Statement{Kind: KindIPRouting, Key: "ip routing vrf default", Body: "ip routing vrf default"}
}

// VLANInterface is `interface vlan <n>`: the VLAN's IP interface, a line of
// its own before any of its settings, as running-config lists it. With
// prefix modes on, the command enters the interface's context.
func VLANInterface(n int) Statement { return vlanInterface(VLAN(n)) }

func vlanInterface(i Iface) Statement {
	return Statement{Kind: KindVLANIface, Iface: i, Key: "interface"}
}

// VLANAddress is `interface vlan <n> ip address <a.b.c.d/m> primary`: the
// interface's primary IPv4 address, in the form running-config prints. ONYX
// makes the first address of an interface its primary, and a primary
// "cannot be modified once assigned": a different one is removed first
// (`interface vlan <n> no ip address`), which Reconcile does.
func VLANAddress(n int, a netip.Prefix) Statement { return vlanAddress(VLAN(n), a) }

func vlanAddress(i Iface, a netip.Prefix) Statement {
	return Statement{Kind: KindVLANAddress, Iface: i, Key: "ip address", Body: "ip address " + a.String() + " primary"}
}

// ICMPRedirect is `interface vlan <n> ip icmp redirect` (on, ONYX's
// default) or `no interface vlan <n> ip icmp redirect` (off). rdggen turns
// redirects off on the gateway, as CANU does on every routed VLAN: the
// switch routes between hosts of one subnet, and redirects would tell the
// hosts to bypass it.
func ICMPRedirect(n int, on bool) Statement { return icmpRedirect(VLAN(n), on) }

func icmpRedirect(i Iface, on bool) Statement {
	s := Statement{Kind: KindICMPRedirect, Iface: i, Key: "ip icmp redirect", Body: "ip icmp redirect"}
	if !on {
		s.Body = "no ip icmp redirect"
	}
	return s
}

// VLANMTU is `interface vlan <n> mtu <bytes>`: the interface's IP MTU, in
// bytes (default 1500). The gateway's is the data network's MTU, so that
// routed jumbo frames are not fragmented or dropped.
func VLANMTU(n, bytes int) Statement { return vlanMTU(VLAN(n), bytes) }

func vlanMTU(i Iface, bytes int) Statement {
	return Statement{Kind: KindVLANMTU, Iface: i, Key: "mtu", Body: "mtu " + strconv.Itoa(bytes)}
}

// DefaultVLANMTU is the IP MTU of a VLAN interface that sets none, in
// bytes (`show interfaces vlan` prints "MTU": "1500 bytes"; mellanox.onyx
// fixture onyx_l3_vlan_interface_show.cfg).
const DefaultVLANMTU = 1500

// Route is `ip route vrf default <dst> <via>`: a static route in the
// default VRF (HPE CSM's ONYX procedures). A route is identified by its
// prefix and next hop: a second next hop for one prefix adds an ECMP path
// rather than replacing the first, so a wrong route is removed with `no
// ip route vrf default <dst> <via>`, never overwritten.
func Route(dst netip.Prefix, via netip.Addr) Statement {
	k := "ip route vrf default " + dst.String() + " " + via.String()
	return Statement{Kind: KindRoute, Key: k, Body: k}
}

// negated is s's `no` form: the same ID, so Diff and the plan relate them.
func negated(s Statement) Statement {
	switch {
	case s.Kind == KindVLANIface:
		s.Body = "no"
	case s.Kind == KindVLANAddress:
		s.Body = "no ip address"
	default:
		s.Body = "no " + s.Key
	}
	return s
}

// RouteOf returns the prefix and next hop of a KindRoute statement.
func (s Statement) RouteOf() (dst netip.Prefix, via netip.Addr, ok bool) {
	f := strings.Fields(s.Key)
	if s.Kind != KindRoute || len(f) != 6 {
		return dst, via, false
	}
	dst, err1 := netip.ParsePrefix(f[4])
	via, err2 := netip.ParseAddr(f[5])
	return dst, via, err1 == nil && err2 == nil
}

// AddressOf returns the address of a positive KindVLANAddress statement.
func (s Statement) AddressOf() (netip.Prefix, bool) {
	f := strings.Fields(s.Body)
	if s.Kind != KindVLANAddress || len(f) < 3 || f[0] != "ip" {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(f[2])
	return p, err == nil
}

// L3 returns the statements that make switch sw the container pool's
// gateway (docker.routing: switch), in running-config order: routing on,
// the data VLAN's interface with the gateway address (Inventory.GatewayPrefix),
// ICMP redirects off, the data MTU when it is above 1500, and one static
// route per host's container subnet via the host's data address, in
// inventory order. It returns nothing for a switch that is not the gateway
// (Inventory.GatewaySwitch), which is every switch in RoutingHosts mode.
//
//	ip routing vrf default
//	interface vlan 1
//	interface vlan 1 ip address 31.31.31.254/24 primary
//	no interface vlan 1 ip icmp redirect
//	ip route vrf default 172.16.41.0/24 31.31.31.41
//	…
func L3(inv *inventory.Inventory, sw inventory.Switch) []Statement {
	gw := inv.GatewaySwitch()
	if gw == nil || gw.Name != sw.Name || !inv.GatewayPrefix().IsValid() {
		return nil
	}
	out := make([]Statement, 0, 5+len(inv.Hosts))
	out = append(out, IPRouting(), VLANInterface(DataVLAN), VLANAddress(DataVLAN, inv.GatewayPrefix()), ICMPRedirect(DataVLAN, false))
	if mtu := inv.DataMTU(); mtu > DefaultVLANMTU {
		out = append(out, VLANMTU(DataVLAN, mtu))
	}
	for _, h := range inv.HostsOnSwitch(sw.Name) {
		out = append(out, Route(h.Subnet, h.Data.Address.Addr()))
	}
	return out
}

// Reconcile is the plan that `rdggen apply --target switch` sends to
// switch sw, and that `rdggen check` reports: Diff of Desired against the
// switch's current statements, preceded by the removal of the routed-pool
// configuration the inventory no longer wants (a switch that was the
// gateway and no longer is, a stale route or gateway address).
//
// What rdggen removes, and how it decides that it owns it:
//   - a static route in the default VRF whose prefix lies inside
//     docker.pool and that Desired does not list: the pool is the
//     container network rdggen plans, so a route into it is rdggen's (as a
//     host's route into the pool is, for the hosts target). Routes
//     elsewhere, in other VRFs, or with other arguments are never touched.
//   - on the gateway switch, a primary address of the data VLAN's
//     interface other than the gateway's: ONYX cannot change a primary, so
//     it is removed (`interface vlan 1 no ip address`) before the new one
//     is set; the plan shows the address it replaces.
//   - on a switch that is not (or no longer) the gateway, and only while it
//     still has a route of rdggen's (into the pool via a host's data
//     address) — the evidence that rdggen made it the gateway, kept until
//     the last command because the routes go last: the gateway address
//     (exactly Inventory.Docker.Gateway) on the data VLAN's interface. The
//     interface goes with it (`no interface vlan 1`) when it holds nothing
//     but rdggen's settings; otherwise only rdggen's settings are undone
//     (address removed, ICMP redirects and MTU back to ONYX's defaults).
//     `ip routing vrf default` is turned off too when nothing else on the
//     switch routes (no other interface address, no static route outside
//     the pool and the mgmt VRF, no routing protocol); otherwise it stays,
//     with a warning.
//
// Removals come first, in this order: interface settings, the gateway
// address or interface, routing, routes.
func Reconcile(inv *inventory.Inventory, sw inventory.Switch, current []Statement) Plan {
	desired := Desired(inv, sw)
	plan := Diff(desired, current)
	rm, warnings := stale(inv, sw, desired, current)
	if len(rm) > 0 {
		changes := make([]Change, 0, len(rm)+len(plan.Changes))
		for _, r := range rm {
			changes = append(changes, Change{Line: Line{Kind: r.s.Kind, Command: r.s.Command(), Statements: []Statement{r.s}}, Removed: r.was})
		}
		plan.Changes = append(changes, plan.Changes...)
	}
	plan.Warnings = append(plan.Warnings, warnings...)
	return plan
}

// removal is a `no` command and the switch's commands it takes away.
type removal struct {
	s   Statement
	was []string
}

// stale finds the removals of Reconcile and its warnings.
func stale(inv *inventory.Inventory, sw inventory.Switch, desired, current []Statement) ([]removal, []string) {
	want := make(map[ID]Statement, len(desired))
	gatewayHere := false
	for _, d := range desired {
		want[d.ID()] = d
		gatewayHere = gatewayHere || d.Kind == KindVLANAddress
	}
	cur := make(map[ID]Statement, len(current))
	var order []ID
	for _, s := range current {
		if _, seen := cur[s.ID()]; !seen {
			order = append(order, s.ID())
		}
		cur[s.ID()] = s // the switch keeps the last
	}
	dataHosts := map[netip.Addr]bool{}
	for _, h := range inv.Hosts {
		dataHosts[h.Data.Address.Addr()] = true
	}
	pool := inv.Docker.Pool
	var routes []removal
	ours := false // a route into the pool via a host's data address
	for _, id := range order {
		s := cur[id]
		dst, via, ok := s.RouteOf()
		if !ok || s.Negated() || !pool.Contains(dst.Addr()) || dst.Bits() < pool.Bits() {
			continue
		}
		ours = ours || dataHosts[via]
		if _, w := want[id]; !w {
			routes = append(routes, removal{negated(s), []string{s.Command()}})
		}
	}

	vlan := VLAN(DataVLAN)
	var onVLAN []Statement
	for _, id := range order {
		if id.Iface == vlan {
			onVLAN = append(onVLAN, cur[id])
		}
	}
	addr, hasAddr := cur[ID{vlan, "ip address"}].AddressOf()
	var warnings []string
	var rm []removal
	// `no ip address` takes every address of the interface: never while it
	// has a secondary address, which is not rdggen's.
	secondary := ""
	for _, s := range onVLAN {
		if s.Kind == KindOther && strings.HasPrefix(s.Body, "ip address ") {
			secondary = s.Command()
		}
	}
	if gatewayHere {
		if d := want[ID{vlan, "ip address"}]; hasAddr && cur[ID{vlan, "ip address"}].Body != d.Body {
			old := cur[ID{vlan, "ip address"}]
			if secondary == "" {
				rm = append(rm, removal{negated(old), []string{old.Command()}})
			} else {
				warnings = append(warnings, fmt.Sprintf("interface vlan %d's primary address %s is not the gateway's, and ONYX changes a primary only after all addresses are removed, but it also has %q, which is not rdggen's: remove the addresses yourself, or set docker.gateway to %s",
					DataVLAN, addr, secondary, addr.Addr()))
			}
		}
		warnings = append(warnings, portVLANWarnings(inv, sw, order, cur)...)
		return append(rm, routes...), warnings
	}

	gw := inv.Docker.Gateway
	gwHere := hasAddr && gw.IsValid() && addr.Addr() == gw
	switch {
	case !ours && gwHere:
		return routes, []string{fmt.Sprintf("interface vlan %d carries %s, the routed pool's gateway address, but the switch has no route of rdggen's into the pool: left alone (if rdggen put it there: %s)",
			DataVLAN, addr, negated(vlanAddress(vlan, addr)).Command())}
	case !ours:
		return routes, nil
	}
	removed := map[ID]bool{}
	if gwHere {
		foreign := false
		for _, s := range onVLAN {
			switch s.Kind {
			case KindVLANIface, KindVLANAddress, KindICMPRedirect, KindVLANMTU:
			default:
				foreign = true
			}
		}
		if !foreign {
			var was []Statement
			for _, s := range onVLAN {
				was = append(was, s)
				removed[s.ID()] = true
			}
			rm = append(rm, removal{negated(vlanInterface(vlan)), lineCommands(was)})
		} else {
			if s, ok := cur[ID{vlan, "ip icmp redirect"}]; ok && s.Body != "ip icmp redirect" {
				rm = append(rm, removal{icmpRedirect(vlan, true), []string{s.Command()}})
			}
			if s, ok := cur[ID{vlan, "mtu"}]; ok && s.Kind == KindVLANMTU && s.Body != vlanMTU(vlan, DefaultVLANMTU).Body {
				rm = append(rm, removal{vlanMTU(vlan, DefaultVLANMTU), []string{s.Command()}})
			}
			old := cur[ID{vlan, "ip address"}]
			if secondary == "" {
				rm = append(rm, removal{negated(old), []string{old.Command()}})
				removed[old.ID()] = true
			} else {
				warnings = append(warnings, fmt.Sprintf("%s stays: the interface also has %q, which is not rdggen's, and `no ip address` would take both", old.Command(), secondary))
			}
		}
	}
	for _, r := range routes {
		removed[r.s.ID()] = true
	}
	if s, ok := cur[IPRouting().ID()]; ok && !s.Negated() {
		if other := otherL3(order, cur, removed); other == "" {
			rm = append(rm, removal{negated(s), []string{s.Command()}})
		} else {
			warnings = append(warnings, fmt.Sprintf("%s stays on: %q still needs it (%s turns it off)", s.Command(), other, negated(s).Command()))
		}
	}
	return append(rm, routes...), warnings
}

// lineCommands are the statements' commands, ranges merged.
func lineCommands(stmts []Statement) []string {
	var out []string
	for _, l := range Lines(stmts) {
		out = append(out, l.Command)
	}
	return out
}

// otherL3 returns a command that routing in the default VRF serves besides
// the statements being removed: an IP address on another interface, a
// static route outside the mgmt VRF, a routing protocol; "" when there is
// none.
func otherL3(order []ID, cur map[ID]Statement, removed map[ID]bool) string {
	for _, id := range order {
		s := cur[id]
		if removed[id] || s.Negated() {
			continue
		}
		b := s.Body
		switch {
		case s.Kind == KindVLANAddress, s.Kind == KindRoute:
			return s.Command()
		case !s.Iface.IsZero() && strings.HasPrefix(b, "ip address "):
			return s.Command()
		case s.Iface.IsZero() && strings.HasPrefix(b, "ip route ") && !strings.HasPrefix(b, "ip route vrf mgmt "):
			return s.Command()
		case s.Iface.IsZero() && (strings.HasPrefix(b, "router ") || b == "protocol ospf" || b == "protocol bgp"):
			return s.Command()
		}
	}
	return ""
}

// portVLANWarnings names the data ports that the running-config puts in a
// VLAN other than DataVLAN (or makes trunks): their hosts cannot reach the
// gateway on interface vlan 1.
func portVLANWarnings(inv *inventory.Inventory, sw inventory.Switch, order []ID, cur map[ID]Statement) []string {
	hosts := map[Iface]*inventory.Host{}
	for _, h := range inv.HostsOnSwitch(sw.Name) {
		p := Ethernet(h.Data.Port.Module, h.Data.Port.Number)
		if hosts[p] == nil {
			hosts[p] = h
		}
	}
	var out []string
	access := "switchport access vlan " + strconv.Itoa(DataVLAN)
	for _, id := range order {
		s, h := cur[id], hosts[id.Iface]
		if h == nil || s.Kind != KindOther {
			continue
		}
		if b := s.Body; (strings.HasPrefix(b, "switchport access vlan ") && b != access) || b == "switchport mode trunk" || b == "switchport mode hybrid" {
			out = append(out, fmt.Sprintf("data port %s (%s) has %q, but the routed pool's gateway is on interface vlan %d: its host cannot reach the gateway; put the port in VLAN %d",
				h.Data.Port, h.Name, s.Command(), DataVLAN, DataVLAN))
		}
	}
	return out
}
