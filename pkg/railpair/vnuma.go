package railpair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// MinVNUMAHardwareVersion is the lowest VM hardware version whose
// passthrough devices can be assigned to a virtual NUMA node: vSphere 8.0's
// enhanced virtual topology needs "hardware version 20 or later" (VMware
// vSphere 8.0 Resource Management, GUID-34D6F6A7); its "CPU Topology →
// Device Assignment" setting "defines the mapping of the virtual PCIe
// device to the vNUMA topology" (F. Denneman, "vSphere 8 CPU Topology
// Device Assignment", frankdenneman.nl/2022/10/25/vsphere-8-cpu-topology-device-assignment).
const MinVNUMAHardwareVersion = 20

// VM is what the vNUMA assignment needs of the VM.
type VM struct {
	// Version is its hardware version, config.version ("vmx-20").
	Version string
	// NumCPU is its vCPU count, config.hardware.numCPU.
	NumCPU int32
	// CoresPerNUMANode is its virtual NUMA node size in vCPUs
	// (config.numaInfo.coresPerNumaNode, VirtualMachineVirtualNumaInfo);
	// 0 when ESXi sizes the nodes at power-on.
	CoresPerNUMANode int32
}

// VMFrom reads a VM from its config (config.version,
// config.hardware.numCPU, config.numaInfo); a size ESXi chooses at
// power-on (autoCoresPerNumaNode) counts as none.
func VMFrom(cfg *types.VirtualMachineConfigInfo) VM {
	if cfg == nil {
		return VM{}
	}
	vm := VM{Version: cfg.Version, NumCPU: cfg.Hardware.NumCPU}
	if ni := cfg.NumaInfo; ni != nil && ni.CoresPerNumaNode != nil && (ni.AutoCoresPerNumaNode == nil || !*ni.AutoCoresPerNumaNode) {
		vm.CoresPerNUMANode = *ni.CoresPerNumaNode
	}
	return vm
}

// Device kinds of an Assignment.
const (
	KindGPU = "GPU" // a GPU passed through (VirtualPCIPassthrough)
	KindVF  = "VF"  // a rail's VF (VirtualSriovEthernetCard)
)

// Assignment is the virtual NUMA node of one passthrough device of the VM.
type Assignment struct {
	// Kind is KindGPU or KindVF.
	Kind string
	// Rail is the device's rail.
	Rail int
	// PCI is the GPU's host address, or for a VF its PF's.
	PCI string
	// HostNode is the device's host NUMA node, -1 when unknown.
	HostNode int
	// VNode is the virtual NUMA node to set as the device's
	// VirtualDevice.numaNode; -1 ("no affinity") when HostNode is unknown.
	VNode int32
}

// VNUMA returns the virtual NUMA node of each passthrough device of the
// VM: per rail, its GPUs in slot order, then its VF. The host's NUMA nodes,
// in ascending id, map to the VM's virtual nodes 0, 1, …, so that a GPU and
// the VF of a rail on one host node share a virtual node and the guest
// sees which devices share a socket. Which host node a virtual node's
// vCPUs run on stays ESXi's choice: the assignment "does not impact NUMA
// affinity and scheduling of vCPU and memory locality at the physical
// resource layer" (Denneman, 2022), and it needs a fixed virtual topology:
// with "assigned at power on" no device can be assigned (same source). A device whose host node is unknown
// gets -1, "no affinity" (VirtualDevice.numaNode, vSphere API 8.0.0.1: "A
// negative number means there is no affinity for the device").
//
// It returns an error saying why no assignment is possible: the VM's
// hardware version is below MinVNUMAHardwareVersion; the host has fewer
// than two NUMA nodes (every device is then local to every vCPU); the VM's
// virtual NUMA size is chosen at power-on (a device's node needs a fixed
// size: VirtualMachineVirtualNuma.coresPerNumaNode, "the number of vNUMA
// nodes is calculated by total number of cores divided by
// corePerNumaNode"); the VM has one virtual NUMA node, or a number other
// than the host's.
func (p Pairing) VNUMA(vm VM) ([]Assignment, error) {
	v, err := strconv.Atoi(strings.TrimPrefix(vm.Version, "vmx-"))
	if err != nil || !strings.HasPrefix(vm.Version, "vmx-") {
		return nil, fmt.Errorf("hardware version %q is not of the form vmx-N", vm.Version)
	}
	if v < MinVNUMAHardwareVersion {
		return nil, fmt.Errorf("hardware version %s is below vmx-%d, the first that assigns devices to virtual NUMA nodes", vm.Version, MinVNUMAHardwareVersion)
	}
	hostNodes := len(p.Nodes)
	if hostNodes < 2 {
		return nil, fmt.Errorf("the host reports %d NUMA node(s): every device is local to every vCPU", hostNodes)
	}
	suggest := ""
	if vm.NumCPU > 0 && int(vm.NumCPU)%hostNodes == 0 {
		suggest = fmt.Sprintf(" (set it to %d: %d vCPUs over the host's %d nodes)", int(vm.NumCPU)/hostNodes, vm.NumCPU, hostNodes)
	}
	if vm.CoresPerNUMANode <= 0 {
		return nil, fmt.Errorf("the VM's virtual NUMA size is chosen at power-on; a device's virtual node needs a fixed coresPerNumaNode%s", suggest)
	}
	if vm.NumCPU%vm.CoresPerNUMANode != 0 {
		return nil, fmt.Errorf("%d vCPUs are not a whole number of virtual NUMA nodes of %d%s", vm.NumCPU, vm.CoresPerNUMANode, suggest)
	}
	vnodes := int(vm.NumCPU / vm.CoresPerNUMANode)
	if vnodes < 2 {
		return nil, fmt.Errorf("the VM has %d virtual NUMA node (%d vCPUs, %d per node): there is no node to choose%s", vnodes, vm.NumCPU, vm.CoresPerNUMANode, suggest)
	}
	if vnodes != hostNodes {
		return nil, fmt.Errorf("the VM has %d virtual NUMA nodes (%d vCPUs, %d per node) and the host %d; rdggen maps node to node only when the counts are equal%s",
			vnodes, vm.NumCPU, vm.CoresPerNUMANode, hostNodes, suggest)
	}
	vnode := func(hostNode int) int32 {
		for i, n := range p.Nodes {
			if n == hostNode {
				return int32(i)
			}
		}
		return -1
	}
	var out []Assignment
	for _, r := range p.Rails {
		for _, g := range r.GPUs {
			out = append(out, Assignment{Kind: KindGPU, Rail: r.Index, PCI: g.PCI, HostNode: g.Node, VNode: vnode(g.Node)})
		}
		out = append(out, Assignment{Kind: KindVF, Rail: r.Index, PCI: r.PF, HostNode: r.Node, VNode: vnode(r.Node)})
	}
	return out, nil
}
