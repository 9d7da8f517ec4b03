package esxiapply_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// matchedParams is what apply sets on a reference host with one nmlx5_core
// port: preset, the parameters need no change (and no reboot).
const matchedParams = "max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1"

// rebootLines are the "reboot needed" lines of an apply's output.
func rebootLines(out string) []string {
	var l []string
	for _, s := range strings.Split(out, "\n") {
		if strings.HasPrefix(s, "reboot needed: ") {
			l = append(l, s)
		}
	}
	return l
}

// TestRebootOnlyWhatIsPending: after the push, apply reads each host again
// and says "reboot needed" only for what is still pending. esx-41's
// parameters already match and its SR-IOV and passthrough become active at
// once: no reboot line. esx-42 is the same but vCenter reports
// summary.rebootRequired: its line gives that reason. The other hosts
// activate their devices at once too, so only their nmlx5_core parameters
// (read by the driver at boot) wait for a reboot.
func TestRebootOnlyWhatIsPending(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{})
	e.sim.Modules.Preset("esx-41.example", vmx.NICModule, matchedParams)
	e.sim.Modules.Preset("esx-42.example", vmx.NICModule, matchedParams)
	e.sim.SetRebootRequired("esx-42.example", true)

	res, out := e.apply(t, false)
	if err := res.Err(); err != nil || res.HostsChanged != 8 || res.VMsChanged != 8 || res.VMsWaiting != 0 {
		t.Fatalf("apply: %v: %s\n%s", err, res.Summary(), out)
	}
	want := []string{"reboot needed: esx-42.example (vCenter reports configuration changes that take effect at boot)"}
	for _, h := range inv.ESXiHosts()[2:] {
		want = append(want, "reboot needed: "+h+" (nmlx5_core parameters)")
	}
	if got := rebootLines(out); !slices.Equal(got, want) {
		t.Errorf("reboot lines:\n%s\nwant:\n%s\noutput:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
	if s := res.Summary(); !strings.HasSuffix(s, "; reboot needed: 7 ESXi hosts (listed above)") {
		t.Errorf("summary: %s", s)
	}
	for _, m := range res.Machines {
		if m.Kind != applyplan.KindESXiHost {
			continue
		}
		var notes []string
		for _, n := range m.Notes {
			if strings.HasPrefix(n, "reboot needed") {
				notes = append(notes, n)
			}
		}
		switch m.Name {
		case "esx-41.example":
			if len(notes) != 0 {
				t.Errorf("%s: notes %q, want no reboot", m.Name, notes)
			}
		case "esx-42.example":
		default:
			if !slices.Equal(notes, []string{"reboot needed: nmlx5_core parameters"}) {
				t.Errorf("%s: notes %q", m.Name, notes)
			}
		}
	}
}

// TestRebootPendingDevice: esx-41 keeps SR-IOV and passthrough inactive until
// it reboots (summary.rebootRequired true), the others activate them at
// once. All parameters already match, so only esx-41 needs a reboot, for
// both devices, and its VM waits for them.
func TestRebootPendingDevice(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{NeedRebootHosts: []string{"esx-41.example"}})
	for _, h := range inv.ESXiHosts() {
		e.sim.Modules.Preset(h, vmx.NICModule, matchedParams)
	}

	res, out := e.apply(t, false)
	if err := res.Err(); err != nil || res.HostsChanged != 8 || res.VMsWaiting != 1 {
		t.Fatalf("apply: %v: %s\n%s", err, res.Summary(), out)
	}
	const why = "esx-41.example (SR-IOV (vmnic4: not active yet), GPU passthrough (0000:20:00.0, 0000:21:00.0: not active yet))"
	want := []string{"reboot needed: " + why}
	if got := rebootLines(out); !slices.Equal(got, want) {
		t.Errorf("reboot lines %q, want %q\n%s", got, want, out)
	}
	if !slices.Equal(res.Reboot, []string{why}) {
		t.Errorf("Result.Reboot %q", res.Reboot)
	}
	if !strings.Contains(out, "not now: vm clx-mld-41: add GPU gpus[0] V100-PCIE-16GB: 0000:20:00.0 NVIDIA V100-PCIE-16GB (10de:1db4): after ESXi host esx-41.example reboots (passthrough enabled, not active yet)") {
		t.Errorf("esx-41's VM does not wait for its GPU:\n%s", out)
	}

	// After the reboot the devices go in and nothing is pending.
	e.sim.Reboot("esx-41.example")
	res, out = e.apply(t, false)
	if res.Err() != nil || res.VMsChanged != 1 || len(res.Reboot) != 0 || len(rebootLines(out)) != 0 {
		t.Errorf("apply after the reboot: %s\n%s", res.Summary(), out)
	}
}

// TestRebootNamesPendingDevices: a host of four rails that keeps SR-IOV and
// passthrough changes for its reboot, where some devices were set and
// activated earlier. vmnic2's SR-IOV (4 VFs) and six of the eight GPUs the
// pairing picks are active already; vmnic4 has SR-IOV active with 2 VFs.
// The apply enables vmnic3 and vmnic5, raises vmnic4 to 4 VFs and switches
// on the last two GPUs: the host's reason names those devices and what each
// waits for, after the push and in the apply before the reboot alike
// (naming nothing of what is active); after the reboot nothing is pending.
func TestRebootNamesPendingDevices(t *testing.T) {
	t.Parallel()
	esxi := "esx-0.example"
	inv := railsInv(t, []string{esxi}, railPFs, make([]string, 8))
	e := newEnv(t, inv, vcsimtest.Options{PCITrees: map[string]vcsimtest.PCITree{esxi: railTrees()[esxi]},
		NeedRebootHosts: []string{esxi}})
	pci := map[string]string{}
	for _, pn := range e.sim.Host(esxi).Config.Network.Pnic {
		pci[pn.Device] = pn.Pci
	}
	sriov := func(vmnic string, vfs int32) types.BaseHostPciPassthruConfig {
		return &types.HostSriovConfig{HostPciPassthruConfig: types.HostPciPassthruConfig{Id: pci[vmnic]}, SriovEnabled: true, NumVirtualFunction: vfs}
	}
	cfg := []types.BaseHostPciPassthruConfig{sriov("vmnic2", 4), sriov("vmnic4", 2)}
	for _, id := range []string{"0000:13:00.0", "0000:14:00.0", "0000:19:00.0", "0000:1a:00.0", "0000:8b:00.0", "0000:8c:00.0"} {
		cfg = append(cfg, &types.HostPciPassthruConfig{Id: id, PassthruEnabled: true})
	}
	e.updatePassthru(t, esxi, cfg...)
	e.sim.Reboot(esxi)

	const why = "SR-IOV (vmnic3, vmnic5: not active yet; vmnic4: 2 of 4 VFs active), GPU passthrough (0000:91:00.0, 0000:92:00.0: not active yet), nmlx5_core parameters"
	res, out := e.apply(t, false)
	if err := res.Err(); err != nil || res.HostsChanged != 1 || res.VMsWaiting != 1 {
		t.Fatalf("apply: %v: %s\n%s", err, res.Summary(), out)
	}
	wantLines(t, "apply", out,
		"  SR-IOV on vmnic3 (0000:1b:00.0): disabled → enabled, 4 VFs",
		"  SR-IOV on vmnic4 (0000:8d:00.0): enabled, 2 VFs → enabled, 4 VFs",
		"  passthrough of GPU 0000:91:00.0 (h0 gpus[6] H100-PCIE-80GB): off → on",
		"reboot needed: "+esxi+" ("+why+")")
	if !slices.Equal(res.Reboot, []string{esxi + " (" + why + ")"}) {
		t.Errorf("Result.Reboot %q", res.Reboot)
	}
	if s := res.Summary(); !strings.Contains(s, "; reboot needed: "+esxi+" ("+why+"); 1 VM(s) get their passthrough devices") {
		t.Errorf("summary: %s", s)
	}
	hostNotes := func(res *esxiapply.Result) []string {
		for _, m := range res.Machines {
			if m.Kind == applyplan.KindESXiHost {
				return m.Notes
			}
		}
		return nil
	}
	if n := hostNotes(res); !slices.Contains(n, "reboot needed: "+why) {
		t.Errorf("host notes %q", n)
	}

	// The apply before the reboot sends nothing and reads the same devices
	// waiting (the parameters it set are not pending to its eyes: the API
	// reports the configured string only).
	res, out = e.apply(t, false)
	const whyBefore = "SR-IOV (vmnic3, vmnic5: not active yet; vmnic4: 2 of 4 VFs active), GPU passthrough (0000:91:00.0, 0000:92:00.0: not active yet)"
	if res.Err() != nil || res.HostsChanged != 0 || res.VMsWaiting != 1 || !slices.Equal(res.Reboot, []string{esxi + " (" + whyBefore + ")"}) {
		t.Errorf("apply before the reboot: Reboot %q: %s\n%s", res.Reboot, res.Summary(), out)
	}

	e.sim.Reboot(esxi)
	res, out = e.apply(t, false)
	if res.Err() != nil || res.VMsChanged != 1 || len(res.Reboot) != 0 || len(rebootLines(out)) != 0 {
		t.Errorf("apply after the reboot: %s\n%s", res.Summary(), out)
	}
}
