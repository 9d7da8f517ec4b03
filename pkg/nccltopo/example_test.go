package nccltopo_test

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/nccltopo"
)

// A VM with two GPUs and one rail NIC on one NUMA node: the file NCCL
// loads from nccltopo.DefaultPath, which Validate accepts.
func ExampleGenerate() {
	cpus, _ := nccltopo.ParseCPUList("0-15")
	h100, _ := nccltopo.GPULink("h100")
	cx7, _ := nccltopo.NICLink("ConnectX-7")
	file, err := nccltopo.Generate(nccltopo.Topology{Name: "vm01", CPUs: []nccltopo.CPU{{
		NUMA: 0, CPUs: cpus, Arch: nccltopo.ArchX86, Vendor: nccltopo.VendorIntel, Family: 6, Model: 143,
		Groups: []nccltopo.Group{{
			GPUs: []nccltopo.Device{
				{BusID: "0000:13:00.0", Class: nccltopo.Class3D, Link: h100, Label: "GPU 0"},
				{BusID: "0000:14:00.0", Class: nccltopo.Class3D, Link: h100, Label: "GPU 1"},
			},
			NICs: []nccltopo.Device{{BusID: "0000:1b:00.0", Class: nccltopo.ClassEthernet, Link: cx7, Label: "rail 0"}},
		}},
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(file))
	fmt.Println(len(nccltopo.Validate(file)), "findings")
	// Output:
	// <!-- NCCL topology file written by rdggen (pkg/nccltopo). The bus IDs are
	//      the guest's own PCI addresses, as lspci shows them inside this VM, not
	//      the ESXi host's. Each ffff:ff:NN.0 bridge exists in no PCI tree: it
	//      tells NCCL that the GPUs and NICs under it share one PCIe switch. -->
	// <system version="1" name="vm01">
	//   <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
	//     <pci busid="ffff:ff:01.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
	//       <pci busid="0000:13:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>  <!-- GPU 0 -->
	//       <pci busid="0000:14:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>  <!-- GPU 1 -->
	//       <pci busid="0000:1b:00.0" class="0x020000" link_speed="32.0 GT/s PCIe" link_width="16"/>  <!-- rail 0 -->
	//     </pci>
	//   </cpu>
	// </system>
	// 0 findings
}

// A file with a bridge slower than the devices under it, as in
// NVIDIA/nccl#749.
func ExampleValidate() {
	file := []byte(`<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="AuthenticAMD">
    <pci busid="ffff:ff:01.0" class="0x060400" link_speed="2.5 GT/s" link_width="1">
      <pci busid="0000:13:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16"/>
      <pci busid="0000:1b:00.0" class="0x020000" link_speed="16.0 GT/s" link_width="16"/>
    </pci>
  </cpu>
</system>
`)
	for _, f := range nccltopo.Validate(file) {
		fmt.Printf("%d:%d %s %s\n", f.Line, f.Col, f.Severity, f.Rule)
	}
	// Output:
	// 3:48 error bridge-bottleneck
	// 5:50 error link-speed
}
