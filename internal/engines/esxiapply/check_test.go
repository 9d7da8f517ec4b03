package esxiapply_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// readOnly are the only SOAP methods a check may send: the retrieve of
// vCenter's state and its container view, the module parameters, and the
// config target (the vendor device groups of hosts with VMs of several
// rails).
var readOnly = []string{"RetrievePropertiesEx", "RetrieveProperties", "ContinueRetrievePropertiesEx", "CreateContainerView", "DestroyView",
	"QueryConfiguredModuleOptionString", "QueryConfigTarget"}

// check runs esxiapply.Check and asserts it changed nothing: only read
// methods went to vCenter, no module parameter was set, and it read each
// reachable host's parameters once.
func (e *env) check(t *testing.T) []readiness.Result {
	t.Helper()
	e.counter.Reset()
	gets0, sets0 := e.sim.Modules.Calls()
	rs, err := esxiapply.Check(context.Background(), e.sess.Client, e.inv, esxiapply.Options{
		Parallel: parallel,
		// Ignored by Check: a gate that would refuse.
		Gate: func(context.Context, []applyplan.Machine) bool { return false },
	})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	total := 0
	for _, m := range readOnly {
		total += e.counter.Count(m)
	}
	if total != e.counter.Total() {
		t.Errorf("check sent more than reads: %s", e.counter)
	}
	gets, sets := e.sim.Modules.Calls()
	if sets != sets0 {
		t.Errorf("check set module parameters %d time(s)", sets-sets0)
	}
	if n := e.counter.Count("QueryConfiguredModuleOptionString"); n != gets-gets0 {
		t.Errorf("%d QueryConfiguredModuleOptionString calls, the store served %d reads", n, gets-gets0)
	}
	if gets-gets0 > len(e.inv.ESXiHosts()) {
		t.Errorf("check read module parameters %d times for %d hosts", gets-gets0, len(e.inv.ESXiHosts()))
	}
	t.Logf("check SOAP calls: %s", e.counter)
	return rs
}

// healthy brings the simulated cluster to the state the inventory wants,
// the way an operator does on hosts that need a reboot: apply, reboot every
// host but those in skip, apply again (devices), power every VM on.
func healthy(t *testing.T, e *env, skip ...string) {
	t.Helper()
	ctx := context.Background()
	if res, out := e.apply(t, false); res.Err() != nil {
		t.Fatalf("first apply: %v\n%s", res.Err(), out)
	}
	for _, h := range e.inv.ESXiHosts() {
		if !slices.Contains(skip, h) {
			e.sim.Reboot(h)
		}
	}
	if res, out := e.apply(t, false); res.Err() != nil {
		t.Fatalf("apply after the reboot: %v\n%s", res.Err(), out)
	}
	for i := range e.inv.Hosts {
		if err := e.sim.PowerOn(ctx, e.inv.Hosts[i].VM); err != nil {
			t.Fatal(err)
		}
	}
}

func failed(rs []readiness.Result) []readiness.Result {
	return slices.DeleteFunc(slices.Clone(rs), func(r readiness.Result) bool { return r.Status == readiness.Passed })
}

func lines(rs []readiness.Result) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Line() + "\n")
	}
	return b.String()
}

// result returns the one result of machine, check and subject.
func result(t *testing.T, rs []readiness.Result, machine, check, subject string) readiness.Result {
	t.Helper()
	var out []readiness.Result
	for _, r := range rs {
		if r.Machine == machine && r.Check == check && r.Subject == subject {
			out = append(out, r)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d results for %s %s %q, want 1:\n%s", len(out), machine, check, subject, lines(rs))
	}
	return out[0]
}

// A cluster brought up by apply, reboots and power-on passes every check:
// per host its NIC, each GPU's and the PF's passthrough, the VF count, the
// module parameters, the vSwitch MTU and no pending reboot; per VM its
// settings, power and each device attached and connected.
func TestCheckHealthy(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{NeedReboot: true})
	healthy(t, e)
	rs := e.check(t)
	var tally readiness.Tally
	tally.Add(rs...)
	if !tally.OK() || tally.String() != "112 passed, 0 failed, 0 could not tell" {
		t.Fatalf("%s, want all passed:\n%s", tally, lines(failed(rs)))
	}
	perCheck := map[string]int{}
	for _, r := range rs {
		if r.Target != readiness.TargetESXi {
			t.Errorf("target %q: %s", r.Target, r.Line())
		}
		perCheck[r.Check]++
	}
	want := map[string]int{
		esxiapply.CheckNIC: 8, esxiapply.CheckPassthrough: 8 * 3, esxiapply.CheckSRIOV: 8, esxiapply.CheckModuleParams: 8,
		esxiapply.CheckMTU: 8, esxiapply.CheckReboot: 8, esxiapply.CheckConfig: 8, esxiapply.CheckP2P: 8, esxiapply.CheckPower: 8, esxiapply.CheckDevices: 8 * 3,
	}
	if fmt.Sprint(perCheck) != fmt.Sprint(want) {
		t.Errorf("results per check %v, want %v", perCheck, want)
	}
	// Results come host by host, each host followed by its VMs.
	if rs[0].Machine != "esx-41.example" || rs[8].Machine != "clx-mld-41" || rs[14].Machine != "esx-42.example" {
		t.Errorf("order: %s, %s, %s", rs[0].Machine, rs[8].Machine, rs[14].Machine)
	}
	for _, c := range []struct{ machine, check, subject, found string }{
		{"esx-41.example", esxiapply.CheckPassthrough, "0000:20:00.0", "enabled, active"},
		{"esx-41.example", esxiapply.CheckPassthrough, vcsimtest.PFAddress, "SR-IOV enabled, active"},
		{"esx-41.example", esxiapply.CheckSRIOV, vcsimtest.PFAddress, "8 VFs"},
		{"esx-41.example", esxiapply.CheckModuleParams, "nmlx5_core", `"max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1"`},
		{"esx-41.example", esxiapply.CheckNIC, "vmnic4", "0000:d8:00.0, SR-IOV capable, up to 127 VFs"},
		{"esx-41.example", esxiapply.CheckMTU, "vSwitch vSwitch1", "1500"},
		{"esx-41.example", esxiapply.CheckReboot, "", "no reboot pending"},
		{"clx-mld-41", esxiapply.CheckConfig, "", "firmware efi; pciPassthru.use64bitMMIO=TRUE; pciPassthru.64bitMMIOSizeGB=64; 16384 MB reserved, locked"},
		{"clx-mld-41", esxiapply.CheckP2P, "", "pciPassthru.allowP2P=TRUE; pciPassthru.RelaxACSforP2P=TRUE"},
		{"clx-mld-41", esxiapply.CheckPower, "", "poweredOn"},
		{"clx-mld-41", esxiapply.CheckDevices, "0000:21:00.0", "attached, connected"},
		{"clx-mld-41", esxiapply.CheckDevices, "VF of vmnic4", "attached, connected"},
	} {
		if r := result(t, rs, c.machine, c.check, c.subject); r.Found != c.found {
			t.Errorf("%s: found %q, want %q", r.Line(), r.Found, c.found)
		}
	}
	if got, want := result(t, rs, "clx-mld-48", esxiapply.CheckDevices, "VF of vmnic4").Line(), "clx-mld-48: devices VF of vmnic4: passed (attached, connected)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

// One host applied but not rebooted: its GPUs' passthrough and SR-IOV are
// enabled, not active, its VFs not there, its parameters not loaded, and
// vCenter says it needs a reboot; its VM lacks the devices. Every failure
// is on that host or its VM and says "reboot needed" with the host's name;
// the other hosts and VMs pass. Doing what the fixes say makes it pass.
func TestCheckRebootPending(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{NeedReboot: true})
	const host, vm = "esx-44.example", "clx-mld-44"
	healthy(t, e, host)
	rs := e.check(t)
	bad := failed(rs)
	if len(bad) != 9 {
		t.Errorf("%d failed, want 9 (host: 2 GPUs, PF, VFs, parameters, reboot; VM: 2 GPUs, VF):\n%s", len(bad), lines(bad))
	}
	for _, r := range bad {
		if r.Machine != host && r.Machine != vm {
			t.Errorf("failure elsewhere: %s", r.Line())
		}
		if r.Status != readiness.Failed || !strings.Contains(r.Fix, "reboot needed") || !strings.Contains(r.Fix, host) {
			t.Errorf("not a reboot of %s: %s", host, r.Line())
		}
	}
	for _, c := range []struct{ machine, check, subject, found, expected, fix string }{
		{host, esxiapply.CheckPassthrough, "0000:20:00.0", "enabled, not active", "active",
			"reboot ESXi host esx-44.example (reboot needed: passthrough takes effect at boot)"},
		{host, esxiapply.CheckPassthrough, vcsimtest.PFAddress, "SR-IOV enabled, not active", "active",
			"reboot ESXi host esx-44.example (reboot needed: SR-IOV takes effect at boot)"},
		{host, esxiapply.CheckSRIOV, vcsimtest.PFAddress, "8 VFs requested, 0 present", "8 VFs present",
			"reboot ESXi host esx-44.example (reboot needed: the VF count takes effect at boot)"},
		{host, esxiapply.CheckModuleParams, "nmlx5_core", `configured "max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1", but vmnic4 runs 0 VFs: not loaded yet`,
			"loaded (8 VFs)", "reboot ESXi host esx-44.example (reboot needed: module parameters take effect when the driver loads at boot)"},
		{host, esxiapply.CheckReboot, "", "reboot required (vCenter: summary.rebootRequired)", "no reboot pending",
			"reboot ESXi host esx-44.example (reboot needed: vCenter reports configuration changes that take effect at boot)"},
		{vm, esxiapply.CheckDevices, "0000:21:00.0", "not attached", "attached",
			"shut down VM clx-mld-44, reboot ESXi host esx-44.example (reboot needed: passthrough of 0000:21:00.0 is enabled, not active), then rdggen apply --target esxi and power on VM clx-mld-44"},
		{vm, esxiapply.CheckDevices, "VF of vmnic4", "not attached", "attached",
			"shut down VM clx-mld-44, reboot ESXi host esx-44.example (reboot needed: SR-IOV on vmnic4 is enabled, not active), then rdggen apply --target esxi and power on VM clx-mld-44"},
	} {
		r := result(t, rs, c.machine, c.check, c.subject)
		if r.Status != readiness.Failed || r.Found != c.found || r.Expected != c.expected || r.Fix != c.fix {
			t.Errorf("got  %s\nwant found %q; expected %q; fix %q", r.Line(), c.found, c.expected, c.fix)
		}
	}
	// The VM's settings were applied before the reboot; it runs.
	for _, c := range []string{esxiapply.CheckConfig, esxiapply.CheckPower} {
		if r := result(t, rs, vm, c, ""); r.Status != readiness.Passed {
			t.Errorf("%s", r.Line())
		}
	}

	// Follow the fixes: shut the VM down, reboot the host, apply, power on.
	ctx := context.Background()
	if err := e.sim.PowerOff(ctx, vm); err != nil {
		t.Fatal(err)
	}
	e.sim.Reboot(host)
	if res, out := e.apply(t, false); res.Err() != nil || res.VMsChanged != 1 {
		t.Fatalf("apply after the reboot: %s\n%s", res.Summary(), out)
	}
	if err := e.sim.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if bad := failed(e.check(t)); len(bad) != 0 {
		t.Errorf("after the fixes:\n%s", lines(bad))
	}
}

// Drift on a healthy cluster, each caught by its own check and nothing
// else: a 64-bit MMIO size edited by hand, a VM powered off, an SR-IOV
// adapter disconnected, a host with a pending reboot, a module parameter
// changed with esxcli.
func TestCheckDrift(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{NeedReboot: true})
	healthy(t, e)
	ctx := context.Background()
	e.sim.EditVM("clx-mld-43", func(vm *simulator.VirtualMachine) {
		for _, o := range vm.Config.ExtraConfig {
			if ov := o.GetOptionValue(); ov.Key == vmx.KeyMMIOSizeGB {
				ov.Value = "32"
			}
		}
	})
	if err := e.sim.PowerOff(ctx, "clx-mld-45"); err != nil {
		t.Fatal(err)
	}
	e.sim.EditVM("clx-mld-46", func(vm *simulator.VirtualMachine) {
		for _, d := range vm.Config.Hardware.Device {
			if card, ok := d.(*types.VirtualSriovEthernetCard); ok {
				card.Connectable.Connected = false
			}
		}
	})
	e.sim.SetRebootRequired("esx-47.example", true)
	e.sim.Modules.Preset("esx-48.example", vmx.NICModule, "max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=1 ecn=1")

	rs := e.check(t)
	want := []readiness.Result{
		readiness.Result{Target: readiness.TargetESXi, Machine: "clx-mld-43", Check: esxiapply.CheckConfig, Subject: vmx.KeyMMIOSizeGB, Status: readiness.Failed, Found: "32", Expected: "64", Fix: "shut down VM clx-mld-43, then rdggen apply --target esxi"},

		readiness.Result{Target: readiness.TargetESXi, Machine: "clx-mld-45", Check: esxiapply.CheckPower, Subject: "", Status: readiness.Failed, Found: "poweredOff", Expected: "poweredOn", Fix: "power on VM clx-mld-45"},
		readiness.Result{Target: readiness.TargetESXi, Machine: "clx-mld-46", Check: esxiapply.CheckDevices, Subject: "VF of vmnic4", Status: readiness.Failed, Found: "attached, not connected", Expected: "connected", Fix: "connect it: govc device.connect -vm clx-mld-46 "},

		readiness.Result{Target: readiness.TargetESXi, Machine: "esx-47.example", Check: esxiapply.CheckReboot, Subject: "", Status: readiness.Failed, Found: "reboot required (vCenter: summary.rebootRequired)", Expected: "no reboot pending", Fix: "reboot ESXi host esx-47.example (reboot needed: vCenter reports configuration changes that take effect at boot)"},

		readiness.Result{Target: readiness.TargetESXi, Machine: "esx-48.example", Check: esxiapply.CheckModuleParams, Subject: "nmlx5_core", Status: readiness.Failed, Found: `"max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=1 ecn=1"`, Expected: `"max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1"`, Fix: "rdggen apply --target esxi, then reboot ESXi host esx-48.example (module parameters take effect when the driver loads at boot)"},
	}
	bad := failed(rs)
	slices.SortFunc(bad, func(a, b readiness.Result) int { return strings.Compare(a.Machine, b.Machine) })
	// The device's name and label are vcsim's (govc names an SR-IOV adapter
	// by its unit number, which vcsim does not place as ESXi does).
	if len(bad) == len(want) && strings.HasPrefix(bad[2].Fix, want[2].Fix) && strings.Contains(bad[2].Fix, "→ Connected)") {
		want[2].Fix = bad[2].Fix
	}
	if fmt.Sprint(bad) != fmt.Sprint(want) {
		t.Errorf("failures:\n%s\nwant:\n%s", lines(bad), lines(want))
	}
	// The powered-off VM's devices are there; their connection is not judged.
	if r := result(t, rs, "clx-mld-45", esxiapply.CheckDevices, "0000:20:00.0"); r.Status != readiness.Passed || r.Found != "attached (VM not powered on: connection not checked)" {
		t.Errorf("%s", r.Line())
	}
}

// GPUDirect RDMA on the vSphere side: a VM whose peer-to-peer keys were
// turned off by hand fails p2p (and apply sets them back, then does
// nothing), one that has them in lower case ("true", as NVIDIA writes them)
// passes without a change; a GPU that the ESXi host lists on another NUMA
// node than the NIC fails numa, the one on the NIC's node passes, and a host
// that lists no devices per node gets no numa result at all.
func TestCheckP2PAndNUMA(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{NeedReboot: true})
	healthy(t, e)
	set := func(vm, key, value string) {
		e.sim.EditVM(vm, func(vm *simulator.VirtualMachine) {
			for _, o := range vm.Config.ExtraConfig {
				if ov := o.GetOptionValue(); ov.Key == key {
					ov.Value = value
				}
			}
		})
	}
	set("clx-mld-42", vmx.KeyAllowP2P, "FALSE")
	set("clx-mld-43", vmx.KeyAllowP2P, "true")
	set("clx-mld-43", vmx.KeyRelaxACSforP2P, "True")
	e.sim.SetNUMA("esx-41.example", map[string]int{}) // no devices listed
	e.sim.SetNUMA("esx-44.example", map[string]int{"0000:20:00.0": 0, "0000:21:00.0": 1, vcsimtest.PFAddress: 0})

	rs := e.check(t)
	want := []readiness.Result{
		readiness.Result{Target: readiness.TargetESXi, Machine: "clx-mld-42", Check: esxiapply.CheckP2P, Subject: vmx.KeyAllowP2P, Status: readiness.Failed, Found: "FALSE", Expected: "TRUE", Fix: "shut down VM clx-mld-42, then rdggen apply --target esxi"},

		readiness.Result{Target: readiness.TargetESXi, Machine: "clx-mld-44", Check: esxiapply.CheckNUMA, Subject: "0000:21:00.0", Status: readiness.Failed, Found: "GPU 0000:21:00.0 on NUMA node 1, NIC vmnic4 (0000:d8:00.0) on node 0", Expected: "the GPU on the NIC's NUMA node 0 (GPUDirect RDMA otherwise crosses the CPU interconnect)", Fix: "pass VM clx-mld-44 a GPU of NUMA node 0 (gpus[].pci in the inventory), or cable its data port to a NIC on node 1"},
	}
	if bad := failed(rs); fmt.Sprint(bad) != fmt.Sprint(want) {
		t.Errorf("failures:\n%s\nwant:\n%s", lines(bad), lines(want))
	}
	if r := result(t, rs, "clx-mld-44", esxiapply.CheckNUMA, "0000:20:00.0"); r.Status != readiness.Passed ||
		r.Found != "GPU 0000:20:00.0 on NUMA node 0, NIC vmnic4 (0000:d8:00.0) on node 0" {
		t.Errorf("%s", r.Line())
	}
	if r := result(t, rs, "clx-mld-43", esxiapply.CheckP2P, ""); r.Status != readiness.Passed {
		t.Errorf("lower-case true: %s", r.Line())
	}
	for _, r := range rs {
		if r.Check == esxiapply.CheckNUMA && r.Machine != "clx-mld-44" {
			t.Errorf("a numa result where the host lists no devices per node: %s", r.Line())
		}
	}

	// Apply sets the key back on the powered-off VM and changes nothing else.
	ctx := context.Background()
	if err := e.sim.PowerOff(ctx, "clx-mld-42"); err != nil {
		t.Fatal(err)
	}
	res, out := e.apply(t, false)
	if res.Err() != nil || !strings.Contains(out, "pciPassthru.allowP2P: FALSE → TRUE") || strings.Contains(out, "RelaxACSforP2P") {
		t.Fatalf("apply: %v\n%s", res.Err(), out)
	}
	if res, out := e.apply(t, true); res.Err() != nil || !strings.Contains(out, "already match the inventory") {
		t.Errorf("second apply: %v\n%s", res.Err(), out)
	}
}

// Hosts and VMs vCenter lacks, a host whose PF has no SR-IOV and a host
// whose module parameters cannot be read, on a cluster never applied.
func TestCheckMissingBlockedUnreadable(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{
		SkipVMs:   []string{"clx-mld-44"},
		SkipHosts: []string{"esx-45.example"},
		NoSRIOV:   []string{"esx-42.example"},
	})
	e.sim.Modules.Fail("esx-43.example", errors.New("connection reset"))
	rs := e.check(t)

	for _, c := range []struct{ machine, check, subject, found, expected, fix string }{
		{"esx-45.example", esxiapply.CheckExists, "", "not in vCenter", "ESXi host esx-45.example in vCenter",
			"add ESXi host esx-45.example to vCenter, or correct esxi in the inventory (it must be the name vCenter shows)"},
		{"clx-mld-45", esxiapply.CheckExists, "", "not in vCenter", "VM clx-mld-45 on ESXi host esx-45.example",
			"create VM clx-mld-45 on ESXi host esx-45.example, or correct vm (default: name) of clx-mld-45 in the inventory"},
		{"clx-mld-44", esxiapply.CheckExists, "", "not in vCenter", "VM clx-mld-44 on ESXi host esx-44.example",
			"create VM clx-mld-44 on ESXi host esx-44.example, or correct vm (default: name) of clx-mld-44 in the inventory"},
		{"esx-42.example", esxiapply.CheckNIC, "vmnic4",
			"vmnic4 (0000:d8:00.0) is not SR-IOV capable (enable SR-IOV in the BIOS and the NIC firmware)", "SR-IOV capable",
			"enable SR-IOV in the BIOS of ESXi host esx-42.example and in the NIC firmware (mlxconfig SRIOV_EN=1 NUM_OF_VFS>=8), then reboot it"},
		{"clx-mld-42", esxiapply.CheckDevices, "VF of vmnic4", "not attached", "attached",
			"first fix the NIC of ESXi host esx-42.example (its nic check): enable SR-IOV in the BIOS of ESXi host esx-42.example and in the NIC firmware (mlxconfig SRIOV_EN=1 NUM_OF_VFS>=8), then reboot it"},
		{"esx-41.example", esxiapply.CheckPassthrough, "0000:20:00.0", "disabled", "enabled, active", "rdggen apply --target esxi"},
		{"esx-41.example", esxiapply.CheckSRIOV, vcsimtest.PFAddress, "disabled", "enabled, 8 VFs",
			"rdggen apply --target esxi, then reboot ESXi host esx-41.example (the VF count takes effect at boot)"},
		{"esx-41.example", esxiapply.CheckModuleParams, "nmlx5_core", "(none)", `"max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1"`,
			"rdggen apply --target esxi, then reboot ESXi host esx-41.example (module parameters take effect when the driver loads at boot)"},
		{"clx-mld-41", esxiapply.CheckConfig, "firmware", "bios", "efi", "rdggen apply --target esxi"},
		{"clx-mld-41", esxiapply.CheckConfig, "memory reservation", "0 MB", "16384 MB (locked)", "rdggen apply --target esxi"},
		{"clx-mld-41", esxiapply.CheckPower, "", "poweredOff", "poweredOn", "rdggen apply --target esxi, then power on VM clx-mld-41"},
		{"clx-mld-41", esxiapply.CheckDevices, "0000:20:00.0", "not attached", "attached", "rdggen apply --target esxi"},
	} {
		r := result(t, rs, c.machine, c.check, c.subject)
		if r.Status != readiness.Failed || r.Found != c.found || r.Expected != c.expected || r.Fix != c.fix {
			t.Errorf("got  %s\nwant found %q; expected %q; fix %q", r.Line(), c.found, c.expected, c.fix)
		}
	}
	// Missing machines have no other results; the blocked host still
	// checks its GPUs and reboot, not its NIC settings.
	for _, m := range []string{"esx-45.example", "clx-mld-45", "clx-mld-44"} {
		n := 0
		for _, r := range rs {
			if r.Machine == m {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d results, want 1", m, n)
		}
	}
	var got []string
	for _, r := range rs {
		if r.Machine == "esx-42.example" {
			got = append(got, r.Check+" "+r.Subject)
		}
	}
	if want := "nic vmnic4|passthrough 0000:20:00.0|passthrough 0000:21:00.0|reboot "; strings.Join(got, "|") != want {
		t.Errorf("esx-42 checks %q, want %q", strings.Join(got, "|"), want)
	}
	// The unreadable parameters are Unknown; the host's other checks run.
	if r := result(t, rs, "esx-43.example", esxiapply.CheckModuleParams, "nmlx5_core"); r.Status != readiness.Unknown ||
		r.Found != "read nmlx5_core parameters: QueryConfiguredModuleOptionString: ServerFaultCode: connection reset" {
		t.Errorf("%s", r.Line())
	}
	if r := result(t, rs, "esx-43.example", esxiapply.CheckSRIOV, vcsimtest.PFAddress); r.Status != readiness.Failed {
		t.Errorf("%s", r.Line())
	}
}

// The MTU of the vSwitch that carries the PF against a jumbo data_mtu:
// failed before apply, passed after.
func TestCheckMTU(t *testing.T) {
	t.Parallel()
	e := newEnv(t, jumbo(t), vcsimtest.Options{})
	r := result(t, e.check(t), "esx-41.example", esxiapply.CheckMTU, "vSwitch vSwitch1")
	if r.Status != readiness.Failed || r.Found != "1500" || r.Expected != "at least 9000 (data_mtu)" || r.Fix != esxiapply.FixApply {
		t.Errorf("before apply: %s", r.Line())
	}
	if res, out := e.apply(t, false); res.Err() != nil {
		t.Fatalf("%v\n%s", res.Err(), out)
	}
	if r := result(t, e.check(t), "esx-41.example", esxiapply.CheckMTU, "vSwitch vSwitch1"); r.Status != readiness.Passed || r.Found != "9000" {
		t.Errorf("after apply: %s", r.Line())
	}
}
