package esxiapply_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/internal/vcenter"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// env is one simulator with a counted, logged-in session.
type env struct {
	sim     *vcsimtest.Sim
	sess    *vcenter.Session
	counter *vcsimtest.Counter
	inv     *inventory.Inventory
	// record is the last apply's Result.Record, for the benchmarks and
	// the record tests that carry it from apply to apply as the CLI does.
	record *esxiapply.Record
}

func newEnv(t testing.TB, inv *inventory.Inventory, opts vcsimtest.Options) *env {
	t.Helper()
	e, closeEnv, err := setupEnv(inv, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeEnv)
	return e
}

// parallel is the --parallel of the tests and benchmarks (the CLI default).
const parallel = 8

// setupEnv starts a simulator for inv and logs in with a counting transport,
// keeping as many connections as the CLI does (parallel + 2: the task poll
// and a read beside the parallel calls).
func setupEnv(inv *inventory.Inventory, opts vcsimtest.Options) (*env, func(), error) {
	sim, err := vcsimtest.New(inv, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("simulator: %w", err)
	}
	e := &env{sim: sim, counter: vcsimtest.NewCounter(), inv: inv}
	sess, err := vcenter.Connect(context.Background(), e.config(), parallel+2, e.counter.Wrap)
	if err != nil {
		sim.Close()
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	e.sess = sess
	return e, func() { sess.Logout(context.Background()); sim.Close() }, nil
}

func (e *env) config() vcenter.Config {
	return vcenter.Config{URL: e.sim.URL, Username: vcsimtest.Username, Password: vcsimtest.Password, CACerts: e.sim.CAFile}
}

func (e *env) apply(t testing.TB, dryRun bool) (*esxiapply.Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := esxiapply.Apply(context.Background(), e.sess.Client, e.inv, esxiapply.Options{
		DryRun: dryRun, Parallel: parallel, Out: &out,
	})
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	return res, out.String()
}

// readVMs reads the VMs back through the API.
func (e *env) readVMs(t testing.TB) map[string]mo.VirtualMachine {
	t.Helper()
	ctx := context.Background()
	c := e.sess.Client
	v, err := view.NewManager(c).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = v.Destroy(ctx) }()
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config", "runtime.host"}, &vms); err != nil {
		t.Fatal(err)
	}
	out := map[string]mo.VirtualMachine{}
	for _, vm := range vms {
		out[vm.Name] = vm
	}
	return out
}

func (e *env) readHost(t testing.TB, name string) mo.HostSystem {
	t.Helper()
	var h mo.HostSystem
	if err := property.DefaultCollector(e.sess.Client).RetrieveOne(context.Background(), e.sim.Host(name).Self, []string{"config.pciPassthruInfo"}, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// checkVM asserts that a VM carries everything the inventory asks for and
// kept what rdggen does not manage.
func (e *env) checkVM(t testing.TB, vm mo.VirtualMachine, h *inventory.Host) {
	t.Helper()
	cfg := vm.Config
	if cfg.Firmware != "efi" {
		t.Errorf("%s: firmware %q", h.VM, cfg.Firmware)
	}
	extra := map[string]string{}
	for _, o := range cfg.ExtraConfig {
		extra[o.GetOptionValue().Key] = o.GetOptionValue().Value.(string)
	}
	for _, o := range vmx.ExtraConfig(h) {
		if extra[o.Key] != o.Value {
			t.Errorf("%s: %s = %q, want %q", h.VM, o.Key, extra[o.Key], o.Value)
		}
	}
	if extra["guestinfo.rdggen.keep"] != "yes" {
		t.Errorf("%s: an unmanaged ExtraConfig key was lost", h.VM)
	}
	if cfg.MemoryReservationLockedToMax == nil || !*cfg.MemoryReservationLockedToMax ||
		cfg.MemoryAllocation.Reservation == nil || *cfg.MemoryAllocation.Reservation != int64(cfg.Hardware.MemoryMB) {
		t.Errorf("%s: memory not all reserved: locked %v reservation %v of %d MB", h.VM, cfg.MemoryReservationLockedToMax, cfg.MemoryAllocation.Reservation, cfg.Hardware.MemoryMB)
	}
	var gpus, sriov, vmxnet int
	for _, d := range cfg.Hardware.Device {
		switch d := d.(type) {
		case *types.VirtualPCIPassthrough:
			b := d.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo)
			if b.DeviceId != "1db4" || uint16(b.VendorId) != 0x10de || b.SystemId != vcsimtest.SystemID(h.ESXi) {
				t.Errorf("%s: passthrough backing %+v", h.VM, b)
			}
			gpus++
		case *types.VirtualSriovEthernetCard:
			pf := d.SriovBacking.PhysicalFunctionBacking
			nb, ok := d.Backing.(*types.VirtualEthernetCardNetworkBackingInfo)
			if pf.Id != vcsimtest.PFAddress || !ok || nb.DeviceName != h.NIC.PortGroup {
				t.Errorf("%s: SR-IOV adapter PF %q backing %+v", h.VM, pf.Id, d.Backing)
			}
			sriov++
		case *types.VirtualVmxnet3:
			vmxnet++
		}
	}
	if gpus != len(h.GPUs) || sriov != 1 || vmxnet != 1 {
		t.Errorf("%s: %d GPUs (want %d), %d SR-IOV adapters (want 1), %d vmxnet3 (want 1, untouched)", h.VM, gpus, len(h.GPUs), sriov, vmxnet)
	}
}

func (e *env) checkHost(t testing.TB, name string) {
	t.Helper()
	h := e.readHost(t, name)
	nic, _ := vmx.HostNIC(e.inv, name)
	for _, pi := range h.Config.PciPassthruInfo {
		switch pi := pi.(type) {
		case *types.HostSriovInfo:
			if !pi.SriovEnabled || int(pi.NumVirtualFunctionRequested) != nic.VFs {
				t.Errorf("%s: SR-IOV %+v", name, pi)
			}
		case *types.HostPciPassthruInfo:
			if !pi.PassthruEnabled {
				t.Errorf("%s: GPU %s passthrough off", name, pi.Id)
			}
		}
	}
	want := vmx.ParamString(vmx.ModuleParams(nic, e.inv.RoCE))
	if got := e.sim.Modules.Params(name, vmx.NICModule); got != want {
		t.Errorf("%s: nmlx5_core parameters %q, want %q", name, got, want)
	}
}

func TestApplyReference(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{})

	// A dry run changes nothing.
	res, out := e.apply(t, true)
	if res.VMsChanged != 8 || res.HostsChanged != 8 || len(res.Failed) != 0 {
		t.Fatalf("dry run: %s\n%s", res.Summary(), out)
	}
	if n := e.counter.Count("ReconfigVM_Task") + e.counter.Count("UpdatePassthruConfig"); n != 0 {
		t.Fatalf("dry run sent %d changes", n)
	}
	for _, want := range []string{"firmware: bios → efi", "pciPassthru.64bitMMIOSizeGB: (unset) → 64", "add GPU gpus[0]", "add SR-IOV adapter", `nmlx5_core parameters: "" → "max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1"`, "SR-IOV on vmnic4"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}

	// First apply sets everything.
	res, out = e.apply(t, false)
	if err := res.Err(); err != nil || res.VMsChanged != 8 {
		t.Fatalf("first apply: %v: %s\n%s", err, res.Summary(), out)
	}
	if len(res.Reboot) != 8 {
		t.Errorf("want a reboot notice for 8 hosts: %v", res.Reboot)
	}
	vms := e.readVMs(t)
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		e.checkVM(t, vms[h.VM], h)
	}
	for _, name := range inv.ESXiHosts() {
		e.checkHost(t, name)
	}

	// Second apply: nothing to do, no reconfigure, two retrieves (vCenter's
	// state, then the VMs' device lists).
	e.counter.Reset()
	_, setsBefore := e.sim.Modules.Calls()
	res, out = e.apply(t, false)
	if res.VMsChanged != 0 || res.HostsChanged != 0 || res.Err() != nil {
		t.Fatalf("second apply changed things: %s\n%s", res.Summary(), out)
	}
	if !strings.Contains(res.Summary(), "nothing to do") {
		t.Errorf("summary %q does not say nothing to do", res.Summary())
	}
	for _, m := range []string{"ReconfigVM_Task", "UpdatePassthruConfig", "QueryConfigTarget"} {
		if n := e.counter.Count(m); n != 0 {
			t.Errorf("second apply: %d %s calls", n, m)
		}
	}
	if n := e.counter.Count("RetrievePropertiesEx") + e.counter.Count("RetrieveProperties"); n != 2 {
		t.Errorf("second apply: %d retrieves, want 2 (%s)", n, e.counter)
	}
	if _, sets := e.sim.Modules.Calls(); sets != setsBefore {
		t.Errorf("second apply set module parameters")
	}
	t.Logf("second apply SOAP calls: %s", e.counter)
}
