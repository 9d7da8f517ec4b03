package esxiapply_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// addPort gives an ESXi host of the simulator another physical NIC.
func addPort(e *env, esxi, device, pci, driver string) {
	h := e.sim.Host(esxi)
	e.sim.Lock(h.Self, func() {
		net := *h.Config.Network
		net.Pnic = append(slices.Clone(net.Pnic), types.PhysicalNic{
			Key: "key-vim.host.PhysicalNic-" + device, Device: device, Pci: pci, Driver: driver,
		})
		h.Config.Network = &net
	})
}

// TestModuleParamsPerPort: max_vfs has one value per nmlx5_core port in PCI
// order; apply gives the PF its VFs at its own position (read from
// vCenter's pnic list: PCI address and driver) and keeps the other ports'
// values, a second apply changes nothing, and check compares the PF's own
// value with its VFs.
func TestModuleParamsPerPort(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	e := newEnv(t, inv, vcsimtest.Options{})
	const rest = " pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1"
	// The PF is at vcsimtest.PFAddress (0000:d8:00.0).
	addPort(e, "esx-41.example", "vmnic2", "0000:3b:00.0", vmx.NICModule) // a card before the PF's
	addPort(e, "esx-42.example", "vmnic2", "0000:3b:00.0", vmx.NICModule)
	e.sim.Modules.Preset("esx-42.example", vmx.NICModule, "max_vfs=4")
	addPort(e, "esx-43.example", "vmnic3", "0000:d7:00.0", vmx.NICModule) // the card's first port
	addPort(e, "esx-43.example", "vmnic5", "0000:d8:00.1", vmx.NICModule) // after the PF
	e.sim.Modules.Preset("esx-43.example", vmx.NICModule, "max_vfs=2,6,6")
	addPort(e, "esx-44.example", "vmnic0", "0000:01:00.0", "ntg3") // not a ConnectX: not counted
	want := map[string]string{
		"esx-41.example": "max_vfs=0,8" + rest,
		"esx-42.example": "max_vfs=4,8" + rest,
		"esx-43.example": "max_vfs=2,8,6" + rest,
		"esx-44.example": "max_vfs=8" + rest,
	}

	res, out := e.apply(t, false)
	if res.Err() != nil {
		t.Fatalf("apply: %v\n%s", res.Err(), out)
	}
	for h, w := range want {
		if got := e.sim.Modules.Params(h, vmx.NICModule); got != w {
			t.Errorf("%s: %s parameters %q, want %q", h, vmx.NICModule, got, w)
		}
	}
	if !strings.Contains(out, `nmlx5_core parameters: "" → "max_vfs=0,8`+rest+`" (vmnic4 is nmlx5_core port 2 in PCI order, so its VFs are max_vfs's value 2)`) {
		t.Errorf("the plan does not say why max_vfs is a list:\n%s", out)
	}
	_, sets := e.sim.Modules.Calls()
	res, out = e.apply(t, false)
	if _, again := e.sim.Modules.Calls(); again != sets || res.HostsChanged != 0 {
		t.Errorf("second apply: %d more sets, %d hosts changed\n%s", again-sets, res.HostsChanged, out)
	}

	// check: the PF's own value against its VFs (8 present after apply).
	seen := 0
	for _, r := range e.check(t) {
		if r.Check != esxiapply.CheckModuleParams || want[r.Machine] == "" {
			continue
		}
		seen++
		if r.Status != readiness.Passed {
			t.Errorf("%s: module-params %s: %s, expected %s", r.Machine, r.Status, r.Found, r.Expected)
		}
	}
	if seen != len(want) {
		t.Errorf("%d module-params results for %d hosts", seen, len(want))
	}
	// The PF's own value is what check compares, not the first port's.
	e.sim.Modules.Preset("esx-41.example", vmx.NICModule, "max_vfs=8,0"+rest)
	seen = 0
	for _, r := range e.check(t) {
		if r.Machine == "esx-41.example" && r.Check == esxiapply.CheckModuleParams {
			seen++
			if r.Status != readiness.Failed || !strings.Contains(r.Expected, `"max_vfs=8,8`+rest+`"`) {
				t.Errorf("esx-41 with max_vfs=8,0 (its PF, port 2, gets 0): %s: %s, expected %s", r.Status, r.Found, r.Expected)
			}
		}
	}
	if seen != 1 {
		t.Errorf("%d module-params results for esx-41", seen)
	}

	// A PF that nmlx5_core does not drive: its NIC settings are held back.
	h := e.sim.Host("esx-45.example")
	e.sim.Lock(h.Self, func() {
		net := *h.Config.Network
		net.Pnic = slices.Clone(net.Pnic)
		for i := range net.Pnic {
			if net.Pnic[i].Device == "vmnic4" {
				net.Pnic[i].Driver = "nmlx4_en"
			}
		}
		h.Config.Network = &net
	})
	_, out = e.apply(t, true)
	if !strings.Contains(out, "host esx-45.example: cannot apply its NIC settings (SR-IOV, MTU, nmlx5_core): vmnic4 (0000:d8:00.0) is driven by nmlx4_en, not nmlx5_core") {
		t.Errorf("a PF of another driver:\n%s", out)
	}
}
