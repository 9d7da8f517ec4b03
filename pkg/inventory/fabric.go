package inventory

// The leaf-spine fabric (docs/inventory.md#fabric): switch roles, the
// cabling between switches, the fabric's addressing (loopbacks, ASNs, /31s
// for numbered peering) and each leaf's data subnet and gateway, with their
// rules. An inventory whose switches have no role is not a fabric, and
// nothing here changes it.

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Switch roles, the values of switches[].role.
const (
	// RoleLeaf is a switch that hosts are cabled to: it owns their data
	// subnet, is their gateway and routes their container subnets.
	RoleLeaf = "leaf"
	// RoleSpine is a switch that joins the leaves; no host is cabled to it.
	RoleSpine = "spine"
)

// Port scopes, the values of switches[].ports.
const (
	// PortsCabled (the default) configures only the ports the inventory
	// cables: hosts' data ports and inter-switch links.
	PortsCabled = "cabled"
	// PortsAll configures every front-panel port of an ONYX switch, the
	// deployment guide's whole-switch form (`interface ethernet 1/1-1/32 …`).
	PortsAll = "all"
)

// Fabric defaults (docs/inventory.md#fabric). The ASNs are private 16-bit
// ASNs (RFC 6996: 64512–65534); each leaf has its own and the spines share
// one, the eBGP numbering RFC 7938 §5.2.1 recommends for a two-tier Clos.
// The address pools are RFC 1918 space that the guide's data (31.31.31.0/24)
// and container (172.16.0.0/16) networks do not use.
const (
	DefaultLoopbacks = "10.10.10.0/24"
	DefaultP2P       = "10.254.0.0/16"
	DefaultLeafASN   = 65101
	DefaultSpineASN  = 65100
)

// BFD on the underlay's eBGP sessions, as NVIDIA's DGX BasePOD SN5600 NVUE
// walkthrough sets it (`peer-group underlay bfd enable on`,
// detect-multiplier 3, 300 ms min rx/tx): a session is declared down
// after 3 missed packets, 900 ms, rather than BGP's 9 s hold time.
const (
	BFDDetectMultiplier = 3
	BFDIntervalMs       = 300
)

// SwitchFabricSpec are a switch's fabric keys as written.
type SwitchFabricSpec struct {
	// Role is "leaf" or "spine"; unset in an inventory that is not a fabric.
	Role string `yaml:"role"`
	// ASN overrides the switch's derived BGP AS number.
	ASN *int `yaml:"asn"`
	// Loopback overrides the switch's derived loopback (router-id) address.
	Loopback string `yaml:"loopback"`
	// Subnet is a leaf's data subnet (default: its hosts' data network);
	// Gateway the leaf's address in it (default its last host address).
	Subnet  string `yaml:"subnet"`
	Gateway string `yaml:"gateway"`
	// Ports is "cabled" (default) or "all" (ONYX: every front-panel port).
	Ports string `yaml:"ports"`
}

// FabricSpec is the `fabric` section as written.
type FabricSpec struct {
	// Loopbacks is the pool of switch loopbacks (default 10.10.10.0/24);
	// P2P the pool of /31s of numbered links (default 10.254.0.0/16).
	Loopbacks *string `yaml:"loopbacks"`
	P2P       *string `yaml:"p2p"`
	// LeafASN is the first leaf's ASN (default 65101, the next leaf's is
	// one more); SpineASN the spines' (default 65100).
	LeafASN  *int `yaml:"leaf_asn"`
	SpineASN *int `yaml:"spine_asn"`
	// Links are the inter-switch cables, each written once with both ends.
	Links []LinkSpec `yaml:"links"`
}

// LinkSpec is one cable between two switches: switch and port at one end,
// peer and peer_port at the other.
type LinkSpec struct {
	Switch   string `yaml:"switch"`
	Port     string `yaml:"port"`
	Peer     string `yaml:"peer"`
	PeerPort string `yaml:"peer_port"`
}

// SwitchFabric is a switch's place in the fabric, defaults resolved.
type SwitchFabric struct {
	// Role is RoleLeaf, RoleSpine, or "" outside a fabric.
	Role string
	// ASN is the switch's BGP AS number (0 outside a fabric).
	ASN int
	// Loopback is the switch's loopback address, also its BGP router-id.
	Loopback netip.Addr
	// Subnet is a leaf's data subnet, e.g. 10.1.1.0/24 (the zero Prefix on
	// a spine or a leaf without hosts); Gateway the leaf's address in it,
	// every local host's next hop for the pool and the other leaves.
	Subnet  netip.Prefix
	Gateway netip.Addr
	// Rails are the leaf's (leaf, rail) subnets, rails ascending
	// (rails.go): one, {rail, Subnet, Gateway}, on a leaf that carries one
	// rail (every leaf of an inventory of one rail); on a leaf that
	// carries several, Subnet and Gateway are the first one's.
	Rails []LeafRail
	// AllPorts is `ports: all`: an ONYX switch's RoCE QoS and MTU go on
	// every front-panel port, not only the cabled ones.
	AllPorts bool
}

// Fabric is the leaf-spine cabling and addressing, defaults resolved.
type Fabric struct {
	// Loopbacks and P2P are the address pools (zero outside a fabric).
	Loopbacks, P2P netip.Prefix
	// LeafASN is the first leaf's ASN, SpineASN the spines'.
	LeafASN, SpineASN int
	// Links are the inter-switch cables in file order.
	Links []Link
}

// Link is one inter-switch cable.
type Link struct {
	// Index is the position in fabric.links.
	Index int
	// A is the end written as switch/port, B the peer/peer_port end.
	A, B LinkEnd
	// Numbered is set when either end runs ONYX: ONYX has no BGP
	// unnumbered, and unnumbered peering needs RFC 5549 on both ends, so
	// the link gets a /31 (Net: A the lower address, B the upper) and
	// numbered eBGP. Between two Cumulus switches the link is unnumbered
	// (BGP on the interface, IPv6 link-local next hops).
	Numbered bool
	Net      netip.Prefix
}

// LinkEnd is one end of a link.
type LinkEnd struct {
	Switch string
	Port   Port
}

// Uplink is one link seen from one of its switches.
type Uplink struct {
	// Link is the link's index in Fabric.Links.
	Link int
	// Port is this switch's port, Peer the switch at the other end and
	// PeerPort its port.
	Port     Port
	Peer     *Switch
	PeerPort Port
	// Numbered says the link has a /31; Local and Remote are then this
	// switch's and the peer's address, each with prefix length 31.
	Numbered      bool
	Local, Remote netip.Prefix
}

// IsFabric reports whether the inventory is a leaf-spine fabric: its
// switches have roles.
func (inv *Inventory) IsFabric() bool {
	for _, s := range inv.Switches {
		if s.Fabric.Role != "" {
			return true
		}
	}
	return false
}

// IsLeaf and IsSpine report the switch's role.
func (s Switch) IsLeaf() bool  { return s.Fabric.Role == RoleLeaf }
func (s Switch) IsSpine() bool { return s.Fabric.Role == RoleSpine }

// Leaves and Spines return the fabric's switches of that role, in file order.
func (inv *Inventory) Leaves() []*Switch { return inv.byRole(RoleLeaf) }
func (inv *Inventory) Spines() []*Switch { return inv.byRole(RoleSpine) }

func (inv *Inventory) byRole(role string) []*Switch {
	var out []*Switch
	for i := range inv.Switches {
		if inv.Switches[i].Fabric.Role == role {
			out = append(out, &inv.Switches[i])
		}
	}
	return out
}

// LeafOf is the leaf host h is cabled to, or nil outside a fabric.
func (inv *Inventory) LeafOf(h *Host) *Switch {
	if sw := inv.Switch(h.Data.Switch); sw != nil && sw.IsLeaf() {
		return sw
	}
	return nil
}

// Uplinks returns switch sw's inter-switch links, in the order of
// fabric.links, each oriented from sw.
func (inv *Inventory) Uplinks(sw string) []Uplink {
	var out []Uplink
	for _, l := range inv.Fabric.Links {
		var me, peer LinkEnd
		var local, remote netip.Addr
		if l.Net.IsValid() {
			local, remote = l.Net.Addr(), l.Net.Addr().Next()
		}
		switch sw {
		case l.A.Switch:
			me, peer = l.A, l.B
		case l.B.Switch:
			me, peer = l.B, l.A
			local, remote = remote, local
		default:
			continue
		}
		u := Uplink{Link: l.Index, Port: me.Port, Peer: inv.Switch(peer.Switch), PeerPort: peer.Port, Numbered: l.Numbered}
		if l.Numbered && local.IsValid() {
			u.Local, u.Remote = netip.PrefixFrom(local, 31), netip.PrefixFrom(remote, 31)
		}
		out = append(out, u)
	}
	return out
}

// Oversubscription is leaf sw's capacity towards its hosts (down: each
// cabled host port once, at the fastest NIC speed of the hosts on it) and
// towards the spines (up: each uplink at the lower of its two ends'
// port speeds), both in Gb/s. down > up means the leaf is oversubscribed
// by down:up when every host sends across the fabric at once.
func (inv *Inventory) Oversubscription(sw string) (down, up int) {
	ports := map[Port]int{}
	for _, hr := range inv.RailsOnSwitch(sw) {
		ports[hr.Rail.Port] = max(ports[hr.Rail.Port], hr.Host.NIC.SpeedGbps)
	}
	for _, v := range ports {
		down += v
	}
	me := inv.Switch(sw)
	for _, u := range inv.Uplinks(sw) {
		s := me.PortSpeedGbps(u.Port)
		if u.Peer != nil {
			s = min(s, u.Peer.PortSpeedGbps(u.PeerPort))
		}
		up += s
	}
	return down, up
}

// OtherLeafSubnets are the data subnets of every leaf but the one host h
// is cabled to, in file order: what h routes via its leaf's gateway besides
// the container pool (RoCE v2 between VFs on different leaves is routed).
// With several rails they are rail 0's subnets on the other leaves: what
// rail 0, the data interface, routes (RailNets lists every rail's).
func (inv *Inventory) OtherLeafSubnets(h *Host) []netip.Prefix {
	var out []netip.Prefix
	for _, l := range inv.Leaves() {
		if l.Name == h.Data.Switch {
			continue
		}
		if !inv.MultiRail() {
			if l.Fabric.Subnet.IsValid() {
				out = append(out, l.Fabric.Subnet)
			}
			continue
		}
		if lr, ok := l.LeafRail(0); ok && lr.Subnet.IsValid() {
			out = append(out, lr.Subnet)
		}
	}
	return out
}

var (
	reSwpLane = regexp.MustCompile(`^swp([1-9]\d{0,2})s([0-9])$`) // lanes s0–s9; switchPort takes s0–s7
	rePortLan = regexp.MustCompile(`^(\d+)/(\d+)/(\d+)$`)
)

// parsePort reads a switch port as written: swpN or swpNsM (Cumulus; lane
// M+1), 1/N or 1/N/M (ONYX's module/port[/lane], also accepted for
// Cumulus). cumulus says the Cumulus spelling was used; ok is false when s
// is neither.
func parsePort(s string) (p Port, cumulus, ok bool) {
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	if m := reSwp.FindStringSubmatch(s); m != nil {
		return Port{Module: 1, Number: atoi(m[1])}, true, true
	}
	if m := reSwpLane.FindStringSubmatch(s); m != nil {
		return Port{Module: 1, Number: atoi(m[1]), Lane: atoi(m[2]) + 1}, true, true
	}
	if m := rePort.FindStringSubmatch(s); m != nil {
		return Port{Module: atoi(m[1]), Number: atoi(m[2])}, false, true
	}
	if m := rePortLan.FindStringSubmatch(s); m != nil {
		return Port{Module: atoi(m[1]), Number: atoi(m[2]), Lane: atoi(m[3])}, false, true
	}
	return Port{}, false, false
}

// switchPort checks port s of switch sw (nil when unknown) at path: its
// spelling for the switch's OS and its range on the model, a lane 1–8
// (Cumulus s0–s7; the model's own modes are checked with the breakouts).
// ok is false when s is not a port at all.
func (c *checker) switchPort(path, s string, sw *Switch) (Port, bool) {
	p, cumulus, ok := parsePort(s)
	if !ok {
		example := OSONYX.PortExample()
		if sw != nil {
			example = sw.OS().PortExample()
		}
		c.errf(path, "%q is not a switch port like %s", s, example)
		return Port{}, false
	}
	if cumulus && sw != nil && !sw.OS().Traits().SwpPorts && !c.unknownOS[sw.Name] {
		c.errf(path, "%q is Cumulus Linux's spelling, but %s runs %s, which calls front-panel port %d %s", s, sw.Name, sw.OS().Name(), p.Number, sw.PortName(p))
		return Port{}, false
	}
	if p.Lane > MaxLanes || (p.Lane > 0 && p.Module != 1) {
		c.errf(path, "%s: a split port has lanes 1–%d (Cumulus s0–s%d): Spectrum ports break out into 2, 4 or 8", s, MaxLanes, MaxLanes-1)
		return p, true
	}
	if sw != nil && sw.Ports > 0 && (p.Module != 1 || p.Number < 1 || p.Number > sw.Ports) {
		c.errf(path, "%s is outside %s ports %s", s, sw.Model, sw.OS().PortRange(sw.Ports))
	}
	return p, true
}

// switchFabric resolves a switch's own fabric keys (switches decodes the
// rest); the derived values and the rules between switches are fabric's.
func (c *checker) switchFabric(p string, r SwitchFabricSpec, sw *Switch) {
	f := &sw.Fabric
	switch r.Role {
	case "":
	case RoleLeaf, RoleSpine:
		f.Role = r.Role
	default:
		c.errf(p+".role", "%q is neither %q (hosts are cabled to it; it is their gateway) nor %q (it joins the leaves)", r.Role, RoleLeaf, RoleSpine)
		f.Role = "?" // a fabric all the same: one finding, not one per key
	}
	switch r.Ports {
	case "", PortsCabled:
	case PortsAll:
		if sw.OS().GlobalQoS() {
			c.errf(p+".ports", "all: Cumulus Linux's `qos roce` is switch-global and rdggen sets port MTU only on the ports it cables; ports: all is the ONYX whole-switch form (leave it out here)")
		}
		f.AllPorts = true
	default:
		c.errf(p+".ports", "%q is neither %q (the default: RoCE QoS and MTU on the ports the inventory cables) nor %q (ONYX: on every front-panel port, the deployment guide's form)", r.Ports, PortsCabled, PortsAll)
	}
	if r.ASN != nil {
		if *r.ASN < 1 || *r.ASN > 4294967294 {
			c.errf(p+".asn", "%d is not a BGP AS number (1–4294967294)", *r.ASN)
		} else {
			f.ASN = *r.ASN
		}
	}
	if r.Loopback != "" {
		if a, err := netip.ParseAddr(r.Loopback); err != nil || !a.Is4() {
			c.errf(p+".loopback", "%q is not an IPv4 address like 10.10.10.1 (the switch's loopback and BGP router-id)", r.Loopback)
		} else if sr := specialRange(netip.PrefixFrom(a, 32)); sr != "" {
			c.errf(p+".loopback", "%s is in %s, not an address the fabric can route as a switch's loopback (RFC 6890)", a, sr)
		} else {
			f.Loopback = a
		}
	}
	if r.Subnet != "" {
		if n, err := netip.ParsePrefix(r.Subnet); err != nil || !n.Addr().Is4() || n != n.Masked() || n.Bits() > 30 {
			c.errf(p+".subnet", "%q is not an IPv4 network like 10.1.1.0/24 (its network address, /30 or larger)", r.Subnet)
		} else {
			f.Subnet = n
		}
	}
	if r.Gateway != "" {
		if a, err := netip.ParseAddr(r.Gateway); err != nil || !a.Is4() {
			c.errf(p+".gateway", "%q is not an IPv4 address like 10.1.1.254 (the leaf's address on its hosts' data subnet)", r.Gateway)
		} else {
			f.Gateway = a
		}
	}
}

// fabric resolves and checks the fabric: every switch has a role, the
// per-switch keys are only in a fabric, the links, the addressing and the
// leaves' subnets. It runs after the hosts are resolved.
func (c *checker) fabric(raw *FabricSpec) {
	inv := c.inv
	if !inv.IsFabric() {
		if raw != nil {
			c.errf("fabric", "is set, but no switch has a role: a fabric's switches are each role: leaf or role: spine")
		}
		for i, r := range c.rawSwitches() {
			p := fmt.Sprintf("switches[%d]", i)
			for key, set := range map[string]bool{"asn": r.ASN != nil, "loopback": r.Loopback != "", "subnet": r.Subnet != "", "gateway": r.Gateway != ""} {
				if set {
					c.errf(p+"."+key, "is a fabric key, and this switch has no role: set role: leaf or role: spine on every switch, or leave it out")
				}
			}
		}
		c.breakouts()
		return
	}
	if raw == nil {
		raw = &FabricSpec{}
	}
	f := &inv.Fabric
	f.Loopbacks = c.pool("fabric.loopbacks", raw.Loopbacks, DefaultLoopbacks)
	f.P2P = c.pool("fabric.p2p", raw.P2P, DefaultP2P)
	f.LeafASN = c.intIn("fabric.leaf_asn", raw.LeafASN, DefaultLeafASN, 1, 4294967294, "a BGP AS number")
	f.SpineASN = c.intIn("fabric.spine_asn", raw.SpineASN, DefaultSpineASN, 1, 4294967294, "a BGP AS number")

	// Roles, ASNs and loopbacks.
	leafN := 0
	asnAt := map[int]int{}
	loAt := map[netip.Addr]int{}
	for i := range inv.Switches {
		sw := &inv.Switches[i]
		p := fmt.Sprintf("switches[%d]", i)
		r := c.rawSwitch(i)
		if sw.Fabric.Role == "" {
			c.errf(p, "has no role: in a fabric every switch is role: leaf or role: spine")
			continue
		}
		if sw.Fabric.ASN == 0 && r.ASN == nil {
			if sw.IsLeaf() {
				sw.Fabric.ASN = f.LeafASN + leafN
			} else {
				sw.Fabric.ASN = f.SpineASN
			}
		}
		if sw.IsLeaf() {
			leafN++
		}
		if sw.Fabric.ASN > 0 {
			at := p + ".asn"
			if r.ASN == nil {
				at = p + ".role"
			}
			if j, ok := asnAt[sw.Fabric.ASN]; ok && (sw.IsLeaf() || inv.Switches[j].IsLeaf()) {
				c.errf(at, "ASN %d is also %s's (switches[%d]): each leaf has an ASN of its own, and the spines share one (RFC 7938 §5.2.1)", sw.Fabric.ASN, inv.Switches[j].Name, j)
			} else if !ok {
				asnAt[sw.Fabric.ASN] = i
			}
		}
		if !sw.Fabric.Loopback.IsValid() && r.Loopback == "" && f.Loopbacks.IsValid() {
			a := addr4(u32(f.Loopbacks.Addr()) + uint32(i) + 1)
			if f.Loopbacks.Contains(a) {
				sw.Fabric.Loopback = a
			} else {
				c.errf("fabric.loopbacks", "%s has no address left for switches[%d] (%s): widen it", f.Loopbacks, i, sw.Name)
			}
		}
		if a := sw.Fabric.Loopback; a.IsValid() {
			if j, ok := loAt[a]; ok {
				c.errf(p+".loopback", "%s is also %s's (switches[%d]) loopback: each switch's router-id is its own", a, inv.Switches[j].Name, j)
			} else {
				loAt[a] = i
			}
		}
		if sw.IsSpine() && (r.Subnet != "" || r.Gateway != "") {
			key := "subnet"
			if r.Subnet == "" {
				key = "gateway"
			}
			c.errf(p+"."+key, "%s is a spine: only a leaf has hosts, and a data subnet and gateway for them", sw.Name)
		}
	}
	c.asns()
	c.leafSubnets()
	c.links(raw.Links)
	c.onyxASNs()
	c.breakouts() // the lanes' speeds, before the oversubscription
	c.fabricSpread()
}

// Max2ByteASN is the largest 2-byte AS number; a larger one is a 4-byte
// ASN (RFC 6793), which a BGP speaker must support to configure or to peer
// with by its number.
const Max2ByteASN = 65535

// ONYXFourByteASN is the first ONYX release with a public source that it
// takes 4-byte AS numbers in `router bgp` and `neighbor … remote-as`; the
// zero Version while none is known. None was found: NVIDIA's onyx_bgp
// Ansible module (tested on ONYX 3.6.4000) states no range and its
// examples use 2-byte ASNs, and no ONYX manual or release note found
// states one (docs/rules.md#4-byte-asns-on-onyx). Until one
// does, validation refuses a 4-byte ASN on an ONYX switch, and on a switch
// an ONYX switch peers with (its `remote-as` line carries the number); a
// known release goes here, and only older ones are refused.
var ONYXFourByteASN Version

// onyxASNs refuses 4-byte ASNs where an ONYX switch would have to write
// them (ONYXFourByteASN): its own and its BGP neighbors'. Each finding is
// at the key the ASN comes from (switches[i].asn, fabric.leaf_asn or
// fabric.spine_asn), once per key.
func (c *checker) onyxASNs() {
	inv := c.inv
	seen := map[string]bool{}
	refuse := func(owner int, onyx *Switch, why string) {
		sw := &inv.Switches[owner]
		at := fmt.Sprintf("switches[%d].asn", owner)
		if c.rawSwitch(owner).ASN == nil {
			at = "fabric.spine_asn"
			if sw.IsLeaf() {
				at = "fabric.leaf_asn"
			}
		}
		if seen[at] {
			return
		}
		seen[at] = true
		c.errf(at, "ASN %d of %s is a 4-byte AS number (above %d, RFC 6793), and %s runs %s%s: no public source says ONYX takes one in `router bgp` or `neighbor … remote-as`, so rdggen does not write it; use 2-byte private ASNs, 64512–65534 (RFC 6996)",
			sw.Fabric.ASN, sw.Name, Max2ByteASN, onyx.Name, onyx.Release(), why)
	}
	index := map[string]int{}
	for i := range inv.Switches {
		index[inv.Switches[i].Name] = i
	}
	for i := range inv.Switches {
		sw := &inv.Switches[i]
		if sw.OS() != OSONYX || sw.Fabric.Role == "" || !ONYXFourByteASN.IsZero() && !sw.ONYX.Before(ONYXFourByteASN) {
			continue
		}
		if sw.Fabric.ASN > Max2ByteASN {
			refuse(i, sw, "")
		}
		for _, u := range inv.Uplinks(sw.Name) {
			if u.Peer != nil && u.Peer.Fabric.ASN > Max2ByteASN {
				refuse(index[u.Peer.Name], sw, fmt.Sprintf(" and peers with %s", u.Peer.Name))
			}
		}
	}
}

// rawSwitches are the switches as written (none for a nil Spec).
func (c *checker) rawSwitches() []SwitchFabricSpec {
	if c.raw == nil {
		return nil
	}
	out := make([]SwitchFabricSpec, len(c.raw.Switches))
	for i, s := range c.raw.Switches {
		out[i] = s.SwitchFabricSpec
	}
	return out
}

func (c *checker) rawSwitch(i int) SwitchFabricSpec {
	if c.raw == nil || i >= len(c.raw.Switches) {
		return SwitchFabricSpec{}
	}
	return c.raw.Switches[i].SwitchFabricSpec
}

// pool reads an IPv4 network key (default def).
func (c *checker) pool(path string, s *string, def string) netip.Prefix {
	v := def
	if s != nil {
		v = *s
	}
	n, err := netip.ParsePrefix(v)
	if err != nil || !n.Addr().Is4() || n != n.Masked() || n.Bits() > 31 {
		c.errf(path, "%q is not an IPv4 network like %s (its network address)", v, def)
		return netip.Prefix{}
	}
	if r := specialRange(n); r != "" {
		c.errf(path, "%s overlaps %s: the fabric's loopbacks and /31s are addresses the switches route, and none of them may be special-purpose (RFC 6890), as a host's data address may not", n, r)
		return netip.Prefix{}
	}
	return n
}

// Reserved and private BGP AS numbers.
const (
	// ASTrans is AS_TRANS, the 2-byte stand-in for a 4-byte AS number
	// (RFC 6793 §9): never a router's own AS.
	ASTrans = 23456
	// ASLast16 and ASLast32 are reserved (RFC 7300): 65535 and
	// 4294967295 (the latter is outside every ASN key's range already).
	ASLast16 = 65535
	ASLast32 = 4294967295
	// Private ASNs (RFC 6996): 64512–65534 and 4200000000–4294967294.
	PrivateASN16First, PrivateASN16Last = 64512, 65534
	PrivateASN32First, PrivateASN32Last = 4200000000, 4294967294
)

// PrivateASN reports whether asn is a private AS number (RFC 6996).
func PrivateASN(asn int) bool {
	return asn >= PrivateASN16First && asn <= PrivateASN16Last || asn >= PrivateASN32First && asn <= PrivateASN32Last
}

// asns checks every switch's ASN, written or derived: inside 1–4294967294
// (a derived leaf ASN counts up from fabric.leaf_asn and may run past
// it), never AS_TRANS (23456) or 65535 (reserved), and a warning, once per
// key it comes from, for one outside the private ranges (RFC 6996: a
// fabric's ASNs are its own, RFC 7938 §5.2.1).
func (c *checker) asns() {
	warned := map[string]bool{}
	for i, sw := range c.inv.Switches {
		asn := sw.Fabric.ASN
		if asn == 0 {
			continue
		}
		path, from := fmt.Sprintf("switches[%d].asn", i), "switches[].asn"
		if c.rawSwitch(i).ASN == nil {
			path, from = "fabric.spine_asn", "the spines' fabric.spine_asn"
			if sw.IsLeaf() {
				path, from = "fabric.leaf_asn", fmt.Sprintf("fabric.leaf_asn %d plus the leaf's place among the leaves", c.inv.Fabric.LeafASN)
			}
		}
		switch {
		case asn > PrivateASN32Last:
			c.errf(path, "%s's ASN would be %d (%s), past 4294967294, the last AS number a router may have (4294967295 is reserved, RFC 7300): use a lower fabric.leaf_asn", sw.Name, asn, from)
		case asn == ASTrans:
			c.errf(path, "%s's ASN would be 23456 (%s), AS_TRANS, the stand-in 2-byte routers see for a 4-byte AS (RFC 6793): no router's own AS; pick another", sw.Name, from)
		case asn == ASLast16:
			c.errf(path, "%s's ASN would be 65535 (%s), which is reserved (RFC 7300): pick another, e.g. from 64512–65534", sw.Name, from)
		case !PrivateASN(asn) && !warned[path]:
			warned[path] = true
			c.warnf(path, "%s's ASN %d (%s) is not a private AS number (RFC 6996: 64512–65534, 4200000000–4294967294): a fabric's eBGP ASNs are its own (RFC 7938 §5.2.1), and a public one may be someone else's on the Internet; use a private range unless this AS is yours", sw.Name, asn, from)
		}
	}
}

// leafSubnets derives each leaf's data subnet and gateway and checks that
// every host is on its leaf's subnet, that no host is cabled to a spine,
// and that leaf subnets do not overlap.
func (c *checker) leafSubnets() {
	inv := c.inv
	for i, h := range inv.Hosts {
		for _, r := range h.Rails {
			if sw := inv.Switch(r.Switch); sw != nil && sw.IsSpine() {
				c.errf(c.railPath(i, r.Index)+".switch", "%s is a spine: hosts are cabled to leaves (a spine joins the leaves and owns no host subnet)", sw.Name)
			}
		}
	}
	var leaves []int
	for i := range inv.Switches {
		sw := &inv.Switches[i]
		if !sw.IsLeaf() {
			continue
		}
		leaves = append(leaves, i)
		c.leafRails(i, sw) // rails.go
	}
	for a, i := range leaves {
		for _, j := range leaves[a+1:] {
			for _, x := range leafNets(&inv.Switches[i]) {
				for _, y := range leafNets(&inv.Switches[j]) {
					if x.IsValid() && y.IsValid() && x.Overlaps(y) {
						c.errf(fmt.Sprintf("switches[%d].subnet", j), "%s's data subnet %s overlaps %s's (switches[%d]) %s: each leaf routes its own subnet", inv.Switches[j].Name, y, inv.Switches[i].Name, i, x)
					}
				}
			}
		}
		if rs := inv.Switches[i].Fabric.Rails; len(rs) > 1 { // leafNets of a leaf of several rails
			for x := range rs {
				for _, y := range rs[x+1:] {
					if rs[x].Subnet.Overlaps(y.Subnet) {
						c.errf(fmt.Sprintf("switches[%d]", i), "%s's rail %d subnet %s and rail %d subnet %s overlap: each rail on a leaf routes a subnet of its own, taken from its hosts' addresses; give rail %d's hosts addresses (hosts[].data[%d].address) outside %s", inv.Switches[i].Name, rs[x].Rail, rs[x].Subnet, y.Rail, y.Subnet, y.Rail, y.Rail, rs[x].Subnet)
					}
				}
			}
		}
	}
}

// leafNets are switch sw's (leaf, rail) subnets: Subnet alone on a leaf
// that carries one rail or none (also a subnet the inventory sets on a
// leaf without hosts), each rail's on a leaf that carries several.
func leafNets(sw *Switch) []netip.Prefix {
	if len(sw.Fabric.Rails) > 1 {
		out := make([]netip.Prefix, len(sw.Fabric.Rails))
		for i, lr := range sw.Fabric.Rails {
			out[i] = lr.Subnet
		}
		return out
	}
	if sw.Fabric.Subnet.IsValid() {
		return []netip.Prefix{sw.Fabric.Subnet}
	}
	return nil
}

// links resolves and checks fabric.links: both ends on known switches of
// the fabric, one leaf and one spine, each port within its model, no port
// in two links or both a link end and a host's data port, and a /31 from
// fabric.p2p for each numbered link.
func (c *checker) links(raw []LinkSpec) {
	inv := c.inv
	used := map[string]string{} // "switch port" → what uses it
	for i, h := range inv.Hosts {
		if h.Data.Port.Number > 0 {
			used[h.Data.Switch+" "+h.Data.Port.String()] = fmt.Sprintf("hosts[%d]'s (%s) data port", i, h.Name)
		}
		for _, r := range h.Rails[min(1, len(h.Rails)):] {
			if k := r.Switch + " " + r.Port.String(); r.Port.Number > 0 && used[k] == "" {
				used[k] = fmt.Sprintf("hosts[%d]'s (%s) rail %d port", i, h.Name, r.Index)
			}
		}
	}
	f := &inv.Fabric
	for i, r := range raw {
		p := fmt.Sprintf("fabric.links[%d]", i)
		l := Link{Index: i}
		ok := true
		end := func(swKey, portKey, name, port string) (LinkEnd, *Switch) {
			var sw *Switch
			switch {
			case name == "":
				c.missing(p, swKey, " (the switch at this end of the link)")
				ok = false
			default:
				if sw = c.switchNamed(name); sw == nil {
					c.errf(p+"."+swKey, "unknown switch %q (switches: %s)", name, c.switchNames())
					ok = false
				}
			}
			if port == "" {
				c.missing(p, portKey, " (the port at this end, e.g. swp31 or 1/31)")
				return LinkEnd{Switch: name}, sw
			}
			pt, good := c.switchPort(p+"."+portKey, port, sw)
			if !good {
				ok = false
				return LinkEnd{Switch: name}, sw
			}
			key := name + " " + pt.String()
			if what, taken := used[key]; taken {
				c.errf(p+"."+portKey, "%s %s is also %s: a port carries one link or one host", name, port, what)
				ok = false
			} else {
				used[key] = p
			}
			return LinkEnd{Switch: name, Port: pt}, sw
		}
		var a, b *Switch
		l.A, a = end("switch", "port", r.Switch, r.Port)
		l.B, b = end("peer", "peer_port", r.Peer, r.PeerPort)
		if a != nil && b != nil {
			switch {
			case a.Name == b.Name:
				c.errf(p+".peer", "the link's ends are both on %s: a link joins two switches", a.Name)
				ok = false
			case a.Fabric.Role != "" && a.Fabric.Role == b.Fabric.Role:
				both := "leaves"
				if a.IsSpine() {
					both = "spines"
				}
				c.errf(p+".peer", "%s and %s are both %s: a two-tier fabric cables each leaf to the spines, never leaf to leaf or spine to spine", a.Name, b.Name, both)
				ok = false
			}
			l.Numbered = !a.OS().Unnumbered() || !b.OS().Unnumbered()
		}
		if l.Numbered && f.P2P.IsValid() {
			base := uint64(u32(f.P2P.Addr())) + 2*uint64(i)
			if n := netip.PrefixFrom(addr4(uint32(base)), 31); base <= uint64(u32(lastAddr(f.P2P))) && f.P2P.Contains(n.Addr()) {
				l.Net = n
			} else {
				c.errf("fabric.p2p", "%s has no /31 left for fabric.links[%d]: widen it", f.P2P, i)
			}
		}
		if ok {
			f.Links = append(f.Links, l)
		}
	}
}

// fabricSpread checks what is valid but probably not meant, and the
// address spaces against each other: a leaf not cabled to every spine, an
// oversubscribed leaf, and pools that overlap the leaf subnets, the
// container pool or each other.
func (c *checker) fabricSpread() {
	inv := c.inv
	spines := inv.Spines()
	for i := range inv.Switches {
		sw := &inv.Switches[i]
		if !sw.IsLeaf() {
			continue
		}
		p := fmt.Sprintf("switches[%d]", i)
		have := map[string]bool{}
		for _, u := range inv.Uplinks(sw.Name) {
			if u.Peer != nil {
				have[u.Peer.Name] = true
			}
		}
		var missing []string
		for _, s := range spines {
			if !have[s.Name] {
				missing = append(missing, s.Name)
			}
		}
		if len(missing) > 0 {
			c.warnf(p, "leaf %s has no link to spine(s) %s in fabric.links: every leaf is cabled to every spine, so that traffic between leaves spreads over all spines (ECMP) and loses no path when one fails", sw.Name, strings.Join(missing, ", "))
		}
		if down, up := inv.Oversubscription(sw.Name); up > 0 && down > up {
			c.warnf(p, "leaf %s is oversubscribed %.2g:1: %d Gb/s towards its hosts, %d Gb/s towards the spines; RoCE traffic between leaves then meets PFC pauses and ECN marks at the uplinks when every host sends at once (add uplinks, or accept it)", sw.Name, float64(down)/float64(up), down, up)
		} else if up == 0 && down > 0 && len(spines) > 0 {
			c.warnf(p, "leaf %s has hosts but no uplink in fabric.links: its hosts reach no other leaf", sw.Name)
		}
	}
	// Address spaces.
	type space struct {
		n    netip.Prefix
		path string
	}
	spaces := []space{{inv.Fabric.Loopbacks, "fabric.loopbacks"}, {inv.Fabric.P2P, "fabric.p2p"}, {inv.Docker.Pool, "docker.pool"}}
	for i := range inv.Switches {
		for _, n := range leafNets(&inv.Switches[i]) {
			spaces = append(spaces, space{n, fmt.Sprintf("switches[%d].subnet", i)})
		}
	}
	for a := range spaces {
		for _, y := range spaces[a+1:] {
			x := spaces[a]
			if x.n.IsValid() && y.n.IsValid() && x.n.Overlaps(y.n) && !(strings.HasPrefix(x.path, "switches") && strings.HasPrefix(y.path, "switches")) {
				c.errf(y.path, "%s overlaps %s (%s): the fabric routes each of them separately", y.n, x.path, x.n)
			}
		}
	}
	for i, sw := range inv.Switches {
		if a := sw.Fabric.Loopback; a.IsValid() {
			for _, s := range spaces[1:] { // the /31 pool, docker.pool and the leaves' subnets
				if s.n.Contains(a) {
					c.errf(fmt.Sprintf("switches[%d].loopback", i), "%s is inside %s (%s): a loopback is an address of its own", a, s.path, s.n)
				}
			}
		}
	}
	// Management is out of band (docs/fabric.md): apply reaches each
	// switch at its mgmt address while it changes the fabric's addresses
	// and routes, so a mgmt address the fabric routes would be cut by the
	// very change apply pushes.
	for i, sw := range inv.Switches {
		a, ok := mgmtAddr(sw.Mgmt)
		if !ok {
			continue
		}
		for _, s := range spaces {
			if s.n.IsValid() && s.n.Contains(a.Unmap()) {
				c.errf(fmt.Sprintf("switches[%d].mgmt", i), "%s is inside %s (%s), which the fabric routes: apply reaches %s at this address while it changes those routes and addresses, and would cut its own path; use the switch's out-of-band management port (eth0 on Cumulus Linux, mgmt0 on ONYX) and its address", a, s.path, s.n, sw.Name)
				break
			}
		}
	}
}

// fabricRouting is docker.routing and docker.gateway in a fabric: the
// leaves route the container pool (routing: switch, the default there),
// routing: hosts is refused (it needs one L2 data network), and
// docker.gateway gives way to each leaf's gateway.
func (c *checker) fabricRouting(r *DockerSpec) {
	d := &c.inv.Docker
	d.Routing = RoutingSwitch
	if r.Routing != nil && RoutingMode(*r.Routing) != RoutingSwitch {
		if RoutingMode(*r.Routing) == RoutingHosts {
			c.errf("docker.routing", "routing: hosts routes each host's container subnet via that host's data address, which needs every host on one L2 data network; in a leaf-spine fabric each leaf has its own subnet and routes its hosts' container subnets (routing: switch, the default here): remove the key or write switch")
		} else {
			c.errf("docker.routing", "%q is not a routing mode; in a fabric the leaves route the pool (%q, the default)", *r.Routing, RoutingSwitch)
		}
	}
	if r.Gateway != nil {
		c.errf("docker.gateway", "in a fabric each leaf is the gateway of its own hosts: set switches[].gateway on the leaf (default: the last host address of its subnet) instead")
	}
	pool := d.Pool
	for _, o := range routingOthers(c.inv) {
		if pool.Contains(o.addr) {
			c.errf("docker.pool", "the pool %s contains %s (%s): every host sends the whole pool to its leaf; use a pool that holds only container subnets", pool, o.addr, o.what)
		}
	}
}
