package esxiapply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/internal/vcenter"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// TestApplyFailuresLeaveOthersApplied: a powered-on VM, a missing VM, a missing
// host, a GPU in use by another VM and an ambiguous GPU choice each fail with a
// clear message, and every other VM is applied.
func TestApplyFailuresLeaveOthersApplied(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{
		SkipVMs:   []string{"clx-mld-44"},
		SkipHosts: []string{"esx-45.example"},
		ExtraGPUs: map[string]int{"esx-47.example": 1},
	})
	ctx := context.Background()
	if err := e.sim.PowerOn(ctx, "clx-mld-43"); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.AddVM(ctx, "intruder", "esx-46.example", e.sim.GPUs("esx-46.example")[0]); err != nil {
		t.Fatal(err)
	}
	res, out := e.apply(t, false)
	err := res.Err()
	if err == nil {
		t.Fatalf("apply reported no failure:\n%s", out)
	}
	msg := err.Error()
	for _, want := range []string{
		"vm clx-mld-43: VM clx-mld-43 is poweredOn; these changes need it powered off: firmware: bios → efi",
		"rdggen does not power VMs off",
		"vm clx-mld-44: VM clx-mld-44 not found in vCenter",
		"host esx-45.example: ESXi host esx-45.example not found in vCenter",
		"vm clx-mld-46: needs 2 more V100-PCIE-16GB on ESXi host esx-46.example but 1 are free: GPU 0000:20:00.0 is passed through to VM intruder",
		"vm clx-mld-47: GPUs without a pci address: 3 V100-PCIE-16GB on ESXi host esx-47.example are free for 2 GPU(s)",
		"set gpus[].pci in the inventory",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if len(res.Failed) != 5 || res.VMsChanged != 3 {
		t.Errorf("want 5 failures and 3 VMs applied: %s", res.Summary())
	}
	vms := e.readVMs(t)
	for _, name := range []string{"clx-mld-41", "clx-mld-42", "clx-mld-48"} {
		for i := range inv.Hosts {
			if inv.Hosts[i].VM == name {
				e.checkVM(t, vms[name], &inv.Hosts[i])
			}
		}
	}
	if vms["clx-mld-43"].Config.Firmware != "bios" {
		t.Error("the powered-on VM was changed")
	}
	if n := strings.Count(out, "clx-mld-43 is poweredOn"); n != 1 || !strings.Contains(out, "vm clx-mld-43: cannot apply: VM clx-mld-43 is poweredOn") {
		t.Errorf("output reports the failure %d times, want once as \"cannot apply\":\n%s", n, out)
	}
	if n := strings.Count(out, "ESXi host esx-45.example not found"); n != 1 {
		t.Errorf("output reports the missing host %d times, want once:\n%s", n, out)
	}
}

// TestApplySharedHosts: several VMs per ESXi host with explicit GPU
// addresses; one host-side change per host, a no-op second run.
func TestApplySharedHosts(t *testing.T) {
	t.Parallel()
	inv, err := vcsimtest.Inventory(2, 4)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, inv, vcsimtest.Options{})
	res, out := e.apply(t, false)
	if res.Err() != nil || res.VMsChanged != 8 || res.HostsChanged != 2 {
		t.Fatalf("%s\n%s", res.Summary(), out)
	}
	if n := e.counter.Count("UpdatePassthruConfig"); n != 2 {
		t.Errorf("%d UpdatePassthruConfig calls, want one per host", n)
	}
	vms := e.readVMs(t)
	for i := range inv.Hosts {
		e.checkVM(t, vms[inv.Hosts[i].VM], &inv.Hosts[i])
	}
	e.counter.Reset()
	res, _ = e.apply(t, false)
	if res.VMsChanged != 0 || e.counter.Count("ReconfigVM_Task") != 0 {
		t.Errorf("second apply: %s (%s)", res.Summary(), e.counter)
	}
}

// TestModuleParamsKeepOthers: parameters rdggen does not manage survive, and
// all of ours go in one Set.
func TestModuleParamsKeepOthers(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{})
	e.sim.Modules.Preset("esx-41.example", "nmlx5_core", "DRSS=4 max_vfs=2")
	res, _ := e.apply(t, false)
	if res.Err() != nil {
		t.Fatal(res.Err())
	}
	if got, want := e.sim.Modules.Params("esx-41.example", "nmlx5_core"), "DRSS=4 max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1"; got != want {
		t.Errorf("params %q, want %q", got, want)
	}
	if _, sets := e.sim.Modules.Calls(); sets != 8 {
		t.Errorf("%d module parameter sets, want one per host", sets)
	}
}

func TestConnectErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, inventory.Reference(), vcsimtest.Options{})
	ctx := context.Background()

	bad := e.config()
	bad.Password = "wrong"
	_, err := vcenter.Connect(ctx, bad, 2, nil)
	if err == nil || !strings.Contains(err.Error(), "incorrect user name or password") {
		t.Errorf("wrong password: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong") {
		t.Errorf("the password leaks into the error: %v", err)
	}

	untrusted := e.config()
	untrusted.CACerts = ""
	_, err = vcenter.Connect(ctx, untrusted, 2, nil)
	if err == nil || !strings.Contains(err.Error(), "TLS certificate is not trusted") || !strings.Contains(err.Error(), "GOVC_TLS_CA_CERTS") {
		t.Errorf("untrusted certificate: %v", err)
	}

	optOut := untrusted
	optOut.Insecure = true
	s, err := vcenter.Connect(ctx, optOut, 2, nil)
	if err != nil {
		t.Errorf("explicit GOVC_INSECURE: %v", err)
	} else {
		s.Logout(ctx)
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	inv.VCenter = "https://vcenter.example/sdk"
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	cfg, err := vcenter.ConfigFromEnv(inv, getenv, "", false)
	if err != nil || cfg.URL.String() != "https://vcenter.example/sdk" || cfg.Insecure || cfg.Source != "inventory vcenter" {
		t.Errorf("inventory: %+v %v", cfg, err)
	}
	env["GOVC_URL"] = "admin:pw-from-url@vc2.example"
	env["GOVC_PASSWORD"] = "pw-from-env"
	env["GOVC_TLS_CA_CERTS"] = "/etc/ca.pem"
	cfg, err = vcenter.ConfigFromEnv(inv, getenv, "", false)
	if err != nil || cfg.URL.Host != "vc2.example" || cfg.Username != "admin" || cfg.Password != "pw-from-env" || cfg.CACerts != "/etc/ca.pem" {
		t.Errorf("GOVC_URL: %+v %v", cfg, err)
	}
	if s := cfg.String(); strings.Contains(s, "pw-from") {
		t.Errorf("String shows the password: %s", s)
	}
	env["GOVC_INSECURE"] = "1"
	if cfg, _ := vcenter.ConfigFromEnv(inv, getenv, "", false); !cfg.Insecure {
		t.Error("GOVC_INSECURE=1 ignored")
	}
	env["GOVC_INSECURE"] = "maybe"
	if _, err := vcenter.ConfigFromEnv(inv, getenv, "", false); err == nil {
		t.Error("GOVC_INSECURE=maybe accepted")
	}
	inv.VCenter = ""
	if _, err := vcenter.ConfigFromEnv(inv, func(string) string { return "" }, "", false); err == nil {
		t.Error("no vCenter accepted")
	}
	// One grammar (inventory.ParseVCenterURL) for the flag, GOVC_URL and
	// the inventory; credentials only in GOVC_URL.
	for _, tc := range []struct {
		flag, env, want string
	}{
		{"ftp://vc.example", "", `--vcenter: "ftp://vc.example": a vCenter URL is https:// (or http://), not ftp://`},
		{"https://root:s3cret@vc.example/sdk", "", "--vcenter: must not carry credentials; set GOVC_USERNAME and GOVC_PASSWORD instead"},
		{"", "ftp://vc.example", `GOVC_URL: "ftp://vc.example": a vCenter URL is https:// (or http://), not ftp://`},
		{"", "https://u:s3cret@vc.example:0/sdk", `GOVC_URL: "https://xxxxx@vc.example:0/sdk": vc.example:0 is not a host name`},
	} {
		env := map[string]string{"GOVC_URL": tc.env}
		_, err := vcenter.ConfigFromEnv(inv, func(k string) string { return env[k] }, tc.flag, false)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("--vcenter %q, GOVC_URL %q: %v\nwant %s", tc.flag, tc.env, err, tc.want)
		}
	}
}

// A host whose nmlx5_core parameters cannot be read fails with its VMs; the
// other hosts and VMs are applied.
func TestModuleParamsReadFailure(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{})
	e.sim.Modules.Fail("esx-44.example", errors.New("connection reset"))
	res, out := e.apply(t, false)
	want := "host esx-44.example: read nmlx5_core parameters: QueryConfiguredModuleOptionString: ServerFaultCode: connection reset"
	if len(res.Failed) != 1 || res.Failed[0] != want || res.VMsChanged != 7 || res.HostsChanged != 7 {
		t.Fatalf("want only %q, 7 VMs and 7 hosts applied: %v: %s\n%s", want, res.Failed, res.Summary(), out)
	}
	if n := e.counter.Count("UpdatePassthruConfig"); n != 7 {
		t.Errorf("%d UpdatePassthruConfig, want 7 (not on the failed host)", n)
	}
	vms := e.readVMs(t)
	if vms["clx-mld-44"].Config.Firmware != "bios" {
		t.Error("a VM of the failed host was changed")
	}
}

// TestBlockedHostShowsItsVMs: an ESXi host whose PF is not SR-IOV capable
// fails, but its VMs are planned and applied except for the SR-IOV adapter,
// which is listed as waiting on that host's problem; the dry run shows it
// all and the JSON machines say which VM waits on which host.
func TestBlockedHostShowsItsVMs(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{NoSRIOV: []string{"esx-42.example", "esx-43.example"}})
	res, out := e.apply(t, true)
	for _, want := range []string{
		"host esx-42.example: cannot apply its NIC settings (SR-IOV, MTU, nmlx5_core): vmnic4 (0000:d8:00.0) is not SR-IOV capable",
		"host esx-42.example: its other changes:\n  passthrough of GPU 0000:20:00.0 (clx-mld-42 gpus[0] V100-PCIE-16GB): off → on",
		"vm clx-mld-42 (esx-42.example):\n  firmware: bios → efi",
		`  not now: SR-IOV adapter (VF of ConnectX-5 vmnic4, port group "VM Network"): waits on ESXi host esx-42.example: vmnic4 (0000:d8:00.0) is not SR-IOV capable`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if res.VMsChanged != 8 || res.VMsBlocked != 2 || len(res.Failed) != 2 {
		t.Errorf("dry run: want 8 VMs to change, 2 blocked, 2 hosts failed: %s", res.Summary())
	}
	if s := res.Summary(); !strings.Contains(s, "8 VM(s) and 6 host(s) to change") || !strings.Contains(s, "2 VM(s) wait on their ESXi host's NIC problem") {
		t.Errorf("summary: %s", s)
	}
	var vm42 *applyplan.Machine
	for i, m := range res.Machines {
		if m.Name == "clx-mld-42" {
			vm42 = &res.Machines[i]
		}
		if m.Name == "esx-42.example" && (m.Status != applyplan.Failed || !strings.Contains(m.Error, "not SR-IOV capable")) {
			t.Errorf("host machine: %+v", m)
		}
	}
	if vm42 == nil || vm42.Status != applyplan.Blocked || vm42.BlockedBy != "esxi-host esx-42.example" || len(vm42.Changes) == 0 || len(vm42.Waiting) != 1 {
		t.Fatalf("vm machine: %+v", vm42)
	}

	res, out = e.apply(t, false)
	if res.VMsChanged != 8 || res.HostsChanged != 8 || len(res.Failed) != 2 || !strings.Contains(out, "host esx-42.example: changed, 2 change(s); its NIC settings wait on its problem") {
		t.Errorf("apply: want all 8 VMs and 8 hosts changed (2 without their NIC settings), 2 failed: %s\n%s", res.Summary(), out)
	}
	vms := e.readVMs(t)
	if fw := vms["clx-mld-42"].Config.Firmware; fw != "efi" {
		t.Errorf("the blocked host's VM kept firmware %s", fw)
	}
	for _, d := range vms["clx-mld-42"].Config.Hardware.Device {
		if _, ok := d.(*types.VirtualSriovEthernetCard); ok {
			t.Error("an SR-IOV adapter was added on a host without SR-IOV")
		}
	}
}
