package railpair_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/railpair"
)

// component is a vendor device group component with a device template.
func component(typ, vendor, name string, dev types.BaseVirtualDevice) types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo {
	return types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo{Type: typ, VendorName: vendor, DeviceName: name, Device: dev}
}

func dynamicPassthru(vendor, device int32) *types.VirtualPCIPassthrough {
	return &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{Backing: &types.VirtualPCIPassthroughDynamicBackingInfo{
		AllowedDevice: []types.VirtualPCIPassthroughAllowedDevice{{VendorId: vendor, DeviceId: device}},
	}}}
}

func sriovNIC(vendor int16, device string) *types.VirtualSriovEthernetCard {
	return &types.VirtualSriovEthernetCard{SriovBacking: &types.VirtualSriovEthernetCardSriovBackingInfo{}, VirtualEthernetCard: types.VirtualEthernetCard{
		VirtualDevice: types.VirtualDevice{Backing: &types.VirtualSriovEthernetCardSriovBackingInfo{
			PhysicalFunctionBacking: &types.VirtualPCIPassthroughDeviceBackingInfo{VendorId: vendor, DeviceId: device},
		}},
	}}
}

// The groups a host offers are matched to each rail's GPU and PF by the
// ids in their device templates, else by device name; a group of GPUs
// only, or of another NIC, fits no rail. Reported, sorted by name.
func TestDeviceGroups(t *testing.T) {
	tree := vcsimtest.SharedSwitches(2, 2, 2, 1)
	h := host(tree)
	p := pair(t, h, railpair.Request{Rails: tree.VMNICs(), GPUs: empty(8), Free: tree.GPUs()})
	offered := []types.VirtualMachineVendorDeviceGroupInfo{
		{DeviceGroupName: "nvidia-h100-cx7", ComponentDeviceInfo: []types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo{
			component("pciPassthru", "NVIDIA", "GH100 [H100 PCIe]", dynamicPassthru(0x10de, 0x2331)),
			component("sriovNic", "Mellanox", "MT2910 Family [ConnectX-7]", sriovNIC(0x15b3, "1021")),
		}},
		{DeviceGroupName: "nvidia-2xh100", ComponentDeviceInfo: []types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo{
			component("pciPassthru", "NVIDIA", "GH100 [H100 PCIe]", dynamicPassthru(0x10de, 0x2331)),
			component("pciPassthru", "NVIDIA", "GH100 [H100 PCIe]", dynamicPassthru(0x10de, 0x2331)),
		}},
		{DeviceGroupName: "by-name", ComponentDeviceInfo: []types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo{
			component("nvidiaVgpu", "NVIDIA", "nvidia  H100-PCIE-80GB", nil),
			component("sriovNic", "Mellanox", "MT2910 Family [ConnectX-7]", &types.VirtualSriovEthernetCard{}),
		}},
		{DeviceGroupName: "h100-cx6", ComponentDeviceInfo: []types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo{
			component("pciPassthru", "NVIDIA", "GH100 [H100 PCIe]", dynamicPassthru(0x10de, 0x2331)),
			component("sriovNic", "Mellanox", "MT2892 Family [ConnectX-6 Dx]", sriovNIC(0x15b3, "101d")),
		}},
	}
	got := railpair.DeviceGroups(h, p, offered)
	want := []railpair.GroupReport{
		{Name: "by-name", Components: []string{"nvidiaVgpu NVIDIA nvidia H100-PCIE-80GB", "sriovNic Mellanox MT2910 Family [ConnectX-7]"}, Rails: []int{0, 1, 2, 3}},
		{Name: "h100-cx6", Components: []string{"pciPassthru NVIDIA GH100 [H100 PCIe]", "sriovNic Mellanox MT2892 Family [ConnectX-6 Dx]"}},
		{Name: "nvidia-2xh100", Components: []string{"pciPassthru NVIDIA GH100 [H100 PCIe]", "pciPassthru NVIDIA GH100 [H100 PCIe]"}},
		{Name: "nvidia-h100-cx7", Components: []string{"pciPassthru NVIDIA GH100 [H100 PCIe]", "sriovNic Mellanox MT2910 Family [ConnectX-7]"}, Rails: []int{0, 1, 2, 3}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	checkLines(t, "lines", railpair.GroupLines(got[1:2]), []string{
		`vendor device group "h100-cx6" (pciPassthru NVIDIA GH100 [H100 PCIe], sriovNic Mellanox MT2892 Family [ConnectX-6 Dx]) fits no rail's GPU and NIC`,
	})
	checkLines(t, "lines", railpair.GroupLines(got[3:]), []string{
		`vendor device group "nvidia-h100-cx7" (pciPassthru NVIDIA GH100 [H100 PCIe], sriovNic Mellanox MT2910 Family [ConnectX-7]) fits rails 0, 1, 2, 3; rdggen attaches the devices one by one`,
	})
	if got := railpair.GroupLines(railpair.DeviceGroups(h, p, nil)); len(got) != 0 {
		t.Errorf("no groups offered: %q", got)
	}

	// A rail whose GPUs are of another model fits no group: here a rail
	// with no GPU at all.
	p = pair(t, h, railpair.Request{Rails: []string{"vmnic2", "vmnic3"}, GPUs: empty(1), Free: tree.GPUs()})
	if got := railpair.DeviceGroups(h, p, offered[:1]); len(got[0].Rails) != 1 || got[0].Rails[0] != 0 {
		t.Errorf("rail without GPUs: %+v", got)
	}
}
