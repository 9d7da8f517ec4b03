package esxiapply_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// updatePassthru sends UpdatePassthruConfig to an ESXi host through a
// second govmomi session, as another administrator would: behind rdggen's
// back. No VM's change version changes.
func (e *env) updatePassthru(t *testing.T, esxi string, cfg ...types.BaseHostPciPassthruConfig) {
	t.Helper()
	ctx := context.Background()
	c, err := e.sim.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Logout(ctx) }()
	var h mo.HostSystem
	if err := property.DefaultCollector(c.Client).RetrieveOne(ctx, e.sim.Host(esxi).Self, []string{"configManager.pciPassthruSystem"}, &h); err != nil {
		t.Fatal(err)
	}
	if _, err := methods.UpdatePassthruConfig(ctx, c.Client, &types.UpdatePassthruConfig{This: *h.ConfigManager.PciPassthruSystem, Config: cfg}); err != nil {
		t.Fatal(err)
	}
}

// The record proves VMs unchanged, never ESXi hosts: vSphere keeps no
// change version of a host's passthrough state, so every apply reads the
// hosts' config.pciPassthruInfo. A GPU's passthrough switched off and a
// PF's VF count changed by another client (no VM's change version moves)
// are found and corrected by the next apply with the record, as is a
// memory reservation lowered on a running VM.
func TestRecordFindsHostChangesBehindItsBack(t *testing.T) {
	t.Parallel()
	e := recorded(t)
	if res, out := e.applyRecord(t, false); res.Err() != nil || res.VMsProven != 8 || res.HostsChanged != 0 {
		t.Fatalf("no-op: %s\n%s", res.Summary(), out)
	}
	gpuHost, vfHost, memVM := "esx-42.example", "esx-43.example", "clx-mld-44"
	var gpu string
	for i := range e.inv.Hosts {
		if h := &e.inv.Hosts[i]; h.ESXi == gpuHost {
			gpu = e.record.VMs[h.VM].GPUs[0]
		}
	}
	if gpu == "" {
		t.Fatalf("no recorded GPU on %s: %+v", gpuHost, e.record)
	}
	e.updatePassthru(t, gpuHost, &types.HostPciPassthruConfig{Id: gpu, PassthruEnabled: false})
	nic, _ := vmx.HostNIC(e.inv, vfHost)
	e.updatePassthru(t, vfHost, &types.HostSriovConfig{
		HostPciPassthruConfig: types.HostPciPassthruConfig{Id: vcsimtest.PFAddress},
		SriovEnabled:          true, NumVirtualFunction: int32(nic.VFs - 1),
	})
	e.reconfigure(t, memVM, func(*object.VirtualMachine) types.VirtualMachineConfigSpec {
		return types.VirtualMachineConfigSpec{
			MemoryReservationLockedToMax: types.NewBool(false),
			MemoryAllocation:             &types.ResourceAllocationInfo{Reservation: types.NewInt64(1024)},
		}
	})
	if h := e.readHost(t, gpuHost); passthruEnabled(h, gpu) {
		t.Fatalf("GPU %s on %s still has passthrough on", gpu, gpuHost)
	}

	res, out := e.applyRecord(t, false)
	if res.Err() != nil || res.HostsChanged != 2 || res.VMsChanged != 1 || res.VMsProven != 7 {
		t.Fatalf("apply after the changes: %s\n%s", res.Summary(), out)
	}
	for _, want := range []string{
		fmt.Sprintf("passthrough of GPU %s (", gpu),
		fmt.Sprintf("SR-IOV on %s (%s): enabled, %d VFs → enabled, %d VFs", nic.PF, vcsimtest.PFAddress, nic.VFs-1, nic.VFs),
		"vm " + memVM + " (esx-44.example):\n  memory reservation: 1024 MB → ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{gpuHost, vfHost} {
		e.checkHost(t, name)
	}
	vms := e.readVMs(t)
	for i := range e.inv.Hosts {
		e.checkVM(t, vms[e.inv.Hosts[i].VM], &e.inv.Hosts[i])
	}
	// Then nothing is left to do.
	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.HostsChanged != 0 || res.VMsChanged != 0 {
		t.Fatalf("apply after the fix: %s\n%s", res.Summary(), out)
	}
}

// passthruEnabled reports whether h's config.pciPassthruInfo has
// passthrough enabled for the device at id.
func passthruEnabled(h mo.HostSystem, id string) bool {
	for _, pi := range h.Config.PciPassthruInfo {
		if info := pi.GetHostPciPassthruInfo(); strings.EqualFold(info.Id, id) {
			return info.PassthruEnabled
		}
	}
	return false
}

// A VM renamed by another client keeps its change version (govmomi's
// simulator, as the API reference allows: Rename_Task is not documented as
// a change of the configuration), so the record does not vouch for names:
// every VM's name is read, and the renamed VM is not found under its
// inventory name by the next apply, as in a whole read.
func TestRecordSeesRenameBehindItsBack(t *testing.T) {
	t.Parallel()
	e := recorded(t)
	const name = "clx-mld-46"
	before := e.sim.VM(name).Config.ChangeVersion
	ctx := context.Background()
	c, err := e.sim.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Logout(ctx) }()
	task, err := object.NewVirtualMachine(c.Client, e.sim.VM(name).Self).Rename(ctx, name+"-old")
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if vm := e.sim.VM(name + "-old"); vm == nil || vm.Config.ChangeVersion != before {
		t.Logf("the simulator changed the change version on a rename: %v", vm)
	}
	res, out := e.applyRecord(t, false)
	if res.VMsProven != 7 || len(res.Failed) != 1 || !strings.Contains(res.Failed[0], "VM "+name+" not found in vCenter") {
		t.Fatalf("apply after the rename: %s, %d proven, failed %q\n%s", res.Summary(), res.VMsProven, res.Failed, out)
	}
}
