package esxiapply_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// editDevice changes one device of a simulated VM in place (as if someone
// had edited the VM by hand).
func editDevice[T types.BaseVirtualDevice](t *testing.T, e *env, vmName string, f func(T)) {
	t.Helper()
	vm := e.sim.VM(vmName)
	found := false
	e.sim.Lock(vm.Self, func() {
		for _, d := range vm.Config.Hardware.Device {
			if d, ok := d.(T); ok && !found {
				f(d)
				found = true
			}
		}
	})
	if !found {
		t.Fatalf("%s has no %T", vmName, *new(T))
	}
}

// The no-op run reads no host PCI device list: it trusts the attached
// backings rdggen wrote. A backing that cannot vouch for its device (the
// decimal device id of govmomi #2248: "7604" for 0x1db4) sends the host back
// to a full plan with the list, which fixes the backing.
func TestApplyPartialPlanFallsBack(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{})
	e.counter.Watch("hardware.pciDevice")
	if res, out := e.apply(t, false); res.Err() != nil {
		t.Fatalf("first apply: %s\n%s", res.Summary(), out)
	}
	editDevice(t, e, "clx-mld-42", func(d *types.VirtualPCIPassthrough) {
		d.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo).DeviceId = "7604"
	})

	e.counter.Reset()
	res, out := e.apply(t, false)
	if res.Err() != nil || res.VMsChanged != 1 || res.VMsUnchanged != 7 {
		t.Fatalf("apply: %s\n%s", res.Summary(), out)
	}
	if want := `GPU 0000:20:00.0: deviceId "7604" vendorId 4318 → "1db4" 4318 (hex device id, govmomi #2248)`; !strings.Contains(out, want) {
		t.Errorf("plan lacks %q:\n%s", want, out)
	}
	// One retrieve for everything, one for esx-42's device list (the
	// others poll the task).
	if e.counter.Matched("hardware.pciDevice") != 1 || e.counter.Count("CreateContainerView") != 1 || e.counter.Count("ReconfigVM_Task") != 1 {
		t.Errorf("SOAP calls: %s; %d device list retrieves", e.counter, e.counter.Matched("hardware.pciDevice"))
	}
	vms := e.readVMs(t)
	for i := range inv.Hosts {
		e.checkVM(t, vms[inv.Hosts[i].VM], &inv.Hosts[i])
	}

	e.counter.Reset()
	if res, out := e.apply(t, false); res.VMsChanged != 0 || e.counter.Count("RetrievePropertiesEx") != 2 || e.counter.Matched("hardware.pciDevice") != 0 {
		t.Errorf("apply after the fix: %s (%s)\n%s", res.Summary(), e.counter, out)
	}
}

// An SR-IOV adapter on the right PF but another port group is re-pointed by
// an edit, with no device list and no QueryConfigTarget.
func TestApplyRepointsSRIOVAdapter(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{DVPortGroups: 1})
	e.counter.Watch("hardware.pciDevice")
	if res, out := e.apply(t, false); res.Err() != nil {
		t.Fatalf("first apply: %s\n%s", res.Summary(), out)
	}
	var dvpg mo.DistributedVirtualPortgroup
	pg, err := find.NewFinder(e.sess.Client, true).Network(context.Background(), "/DC0/network/DC0_DVPG0")
	if err != nil {
		t.Fatal(err)
	}
	if err := property.DefaultCollector(e.sess.Client).RetrieveOne(context.Background(), pg.Reference(), []string{"key"}, &dvpg); err != nil {
		t.Fatal(err)
	}
	editDevice(t, e, "clx-mld-45", func(d *types.VirtualSriovEthernetCard) {
		d.Backing = &types.VirtualEthernetCardDistributedVirtualPortBackingInfo{Port: types.DistributedVirtualSwitchPortConnection{PortgroupKey: dvpg.Key}}
	})

	e.counter.Reset()
	res, out := e.apply(t, false)
	if res.Err() != nil || res.VMsChanged != 1 {
		t.Fatalf("apply: %s\n%s", res.Summary(), out)
	}
	if want := `SR-IOV adapter on vmnic4: port group "DC0_DVPG0" → "VM Network"`; !strings.Contains(out, want) {
		t.Errorf("plan lacks %q:\n%s", want, out)
	}
	if e.counter.Matched("hardware.pciDevice") != 0 || e.counter.Count("QueryConfigTarget") != 0 || e.counter.Count("ReconfigVM_Task") != 1 {
		t.Errorf("SOAP calls: %s", e.counter)
	}
	vms := e.readVMs(t)
	e.checkVM(t, vms["clx-mld-45"], &inv.Hosts[4])

	e.counter.Reset()
	if res, out := e.apply(t, false); res.VMsChanged != 0 {
		t.Errorf("apply after the fix: %s\n%s", res.Summary(), out)
	}
}

// A server that refuses the keyed ExtraConfig paths
// (config.extraConfig["KEY"]) with InvalidProperty gets one more retrieve
// that reads ExtraConfig whole, and the result is the same. The keyed paths
// go with the device lists (the second retrieve: the first reads only the
// VMs' names, hosts and change versions).
func TestReadStateWithoutKeyedPaths(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{})
	if res, out := e.apply(t, false); res.Err() != nil {
		t.Fatalf("first apply: %s\n%s", res.Summary(), out)
	}
	e.sim.Model.Service.AddFaultRule(&simulator.FaultInjectionRule{
		MethodName: "RetrievePropertiesEx", ObjectType: "*", ObjectName: "*", Probability: 1, SkipCount: 1, MaxCount: 1, Enabled: true, FaultType: simulator.FaultTypeCustom,
		Fault: &types.InvalidProperty{Name: `config.extraConfig["pciPassthru.use64bitMMIO"]`},
	})
	e.counter.Reset()
	res, out := e.apply(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.VMsUnchanged != 8 {
		t.Fatalf("apply: %s\n%s", res.Summary(), out)
	}
	// The first retrieve, the refused device lists, their retry with
	// ExtraConfig whole.
	if n := e.counter.Count("RetrievePropertiesEx"); n != 3 {
		t.Errorf("%d retrieves, want 3 (%s)", n, e.counter)
	}
}
