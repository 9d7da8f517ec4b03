package esxiapply_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/cloudinit"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

func init() { esxiapply.SetToolsPoll(20 * time.Millisecond) }

const testKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE3dmPk0aHtG1nxEYhyJ5CHD/fL3zbNgqBVVFDdCsnBc ops@bastion"

var nicLine = regexp.MustCompile(`(?m)^  nic: .*$`)

// templated is the reference inventory on Ubuntu 18.04 (a template with
// cloud-init needs its VMware datasource, which 16.04 lacks) with a template
// in defaults; edits (old, new pairs) change it further.
func templated(t testing.TB, edits ...string) *inventory.Inventory {
	t.Helper()
	src := nicLine.ReplaceAllString(strings.Replace(string(inventory.ReferenceYAML), "  os: ubuntu-16.04 ", "  os: ubuntu-18.04 ", 1),
		"  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}\n  template: {name: ubuntu-gpu-efi, cpus: 16, memory_gb: 32, user: rdg, ssh_keys: [\""+testKey+"\"]}")
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(src, edits[i]) {
			t.Fatalf("no %q in the inventory", edits[i])
		}
		src = strings.Replace(src, edits[i], edits[i+1], 1)
	}
	inv, err := inventory.Load("templated.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

var templates = []vcsimtest.Template{{Name: "ubuntu-gpu-efi", Firmware: "efi", Version: "vmx-21"}, {Name: "ubuntu-bios", Firmware: "bios"}}

func allVMs(inv *inventory.Inventory, except ...string) []string {
	var out []string
	for _, h := range inv.Hosts {
		if !strings.Contains(strings.Join(except, " "), h.VM) {
			out = append(out, h.VM)
		}
	}
	return out
}

func (e *env) applyWith(t testing.TB, o esxiapply.Options) (*esxiapply.Result, string) {
	t.Helper()
	var out bytes.Buffer
	o.Parallel, o.Out, o.Modules = parallel, &out, e.sim.Modules
	res, err := esxiapply.Apply(context.Background(), e.sess.Client, e.inv, o)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	return res, out.String()
}

// readAll reads every VM with its guest and power state.
func (e *env) readAll(t testing.TB) map[string]mo.VirtualMachine {
	t.Helper()
	ctx := context.Background()
	c := e.sess.Client
	v, err := view.NewManager(c).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = v.Destroy(ctx) }()
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config", "runtime", "guest"}, &vms); err != nil {
		t.Fatal(err)
	}
	out := map[string]mo.VirtualMachine{}
	for _, vm := range vms {
		out[vm.Name] = vm
	}
	return out
}

func gunzip(t testing.TB, s string) string {
	t.Helper()
	z, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkClone asserts a VM cloned and booted by apply: on its host, EFI
// (the template's), the template.cpus and memory_gb, the settings every VM
// gets, powered on with VMware Tools running, and the cloud-init identity
// matching the MACs vCenter gave its adapters.
func (e *env) checkClone(t testing.TB, vm mo.VirtualMachine, h *inventory.Host) {
	t.Helper()
	cfg := vm.Config
	if cfg == nil {
		t.Fatalf("%s: not found", h.VM)
	}
	if vm.Runtime.Host == nil || *vm.Runtime.Host != e.sim.Host(h.ESXi).Self {
		t.Errorf("%s: on %v, want %s", h.VM, vm.Runtime.Host, h.ESXi)
	}
	if cfg.Firmware != "efi" || cfg.Hardware.NumCPU != 16 || cfg.Hardware.MemoryMB != 32768 {
		t.Errorf("%s: firmware %s, %d vCPUs, %d MB", h.VM, cfg.Firmware, cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB)
	}
	if vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn || vm.Guest.ToolsRunningStatus != string(types.VirtualMachineToolsRunningStatusGuestToolsRunning) {
		t.Errorf("%s: %s, tools %s", h.VM, vm.Runtime.PowerState, vm.Guest.ToolsRunningStatus)
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
	if extra[esxiapply.FirstBootKey] != esxiapply.FirstBootDone {
		t.Errorf("%s: %s = %q", h.VM, esxiapply.FirstBootKey, extra[esxiapply.FirstBootKey])
	}
	if *cfg.MemoryAllocation.Reservation != 32768 || !*cfg.MemoryReservationLockedToMax {
		t.Errorf("%s: reservation %d", h.VM, *cfg.MemoryAllocation.Reservation)
	}
	var macs cloudinit.MACs
	gpus := 0
	for _, d := range cfg.Hardware.Device {
		switch d := d.(type) {
		case *types.VirtualPCIPassthrough:
			gpus++
		case *types.VirtualSriovEthernetCard:
			macs.Data = strings.ToLower(d.MacAddress)
		case *types.VirtualVmxnet3:
			macs.Mgmt = strings.ToLower(d.MacAddress)
		}
	}
	if gpus != len(h.GPUs) || macs.Data == "" || macs.Mgmt == "" {
		t.Fatalf("%s: %d GPUs, MACs %+v", h.VM, gpus, macs)
	}
	for _, s := range cloudinit.GuestInfo(e.inv, h, macs) {
		if extra[s.Key] != s.Value {
			t.Errorf("%s: %s differs from cloudinit.GuestInfo with the MACs %+v", h.VM, s.Key, macs)
		}
	}
	md := gunzip(t, extra[cloudinit.KeyMetadata])
	for _, want := range []string{"local-hostname: " + h.Name + "\n", "macaddress: " + macs.Data + "\n", "macaddress: " + macs.Mgmt + "\n", "- " + h.Data.Address.String() + "\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("%s: metadata lacks %q:\n%s", h.VM, want, md)
		}
	}
	if ud := gunzip(t, extra[cloudinit.KeyUserdata]); !strings.Contains(ud, testKey) {
		t.Errorf("%s: userdata lacks the key:\n%s", h.VM, ud)
	}
}

// TestCloneEightVMs clones the reference cluster's 8 VMs from an EFI
// template onto their hosts in parallel, reconfigures and boots them; a
// second apply changes nothing.
func TestCloneEightVMs(t *testing.T) {
	t.Parallel()
	inv := templated(t)
	e := newEnv(t, inv, vcsimtest.Options{SkipVMs: allVMs(inv), Templates: templates, CloneDelay: 100 * time.Millisecond})

	res, out := e.applyWith(t, esxiapply.Options{DryRun: true})
	if res.VMsChanged != 8 || len(res.Failed) != 0 || e.sim.CloneCalls() != 0 {
		t.Fatalf("dry run: %s, %d clones\n%s", res.Summary(), e.sim.CloneCalls(), out)
	}
	for _, h := range inv.Hosts {
		want := "clone from ubuntu-gpu-efi onto " + h.ESXi + " (datastore LocalDS_0), folder /DC0/vm, resource pool /DC0/host/DC0_C0/Resources, 16 vCPUs, 32 GB memory"
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "first boot: cloud-init identity in guestinfo (hostname clx-mld-41, eno0 by DHCP, enp1f0 31.31.31.41/24 MTU 1500") {
		t.Errorf("plan lacks the first boot:\n%s", out)
	}
	for _, m := range res.Machines {
		if m.Name == "clx-mld-41" && (len(m.Changes) != 2 || m.Changes[0].Item != "clone" || m.Changes[1].Item != "first boot") {
			t.Errorf("dry-run machine %+v", m)
		}
	}

	t0 := time.Now()
	res, out = e.applyWith(t, esxiapply.Options{})
	if err := res.Err(); err != nil || res.VMsChanged != 8 {
		t.Fatalf("apply: %v: %s\n%s", err, res.Summary(), out)
	}
	if n := e.sim.CloneCalls(); n != 8 {
		t.Errorf("%d clones, want 8", n)
	}
	if m := e.sim.MaxClonesInFlight(); m < 2 || m > parallel {
		t.Errorf("at most %d clones ran at once, want 2–%d (parallel, bounded)", m, parallel)
	}
	t.Logf("first apply: %s (%s, at most %d clones at once)", res.Summary(), time.Since(t0).Round(time.Millisecond), e.sim.MaxClonesInFlight())
	vms := e.readAll(t)
	for i := range inv.Hosts {
		e.checkClone(t, vms[inv.Hosts[i].VM], &inv.Hosts[i])
	}
	for _, want := range []string{"vm clx-mld-41: cloned from ubuntu-gpu-efi onto esx-41.example (datastore LocalDS_0)", "after the clones:", "vm clx-mld-48: first boot: cloud-init identity written", "VMware Tools running"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Second apply: no clone, no change, two retrieves (the state, then the
	// inventory's VMs' device lists: 8 VMs fit in one).
	e.counter.Reset()
	res, out = e.applyWith(t, esxiapply.Options{})
	if res.VMsChanged != 0 || res.HostsChanged != 0 || res.Err() != nil || !strings.Contains(res.Summary(), "nothing to do") {
		t.Fatalf("second apply: %s\n%s", res.Summary(), out)
	}
	for _, m := range []string{"CloneVM_Task", "ReconfigVM_Task", "PowerOnVM_Task"} {
		if n := e.counter.Count(m); n != 0 {
			t.Errorf("second apply: %d %s", n, m)
		}
	}
	if n := e.counter.Count("RetrievePropertiesEx") + e.counter.Count("RetrieveProperties"); n != 2 {
		t.Errorf("second apply: %d retrieves, want 2 (%s)", n, e.counter)
	}
}

// TestCloneFailures: an existing VM is reconfigured and never cloned or
// powered on; a BIOS template is refused with the reason; a clone that
// fails on one host leaves the others cloned and booted; a guest whose
// tools never report fails after the bound, naming it; the next apply
// retries the failed clone only.
func TestCloneFailures(t *testing.T) {
	t.Parallel()
	inv := templated(t, "  - name: clx-mld-42\n    esxi: esx-42.example\n", "  - name: clx-mld-42\n    esxi: esx-42.example\n    template: {name: ubuntu-bios}\n",
		"  - name: clx-mld-47\n    esxi: esx-47.example\n", "  - name: clx-mld-47\n    esxi: esx-47.example\n    template: {name: ubuntu-gpu-efi, cloud_init: false}\n")
	e := newEnv(t, inv, vcsimtest.Options{SkipVMs: allVMs(inv, "clx-mld-41"), Templates: templates,
		CloneFaults: []vcsimtest.CloneFault{{Host: "esx-43.example", Message: "No space left on device"}},
		ToolsNever:  []string{"clx-mld-44"}})
	res, out := e.applyWith(t, esxiapply.Options{ToolsTimeout: 500 * time.Millisecond})
	failed := strings.Join(res.Failed, "\n")
	for _, want := range []string{
		`vm clx-mld-42: template "ubuntu-bios" boots with bios firmware, not efi`,
		"vm clx-mld-43: clone from ubuntu-gpu-efi onto esx-43.example (datastore LocalDS_0): ",
		"No space left on device",
		"vm clx-mld-44: VM clx-mld-44: VMware Tools did not report within 500ms (--vm-tools-timeout)",
	} {
		if !strings.Contains(failed, want) {
			t.Errorf("failures lack %q:\n%s\n%s", want, failed, out)
		}
	}
	if len(res.Failed) != 3 {
		t.Errorf("%d failures, want 3:\n%s", len(res.Failed), failed)
	}
	if n := e.sim.CloneCalls(); n != 6 { // 43 (failed) and 44–48
		t.Errorf("%d clone calls, want 6", n)
	}
	vms := e.readAll(t)
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		vm, ok := vms[h.VM]
		switch h.VM {
		case "clx-mld-41": // existed: reconfigured, not cloned, not powered on
			if !ok || vm.Config.Firmware != "efi" || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
				t.Errorf("existing VM: %v %+v", ok, vm.Runtime)
			}
			for _, o := range vm.Config.ExtraConfig {
				if k := o.GetOptionValue().Key; k == esxiapply.FirstBootKey || strings.HasPrefix(k, "guestinfo.metadata") {
					t.Errorf("existing VM got %s", k)
				}
			}
		case "clx-mld-42", "clx-mld-43":
			if ok {
				t.Errorf("%s exists", h.VM)
			}
		case "clx-mld-44":
			if !ok || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
				t.Errorf("%s: %v", h.VM, ok)
			}
		case "clx-mld-47": // no cloud-init: booted, no guestinfo identity
			if !ok || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn || vm.Config.Firmware != "efi" {
				t.Errorf("%s: %v %+v", h.VM, ok, vm.Runtime)
			}
			keys := map[string]string{}
			for _, o := range vm.Config.ExtraConfig {
				keys[o.GetOptionValue().Key] = o.GetOptionValue().Value.(string)
			}
			if _, has := keys[cloudinit.KeyMetadata]; has || keys[esxiapply.FirstBootKey] != esxiapply.FirstBootDone {
				t.Errorf("%s: guestinfo.metadata %v, %s %q", h.VM, has, esxiapply.FirstBootKey, keys[esxiapply.FirstBootKey])
			}
			if !strings.Contains(out, `note: vm clx-mld-47: template "ubuntu-gpu-efi" has no cloud-init`) && !strings.Contains(out, `template "ubuntu-gpu-efi" has no cloud-init`) {
				t.Errorf("no note on the template without cloud-init:\n%s", out)
			}
		default:
			e.checkClone(t, vm, h)
		}
	}
	// The next apply: the BIOS template and the full datastore again, the
	// rest (44 booted, its tools not waited for again) unchanged.
	res, out = e.applyWith(t, esxiapply.Options{ToolsTimeout: 500 * time.Millisecond})
	if len(res.Failed) != 2 || res.VMsChanged != 0 || e.sim.CloneCalls() != 7 {
		t.Errorf("second apply: %s, %d clone calls\n%s", res.Summary(), e.sim.CloneCalls(), out)
	}
}

// TestClonePassthroughLimit: ESXi 7.0 takes 16 passthrough devices per VM,
// 8.0 U2 with hardware version 21 takes 128; 17 GPUs are refused on the
// first, naming the limit and its source, and planned on the second.
func TestClonePassthroughLimit(t *testing.T) {
	t.Parallel()
	gpus := strings.Repeat("    - {model: V100-PCIE-16GB, memory_gb: 16}\n", 17)
	inv := templated(t, "  gpus:                 # two Tesla V100 16 GB per VM (the guide's BOM is an image; 2 is our assumption)\n    - {model: V100-PCIE-16GB, memory_gb: 16}   # optional: bar1_gb, pci: \"0000:3b:00.0\"\n    - {model: V100-PCIE-16GB, memory_gb: 16}\n",
		"  gpus:\n"+gpus)
	e := newEnv(t, inv, vcsimtest.Options{SkipVMs: allVMs(inv), Templates: templates, ESXiVersion: map[string]string{"esx-41.example": "7.0.3"}})
	res, out := e.applyWith(t, esxiapply.Options{DryRun: true})
	failed := strings.Join(res.Failed, "\n")
	if len(res.Failed) != 1 || !strings.Contains(failed, "vm clx-mld-41: 17 GPUs: ESXi 7.0.3 on esx-41.example with the template \"ubuntu-gpu-efi\"'s hardware version vmx-21 takes at most 16 PCI passthrough devices per VM (Broadcom KB 309986") {
		t.Errorf("failures:\n%s\n%s", failed, out)
	}
	if res.VMsChanged != 7 {
		t.Errorf("%s", res.Summary())
	}
	for _, c := range []struct {
		esxi, hw string
		want     int
	}{{"6.7.0", "vmx-14", 16}, {"7.0.3", "vmx-19", 16}, {"8.0.0", "vmx-20", 32}, {"8.0.1", "vmx-20", 64}, {"8.0.2", "vmx-20", 64}, {"8.0.2", "vmx-21", 128}, {"8.0.3", "vmx-21", 128}, {"", "", 16}} {
		if got := esxiapply.PassthroughLimit(c.esxi, c.hw); got != c.want {
			t.Errorf("PassthroughLimit(%q, %q) = %d, want %d", c.esxi, c.hw, got, c.want)
		}
	}
}
