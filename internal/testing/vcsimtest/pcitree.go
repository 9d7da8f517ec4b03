package vcsimtest

import (
	"fmt"
	"slices"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// PCIKind is what a node of a PCITree is.
type PCIKind int

// The kinds of PCITree nodes.
const (
	// RootPort is a CPU's PCIe root port, on a root bus: ESXi reports it
	// with no parentBridge.
	RootPort PCIKind = iota
	// SwitchPort is a port of a PCIe switch, upstream or downstream.
	SwitchPort
	// GPUDevice is an NVIDIA GPU (PCITree.GPU's model).
	GPUDevice
	// NICPort is one port (physical function) of a ConnectX-7, with an
	// uplink of its own (PCINode.VMNIC).
	NICPort
)

// PCINode is one PCI function of a PCITree and the functions behind it.
type PCINode struct {
	// ID is the PCI address, "0000:3b:00.0" (lower-case hex).
	ID   string
	Kind PCIKind
	// VMNIC is a NIC port's uplink name ("vmnic5").
	VMNIC string
	// Children sit behind this node (a bridge's); each gets this node's ID
	// as its parentBridge.
	Children []PCINode
}

// PCITree is the PCI hierarchy of a simulated ESXi host's GPUs and NIC
// ports, as Sim.SetPCITree (or Options.PCITrees) gives it to the host:
// per NUMA node (CPU socket), its root ports and what sits behind them.
type PCITree struct {
	// Nodes[n] are the root ports of NUMA node n.
	Nodes [][]PCINode
	// GPU is the GPUs' model, for their device id and name; default
	// H100-PCIE-80GB.
	GPU inventory.GPU
}

// Device identities of the tree's bridges and NIC ports, as a public lspci
// listing of a PCIe Gen 5 GPU server shows them (Intel root port 8086:352c,
// Broadcom PEX890xx switch 1000:c030) and the PCI ID repository names the
// ConnectX-7 (15b3:1021, "MT2910 Family [ConnectX-7]").
const (
	classBridge = 0x0604
	classGPU    = 0x0302
	classNIC    = 0x0200
)

// s16 is a PCI id as HostPciDevice carries it: an unsigned 16-bit value
// in a signed field (0x8086 is -32634).
func s16(v uint16) int16 { return int16(v) }

// gpuModel is t.GPU or the default.
func (t PCITree) gpuModel() inventory.GPU {
	if t.GPU.Model == "" {
		return inventory.GPU{Model: "H100-PCIE-80GB", MemoryGB: 80}
	}
	return t.GPU
}

// walk calls f for every node of t with its NUMA node and parent bridge,
// depth first, in tree order.
func (t PCITree) walk(f func(n PCINode, numa int, parent string)) {
	var rec func(ns []PCINode, numa int, parent string)
	rec = func(ns []PCINode, numa int, parent string) {
		for _, n := range ns {
			f(n, numa, parent)
			rec(n.Children, numa, n.ID)
		}
	}
	for numa, ports := range t.Nodes {
		rec(ports, numa, "")
	}
}

// Devices returns the tree as ESXi's hardware.pciDevice entries, in tree
// order, each with its parentBridge.
func (t PCITree) Devices() []types.HostPciDevice {
	g := t.gpuModel()
	gpuID := uint16(0x2331)
	if ids := vmx.DeviceIDsFor(g); len(ids) > 0 {
		gpuID = ids[0]
	}
	var out []types.HostPciDevice
	t.walk(func(n PCINode, _ int, parent string) {
		d := types.HostPciDevice{Id: n.ID, ParentBridge: parent}
		_, _ = fmt.Sscanf(n.ID, "0000:%02x:%02x.%x", &d.Bus, &d.Slot, &d.Function)
		switch n.Kind {
		case RootPort:
			d.ClassId, d.VendorId, d.DeviceId = classBridge, s16(0x8086), 0x352c
			d.VendorName, d.DeviceName = "Intel Corporation", "PCIe Root Port"
		case SwitchPort:
			d.ClassId, d.VendorId, d.DeviceId = classBridge, 0x1000, s16(0xc030)
			d.VendorName, d.DeviceName = "Broadcom / LSI", "PEX890xx PCIe Gen 5 Switch"
		case GPUDevice:
			d.ClassId, d.VendorId, d.DeviceId, d.SubVendorId = classGPU, int16(vmx.NVIDIAVendorID), int16(gpuID), int16(vmx.NVIDIAVendorID)
			d.VendorName, d.DeviceName = "NVIDIA Corporation", "NVIDIA "+g.Model
		case NICPort:
			d.ClassId, d.VendorId, d.DeviceId = classNIC, 0x15b3, 0x1021
			d.VendorName, d.DeviceName = "Mellanox Technologies", "MT2910 Family [ConnectX-7]"
		}
		out = append(out, d)
	})
	return out
}

// NUMAOf maps every PCI address of the tree to its NUMA node (the
// argument of Sim.SetNUMA).
func (t PCITree) NUMAOf() map[string]int {
	m := map[string]int{}
	t.walk(func(n PCINode, numa int, _ string) { m[n.ID] = numa })
	return m
}

// NUMA returns the tree's hardware.numaInfo.numaNode entries: per node
// with devices, its typeId and every address of its subtree, sorted (as
// Sim.SetNUMA lists them).
func (t PCITree) NUMA() []types.HostNumaNode {
	var out []types.HostNumaNode
	for n := range t.Nodes {
		var ids []string
		for id, numa := range t.NUMAOf() {
			if numa == n {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			slices.Sort(ids)
			out = append(out, types.HostNumaNode{TypeId: byte(n), PciId: ids})
		}
	}
	return out
}

// Uplinks returns the tree's NIC ports as config.network.pnic entries, in
// tree order.
func (t PCITree) Uplinks() []types.PhysicalNic {
	var out []types.PhysicalNic
	t.walk(func(n PCINode, _ int, _ string) {
		if n.Kind == NICPort {
			out = append(out, types.PhysicalNic{Key: "key-vim.host.PhysicalNic-" + n.VMNIC, Device: n.VMNIC, Pci: n.ID, Driver: "nmlx5_core"})
		}
	})
	return out
}

// GPUs returns the tree's GPU addresses, in tree order.
func (t PCITree) GPUs() []string {
	var out []string
	t.walk(func(n PCINode, _ int, _ string) {
		if n.Kind == GPUDevice {
			out = append(out, n.ID)
		}
	})
	return out
}

// VMNICs returns the tree's NIC port uplinks, in tree order.
func (t PCITree) VMNICs() []string {
	var out []string
	for _, u := range t.Uplinks() {
		out = append(out, u.Device)
	}
	return out
}

// treeBuilder hands out PCI buses from a NUMA node's range and vmnic
// names in order.
type treeBuilder struct {
	bus   int
	vmnic int
}

func (b *treeBuilder) next() int {
	b.bus++
	if b.bus > 0xff {
		panic("vcsimtest: PCI tree needs more than 256 buses")
	}
	return b.bus - 1
}

func (b *treeBuilder) nic(bus int, slot int) PCINode {
	b.vmnic++
	return PCINode{ID: fmt.Sprintf("0000:%02x:00.%d", bus, slot), Kind: NICPort, VMNIC: fmt.Sprintf("vmnic%d", b.vmnic-1)}
}

// pexSwitch lays out one PCIe switch on its own root port: the root port
// on a root bus, the switch's upstream port on the next bus, its
// downstream ports (one per endpoint) on the bus after, and each endpoint
// (gpus GPUs, then nics NIC ports) on a bus of its own.
func (b *treeBuilder) pexSwitch(gpus, nics int) PCINode {
	root := b.next()
	up := b.next()
	down := b.next()
	usp := PCINode{ID: fmt.Sprintf("0000:%02x:00.0", up), Kind: SwitchPort}
	for k := 0; k < gpus+nics; k++ {
		dsp := PCINode{ID: fmt.Sprintf("0000:%02x:%02x.0", down, k), Kind: SwitchPort}
		ep := b.next()
		if k < gpus {
			dsp.Children = []PCINode{{ID: fmt.Sprintf("0000:%02x:00.0", ep), Kind: GPUDevice}}
		} else {
			dsp.Children = []PCINode{b.nic(ep, 0)}
		}
		usp.Children = append(usp.Children, dsp)
	}
	return PCINode{ID: fmt.Sprintf("0000:%02x:01.0", root), Kind: RootPort, Children: []PCINode{usp}}
}

// build lays out sockets NUMA nodes, each bus range starting at
// 0x10 + node × (0xf0 / sockets), with f adding node n's root ports.
// vmnic names start at vmnic2 (vmnic0 and vmnic1 are the simulated
// host's own).
func build(sockets int, f func(b *treeBuilder, n int) []PCINode) PCITree {
	t := PCITree{Nodes: make([][]PCINode, sockets)}
	b := &treeBuilder{vmnic: 2}
	for n := 0; n < sockets; n++ {
		b.bus = 0x10 + n*(0xf0/sockets)
		t.Nodes[n] = f(b, n)
	}
	return t
}

// SharedSwitches is a rail-optimized server: sockets NUMA nodes, each with
// switches PCIe switches, each switch holding gpus GPUs and then nics NIC
// ports (a "2 GPUs + 1 NIC per switch" design: SharedSwitches(2, 2, 2, 1),
// 8 GPUs and 4 rails). Node 0 starts at bus 0x10:
// SharedSwitches(2, 2, 2, 1) puts switch 0's upstream port at
// 0000:11:00.0, its GPUs at 0000:13:00.0 and 0000:14:00.0 and vmnic2 at
// 0000:15:00.0; switch 1 at 0000:17:00.0 with 0000:19:00.0, 0000:1a:00.0
// and vmnic3 at 0000:1b:00.0; node 1 the same from bus 0x88 (switches
// 0000:89:00.0 and 0000:8f:00.0, vmnic4 and vmnic5).
func SharedSwitches(sockets, switches, gpus, nics int) PCITree {
	return build(sockets, func(b *treeBuilder, _ int) []PCINode {
		var ports []PCINode
		for s := 0; s < switches; s++ {
			ports = append(ports, b.pexSwitch(gpus, nics))
		}
		return ports
	})
}

// SeparateSwitches is a server whose NICs share no switch with the GPUs:
// sockets NUMA nodes, each with switches PCIe switches of gpus GPUs, then
// nics NIC ports, each on a root port of its own. SeparateSwitches(2, 2,
// 2, 2) puts node 0's GPUs at 0000:13:00.0, 0000:14:00.0 (switch
// 0000:11:00.0) and 0000:18:00.0, 0000:19:00.0 (switch 0000:16:00.0), and
// vmnic2 and vmnic3 at 0000:1b:00.0 and 0000:1d:00.0; node 1 the same from
// bus 0x88.
func SeparateSwitches(sockets, switches, gpus, nics int) PCITree {
	return build(sockets, func(b *treeBuilder, _ int) []PCINode {
		var ports []PCINode
		for s := 0; s < switches; s++ {
			ports = append(ports, b.pexSwitch(gpus, 0))
		}
		for k := 0; k < nics; k++ {
			root := b.next()
			ports = append(ports, PCINode{ID: fmt.Sprintf("0000:%02x:01.0", root), Kind: RootPort, Children: []PCINode{b.nic(b.next(), 0)}})
		}
		return ports
	})
}

// SetPCITree gives an ESXi host the tree's devices (hardware.pciDevice,
// with parentBridge chains; a device at an address the host has replaces
// it), its GPUs as passthrough-capable and its NIC ports as SR-IOV capable
// PFs (config.pciPassthruInfo; SR-IOV off as for Options.NoSRIOV hosts),
// an uplink per NIC port (config.network.pnic; one named like an existing
// uplink replaces it, and that uplink's old PCI device goes when no tree
// device took its address), and its NUMA nodes (hardware.numaInfo, through
// SetNUMA; any earlier listing is replaced). The host keeps its other
// devices.
func (s *Sim) SetPCITree(esxi string, t PCITree) {
	h := s.hosts[esxi]
	nic, _ := vmx.HostNIC(s.inv, esxi)
	maxVF := int32(nic.MaxVFs())
	if maxVF == 0 {
		maxVF = 127
	}
	devs := t.Devices()
	s.Lock(h.Self, func() {
		hw := *h.Hardware
		list := slices.Clone(hw.PciDevice)
		info := slices.Clone(h.Config.PciPassthruInfo)
		inTree := map[string]bool{}
		for _, d := range devs {
			inTree[d.Id] = true
		}
		net := *h.Config.Network
		pnics := slices.Clone(net.Pnic)
		var gone []string // addresses of replaced uplinks no tree device took
		for _, u := range t.Uplinks() {
			i := slices.IndexFunc(pnics, func(p types.PhysicalNic) bool { return p.Device == u.Device })
			if i < 0 {
				pnics = append(pnics, u)
				continue
			}
			if old := pnics[i].Pci; old != u.Pci && !inTree[old] {
				gone = append(gone, old)
			}
			pnics[i] = u
		}
		list = slices.DeleteFunc(list, func(d types.HostPciDevice) bool { return inTree[d.Id] || slices.Contains(gone, d.Id) })
		list = append(list, devs...)
		info = slices.DeleteFunc(info, func(pi types.BaseHostPciPassthruInfo) bool {
			id := pi.GetHostPciPassthruInfo().Id
			return inTree[id] || slices.Contains(gone, id)
		})
		for _, d := range devs {
			switch d.ClassId {
			case classGPU:
				info = append(info, &types.HostPciPassthruInfo{Id: d.Id, DependentDevice: d.Id, PassthruCapable: true})
			case classNIC:
				info = append(info, &types.HostSriovInfo{
					HostPciPassthruInfo: types.HostPciPassthruInfo{Id: d.Id, DependentDevice: d.Id, PassthruCapable: true},
					SriovCapable:        !slices.Contains(s.opts.NoSRIOV, esxi), MaxVirtualFunctionSupported: maxVF,
				})
			}
		}
		hw.PciDevice = list
		h.Hardware = &hw
		h.Config.PciPassthruInfo = info
		net.Pnic = pnics
		h.Config.Network = &net
	})
	for _, id := range t.GPUs() {
		if !slices.Contains(s.gpus[esxi], id) {
			s.gpus[esxi] = append(s.gpus[esxi], id)
		}
	}
	s.SetNUMA(esxi, t.NUMAOf())
}

// RailTree is the PCI tree of a rail-optimized GPU server for the
// inventory's VMs on ESXi host esxi, the shape of NVIDIA's PCIe reference
// design for 8-GPU servers (docs/rails.md): one PCIe switch per rail's
// PF (vmx.RailPFs: rail order, then VM order), holding that NIC port and
// the GPUs the inventory pairs with the rail (inventory.Rail.GPUs, every
// VM's on the host), the switches shared out over two NUMA nodes in order
// (the first half of the PFs on node 0), or one node for one PF. Every
// GPU keeps the address the simulator gives it without a tree (the
// inventory's pci, else GPUAddress in the host's order), so the tree
// replaces the host's GPUs rather than adding more; root ports, switch
// ports and NIC ports take the free buses from 0x40 (node 0) and 0xa0
// (node 1) up, NIC ports in rail order, so nmlx5_core numbers the ports
// in rail order. The GPUs' model is the host's first GPU's.
//
// ok is false for a host whose VMs have one rail (one PF: no tree needed,
// the simulator's PF serves it) or no GPU.
func RailTree(inv *inventory.Inventory, esxi string) (t PCITree, ok bool) {
	vms := inv.HostsOnESXi(esxi)
	pfs := vmx.RailPFs(vms)
	if len(pfs) < 2 {
		return PCITree{}, false
	}
	// The GPUs of each PF, at the addresses addDevices gives them.
	byPF := make([][]string, len(pfs))
	used := map[int]bool{0xd8: true} // PFAddress's bus
	n := 0
	for _, vm := range vms {
		railOf := map[int]int{}
		for r, rail := range vm.Rails {
			for _, g := range rail.GPUs {
				railOf[g] = r
			}
		}
		for k, g := range vm.GPUs {
			if t.GPU.Model == "" {
				t.GPU = g
			}
			id := g.PCI
			if id == "" {
				id = GPUAddress(n)
				n++
			}
			var bus int
			_, _ = fmt.Sscanf(id, "0000:%02x:", &bus)
			used[bus] = true
			pf := vm.Rails[railOf[k]].PF
			i := slices.Index(pfs, pf)
			byPF[i] = append(byPF[i], id)
		}
	}
	if t.GPU.Model == "" {
		return PCITree{}, false
	}
	sockets := 2
	next := []int{0x40, 0xa0}
	bus := func(node int) int {
		for used[next[node]] {
			next[node]++
		}
		if next[node] > 0xff {
			panic("vcsimtest: RailTree needs more than 256 buses")
		}
		used[next[node]] = true
		return next[node]
	}
	t.Nodes = make([][]PCINode, sockets)
	for i, pf := range pfs {
		node := i * sockets / len(pfs)
		root, up, down := bus(node), bus(node), bus(node)
		usp := PCINode{ID: fmt.Sprintf("0000:%02x:00.0", up), Kind: SwitchPort}
		for k, id := range byPF[i] {
			usp.Children = append(usp.Children, PCINode{ID: fmt.Sprintf("0000:%02x:%02x.0", down, k), Kind: SwitchPort,
				Children: []PCINode{{ID: id, Kind: GPUDevice}}})
		}
		usp.Children = append(usp.Children, PCINode{ID: fmt.Sprintf("0000:%02x:%02x.0", down, len(byPF[i])), Kind: SwitchPort,
			Children: []PCINode{{ID: fmt.Sprintf("0000:%02x:00.0", bus(node)), Kind: NICPort, VMNIC: pf}}})
		t.Nodes[node] = append(t.Nodes[node], PCINode{ID: fmt.Sprintf("0000:%02x:01.0", root), Kind: RootPort, Children: []PCINode{usp}})
	}
	return t, true
}
