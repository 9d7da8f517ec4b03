package railpair_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/railpair"
)

// Each GPU and each rail's VF goes to the virtual NUMA node of its host
// node; a device whose host node is unknown gets -1, no affinity.
func TestVNUMA(t *testing.T) {
	tree := vcsimtest.SharedSwitches(2, 1, 2, 1)
	p := pair(t, host(tree), railpair.Request{Rails: tree.VMNICs(), GPUs: empty(4), Free: tree.GPUs()})
	got, err := p.VNUMA(railpair.VM{Version: "vmx-20", NumCPU: 64, CoresPerNUMANode: 32})
	if err != nil {
		t.Fatal(err)
	}
	want := []railpair.Assignment{
		{Kind: railpair.KindGPU, Rail: 0, PCI: "0000:13:00.0", HostNode: 0, VNode: 0},
		{Kind: railpair.KindGPU, Rail: 0, PCI: "0000:14:00.0", HostNode: 0, VNode: 0},
		{Kind: railpair.KindVF, Rail: 0, PCI: "0000:15:00.0", HostNode: 0, VNode: 0},
		{Kind: railpair.KindGPU, Rail: 1, PCI: "0000:8b:00.0", HostNode: 1, VNode: 1},
		{Kind: railpair.KindGPU, Rail: 1, PCI: "0000:8c:00.0", HostNode: 1, VNode: 1},
		{Kind: railpair.KindVF, Rail: 1, PCI: "0000:8d:00.0", HostNode: 1, VNode: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Host nodes 2 and 5 (say, the nodes a host lists): the second in
	// order is virtual node 1.
	h := host(tree)
	h.NUMA[0].TypeId, h.NUMA[1].TypeId = 2, 5
	p = pair(t, h, railpair.Request{Rails: []string{"vmnic3"}, GPUs: empty(1), Free: tree.GPUs()})
	got, err = p.VNUMA(railpair.VM{Version: "vmx-21", NumCPU: 16, CoresPerNUMANode: 8})
	if err != nil || len(got) != 2 || got[0].HostNode != 5 || got[0].VNode != 1 || got[1].VNode != 1 {
		t.Errorf("nodes 2 and 5: %+v %v", got, err)
	}

	// A GPU the host lists under no node: no affinity.
	h = host(tree)
	h.NUMA[1].PciId = []string{"0000:8d:00.0"}
	p = pair(t, h, railpair.Request{Rails: []string{"vmnic3"}, GPUs: []string{"0000:8b:00.0"}})
	got, err = p.VNUMA(railpair.VM{Version: "vmx-20", NumCPU: 16, CoresPerNUMANode: 8})
	if err != nil || got[0].HostNode != -1 || got[0].VNode != -1 || got[1].VNode != 1 {
		t.Errorf("unknown node: %+v %v", got, err)
	}
}

// When no assignment is possible, the error says why.
func TestVNUMAImpossible(t *testing.T) {
	tree := vcsimtest.SharedSwitches(2, 1, 2, 1)
	p := pair(t, host(tree), railpair.Request{Rails: tree.VMNICs(), GPUs: empty(4), Free: tree.GPUs()})
	one := vcsimtest.SharedSwitches(1, 2, 2, 1)
	p1 := pair(t, host(one), railpair.Request{Rails: one.VMNICs(), GPUs: empty(4), Free: one.GPUs()})
	for _, c := range []struct {
		p    railpair.Pairing
		vm   railpair.VM
		want string
	}{
		{p, railpair.VM{Version: "vmx-19", NumCPU: 64, CoresPerNUMANode: 32}, "hardware version vmx-19 is below vmx-20, the first that assigns devices to virtual NUMA nodes"},
		{p, railpair.VM{Version: "20", NumCPU: 64, CoresPerNUMANode: 32}, `hardware version "20" is not of the form vmx-N`},
		{p1, railpair.VM{Version: "vmx-20", NumCPU: 64, CoresPerNUMANode: 32}, "the host reports 1 NUMA node(s): every device is local to every vCPU"},
		{p, railpair.VM{Version: "vmx-20", NumCPU: 64}, "the VM's virtual NUMA size is chosen at power-on; a device's virtual node needs a fixed coresPerNumaNode (set it to 32: 64 vCPUs over the host's 2 nodes)"},
		{p, railpair.VM{Version: "vmx-20", NumCPU: 64, CoresPerNUMANode: 64}, "the VM has 1 virtual NUMA node (64 vCPUs, 64 per node): there is no node to choose (set it to 32: 64 vCPUs over the host's 2 nodes)"},
		{p, railpair.VM{Version: "vmx-20", NumCPU: 48, CoresPerNUMANode: 16}, "the VM has 3 virtual NUMA nodes (48 vCPUs, 16 per node) and the host 2; rdggen maps node to node only when the counts are equal (set it to 24: 48 vCPUs over the host's 2 nodes)"},
		{p, railpair.VM{Version: "vmx-20", NumCPU: 20, CoresPerNUMANode: 8}, "20 vCPUs are not a whole number of virtual NUMA nodes of 8 (set it to 10: 20 vCPUs over the host's 2 nodes)"},
	} {
		got, err := c.p.VNUMA(c.vm)
		if err == nil || err.Error() != c.want || got != nil {
			t.Errorf("%+v: %v, %v; want %s", c.vm, got, err, c.want)
		}
	}
}

// VMFrom reads what VNUMA needs from a VM's config; a size ESXi picks at
// power-on is no size.
func TestVMFrom(t *testing.T) {
	cores := int32(16)
	cfg := &types.VirtualMachineConfigInfo{Version: "vmx-21", Hardware: types.VirtualHardware{NumCPU: 32},
		NumaInfo: &types.VirtualMachineVirtualNumaInfo{CoresPerNumaNode: &cores, AutoCoresPerNumaNode: types.NewBool(false)}}
	if got := railpair.VMFrom(cfg); got != (railpair.VM{Version: "vmx-21", NumCPU: 32, CoresPerNUMANode: 16}) {
		t.Errorf("fixed: %+v", got)
	}
	cfg.NumaInfo.AutoCoresPerNumaNode = types.NewBool(true)
	if got := railpair.VMFrom(cfg); got.CoresPerNUMANode != 0 {
		t.Errorf("auto: %+v", got)
	}
	cfg.NumaInfo = nil
	if got := railpair.VMFrom(cfg); got != (railpair.VM{Version: "vmx-21", NumCPU: 32}) {
		t.Errorf("no numaInfo: %+v", got)
	}
	if got := railpair.VMFrom(nil); got != (railpair.VM{}) {
		t.Errorf("nil: %+v", got)
	}
}
