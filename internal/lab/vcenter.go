package lab

import (
	"slices"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// vcenterOptions shape the lab's vCenter after the inventory: each ESXi
// host gets, on the standard vSwitch of its PFs (vcsimtest.DataVSwitch),
// the port group of every VM on it (nic.portgroup) that vcsim lacks (it
// has only "VM Network"), so that apply and check find the network the
// inventory names, as on a host its administrator set up. An ESXi host
// whose VMs have several rails gets the PCI tree of a rail-optimized server
// (vcsimtest.RailTree): one PCIe switch per rail's PF with the GPUs the
// inventory pairs with that rail, over two NUMA nodes, so that apply pairs
// GPUs with rails and check finds each VF on its GPUs' node.
func vcenterOptions(inv *inventory.Inventory) vcsimtest.Options {
	o := vcsimtest.Options{PortGroups: map[string][]string{}, PCITrees: map[string]vcsimtest.PCITree{}}
	for _, esxi := range inv.ESXiHosts() {
		if t, ok := vcsimtest.RailTree(inv, esxi); ok {
			o.PCITrees[esxi] = t
		}
		for _, h := range inv.HostsOnESXi(esxi) {
			pg := h.NIC.PortGroup
			if pg != "" && pg != inventory.DefaultPortGroup && !slices.Contains(o.PortGroups[esxi], pg) {
				o.PortGroups[esxi] = append(o.PortGroups[esxi], pg)
			}
		}
	}
	return o
}
