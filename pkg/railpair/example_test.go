package railpair_test

import (
	"fmt"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/railpair"
)

// A host with one PCIe switch per socket, each holding two GPUs and a NIC
// port, as hardware.pciDevice, hardware.numaInfo and config.network.pnic
// report it; a VM with two rails and four GPUs for the pairing to choose.
func ExamplePair() {
	dev := func(id, parent string) types.HostPciDevice { return types.HostPciDevice{Id: id, ParentBridge: parent} }
	h := railpair.Host{
		Devices: []types.HostPciDevice{
			dev("0000:10:01.0", ""), dev("0000:11:00.0", "0000:10:01.0"), // root port, switch upstream port
			dev("0000:12:00.0", "0000:11:00.0"), dev("0000:12:01.0", "0000:11:00.0"), dev("0000:12:02.0", "0000:11:00.0"),
			dev("0000:13:00.0", "0000:12:00.0"), dev("0000:14:00.0", "0000:12:01.0"), // GPUs
			dev("0000:15:00.0", "0000:12:02.0"), // ConnectX port, vmnic2
			dev("0000:88:01.0", ""), dev("0000:89:00.0", "0000:88:01.0"),
			dev("0000:8a:00.0", "0000:89:00.0"), dev("0000:8a:01.0", "0000:89:00.0"), dev("0000:8a:02.0", "0000:89:00.0"),
			dev("0000:8b:00.0", "0000:8a:00.0"), dev("0000:8c:00.0", "0000:8a:01.0"),
			dev("0000:8d:00.0", "0000:8a:02.0"), // vmnic3
		},
		NUMA: []types.HostNumaNode{
			{TypeId: 0, PciId: []string{"0000:10:01.0"}},
			{TypeId: 1, PciId: []string{"0000:88:01.0"}},
		},
		Uplinks: []types.PhysicalNic{{Device: "vmnic2", Pci: "0000:15:00.0"}, {Device: "vmnic3", Pci: "0000:8d:00.0"}},
	}
	p, err := railpair.Pair(h, railpair.Request{
		Rails: []string{"vmnic3", "vmnic2"},
		GPUs:  []string{"", "", "", ""},
		Free:  []string{"0000:13:00.0", "0000:14:00.0", "0000:8b:00.0", "0000:8c:00.0"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range p.Lines() {
		fmt.Println(l)
	}
	as, err := p.VNUMA(railpair.VM{Version: "vmx-20", NumCPU: 32, CoresPerNUMANode: 16})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range as {
		fmt.Printf("%s %s: virtual NUMA node %d\n", a.Kind, a.PCI, a.VNode)
	}
	_, err = p.VNUMA(railpair.VM{Version: "vmx-19", NumCPU: 32, CoresPerNUMANode: 16})
	fmt.Println(err)
	// Output:
	// rail 0 (vmnic3 0000:8d:00.0): GPUs 0000:8b:00.0, 0000:8c:00.0 (chosen) — same PCIe switch 0000:89:00.0
	// rail 1 (vmnic2 0000:15:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (chosen) — same PCIe switch 0000:11:00.0
	// GPU 0000:8b:00.0: virtual NUMA node 1
	// GPU 0000:8c:00.0: virtual NUMA node 1
	// VF 0000:8d:00.0: virtual NUMA node 1
	// GPU 0000:13:00.0: virtual NUMA node 0
	// GPU 0000:14:00.0: virtual NUMA node 0
	// VF 0000:15:00.0: virtual NUMA node 0
	// hardware version vmx-19 is below vmx-20, the first that assigns devices to virtual NUMA nodes
}

// GPUs the inventory places are checked, not moved: here the two GPUs of
// the other socket's switch on rail 0.
func ExamplePairing_Warnings() {
	dev := func(id, parent string) types.HostPciDevice { return types.HostPciDevice{Id: id, ParentBridge: parent} }
	h := railpair.Host{
		Devices: []types.HostPciDevice{
			dev("0000:10:01.0", ""), dev("0000:15:00.0", "0000:10:01.0"), // vmnic2 on its own root port
			dev("0000:88:01.0", ""), dev("0000:8b:00.0", "0000:88:01.0"), // a GPU on socket 1
		},
		NUMA:    []types.HostNumaNode{{TypeId: 0, PciId: []string{"0000:10:01.0"}}, {TypeId: 1, PciId: []string{"0000:88:01.0"}}},
		Uplinks: []types.PhysicalNic{{Device: "vmnic2", Pci: "0000:15:00.0"}},
	}
	p, _ := railpair.Pair(h, railpair.Request{Rails: []string{"vmnic2"}, GPUs: []string{"0000:8b:00.0"}})
	fmt.Println(p.Lines()[0])
	fmt.Println(p.Warnings()[0])
	// Output:
	// rail 0 (vmnic2 0000:15:00.0): GPU 0000:8b:00.0 (given) — crosses sockets: GPU on NUMA node 1, PF on node 0
	// rail 0 (vmnic2 0000:15:00.0): GPU 0000:8b:00.0 is on NUMA node 1 and the PF on node 0, so GPUDirect RDMA between them crosses the link between the sockets; the GPU is given, not chosen
}
