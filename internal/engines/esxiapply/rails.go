package esxiapply

// VMs of several rails (docs/rails.md, "The ESXi hosts"): one SR-IOV VF per
// rail from that rail's PF (plan.go, planSRIOV), the GPUs paired with the
// rails by the host's PCI tree (pkg/railpair), each device on its virtual
// NUMA node where the VM's hardware version allows, and the vendor device
// groups the host offers reported. A VM of one rail is planned as before:
// nothing here applies to it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/railpair"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// multiRail reports whether the VM has several rails.
func (p *vmPlan) multiRail() bool { return p.inv.MultiRail() }

// pairRequest is the VM's side of the pairing: its rails' uplinks, its
// GPU slots (gpus the addresses given or kept, "" to choose) and the rail
// of each slot (the inventory's GPU.Rail: gpus[].rail, else by position).
func (p *vmPlan) pairRequest(gpus, free []string) railpair.Request {
	railOf := make([]int, len(p.inv.GPUs))
	for i, g := range p.inv.GPUs {
		railOf[i] = g.Rail
	}
	return railpair.Request{Rails: p.railPFs(), GPUs: gpus, Free: free, RailOf: railOf}
}

// pairGPUs resolves the GPUs of a VM of several rails that the inventory
// does not place (gpus[].pci), with the host's PCI device list: the GPUs
// the VM already has stay (as the pairing would choose among them), and
// the rest are chosen by railpair.Pair from the host's free GPUs of the
// model: under the rail PF's PCIe switch, else on its NUMA node, else
// anywhere with a warning. This replaces the refusal of a choice among
// more free GPUs than needed: the pairing makes it, the same for the same
// host and inventory. claimed and used are resolveGPUs' (PCI address → VM
// of this run, and → VM that has it); the VM's GPUs are added to claimed.
// The pairing, its lines and warnings go to the VM's plan.
func (hp *hostPlan) pairGPUs(rh railpair.Host, vp *vmPlan, claimed, used map[string]string) {
	h := vp.inv
	var empties []int
	for i, g := range h.GPUs {
		if g.PCI == "" {
			empties = append(empties, i)
		}
	}
	var pool []string // GPUs the pairing chooses from
	kept := map[string]bool{}
	if len(empties) > 0 {
		g := h.GPUs[empties[0]]
		for _, i := range empties[1:] {
			if gi := h.GPUs[i]; modelKey(gi) != modelKey(g) {
				vp.err = fixable(fmt.Errorf("GPUs without a pci address are of several models (%s, %s): the pairing chooses GPUs of one model; set gpus[].pci in the inventory", g.Model, gi.Model),
					fmt.Sprintf("gpus[].pci set for the %s and %s GPUs", g.Model, gi.Model), "set gpus[].pci in the inventory")
				return
			}
		}
		for _, id := range vmPassthroughIDs(vp.vm) {
			if d := hp.device(id); d != nil && claimed[id] == "" && hp.matches(g, d) && !kept[id] {
				kept[id] = true
				pool = append(pool, id)
			}
		}
		if len(pool) < len(empties) {
			var busy []string
			for id, d := range hp.devices {
				if !vmx.MatchesDevice(g, uint16(d.VendorId), uint16(d.DeviceId), d.DeviceName) || claimed[id] != "" || kept[id] {
					continue
				}
				if o := used[id]; o != "" && o != h.VM {
					busy = append(busy, fmt.Sprintf("%s is passed through to VM %s", id, o))
					continue
				}
				pool = append(pool, id)
			}
			slices.Sort(busy)
			if len(pool) < len(empties) {
				err := fmt.Errorf("needs %d more %s on ESXi host %s but %d are free", len(empties), g.Model, hp.name, len(pool))
				if len(busy) > 0 {
					err = fmt.Errorf("%w: GPU %s", err, strings.Join(busy, ", "))
				}
				vp.err = fixable(err, fmt.Sprintf("one free %s on ESXi host %s for each GPU without a pci address", g.Model, hp.name),
					fmt.Sprintf("free %d %s on ESXi host %s (remove them from the VMs that have them) or list fewer gpus in the inventory", len(empties)-len(pool), g.Model, hp.name))
				return
			}
		}
	}
	// First choose among everything, then pair again with the GPUs the VM
	// keeps given (and marked so), the new ones to choose.
	first, err := railpair.Pair(rh, vp.pairRequest(slices.Clone(vp.gpus), pool))
	if err != nil {
		hp.pairFailed(vp, err, len(empties) > 0)
		return
	}
	gpus := slices.Clone(vp.gpus)
	var chosen []string
	for _, r := range first.Rails {
		for _, g := range r.GPUs {
			if !g.Chosen {
				continue
			}
			if kept[g.PCI] {
				gpus[g.Slot] = g.PCI
				delete(kept, g.PCI)
			} else {
				chosen = append(chosen, g.PCI)
			}
		}
	}
	final, err := railpair.Pair(rh, vp.pairRequest(gpus, chosen))
	if err != nil {
		hp.pairFailed(vp, err, len(empties) > 0)
		return
	}
	vp.pairing = &final
	for _, r := range final.Rails {
		for _, g := range r.GPUs {
			vp.gpus[g.Slot] = g.PCI
			claimed[g.PCI] = h.VM
		}
	}
	for _, l := range final.Lines() {
		vp.notes = append(vp.notes, "GPU–rail pairing: "+l)
	}
	for _, w := range final.Warnings() {
		vp.notes = append(vp.notes, "warning: "+w)
	}
	if len(kept) > 0 {
		var ids []string
		for id := range kept {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		vp.notes = append(vp.notes, fmt.Sprintf("the VM has GPU %s, which the pairing does not keep (rdggen removes no device: remove it by hand when it is not wanted)", strings.Join(ids, ", ")))
	}
}

// pairFailed is a pairing that cannot be made: an error of the VM when it
// had GPUs to choose, a note when its GPUs are all placed (the pairing
// then only reports).
func (hp *hostPlan) pairFailed(vp *vmPlan, err error, choose bool) {
	var fe *fixErr
	switch {
	case choose && errors.As(hp.blocked, &fe):
		// A PF the host cannot give: its problem is the cause.
		vp.err = fixable(err, fe.expected, fe.fix)
		return
	case choose:
		vp.err = fixable(err, "a GPU–rail pairing on ESXi host "+hp.name,
			"correct the rails' pf and the gpus of "+vp.inv.Name+" in the inventory, or set gpus[].pci")
		return
	}
	vp.notes = append(vp.notes, "no GPU–rail pairing: "+err.Error())
}

// modelKey is the key resolveGPUs groups GPUs without an address by: the
// model's family and memory size, "H100/80".
func modelKey(g inventory.GPU) string {
	return fmt.Sprintf("%s/%d", vmx.ParseModel(g.Model).Family, g.MemoryGB)
}

// planVNUMA gives each of the VM's GPUs and VFs the virtual NUMA node of
// its host node (railpair.Pairing.VNUMA: hardware version 20 and later, a
// fixed virtual NUMA size with as many nodes as the host), or notes why
// not. Only for a VM of several rails with a pairing.
func (p *vmPlan) planVNUMA() {
	p.vnode, p.vfNode = nil, nil
	if p.pairing == nil || !p.multiRail() {
		return
	}
	as, err := p.pairing.VNUMA(railpair.VMFrom(p.vm.Config))
	if err != nil {
		p.notes = append(p.notes, "no virtual NUMA node per device: "+err.Error())
		return
	}
	p.vnode = map[string]int32{}
	p.vfNode = make([]int32, len(p.pairing.Rails))
	for _, a := range as {
		switch a.Kind {
		case railpair.KindGPU:
			p.vnode[a.PCI] = a.VNode
		case railpair.KindVF:
			p.vfNode[a.Rail] = a.VNode
		}
	}
}

// gpuNode is the virtual NUMA node the GPU at id gets, nil for none.
func (p *vmPlan) gpuNode(id string) *int32 {
	if n, ok := p.vnode[id]; ok {
		return types.NewInt32(n)
	}
	return nil
}

// railNode is the virtual NUMA node rail's VF gets, nil for none.
func (p *vmPlan) railNode(rail int) *int32 {
	if rail < len(p.vfNode) {
		return types.NewInt32(p.vfNode[rail])
	}
	return nil
}

// hostNodeOfGPU is the host NUMA node of the VM's GPU at id, -1 unknown.
func (p *vmPlan) hostNodeOfGPU(id string) int {
	if p.pairing != nil {
		for _, r := range p.pairing.Rails {
			for _, g := range r.GPUs {
				if g.PCI == id {
					return g.Node
				}
			}
		}
	}
	return -1
}

// sameNode reports whether a device's numaNode cur is want: unset counts
// as -1, "no affinity" (VirtualDevice.numaNode, vSphere API 8.0.0.1: "A
// negative number means there is no affinity for the device").
func sameNode(cur *int32, want int32) bool {
	if cur == nil || *cur < 0 {
		return want < 0
	}
	return *cur == want
}

// numaChange is the plan's change of a device's virtual NUMA node.
func numaChange(device string, cur *int32, want int32, hostNode int) applyplan.Change {
	from := "unset"
	if cur != nil {
		from = fmt.Sprint(*cur)
	}
	why := fmt.Sprintf("host NUMA node %d", hostNode)
	if hostNode < 0 {
		why = "host NUMA node unknown: no affinity"
	}
	return applyplan.Change{Op: applyplan.Update, Item: device + " numaNode", From: from, To: fmt.Sprint(want),
		Text: fmt.Sprintf("%s: virtual NUMA node %s → %d (%s)", device, from, want, why)}
}

// readGroups reads, for each host in hosts with a VM of several rails that
// has a pairing, the vendor device groups it offers (QueryConfigTarget's
// vendorDeviceGroupInfo, through one of its VMs' environment browser) and
// reports which rails they fit (railpair.DeviceGroups, GroupLines) as
// notes of those VMs: a report, never a requirement. At most parallel
// hosts at once; a host that cannot be asked gets groupsErr, noted.
func readGroups(ctx context.Context, c *vim25.Client, hosts []*hostPlan, parallel int) {
	var todo []*hostPlan
	for _, hp := range hosts {
		if hp.err == nil && slices.ContainsFunc(hp.vms, func(vp *vmPlan) bool { return vp.pairing != nil }) {
			todo = append(todo, hp)
		}
	}
	forEach(ctx, todo, parallel, func(hp *hostPlan) {
		eb := hp.environmentBrowser()
		if eb == nil {
			hp.groupsErr = errors.New("no environment browser to ask")
		} else {
			ref := hp.host.Self
			r, err := methods.QueryConfigTarget(ctx, c, &types.QueryConfigTarget{This: *eb, Host: &ref})
			switch {
			case err != nil:
				hp.groupsErr = fmt.Errorf("QueryConfigTarget: %w", err)
			case r.Returnval != nil:
				rh := railpair.FromHost(hp.host)
				for _, vp := range hp.vms {
					if vp.pairing == nil {
						continue
					}
					vp.notes = append(vp.notes, railpair.GroupLines(railpair.DeviceGroups(rh, *vp.pairing, r.Returnval.VendorDeviceGroupInfo))...)
				}
			}
		}
		if hp.groupsErr != nil {
			for _, vp := range hp.vms {
				if vp.pairing != nil {
					vp.notes = append(vp.notes, "vendor device groups not read: "+hp.groupsErr.Error())
				}
			}
		}
	})
}

// environmentBrowser is one of the host's VMs' environment browser (read
// by readDevices), nil if none.
func (hp *hostPlan) environmentBrowser() *types.ManagedObjectReference {
	for _, vp := range hp.vms {
		if vp.vm != nil && vp.vm.EnvironmentBrowser.Value != "" {
			ref := vp.vm.EnvironmentBrowser
			return &ref
		}
	}
	return nil
}

// railVFs is how many of h's VM's SR-IOV adapters count against its
// host's passthrough limit (limits.go): one VF per rail for a VM of
// several rails, as validation counts them (docs/rules.md, "Rails"); none
// for a VM of one rail, whose adapter is not counted.
func railVFs(h *inventory.Host) int {
	if !h.MultiRail() {
		return 0
	}
	return len(h.Rails)
}
