package esxiapply

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// The device kinds of a host's reboot reasons (hostPlan.reboot). A reason
// starts with its kind and names, in parentheses, the devices that wait and
// what for: "SR-IOV (vmnic3, vmnic5: not active yet; vmnic4: 2 of 4 VFs
// active)", "GPU passthrough (0000:91:00.0: not active yet)". On a host with
// several PFs (rails) or GPUs, one waiting device keeps the host's reason;
// the name says which one to look at after its reboot.
const (
	whySRIOV = "SR-IOV"
	whyGPU   = "GPU passthrough"
)

// setNow is the state of a device whose change this apply sends: until the
// host is read again after it (recheckReboot), whether the host activates
// it at once is not known.
const setNow = "set by this apply"

// gpusNamed is how many waiting GPUs of one state a reason names; more are
// counted ("8 GPUs: not active yet"), as a host of 8 GPUs switched on at once
// would otherwise list 8 PCI addresses.
const gpusNamed = 4

// devWait is a device of a reboot reason (a PF's vmnic, a GPU's PCI
// address) and what it waits for.
type devWait struct{ dev, state string }

// sriovWait is what SR-IOV on a PF waits for by the host's
// config.pciPassthruInfo entry for it, "" for nothing. HostSriovInfo
// (vSphere Web Services API reference): sriovEnabled is what was set,
// sriovActive whether it is in effect; numVirtualFunctionRequested the VF
// count set, numVirtualFunction the VFs present. Both catch up at the
// host's boot.
func sriovWait(pi types.BaseHostPciPassthruInfo) string {
	sr, ok := pi.(*types.HostSriovInfo)
	switch {
	case !ok:
		return "not listed by the host"
	case sr.SriovEnabled && !sr.SriovActive:
		return "not active yet"
	case !sr.SriovEnabled && sr.SriovActive:
		return "still active"
	case sr.NumVirtualFunction != sr.NumVirtualFunctionRequested:
		return fmt.Sprintf("%d of %d VFs active", sr.NumVirtualFunction, sr.NumVirtualFunctionRequested)
	}
	return ""
}

// gpuWait is what a GPU's passthrough waits for by the host's
// config.pciPassthruInfo entry for it (HostPciPassthruInfo.passthruEnabled,
// passthruActive), "" for nothing.
func gpuWait(pi types.BaseHostPciPassthruInfo) string {
	i := pi.GetHostPciPassthruInfo()
	switch {
	case i.PassthruEnabled && !i.PassthruActive:
		return "not active yet"
	case !i.PassthruEnabled && i.PassthruActive:
		return "still active"
	}
	return ""
}

// deviceReason is the reboot reason of kind for the devices in waits,
// grouped by state in the order the states first appear, "" when waits is
// empty. Devices of this apply's changes alone (setNow) give the kind
// alone: the plan's change lines name them. named > 0 counts a group of
// more than named devices as "N noun" instead of listing them.
func deviceReason(kind string, waits []devWait, named int, noun string) string {
	if len(waits) == 0 {
		return ""
	}
	var states []string
	devs := map[string][]string{}
	for _, w := range waits {
		if _, ok := devs[w.state]; !ok {
			states = append(states, w.state)
		}
		devs[w.state] = append(devs[w.state], w.dev)
	}
	if len(states) == 1 && states[0] == setNow {
		return kind
	}
	parts := make([]string, len(states))
	for i, s := range states {
		d := strings.Join(devs[s], ", ")
		if named > 0 && len(devs[s]) > named {
			d = fmt.Sprintf("%d %s", len(devs[s]), noun)
		}
		parts[i] = d + ": " + s
	}
	return kind + " (" + strings.Join(parts, "; ") + ")"
}
