package railpair

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// Component types of a vendor device group
// (VirtualMachineVendorDeviceGroupInfoComponentDeviceInfoComponentType,
// vSphere API 8.0.0.1), as govmomi v0.56.0 names them.
var (
	gpuComponents = []string{
		string(types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfoComponentTypePciPassthru),
		string(types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfoComponentTypeNvidiaVgpu),
	}
	nicComponents = []string{
		string(types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfoComponentTypeSriovNic),
		string(types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfoComponentTypePciPassthru),
	}
)

// GroupReport is what one vendor device group the host offers has to do
// with the VM's rails.
type GroupReport struct {
	// Name is the group's deviceGroupName.
	Name string
	// Components are its component devices, "type vendor device name"
	// each, in the group's order.
	Components []string
	// Rails are the rails (Rail.Index, ascending) whose GPU and PF the
	// group fits: one of its GPU components (pciPassthru or nvidiaVgpu)
	// is one of the rail's GPUs' device, and another of its components
	// (sriovNic or pciPassthru) the PF's.
	Rails []int
}

// DeviceGroups reports which of the vendor device groups a host offers
// fit a rail's GPU and NIC: groups from ConfigTarget.vendorDeviceGroupInfo
// (EnvironmentBrowser.QueryConfigTarget) or
// HostAssignableHardwareManager.RetrieveVendorDeviceGroupInfo, both
// VirtualMachineVendorDeviceGroupInfo (vSphere API 8.0.0.1). It is a
// report: a vendor device group is a "collection of devices that must be
// allocated to a virtual machine as a unit" (VirtualMachineVirtualDeviceGroups),
// and NVIDIA builds its GPU–NIC groups from "GPU-NIC pairs under the same
// PCIe switch" (NVIDIA AI Enterprise, Device Groups), which is what Pair
// chooses too; rdggen attaches the devices one by one and requires no
// group.
//
// A component is a host device when its device template's backing names
// the device's vendor and device ids (a Dynamic DirectPath backing's
// allowedDevice, a DirectPath backing's vendorId and deviceId, an SR-IOV
// backing's physicalFunctionBacking); a template without ids is matched by
// deviceName, compared with the host device's ignoring case and spacing.
// The reports come sorted by group name.
func DeviceGroups(h Host, p Pairing, offered []types.VirtualMachineVendorDeviceGroupInfo) []GroupReport {
	t := newTree(h)
	out := make([]GroupReport, 0, len(offered))
	for _, g := range offered {
		r := GroupReport{Name: g.DeviceGroupName}
		for _, c := range g.ComponentDeviceInfo {
			r.Components = append(r.Components, strings.Join(strings.Fields(c.Type+" "+c.VendorName+" "+c.DeviceName), " "))
		}
		for _, rail := range p.Rails {
			if fits(g.ComponentDeviceInfo, t, rail) {
				r.Rails = append(r.Rails, rail.Index)
			}
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b GroupReport) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// fits reports whether two distinct components of a group are one of the
// rail's GPUs and the rail's PF.
func fits(cs []types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo, t *tree, r Rail) bool {
	pf := t.dev[r.PF]
	if pf == nil {
		return false
	}
	for i, gc := range cs {
		if !slices.Contains(gpuComponents, gc.Type) {
			continue
		}
		gpu := false
		for _, g := range r.GPUs {
			if d := t.dev[g.PCI]; d != nil && isDevice(gc, d) {
				gpu = true
				break
			}
		}
		if !gpu {
			continue
		}
		for j, nc := range cs {
			if j != i && slices.Contains(nicComponents, nc.Type) && isDevice(nc, pf) {
				return true
			}
		}
	}
	return false
}

// isDevice reports whether component c is host device d (DeviceGroups).
func isDevice(c types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo, d *types.HostPciDevice) bool {
	vendor, device := uint16(d.VendorId), uint16(d.DeviceId)
	if c.Device != nil {
		switch b := c.Device.GetVirtualDevice().Backing.(type) {
		case *types.VirtualPCIPassthroughDynamicBackingInfo:
			if len(b.AllowedDevice) > 0 {
				return slices.ContainsFunc(b.AllowedDevice, func(a types.VirtualPCIPassthroughAllowedDevice) bool {
					return uint16(a.VendorId) == vendor && uint16(a.DeviceId) == device
				})
			}
		case *types.VirtualPCIPassthroughDeviceBackingInfo:
			if v, dev, ok := backingIDs(b); ok {
				return v == vendor && dev == device
			}
		case *types.VirtualSriovEthernetCardSriovBackingInfo:
			if b.PhysicalFunctionBacking != nil {
				if v, dev, ok := backingIDs(b.PhysicalFunctionBacking); ok {
					return v == vendor && dev == device
				}
			}
		}
	}
	name := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	return c.DeviceName != "" && name(c.DeviceName) == name(d.DeviceName)
}

// backingIDs reads a DirectPath backing's vendor id and its device id, a
// hex string ("2331", as the VMX stores pciPassthruN.deviceId); ok is false
// when either is missing.
func backingIDs(b *types.VirtualPCIPassthroughDeviceBackingInfo) (vendor, device uint16, ok bool) {
	id, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(b.DeviceId), "0x"), 16, 16)
	if err != nil || b.VendorId == 0 {
		return 0, 0, false
	}
	return uint16(b.VendorId), uint16(id), true
}

// GroupLines returns the reports as plan lines, one per group:
//
//	vendor device group "nvidia-h100-cx7" (pciPassthru NVIDIA GH100 [H100 PCIe], sriovNic Mellanox MT2910 Family [ConnectX-7]) fits rails 0, 1, 2, 3; rdggen attaches the devices one by one
//	vendor device group "nvidia-2xh100" (pciPassthru NVIDIA GH100 [H100 PCIe], pciPassthru NVIDIA GH100 [H100 PCIe]) fits no rail's GPU and NIC
//
// and nothing when the host offers none.
func GroupLines(rs []GroupReport) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		head := fmt.Sprintf("vendor device group %q (%s) ", r.Name, strings.Join(r.Components, ", "))
		if len(r.Rails) == 0 {
			out = append(out, head+"fits no rail's GPU and NIC")
			continue
		}
		nums := make([]string, len(r.Rails))
		for i, n := range r.Rails {
			nums[i] = strconv.Itoa(n)
		}
		noun := "rail"
		if len(nums) > 1 {
			noun = "rails"
		}
		out = append(out, head+fmt.Sprintf("fits %s %s; rdggen attaches the devices one by one", noun, strings.Join(nums, ", ")))
	}
	return out
}
