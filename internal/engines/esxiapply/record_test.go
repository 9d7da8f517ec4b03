package esxiapply_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// devRead marks the retrieves of VM device lists (and settings).
const devRead = "config.hardware.device"

// recorded brings the reference cluster to health, then applies once
// without a record (every VM read whole, nothing to change) and returns the
// record that apply left: every VM in it.
func recorded(t *testing.T, edits ...func(*inventory.Inventory)) *env {
	t.Helper()
	inv := inventory.Reference()
	for _, f := range edits {
		f(inv)
	}
	e := newEnv(t, inv, vcsimtest.Options{})
	e.counter.Watch(devRead)
	healthy(t, e)
	res, out := e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.VMsProven != 0 {
		t.Fatalf("apply without a record: %s\n%s", res.Summary(), out)
	}
	if n := len(e.record.VMs); n != len(e.inv.Hosts) {
		t.Fatalf("record of %d VMs, want %d: %+v", n, len(e.inv.Hosts), e.record)
	}
	return e
}

// applyRecord applies with e.record (as the CLI does) and keeps the new
// record; full is Options.Full.
func (e *env) applyRecord(t *testing.T, full bool) (*esxiapply.Result, string) {
	t.Helper()
	e.counter.Reset()
	res, out := e.applyWith(t, esxiapply.Options{Record: e.record, Full: full})
	if res.Record == nil {
		t.Fatalf("apply left no record\n%s", out)
	}
	e.record = res.Record
	return res, out
}

// reconfigure changes a VM through a second govmomi session, as another
// administrator would: behind rdggen's back, through the API (the VM's
// change version changes).
func (e *env) reconfigure(t *testing.T, name string, spec func(vm *object.VirtualMachine) types.VirtualMachineConfigSpec) {
	t.Helper()
	ctx := context.Background()
	c, err := e.sim.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Logout(ctx) }()
	vm := object.NewVirtualMachine(c.Client, e.sim.VM(name).Self)
	task, err := vm.Reconfigure(ctx, spec(vm))
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// A no-op with the record reads no VM's settings or devices; a VM another
// client reconfigured (passthrough GPU removed; MMIO size changed) is read
// whole, found and corrected by the next apply, and recorded again by the
// apply after it (the one that reads it whole and finds it matching).
func TestRecordFindsChangesBehindItsBack(t *testing.T) {
	t.Parallel()
	e := recorded(t)
	res, out := e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.VMsProven != 8 || res.VMsUnchanged != 8 {
		t.Fatalf("no-op: %s\n%s", res.Summary(), out)
	}
	if !strings.Contains(out, "8 VM(s) unchanged since the last apply read them (same change version): their device lists were not read") {
		t.Errorf("no-op output:\n%s", out)
	}
	if n, r := e.counter.Matched(devRead), e.counter.Count("RetrievePropertiesEx"); n != 0 || r != 1 {
		t.Errorf("no-op: %d device-list retrieves (want 0), %d retrieves (want 1): %s", n, r, e.counter)
	}

	gpuVM, mmioVM := "clx-mld-42", "clx-mld-45"
	var removed string
	e.reconfigure(t, gpuVM, func(vm *object.VirtualMachine) types.VirtualMachineConfigSpec {
		devs, err := vm.Device(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pts := devs.SelectByType((*types.VirtualPCIPassthrough)(nil))
		if len(pts) == 0 {
			t.Fatalf("%s has no passthrough device", gpuVM)
		}
		removed = pts[0].(*types.VirtualPCIPassthrough).Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo).Id
		return types.VirtualMachineConfigSpec{DeviceChange: []types.BaseVirtualDeviceConfigSpec{
			&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: pts[0]},
		}}
	})
	e.reconfigure(t, mmioVM, func(*object.VirtualMachine) types.VirtualMachineConfigSpec {
		return types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: vmx.KeyMMIOSizeGB, Value: "2"}}}
	})
	// Powered off for the GPU's return (a cold change).
	if err := e.sim.PowerOff(context.Background(), gpuVM); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.PowerOff(context.Background(), mmioVM); err != nil {
		t.Fatal(err)
	}

	// check never trusts the record: it reads every VM whole and sees
	// both changes.
	var seen []string
	for _, r := range failed(e.check(t)) {
		if (r.Machine == gpuVM && r.Check == esxiapply.CheckDevices) || (r.Machine == mmioVM && r.Check == esxiapply.CheckConfig) {
			seen = append(seen, r.Machine)
		}
	}
	if len(seen) != 2 {
		t.Errorf("check found the changes of %v, want %s and %s", seen, gpuVM, mmioVM)
	}

	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 2 || res.VMsProven != 6 {
		t.Fatalf("apply after the changes: %s\n%s", res.Summary(), out)
	}
	for _, want := range []string{
		"vm " + gpuVM + " (esx-42.example):\n  add GPU gpus[",
		"vm " + mmioVM + " (esx-45.example):\n  " + vmx.KeyMMIOSizeGB + ": 2 → ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, removed) {
		t.Errorf("plan does not add back GPU %s:\n%s", removed, out)
	}
	if n := e.counter.Matched(devRead); n != 1 {
		t.Errorf("%d device-list retrieves, want 1 (the two changed VMs): %s", n, e.counter)
	}
	vms := e.readVMs(t)
	for i := range e.inv.Hosts {
		e.checkVM(t, vms[e.inv.Hosts[i].VM], &e.inv.Hosts[i])
	}
	if _, ok := e.record.VMs[gpuVM]; ok {
		t.Errorf("the record keeps %s, which this apply changed and did not read back", gpuVM)
	}

	// The next apply reads the two whole (nothing to do) and records them;
	// the one after reads none.
	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.VMsProven != 6 || len(e.record.VMs) != 8 {
		t.Fatalf("apply after the fix: %s, %d recorded\n%s", res.Summary(), len(e.record.VMs), out)
	}
	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.VMsProven != 8 || e.counter.Matched(devRead) != 0 {
		t.Fatalf("no-op after the fix: %s (%s)\n%s", res.Summary(), e.counter, out)
	}
}

// Options.Full (apply --full) reads every VM whole whatever the record
// says, and leaves a record as complete as before.
func TestRecordFullReadsEverything(t *testing.T) {
	t.Parallel()
	e := recorded(t)
	res, out := e.applyRecord(t, true)
	if res.Err() != nil || res.VMsChanged != 0 || res.VMsProven != 0 || res.VMsUnchanged != 8 {
		t.Fatalf("--full: %s\n%s", res.Summary(), out)
	}
	if strings.Contains(out, "unchanged since the last apply") {
		t.Errorf("--full output claims VMs unread:\n%s", out)
	}
	// The first retrieve, then the 8 VMs' settings and devices.
	if n, r := e.counter.Matched(devRead), e.counter.Count("RetrievePropertiesEx"); n != 1 || r != 2 {
		t.Errorf("--full: %d device-list retrieves (want 1), %d retrieves (want 2): %s", n, r, e.counter)
	}
	if len(e.record.VMs) != 8 {
		t.Errorf("--full left a record of %d VMs", len(e.record.VMs))
	}
	// A change made behind rdggen's back without a new change version
	// (impossible in vSphere, done here in the simulator's memory) is
	// invisible to the record and found by --full.
	editDevice(t, e, "clx-mld-43", func(d *types.VirtualPCIPassthrough) {
		d.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo).DeviceId = "7604"
	})
	if res, out := e.applyRecord(t, false); res.VMsChanged != 0 || res.VMsProven != 8 {
		t.Fatalf("apply with the record: %s\n%s", res.Summary(), out)
	}
	if err := e.sim.PowerOff(context.Background(), "clx-mld-43"); err != nil {
		t.Fatal(err)
	}
	if res, out := e.applyRecord(t, true); res.Err() != nil || res.VMsChanged != 1 || !strings.Contains(out, `deviceId "7604"`) {
		t.Fatalf("--full: %s\n%s", res.Summary(), out)
	}
}

// A VM whose entry is missing, damaged or stale is read whole (and only
// that VM); a record of another vCenter or schema proves nothing; a record
// file that cannot be decoded is refused by LoadRecord, a missing one is
// no record.
func TestRecordMissingOrCorruptReadsWhole(t *testing.T) {
	t.Parallel()
	e := recorded(t)
	good := e.record
	clone := func() *esxiapply.Record {
		r := *good
		r.VMs = map[string]esxiapply.VMRecord{}
		for k, v := range good.VMs {
			r.VMs[k] = v
		}
		return &r
	}
	edit := func(name string, f func(*esxiapply.VMRecord)) func(*esxiapply.Record) {
		return func(r *esxiapply.Record) {
			v := r.VMs[name]
			f(&v)
			r.VMs[name] = v
		}
	}
	for _, tc := range []struct {
		name   string
		edit   func(*esxiapply.Record)
		proven int
	}{
		{"entry missing", func(r *esxiapply.Record) { delete(r.VMs, "clx-mld-41") }, 7},
		{"other change version", edit("clx-mld-41", func(v *esxiapply.VMRecord) { v.ChangeVersion += "0" }), 7},
		{"empty change version", edit("clx-mld-41", func(v *esxiapply.VMRecord) { v.ChangeVersion = "" }), 7},
		{"other digest", edit("clx-mld-41", func(v *esxiapply.VMRecord) { v.Digest = strings.Repeat("0", 64) }), 7},
		{"other VM object", edit("clx-mld-41", func(v *esxiapply.VMRecord) { v.Ref = "vm-1" }), 7},
		{"GPUs missing", edit("clx-mld-41", func(v *esxiapply.VMRecord) { v.GPUs = nil }), 7},
		{"other vCenter", func(r *esxiapply.Record) { r.VCenter = "another" }, 0},
		{"other schema", func(r *esxiapply.Record) { r.Schema = "rdggen.vsphere-record/0" }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.record = clone()
			tc.edit(e.record)
			res, out := e.applyRecord(t, false)
			if res.Err() != nil || res.VMsChanged != 0 || res.VMsProven != tc.proven {
				t.Fatalf("%s\n%s", res.Summary(), out)
			}
			if want := 8 - tc.proven; (e.counter.Matched(devRead) > 0) != (want > 0) {
				t.Errorf("%d VMs to read whole, %d device-list retrieves", want, e.counter.Matched(devRead))
			}
			if len(e.record.VMs) != 8 {
				t.Errorf("the new record has %d VMs", len(e.record.VMs))
			}
		})
	}

	dir := t.TempDir()
	if r, err := esxiapply.LoadRecord(filepath.Join(dir, "none.json")); r != nil || err != nil {
		t.Errorf("missing file: %v, %v", r, err)
	}
	path := filepath.Join(dir, "sub", "esxi.json")
	if err := good.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := esxiapply.LoadRecord(path)
	if err != nil || len(back.VMs) != 8 || back.VMs["clx-mld-41"].ChangeVersion != good.VMs["clx-mld-41"].ChangeVersion {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if err := os.WriteFile(path, []byte(`{"schema": "rdggen.vsphere-record/1", "vms": {`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err := esxiapply.LoadRecord(path); r != nil || err == nil {
		t.Errorf("truncated file: %v, %v", r, err)
	}
}

// A change of what the inventory wants of a VM (a larger BAR1: a larger
// MMIO window) changes its digest: the VM is read whole and reconfigured.
func TestRecordInventoryChangeReadsWhole(t *testing.T) {
	t.Parallel()
	e := recorded(t)
	e.inv.Hosts[3].GPUs[0].BAR1GB = 64
	vm := e.inv.Hosts[3].VM
	if err := e.sim.PowerOff(context.Background(), vm); err != nil {
		t.Fatal(err)
	}
	res, out := e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 1 || res.VMsProven != 7 || !strings.Contains(out, "vm "+vm+" ") {
		t.Fatalf("%s\n%s", res.Summary(), out)
	}
}

// A VM the record proves unchanged still fails, as in a whole read, when
// another VM on its host (not in the inventory: read whole) takes a GPU the
// inventory places on it.
func TestRecordProvenVMSeesGPUTakenByAnother(t *testing.T) {
	t.Parallel()
	e := recorded(t, func(inv *inventory.Inventory) {
		for k := range inv.Hosts[0].GPUs {
			inv.Hosts[0].GPUs[k].PCI = vcsimtest.GPUAddress(k)
		}
	})
	id := e.inv.Hosts[0].GPUs[0].PCI
	if err := e.sim.AddVM(context.Background(), "intruder", e.inv.Hosts[0].ESXi, id); err != nil {
		t.Fatal(err)
	}
	res, out := e.applyRecord(t, false)
	want := "gpus[0]: GPU " + id + " on " + e.inv.Hosts[0].ESXi + " is already passed through to VM intruder"
	if res.VMsProven != 8 || len(res.Failed) != 1 || !strings.Contains(res.Failed[0], want) {
		t.Fatalf("%s (failed: %q)\n%s", res.Summary(), res.Failed, out)
	}
	if _, ok := e.record.VMs[e.inv.Hosts[0].VM]; ok {
		t.Errorf("the failed VM stays in the record")
	}
}
