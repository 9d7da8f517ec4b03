package onyx

// The leaf-spine fabric on ONYX (docs/rules.md, "Leaf-spine fabric"): the
// ports rdggen configures, and a fabric switch's routing: IP routing, the
// loopback, each uplink a routed port with its /31, eBGP with ECMP, and on
// a leaf the hosts' gateway and a static route to each local host's
// container subnet. ONYX has no BGP unnumbered and no documented PFC
// watchdog: every ONYX link is numbered, and no watchdog is written.

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// MaximumPaths is the `maximum-paths` of rdggen's BGP: 32, the value of
// NVIDIA's onyx_bgp module example and of CANU's ONYX spine configs; it
// must be at least the number of spines for ECMP across all of them.
const MaximumPaths = 32

// LoopbackIface is the loopback interface rdggen addresses, `interface
// loopback 0` (CANU's generated ONYX spine config).
var LoopbackIface = Iface{Type: "loopback", ID: "0"}

// PortIface is the ONYX interface of inventory port p: ethernet 1/N, or
// 1/N/M for lane M of a split port.
func PortIface(p inventory.Port) Iface {
	return Iface{Type: "ethernet", ID: p.String()}
}

// Ports are the front-panel ports whose RoCE QoS and MTU rdggen sets on
// switch sw: every front-panel port with `ports: all` (FrontPanel, the
// deployment guide's `1/1-1/32`); otherwise only the ports the inventory
// cables, the hosts' data ports and the fabric's uplinks, in port order,
// so that a switch shared with other users keeps its other ports as they
// are.
func Ports(inv *inventory.Inventory, sw inventory.Switch) []Iface {
	if sw.Fabric.AllPorts {
		return FrontPanel(sw)
	}
	seen := map[inventory.Port]bool{}
	var ports []inventory.Port
	add := func(p inventory.Port) {
		if p.Number > 0 && !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	for _, hr := range inv.RailsOnSwitch(sw.Name) {
		add(hr.Rail.Port)
	}
	for _, u := range inv.Uplinks(sw.Name) {
		add(u.Port)
	}
	slices.SortFunc(ports, func(a, b inventory.Port) int {
		return cmp.Or(cmp.Compare(a.Module, b.Module), cmp.Compare(a.Number, b.Number), cmp.Compare(a.Lane, b.Lane))
	})
	out := make([]Iface, len(ports))
	for i, p := range ports {
		out[i] = PortIface(p)
	}
	return out
}

// VLANCreate is `vlan <n>`: VLAN n exists (ONYX has VLAN 1 by default).
// rdggen creates the VLAN of each rail other than rail 0 on a leaf that
// carries it (inventory.RailVLAN).
func VLANCreate(n int) Statement {
	b := "vlan " + strconv.Itoa(n)
	return Statement{Kind: KindVLAN, Key: b, Body: b}
}

// AccessVLAN is `interface ethernet <port> switchport access vlan <n>`:
// the port, in access mode (ONYX's default), carries VLAN n untagged (the
// mellanox.onyx collection's onyx_l2_interface sends this form for mode
// access).
func AccessVLAN(i Iface, n int) Statement {
	return Statement{Kind: KindAccessVLAN, Iface: i, Key: "switchport access vlan", Body: "switchport access vlan " + strconv.Itoa(n)}
}

// RoutedPort is `interface ethernet <port> no switchport force`: the port
// leaves layer 2 and takes an IP address (field-facts: onyx_l3_interface
// tests; HPE CSM's ONYX procedures: `interface ethernet 1/16 no switchport
// force`).
func RoutedPort(i Iface) Statement {
	return Statement{Kind: KindRoutedPort, Iface: i, Key: "switchport", Body: "no switchport force"}
}

// ProtocolBGP is `protocol bgp`, which ONYX needs before any `router bgp`
// line (CANU's ONYX command order: protocol bgp before its features).
func ProtocolBGP() Statement {
	return Statement{Kind: KindProtocolBGP, Key: "protocol bgp", Body: "protocol bgp"}
}

// bgp is one `router bgp <asn> vrf default <rest>` line; rest "" is the
// instance itself. The forms are those of NVIDIA's onyx_bgp Ansible module
// (its RETURN sample) and CANU's generated ONYX configs.
func bgp(asn int, rest string) Statement {
	body := "router bgp " + strconv.Itoa(asn) + " vrf default"
	if rest != "" {
		body += " " + rest
	}
	return Statement{Kind: KindBGP, Key: body, Body: body}
}

// BGPBFD is `router bgp <asn> vrf default neighbor <a> fall-over bfd`: the
// session to a follows a BFD session (NVIDIA Onyx User Manual,
// "Bidirectional Forwarding Detection (BFD) Infrastructure": a BFD session
// "is established by the application that uses it"; the `neighbor …
// fall-over bfd` form is BGP's in the CLI family ONYX's routing follows,
// docs/rules.md#onyx-fabric-forms, inferred).
func BGPBFD(asn int, neighbor netip.Addr) Statement {
	body := "router bgp " + strconv.Itoa(asn) + " vrf default neighbor " + neighbor.String() + " fall-over bfd"
	return Statement{Kind: KindBGPBFD, Key: body, Body: body}
}

// BFDTimers are the default VRF's BFD timers as running-config prints
// them, one line each: `ip bfd vrf default interval min-rx 300 force`,
// `… multiplier 3 force`, `… transmit-rate 300 force` (the lines
// mellanox.onyx's onyx_bfd module reads back for `ip bfd interval min-rx
// <ms> multiplier <n> transmit-rate <ms> force`), at NVIDIA's SN5600
// walkthrough's 3 × 300 ms (inventory.BFDDetectMultiplier, BFDIntervalMs).
func BFDTimers() []Statement {
	line := func(key string, v int) Statement {
		k := "ip bfd vrf default interval " + key
		return Statement{Kind: KindBFD, Key: k, Body: k + " " + strconv.Itoa(v) + " force"}
	}
	return []Statement{line("min-rx", inventory.BFDIntervalMs), line("multiplier", inventory.BFDDetectMultiplier), line("transmit-rate", inventory.BFDIntervalMs)}
}

// Fabric returns switch sw's fabric statements (nil outside a fabric):
//
//	ip routing vrf default
//	interface loopback 0
//	interface loopback 0 ip address <loopback>/32 primary
//	per uplink: interface ethernet <port> no switchport force
//	            interface ethernet <port> ip address <local>/31 primary
//	on a leaf with hosts: interface vlan 1, its gateway address, no ICMP
//	  redirects, the data MTU above 1500, and ip route vrf default <container subnet> <data address> per local host
//	protocol bgp
//	router bgp <asn> vrf default
//	router bgp <asn> vrf default router-id <loopback> force
//	router bgp <asn> vrf default maximum-paths 32
//	router bgp <asn> vrf default bestpath as-path multipath-relax force
//	router bgp <asn> vrf default neighbor <remote> remote-as <peer asn>   per uplink
//	router bgp <asn> vrf default neighbor <remote> fall-over bfd          per uplink (BGPBFD)
//	router bgp <asn> vrf default network <loopback> /32, and on a leaf <subnet> and each <container subnet>
//	ip bfd vrf default interval min-rx 300 force, multiplier 3 force, transmit-rate 300 force (BFDTimers)
//
// `maximum-paths` is what turns ECMP on. With the spines in one AS (RFC
// 7938 §5.2.1) a leaf's paths through them have the same AS path and are
// equal without relaxing; `bestpath as-path multipath-relax` also lets
// paths through spines of different ASes (switches[].asn) share the load,
// and changes nothing otherwise (docs/rules.md#design, ECMP).
func Fabric(inv *inventory.Inventory, sw inventory.Switch) []Statement {
	f := sw.Fabric
	if f.Role == "" || !f.Loopback.IsValid() {
		return nil
	}
	lo := netip.PrefixFrom(f.Loopback, 32)
	out := []Statement{IPRouting(), vlanInterface(LoopbackIface), vlanAddress(LoopbackIface, lo)}
	ups := inv.Uplinks(sw.Name)
	networks := []netip.Prefix{lo}
	for _, u := range ups {
		if !u.Local.IsValid() {
			continue
		}
		p := PortIface(u.Port)
		out = append(out, RoutedPort(p), vlanAddress(p, u.Local))
	}
	if sw.IsLeaf() && f.Subnet.IsValid() && f.Gateway.IsValid() {
		// One VLAN interface per (leaf, rail) subnet: VLAN 1 for rail 0 (the
		// only one of an inventory of one rail, where the ports are in VLAN 1
		// by default), RailVLAN(r) for rail r, created, with its ports in it.
		vlanPorts := map[int][]Iface{}
		for _, hr := range inv.RailsOnSwitch(sw.Name) {
			if v := inventory.RailVLAN(hr.Rail.Index); v != DataVLAN && hr.Rail.Port.Number > 0 {
				p := PortIface(hr.Rail.Port)
				if !slices.Contains(vlanPorts[v], p) {
					vlanPorts[v] = append(vlanPorts[v], p)
				}
			}
		}
		for _, lr := range f.Rails {
			if !lr.Subnet.IsValid() || !lr.Gateway.IsValid() {
				continue
			}
			v := inventory.RailVLAN(lr.Rail)
			if v != DataVLAN {
				out = append(out, VLANCreate(v))
				for _, p := range vlanPorts[v] {
					out = append(out, AccessVLAN(p, v))
				}
			}
			out = append(out, VLANInterface(v), VLANAddress(v, netip.PrefixFrom(lr.Gateway, lr.Subnet.Bits())), ICMPRedirect(v, false))
			if mtu := inv.DataMTU(); mtu > DefaultVLANMTU {
				out = append(out, VLANMTU(v, mtu))
			}
			networks = append(networks, lr.Subnet)
		}
		for _, h := range inv.HostsOnSwitch(sw.Name) {
			out = append(out, Route(h.Subnet, h.Data.Address.Addr()))
			networks = append(networks, h.Subnet)
		}
	}
	out = append(out, ProtocolBGP(), bgp(f.ASN, ""),
		bgp(f.ASN, "router-id "+f.Loopback.String()+" force"),
		bgp(f.ASN, "maximum-paths "+strconv.Itoa(MaximumPaths)),
		bgp(f.ASN, "bestpath as-path multipath-relax force"))
	sessions := 0
	for _, u := range ups {
		if u.Remote.IsValid() && u.Peer != nil {
			out = append(out, bgp(f.ASN, fmt.Sprintf("neighbor %s remote-as %d", u.Remote.Addr(), u.Peer.Fabric.ASN)),
				BGPBFD(f.ASN, u.Remote.Addr()))
			sessions++
		}
	}
	if sessions > 0 {
		out = append(out, BFDTimers()...)
	}
	for _, n := range networks {
		// onyx_bgp writes the length apart: `network 172.16.1.0 /24`.
		out = append(out, bgp(f.ASN, fmt.Sprintf("network %s /%d", n.Addr(), n.Bits())))
	}
	return out
}

// portsHeader says which ports the file's per-port lines cover.
func portsHeader(inv *inventory.Inventory, sw inventory.Switch, hosts int) string {
	if sw.Fabric.AllPorts {
		return fmt.Sprintf("Lossless RoCE in DSCP-based QoS mode on all %d ports (ports: all), as the guide does (%d cabled to hosts).", sw.Ports, hosts)
	}
	span := "none"
	if r := Ranges(Ports(inv, sw)); len(r) > 0 {
		span = joinRanges(r)
	}
	uplinks := len(inv.Uplinks(sw.Name))
	what := fmt.Sprintf("%d cabled to hosts", hosts)
	if uplinks > 0 {
		what += fmt.Sprintf(", %d uplinks", uplinks)
	}
	if UsesRoCETemplate(inv, sw) {
		// `roce lossless` has no port list: it is the whole switch's.
		return fmt.Sprintf("Lossless RoCE in DSCP-based QoS mode switch-wide (`roce lossless` takes no ports); port settings (MTU) on the cabled ports only, %s (%s); ports: all on the switch writes them on every port.", span, what)
	}
	return fmt.Sprintf("Lossless RoCE in DSCP-based QoS mode on the cabled ports only, %s (%s); other ports are left as they are (ports: all on the switch writes the guide's whole-switch form).", span, what)
}

// joinRanges writes "ethernet 1/1-1/8", "ethernet 1/31" as "1/1-1/8, 1/31".
func joinRanges(r []string) string {
	s := ""
	for i, x := range r {
		if i > 0 {
			s += ", "
		}
		if len(x) > len("ethernet ") && x[:len("ethernet ")] == "ethernet " {
			x = x[len("ethernet "):]
		}
		s += x
	}
	return s
}
