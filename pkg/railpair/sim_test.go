package railpair_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/railpair"
)

// The simulator's PCI trees, read back through the property collector
// (HostProperties, as apply reads hosts) and FromHost, give the pairing
// the trees give as pure input: the vSphere side is a thin layer.
func TestPairFromSimulator(t *testing.T) {
	inv, err := vcsimtest.Inventory(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	trees := map[string]vcsimtest.PCITree{
		"esx-0.example": vcsimtest.SharedSwitches(2, 2, 2, 1),
		"esx-1.example": vcsimtest.SeparateSwitches(2, 2, 2, 2),
	}
	sim, err := vcsimtest.New(inv, vcsimtest.Options{PCITrees: trees})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	ctx := context.Background()
	c, err := sim.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Logout(ctx) }()
	hs, err := find.NewFinder(c.Client).HostSystemList(ctx, "*")
	if err != nil {
		t.Fatal(err)
	}
	refs := make([]types.ManagedObjectReference, len(hs))
	for i, h := range hs {
		refs[i] = h.Reference()
	}
	var hosts []mo.HostSystem
	if err := property.DefaultCollector(c.Client).Retrieve(ctx, refs, append([]string{"name"}, railpair.HostProperties...), &hosts); err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 2 {
		t.Fatalf("%d hosts", len(hosts))
	}
	for _, mh := range hosts {
		tree := trees[mh.Name]
		r := railpair.Request{Rails: tree.VMNICs(), GPUs: empty(8), Free: tree.GPUs()}
		read := railpair.FromHost(&mh)
		if len(read.Devices) <= len(tree.Devices()) || len(read.NUMA) != 2 {
			t.Fatalf("%s: %d devices, %d NUMA nodes read", mh.Name, len(read.Devices), len(read.NUMA))
		}
		got := pair(t, read, r)
		want := pair(t, host(tree), r)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: read back (-pure +read):\n%s", mh.Name, diff)
		}
		first := map[string]string{
			"esx-0.example": "rail 0 (vmnic2 0000:15:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (chosen) — same PCIe switch 0000:11:00.0",
			"esx-1.example": "rail 0 (vmnic2 0000:1b:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (chosen) — same NUMA node 0, no common PCIe switch",
		}[mh.Name]
		if l := got.Lines(); l[0] != first {
			t.Errorf("%s: %q", mh.Name, l[0])
		}
	}
	// The inventory's PF (vmnic4) is now the tree's port of that name,
	// SR-IOV capable, and its old device is gone.
	h := sim.Host("esx-0.example")
	sim.Lock(h.Self, func() {
		for _, d := range h.Hardware.PciDevice {
			if d.Id == vcsimtest.PFAddress {
				t.Errorf("the replaced PF's device %s is still listed", d.Id)
			}
		}
		n := 0
		for _, pi := range h.Config.PciPassthruInfo {
			if si, ok := pi.(*types.HostSriovInfo); ok && si.SriovCapable {
				n++
			}
		}
		if n != 4 {
			t.Errorf("%d SR-IOV capable PFs, want the tree's 4", n)
		}
	})
}

// vcsim keeps a device's numaNode (VirtualDevice.numaNode, vSphere API
// 8.0.0.1) as the reconfiguration sends it, whatever the VM's hardware
// version: the simulator does not check what ESXi would (hardware version
// 20, a fixed virtual NUMA size), so tests of that path must check the
// request.
func TestSimulatorKeepsNumaNode(t *testing.T) {
	inv, err := vcsimtest.Inventory(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	tree := vcsimtest.SharedSwitches(2, 1, 2, 1)
	sim, err := vcsimtest.New(inv, vcsimtest.Options{PCITrees: map[string]vcsimtest.PCITree{"esx-0.example": tree}})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	ctx := context.Background()
	c, err := sim.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Logout(ctx) }()
	vm, err := find.NewFinder(c.Client).VirtualMachine(ctx, "vm-0")
	if err != nil {
		t.Fatal(err)
	}
	node := int32(1)
	gpu := tree.GPUs()[2] // node 1
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
		Operation: types.VirtualDeviceConfigSpecOperationAdd,
		Device: &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{Key: -1, NumaNode: &node,
			Backing: &types.VirtualPCIPassthroughDeviceBackingInfo{Id: gpu, DeviceId: "2331", VendorId: 0x10de, SystemId: vcsimtest.SystemID("esx-0.example")}}},
	}}})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	var got mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.version", "config.hardware.device"}, &got); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range object.VirtualDeviceList(got.Config.Hardware.Device).SelectByType((*types.VirtualPCIPassthrough)(nil)) {
		v := d.GetVirtualDevice()
		if b, ok := v.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo); ok && b.Id == gpu {
			found = true
			if v.NumaNode == nil || *v.NumaNode != 1 {
				t.Errorf("numaNode %v, want 1", v.NumaNode)
			}
		}
	}
	if !found {
		t.Fatalf("no passthrough device %s on the VM", gpu)
	}
	if v, err := strconv.Atoi(strings.TrimPrefix(got.Config.Version, "vmx-")); err != nil || v >= railpair.MinVNUMAHardwareVersion {
		t.Errorf("the VM's hardware version is %s; this test wants one below vmx-%d", got.Config.Version, railpair.MinVNUMAHardwareVersion)
	}
}
