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
	// Port is "switch Eth1/N", "" when unknown.
	Port string
}

// HostPorts lists inv's hosts with their switch ports, in inventory order
// (the host indexes of [Rounds]).
func HostPorts(inv *inventory.Inventory) []HostPort {
	out := make([]HostPort, len(inv.Hosts))
	for i, h := range inv.Hosts {
		out[i] = HostPort{Host: h.Name}
		if h.Data.Port.Number > 0 {
			out[i].Port = strings.TrimSpace(h.Data.Switch + " Eth" + h.Data.Port.String())
		}
	}
	return out
}
