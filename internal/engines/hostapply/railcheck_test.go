package hostapply

import (
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// TestCheckTopologyWithoutFile: a VM with rails for which rdggen makes no
// topology file never passes nccl-topology. Without GPUs it needs none and
// gets no result; with a GPU or NIC model whose PCIe link rdggen does not
// know it needs one that rdggen cannot make: COULD NOT TELL, with the fix
// naming the inventory field and the models rdggen knows.
func TestCheckTopologyWithoutFile(t *testing.T) {
	load := func() (*inventory.Inventory, *inventory.Host) {
		t.Helper()
		inv, err := inventory.LoadFile("../../../testdata/golden/rails-firstboot/inventory.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return inv, &inv.Hosts[1]
	}
	check := func(inv *inventory.Inventory, h *inventory.Host) []readiness.Result {
		t.Helper()
		rd, _, _ := railsFor(inv, h)
		if rd.Err != nil || rd.TopoErr == nil {
			t.Fatalf("%s: rails %v, topology %v: want rails and no topology file", h.Name, rd.Err, rd.TopoErr)
		}
		return checkTopology(inv, h, rd, &railState{})
	}

	inv, h := load()
	h.GPUs = nil
	for r := range h.Rails {
		h.Rails[r].GPUs = nil
	}
	if rs := check(inv, h); len(rs) != 0 {
		t.Errorf("no GPU: %+v, want no result", rs)
	}

	inv, h = load()
	h.GPUs[2].Model = "B200-SXM-180GB"
	want := readiness.Result{Target: readiness.TargetHosts, Machine: "node2", Check: CheckTopology, Subject: nccltopo.DefaultPath, Status: readiness.Unknown,
		Found:    `not read: rdggen cannot make this guest's file (node2: rdggen knows no PCIe link for GPU model "B200-SXM-180GB" (nccltopo.GPULink), which NCCL's topology file needs: node2 gets no topology file)`,
		Expected: "the file of this guest's devices",
		Fix: `set hosts[1].gpus[2].model (or defaults.gpus[2].model), now "B200-SXM-180GB", to a model of a family rdggen knows the PCIe link of: ` +
			"a10, a100, a30, a40, h100, h100nvl, h200, h800, l4, l40, l40s, p100, p40, t4, v100, v100s; a model rdggen does not know gets no file from rdggen, and NCCL pairs the GPUs with the rails' NICs by index"}
	if rs := check(inv, h); len(rs) != 1 || rs[0] != want {
		t.Errorf("unknown GPU:\n got %+v\nwant %+v", rs, want)
	}

	inv, h = load()
	h.NIC.Model = "ConnectX-9"
	rs := check(inv, h)
	if len(rs) != 1 || rs[0].Status != readiness.Unknown || !strings.Contains(rs[0].Found, `NIC model "ConnectX-9"`) ||
		!strings.HasPrefix(rs[0].Fix, `set hosts[1].nic.model (or defaults.nic.model), now "ConnectX-9", to the NIC's model as rdggen names it: one of BlueField-3, ConnectX-4, `) {
		t.Errorf("unknown NIC: %+v", rs)
	}
}
