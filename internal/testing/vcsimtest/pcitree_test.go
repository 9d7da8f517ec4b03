package vcsimtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// RailTree of the golden 4-rail host: one PCIe switch per rail's PF
// (vmnic4–vmnic7) with that rail's two GPUs at the addresses the host
// has without a tree, rails 0–1 on NUMA node 0 and 2–3 on node 1, the
// NIC ports in rail order by PCI address; a host of one rail gets none.
func TestRailTree(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "golden", "rails", "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	tree, ok := RailTree(inv, "esx-1.example")
	if !ok {
		t.Fatal("no tree")
	}
	type sw struct {
		Node  int
		GPUs  []string
		NIC   string
		VMNIC string
	}
	var got []sw
	for n, ports := range tree.Nodes {
		for _, root := range ports {
			if root.Kind != RootPort || len(root.Children) != 1 || root.Children[0].Kind != SwitchPort {
				t.Fatalf("root port %+v", root)
			}
			s := sw{Node: n}
			for _, dsp := range root.Children[0].Children {
				for _, ep := range dsp.Children {
					switch ep.Kind {
					case GPUDevice:
						s.GPUs = append(s.GPUs, ep.ID)
					case NICPort:
						s.NIC, s.VMNIC = ep.ID, ep.VMNIC
					}
				}
			}
			got = append(got, s)
		}
	}
	want := []sw{
		{0, []string{"0000:20:00.0", "0000:21:00.0"}, "0000:43:00.0", "vmnic4"},
		{0, []string{"0000:22:00.0", "0000:23:00.0"}, "0000:47:00.0", "vmnic5"},
		{1, []string{"0000:24:00.0", "0000:25:00.0"}, "0000:a3:00.0", "vmnic6"},
		{1, []string{"0000:26:00.0", "0000:27:00.0"}, "0000:a7:00.0", "vmnic7"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the tree (-want +got):\n%s", diff)
	}
	if tree.GPU.Model != "H100-PCIE-80GB" {
		t.Errorf("GPU model %q", tree.GPU.Model)
	}
	one, err := inventory.Load("one.yaml", []byte(`name: one
switches: [{name: sw, model: SN2700, onyx: 3.6.8190}]
docker: {version: "24.0"}
defaults: {os: ubuntu-22.04, data_interface: ens224, gpus: [{model: A100-PCIE-40GB, memory_gb: 40}], nic: {model: ConnectX-6 Dx, pf: vmnic4, vfs: 4}}
hosts: [{name: a, esxi: esx-a, data: {address: 10.0.0.1/24, port: 1/1}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := RailTree(one, "esx-a"); ok {
		t.Error("a tree for a host of one rail")
	}
}
