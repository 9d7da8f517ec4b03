// Package vsphere is the apply engine of `rdggen apply --target esxi`: it makes
// vCenter's VMs and ESXi hosts match what pkg/vmx computes, through govmomi.
//
// One apply: connect (connect.go); read every VM, host and network in one
// PropertyCollector retrieve (state.go); plan per ESXi host and per VM
// (plan.go); print the plan; then, unless it is a dry run, change the hosts
// (UpdatePassthruConfig, nmlx5_core parameters) and reconfigure the VMs in
// parallel with a bound, waiting on all tasks with one poll (tasks.go). A VM's
// failure never stops the others; the Result says what failed.
package vsphere

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// Options control one apply.
type Options struct {
	// DryRun prints the plan and changes nothing.
	DryRun bool
	// Parallel bounds the hosts and VMs changed at once (≥ 1).
	Parallel int
	// Out receives the plan and per-VM/host outcomes.
	Out io.Writer
	// Modules reads and sets nmlx5_core parameters; nil means esxcli over the
	// vSphere API (ESXCLIModuleParams).
	Modules ModuleParams
}

// Result is the outcome of one apply.
type Result struct {
	DryRun bool
	// VMs changed (or, in a dry run, to change), up to date, failed.
	VMsChanged, VMsUnchanged int
	// Hosts changed (or to change) and up to date.
	HostsChanged, HostsUnchanged int
	// Failed lists "name: reason" for every VM or host that failed.
	Failed []string
	// Reboot lists the ESXi hosts that need a reboot for settings to take
	// effect, with the reason.
	Reboot []string
}

// Err is nil when nothing failed, else an error naming every failure.
func (r *Result) Err() error {
	if len(r.Failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d failed: %s", len(r.Failed), strings.Join(r.Failed, "; "))
}

// Summary is the one line the CLI prints at the end.
func (r *Result) Summary() string {
	if !r.DryRun && r.VMsChanged == 0 && r.HostsChanged == 0 && len(r.Failed) == 0 {
		s := fmt.Sprintf("esxi: nothing to do: %d VM(s) and %d ESXi host(s) already match the inventory", r.VMsUnchanged, r.HostsUnchanged)
		if len(r.Reboot) > 0 {
			s += "; reboot pending: " + r.rebootText()
		}
		return s
	}
	verb := "changed"
	if r.DryRun {
		verb = "to change (dry run, nothing sent)"
	}
	s := fmt.Sprintf("esxi: %d VM(s) and %d host(s) %s, %d VM(s) and %d host(s) already matched, %d failed",
		r.VMsChanged, r.HostsChanged, verb, r.VMsUnchanged, r.HostsUnchanged, len(r.Failed))
	if len(r.Reboot) > 0 {
		s += "; reboot needed: " + r.rebootText()
	}
	return s
}

// rebootText names up to 3 hosts that need a reboot, else counts them (the
// per-host reasons are printed above the summary).
func (r *Result) rebootText() string {
	if len(r.Reboot) <= 3 {
		return strings.Join(r.Reboot, ", ")
	}
	return fmt.Sprintf("%d ESXi hosts (listed above)", len(r.Reboot))
}

// Apply makes vCenter match the inventory (see the package doc). The error
// is only for failures that stop everything (the state cannot be read);
// per-VM and per-host failures are in the Result.
func Apply(ctx context.Context, c *vim25.Client, inv *inventory.Inventory, opts Options) (*Result, error) {
	if opts.Parallel < 1 {
		opts.Parallel = 1
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Modules == nil {
		opts.Modules = ESXCLIModuleParams{Client: c}
	}
	st, err := readState(ctx, c)
	if err != nil {
		return nil, err
	}
	res := &Result{DryRun: opts.DryRun}
	hosts := plan(ctx, inv, st, opts)
	printPlan(opts.Out, hosts, res)
	if opts.DryRun {
		return res, nil
	}
	execute(ctx, c, hosts, opts)
	report(opts.Out, hosts, res)
	return res, nil
}

// plan builds the host and VM plans, reading module parameters (bounded).
func plan(ctx context.Context, inv *inventory.Inventory, st *state, opts Options) []*hostPlan {
	var hosts []*hostPlan
	for _, name := range inv.ESXiHosts() {
		hp := planHost(inv, st, name)
		for _, h := range inv.HostsOnESXi(name) {
			vp := &vmPlan{inv: h, host: hp}
			hp.vms = append(hp.vms, vp)
			if hp.err != nil {
				vp.err = hp.err
				continue
			}
			switch vms := st.vms[h.VM]; {
			case len(vms) == 0:
				vp.err = fmt.Errorf("VM %s not found in vCenter", h.VM)
			case len(vms) > 1:
				vp.err = fmt.Errorf("%d VMs are named %s in vCenter; rename all but one", len(vms), h.VM)
			case vms[0].Runtime.Host == nil || *vms[0].Runtime.Host != hp.host.Self:
				where := "no host"
				if r := vms[0].Runtime.Host; r != nil {
					if o := st.hostName(*r); o != "" {
						where = o
					}
				}
				vp.err = fmt.Errorf("VM %s is on %s, the inventory places it on %s (passthrough devices belong to one host)", h.VM, where, name)
			default:
				vp.vm = vms[0]
			}
		}
		if hp.err == nil {
			hp.resolveGPUs(st)
			for _, vp := range hp.vms {
				if vp.err == nil {
					planVM(st, vp)
				}
				if vp.err == nil && len(vp.coldOnly) > 0 && vp.vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
					vp.err = fmt.Errorf("VM %s is %s; these changes need it powered off: %s. rdggen does not power VMs off: shut it down, then re-run apply",
						vp.inv.VM, vp.vm.Runtime.PowerState, strings.Join(vp.coldOnly, "; "))
				}
			}
			hp.planPassthrough()
		}
		hosts = append(hosts, hp)
	}
	// nmlx5_core parameters, read in parallel.
	forEach(ctx, hosts, opts.Parallel, func(hp *hostPlan) {
		if hp.err != nil {
			return
		}
		want := vmx.ModuleParams(hp.nic, inv.RoCE)
		cur, err := opts.Modules.Get(ctx, Host{Name: hp.name, Ref: hp.host.Self}, vmx.NICModule)
		if err != nil {
			hp.fail(fmt.Errorf("read %s parameters: %w", vmx.NICModule, err))
			return
		}
		hp.paramsCur = cur
		hp.paramsNew, hp.paramsChanged = vmx.MergeParams(cur, want)
		if hp.paramsChanged {
			hp.lines = append(hp.lines, fmt.Sprintf("%s parameters: %q → %q", vmx.NICModule, cur, hp.paramsNew))
			hp.reboot = append(hp.reboot, vmx.NICModule+" parameters")
		}
	})
	return hosts
}

// fail marks a host and all its VMs failed.
func (hp *hostPlan) fail(err error) {
	hp.err = err
	for _, vp := range hp.vms {
		if vp.err == nil {
			vp.err = err
		}
	}
}

func (s *state) hostName(ref types.ManagedObjectReference) string {
	for name, hs := range s.hosts {
		for _, h := range hs {
			if h.Self == ref {
				return name
			}
		}
	}
	return ""
}

// printPlan writes what will change, from what to what, and counts.
func printPlan(w io.Writer, hosts []*hostPlan, res *Result) {
	upToDate := 0
	for _, hp := range hosts {
		switch {
		case hp.err != nil:
			fmt.Fprintf(w, "host %s: cannot apply: %v\n", hp.name, hp.err)
		case len(hp.lines) > 0 || hp.paramsChanged:
			fmt.Fprintf(w, "host %s:\n", hp.name)
			for _, l := range hp.lines {
				fmt.Fprintf(w, "  %s\n", l)
			}
			res.HostsChanged++
		default:
			res.HostsUnchanged++
		}
		for _, vp := range hp.vms {
			switch {
			case vp.err != nil:
				if vp.err != hp.err {
					fmt.Fprintf(w, "vm %s: cannot apply: %v\n", vp.inv.VM, vp.err)
				}
			case vp.changed():
				fmt.Fprintf(w, "vm %s (%s):\n", vp.inv.VM, hp.name)
				for _, l := range vp.lines {
					fmt.Fprintf(w, "  %s\n", l)
				}
				res.VMsChanged++
			default:
				upToDate++
				res.VMsUnchanged++
			}
		}
	}
	if upToDate > 0 || res.HostsUnchanged > 0 {
		fmt.Fprintf(w, "%d VM(s) and %d ESXi host(s) already match the inventory\n", upToDate, res.HostsUnchanged)
	}
	if res.DryRun {
		collect(hosts, res)
	}
}

// collect fills Failed and Reboot from the plans.
func collect(hosts []*hostPlan, res *Result) {
	for _, hp := range hosts {
		if hp.err != nil {
			res.Failed = append(res.Failed, "host "+hp.name+": "+hp.err.Error())
		} else if len(hp.reboot) > 0 {
			res.Reboot = append(res.Reboot, fmt.Sprintf("%s (%s)", hp.name, strings.Join(slices.Compact(hp.reboot), ", ")))
		}
		for _, vp := range hp.vms {
			if vp.err != nil && vp.err != hp.err {
				res.Failed = append(res.Failed, "vm "+vp.inv.VM+": "+vp.err.Error())
			}
		}
	}
}

// execute changes the hosts, then reconfigures the VMs.
func execute(ctx context.Context, c *vim25.Client, hosts []*hostPlan, opts Options) {
	forEach(ctx, hosts, opts.Parallel, func(hp *hostPlan) { applyHost(ctx, c, hp, opts) })
	var vms []*vmPlan
	for _, hp := range hosts {
		for _, vp := range hp.vms {
			if vp.err == nil && vp.changed() {
				vms = append(vms, vp)
			}
		}
	}
	if len(vms) == 0 {
		return
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	waiter := newTaskWaiter(c)
	go waiter.run(wctx)
	forEach(ctx, vms, opts.Parallel, func(vp *vmPlan) {
		vp.err = reconfigure(ctx, c, waiter, vp)
	})
}

// applyHost sends the host's passthrough/SR-IOV change and module parameters,
// then completes its VMs' device backings from QueryConfigTarget.
func applyHost(ctx context.Context, c *vim25.Client, hp *hostPlan, opts Options) {
	if hp.err != nil {
		return
	}
	if len(hp.passthru) > 0 {
		if hp.host.ConfigManager.PciPassthruSystem == nil {
			hp.fail(fmt.Errorf("ESXi host %s has no PCI passthrough system", hp.name))
			return
		}
		_, err := methods.UpdatePassthruConfig(ctx, c, &types.UpdatePassthruConfig{This: *hp.host.ConfigManager.PciPassthruSystem, Config: hp.passthru})
		if err != nil {
			hp.fail(fmt.Errorf("ESXi host %s: UpdatePassthruConfig: %w", hp.name, err))
			return
		}
	}
	if hp.paramsChanged {
		if err := opts.Modules.Set(ctx, Host{Name: hp.name, Ref: hp.host.Self}, vmx.NICModule, hp.paramsNew); err != nil {
			hp.fail(fmt.Errorf("set %s parameters: %w", vmx.NICModule, err))
			return
		}
	}
	needTarget := false
	for _, vp := range hp.vms {
		if vp.err == nil && (len(vp.addGPUs) > 0 || (vp.sriov != nil && vp.sriov.existing == nil)) {
			needTarget = true
		}
	}
	if !needTarget {
		return
	}
	var eb *types.ManagedObjectReference
	for _, vp := range hp.vms {
		if vp.vm != nil && vp.vm.EnvironmentBrowser.Value != "" {
			ref := vp.vm.EnvironmentBrowser
			eb = &ref
			break
		}
	}
	if eb == nil {
		hp.failVMs(fmt.Errorf("ESXi host %s: no environment browser to query passthrough devices", hp.name))
		return
	}
	ref := hp.host.Self
	r, err := methods.QueryConfigTarget(ctx, c, &types.QueryConfigTarget{This: *eb, Host: &ref})
	if err != nil || r.Returnval == nil {
		hp.failVMs(fmt.Errorf("ESXi host %s: QueryConfigTarget: %v", hp.name, err))
		return
	}
	hp.target = r.Returnval
	for _, vp := range hp.vms {
		if vp.err == nil {
			vp.err = vp.completeDevices()
		}
	}
}

// failVMs marks the host's pending VMs failed (the host itself was changed).
func (hp *hostPlan) failVMs(err error) {
	for _, vp := range hp.vms {
		if vp.err == nil && vp.changed() {
			vp.err = err
		}
	}
}

// completeDevices adds the GPU and SR-IOV device changes with the host's
// system id and device ids (research/vsphere.md §2.4, §2.5).
func (vp *vmPlan) completeDevices() error {
	hp := vp.host
	systemID := map[string]string{}
	for _, p := range hp.target.PciPassthrough {
		info := p.GetVirtualMachinePciPassthroughInfo()
		systemID[strings.ToLower(info.PciDevice.Id)] = info.SystemId
	}
	ctrl := pciController(vp.vm)
	for _, id := range vp.addGPUs {
		sys, ok := systemID[id]
		if !ok {
			return fmt.Errorf("GPU %s on ESXi host %s is not available for passthrough yet (passthrough is enabled but not active: reboot the host, then re-run apply)", id, hp.name)
		}
		d := hp.devices[id]
		dev := &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
			Key:           vp.key(),
			ControllerKey: ctrl,
			Backing: &types.VirtualPCIPassthroughDeviceBackingInfo{
				Id:       d.Id,
				DeviceId: hexID(d.DeviceId),
				SystemId: sys,
				VendorId: d.VendorId,
				VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{
					DeviceName: d.DeviceName,
				},
			},
		}}
		vp.spec.DeviceChange = append(vp.spec.DeviceChange, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: dev})
	}
	if vp.sriov == nil {
		return nil
	}
	backing := netBacking(vp.sriov.net)
	if card := vp.sriov.existing; card != nil {
		nc := *card
		nc.Backing = backing
		vp.spec.DeviceChange = append(vp.spec.DeviceChange, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: &nc})
		return nil
	}
	var pfSys string
	found := false
	for _, s := range hp.target.Sriov {
		if strings.ToLower(s.PciDevice.Id) == hp.pfID && !s.VirtualFunction {
			pfSys, found = s.SystemId, true
		}
	}
	if !found {
		return fmt.Errorf("SR-IOV on %s (%s) of ESXi host %s is not active yet (reboot the host, then re-run apply)", hp.nic.PF, hp.pfID, hp.name)
	}
	pf := hp.devices[hp.pfID]
	pfBacking := &types.VirtualPCIPassthroughDeviceBackingInfo{Id: hp.pfID, SystemId: pfSys}
	if pf != nil {
		pfBacking.Id, pfBacking.DeviceId, pfBacking.VendorId = pf.Id, hexID(pf.DeviceId), pf.VendorId
		pfBacking.DeviceName = pf.DeviceName
	}
	card := &types.VirtualSriovEthernetCard{
		VirtualEthernetCard: types.VirtualEthernetCard{VirtualDevice: types.VirtualDevice{
			Key:           vp.key(),
			ControllerKey: ctrl,
			Backing:       backing,
		}},
		AllowGuestOSMtuChange: types.NewBool(false),
		SriovBacking:          &types.VirtualSriovEthernetCardSriovBackingInfo{PhysicalFunctionBacking: pfBacking},
	}
	vp.spec.DeviceChange = append(vp.spec.DeviceChange, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: card})
	return nil
}

// netBacking is the NIC backing of a standard or distributed port group.
func netBacking(n network) types.BaseVirtualDeviceBackingInfo {
	if n.key != "" {
		return &types.VirtualEthernetCardDistributedVirtualPortBackingInfo{Port: types.DistributedVirtualSwitchPortConnection{PortgroupKey: n.key}}
	}
	ref := n.ref
	return &types.VirtualEthernetCardNetworkBackingInfo{
		VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: n.name},
		Network:                        &ref,
	}
}

// pciController is the key of the VM's PCI controller (100 on ESXi), where
// passthrough and SR-IOV devices go.
func pciController(vm *mo.VirtualMachine) int32 {
	for _, d := range vm.Config.Hardware.Device {
		if c, ok := d.(*types.VirtualPCIController); ok {
			return c.Key
		}
	}
	return 100
}

// reconfigure sends the VM's one ReconfigVM_Task and waits for it.
func reconfigure(ctx context.Context, c *vim25.Client, w *taskWaiter, vp *vmPlan) error {
	t, err := object.NewVirtualMachine(c, vp.vm.Self).Reconfigure(ctx, vp.spec)
	if err != nil {
		return fmt.Errorf("VM %s: reconfigure: %w", vp.inv.VM, err)
	}
	if err := w.wait(ctx, t.Reference()); err != nil {
		return fmt.Errorf("VM %s: reconfigure: %w", vp.inv.VM, err)
	}
	return nil
}

// report prints the outcome per failed VM/host and fills the Result.
func report(w io.Writer, hosts []*hostPlan, res *Result) {
	res.VMsChanged, res.HostsChanged = 0, 0
	for _, hp := range hosts {
		if hp.err == nil && (len(hp.lines) > 0 || hp.paramsChanged) {
			res.HostsChanged++
		}
		for _, vp := range hp.vms {
			if vp.err == nil && vp.changed() {
				res.VMsChanged++
			}
		}
	}
	collect(hosts, res)
	for _, f := range res.Failed {
		fmt.Fprintf(w, "FAILED %s\n", f)
	}
	for _, r := range res.Reboot {
		fmt.Fprintf(w, "reboot needed: %s\n", r)
	}
}

// forEach runs f on every item with at most n at once.
func forEach[T any](ctx context.Context, items []T, n int, f func(T)) {
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(it)
		}()
	}
	wg.Wait()
}
