package vmx_test

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// The 64-bit MMIO window of a VM with two V100 16 GB GPUs: the smallest
// power of two, in GB, above the sum of their BAR1 sizes.
func ExampleMMIOSizeGB() {
	gpus := []inventory.GPU{
		{Model: "V100-PCIE-16GB", MemoryGB: 16},
		{Model: "V100-PCIE-16GB", MemoryGB: 16},
	}
	fmt.Println(vmx.MMIOSizeGB(gpus), "GB")
	// Output: 64 GB
}

// The VMX entries of the reference cluster's first VM.
func ExampleExtraConfig() {
	inv := inventory.Reference()
	for _, o := range vmx.ExtraConfig(&inv.Hosts[0]) {
		fmt.Printf("%s = %q\n", o.Key, o.Value)
	}
	// Output:
	// pciPassthru.use64bitMMIO = "TRUE"
	// pciPassthru.64bitMMIOSizeGB = "64"
	// pciPassthru.allowP2P = "TRUE"
	// pciPassthru.RelaxACSforP2P = "TRUE"
}

// nmlx5_core's parameters merged into what an ESXi host already has: the
// parameters rdggen does not manage are kept.
func ExampleMergeParams() {
	want := []vmx.Param{{Name: vmx.ParamMaxVFs, Value: "8"}}
	merged, changed := vmx.MergeParams("max_vfs=4 supported_num_ports=2", want)
	fmt.Println(merged, changed)
	// Output: max_vfs=8 supported_num_ports=2 true
}
