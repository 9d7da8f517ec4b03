package cumulus

// The leaf-spine fabric on Cumulus Linux (docs/rules.md, "Leaf-spine
// fabric"): the loopback and router-id, the switch's ASN, eBGP on the
// uplinks (unnumbered between two Cumulus switches, numbered on a /31 when
// the peer runs ONYX), the networks each switch advertises and, on a leaf,
// its hosts' data subnet with the leaf as their gateway and a static route
// to each local host's container subnet. `qos roce` is in Intent on every
// switch already: it is switch-global, so uplinks are lossless too.

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// Loopback is the NVUE name of the loopback interface, lo ("Border
// Gateway Protocol - BGP", configuration example: nv set interface lo ip
// address 10.10.10.1/32).
const Loopback = "lo"

// SetAddress puts address a on the interface subtree iface, in the path
// `interface <id> ip address <a>` (`ipv4 address` from 5.15, [AddressKey]; "Interface Configuration and
// Management"; the SVI's address in "VLAN-aware Bridge Mode"). Every
// interface address rdggen writes goes through this one function, so that
// the path can follow a release that renames it (Cumulus Linux 5.15's
// "New and Changed NVUE Commands" lists `ipv4 address`).
func SetAddress(sw inventory.Switch, iface Tree, a netip.Prefix) {
	key := AddressKey(sw)
	ip, _ := iface[key].(Tree)
	if ip == nil {
		ip = Tree{}
		iface[key] = ip
	}
	addrs, _ := ip["address"].(Tree)
	if addrs == nil {
		addrs = Tree{}
		ip["address"] = addrs
	}
	addrs[a.String()] = Tree{}
}

// NeighborUnnumbered is the NVUE BGP neighbor type of an interface
// neighbor (`nv set vrf default router bgp neighbor swp1 type unnumbered`,
// as `nv config show -o commands` prints it in NVIDIA's EVPN examples). An
// address neighbor needs no type: rdggen writes only its remote-as, as
// the BGP page's numbered examples do.
const NeighborUnnumbered = "unnumbered"

// fabricIntent adds switch sw's fabric paths to t, the rest of its intent
// (Intent calls it for a switch with a role):
//
//	interface lo ip address <loopback>/32
//	router bgp autonomous-system <asn>
//	router bgp router-id <loopback>
//	per uplink swpN: type swp, link state up, link mtu 9216, description <far switch>:<far port>
//	  unnumbered (Cumulus peer): vrf default router bgp neighbor swpN remote-as external, type unnumbered
//	  numbered (ONYX peer):      interface swpN ip address <local>/31
//	                             vrf default router bgp neighbor <remote> remote-as <peer asn>
//	  each neighbor:             bfd enable on, detect-multiplier 3, min-rx-interval 300, min-tx-interval 300 (BFD)
//	vrf default router bgp address-family ipv4-unicast network <loopback>/32
//	on a leaf with hosts:
//	  interface vlan1 type svi, vlan 1, ip address <gateway>/<subnet bits>
//	  vrf default router static <container subnet> via <host data address>   per local host
//	  network <leaf subnet> and network <container subnet> per local host
//
// The container subnets are advertised with `network` statements (each
// has its static route in the RIB), not by redistributing every static
// route, so that only what rdggen routes is announced. ECMP across the
// spines needs nothing: Cumulus turns BGP multipath on by default ("Equal
// Cost Multipath Load Sharing").
func fabricIntent(inv *inventory.Inventory, sw inventory.Switch, t Tree) {
	ifaces, _ := t["interface"].(Tree)
	if ifaces == nil {
		ifaces = Tree{}
	}
	lo := Tree{}
	SetAddress(sw, lo, netip.PrefixFrom(sw.Fabric.Loopback, 32))
	ifaces[Loopback] = lo
	t["router"] = Tree{"bgp": Tree{"autonomous-system": sw.Fabric.ASN, "router-id": sw.Fabric.Loopback.String()}}

	neighbors := Tree{}
	desc := inv.PortDescriptions(sw.Name)
	for _, u := range inv.Uplinks(sw.Name) {
		name := sw.PortName(u.Port)
		port := Tree{"type": "swp", "link": Tree{"mtu": PortMTU, "state": Tree{"up": Tree{}}}}
		if d := desc[u.Port]; d != "" {
			port["description"] = d
		}
		var n Tree
		if u.Numbered {
			SetAddress(sw, port, u.Local)
			peerASN := 0
			if u.Peer != nil {
				peerASN = u.Peer.Fabric.ASN
			}
			// An address neighbor is numbered by default: no type.
			n = Tree{"remote-as": peerASN}
			neighbors[u.Remote.Addr().String()] = n
		} else {
			n = Tree{"remote-as": "external", "type": NeighborUnnumbered}
			neighbors[name] = n
		}
		if b := BFD(sw); b != nil {
			n["bfd"] = b
		}
		ifaces[name] = port
	}
	networks := Tree{netip.PrefixFrom(sw.Fabric.Loopback, 32).String(): Tree{}}
	vrf := vrfDefault(t)
	if sw.IsLeaf() && sw.Fabric.Subnet.IsValid() && sw.Fabric.Gateway.IsValid() {
		// One SVI per (leaf, rail) subnet, in the rail's VLAN: vlan1 for
		// rail 0 (the only one of an inventory of one rail).
		for _, lr := range sw.Fabric.Rails {
			if !lr.Subnet.IsValid() || !lr.Gateway.IsValid() {
				continue
			}
			svi := Tree{"type": "svi", "vlan": inventory.RailVLAN(lr.Rail)}
			SetAddress(sw, svi, netip.PrefixFrom(lr.Gateway, lr.Subnet.Bits()))
			ifaces[RailSVI(lr.Rail)] = svi
			networks[lr.Subnet.String()] = Tree{}
		}
		static := Tree{}
		for _, h := range inv.HostsOnSwitch(sw.Name) {
			static[h.Subnet.String()] = Route(h.Data.Address.Addr())
			networks[h.Subnet.String()] = Tree{}
		}
		if len(static) > 0 {
			vrf["static"] = static
		}
	}
	bgp := Tree{"address-family": Tree{"ipv4-unicast": Tree{"network": networks}}}
	if len(neighbors) > 0 {
		bgp["neighbor"] = neighbors
	}
	vrf["bgp"] = bgp
	t["interface"] = ifaces
}

// BFD is the NVUE value of a BGP neighbor's BFD on the underlay (`nv set
// vrf default router bgp neighbor <id> bfd enable on`, `… bfd
// detect-multiplier 3`, `… bfd min-rx-interval 300`, `… bfd
// min-tx-interval 300`: NVIDIA Cumulus Linux 5.x user guide,
// "Bidirectional Forwarding Detection - BFD", BFD in BGP; the timers of
// NVIDIA's DGX BasePOD SN5600 walkthrough, inventory.BFDDetectMultiplier
// and BFDIntervalMs, in milliseconds). nil from Cumulus Linux 5.15, whose
// BFD is configured as profiles attached to the client (`nv set router bfd
// state enabled`, `nv set router bfd profile …`): the command reference
// documents the profile and its OSPF and PIM attachments, not the BGP
// neighbor's, and an unknown path fails a whole `nv config patch`, so
// rdggen writes no BFD there (BFDPerNeighbor; docs/rules.md).
func BFD(sw inventory.Switch) Tree {
	if !BFDPerNeighbor(sw) {
		return nil
	}
	return Tree{"enable": "on", "detect-multiplier": inventory.BFDDetectMultiplier,
		"min-rx-interval": inventory.BFDIntervalMs, "min-tx-interval": inventory.BFDIntervalMs}
}

// BFDPerNeighbor reports whether rdggen writes BFD on the switch's BGP
// neighbors: Cumulus Linux 5.0–5.14 (BFD).
func BFDPerNeighbor(sw inventory.Switch) bool { return !RenamedForms(sw) }

// vrfDefault is t's `vrf default router` subtree, made when missing.
func vrfDefault(t Tree) Tree {
	v, _ := t["vrf"].(Tree)
	if v == nil {
		v = Tree{}
		t["vrf"] = v
	}
	d, _ := v["default"].(Tree)
	if d == nil {
		d = Tree{}
		v["default"] = d
	}
	r, _ := d["router"].(Tree)
	if r == nil {
		r = Tree{}
		d["router"] = r
	}
	return r
}

// fabricHeader is what the files' header says of a fabric switch.
func fabricHeader(inv *inventory.Inventory, sw inventory.Switch) []string {
	var ups []string
	numbered := 0
	for _, u := range inv.Uplinks(sw.Name) {
		peer := "?"
		if u.Peer != nil {
			peer = u.Peer.Name + " " + u.Peer.PortName(u.PeerPort)
		}
		ups = append(ups, sw.PortName(u.Port)+"->"+peer)
		if u.Numbered {
			numbered++
		}
	}
	bfd := fmt.Sprintf("BFD on each session (detect-multiplier %d, %d ms min rx/tx)", inventory.BFDDetectMultiplier, inventory.BFDIntervalMs)
	if !BFDPerNeighbor(sw) {
		bfd = "no BFD (Cumulus Linux 5.15's BFD profiles are not attached to BGP neighbors by a documented NVUE path)"
	}
	h := []string{
		fmt.Sprintf("Fabric %s: AS %d, loopback and router-id %s; eBGP on %d uplink(s) (%d unnumbered, %d numbered /31 to ONYX peers), MTU %d,",
			sw.Fabric.Role, sw.Fabric.ASN, sw.Fabric.Loopback, len(ups), len(ups)-numbered, numbered, PortMTU),
		bfd + ":",
		"  " + strings.Join(ups, ", ") + ".",
	}
	if sw.IsLeaf() && len(sw.Fabric.Rails) > 0 && (inv.MultiRail()) {
		for _, lr := range sw.Fabric.Rails {
			h = append(h, fmt.Sprintf("Rail %d: gateway %s/%d of the (leaf, rail) subnet %s on %s, its ports in VLAN %d;",
				lr.Rail, lr.Gateway, lr.Subnet.Bits(), lr.Subnet, RailSVI(lr.Rail), inventory.RailVLAN(lr.Rail)))
		}
		h = append(h, fmt.Sprintf("a static route to each of the %d hosts' container subnets whose rail 0 is here, via its rail 0 address;", len(inv.HostsOnSwitch(sw.Name))),
			"the loopback, each rail's subnet and the container subnets advertised with BGP network statements.")
	} else if sw.IsLeaf() && sw.Fabric.Subnet.IsValid() {
		h = append(h, fmt.Sprintf("Gateway %s/%d of the hosts' data subnet %s on %s; a static route to each of the %d hosts' container subnets via its data address;",
			sw.Fabric.Gateway, sw.Fabric.Subnet.Bits(), sw.Fabric.Subnet, SVI, len(inv.HostsOnSwitch(sw.Name))),
			"the loopback, the subnet and the container subnets advertised with BGP network statements.")
	} else {
		h = append(h, "The loopback advertised with a BGP network statement.")
	}
	return h
}
