package esxiapply_test

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// devices counts a VM's passthrough GPUs and SR-IOV adapters.
func devices(vm mo.VirtualMachine) (gpus, sriov int) {
	for _, d := range vm.Config.Hardware.Device {
		switch d.(type) {
		case *types.VirtualPCIPassthrough:
			gpus++
		case *types.VirtualSriovEthernetCard:
			sriov++
		}
	}
	return gpus, sriov
}

// TestApplyRebootPath: hosts that only activate passthrough and SR-IOV at
// their next reboot. The first apply switches them on, sets every VM setting
// that does not need the devices, attaches nothing and says the devices wait
// for the reboot (not a failure); an apply before the reboot sends nothing and
// says so; the apply after the reboot attaches the devices; the next one has
// nothing to do.
func TestApplyRebootPath(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{NeedReboot: true})

	// 1. Host switches and VM settings now, devices later.
	res, out := e.apply(t, false)
	if err := res.Err(); err != nil || res.VMsChanged != 8 || res.HostsChanged != 8 || res.VMsWaiting != 8 || len(res.Reboot) != 8 {
		t.Fatalf("first apply: %v: %s\n%s", err, res.Summary(), out)
	}
	for _, want := range []string{
		"add GPU gpus[0] V100-PCIE-16GB: 0000:20:00.0 NVIDIA V100-PCIE-16GB (10de:1db4) (when passthrough is active: now, or at the first apply after esx-41.example reboots)",
		"not now: vm clx-mld-41: add GPU gpus[0] V100-PCIE-16GB: 0000:20:00.0 NVIDIA V100-PCIE-16GB (10de:1db4): after ESXi host esx-41.example reboots (passthrough enabled, not active yet)",
		`not now: vm clx-mld-48: add SR-IOV adapter: VF of ConnectX-5 vmnic4 (0000:d8:00.0), port group "VM Network": after ESXi host esx-48.example reboots (SR-IOV enabled, not active yet)`,
		"reboot needed: esx-41.example (SR-IOV (vmnic4: not active yet), GPU passthrough (0000:20:00.0, 0000:21:00.0: not active yet), nmlx5_core parameters)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first apply output lacks %q:\n%s", want, out)
		}
	}
	if s := res.Summary(); !strings.Contains(s, "8 VM(s) get their passthrough devices at the first apply after the reboot") {
		t.Errorf("summary: %s", s)
	}
	if n := e.counter.Count("ReconfigVM_Task"); n != 8 {
		t.Errorf("%d reconfigures, want 8 (settings without devices)", n)
	}
	vms := e.readVMs(t)
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		vm := vms[h.VM]
		if g, s := devices(vm); g != 0 || s != 0 {
			t.Errorf("%s: %d GPUs and %d SR-IOV adapters attached before the reboot", h.VM, g, s)
		}
		if vm.Config.Firmware != "efi" || vm.Config.MemoryReservationLockedToMax == nil || !*vm.Config.MemoryReservationLockedToMax {
			t.Errorf("%s: settings that need no device not applied: firmware %q", h.VM, vm.Config.Firmware)
		}
	}
	for _, name := range inv.ESXiHosts() {
		e.checkHost(t, name) // enabled, VF count and parameters set
	}

	// 2. Before the reboot: nothing to send, and it says why.
	e.counter.Reset()
	res, out = e.apply(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.HostsChanged != 0 || res.VMsWaiting != 8 {
		t.Fatalf("apply before the reboot: %s\n%s", res.Summary(), out)
	}
	for _, m := range []string{"ReconfigVM_Task", "UpdatePassthruConfig", "QueryConfigTarget"} {
		if n := e.counter.Count(m); n != 0 {
			t.Errorf("apply before the reboot: %d %s calls", n, m)
		}
	}
	if s := res.Summary(); !strings.HasPrefix(s, "esxi: nothing to do before a reboot: 8 VM(s) wait for passthrough devices") || !strings.Contains(s, "re-run apply after the reboot") {
		t.Errorf("summary: %s", s)
	}
	if want := "  not now: add GPU gpus[1] V100-PCIE-16GB: 0000:21:00.0 NVIDIA V100-PCIE-16GB (10de:1db4): after ESXi host esx-41.example reboots (passthrough enabled, not active yet)"; !strings.Contains(out, want) {
		t.Errorf("plan lacks %q:\n%s", want, out)
	}
	if want := "reboot needed: esx-41.example (SR-IOV (vmnic4: not active yet), GPU passthrough (0000:20:00.0, 0000:21:00.0: not active yet))"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	t.Logf("apply before the reboot, SOAP calls: %s", e.counter)

	// 3. After the reboot the devices go in.
	for _, name := range inv.ESXiHosts() {
		e.sim.Reboot(name)
	}
	e.counter.Reset()
	res, out = e.apply(t, false)
	if res.Err() != nil || res.VMsChanged != 8 || res.HostsChanged != 0 || res.VMsWaiting != 0 || len(res.Reboot) != 0 {
		t.Fatalf("apply after the reboot: %s\n%s", res.Summary(), out)
	}
	if n := e.counter.Count("UpdatePassthruConfig"); n != 0 {
		t.Errorf("%d UpdatePassthruConfig after the reboot", n)
	}
	vms = e.readVMs(t)
	for i := range inv.Hosts {
		e.checkVM(t, vms[inv.Hosts[i].VM], &inv.Hosts[i])
	}

	// 4. Done.
	e.counter.Reset()
	res, out = e.apply(t, false)
	if res.VMsChanged != 0 || res.HostsChanged != 0 || res.VMsWaiting != 0 || !strings.HasPrefix(res.Summary(), "esxi: nothing to do: 8 VM(s)") {
		t.Errorf("last apply: %s\n%s", res.Summary(), out)
	}
	if n := e.counter.Count("RetrievePropertiesEx"); n != 2 { // state, device lists
		t.Errorf("last apply: %d retrieves, want 2 (%s)", n, e.counter)
	}
}
