package railpair_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/railpair"
)

// host is the pure input of a simulated tree: what ESXi would report.
func host(t vcsimtest.PCITree) railpair.Host {
	return railpair.Host{Devices: t.Devices(), NUMA: t.NUMA(), Uplinks: t.Uplinks()}
}

func pair(t *testing.T, h railpair.Host, r railpair.Request) railpair.Pairing {
	t.Helper()
	p, err := railpair.Pair(h, r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func checkLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func empty(n int) []string { return make([]string, n) }

func reversed(s []string) []string {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

// Two sockets, two PCIe switches each, 2 GPUs and 1 NIC port per switch:
// each rail gets the GPUs of its PF's switch, whatever the order of the
// rails or of the free list (NCCL without a topology file would pair by
// index instead).
func TestPairSharedSwitches(t *testing.T) {
	tree := vcsimtest.SharedSwitches(2, 2, 2, 1)
	h := host(tree)
	if got := tree.VMNICs(); !slices.Equal(got, []string{"vmnic2", "vmnic3", "vmnic4", "vmnic5"}) {
		t.Fatalf("vmnics %v", got)
	}
	p := pair(t, h, railpair.Request{Rails: tree.VMNICs(), GPUs: empty(8), Free: reversed(tree.GPUs())})
	checkLines(t, "lines", p.Lines(), []string{
		"rail 0 (vmnic2 0000:15:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (chosen) — same PCIe switch 0000:11:00.0",
		"rail 1 (vmnic3 0000:1b:00.0): GPUs 0000:19:00.0, 0000:1a:00.0 (chosen) — same PCIe switch 0000:17:00.0",
		"rail 2 (vmnic4 0000:8d:00.0): GPUs 0000:8b:00.0, 0000:8c:00.0 (chosen) — same PCIe switch 0000:89:00.0",
		"rail 3 (vmnic5 0000:93:00.0): GPUs 0000:91:00.0, 0000:92:00.0 (chosen) — same PCIe switch 0000:8f:00.0",
	})
	if w := p.Warnings(); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
	if !slices.Equal(p.Nodes, []int{0, 1}) {
		t.Errorf("nodes %v", p.Nodes)
	}
	g := p.Rails[2].GPUs[1]
	want := railpair.GPU{Slot: 5, PCI: "0000:8c:00.0", Chosen: true, Locality: railpair.SameSwitch, Switch: "0000:89:00.0", Hops: 3, Node: 1, Nearer: -1}
	if g != want || p.Rails[2].Node != 1 || p.Rails[2].PF != "0000:8d:00.0" {
		t.Errorf("rail 2: %+v, GPU %+v", p.Rails[2], g)
	}

	// Rails in another order: the pairing follows the PFs.
	p = pair(t, h, railpair.Request{Rails: []string{"vmnic5", "vmnic2", "vmnic4", "vmnic3"}, GPUs: empty(8), Free: tree.GPUs()})
	checkLines(t, "lines, rails reordered", p.Lines(), []string{
		"rail 0 (vmnic5 0000:93:00.0): GPUs 0000:91:00.0, 0000:92:00.0 (chosen) — same PCIe switch 0000:8f:00.0",
		"rail 1 (vmnic2 0000:15:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (chosen) — same PCIe switch 0000:11:00.0",
		"rail 2 (vmnic4 0000:8d:00.0): GPUs 0000:8b:00.0, 0000:8c:00.0 (chosen) — same PCIe switch 0000:89:00.0",
		"rail 3 (vmnic3 0000:1b:00.0): GPUs 0000:19:00.0, 0000:1a:00.0 (chosen) — same PCIe switch 0000:17:00.0",
	})

	// 8 GPUs on 8 rails of a 2 GPUs + 2 ports per switch server: one GPU
	// per port, the lower address to the lower rail.
	tree = vcsimtest.SharedSwitches(2, 2, 2, 2)
	p = pair(t, host(tree), railpair.Request{Rails: tree.VMNICs(), GPUs: empty(8), Free: tree.GPUs()})
	checkLines(t, "lines, 8 rails", p.Lines()[:2], []string{
		"rail 0 (vmnic2 0000:15:00.0): GPU 0000:13:00.0 (chosen) — same PCIe switch 0000:11:00.0",
		"rail 1 (vmnic3 0000:16:00.0): GPU 0000:14:00.0 (chosen) — same PCIe switch 0000:11:00.0",
	})
}

// NICs on root ports of their own: each rail gets GPUs of its PF's NUMA
// node, the lowest addresses first, rail by rail.
func TestPairSeparateSwitches(t *testing.T) {
	tree := vcsimtest.SeparateSwitches(2, 2, 2, 2)
	p := pair(t, host(tree), railpair.Request{Rails: []string{"vmnic2", "vmnic4", "vmnic3", "vmnic5"}, GPUs: empty(8), Free: reversed(tree.GPUs())})
	checkLines(t, "lines", p.Lines(), []string{
		"rail 0 (vmnic2 0000:1b:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (chosen) — same NUMA node 0, no common PCIe switch",
		"rail 1 (vmnic4 0000:93:00.0): GPUs 0000:8b:00.0, 0000:8c:00.0 (chosen) — same NUMA node 1, no common PCIe switch",
		"rail 2 (vmnic3 0000:1d:00.0): GPUs 0000:18:00.0, 0000:19:00.0 (chosen) — same NUMA node 0, no common PCIe switch",
		"rail 3 (vmnic5 0000:95:00.0): GPUs 0000:90:00.0, 0000:91:00.0 (chosen) — same NUMA node 1, no common PCIe switch",
	})
	if w := p.Warnings(); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}

	// The host lists only its root ports per NUMA node: a device is on
	// the node of the root port above it, and the pairing is the same.
	h := host(tree)
	roots := map[string]bool{}
	for _, d := range h.Devices {
		if d.ParentBridge == "" {
			roots[d.Id] = true
		}
	}
	for i := range h.NUMA {
		h.NUMA[i].PciId = slices.DeleteFunc(slices.Clone(h.NUMA[i].PciId), func(id string) bool { return !roots[id] })
		if len(h.NUMA[i].PciId) != 4 {
			t.Fatalf("node %d lists %v", i, h.NUMA[i].PciId)
		}
	}
	q := pair(t, h, railpair.Request{Rails: []string{"vmnic2", "vmnic4", "vmnic3", "vmnic5"}, GPUs: empty(8), Free: tree.GPUs()})
	if diff := cmp.Diff(p, q); diff != "" {
		t.Errorf("root ports only (-all listed +roots listed):\n%s", diff)
	}

	// No NUMA information at all: the locality is unknown, and said so.
	h.NUMA = nil
	q = pair(t, h, railpair.Request{Rails: []string{"vmnic2"}, GPUs: empty(1), Free: tree.GPUs()})
	checkLines(t, "no NUMA info", q.Lines(), []string{
		"rail 0 (vmnic2 0000:1b:00.0): GPU 0000:13:00.0 (chosen) — NUMA node unknown: the host lists none for the GPU or the PF",
	})
	checkLines(t, "no NUMA info, warnings", q.Warnings(), []string{
		"rail 0 (vmnic2 0000:1b:00.0): GPU 0000:13:00.0 and its PF share no PCIe switch and the host lists none for the GPU or the PF (hardware.numaInfo), so whether GPUDirect RDMA between them crosses sockets is unknown",
	})
}

// More GPUs than the PFs' socket holds: the pairing crosses sockets and
// each such GPU is a warning naming the GPU, the PF, their nodes and why.
func TestPairCrossSocket(t *testing.T) {
	tree := vcsimtest.SharedSwitches(2, 2, 2, 1)
	h := host(tree)
	p := pair(t, h, railpair.Request{Rails: []string{"vmnic2", "vmnic3"}, GPUs: empty(8), Free: tree.GPUs()})
	checkLines(t, "lines", p.Lines(), []string{
		"rail 0 (vmnic2 0000:15:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (chosen) — same PCIe switch 0000:11:00.0; GPUs 0000:8b:00.0, 0000:8c:00.0 (chosen) — crosses sockets: GPU on NUMA node 1, PF on node 0",
		"rail 1 (vmnic3 0000:1b:00.0): GPUs 0000:19:00.0, 0000:1a:00.0 (chosen) — same PCIe switch 0000:17:00.0; GPUs 0000:91:00.0, 0000:92:00.0 (chosen) — crosses sockets: GPU on NUMA node 1, PF on node 0",
	})
	checkLines(t, "warnings", p.Warnings(), []string{
		"rail 0 (vmnic2 0000:15:00.0): GPU 0000:8b:00.0 is on NUMA node 1 and the PF on node 0, so GPUDirect RDMA between them crosses the link between the sockets; no free GPU on node 0 was left",
		"rail 0 (vmnic2 0000:15:00.0): GPU 0000:8c:00.0 is on NUMA node 1 and the PF on node 0, so GPUDirect RDMA between them crosses the link between the sockets; no free GPU on node 0 was left",
		"rail 1 (vmnic3 0000:1b:00.0): GPU 0000:91:00.0 is on NUMA node 1 and the PF on node 0, so GPUDirect RDMA between them crosses the link between the sockets; no free GPU on node 0 was left",
		"rail 1 (vmnic3 0000:1b:00.0): GPU 0000:92:00.0 is on NUMA node 1 and the PF on node 0, so GPUDirect RDMA between them crosses the link between the sockets; no free GPU on node 0 was left",
	})

	// Given GPUs in the wrong slots: checked, not moved, and the rail
	// whose PF shares the GPU's switch is named.
	p = pair(t, h, railpair.Request{Rails: []string{"vmnic2", "vmnic4"}, GPUs: []string{"0000:8B:00.0", "0000:13:00.0"}})
	checkLines(t, "given, swapped", p.Lines(), []string{
		"rail 0 (vmnic2 0000:15:00.0): GPU 0000:8b:00.0 (given) — crosses sockets: GPU on NUMA node 1, PF on node 0 (rail 1's vmnic4 shares its PCIe switch)",
		"rail 1 (vmnic4 0000:8d:00.0): GPU 0000:13:00.0 (given) — crosses sockets: GPU on NUMA node 0, PF on node 1 (rail 0's vmnic2 shares its PCIe switch)",
	})
	checkLines(t, "given, swapped: warnings", p.Warnings(), []string{
		"rail 0 (vmnic2 0000:15:00.0): GPU 0000:8b:00.0 is on NUMA node 1 and the PF on node 0, so GPUDirect RDMA between them crosses the link between the sockets; the GPU is given, not chosen; rail 1's vmnic4 shares its PCIe switch",
		"rail 1 (vmnic4 0000:8d:00.0): GPU 0000:13:00.0 is on NUMA node 0 and the PF on node 1, so GPUDirect RDMA between them crosses the link between the sockets; the GPU is given, not chosen; rail 0's vmnic2 shares its PCIe switch",
	})
}

// GPUs the inventory fixes are checked where they are; the empty slots
// are still chosen around them.
func TestPairGivenGPUs(t *testing.T) {
	tree := vcsimtest.SharedSwitches(2, 2, 2, 1)
	h := host(tree)
	p := pair(t, h, railpair.Request{Rails: []string{"vmnic2", "vmnic3"}, GPUs: []string{"0000:13:00.0", "0000:14:00.0", "0000:19:00.0", "0000:1a:00.0"}})
	checkLines(t, "all given", p.Lines(), []string{
		"rail 0 (vmnic2 0000:15:00.0): GPUs 0000:13:00.0, 0000:14:00.0 (given) — same PCIe switch 0000:11:00.0",
		"rail 1 (vmnic3 0000:1b:00.0): GPUs 0000:19:00.0, 0000:1a:00.0 (given) — same PCIe switch 0000:17:00.0",
	})

	// One given in rail 1's switch but rail 0's slot; the free list
	// repeats it (ignored there).
	p = pair(t, h, railpair.Request{Rails: []string{"vmnic2", "vmnic3"}, GPUs: []string{"0000:19:00.0", "", "", ""}, Free: tree.GPUs()})
	checkLines(t, "mixed", p.Lines(), []string{
		"rail 0 (vmnic2 0000:15:00.0): GPU 0000:19:00.0 (given) — same NUMA node 0, no common PCIe switch (rail 1's vmnic3 shares its PCIe switch); GPU 0000:13:00.0 (chosen) — same PCIe switch 0000:11:00.0",
		"rail 1 (vmnic3 0000:1b:00.0): GPU 0000:1a:00.0 (chosen) — same PCIe switch 0000:17:00.0; GPU 0000:14:00.0 (chosen) — same NUMA node 0, no common PCIe switch",
	})
	if w := p.Warnings(); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
	if g := p.Rails[0].GPUs[0]; g.Chosen || g.Nearer != 1 || g.NearerBy != railpair.SameSwitch {
		t.Errorf("given GPU %+v", g)
	}
}

// A PCIe switch behind another (as a PEX switch's virtual switches nest):
// among the GPUs under the PF's switch, the one with fewer bridges between
// it and the PF wins over a lower address; equal paths go to the lower
// address, whatever the order of the free list.
func TestPairTieRules(t *testing.T) {
	nested := vcsimtest.PCITree{Nodes: [][]vcsimtest.PCINode{{{
		ID: "0000:10:01.0", Kind: vcsimtest.RootPort, Children: []vcsimtest.PCINode{{
			ID: "0000:11:00.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{
				{ID: "0000:12:00.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{{
					ID: "0000:13:00.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{{
						ID: "0000:14:00.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{{ID: "0000:15:00.0", Kind: vcsimtest.GPUDevice}},
					}},
				}}},
				{ID: "0000:12:01.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{{ID: "0000:16:00.0", Kind: vcsimtest.GPUDevice}}},
				{ID: "0000:12:02.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{{ID: "0000:17:00.0", Kind: vcsimtest.GPUDevice}}},
				{ID: "0000:12:03.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{{ID: "0000:18:00.0", Kind: vcsimtest.NICPort, VMNIC: "vmnic2"}}},
			},
		}},
	}}}}
	for _, free := range [][]string{{"0000:15:00.0", "0000:16:00.0", "0000:17:00.0"}, {"0000:17:00.0", "0000:16:00.0", "0000:15:00.0"}} {
		p := pair(t, host(nested), railpair.Request{Rails: []string{"vmnic2"}, GPUs: empty(2), Free: free})
		gs := p.Rails[0].GPUs
		if gs[0].PCI != "0000:16:00.0" || gs[1].PCI != "0000:17:00.0" || gs[0].Hops != 3 || gs[0].Switch != "0000:11:00.0" {
			t.Errorf("free %v: %+v", free, gs)
		}
	}
	p := pair(t, host(nested), railpair.Request{Rails: []string{"vmnic2"}, GPUs: empty(3), Free: []string{"0000:15:00.0", "0000:16:00.0", "0000:17:00.0"}})
	if g := p.Rails[0].GPUs[2]; g.PCI != "0000:15:00.0" || g.Hops != 5 || g.Locality != railpair.SameSwitch {
		t.Errorf("third GPU %+v", g)
	}

	// The switch pass runs over every rail before the NUMA pass: rail 0's
	// PF (on a root port of its own) does not take, as merely NUMA-local,
	// the lowest-addressed GPU, which shares rail 1's switch.
	tree := vcsimtest.PCITree{Nodes: [][]vcsimtest.PCINode{{
		{ID: "0000:10:01.0", Kind: vcsimtest.RootPort, Children: []vcsimtest.PCINode{{
			ID: "0000:11:00.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{
				{ID: "0000:12:00.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{{ID: "0000:13:00.0", Kind: vcsimtest.GPUDevice}}},
				{ID: "0000:12:01.0", Kind: vcsimtest.SwitchPort, Children: []vcsimtest.PCINode{{ID: "0000:14:00.0", Kind: vcsimtest.NICPort, VMNIC: "vmnic2"}}},
			},
		}}},
		{ID: "0000:20:01.0", Kind: vcsimtest.RootPort, Children: []vcsimtest.PCINode{{ID: "0000:21:00.0", Kind: vcsimtest.NICPort, VMNIC: "vmnic3"}}},
		{ID: "0000:30:01.0", Kind: vcsimtest.RootPort, Children: []vcsimtest.PCINode{{ID: "0000:31:00.0", Kind: vcsimtest.GPUDevice}}},
	}}}
	p = pair(t, host(tree), railpair.Request{Rails: []string{"vmnic3", "vmnic2"}, GPUs: empty(2), Free: []string{"0000:13:00.0", "0000:31:00.0"}})
	checkLines(t, "switch pass first", p.Lines(), []string{
		"rail 0 (vmnic3 0000:21:00.0): GPU 0000:31:00.0 (chosen) — same NUMA node 0, no common PCIe switch",
		"rail 1 (vmnic2 0000:14:00.0): GPU 0000:13:00.0 (chosen) — same PCIe switch 0000:11:00.0",
	})

	// Two devices behind one root port, with no switch between: the root
	// port is not a PCIe switch.
	rp := vcsimtest.PCITree{Nodes: [][]vcsimtest.PCINode{{{
		ID: "0000:10:01.0", Kind: vcsimtest.RootPort, Children: []vcsimtest.PCINode{
			{ID: "0000:11:00.0", Kind: vcsimtest.GPUDevice},
			{ID: "0000:11:00.1", Kind: vcsimtest.NICPort, VMNIC: "vmnic2"},
		},
	}}}}
	p = pair(t, host(rp), railpair.Request{Rails: []string{"vmnic2"}, GPUs: empty(1), Free: []string{"0000:11:00.0"}})
	if g := p.Rails[0].GPUs[0]; g.Locality != railpair.SameNode || g.Switch != "" {
		t.Errorf("under a root port: %+v", g)
	}
}

// A parentBridge loop (malformed data) ends the walk instead of hanging;
// the devices then share no switch.
func TestPairBridgeLoop(t *testing.T) {
	h := railpair.Host{
		Devices: []types.HostPciDevice{
			{Id: "0000:11:00.0", ParentBridge: "0000:12:00.0"},
			{Id: "0000:12:00.0", ParentBridge: "0000:11:00.0"},
			{Id: "0000:13:00.0", ParentBridge: "0000:11:00.0"},
			{Id: "0000:14:00.0", ParentBridge: "0000:99:00.0"},
		},
		NUMA:    []types.HostNumaNode{{TypeId: 0, PciId: []string{"0000:13:00.0", "0000:14:00.0"}}},
		Uplinks: []types.PhysicalNic{{Device: "vmnic2", Pci: "0000:14:00.0"}},
	}
	p := pair(t, h, railpair.Request{Rails: []string{"vmnic2"}, GPUs: []string{"0000:13:00.0"}})
	if g := p.Rails[0].GPUs[0]; g.Locality != railpair.SameNode {
		t.Errorf("%+v", g)
	}
}

// What makes a request impossible is an *InputError naming every problem.
func TestPairInputErrors(t *testing.T) {
	tree := vcsimtest.SharedSwitches(2, 2, 2, 1)
	h := host(tree)
	for _, c := range []struct {
		r    railpair.Request
		want []string
	}{
		{railpair.Request{}, []string{"no rails"}},
		{railpair.Request{Rails: []string{"vmnic9", "vmnic2", "vmnic2"}, GPUs: empty(1), Free: tree.GPUs()}, []string{
			"rail 0: the host has no uplink vmnic9 (uplinks: vmnic2, vmnic3, vmnic4, vmnic5)",
			"rails 1 and 2 share one PF, 0000:15:00.0 (vmnic2)",
		}},
		{railpair.Request{Rails: []string{"vmnic2"}, GPUs: []string{"0000:13:00.0", "0000:13:00.0", "0000:ee:00.0"}, PerRail: 2}, []string{
			"3 GPUs do not fit 1 rails of 2 GPUs each",
			"GPUs 0 and 1 are both 0000:13:00.0",
			"GPU 2: 0000:ee:00.0 is not among the host's PCI devices",
		}},
		{railpair.Request{Rails: []string{"vmnic2"}, GPUs: empty(3), Free: []string{"0000:13:00.0", "0000:14:00.0", "0000:ef:00.0"}}, []string{
			"free GPU 0000:ef:00.0 is not among the host's PCI devices",
			"3 GPUs to choose but 2 free",
		}},
	} {
		_, err := railpair.Pair(h, c.r)
		var ie *railpair.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%+v: error %v", c.r, err)
			continue
		}
		if diff := cmp.Diff(c.want, ie.Problems); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", c.r, diff)
		}
		if !strings.HasPrefix(err.Error(), "GPU–rail pairing: "+c.want[0]) {
			t.Errorf("message %q", err)
		}
	}

	// An uplink whose PCI device the host does not list.
	h.Uplinks = append(h.Uplinks, types.PhysicalNic{Device: "vmnic9", Pci: "0000:ff:00.0"})
	_, err := railpair.Pair(h, railpair.Request{Rails: []string{"vmnic9"}})
	if err == nil || err.Error() != "GPU–rail pairing: rail 0: vmnic9's PCI address 0000:ff:00.0 is not among the host's PCI devices" {
		t.Errorf("error %v", err)
	}

	// A rail with no GPUs is a rail all the same.
	p := pair(t, host(tree), railpair.Request{Rails: []string{"vmnic2", "vmnic3"}, GPUs: empty(1), Free: tree.GPUs()})
	checkLines(t, "a rail without GPUs", p.Lines(), []string{
		"rail 0 (vmnic2 0000:15:00.0): GPU 0000:13:00.0 (chosen) — same PCIe switch 0000:11:00.0",
		"rail 1 (vmnic3 0000:1b:00.0): no GPUs",
	})
}

// Request.RailOf gives each slot its rail (the inventory's gpus[].rail),
// so rails may hold different numbers of GPUs; the pairing fills each
// rail's slots from its PF's switch as by position. A RailOf that does not
// match the GPUs is an InputError.
func TestPairRailOf(t *testing.T) {
	tree := vcsimtest.SharedSwitches(2, 2, 2, 1)
	h := host(tree)
	// Three GPUs with rail 1, one with rail 0; rail 1's switch holds two,
	// so its third crosses to its NUMA node's other switch.
	p := pair(t, h, railpair.Request{Rails: []string{"vmnic2", "vmnic3"}, GPUs: empty(4), Free: tree.GPUs(), RailOf: []int{1, 0, 1, 1}})
	checkLines(t, "lines", p.Lines(), []string{
		"rail 0 (vmnic2 0000:15:00.0): GPU 0000:13:00.0 (chosen) — same PCIe switch 0000:11:00.0",
		"rail 1 (vmnic3 0000:1b:00.0): GPUs 0000:19:00.0, 0000:1a:00.0 (chosen) — same PCIe switch 0000:17:00.0; GPU 0000:14:00.0 (chosen) — same NUMA node 0, no common PCIe switch",
	})
	if got := []int{p.Rails[1].GPUs[0].Slot, p.Rails[1].GPUs[1].Slot, p.Rails[1].GPUs[2].Slot}; !slices.Equal(got, []int{0, 2, 3}) {
		t.Errorf("rail 1's slots %v, want 0, 2, 3", got)
	}
	var ie *railpair.InputError
	for _, railOf := range [][]int{{0, 1}, {0, 1, 2, 0}, {-1, 0, 0, 0}} {
		if _, err := railpair.Pair(h, railpair.Request{Rails: []string{"vmnic2", "vmnic3"}, GPUs: empty(4), Free: tree.GPUs(), RailOf: railOf}); !errors.As(err, &ie) {
			t.Errorf("RailOf %v: err %v, want an InputError", railOf, err)
		}
	}
}
