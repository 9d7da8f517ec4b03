package bench

import (
	"slices"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// RailsOf is the rails of inv's hosts in rail order, for [Expect.Rails]:
// nil for an inventory of one rail (its hosts' data are mappings), so that
// it is judged exactly as before rails existed. Each rail's:
//
//   - LinkGbps is 0: every rail is a VF of one NIC model (the host's
//     nic.speed_gbps), so each follows Expect.LinkGbps, the inventory's
//     slowest host's speed or --link-gbps;
//   - HCA is the guest's RDMA device of the rail, inventory.Horovod.RailHCA
//     (horovod.hca for rail 0, its number plus r for rail r), the names
//     NCCL_IB_HCA gives NCCL;
//   - GPUs are the rail's GPUs by NVML index when every host pairs the same
//     ones with it, else nil (not compared). GPU g of a VM is the g-th of
//     its inventory entry's gpus, which the guest enumerates in that order
//     (the VMX's pciPassthruN entries) and NVML numbers by PCI bus ID: the
//     order docs/rails.md states as rdggen's assumption and the topology
//     file relies on.
func RailsOf(inv *inventory.Inventory) []Rail {
	n := inv.RailCount()
	if n < 2 {
		return nil
	}
	out := make([]Rail, n)
	for r := range out {
		out[r].HCA = inv.Horovod.RailHCA(r)
		gpus := inv.Hosts[0].Rails[r].GPUs
		same := true
		for i := range inv.Hosts {
			if h := &inv.Hosts[i]; r >= len(h.Rails) || !slices.Equal(h.Rails[r].GPUs, gpus) {
				same = false
				break
			}
		}
		if same && len(gpus) > 0 {
			out[r].GPUs = slices.Clone(gpus)
		}
	}
	return out
}

// RailLeaves is each host's leaf on each rail: leaves[r][i] is the leaf
// rail r of host i (inventory order) is cabled to, "" when that switch is
// not a leaf (outside a leaf-spine fabric) — the argument of
// [RailRounds] and [RailWaves]. An inventory of one rail gives one row,
// [HostLeaves].
func RailLeaves(inv *inventory.Inventory) [][]string {
	if inv.RailCount() < 2 {
		return [][]string{HostLeaves(inv)}
	}
	out := make([][]string, inv.RailCount())
	for r := range out {
		out[r] = make([]string, len(inv.Hosts))
		for i := range inv.Hosts {
			if h := &inv.Hosts[i]; r < len(h.Rails) {
				if sw := inv.Switch(h.Rails[r].Switch); sw != nil && sw.IsLeaf() {
					out[r][i] = sw.Name
				}
			}
		}
	}
	return out
}

// RailHostPorts is each host's switch port on each rail: ports[r][i] is
// host i's (inventory order) on rail r, its Port named as [PortLabel]
// names it and its Leaf that of [RailLeaves], for the pair verdicts of
// [JudgeRailPairs] and the switch counters. An inventory of one rail
// gives one row, [HostPorts].
func RailHostPorts(inv *inventory.Inventory) [][]HostPort {
	if inv.RailCount() < 2 {
		return [][]HostPort{HostPorts(inv)}
	}
	leaves := RailLeaves(inv)
	out := make([][]HostPort, inv.RailCount())
	for r := range out {
		out[r] = make([]HostPort, len(inv.Hosts))
		for i := range inv.Hosts {
			h := &inv.Hosts[i]
			hp := HostPort{Host: h.Name, Leaf: leaves[r][i]}
			if r < len(h.Rails) {
				if l := h.Rails[r]; l.Port.Number > 0 {
					if sw := inv.Switch(l.Switch); sw != nil {
						hp.Port = PortLabel(sw, l.Port)
					} else {
						hp.Port = strings.TrimSpace(l.Switch + " Eth" + l.Port.String())
					}
				}
			}
			out[r][i] = hp
		}
	}
	return out
}
