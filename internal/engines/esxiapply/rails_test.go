package esxiapply_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// railsInv is a rail-optimized cluster on Cumulus leaves, leaf r per rail,
// joined by a spine: one VM per ESXi host of esxi (VM h0 on esxi[0], …),
// each with a rail per uplink of pfs (pfs[0] is nic.pf, rail 0) and a GPU
// per entry of gpus (H100 PCIe, at that host PCI address, "" for none),
// data_mtu 9000; edits are (old, new) pairs applied to the YAML.
func railsInv(t testing.TB, esxi, pfs, gpus []string, edits ...string) *inventory.Inventory {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: rl\nswitches:\n  - {name: spine, model: SN5600, cumulus: 5.9.1, role: spine}\n")
	for r := range pfs {
		fmt.Fprintf(&b, "  - {name: leaf%d, model: SN5600, cumulus: 5.9.1, role: leaf}\n", r)
	}
	b.WriteString("fabric:\n  links:\n")
	for r := range pfs {
		fmt.Fprintf(&b, "    - {switch: leaf%d, port: swp64, peer: spine, peer_port: swp%d}\n", r, r+1)
	}
	b.WriteString("docker: {version: \"24.0\"}\nhorovod: {launcher: torchrun, image: nvcr.io/nvidia/pytorch:24.01-py3}\n")
	b.WriteString("defaults:\n  os: ubuntu-22.04\n  data_interface: ens224\n  data_mtu: 9000\n  gpus:\n")
	for _, g := range gpus {
		if g == "" {
			b.WriteString("    - {model: H100-PCIE-80GB, memory_gb: 80}\n")
		} else {
			fmt.Fprintf(&b, "    - {model: H100-PCIE-80GB, memory_gb: 80, pci: %q}\n", g)
		}
	}
	fmt.Fprintf(&b, "  nic: {model: ConnectX-7, pf: %s, vfs: 4, speed_gbps: 400}\nhosts:\n", pfs[0])
	for i, e := range esxi {
		fmt.Fprintf(&b, "  - name: h%d\n    esxi: %s\n    data:\n", i, e)
		for r, pf := range pfs {
			fmt.Fprintf(&b, "      - {address: 10.0.%d.%d/24, switch: leaf%d, port: swp%d", r, 11+i, r, i+1)
			if r > 0 {
				fmt.Fprintf(&b, ", pf: %s", pf)
			}
			b.WriteString("}\n")
		}
	}
	src := b.String()
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(src, edits[i]) {
			t.Fatalf("no %q in the inventory:\n%s", edits[i], src)
		}
		src = strings.Replace(src, edits[i], edits[i+1], 1)
	}
	inv, err := inventory.Load("rails.yaml", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return inv
}

// Two hosts of vcsimtest's PCI trees and their four NIC ports (vmnic2,
// rail 0, to vmnic5): esx-0 with one GPU–NIC PCIe switch per rail (2 GPUs
// and a port each, two switches per socket), esx-1 with the ports on root
// ports of their own (two per socket) beside switches of GPUs.
var (
	railESXi = []string{"esx-0.example", "esx-1.example"}
	railPFs  = []string{"vmnic2", "vmnic3", "vmnic4", "vmnic5"}
)

func railTrees() map[string]vcsimtest.PCITree {
	return map[string]vcsimtest.PCITree{
		"esx-0.example": vcsimtest.SharedSwitches(2, 2, 2, 1),
		"esx-1.example": vcsimtest.SeparateSwitches(2, 2, 2, 2),
	}
}

// sriovCards are a VM's SR-IOV adapters in device order, as the PCI
// addresses of their PFs.
func sriovCards(vm mo.VirtualMachine) []string {
	var out []string
	for _, d := range vm.Config.Hardware.Device {
		if c, ok := d.(*types.VirtualSriovEthernetCard); ok && c.SriovBacking != nil && c.SriovBacking.PhysicalFunctionBacking != nil {
			out = append(out, c.SriovBacking.PhysicalFunctionBacking.Id)
		}
	}
	return out
}

// gpusOf are a VM's passthrough GPUs in device order.
func gpusOf(vm mo.VirtualMachine) []string {
	var out []string
	for _, d := range vm.Config.Hardware.Device {
		if p, ok := d.(*types.VirtualPCIPassthrough); ok {
			if b, ok := p.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo); ok {
				out = append(out, b.Id)
			}
		}
	}
	return out
}

// numaNodes maps a VM's GPUs (by PCI address) and SR-IOV adapters (by
// their PF's) to their virtual NUMA node (VirtualDevice.numaNode), -2 when
// unset.
func numaNodes(vm mo.VirtualMachine) map[string]int32 {
	out := map[string]int32{}
	node := func(d types.BaseVirtualDevice) int32 {
		if n := d.GetVirtualDevice().NumaNode; n != nil {
			return *n
		}
		return -2
	}
	for _, d := range vm.Config.Hardware.Device {
		switch d := d.(type) {
		case *types.VirtualPCIPassthrough:
			if b, ok := d.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo); ok {
				out[b.Id] = node(d)
			}
		case *types.VirtualSriovEthernetCard:
			if d.SriovBacking != nil && d.SriovBacking.PhysicalFunctionBacking != nil {
				out["VF "+d.SriovBacking.PhysicalFunctionBacking.Id] = node(d)
			}
		}
	}
	return out
}

func wantLines(t *testing.T, what, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l+"\n") {
			t.Errorf("%s lacks the line %q:\n%s", what, l, out)
		}
	}
}

// A VM of four rails on each of two hosts: SR-IOV with 4 VFs on every
// rail's PF and max_vfs giving each its entry, one VF per rail from that
// rail's PF in rail order, and the 8 GPUs the pairing chooses (under the
// PF's PCIe switch on esx-0, on its NUMA node on esx-1; never the host's
// GPUs outside the tree), the pairing in the plan. A second apply changes
// nothing and records the VMs; the third proves them unchanged and reads
// no PCI device list.
func TestApplyRails(t *testing.T) {
	t.Parallel()
	inv := railsInv(t, railESXi, railPFs, make([]string, 8))
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: railTrees()})
	res, out := e.applyWith(t, esxiapply.Options{DryRun: true})
	if res.Err() != nil || res.VMsChanged != 2 || res.HostsChanged != 2 {
		t.Fatalf("dry run: %s\n%s", res.Summary(), out)
	}
	wantLines(t, "plan", out,
		"  SR-IOV on vmnic2 (0000:15:00.0): disabled → enabled, 4 VFs",
		"  SR-IOV on vmnic5 (0000:93:00.0): disabled → enabled, 4 VFs",
		`  nmlx5_core parameters: "" → "max_vfs=4,4,4,4 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1" (the rails' PFs in nmlx5_core's ports in PCI order: vmnic2 value 1, vmnic3 value 2, vmnic4 value 3, vmnic5 value 4)`,
		`  add SR-IOV adapter: VF of ConnectX-7 vmnic2 (0000:15:00.0), port group "VM Network" (when SR-IOV is active: now, or at the first apply after esx-0.example reboots)`,
		`  add SR-IOV adapter for rail 3: VF of ConnectX-7 vmnic5 (0000:93:00.0), port group "VM Network" (when SR-IOV is active: now, or at the first apply after esx-0.example reboots)`,
		"  GPU–rail pairing: rail 0 (vmnic2 0000:15:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (chosen) — same PCIe switch 0000:11:00.0",
		"  GPU–rail pairing: rail 3 (vmnic5 0000:93:00.0): GPUs 0000:91:00.0, 0000:92:00.0 (chosen) — same PCIe switch 0000:8f:00.0",
		"  GPU–rail pairing: rail 1 (vmnic3 0000:1d:00.0): GPUs 0000:18:00.0, 0000:19:00.0 (chosen) — same NUMA node 0, no common PCIe switch",
		"  no virtual NUMA node per device: hardware version vmx-13 is below vmx-20, the first that assigns devices to virtual NUMA nodes",
	)
	if strings.Contains(out, "warning:") {
		t.Errorf("plan warns:\n%s", out)
	}
	for _, m := range res.Machines {
		if m.Name == "h0" && !slices.Contains(m.Notes, "GPU–rail pairing: rail 1 (vmnic3 0000:1b:00.0): GPUs 0000:19:00.0, 0000:1a:00.0 (chosen) — same PCIe switch 0000:17:00.0") {
			t.Errorf("h0's notes %q", m.Notes)
		}
	}

	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 2 {
		t.Fatalf("apply: %s\n%s", res.Summary(), out)
	}
	want := map[string][2][]string{
		"h0": {{"0000:15:00.0", "0000:1b:00.0", "0000:8d:00.0", "0000:93:00.0"},
			{"0000:13:00.0", "0000:14:00.0", "0000:19:00.0", "0000:1a:00.0", "0000:8b:00.0", "0000:8c:00.0", "0000:91:00.0", "0000:92:00.0"}},
		"h1": {{"0000:1b:00.0", "0000:1d:00.0", "0000:93:00.0", "0000:95:00.0"},
			{"0000:13:00.0", "0000:14:00.0", "0000:18:00.0", "0000:19:00.0", "0000:8b:00.0", "0000:8c:00.0", "0000:90:00.0", "0000:91:00.0"}},
	}
	vms := e.readVMs(t)
	for name, w := range want {
		if got := sriovCards(vms[name]); !slices.Equal(got, w[0]) {
			t.Errorf("%s: SR-IOV adapters on %v, want one per rail in rail order %v", name, got, w[0])
		}
		if got := gpusOf(vms[name]); !slices.Equal(got, w[1]) {
			t.Errorf("%s: GPUs %v, want %v", name, got, w[1])
		}
	}
	for _, esxi := range railESXi {
		if got := e.sim.Modules.Params(esxi, "nmlx5_core"); got != "max_vfs=4,4,4,4 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1" {
			t.Errorf("%s: nmlx5_core %q", esxi, got)
		}
		h := e.readHost(t, esxi)
		n := 0
		for _, pi := range h.Config.PciPassthruInfo {
			if sr, ok := pi.(*types.HostSriovInfo); ok && sr.SriovEnabled && sr.NumVirtualFunction == 4 {
				n++
			}
		}
		if n != 4 {
			t.Errorf("%s: %d PFs with SR-IOV on and 4 VFs, want the 4 rails'", esxi, n)
		}
	}

	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.HostsChanged != 0 || res.VMsProven != 0 {
		t.Fatalf("second apply: %s\n%s", res.Summary(), out)
	}
	if len(e.record.VMs) != 2 {
		t.Fatalf("record of %d VMs after a no-op: %+v", len(e.record.VMs), e.record)
	}
	e.counter.Watch(devList)
	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.HostsChanged != 0 || res.VMsProven != 2 {
		t.Fatalf("third apply: %s, %d proven\n%s", res.Summary(), res.VMsProven, out)
	}
	if n := e.counter.Matched(devList); n != 0 {
		t.Errorf("third apply read %d PCI device lists, want none: %s", n, e.counter)
	}
	if got := e.record.VMs["h1"].GPUs; !slices.Equal(got, want["h1"][1]) {
		t.Errorf("h1's recorded GPUs %v", got)
	}
}

// Check on the cluster apply made: every rail's PF with SR-IOV and 4 VFs,
// each rail's VF attached from its own PF, each VF on the NUMA node of its
// GPUs (per rail: the pairing's line), and the device groups the host
// offers reported, fitted to the rails; reads only.
func TestCheckRails(t *testing.T) {
	t.Parallel()
	group := types.VirtualMachineVendorDeviceGroupInfo{DeviceGroupName: "nvidia-h100-cx7", ComponentDeviceInfo: []types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo{
		{Type: "pciPassthru", VendorName: "NVIDIA", DeviceName: "GH100 [H100 PCIe]", Device: &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
			Backing: &types.VirtualPCIPassthroughDynamicBackingInfo{AllowedDevice: []types.VirtualPCIPassthroughAllowedDevice{{VendorId: 0x10de, DeviceId: 0x2331}}}}}},
		{Type: "sriovNic", VendorName: "Mellanox", DeviceName: "MT2910 Family [ConnectX-7]"},
	}}
	inv := railsInv(t, railESXi, railPFs, make([]string, 8))
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: railTrees(), DeviceGroups: map[string][]types.VirtualMachineVendorDeviceGroupInfo{"esx-0.example": {group}}})
	healthy(t, e)
	rs := e.check(t)
	for _, r := range rs {
		if r.Status != readiness.Passed {
			t.Errorf("%s", r.Line())
		}
	}
	want := []readiness.Result{
		{Target: readiness.TargetESXi, Machine: "esx-1.example", Check: esxiapply.CheckNIC, Subject: "vmnic5", Status: readiness.Passed, Found: "0000:95:00.0, SR-IOV capable, up to 127 VFs"},
		{Target: readiness.TargetESXi, Machine: "esx-1.example", Check: esxiapply.CheckSRIOV, Subject: "0000:93:00.0", Status: readiness.Passed, Found: "4 VFs"},
		{Target: readiness.TargetESXi, Machine: "h1", Check: esxiapply.CheckDevices, Subject: "VF of vmnic4", Status: readiness.Passed, Found: "attached, connected"},
		{Target: readiness.TargetESXi, Machine: "h1", Check: esxiapply.CheckNUMA, Subject: "VF of vmnic4", Status: readiness.Passed,
			Found: "rail 2 (vmnic4 0000:93:00.0): GPUs 0000:8b:00.0, 0000:8c:00.0 (given) — same NUMA node 1, no common PCIe switch"},
		{Target: readiness.TargetESXi, Machine: "h0", Check: esxiapply.CheckNUMA, Subject: "VF of vmnic3", Status: readiness.Passed,
			Found: "rail 1 (vmnic3 0000:1b:00.0): GPUs 0000:19:00.0, 0000:1a:00.0 (given) — same PCIe switch 0000:17:00.0"},
		{Target: readiness.TargetESXi, Machine: "h0", Check: esxiapply.CheckDeviceGroups, Status: readiness.Passed,
			Found: `vendor device group "nvidia-h100-cx7" (pciPassthru NVIDIA GH100 [H100 PCIe], sriovNic Mellanox MT2910 Family [ConnectX-7]) fits rails 0, 1, 2, 3; rdggen attaches the devices one by one`},
		{Target: readiness.TargetESXi, Machine: "h1", Check: esxiapply.CheckDeviceGroups, Status: readiness.Passed, Found: "ESXi host esx-1.example offers no vendor device groups (none required)"},
	}
	for _, w := range want {
		if got := result(t, rs, w.Machine, w.Check, w.Subject); !cmp.Equal(got, w) {
			t.Errorf("%s", cmp.Diff(w, got))
		}
	}
	n := 0
	for _, r := range rs {
		if r.Check == esxiapply.CheckNUMA || (r.Check == esxiapply.CheckDevices && strings.HasPrefix(r.Subject, "VF of ")) {
			n++
		}
	}
	if n != 16 {
		t.Errorf("%d numa and VF device results, want 4 of each per VM", n)
	}
}

// A rail whose GPUs the inventory places on the other socket: the plan
// warns, with the reason and the rail whose PF is on their node, and check
// fails numa for that rail's VF with the fix; the rail whose GPUs share its
// node passes.
func TestCheckRailVFOnWrongNUMANode(t *testing.T) {
	t.Parallel()
	// esx-1's vmnic2 (0000:1b:00.0) is on node 0, vmnic4 (0000:93:00.0) on
	// node 1; GPUs 0000:13:00.0 to 0000:19:00.0 are all on node 0.
	inv := railsInv(t, railESXi[1:], []string{"vmnic2", "vmnic4"}, []string{"0000:13:00.0", "0000:14:00.0", "0000:18:00.0", "0000:19:00.0"})
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: railTrees()})
	res, out := e.applyWith(t, esxiapply.Options{DryRun: true})
	if res.Err() != nil {
		t.Fatalf("dry run: %s\n%s", res.Summary(), out)
	}
	wantLines(t, "plan", out,
		"  GPU–rail pairing: rail 0 (vmnic2 0000:1b:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (given) — same NUMA node 0, no common PCIe switch",
		"  GPU–rail pairing: rail 1 (vmnic4 0000:93:00.0): GPUs 0000:18:00.0, 0000:19:00.0 (given) — crosses sockets: GPU on NUMA node 0, PF on node 1 (rail 0's vmnic2 is on its NUMA node)",
		"  warning: rail 1 (vmnic4 0000:93:00.0): GPU 0000:18:00.0 is on NUMA node 0 and the PF on node 1, so GPUDirect RDMA between them crosses the link between the sockets; the GPU is given, not chosen; rail 0's vmnic2 is on its NUMA node",
	)
	healthy(t, e)
	rs := e.check(t)
	got := result(t, rs, "h0", esxiapply.CheckNUMA, "VF of vmnic4")
	want := readiness.Result{Target: readiness.TargetESXi, Machine: "h0", Check: esxiapply.CheckNUMA, Subject: "VF of vmnic4", Status: readiness.Failed,
		Found:    "VF of vmnic4 (PF 0000:93:00.0) on NUMA node 1, its GPU 0000:18:00.0 on node 0, GPU 0000:19:00.0 on node 0",
		Expected: "the VF on the NUMA node of its GPUs, or under their PCIe switch (GPUDirect RDMA otherwise crosses the CPU interconnect)",
		Fix:      "set gpus[2].pci of h0 to a GPU on NUMA node 1, or data[1].pf to a NIC port on node 0, then rdggen apply --target esxi (rail 0's vmnic2 is on its NUMA node: gpus[].rail can pair GPU 0000:18:00.0 with rail 0)"}
	if !cmp.Equal(got, want) {
		t.Errorf("%s", cmp.Diff(want, got))
	}
	// The lines docs/check.md and docs/rails.md show.
	for _, w := range []struct{ check, subject, line string }{
		{esxiapply.CheckDevices, "VF of vmnic4", "h0: devices VF of vmnic4: passed (attached, connected)"},
		{esxiapply.CheckNUMA, "VF of vmnic2", "h0: numa VF of vmnic2: passed (rail 0 (vmnic2 0000:1b:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (given) — same NUMA node 0, no common PCIe switch)"},
		{esxiapply.CheckDeviceGroups, "", "h0: device-groups: passed (ESXi host esx-1.example offers no vendor device groups (none required))"},
	} {
		if got := result(t, rs, "h0", w.check, w.subject).Line(); got != w.line {
			t.Errorf("got  %s\nwant %s", got, w.line)
		}
	}
}

// The virtual NUMA node of each device: a VM of hardware version 20 with
// a fixed virtual NUMA size of the host's two nodes gets each GPU and VF
// on the virtual node of its host node, in the requests that add them
// (h1, set up so before the first apply; vcsim keeps what is sent, so the
// request is what is tested) or, for devices attached before the VM
// allowed it, in an edit (h0, upgraded after); then nothing changes.
func TestApplyRailsVirtualNUMA(t *testing.T) {
	t.Parallel()
	inv := railsInv(t, railESXi, railPFs, make([]string, 8))
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: railTrees()})
	vnuma := func(vm *simulator.VirtualMachine) {
		vm.Config.Version = "vmx-20"
		vm.Config.NumaInfo = &types.VirtualMachineVirtualNumaInfo{CoresPerNumaNode: types.NewInt32(4), AutoCoresPerNumaNode: types.NewBool(false)}
	}
	if !e.sim.ReconfigVM("h1", vnuma) {
		t.Fatal("no VM h1")
	}
	res, out := e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 2 {
		t.Fatalf("apply: %s\n%s", res.Summary(), out)
	}
	wantLines(t, "apply", out,
		"  add GPU gpus[4] H100-PCIE-80GB: 0000:8b:00.0 NVIDIA H100-PCIE-80GB (10de:2331), virtual NUMA node 1 (when passthrough is active: now, or at the first apply after esx-1.example reboots)",
		`  add SR-IOV adapter for rail 1: VF of ConnectX-7 vmnic3 (0000:1d:00.0), port group "VM Network", virtual NUMA node 0 (when SR-IOV is active: now, or at the first apply after esx-1.example reboots)`,
	)
	nodes := map[string]int32{
		"0000:13:00.0": 0, "0000:14:00.0": 0, "0000:18:00.0": 0, "0000:19:00.0": 0, "0000:8b:00.0": 1, "0000:8c:00.0": 1, "0000:90:00.0": 1, "0000:91:00.0": 1,
		"VF 0000:1b:00.0": 0, "VF 0000:1d:00.0": 0, "VF 0000:93:00.0": 1, "VF 0000:95:00.0": 1,
	}
	if got := numaNodes(e.readVMs(t)["h1"]); !cmp.Equal(got, nodes) {
		t.Errorf("h1's devices' virtual NUMA nodes: %s", cmp.Diff(nodes, got))
	}
	for _, n := range numaNodes(e.readVMs(t)["h0"]) {
		if n != -2 {
			t.Fatalf("h0 (vmx-13) has a device with a virtual NUMA node: %v", numaNodes(e.readVMs(t)["h0"]))
		}
	}

	// h0 moves to hardware version 20 and two virtual nodes: each attached
	// device gets its node in an edit.
	if !e.sim.ReconfigVM("h0", vnuma) {
		t.Fatal("no VM h0")
	}
	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 1 {
		t.Fatalf("apply after the upgrade: %s\n%s", res.Summary(), out)
	}
	wantLines(t, "apply", out,
		"  GPU 0000:91:00.0: virtual NUMA node unset → 1 (host NUMA node 1)",
		"  SR-IOV adapter on vmnic2: virtual NUMA node unset → 0 (host NUMA node 0)",
	)
	nodes = map[string]int32{
		"0000:13:00.0": 0, "0000:14:00.0": 0, "0000:19:00.0": 0, "0000:1a:00.0": 0, "0000:8b:00.0": 1, "0000:8c:00.0": 1, "0000:91:00.0": 1, "0000:92:00.0": 1,
		"VF 0000:15:00.0": 0, "VF 0000:1b:00.0": 0, "VF 0000:8d:00.0": 1, "VF 0000:93:00.0": 1,
	}
	if got := numaNodes(e.readVMs(t)["h0"]); !cmp.Equal(got, nodes) {
		t.Errorf("h0's devices' virtual NUMA nodes: %s", cmp.Diff(nodes, got))
	}
	if res, out = e.applyRecord(t, false); res.Err() != nil || res.VMsChanged != 0 || res.HostsChanged != 0 {
		t.Fatalf("no-op: %s\n%s", res.Summary(), out)
	}
	// A virtual NUMA size ESXi picks at power-on: no node per device, so
	// nothing to change (the nodes set stay).
	if !e.sim.ReconfigVM("h0", func(vm *simulator.VirtualMachine) { vm.Config.NumaInfo.AutoCoresPerNumaNode = types.NewBool(true) }) {
		t.Fatal("no VM h0")
	}
	res, out = e.applyWith(t, esxiapply.Options{DryRun: true, Full: true})
	if res.VMsChanged != 0 {
		t.Errorf("nodes without an assignment changed: %s\n%s", res.Summary(), out)
	}
}

// A VM of several rails cloned from a template: each rail's VF is attached
// from its PF, and the first boot takes each VF's MAC as vCenter assigned
// it, rail by rail (rail 0's is the data interface's, which the network
// config matches).
func TestCloneRails(t *testing.T) {
	t.Parallel()
	inv := railsInv(t, railESXi, railPFs, make([]string, 8),
		"  nic: {model", "  template: {name: ubuntu-gpu-efi, cpus: 16, memory_gb: 32, user: rdg, ssh_keys: [\""+testKey+"\"]}\n  nic: {model")
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: railTrees(), SkipVMs: allVMs(inv), Templates: templates})
	res, out := e.applyWith(t, esxiapply.Options{})
	if err := res.Err(); err != nil || res.VMsChanged != 2 {
		t.Fatalf("apply: %v: %s\n%s", err, res.Summary(), out)
	}
	vms := e.readAll(t)
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		vm := vms[h.VM]
		pfOf := map[string]string{} // PF PCI address → the VF's MAC
		mgmt := ""
		for _, d := range vm.Config.Hardware.Device {
			switch d := d.(type) {
			case *types.VirtualSriovEthernetCard:
				pfOf[d.SriovBacking.PhysicalFunctionBacking.Id] = strings.ToLower(d.MacAddress)
			case *types.VirtualVmxnet3:
				mgmt = strings.ToLower(d.MacAddress)
			}
		}
		tree := railTrees()[h.ESXi]
		var macs []string
		for _, pf := range railPFs {
			for _, u := range tree.Uplinks() {
				if u.Device == pf {
					macs = append(macs, pfOf[u.Pci])
				}
			}
		}
		if len(macs) != 4 || slices.Contains(macs, "") || mgmt == "" {
			t.Fatalf("%s: VFs %v, management adapter %q", h.VM, pfOf, mgmt)
		}
		if w := fmt.Sprintf("vm %s: first boot: cloud-init identity written (eno0 %s, ens224 %s, rail1 %s, rail2 %s, rail3 %s), powered on (",
			h.VM, mgmt, macs[0], macs[1], macs[2], macs[3]); !strings.Contains(out, w) {
			t.Errorf("apply lacks %q:\n%s", w, out)
		}
		extra := map[string]string{}
		for _, o := range vm.Config.ExtraConfig {
			extra[o.GetOptionValue().Key] = fmt.Sprint(o.GetOptionValue().Value)
		}
		md, ud := gunzip(t, extra["guestinfo.metadata"]), gunzip(t, extra["guestinfo.userdata"])
		for r, mac := range macs {
			if !strings.Contains(md, "macaddress: "+mac+"\n") || !strings.Contains(md, "set-name: "+h.Rails[r].Interface+"\n") {
				t.Errorf("%s: the network config does not match rail %d's VF by its MAC %s and name it %s:\n%s", h.VM, r, mac, h.Rails[r].Interface, md)
			}
			if !strings.Contains(ud, mac) {
				t.Errorf("%s: the user-data (the topology boot script) lacks rail %d's MAC %s", h.VM, r, mac)
			}
		}
	}
	if res, out := e.applyWith(t, esxiapply.Options{}); res.Err() != nil || res.VMsChanged != 0 {
		t.Fatalf("second apply: %s\n%s", res.Summary(), out)
	}
}

// A VM of several rails counts one VF per rail against its host's
// passthrough limit, as validation does: 15 GPUs and 2 rails are 17
// devices, more than ESXi 7.0's 16.
func TestRailsPassthroughLimit(t *testing.T) {
	t.Parallel()
	inv := railsInv(t, railESXi[:1], railPFs[:2], make([]string, 15))
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: railTrees(), ESXiVersion: map[string]string{"esx-0.example": "7.0.3"}})
	res, out := e.applyWith(t, esxiapply.Options{DryRun: true})
	want := "vm h0: 15 GPUs and 2 rails' VFs (17 devices): ESXi 7.0.3 on esx-0.example with its hardware version vmx-13 takes at most 16 PCI passthrough devices per VM (Broadcom KB 309986"
	if len(res.Failed) != 1 || !strings.Contains(res.Failed[0], want) {
		t.Errorf("failures %q, want %q\n%s", res.Failed, want, out)
	}
}

// A rail whose pf the ESXi host lacks holds back the host's NIC settings
// and every SR-IOV adapter of its VMs, with a fix naming the rail's key; a
// VM with GPUs placed in the inventory waits on it for its adapters, one
// whose GPUs the pairing would choose cannot be paired. Check reports the
// uplink and passes the others.
func TestRailsMissingPF(t *testing.T) {
	t.Parallel()
	inv := railsInv(t, railESXi[:1], []string{"vmnic2", "vmnic9"}, []string{"0000:13:00.0", "0000:14:00.0"})
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: railTrees()})
	res, out := e.applyWith(t, esxiapply.Options{DryRun: true})
	if res.VMsBlocked != 1 || len(res.Failed) != 1 || !strings.Contains(res.Failed[0], "no uplink vmnic9 (uplinks: vmnic0, vmnic1, vmnic2, vmnic3, vmnic4, vmnic5); check the inventory's data[1].pf") {
		t.Fatalf("dry run: %s, %q\n%s", res.Summary(), res.Failed, out)
	}
	wantLines(t, "plan", out, `  not now: SR-IOV adapters (one per rail, VFs of ConnectX-7 vmnic2, vmnic9, port group "VM Network"): wait on ESXi host esx-0.example: no uplink vmnic9 (uplinks: vmnic0, vmnic1, vmnic2, vmnic3, vmnic4, vmnic5); check the inventory's data[1].pf`)
	choose := railsInv(t, railESXi[:1], []string{"vmnic2", "vmnic9"}, make([]string, 2))
	e2 := newEnv(t, choose, vcsimtest.Options{PCITrees: railTrees()})
	if res, out := e2.applyWith(t, esxiapply.Options{DryRun: true}); len(res.Failed) != 2 || res.Failed[1] != "vm h0: GPU–rail pairing: rail 1: the host has no uplink vmnic9 (uplinks: vmnic0, vmnic1, vmnic2, vmnic3, vmnic4, vmnic5)" {
		t.Errorf("GPUs to choose: %q\n%s", res.Failed, out)
	}
	if strings.Contains(out, "SR-IOV on") || strings.Contains(out, "add SR-IOV adapter") {
		t.Errorf("a blocked host's SR-IOV is planned:\n%s", out)
	}
	rs := e.check(t)
	if r := result(t, rs, "esx-0.example", esxiapply.CheckNIC, "vmnic9"); r.Status != readiness.Failed || r.Fix != "set data[1].pf in the inventory to the ConnectX uplink of esx-0.example (esxcli network nic list)" {
		t.Errorf("%s", r.Line())
	}
	if r := result(t, rs, "esx-0.example", esxiapply.CheckNIC, "vmnic2"); r.Status != readiness.Passed {
		t.Errorf("%s", r.Line())
	}
}

// GPUs a VM of several rails already has stay where the pairing would put
// them, given (not chosen again); one the pairing has no slot for is named
// in the plan, and left attached (rdggen removes no device).
func TestRailsKeepGPUs(t *testing.T) {
	t.Parallel()
	inv := railsInv(t, railESXi[:1], railPFs, make([]string, 8))
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: railTrees()})
	decoy := vcsimtest.GPUAddress(0) // a GPU of the model outside the PCI tree: no switch, no NUMA node
	e.reconfigure(t, "h0", func(*object.VirtualMachine) types.VirtualMachineConfigSpec {
		var spec types.VirtualMachineConfigSpec
		for i, id := range []string{"0000:91:00.0", decoy} {
			spec.DeviceChange = append(spec.DeviceChange, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd,
				Device: &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{Key: int32(-20 - i), Backing: &types.VirtualPCIPassthroughDeviceBackingInfo{
					Id: id, DeviceId: "2331", VendorId: 0x10de, SystemId: vcsimtest.SystemID("esx-0.example")}}}})
		}
		return spec
	})
	res, out := e.applyWith(t, esxiapply.Options{})
	if res.Err() != nil || res.VMsChanged != 1 {
		t.Fatalf("apply: %s\n%s", res.Summary(), out)
	}
	wantLines(t, "apply", out,
		"  GPU–rail pairing: rail 3 (vmnic5 0000:93:00.0): GPU 0000:91:00.0 (given) — same PCIe switch 0000:8f:00.0; GPU 0000:92:00.0 (chosen) — same PCIe switch 0000:8f:00.0",
		"  the VM has GPU "+decoy+", which the pairing does not keep (rdggen removes no device: remove it by hand when it is not wanted)",
	)
	if strings.Contains(out, "add GPU gpus[6]") || !strings.Contains(out, "add GPU gpus[7] H100-PCIE-80GB: 0000:92:00.0") {
		t.Errorf("gpus[6] is 0000:91:00.0, which the VM has; gpus[7] 0000:92:00.0 is added:\n%s", out)
	}
	want := []string{"0000:91:00.0", decoy, "0000:13:00.0", "0000:14:00.0", "0000:19:00.0", "0000:1a:00.0", "0000:8b:00.0", "0000:8c:00.0", "0000:92:00.0"}
	if got := gpusOf(e.readVMs(t)["h0"]); !slices.Equal(got, want) {
		t.Errorf("GPUs %v, want %v", got, want)
	}
	if res, out := e.applyWith(t, esxiapply.Options{}); res.Err() != nil || res.VMsChanged != 0 {
		t.Errorf("second apply: %s\n%s", res.Summary(), out)
	}
}

// The record names, per ESXi host, the vSwitches that carry the rails'
// PFs beside rail 0's: a no-op reads those by key, and none whole.
func TestRecordRailVSwitches(t *testing.T) {
	t.Parallel()
	inv := railsInv(t, railESXi[:1], railPFs, make([]string, 8))
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: railTrees()})
	// Rails 1–3's PFs on a vSwitch of their own.
	const other = "key-vim.host.VirtualSwitch-vSwitchRails"
	e.sim.EditHostNetwork("esx-0.example", func(net *types.HostNetworkInfo) {
		for i := range net.Vswitch {
			vs := &net.Vswitch[i]
			if vs.Name != vcsimtest.DataVSwitch {
				continue
			}
			rails := *vs
			rails.Name, rails.Key = "vSwitchRails", other
			rails.Pnic = slices.Clone(vs.Pnic[1:])
			rails.Spec.Bridge = &types.HostVirtualSwitchBondBridge{NicDevice: railPFs[1:]}
			vs.Pnic = vs.Pnic[:1]
			vs.Spec.Bridge = &types.HostVirtualSwitchBondBridge{NicDevice: railPFs[:1]}
			net.Vswitch = append(net.Vswitch, rails)
			return
		}
	})
	res, out := e.applyRecord(t, false)
	if res.Err() != nil {
		t.Fatalf("apply: %s\n%s", res.Summary(), out)
	}
	wantLines(t, "apply", out, "  vSwitch vSwitch1 (uplink vmnic2): MTU 1500 → 9000", "  vSwitch vSwitchRails (uplink vmnic3): MTU 1500 → 9000")
	if r := e.record.Hosts["esx-0.example"]; r.VSwitch != "key-vim.host.VirtualSwitch-"+vcsimtest.DataVSwitch || !slices.Equal(r.RailVSwitches, []string{other}) {
		t.Fatalf("record of esx-0: %+v", r)
	}
	e.counter.Watch(vswitchKeyed)
	e.counter.Watch(vswitchWhole)
	res, out = e.applyRecord(t, false)
	if res.Err() != nil || res.VMsChanged != 0 || res.HostsChanged != 0 {
		t.Fatalf("no-op: %s\n%s", res.Summary(), out)
	}
	if k, w := e.counter.Matched(vswitchKeyed), e.counter.Matched(vswitchWhole); k != 1 || w != 0 {
		t.Errorf("no-op: %d keyed and %d whole vSwitch reads, want 1 and 0: %s", k, w, e.counter)
	}
}
