package railpair

import (
	"fmt"
	"slices"
	"strings"
)

// Locality is how near a GPU is to its rail's PF, worst first.
type Locality int

// The localities, in the order the pairing prefers them (docs/rules.md,
// "GPU–rail pairing").
const (
	// Unknown: the host lists no NUMA node for the GPU or the PF (or
	// for a bridge above it), and they share no PCIe switch.
	Unknown Locality = iota
	// CrossSocket: different NUMA nodes; GPUDirect RDMA between them
	// crosses the link between the CPU sockets.
	CrossSocket
	// SameNode: one NUMA node, no common PCIe switch; the path goes
	// through the CPU's root complex.
	SameNode
	// SameSwitch: under one PCIe switch (their nearest common bridge is
	// below a root port); the path stays in the switch.
	SameSwitch
)

// String is the locality as the plan names it.
func (l Locality) String() string {
	switch l {
	case SameSwitch:
		return "same PCIe switch"
	case SameNode:
		return "same NUMA node"
	case CrossSocket:
		return "crosses sockets"
	}
	return "NUMA node unknown"
}

// Request is one VM's side of the pairing.
type Request struct {
	// Rails are the ESXi uplinks (vmnic names, "vmnic5") of the VM's rail
	// ports, in rail order: the VM's VF of rail r comes from the PF of
	// Rails[r].
	Rails []string
	// GPUs are the VM's GPU slots in order: a host PCI address where the
	// GPU is given (set in the inventory, gpus[].pci, or already attached
	// to the VM and kept), "" where Pair chooses one from Free.
	GPUs []string
	// Free are the host's GPUs the empty slots may take: of the VM's
	// model, and passed through to no other VM. A given GPU listed here
	// too is ignored here.
	Free []string
	// PerRail is the number of GPUs per rail: slot i belongs to rail
	// i / PerRail (8 GPUs on 4 rails: slots 0–1 with rail 0, …). 0 means
	// len(GPUs) / len(Rails), rounded up.
	PerRail int
	// RailOf, when set, is the rail of each slot instead (the inventory's
	// gpus[].rail, pkg/inventory GPU.Rail): RailOf[i] is slot i's rail, a
	// rail may have any number of slots, and PerRail is ignored. nil
	// shares the slots out by position with PerRail.
	RailOf []int
}

// Pairing is one VM's GPUs paired with its rails.
type Pairing struct {
	// Rails in rail order, each with its GPUs in slot order.
	Rails []Rail
	// Nodes are the host's NUMA node ids (HostNumaNode.typeId),
	// ascending; empty when the host reports none.
	Nodes []int
}

// Rail is one rail of the VM and the GPUs paired with it.
type Rail struct {
	// Index is the rail's number (0 = first).
	Index int
	// VMNIC is the ESXi uplink of the rail's port, PF its PCI address
	// (PhysicalNic.pci, lower case).
	VMNIC, PF string
	// Node is the PF's NUMA node, -1 when the host lists none for it.
	Node int
	// GPUs are the rail's GPUs, in slot order.
	GPUs []GPU
}

// GPU is one GPU slot of the VM and how near it is to its rail's PF.
type GPU struct {
	// Slot is the GPU's position in Request.GPUs.
	Slot int
	// PCI is the GPU's host PCI address (lower case).
	PCI string
	// Chosen: Pair chose it from Request.Free; else it was given and is
	// only checked.
	Chosen bool
	// Locality to the rail's PF.
	Locality Locality
	// Switch is, for SameSwitch, the nearest bridge above both the GPU and
	// the PF (the upstream port of their PCIe switch); Hops the number of
	// bridges on the path between them through it.
	Switch string
	Hops   int
	// Node is the GPU's NUMA node, -1 when the host lists none for it.
	Node int
	// Nearer is, for a given GPU that is not on its rail's PCIe switch,
	// the rail of this VM whose PF is nearest to it when that is nearer
	// than its own (the lowest such rail of the best locality); -1 when
	// none is; NearerBy is that rail's locality to the GPU.
	Nearer   int
	NearerBy Locality
}

// InputError lists what makes a Request impossible on a Host: an uplink
// the host lacks, two rails on one PF, a GPU the host does not list, more
// GPUs than rails × PerRail, too few free GPUs.
type InputError struct {
	Problems []string
}

func (e *InputError) Error() string {
	return "GPU–rail pairing: " + strings.Join(e.Problems, "; ")
}

// Pair pairs the VM's GPU slots with its rails on host h.
//
// Each slot belongs to a rail by its position (Request.PerRail). A given
// GPU stays in its slot and its locality to the rail's PF is reported.
// The empty slots are filled from Request.Free in three passes, each over
// the rails in rail order and each rail's empty slots in slot order:
//
//  1. a free GPU under the same PCIe switch as the rail's PF (their nearest
//     common bridge is below a root port: NVIDIA's GPU–NIC groups "that
//     share a common PCI Express switch"), the one with the fewest bridges
//     between it and the PF;
//  2. a free GPU on the PF's NUMA node (HostNumaNode.pciId; a device the
//     host does not list is on the node of its nearest listed bridge);
//  3. any free GPU: the pair crosses sockets (or its nodes are unknown)
//     and Warnings says so.
//
// Ties go to the lowest PCI address, so that the same host and request
// always give the same pairing. Pass 1 is finished for every rail before
// pass 2 starts, so that no rail takes, as merely NUMA-local, a GPU that
// another rail's PF shares a switch with.
//
// Sources: NVIDIA, "Optimizing VM Configuration for AI Inference", System
// Setup ("groups of PCI devices, usually one or two GPUs, one or more
// NIC(s) … that share a common PCI Express switch"); NVIDIA, GPUDirect
// RDMA, Supported Systems (a path through PCIe switches only is best; one
// through the CPU "works, but yields worse performance"; one across the
// socket interconnect may be "extremely performance-limited"); VMware
// vSphere Web Services API, HostPciDevice.parentBridge ("The parent bridge
// of this PCI") and HostNumaNode.pciId ("Information about each of the
// pci devices associated with the node").
//
// The error is an *InputError.
func Pair(h Host, r Request) (Pairing, error) {
	t := newTree(h)
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }

	if len(r.Rails) == 0 {
		bad("no rails")
	}
	uplink := map[string]string{}
	var names []string
	for _, u := range h.Uplinks {
		if _, dup := uplink[u.Device]; !dup {
			uplink[u.Device] = norm(u.Pci)
			names = append(names, u.Device)
		}
	}
	rails := make([]Rail, len(r.Rails))
	railOfPF := map[string]int{}
	for i, nic := range r.Rails {
		pf, ok := uplink[nic]
		switch {
		case !ok:
			bad("rail %d: the host has no uplink %s (uplinks: %s)", i, nic, strings.Join(names, ", "))
		case t.dev[pf] == nil:
			bad("rail %d: %s's PCI address %s is not among the host's PCI devices", i, nic, pf)
		default:
			if j, dup := railOfPF[pf]; dup {
				bad("rails %d and %d share one PF, %s (%s)", j, i, pf, nic)
			}
			railOfPF[pf] = i
		}
		rails[i] = Rail{Index: i, VMNIC: nic, PF: pf, Node: t.numa(pf)}
	}
	// railOf[s] is slot s's rail: Request.RailOf, else by position.
	railOf := make([]int, len(r.GPUs))
	if r.RailOf != nil {
		if len(r.RailOf) != len(r.GPUs) {
			bad("%d rails given for %d GPUs", len(r.RailOf), len(r.GPUs))
		}
		for s := range railOf {
			if s < len(r.RailOf) {
				railOf[s] = r.RailOf[s]
			}
			if railOf[s] < 0 || railOf[s] >= len(rails) {
				bad("GPU %d: rail %d of %d rails", s, railOf[s], len(rails))
				railOf[s] = 0
			}
		}
	} else {
		per := r.PerRail
		if per == 0 && len(rails) > 0 {
			per = (len(r.GPUs) + len(rails) - 1) / len(rails)
		}
		if per < 0 {
			bad("%d GPUs per rail", per)
		} else if len(r.GPUs) > per*len(rails) {
			bad("%d GPUs do not fit %d rails of %d GPUs each", len(r.GPUs), len(rails), per)
		} else {
			for s := range railOf {
				railOf[s] = s / per
			}
		}
	}
	given := map[string]int{}
	need := 0
	for i, g := range r.GPUs {
		if g == "" {
			need++
			continue
		}
		id := norm(g)
		if t.dev[id] == nil {
			bad("GPU %d: %s is not among the host's PCI devices", i, id)
		}
		if j, dup := given[id]; dup {
			bad("GPUs %d and %d are both %s", j, i, id)
			continue
		}
		given[id] = i
	}
	var free []string
	for _, g := range r.Free {
		id := norm(g)
		if _, ok := given[id]; ok || slices.Contains(free, id) {
			continue
		}
		if t.dev[id] == nil {
			bad("free GPU %s is not among the host's PCI devices", id)
			continue
		}
		free = append(free, id)
	}
	slices.Sort(free)
	if need > len(free) {
		bad("%d GPUs to choose but %d free", need, len(free))
	}
	if len(problems) > 0 {
		return Pairing{}, &InputError{Problems: problems}
	}

	slots := make([]GPU, len(r.GPUs))
	fill := func(s int, id string, chosen bool) {
		l := t.link(id, rails[railOf[s]].PF)
		slots[s] = GPU{Slot: s, PCI: id, Chosen: chosen, Locality: l.loc, Switch: l.sw, Hops: l.hops, Node: l.gpu, Nearer: -1}
	}
	for id, s := range given {
		fill(s, id, false)
	}
	taken := map[string]bool{}
	for pass := 1; pass <= 3 && need > 0; pass++ {
		for ri := range rails {
			for s := range slots {
				if railOf[s] != ri || slots[s].PCI != "" {
					continue
				}
				best, hops := "", 0
				for _, id := range free {
					if taken[id] {
						continue
					}
					l := t.link(id, rails[ri].PF)
					if (pass == 1 && l.loc != SameSwitch) || (pass == 2 && l.loc < SameNode) {
						continue
					}
					// free is sorted: a later candidate wins only by
					// fewer bridges (pass 1).
					if best == "" || (pass == 1 && l.hops < hops) {
						best, hops = id, l.hops
					}
				}
				if best != "" {
					taken[best] = true
					need--
					fill(s, best, true)
				}
			}
		}
	}
	for s := range slots {
		g := &slots[s]
		if g.Chosen || g.Locality == SameSwitch {
			continue
		}
		bestLoc := g.Locality
		for j := range rails {
			if l := t.link(g.PCI, rails[j].PF); j != railOf[s] && l.loc > bestLoc {
				bestLoc, g.Nearer, g.NearerBy = l.loc, j, l.loc
			}
		}
	}
	for s, g := range slots {
		rails[railOf[s]].GPUs = append(rails[railOf[s]].GPUs, g)
	}
	return Pairing{Rails: rails, Nodes: t.nodes}, nil
}
