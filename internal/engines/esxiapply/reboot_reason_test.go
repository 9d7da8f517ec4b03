package esxiapply

import (
	"fmt"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

// The reboot reason's text: devices grouped by what they wait for, this
// apply's changes alone give the kind alone (the plan's change lines name
// them), more than gpusNamed GPUs of one state are counted.
func TestDeviceReason(t *testing.T) {
	gpus := func(n int, state string) []devWait {
		var w []devWait
		for i := range n {
			w = append(w, devWait{fmt.Sprintf("0000:%02x:00.0", 0x20+i), state})
		}
		return w
	}
	for _, c := range []struct {
		kind  string
		waits []devWait
		named int
		want  string
	}{
		{whySRIOV, nil, 0, ""},
		{whySRIOV, []devWait{{"vmnic2", setNow}, {"vmnic3", setNow}}, 0, "SR-IOV"},
		{whySRIOV, []devWait{{"vmnic2", setNow}, {"vmnic3", "not active yet"}}, 0, "SR-IOV (vmnic2: set by this apply; vmnic3: not active yet)"},
		{whySRIOV, []devWait{{"vmnic2", "not active yet"}, {"vmnic4", "2 of 4 VFs active"}, {"vmnic5", "not active yet"}}, 0,
			"SR-IOV (vmnic2, vmnic5: not active yet; vmnic4: 2 of 4 VFs active)"},
		{whyGPU, gpus(4, "not active yet"), gpusNamed, "GPU passthrough (0000:20:00.0, 0000:21:00.0, 0000:22:00.0, 0000:23:00.0: not active yet)"},
		{whyGPU, append(gpus(8, "not active yet"), devWait{"0000:99:00.0", "not listed by the host"}), gpusNamed,
			"GPU passthrough (8 GPUs: not active yet; 0000:99:00.0: not listed by the host)"},
	} {
		if got := deviceReason(c.kind, c.waits, c.named, "GPUs"); got != c.want {
			t.Errorf("deviceReason(%s, %v) = %q, want %q", c.kind, c.waits, got, c.want)
		}
	}
}

// What a PF's SR-IOV and a GPU's passthrough wait for, by the host's state.
func TestDeviceWaits(t *testing.T) {
	sr := func(enabled, active bool, vfs, requested int32) *types.HostSriovInfo {
		return &types.HostSriovInfo{SriovEnabled: enabled, SriovActive: active, NumVirtualFunction: vfs, NumVirtualFunctionRequested: requested}
	}
	for _, c := range []struct {
		pi   types.BaseHostPciPassthruInfo
		want string
	}{
		{nil, "not listed by the host"},
		{&types.HostPciPassthruInfo{}, "not listed by the host"}, // no SR-IOV entry for the PF
		{sr(true, false, 0, 8), "not active yet"},
		{sr(true, true, 4, 8), "4 of 8 VFs active"},
		{sr(true, true, 8, 8), ""},
		{sr(false, true, 8, 0), "still active"},
		{sr(false, false, 0, 0), ""},
	} {
		if got := sriovWait(c.pi); got != c.want {
			t.Errorf("sriovWait(%+v) = %q, want %q", c.pi, got, c.want)
		}
	}
	for _, c := range []struct {
		enabled, active bool
		want            string
	}{{true, false, "not active yet"}, {true, true, ""}, {false, true, "still active"}, {false, false, ""}} {
		if got := gpuWait(&types.HostPciPassthruInfo{PassthruEnabled: c.enabled, PassthruActive: c.active}); got != c.want {
			t.Errorf("gpuWait(enabled %v, active %v) = %q, want %q", c.enabled, c.active, got, c.want)
		}
	}
}
