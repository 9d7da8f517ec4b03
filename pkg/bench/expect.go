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
	// VSphere says the outputs come from the VMs of a vSphere cluster that
	// rdggen built: an inventory was given with them, or rdggen bench ran
	// them (ExpectFor sets it; `rdggen check` results in Evidence say so
	// too). Only then does a cause name what holds in such a VM alone (the
	// P2P VMX keys, the PHB path of a passed-through device, "in the VM")
	// or send the user to `rdggen check`, `rdggen bench` or `rdggen apply`.
	// False, for a file from elsewhere: a cause claims only what the file
	// shows.
	VSphere bool
	// LinkFrom, NICsFrom and MTUFrom say where LinkGbps, NICsPerNode and
	// MTU came from ("--link-gbps", "inventory cluster.yaml", "default
	// …"), for the verdicts that use them; "" says nothing.
	LinkFrom, NICsFrom, MTUFrom string
	// Rails are the hosts' rails in rail order, for a cluster whose hosts
	// have several data ports, one per rail (rail r of every host on the
	// same leaf or leaf group). With two or more, ib_write_bw is judged
	// rail by rail, each pair at its rail's link speed ([JudgeRailPairs]),
	// and nccl-tests' busbw against the sum of the rails' link speeds
	// ([BusBWPassLineRails]); NICsPerNode is then the number of rails.
	// nil, or a single rail: the cluster is judged by LinkGbps and
	// NICsPerNode alone, exactly as a cluster without rails.
	Rails []Rail
	// PairVerdicts are the verdicts of ib_write_bw run rail by rail on
	// the same hosts ([JudgeRailPairs]), when the run being judged is
	// part of the same bench; nil otherwise. A busbw below its line on a
	// multi-rail cluster whose every rail passed (CheckRDMARail) is then
	// blamed on the pairing of GPUs with NICs, not on the network.
	PairVerdicts []Verdict
}

// Rail is one rail of the hosts, for the verdicts of a multi-rail
// cluster ([Expect.Rails]).
type Rail struct {
	// LinkGbps is the link speed of the hosts' port on this rail, Gb/s
	// (the slowest host's); 0 means Expect.LinkGbps.
	LinkGbps float64
	// HCA is the guest's RDMA device of this rail ("mlx5_1"), as NCCL's
	// "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE …" names it; ""
	// when unknown. It ties the net device of an NCCL channel line
	// ("via NET/IB/1") to its rail.
	HCA string
	// GPUs are the GPUs paired with this rail, by NVML index: the number
	// nvidia-smi gives each GPU in the guest (ascending PCI bus ID) and
	// the one NCCL prints after each rank in its channel lines,
	// "rank[nvmlDev]" (NVIDIA/nccl src/transport/net.cc; older NCCL
	// printed the GPU's bus ID there instead, "13[b2000]"). nil when
	// unknown.
	GPUs []int
}

// multiRail reports whether e judges a cluster of several rails.
func (e Expect) multiRail() bool { return len(e.Rails) > 1 }

// railLink is rail r's link speed, Gb/s: its own, else e's.
func (e Expect) railLink(r int) float64 {
	if r >= 0 && r < len(e.Rails) && e.Rails[r].LinkGbps > 0 {
		return e.Rails[r].LinkGbps
	}
	return e.link()
}

// forRail is e for the pairs of rail r: its link speed is the rail's.
func (e Expect) forRail(r int) Expect {
	if e.multiRail() {
		e.LinkGbps = e.railLink(r)
	}
	return e
}

// railLinks is every rail's link speed, Gb/s, in rail order.
func (e Expect) railLinks() []float64 {
	out := make([]float64, len(e.Rails))
	for r := range e.Rails {
		out[r] = e.railLink(r)
	}
	return out
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
// host — or, for an inventory whose hosts have several rails, one per rail
// (Rails: [RailsOf], NICsPerNode the rail count) —, the RoCE MTU that fits
// the data network's MTU and the Ethernet link layer; VSphere when inv is
// not nil (an inventory is a vSphere cluster: clear it for a file judged
// against the reference inventory only for its defaults). The GID index is
// not checked (-1): it is each host's own, read from its GID table at
// launch (rdggen run, run.sh); set GIDIndex when the host a file comes
// from is known.
func ExpectFor(inv *inventory.Inventory, linkGbps float64) Expect {
	e := Expect{LinkGbps: linkGbps, NICsPerNode: 1, GIDIndex: -1, LinkLayer: "Ethernet"}
	if inv != nil && linkGbps <= 0 {
		e.LinkGbps = LinkGbps(inv)
	}
	if inv != nil {
		e.VSphere = true
		e.DataMTU = inv.DataMTU()
		e.MTU = hostqos.RoCEPathMTU(e.DataMTU)
		if e.Rails = RailsOf(inv); e.Rails != nil {
			e.NICsPerNode = len(e.Rails)
		}
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

// rdggenCluster reports whether the outputs judged against e come from a
// cluster rdggen built, on vSphere: e.VSphere, or `rdggen check` results
// given as evidence (they come from no other cluster).
func (e Expect) rdggenCluster() bool { return e.VSphere || len(e.Evidence) > 0 }

func (e Expect) nics() int {
	if e.multiRail() {
		return len(e.Rails)
	}
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
