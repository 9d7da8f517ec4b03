package railpair

import (
	"slices"
	"strings"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Host is what the pairing reads of one ESXi host, in the vSphere API's
// types, as the property collector returns them for the paths of
// [HostProperties].
type Host struct {
	// Devices is hardware.pciDevice: every PCI function of the host,
	// bridges included, each with its id ("0000:3b:00.0", segment:bus:
	// device.function), class, vendor and device ids, and parentBridge,
	// the id of the bridge it sits behind ("" on a root bus).
	Devices []types.HostPciDevice
	// NUMA is hardware.numaInfo.numaNode: each node's typeId and pciId,
	// the PCI devices (SBDF, "Segment:Bus:Device.Function") associated
	// with it. Empty when the host reports none.
	NUMA []types.HostNumaNode
	// Uplinks is config.network.pnic: each physical NIC's name (device,
	// "vmnic5") and PCI address (pci).
	Uplinks []types.PhysicalNic
}

// HostProperties are the HostSystem property paths [FromHost] reads.
var HostProperties = []string{"hardware.pciDevice", "hardware.numaInfo", "config.network.pnic"}

// FromHost returns the Host of h, a HostSystem retrieved with (at least)
// [HostProperties]; a property the collector left nil gives an empty
// field.
func FromHost(h *mo.HostSystem) Host {
	var out Host
	if h == nil {
		return out
	}
	if hw := h.Hardware; hw != nil {
		out.Devices = hw.PciDevice
		if hw.NumaInfo != nil {
			out.NUMA = hw.NumaInfo.NumaNode
		}
	}
	if h.Config != nil && h.Config.Network != nil {
		out.Uplinks = h.Config.Network.Pnic
	}
	return out
}

// tree is a Host indexed for the pairing: devices and NUMA listings by
// normalized PCI id.
type tree struct {
	dev   map[string]*types.HostPciDevice
	node  map[string]int      // the node a device is listed under (HostNumaNode.pciId)
	nodes []int               // the host's node ids (typeId), ascending
	up    map[string][]string // ancestors, computed once per device
	links map[[2]string]link  // link, computed once per GPU and PF
}

// norm is the form ids are compared in: lower case, no surrounding space.
// ESXi writes them in lower case; a hand-written one may not be.
func norm(id string) string { return strings.ToLower(strings.TrimSpace(id)) }

func newTree(h Host) *tree {
	t := &tree{dev: make(map[string]*types.HostPciDevice, len(h.Devices)), node: map[string]int{},
		up: map[string][]string{}, links: map[[2]string]link{}}
	for i := range h.Devices {
		d := &h.Devices[i]
		if id := norm(d.Id); t.dev[id] == nil {
			t.dev[id] = d
		}
	}
	for _, n := range h.NUMA {
		t.nodes = append(t.nodes, int(n.TypeId))
		for _, id := range n.PciId {
			id = norm(id)
			// A device listed twice (malformed data) keeps its lowest node,
			// whatever the order of the list.
			if cur, ok := t.node[id]; !ok || int(n.TypeId) < cur {
				t.node[id] = int(n.TypeId)
			}
		}
	}
	slices.Sort(t.nodes)
	t.nodes = slices.Compact(t.nodes)
	return t
}

// ancestors returns the bridges above the device id, nearest first: its
// parentBridge, that bridge's parentBridge, and so on, up to a bridge with
// no parent (a root port on a root bus) or one the host does not list (the
// last element then). A loop in the chain (malformed data) ends it.
func (t *tree) ancestors(id string) []string {
	if a, ok := t.up[id]; ok {
		return a
	}
	var out []string
	defer func() { t.up[id] = out }()
	seen := map[string]bool{id: true}
	for d := t.dev[id]; d != nil; {
		p := norm(d.ParentBridge)
		if p == "" || seen[p] {
			break
		}
		seen[p] = true
		out = append(out, p)
		d = t.dev[p]
	}
	return out
}

// belowRoot reports whether bridge b sits below a root port: the host
// lists it, with a parent bridge of its own. A root port has none (it is on
// a root bus, behind the host bridge, which is not a PCI-to-PCI bridge);
// every port of a PCIe switch has one.
func (t *tree) belowRoot(b string) bool {
	d := t.dev[b]
	return d != nil && norm(d.ParentBridge) != ""
}

// common returns the nearest bridge above both a and b, and the number of
// bridges on the path between them through it (it counted once); "" and 0
// when they share none.
func (t *tree) common(a, b string) (string, int) {
	ua, ub := t.ancestors(a), t.ancestors(b)
	at := make(map[string]int, len(ub))
	for j, x := range ub {
		at[x] = j
	}
	for i, x := range ua {
		if j, ok := at[x]; ok {
			return x, i + j + 1
		}
	}
	return "", 0
}

// numa returns the NUMA node of the device id: the node that lists it,
// else the node that lists its nearest listed bridge (a device is on the
// node of the root port it sits under); -1 when neither is listed.
func (t *tree) numa(id string) int {
	if n, ok := t.node[id]; ok {
		return n
	}
	for _, b := range t.ancestors(id) {
		if n, ok := t.node[b]; ok {
			return n
		}
	}
	return -1
}

// link is what lies between a GPU and a PF.
type link struct {
	loc     Locality
	sw      string // SameSwitch: the nearest common bridge
	hops    int    // SameSwitch: bridges on the path between them
	gpu, pf int    // NUMA nodes, -1 unknown
}

// link classifies the path between GPU g and PF pf: the same PCIe switch
// when their nearest common bridge is below a root port, else by their
// NUMA nodes.
func (t *tree) link(g, pf string) link {
	if l, ok := t.links[[2]string{g, pf}]; ok {
		return l
	}
	l := t.classify(g, pf)
	t.links[[2]string{g, pf}] = l
	return l
}

// classify is link without the memo.
func (t *tree) classify(g, pf string) link {
	l := link{gpu: t.numa(g), pf: t.numa(pf)}
	if b, n := t.common(g, pf); b != "" && t.belowRoot(b) {
		l.loc, l.sw, l.hops = SameSwitch, b, n
		return l
	}
	switch {
	case l.gpu < 0 || l.pf < 0:
		l.loc = Unknown
	case l.gpu == l.pf:
		l.loc = SameNode
	default:
		l.loc = CrossSocket
	}
	return l
}
