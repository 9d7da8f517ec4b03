package bench

import (
	"strings"

	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// DefaultLinkGbps is the data link speed of the deployment guide's cluster,
// Gb/s: ConnectX-5 VFs on a 100 GbE SN2700 port.
const DefaultLinkGbps = 100

// MinLinkGbps and MaxLinkGbps bound a link speed given by hand (`rdggen
// bench --judge --link-gbps`), Gb/s: from 1, the slowest Ethernet rate an
// inventory's nic.speed_gbps accepts, to 1600, the fastest Ethernet rate
// defined (IEEE 802.3dj, 1.6 TbE; twice ConnectX-8's 800 GbE). Outside
// them the pass lines mean nothing: a speed in Mb/s typed as Gb/s, 0 or
// less, or NaN and ±Inf, which no measurement can be compared with.
const (
	MinLinkGbps = 1
	MaxLinkGbps = 1600
)

// Expect is what the verdicts compare with. The zero value checks only
// what needs no expectation; [ExpectFor] fills it from an inventory.
type Expect struct {
	// LinkGbps is the data link speed of one NIC, Gb/s (10^9 bit/s); 0
	// means DefaultLinkGbps.
	LinkGbps float64
	// NICsPerNode is the data NICs (VFs) per host that NCCL uses; 0
	// means 1.
	NICsPerNode int
	// MTU is the RDMA path MTU the hosts should run, bytes (the largest
	// RoCE MTU that fits the data network's MTU, hostqos.RoCEPathMTU);
	// 0 skips the check.
	MTU int
	// DataMTU is the data network's Ethernet MTU, bytes, for the
	// finding's text; 0 when unknown.
	DataMTU int
	// GIDIndex is the RoCE v2 GID index the hosts should use (perftest
	// -x, NCCL_IB_GID_INDEX); -1 skips the check. The zero value checks
	// index 0, so set it.
	GIDIndex int
	// LinkLayer is the link layer perftest should report: "Ethernet" for
	// RoCE; "" skips the check.
	LinkLayer string
	// Evidence are results of `rdggen check` that explain symptoms
	// (see the Evidence* check names); nil when none were read.
	Evidence []readiness.Result
	// LinkFrom, NICsFrom and MTUFrom say where LinkGbps, NICsPerNode and
	// MTU came from ("--link-gbps", "inventory cluster.yaml", "default
	// …"), for the verdicts that use them; "" says nothing.
	LinkFrom, NICsFrom, MTUFrom string
}

// linkRule is " (link speed from FROM)" when e says where its link speed
// came from, for a pass line's rule.
func (e Expect) linkRule() string {
	if e.LinkFrom == "" {
		return ""
	}
	return " (link speed: " + e.LinkFrom + ")"
}

// ExpectFor is the expectation of inv's cluster at linkGbps (0: the
// inventory's, LinkGbps; DefaultLinkGbps without an inventory): one VF per
// host, the RoCE MTU that fits the data
// network's MTU and the Ethernet link layer. The GID index is not checked
// (-1): it is each host's own, read from its GID table at launch (rdggen
// run, run.sh); set GIDIndex when the host a file comes from is known.
func ExpectFor(inv *inventory.Inventory, linkGbps float64) Expect {
	e := Expect{LinkGbps: linkGbps, NICsPerNode: 1, GIDIndex: -1, LinkLayer: "Ethernet"}
	if inv != nil && linkGbps <= 0 {
		e.LinkGbps = LinkGbps(inv)
	}
	if inv != nil {
		e.DataMTU = inv.DataMTU()
		e.MTU = hostqos.RoCEPathMTU(e.DataMTU)
	}
	return e
}

// LinkGbps is the data link speed of inv's cluster, Gb/s: the slowest
// host's nic.speed_gbps (a job and a ring of pairs run at the pace of
// their slowest link); DefaultLinkGbps for an inventory without hosts.
func LinkGbps(inv *inventory.Inventory) float64 {
	speed := 0
	for _, h := range inv.Hosts {
		if speed == 0 || h.NIC.SpeedGbps < speed {
			speed = h.NIC.SpeedGbps
		}
	}
	if speed <= 0 {
		return DefaultLinkGbps
	}
	return float64(speed)
}

func (e Expect) link() float64 {
	if e.LinkGbps <= 0 {
		return DefaultLinkGbps
	}
	return e.LinkGbps
}

func (e Expect) nics() int {
	if e.NICsPerNode <= 0 {
		return 1
	}
	return e.NICsPerNode
}

// HostPort is a host of the cluster and the switch port its data link is
// cabled to, for JudgePairs.
type HostPort struct {
	// Host is the inventory's host name.
	Host string
	// Port is the switch port as [PortLabel] names it ("switch Eth1/N" on
	// ONYX, "switch swpN" on Cumulus Linux), "" when unknown.
	Port string
	// Leaf is the leaf switch the host is cabled to in a leaf-spine
	// fabric; "" outside a fabric. JudgePairs groups pairs by their
	// hosts' leaves when it is set.
	Leaf string
}

// HostPorts lists inv's hosts with their switch ports (and, in a fabric,
// their leaves), in inventory order (the host indexes of [Rounds] and
// [RoundsByLeaf]).
func HostPorts(inv *inventory.Inventory) []HostPort {
	out := make([]HostPort, len(inv.Hosts))
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		out[i] = HostPort{Host: h.Name}
		if h.Data.Port.Number > 0 {
			if sw := inv.Switch(h.Data.Switch); sw != nil {
				out[i].Port = PortLabel(sw, h.Data.Port)
			} else {
				out[i].Port = strings.TrimSpace(h.Data.Switch + " Eth" + h.Data.Port.String())
			}
		}
		if l := inv.LeafOf(h); l != nil {
			out[i].Leaf = l.Name
		}
	}
	return out
}

// HostLeaves is each host's leaf (inventory order), "" outside a fabric:
// the argument of [RoundsByLeaf].
func HostLeaves(inv *inventory.Inventory) []string {
	out := make([]string, len(inv.Hosts))
	for i := range inv.Hosts {
		if l := inv.LeafOf(&inv.Hosts[i]); l != nil {
			out[i] = l.Name
		}
	}
	return out
}

// PortLabel names port p of switch sw as the pair verdicts and the switch
// counters do: "switch Eth1/N" on ONYX (its `show interfaces ethernet
// 1/N` short name, Eth1/N/M for a lane), "switch swpN" on Cumulus Linux
// (its own port name, swpNsM for a lane).
func PortLabel(sw *inventory.Switch, p inventory.Port) string {
	return sw.Name + " " + sw.OS().ShownPortName(p)
}

// FabricUplink is one link between a leaf and a spine of a leaf-spine
// fabric (the inventory's fabric.links), for the fabric causes of
// [JudgePairsFabric].
type FabricUplink struct {
	// Leaf and Spine are the switches; Port and SpinePort each end's port
	// as [PortLabel] names it ("leaf1 swp63", "spine1 swp1").
	Leaf, Port       string
	Spine, SpinePort string
}

// FabricUplinks lists every leaf's links to the spines, in the order of
// fabric.links; nil outside a fabric. A link between two leaves or two
// spines (not a leaf-spine design) is left out.
func FabricUplinks(inv *inventory.Inventory) []FabricUplink {
	var out []FabricUplink
	for _, l := range inv.Fabric.Links {
		a, b := inv.Switch(l.A.Switch), inv.Switch(l.B.Switch)
		if a == nil || b == nil {
			continue
		}
		switch {
		case a.IsLeaf() && b.IsSpine():
			out = append(out, FabricUplink{Leaf: a.Name, Port: PortLabel(a, l.A.Port), Spine: b.Name, SpinePort: PortLabel(b, l.B.Port)})
		case b.IsLeaf() && a.IsSpine():
			out = append(out, FabricUplink{Leaf: b.Name, Port: PortLabel(b, l.B.Port), Spine: a.Name, SpinePort: PortLabel(a, l.A.Port)})
		}
	}
	return out
}
