package esxiapply

// Creating the VMs: a host whose VM vCenter does not have, and whose
// inventory names a template (inventory.Template), gets its VM cloned from
// that template onto its ESXi host, powered off. The clone is then
// reconfigured like every VM (the second plan, after the clones), and its
// first boot follows: the cloud-init identity in guestinfo (pkg/cloudinit),
// power-on, and a bounded wait for VMware Tools. Nothing that exists is
// deleted or cloned again: a VM of the name, wherever it is, is the VM.
//
// The clone carries FirstBootKey, so that a first boot cut short (a VF that
// waits for the host's reboot, a failed power-on, Ctrl-C) is finished by the
// next apply and a VM rdggen did not clone is never powered on by it.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/vcenter"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/cloudinit"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// FirstBootKey is the ExtraConfig key of a VM rdggen cloned, with the state
// of its first boot: FirstBootPending (cloned, identity not written),
// FirstBootBooting (identity written, power-on not confirmed) and
// FirstBootDone. It is not a guestinfo key: the guest cannot read it.
const (
	FirstBootKey     = "rdggen.firstBoot"
	FirstBootPending = "pending"
	FirstBootBooting = "booting"
	FirstBootDone    = "done"
)

// DefaultToolsTimeout bounds the wait for VMware Tools after a first
// power-on when Options.ToolsTimeout is 0: an EFI boot with passthrough GPUs,
// cloud-init's first run and the guest's services take minutes.
const DefaultToolsTimeout = 10 * time.Minute

// toolsPoll is how often the tools wait reads guest.toolsRunningStatus.
var toolsPoll = time.Second

// clonePlan is one VM to clone.
type clonePlan struct {
	inv  *inventory.Host
	tmpl *mo.VirtualMachine
	err  error

	host                        types.ManagedObjectReference
	datastore, folder, pool     types.ManagedObjectReference
	dsName, folderName, poolNam string
	hwVersion                   string // the template's (config.version), the clone's

	change applyplan.Change // the clone, as planned
	boot   applyplan.Change // the first boot, as planned
	notes  []string

	done    bool
	seconds float64
}

// placement is what planClones reads once for all clones: every
// datastore, folder, resource pool, compute resource and datacenter by
// reference, with names and parents for inventory paths.
type placement struct {
	name    map[types.ManagedObjectReference]string
	parent  map[types.ManagedObjectReference]types.ManagedObjectReference
	kind    map[types.ManagedObjectReference]string
	vmChild map[types.ManagedObjectReference]bool // folders that hold VMs
	rootRP  map[types.ManagedObjectReference]types.ManagedObjectReference
	// of the templates and hosts
	tmplDS     map[types.ManagedObjectReference][]types.ManagedObjectReference
	tmplParent map[types.ManagedObjectReference]types.ManagedObjectReference
	hostDS     map[types.ManagedObjectReference][]types.ManagedObjectReference
	hostParent map[types.ManagedObjectReference]types.ManagedObjectReference
}

// path is ref's inventory path ("/DC0/vm/training"), the root folder left out.
func (p *placement) path(ref types.ManagedObjectReference) string {
	var parts []string
	for r, ok := ref, true; ok; r, ok = p.parent[r] {
		if _, known := p.name[r]; !known {
			break // the root folder, which the container view does not hold
		}
		parts = append(parts, p.name[r])
	}
	slices.Reverse(parts)
	return "/" + strings.Join(parts, "/")
}

// find resolves an inventory path (leading "/") or a unique name among the
// objects of kind for which ok holds.
func (p *placement) find(what, key, v string, ok func(types.ManagedObjectReference) bool) (types.ManagedObjectReference, error) {
	var hits []types.ManagedObjectReference
	for r, n := range p.name {
		if !ok(r) {
			continue
		}
		if strings.HasPrefix(v, "/") && p.path(r) == v || !strings.HasPrefix(v, "/") && n == v {
			hits = append(hits, r)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return types.ManagedObjectReference{}, fmt.Errorf("no %s %q in vCenter (template.%s)", what, v, key)
	}
	var paths []string
	for _, r := range hits {
		paths = append(paths, p.path(r))
	}
	slices.Sort(paths)
	return types.ManagedObjectReference{}, fmt.Errorf("%d %ss are named %q (%s): set template.%s to an inventory path", len(hits), what, v, strings.Join(paths, ", "), key)
}

// readPlacement reads the placement objects (one container view retrieve)
// and the templates' and hosts' datastores and parents (one retrieve).
func readPlacement(ctx context.Context, c *vim25.Client, tmpls, hosts []types.ManagedObjectReference) (*placement, error) {
	p := &placement{name: map[types.ManagedObjectReference]string{}, parent: map[types.ManagedObjectReference]types.ManagedObjectReference{},
		kind: map[types.ManagedObjectReference]string{}, vmChild: map[types.ManagedObjectReference]bool{},
		rootRP: map[types.ManagedObjectReference]types.ManagedObjectReference{},
		tmplDS: map[types.ManagedObjectReference][]types.ManagedObjectReference{}, tmplParent: map[types.ManagedObjectReference]types.ManagedObjectReference{},
		hostDS: map[types.ManagedObjectReference][]types.ManagedObjectReference{}, hostParent: map[types.ManagedObjectReference]types.ManagedObjectReference{}}
	kinds := []string{"Datastore", "Folder", "ResourcePool", "ComputeResource", "ClusterComputeResource", "Datacenter"}
	v, err := view.NewManager(c).CreateContainerView(ctx, c.ServiceContent.RootFolder, kinds, true)
	if err != nil {
		return nil, fmt.Errorf("create container view: %w", err)
	}
	defer vcenter.Cleanup(ctx, v.Destroy) // also when interrupted, but not for long
	var props []types.PropertySpec
	for _, k := range kinds {
		ps := types.PropertySpec{Type: k, PathSet: []string{"name", "parent"}}
		switch k {
		case "Folder":
			ps.PathSet = append(ps.PathSet, "childType")
		case "ComputeResource", "ClusterComputeResource":
			ps.PathSet = append(ps.PathSet, "resourcePool")
		}
		props = append(props, ps)
	}
	pc := property.DefaultCollector(c)
	res, err := pc.RetrieveProperties(ctx, types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
		ObjectSet: []types.ObjectSpec{{Obj: v.Reference(), Skip: types.NewBool(true),
			SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{Type: "ContainerView", Path: "view", Skip: types.NewBool(false)}}}},
		PropSet: props,
	}}})
	if err != nil {
		return nil, fmt.Errorf("retrieve datastores, folders and resource pools: %w", err)
	}
	for _, oc := range res.Returnval {
		p.kind[oc.Obj] = oc.Obj.Type
		for _, ps := range oc.PropSet {
			switch val := ps.Val.(type) {
			case string:
				p.name[oc.Obj] = val
			case types.ManagedObjectReference:
				if ps.Name == "parent" {
					p.parent[oc.Obj] = val
				} else {
					p.rootRP[oc.Obj] = val
				}
			case types.ArrayOfString:
				p.vmChild[oc.Obj] = slices.Contains(val.String, "VirtualMachine")
			}
		}
	}
	var objs []types.ObjectSpec
	for _, r := range append(slices.Clone(tmpls), hosts...) {
		objs = append(objs, types.ObjectSpec{Obj: r})
	}
	res, err = pc.RetrieveProperties(ctx, types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
		ObjectSet: objs,
		PropSet: []types.PropertySpec{
			{Type: "VirtualMachine", PathSet: []string{"datastore", "parent"}},
			{Type: "HostSystem", PathSet: []string{"datastore", "parent"}},
		},
	}}})
	if err != nil {
		return nil, fmt.Errorf("retrieve the templates' and hosts' datastores: %w", err)
	}
	for _, oc := range res.Returnval {
		for _, ps := range oc.PropSet {
			switch val := ps.Val.(type) {
			case types.ArrayOfManagedObjectReference:
				if oc.Obj.Type == "VirtualMachine" {
					p.tmplDS[oc.Obj] = val.ManagedObjectReference
				} else {
					p.hostDS[oc.Obj] = val.ManagedObjectReference
				}
			case types.ManagedObjectReference:
				if oc.Obj.Type == "VirtualMachine" {
					p.tmplParent[oc.Obj] = val
				} else {
					p.hostParent[oc.Obj] = val
				}
			}
		}
	}
	return p, nil
}

// planClones plans a clone for every inventory VM that vCenter lacks and
// whose host has a template; nil when there is none. A clone that cannot
// be planned (no such template, a BIOS template, no datastore, a folder or
// pool that is not there) carries its error; the others are planned.
func planClones(ctx context.Context, c *vim25.Client, inv *inventory.Inventory, st *state, o Options) (map[string]*clonePlan, error) {
	out := map[string]*clonePlan{}
	var tmpls, hosts []types.ManagedObjectReference
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		if h.Template == nil || len(st.vms[h.VM]) > 0 {
			continue
		}
		cp := &clonePlan{inv: h}
		out[h.VM] = cp
		t := h.Template
		switch ts := st.vms[t.Name]; {
		case len(ts) == 0:
			cp.err = fixable(fmt.Errorf("VM %s does not exist and its template %q is not in vCenter", h.VM, t.Name),
				fmt.Sprintf("template %q in vCenter", t.Name), "correct template.name in the inventory, or create the VM")
		case len(ts) > 1:
			cp.err = fmt.Errorf("VM %s does not exist and %d VMs or templates are named %q in vCenter: rename all but one", h.VM, len(ts), t.Name)
		case ts[0].Config == nil:
			cp.err = fmt.Errorf("template %q: its configuration cannot be read (is it inaccessible?)", t.Name)
		case ts[0].Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff:
			// A clone copies the source's disks as they are: of a running
			// (or suspended) VM that is a crash-consistent copy, the guest's
			// file systems mid-write, in every clone.
			cp.err = fixable(fmt.Errorf("%q is a VM that is %s, not a template or a powered-off VM: cloning it would copy its disks while its guest writes them (a crash-consistent copy, file systems mid-write, in every clone), so rdggen does not clone it",
				t.Name, ts[0].Runtime.PowerState),
				fmt.Sprintf("%q a template or a powered-off VM", t.Name),
				"shut the VM down (or convert it to a template) before apply, or name a template in template.name")
		case ts[0].Config.Firmware != vmx.Firmware:
			cp.err = fixable(fmt.Errorf("template %q boots with %s firmware, not %s: passed-through GPUs with 64-bit BARs need EFI (VMware: \"the VM must boot with EFI\" for 64-bit MMIO), and a guest installed for BIOS does not boot once its VM is switched to EFI, so rdggen does not clone it",
				t.Name, orUnset(ts[0].Config.Firmware), vmx.Firmware),
				fmt.Sprintf("template %q with EFI firmware", t.Name),
				"install the template's guest in EFI mode (the guide's template is EFI), or name an EFI template in template.name")
		default:
			cp.tmpl = ts[0]
			cp.hwVersion = ts[0].Config.Version
			if !slices.Contains(tmpls, cp.tmpl.Self) {
				tmpls = append(tmpls, cp.tmpl.Self)
			}
		}
		if a, ok := staticMgmt(h); ok && cp.err == nil && cloudinit.Enabled(h) {
			if _, static := cloudinit.StaticMgmt(h); !static {
				cp.err = fixable(fmt.Errorf("mgmt %s is a static address, but the clone's management interface %s gets its address by DHCP (rdggen's cloud-init network config without template.mgmt_prefix), on a MAC vCenter assigns at the clone, so no DHCP reservation can hold %s for it yet: rdggen apply --target hosts would connect to an address the clone never gets, so rdggen does not clone it",
					a, t.MgmtInterface, a),
					"template.mgmt_prefix set (the clone gets mgmt statically), or mgmt a name the clone's DHCP lease registers",
					"set template.mgmt_prefix (with mgmt_gateway and mgmt_dns) so that cloud-init gives the clone "+a.String()+" statically, or set hosts[].mgmt to the name DNS gives the clone's DHCP lease (or leave it out)")
			}
		}
		if hs := st.hosts[h.ESXi]; len(hs) == 1 {
			cp.host = hs[0].Self
			if !slices.Contains(hosts, cp.host) {
				hosts = append(hosts, cp.host)
			}
		} else if cp.err == nil {
			cp.err = fmt.Errorf("ESXi host %s: %d hosts of that name in vCenter, rdggen needs one", h.ESXi, len(hs))
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	if len(tmpls) == 0 || len(hosts) == 0 {
		return out, nil
	}
	p, err := readPlacement(ctx, c, tmpls, hosts)
	if err != nil {
		return nil, err
	}
	for _, cp := range out {
		if cp.err == nil {
			cp.err = cp.place(p, st)
		}
		if cp.err == nil {
			cp.err = passthroughLimitErr(st.hostByRef(cp.host), cp.hwVersion, cp.inv, fmt.Sprintf("the template %q's", cp.inv.Template.Name))
		}
		cp.plan(o)
	}
	return out, nil
}

// staticMgmt is h's mgmt when it is an IP address (with or without a
// port) rather than a name.
func staticMgmt(h *inventory.Host) (netip.Addr, bool) {
	m := h.Mgmt
	if host, _, err := net.SplitHostPort(m); err == nil {
		m = host
	}
	a, err := netip.ParseAddr(m)
	return a, err == nil
}

// place picks the clone's datastore, folder and resource pool.
func (cp *clonePlan) place(p *placement, st *state) error {
	t, h := cp.inv.Template, cp.inv
	mounted := p.hostDS[cp.host]
	dsNames := func() string {
		var n []string
		for _, r := range mounted {
			n = append(n, p.name[r])
		}
		slices.Sort(n)
		return strings.Join(n, ", ")
	}
	if t.Datastore != "" {
		for _, r := range mounted {
			if p.name[r] == t.Datastore {
				cp.datastore = r
			}
		}
		if cp.datastore.Value == "" {
			return fixable(fmt.Errorf("ESXi host %s does not mount datastore %q (template.datastore; it mounts: %s)", h.ESXi, t.Datastore, dsNames()),
				fmt.Sprintf("datastore %q on ESXi host %s", t.Datastore, h.ESXi), "set template.datastore to a datastore of "+h.ESXi)
		}
	} else {
		for _, r := range p.tmplDS[cp.tmpl.Self] {
			if slices.Contains(mounted, r) {
				cp.datastore = r
				break
			}
		}
		if cp.datastore.Value == "" {
			var on []string
			for _, r := range p.tmplDS[cp.tmpl.Self] {
				on = append(on, p.name[r])
			}
			return fixable(fmt.Errorf("template %q is on datastore %s, which ESXi host %s does not mount (it mounts: %s): set template.datastore", t.Name, strings.Join(on, ", "), h.ESXi, dsNames()),
				fmt.Sprintf("a datastore of ESXi host %s", h.ESXi), "set template.datastore to a datastore of "+h.ESXi)
		}
	}
	cp.dsName = p.name[cp.datastore]
	var err error
	if t.Folder != "" {
		cp.folder, err = p.find("VM folder", "folder", t.Folder, func(r types.ManagedObjectReference) bool { return p.kind[r] == "Folder" && p.vmChild[r] })
		if err != nil {
			return err
		}
	} else if cp.folder = p.tmplParent[cp.tmpl.Self]; cp.folder.Value == "" {
		return fmt.Errorf("template %q has no folder (is it a vApp member?): set template.folder", t.Name)
	}
	cp.folderName = p.path(cp.folder)
	compute := p.hostParent[cp.host]
	switch {
	case t.ResourcePool != "":
		cp.pool, err = p.find("resource pool", "resource_pool", t.ResourcePool, func(r types.ManagedObjectReference) bool { return p.kind[r] == "ResourcePool" })
	case t.Cluster != "":
		var cl types.ManagedObjectReference
		cl, err = p.find("cluster", "cluster", t.Cluster, func(r types.ManagedObjectReference) bool { return p.kind[r] == "ClusterComputeResource" })
		cp.pool = p.rootRP[cl]
	default:
		cp.pool = p.rootRP[compute]
	}
	if err != nil {
		return err
	}
	// The pool must be of the host's own compute resource: vCenter places a
	// clone on a host only within the pool's cluster.
	owner := cp.pool
	for owner.Value != "" && p.kind[owner] == "ResourcePool" {
		owner = p.parent[owner]
	}
	if owner != compute {
		return fixable(fmt.Errorf("resource pool %s is not in ESXi host %s's %s (%s): a clone onto the host must go to one of its pools", p.path(cp.pool), h.ESXi, strings.ToLower(strings.TrimSuffix(compute.Type, "ComputeResource")+" compute resource"), p.path(compute)),
			"a resource pool of "+h.ESXi, "set template.resource_pool or template.cluster to the pool of "+h.ESXi+"'s cluster, or leave both out")
	}
	cp.poolNam = p.path(cp.pool)
	return nil
}

// plan writes the clone's plan lines.
func (cp *clonePlan) plan(o Options) {
	h, t := cp.inv, cp.inv.Template
	size := ""
	if t.CPUs > 0 {
		size += fmt.Sprintf(", %d vCPUs", t.CPUs)
	}
	if t.MemoryGB > 0 {
		size += fmt.Sprintf(", %d GB memory", t.MemoryGB)
	}
	cp.change = applyplan.Change{Op: applyplan.Add, Item: "clone", From: t.Name, To: h.ESXi,
		Text: fmt.Sprintf("clone from %s onto %s (datastore %s)", t.Name, h.ESXi, orUnset(cp.dsName))}
	if cp.err == nil {
		cp.change.Text += fmt.Sprintf(", folder %s, resource pool %s%s; then the settings below, planned once it exists", cp.folderName, cp.poolNam, size)
	}
	cp.boot = firstBootChange(h, FirstBootPending, toolsTimeout(o))
	if !t.CloudInit {
		cp.notes = append(cp.notes, noCloudInitNote(t))
	}
}

func toolsTimeout(o Options) time.Duration {
	if o.ToolsTimeout > 0 {
		return o.ToolsTimeout
	}
	return DefaultToolsTimeout
}

// noCloudInitNote says what a template without cloud-init means.
func noCloudInitNote(t *inventory.Template) string {
	return fmt.Sprintf("template %q has no cloud-init (template.cloud_init: false): no guestinfo identity is written; the guest keeps the template's hostname and network, and `rdggen apply --target hosts` configures its data network", t.Name)
}

// firstBootChange is the plan line of a first boot in state.
func firstBootChange(h *inventory.Host, state string, timeout time.Duration) applyplan.Change {
	var what string
	switch {
	case state == FirstBootBooting:
		what = "power on (its identity is written)"
	case cloudinit.Enabled(h):
		mgmt := h.Template.MgmtInterface + " by DHCP"
		if a, ok := cloudinit.StaticMgmt(h); ok {
			mgmt = h.Template.MgmtInterface + " " + a.String()
			if gw := h.Template.MgmtGateway; gw.IsValid() {
				mgmt += " via " + gw.String()
			}
		}
		what = fmt.Sprintf("cloud-init identity in guestinfo (hostname %s, %s, %s %s MTU %d matched by the VF's MAC, the container routes, user %s), then power on",
			h.Name, mgmt, h.DataInterface, h.Data.Address, h.DataMTU, h.Template.User)
	default:
		what = "power on (no cloud-init: no identity written)"
	}
	return applyplan.Change{Op: applyplan.Run, Item: "first boot", To: state,
		Text: fmt.Sprintf("first boot: %s; wait for VMware Tools (at most %s, --vm-tools-timeout)", what, timeout)}
}

// hostByRef is the host read with ref, nil if none.
func (s *state) hostByRef(ref types.ManagedObjectReference) *mo.HostSystem {
	for _, hs := range s.hosts {
		for _, h := range hs {
			if h.Self == ref {
				return h
			}
		}
	}
	return nil
}

// runClones clones the planned VMs, at most opts.Parallel at once; each
// failure stays with its clone and the others go on.
func runClones(ctx context.Context, c *vim25.Client, w *taskWaiter, clones map[string]*clonePlan, opts Options, out io.Writer) {
	var todo []*clonePlan
	for _, cp := range clones {
		if cp.err == nil {
			todo = append(todo, cp)
		}
	}
	slices.SortFunc(todo, func(a, b *clonePlan) int { return a.inv.Index - b.inv.Index })
	opts.Track.Phase(fmt.Sprintf("cloning %d VM(s), %d at a time", len(todo), opts.Parallel), len(todo))
	forEach(ctx, todo, opts.Parallel, func(cp *clonePlan) {
		name := "vm " + cp.inv.VM
		opts.Track.Begin(name)
		t0 := time.Now()
		cp.err = cp.clone(ctx, c, w)
		cp.seconds = time.Since(t0).Seconds()
		opts.Track.End(name)
		if cp.err != nil {
			fmt.Fprintf(out, "vm %s: clone FAILED after %.1fs: %v\n", cp.inv.VM, cp.seconds, cp.err)
			return
		}
		cp.done = true
		fmt.Fprintf(out, "vm %s: cloned from %s onto %s (datastore %s) (%.1fs)\n", cp.inv.VM, cp.inv.Template.Name, cp.inv.ESXi, cp.dsName, cp.seconds)
	})
}

// clone sends one CloneVM_Task and waits for it.
func (cp *clonePlan) clone(ctx context.Context, c *vim25.Client, w *taskWaiter) error {
	t := cp.inv.Template
	host, ds, pool := cp.host, cp.datastore, cp.pool
	cfg := &types.VirtualMachineConfigSpec{
		ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: FirstBootKey, Value: FirstBootPending}},
	}
	if t.CPUs > 0 {
		cfg.NumCPUs = int32(t.CPUs)
	}
	if t.MemoryGB > 0 {
		cfg.MemoryMB = int64(t.MemoryGB) * 1024
	}
	spec := types.VirtualMachineCloneSpec{
		Location: types.VirtualMachineRelocateSpec{Host: &host, Datastore: &ds, Pool: &pool},
		Config:   cfg,
		PowerOn:  false,
		Template: false,
	}
	task, err := object.NewVirtualMachine(c, cp.tmpl.Self).Clone(ctx, object.NewFolder(c, cp.folder), cp.inv.VM, spec)
	if err == nil {
		err = w.wait(ctx, task.Reference())
	}
	if err != nil {
		return fmt.Errorf("clone from %s onto %s (datastore %s): %w", t.Name, cp.inv.ESXi, cp.dsName, err)
	}
	return nil
}

// firstBoot is the first boot a VM rdggen cloned still needs.
type firstBoot struct {
	state  string // FirstBootPending or FirstBootBooting
	change applyplan.Change
	macs   cloudinit.MACs
}

// planFirstBoot plans the first boot of a VM whose FirstBootKey says it is
// not done; a pending one with cloud-init waits while its SR-IOV adapter
// does (the VF's MAC is what the network config matches).
func (vp *vmPlan) planFirstBoot(o Options) {
	if vp.vm == nil || vp.vm.Config == nil || vp.inv.Template == nil || vp.err != nil {
		return
	}
	state := ""
	for _, ov := range vp.vm.Config.ExtraConfig {
		if o := ov.GetOptionValue(); o.Key == FirstBootKey {
			state = fmt.Sprint(o.Value)
		}
	}
	switch {
	case state == FirstBootPending:
	case state == FirstBootBooting && vp.vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOff:
	default:
		return // not rdggen's clone, done, or up already
	}
	if state == FirstBootPending && cloudinit.Enabled(vp.inv) && (vp.blockedBy || slices.ContainsFunc(vp.waiting, func(l string) bool { return strings.Contains(l, "SR-IOV adapter") })) {
		vp.waiting = append(vp.waiting, "first boot (cloud-init identity, power-on): waits for the SR-IOV adapter, whose MAC the network config matches")
		return
	}
	vp.boot = &firstBoot{state: state, change: firstBootChange(vp.inv, state, toolsTimeout(o))}
	if !cloudinit.Enabled(vp.inv) && state == FirstBootPending {
		vp.host.notes = append(vp.host.notes, "vm "+vp.inv.VM+": "+noCloudInitNote(vp.inv.Template))
	}
}

// finishFirstBoots writes the identity of the VMs whose first boot is
// planned, powers them on, records it and waits for VMware Tools, at most
// opts.Parallel VMs at once for the reconfigures and power-ons and one poll
// for the tools of all.
func finishFirstBoots(ctx context.Context, c *vim25.Client, w *taskWaiter, hosts []*hostPlan, opts Options, out io.Writer) {
	var todo []*vmPlan
	for _, hp := range hosts {
		for _, vp := range hp.vms {
			if vp.boot == nil || vp.err != nil || vp.vm == nil {
				continue
			}
			if vp.sriovWaits() {
				// This run's reconfigure postponed the VF (the host's SR-IOV
				// becomes active at its reboot): the identity matches the
				// VF's MAC, so the first boot waits with it.
				line := fmt.Sprintf("first boot waits for ESXi host %s's reboot: its SR-IOV adapter (whose MAC the cloud-init network config matches) is attached at the first apply after it; not powered on", hp.name)
				vp.waiting = append(vp.waiting, line)
				vp.boot = nil
				fmt.Fprintf(out, "vm %s: %s\n", vp.inv.VM, line)
				continue
			}
			todo = append(todo, vp)
		}
	}
	if len(todo) == 0 {
		return
	}
	opts.Track.Phase(fmt.Sprintf("first boot of %d VM(s): identity, power-on", len(todo)), len(todo))
	if err := readDevicesOf(ctx, c, todo); err != nil {
		for _, vp := range todo {
			vp.err = err
		}
		return
	}
	var mu sync.Mutex
	var up []*vmPlan
	forEach(ctx, todo, opts.Parallel, func(vp *vmPlan) {
		name := "vm " + vp.inv.VM
		opts.Track.Begin(name)
		defer opts.Track.End(name)
		t0 := time.Now()
		vp.started = true
		err := vp.firstBoot(ctx, c, w)
		vp.seconds += time.Since(t0).Seconds()
		if err != nil {
			vp.err = err
			vp.applied = false
			fmt.Fprintf(out, "vm %s: first boot FAILED: %v\n", vp.inv.VM, err)
			return
		}
		vp.applied = true
		what := "powered on"
		if cloudinit.Enabled(vp.inv) && vp.boot.state == FirstBootPending {
			macs := fmt.Sprintf("%s %s, %s %s", vp.inv.Template.MgmtInterface, vp.boot.macs.Mgmt, vp.inv.DataInterface, vp.boot.macs.Data)
			for r, mac := range vp.boot.macs.Rails {
				if r > 0 && r < len(vp.inv.Rails) {
					macs += fmt.Sprintf(", %s %s", vp.inv.Rails[r].Interface, mac)
				}
			}
			what = fmt.Sprintf("cloud-init identity written (%s), powered on", macs)
		}
		fmt.Fprintf(out, "vm %s: first boot: %s (%.1fs)\n", vp.inv.VM, what, time.Since(t0).Seconds())
		mu.Lock()
		up = append(up, vp)
		mu.Unlock()
	})
	waitTools(ctx, c, up, toolsTimeout(opts), opts, out)
}

// sriovWaits reports whether vp's first boot needs its SR-IOV adapter (a
// pending boot with cloud-init) and the adapter waits for the host's
// reboot (planned waiting, or postponed by this run's reconfigure).
func (vp *vmPlan) sriovWaits() bool {
	if vp.boot == nil || vp.boot.state != FirstBootPending || !cloudinit.Enabled(vp.inv) {
		return false
	}
	return vp.blockedBy || slices.ContainsFunc(vp.waiting, func(l string) bool { return strings.Contains(l, "SR-IOV adapter") })
}

// readDevicesOf reads the VMs' devices again: the adapters of a clone and
// the VF just attached, with the MACs vCenter assigned.
func readDevicesOf(ctx context.Context, c *vim25.Client, vps []*vmPlan) error {
	var refs []types.ManagedObjectReference
	for _, vp := range vps {
		refs = append(refs, vp.vm.Self)
	}
	var vms []mo.VirtualMachine
	if err := property.DefaultCollector(c).Retrieve(ctx, refs, []string{"config.hardware.device"}, &vms); err != nil {
		return fmt.Errorf("read the VMs' adapters for their first boot: %w", err)
	}
	byRef := map[types.ManagedObjectReference]*mo.VirtualMachine{}
	for i := range vms {
		byRef[vms[i].Self] = &vms[i]
	}
	for _, vp := range vps {
		vm := byRef[vp.vm.Self]
		if vm == nil || vm.Config == nil {
			continue
		}
		if vp.multiRail() {
			vp.boot.macs.Rails = make([]string, len(vp.inv.Rails))
		}
		for _, d := range vm.Config.Hardware.Device {
			card, ok := d.(types.BaseVirtualEthernetCard)
			if !ok {
				continue
			}
			mac := strings.ToLower(card.GetVirtualEthernetCard().MacAddress)
			if sc, sriov := d.(*types.VirtualSriovEthernetCard); sriov {
				if vp.multiRail() {
					vp.setRailMAC(sc, mac)
				} else if vp.boot.macs.Data == "" {
					vp.boot.macs.Data = mac
				}
			} else if vp.boot.macs.Mgmt == "" {
				vp.boot.macs.Mgmt = mac
			}
		}
	}
	return nil
}

// setRailMAC records the MAC of a VM of several rails' SR-IOV adapter sc
// as its rail's, the rail whose PF backs it (rail 0's is also Data): each
// rail's VF is matched by its own MAC in the guest's network config.
func (vp *vmPlan) setRailMAC(sc *types.VirtualSriovEthernetCard, mac string) {
	if sc.SriovBacking == nil || sc.SriovBacking.PhysicalFunctionBacking == nil {
		return
	}
	id := strings.ToLower(strings.TrimPrefix(sc.SriovBacking.PhysicalFunctionBacking.Id, "Automatic-"))
	m := &vp.boot.macs
	for r, vmnic := range vp.railPFs() {
		if pf := vp.host.pf(vmnic); pf != nil && pf.id == id && r < len(m.Rails) && m.Rails[r] == "" {
			m.Rails[r] = mac
			if r == 0 {
				m.Data = mac
			}
			return
		}
	}
}

// firstBoot writes the identity (a pending VM with cloud-init), powers the
// VM on and records that.
func (vp *vmPlan) firstBoot(ctx context.Context, c *vim25.Client, w *taskWaiter) error {
	vm := object.NewVirtualMachine(c, vp.vm.Self)
	reconfig := func(opts []types.BaseOptionValue, what string) error {
		t, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: opts})
		if err == nil {
			err = w.wait(ctx, t.Reference())
		}
		if err != nil {
			return fmt.Errorf("VM %s: %s: %w", vp.inv.VM, what, err)
		}
		return nil
	}
	if vp.boot.state == FirstBootPending {
		opts := []types.BaseOptionValue{&types.OptionValue{Key: FirstBootKey, Value: FirstBootBooting}}
		if cloudinit.Enabled(vp.inv) {
			m := vp.boot.macs
			switch {
			case m.Data == "" && vp.multiRail():
				return fmt.Errorf("VM %s has no SR-IOV adapter of rail 0 (a VF of %s) after its reconfiguration: its identity would lack the data network; not powered on", vp.inv.VM, vp.inv.NIC.PF)
			case m.Data == "":
				return fmt.Errorf("VM %s has no SR-IOV adapter after its reconfiguration: its identity would lack the data network; not powered on", vp.inv.VM)
			case slices.Contains(m.Rails, ""):
				r := slices.Index(m.Rails, "")
				return fmt.Errorf("VM %s has no SR-IOV adapter of rail %d (a VF of %s) after its reconfiguration: its identity would lack that rail's MAC; not powered on", vp.inv.VM, r, vp.railPFs()[r])
			case m.Mgmt == "":
				return fmt.Errorf("VM %s has no management adapter (its template's first network adapter that is not SR-IOV, %s in the guest): not powered on", vp.inv.VM, vp.inv.Template.MgmtInterface)
			}
			for _, s := range cloudinit.GuestInfo(vp.host.inv, vp.inv, m) {
				opts = append(opts, &types.OptionValue{Key: s.Key, Value: s.Value})
			}
		}
		if err := reconfig(opts, "write the first-boot identity"); err != nil {
			return err
		}
	}
	t, err := vm.PowerOn(ctx)
	if err == nil {
		err = w.wait(ctx, t.Reference())
	}
	if err != nil {
		return fmt.Errorf("VM %s: power on: %w", vp.inv.VM, err)
	}
	return reconfig([]types.BaseOptionValue{&types.OptionValue{Key: FirstBootKey, Value: FirstBootDone}}, "record the first boot")
}

// waitTools waits until VMware Tools runs in every VM of vps, reading all of
// them in one retrieve per toolsPoll, for at most timeout; a VM whose tools
// do not report in time fails, naming the bound and its flag.
func waitTools(ctx context.Context, c *vim25.Client, vps []*vmPlan, timeout time.Duration, opts Options, out io.Writer) {
	if len(vps) == 0 {
		return
	}
	done := opts.Track.Wait(fmt.Sprintf("VMware Tools in %d VM(s) (bound: --vm-tools-timeout %s)", len(vps), timeout))
	defer done()
	t0 := time.Now()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	left := slices.Clone(vps)
	pc := property.DefaultCollector(c)
	for len(left) > 0 {
		var refs []types.ManagedObjectReference
		for _, vp := range left {
			refs = append(refs, vp.vm.Self)
		}
		var vms []mo.VirtualMachine
		err := pc.Retrieve(wctx, refs, []string{"guest.toolsRunningStatus"}, &vms)
		if err == nil {
			running := map[types.ManagedObjectReference]bool{}
			for _, vm := range vms {
				running[vm.Self] = vm.Guest != nil && vm.Guest.ToolsRunningStatus == string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)
			}
			left = slices.DeleteFunc(left, func(vp *vmPlan) bool {
				if running[vp.vm.Self] {
					fmt.Fprintf(out, "vm %s: VMware Tools running (%.1fs after power-on)\n", vp.inv.VM, time.Since(t0).Seconds())
				}
				return running[vp.vm.Self]
			})
		}
		if len(left) == 0 {
			return
		}
		select {
		case <-wctx.Done():
			why := fmt.Errorf("VMware Tools did not report within %s (--vm-tools-timeout): the VM is powered on; check its console (EFI boot, the disk, cloud-init's log /var/log/cloud-init.log) and that open-vm-tools is installed", timeout)
			if ctx.Err() != nil {
				why = ctx.Err()
			}
			for _, vp := range left {
				vp.err, vp.applied = fmt.Errorf("VM %s: %w", vp.inv.VM, why), false
				fmt.Fprintf(out, "vm %s: FAILED: %v\n", vp.inv.VM, vp.err)
			}
			return
		case <-time.After(toolsPoll):
		}
	}
}

// allChanges is the VM's plan in order: its clone (planned, or made by this
// run), its reconfiguration, its first boot; never nil.
func (vp *vmPlan) allChanges() []applyplan.Change {
	out := []applyplan.Change{}
	if cp := vp.clone; cp != nil && (vp.vm == nil || cp.done) {
		out = append(out, cp.change)
		if vp.vm == nil && cp.err == nil {
			out = append(out, cp.boot)
		}
	}
	out = append(out, vp.changes...)
	if vp.boot != nil {
		out = append(out, vp.boot.change)
	}
	return out
}

// cloneThenPlan clones the planned VMs (after the gate), reads vCenter again
// and plans again, now with the clones; without clones it returns hosts.
func cloneThenPlan(ctx context.Context, c *vim25.Client, inv *inventory.Inventory, st *state, hosts []*hostPlan, opts Options, out io.Writer) ([]*hostPlan, error) {
	n := 0
	for _, cp := range st.clones {
		if cp.err == nil {
			n++
		}
	}
	if n == 0 {
		return hosts, nil
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w := newTaskWaiter(c)
	go w.run(wctx)
	runClones(ctx, c, w, st.clones, opts, out)
	clones := st.clones
	st2, err := readState(ctx, c, vmReadOf(inv), inventoryVMs(inv), inv.ESXiHosts(), opts.Parallel)
	if err != nil {
		return nil, fmt.Errorf("after the clones: %w", err)
	}
	st2.clones = clones
	hosts = plan(ctx, c, inv, st2, opts)
	var b strings.Builder
	b.WriteString("after the clones:\n")
	printPlan(&b, hosts, &Result{})
	io.WriteString(out, b.String())
	return hosts, nil
}

// firstBoots runs finishFirstBoots with its own task poll.
func firstBoots(ctx context.Context, c *vim25.Client, hosts []*hostPlan, opts Options, out io.Writer) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w := newTaskWaiter(c)
	go w.run(wctx)
	finishFirstBoots(ctx, c, w, hosts, opts, out)
}

// causeError is a task's error with what its fault says beyond its
// message: the fault's cause and messages (vCenter puts the reason a clone
// or power-on failed there, e.g. the datastore that is full).
type causeError struct {
	err    task.Error
	detail string
}

func (e causeError) Error() string { return e.err.Error() + ": " + e.detail }
func (e causeError) Unwrap() error { return e.err }

// withCause adds the fault's cause and messages to e, when it has any.
func withCause(e task.Error) error {
	if e.LocalizedMethodFault == nil || e.LocalizedMethodFault.Fault == nil {
		return e
	}
	mf := e.LocalizedMethodFault.Fault.GetMethodFault()
	if mf == nil {
		return e
	}
	var more []string
	if c := mf.FaultCause; c != nil && c.LocalizedMessage != "" {
		more = append(more, c.LocalizedMessage)
	}
	for _, m := range mf.FaultMessage {
		if m.Message != "" {
			more = append(more, m.Message)
		}
	}
	if len(more) == 0 {
		return e
	}
	return causeError{e, strings.Join(more, "; ")}
}
