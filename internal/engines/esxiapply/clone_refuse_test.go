package esxiapply_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/cloudinit"
)

// A clone onto an ESXi host whose SR-IOV becomes active only after the
// host's reboot: the clone is made and configured, and its first boot
// (whose network config matches the VF's MAC) waits for the reboot and
// says so, not "first boot FAILED"; after the reboot the next apply
// attaches the VF and boots it.
func TestCloneWaitsForHostReboot(t *testing.T) {
	t.Parallel()
	inv := templated(t)
	e := newEnv(t, inv, vcsimtest.Options{SkipVMs: allVMs(inv, "clx-mld-41", "clx-mld-42", "clx-mld-43", "clx-mld-44", "clx-mld-45", "clx-mld-46", "clx-mld-47"),
		Templates: templates, NeedReboot: true})
	res, out := e.applyWith(t, esxiapply.Options{ToolsTimeout: 2 * time.Second})
	if strings.Contains(out, "FAILED") || res.Err() != nil {
		t.Errorf("a clone waiting for its host's reboot failed: %s\n%s", res.Summary(), out)
	}
	for _, want := range []string{
		"vm clx-mld-48: cloned from ubuntu-gpu-efi onto esx-48.example",
		"vm clx-mld-48: first boot waits for ESXi host esx-48.example's reboot: its SR-IOV adapter (whose MAC the cloud-init network config matches) is attached at the first apply after it; not powered on",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	vm := e.readAll(t)["clx-mld-48"]
	if vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
		t.Errorf("clx-mld-48 is %s before its host's reboot", vm.Runtime.PowerState)
	}
	e.sim.Reboot("esx-48.example")
	res, out = e.applyWith(t, esxiapply.Options{ToolsTimeout: 2 * time.Second})
	if res.Err() != nil || strings.Contains(out, "FAILED") {
		t.Fatalf("after the reboot: %s\n%s", res.Summary(), out)
	}
	e.checkClone(t, e.readAll(t)["clx-mld-48"], &inv.Hosts[7])
}

// Two clones rdggen refuses, with the reason, while the others are made:
// one whose template.name is a running VM (a hot clone is a crash-consistent
// copy of disks being written), and one whose host's mgmt is a static
// address (the clone's management NIC gets its address by DHCP on a MAC
// vCenter assigns at the clone). Nothing is cloned from the running VM,
// and it stays on.
func TestCloneRefusals(t *testing.T) {
	t.Parallel()
	inv := templated(t, "  - name: clx-mld-42\n    esxi: esx-42.example\n", "  - name: clx-mld-42\n    esxi: esx-42.example\n    template: {name: gpu-vm-running}\n",
		"  - name: clx-mld-43\n    esxi: esx-43.example\n", "  - name: clx-mld-43\n    esxi: esx-43.example\n    mgmt: 10.0.0.43\n")
	e := newEnv(t, inv, vcsimtest.Options{SkipVMs: allVMs(inv, "clx-mld-41"),
		Templates: append(templates[:1:1], vcsimtest.Template{Name: "gpu-vm-running", Firmware: "efi", Version: "vmx-21", PoweredOn: true})})
	res, out := e.applyWith(t, esxiapply.Options{ToolsTimeout: 2 * time.Second})
	want := []string{
		`vm clx-mld-42: "gpu-vm-running" is a VM that is poweredOn, not a template or a powered-off VM: cloning it would copy its disks while its guest writes them (a crash-consistent copy, file systems mid-write, in every clone), so rdggen does not clone it`,
		"vm clx-mld-43: mgmt 10.0.0.43 is a static address, but the clone's management interface eno0 gets its address by DHCP (rdggen's cloud-init network config without template.mgmt_prefix), on a MAC vCenter assigns at the clone, so no DHCP reservation can hold 10.0.0.43 for it yet: rdggen apply --target hosts would connect to an address the clone never gets, so rdggen does not clone it",
	}
	if strings.Join(res.Failed, "\n") != strings.Join(want, "\n") {
		t.Errorf("failures:\n%s\nwant:\n%s\n%s", strings.Join(res.Failed, "\n"), strings.Join(want, "\n"), out)
	}
	if n := e.sim.CloneCalls(); n != 5 { // 44–48
		t.Errorf("%d clone calls, want 5", n)
	}
	vms := e.readAll(t)
	if vm := vms["gpu-vm-running"]; vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
		t.Errorf("the running VM is %s", vm.Runtime.PowerState)
	}
	for _, name := range []string{"clx-mld-42", "clx-mld-43"} {
		if _, ok := vms[name]; ok {
			t.Errorf("%s was cloned", name)
		}
	}
	e.checkClone(t, vms["clx-mld-44"], &inv.Hosts[3])
}

// With template.mgmt_prefix (and mgmt_gateway, mgmt_dns), a host whose mgmt
// is a static address is cloned, and its cloud-init network config in
// guestinfo.metadata gives the management interface that address, the
// default route and the name servers, matched by the MAC vCenter assigned;
// a host whose mgmt is a name keeps DHCP.
func TestCloneStaticMgmt(t *testing.T) {
	t.Parallel()
	inv := templated(t, "ssh_keys: [", "mgmt_prefix: 24, mgmt_gateway: 10.0.0.1, mgmt_dns: [10.0.0.2], ssh_keys: [",
		"  - name: clx-mld-43\n    esxi: esx-43.example\n", "  - name: clx-mld-43\n    esxi: esx-43.example\n    mgmt: 10.0.0.43\n")
	e := newEnv(t, inv, vcsimtest.Options{SkipVMs: allVMs(inv, "clx-mld-41"), Templates: templates})
	res, out := e.applyWith(t, esxiapply.Options{ToolsTimeout: 2 * time.Second})
	if res.Err() != nil || strings.Contains(out, "FAILED") {
		t.Fatalf("apply: %s\n%s", res.Summary(), out)
	}
	if !strings.Contains(out, "first boot: cloud-init identity in guestinfo (hostname clx-mld-43, eno0 10.0.0.43/24 via 10.0.0.1, enp1f0 31.31.31.43/24") {
		t.Errorf("the plan does not show the static management address:\n%s", out)
	}
	vms := e.readAll(t)
	meta := func(name string) string {
		for _, o := range vms[name].Config.ExtraConfig {
			if ov := o.GetOptionValue(); ov.Key == cloudinit.KeyMetadata {
				return gunzip(t, ov.Value.(string))
			}
		}
		t.Fatalf("%s: no %s", name, cloudinit.KeyMetadata)
		return ""
	}
	m43 := meta("clx-mld-43")
	for _, want := range []string{"      dhcp4: false\n      addresses:\n        - 10.0.0.43/24\n      routes:\n        - to: 0.0.0.0/0\n          via: 10.0.0.1\n      nameservers:\n        addresses:\n          - 10.0.0.2\n"} {
		if !strings.Contains(m43, want) {
			t.Errorf("clx-mld-43's metadata lacks %q:\n%s", want, m43)
		}
	}
	if m44 := meta("clx-mld-44"); !strings.Contains(m44, "      dhcp4: true\n") || strings.Contains(m44, "0.0.0.0/0") {
		t.Errorf("clx-mld-44 (mgmt a name) is not DHCP:\n%s", m44)
	}
	e.checkClone(t, vms["clx-mld-43"], &inv.Hosts[2])
}
