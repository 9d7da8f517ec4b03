package inventory

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// FabricPlan is what the fabric's cabling and addressing mean for each
// switch, derived once from the inventory: its uplinks, the speed each
// cabled port runs at, and the prefixes it learns by BGP over which
// uplinks. Building it costs O(switches + links + hosts); each question
// after that costs no more than its answer (Routes of a leaf: the other
// switches times its uplinks), where asking Inventory.Uplinks and
// HostsOnSwitch per switch scans every link and host each time. A plan is
// read-only and safe to share between goroutines.
type FabricPlan struct {
	inv     *Inventory
	uplinks map[string][]Uplink
	byLink  map[int][2]Uplink // each link from its A end and its B end
	cabled  map[[2]string]bool
	hosts   map[string][]*Host
	asns    map[int]int // switches per BGP AS
}

// FabricPlan indexes the inventory's fabric (an inventory that is not a
// fabric gives a plan with no uplinks and no routes).
func (inv *Inventory) FabricPlan() *FabricPlan {
	p := &FabricPlan{inv: inv, uplinks: map[string][]Uplink{}, byLink: map[int][2]Uplink{},
		cabled: map[[2]string]bool{}, hosts: map[string][]*Host{}, asns: map[int]int{}}
	byName := make(map[string]*Switch, len(inv.Switches))
	for i := range inv.Switches {
		byName[inv.Switches[i].Name] = &inv.Switches[i]
		if asn := inv.Switches[i].Fabric.ASN; asn != 0 {
			p.asns[asn]++
		}
	}
	for _, l := range inv.Fabric.Links {
		var a, b netip.Addr
		if l.Net.IsValid() {
			a, b = l.Net.Addr(), l.Net.Addr().Next()
		}
		fromA := Uplink{Link: l.Index, Port: l.A.Port, Peer: byName[l.B.Switch], PeerPort: l.B.Port, Numbered: l.Numbered}
		fromB := Uplink{Link: l.Index, Port: l.B.Port, Peer: byName[l.A.Switch], PeerPort: l.A.Port, Numbered: l.Numbered}
		if l.Numbered && a.IsValid() {
			fromA.Local, fromA.Remote = netip.PrefixFrom(a, 31), netip.PrefixFrom(b, 31)
			fromB.Local, fromB.Remote = fromA.Remote, fromA.Local
		}
		p.uplinks[l.A.Switch] = append(p.uplinks[l.A.Switch], fromA)
		p.uplinks[l.B.Switch] = append(p.uplinks[l.B.Switch], fromB)
		p.byLink[l.Index] = [2]Uplink{fromA, fromB}
		p.cabled[[2]string{l.A.Switch, l.B.Switch}] = true
		p.cabled[[2]string{l.B.Switch, l.A.Switch}] = true
	}
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		p.hosts[h.Data.Switch] = append(p.hosts[h.Data.Switch], h)
	}
	return p
}

// Uplinks are switch sw's inter-switch links in the order of fabric.links,
// each oriented from sw: Inventory.Uplinks, from the index.
func (p *FabricPlan) Uplinks(sw string) []Uplink { return p.uplinks[sw] }

// Hosts are the hosts whose data port is on switch sw, in file order:
// Inventory.HostsOnSwitch, from the index.
func (p *FabricPlan) Hosts(sw string) []*Host { return p.hosts[sw] }

// Far is link u.Link seen from its other end (the peer's uplink), and false
// when the plan has no such link.
func (p *FabricPlan) Far(u Uplink) (Uplink, bool) {
	ends, ok := p.byLink[u.Link]
	if !ok {
		return Uplink{}, false
	}
	if ends[0].Port == u.Port && ends[0].Peer == u.Peer {
		return ends[1], true
	}
	return ends[0], true
}

// Cabled reports whether a link joins switches a and b.
func (p *FabricPlan) Cabled(a, b string) bool { return p.cabled[[2]string{a, b}] }

// SharedASN reports whether more than one switch of the fabric has BGP AS
// asn (the spines share one, RFC 7938 §5.2.1): the AS alone then does not
// say which of them a session's peer is.
func (p *FabricPlan) SharedASN(asn int) bool { return p.asns[asn] > 1 }

// Neighbor is the BGP neighbor of uplink u's session as switch sw names it
// in its configuration and its neighbor table: the peer's address on a
// numbered link (every link with an ONYX end), else sw's port (BGP
// unnumbered on the interface, as pkg/cumulus configures it).
func (u Uplink) Neighbor(sw Switch) string {
	if u.Numbered && u.Remote.IsValid() {
		return u.Remote.Addr().String()
	}
	return sw.PortName(u.Port)
}

// LinkSpeedGbps is the speed, Gb/s, at which the link on port port of
// switch sw comes up when both its ends are as the inventory plans them
// (an Ethernet link runs at the highest speed both ends support): on an
// uplink the lower of the two ends' Switch.PortSpeedGbps, on a port cabled
// to hosts the lower of the port's PortSpeedGbps and the fastest
// NIC.SpeedGbps of the hosts on it. 0 when the port is cabled to nothing in
// the inventory or a speed is not known.
func (p *FabricPlan) LinkSpeedGbps(sw *Switch, port Port) int {
	gbps, _ := p.LinkSpeed(sw, port)
	return gbps
}

// LinkSpeed is LinkSpeedGbps with what it follows from, for a person:
// "leaf1 swp63 800 Gb/s, spine1 swp1 800 Gb/s" or "leaf1 swp1s0 400 Gb/s,
// h11's NIC 400 Gb/s" (the hosts' NICs named when several share the
// port).
func (p *FabricPlan) LinkSpeed(sw *Switch, port Port) (gbps int, basis string) {
	for _, u := range p.uplinks[sw.Name] {
		if u.Port == port {
			if u.Peer == nil {
				return 0, ""
			}
			a, b := sw.PortSpeedGbps(port), u.Peer.PortSpeedGbps(u.PeerPort)
			return min(a, b), fmt.Sprintf("%s %s %d Gb/s, %s %s %d Gb/s", sw.Name, sw.PortName(port), a, u.Peer.Name, u.Peer.PortName(u.PeerPort), b)
		}
	}
	nic := 0
	var names []string
	for _, h := range p.hosts[sw.Name] {
		if h.Data.Port == port {
			nic = max(nic, h.NIC.SpeedGbps)
			names = append(names, h.Name)
		}
	}
	if nic == 0 {
		return 0, ""
	}
	a := sw.PortSpeedGbps(port)
	who := names[0] + "'s NIC"
	if len(names) > 1 {
		who = strings.Join(names, ", ") + "'s NICs at most"
	}
	return min(a, nic), fmt.Sprintf("%s %s %d Gb/s, %s %d Gb/s", sw.Name, sw.PortName(port), a, who, nic)
}

// FabricRoute is one prefix a fabric switch must learn by BGP.
type FabricRoute struct {
	Prefix netip.Prefix
	// Owner is the switch that announces it; What says what it is there
	// ("the data subnet", "the loopback", "h21's container subnet").
	Owner *Switch
	What  string
	// Host is the host of a container subnet (the Owner announces the
	// subnet while its static route via that host is installed), else nil.
	Host *Host
	// Via are the switch's uplinks that must each carry a next hop
	// (ECMP); Direct says they are cabled to Owner itself, else each to a
	// spine that is cabled to Owner.
	Via    []Uplink
	Direct bool
}

// Routes are the prefixes fabric switch sw must learn, in the inventory's
// switch order, each with the uplinks it must be routed over: from every
// other leaf its data subnet, its hosts' container subnets and its
// loopback, from every spine its loopback (pkg/cumulus and pkg/onyx
// announce exactly these with BGP network statements). Towards a switch
// cabled directly the uplinks to it; on a leaf towards another leaf one
// uplink to each spine cabled to that leaf (ECMP across the spines). A
// spine learns no other spine's loopback (the spines share one AS, RFC
// 7938 §5.2.1, so BGP drops the paths through a leaf as loops, RFC 4271
// §9.1.2), nor the prefixes of a leaf not cabled to it; a leaf that shares
// no spine with another leaf gets that leaf's prefixes with no uplink (the
// plan gives them no path).
func (p *FabricPlan) Routes(sw *Switch) []FabricRoute {
	if sw.Fabric.Role == "" {
		return nil
	}
	ups := p.uplinks[sw.Name]
	var out []FabricRoute
	for i := range p.inv.Switches {
		x := &p.inv.Switches[i]
		if x.Name == sw.Name || x.Fabric.Role == "" || sw.IsSpine() && x.IsSpine() {
			continue
		}
		var via []Uplink
		direct := false
		for _, u := range ups {
			if u.Peer != nil && u.Peer.Name == x.Name {
				via = append(via, u)
				direct = true
			}
		}
		if !direct {
			if sw.IsSpine() {
				continue // a leaf not cabled to this spine
			}
			for _, u := range ups {
				if u.Peer != nil && u.Peer.IsSpine() && p.Cabled(u.Peer.Name, x.Name) {
					via = append(via, u)
				}
			}
		}
		via = slices.Clip(via)
		add := func(pfx netip.Prefix, what string, h *Host) {
			if pfx.IsValid() {
				out = append(out, FabricRoute{Prefix: pfx, Owner: x, What: what, Host: h, Via: via, Direct: direct})
			}
		}
		if x.IsLeaf() && x.Fabric.Subnet.IsValid() && x.Fabric.Gateway.IsValid() {
			add(x.Fabric.Subnet, "the data subnet", nil)
			for _, h := range p.hosts[x.Name] {
				add(h.Subnet, h.Name+"'s container subnet", h)
			}
		}
		if x.Fabric.Loopback.IsValid() {
			add(netip.PrefixFrom(x.Fabric.Loopback, 32), "the loopback", nil)
		}
	}
	return out
}

// MiswireFrom says which LLDP finding the finding of a miswired uplink
// follows from, so that one fault is named by one cause: uplink u of
// switch sw hears, instead of its planned end, the port farPort (its
// PortName or ShownPortName) of switch far. The answer is the end (a
// switch and its port) whose own LLDP finding to follow from, and false
// when u's finding is the root of its fault (it follows from no other):
//
//   - The port heard is the planned end of another uplink v of sw: cables
//     are swapped or rotated at sw, the fault shows on sw, and u follows
//     from v. The swapped or rotated ports each follow from the next, a
//     cycle of findings, which readiness.Causes makes one cause: the
//     first of them in the check's results. Where u and v both run
//     between sw and far, the swap shows at far too; the switch whose
//     name sorts first then holds the cycle, and on the other u follows
//     from the end its cable reached, as below.
//   - Otherwise (one cable moved), the end the cable reached: far's uplink
//     on farPort, whose LLDP finding shows the same cable from its side;
//     false when farPort is no uplink of far.
//
// The far ends of a swap or rotation hear sw's ports and so follow from
// sw's findings: the fault is one cause, named at the switch where it was
// made. Cost: O(uplinks of sw + uplinks of far).
func (p *FabricPlan) MiswireFrom(sw *Switch, u Uplink, far *Switch, farPort string) (*Switch, Port, bool) {
	if far == nil {
		return nil, Port{}, false
	}
	named := func(x *Switch, port Port) bool {
		return x.PortName(port) == farPort || x.OS().ShownPortName(port) == farPort
	}
	swapHere := u.Peer == nil || u.Peer.Name != far.Name || sw.Name < far.Name
	for _, v := range p.uplinks[sw.Name] {
		if v.Link == u.Link || v.Peer == nil || v.Peer.Name != far.Name || !named(far, v.PeerPort) {
			continue
		}
		if !swapHere {
			break
		}
		return sw, v.Port, true
	}
	for _, xu := range p.uplinks[far.Name] {
		if named(far, xu.Port) {
			return far, xu.Port, true
		}
	}
	return nil, Port{}, false
}
