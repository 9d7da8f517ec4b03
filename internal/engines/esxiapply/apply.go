// Package esxiapply is the apply engine of `rdggen apply --target esxi`: it
// makes vCenter's VMs and ESXi hosts match what pkg/vmx computes, through
// govmomi, on a session pkg/apply opened (internal/vcenter).
//
// One apply: read every host and network and every VM's name, host and
// change version in one PropertyCollector retrieve, then the settings and
// devices of the VMs the last apply's record does not prove unchanged
// (state.go, record.go); plan per ESXi host and per VM (plan.go), reading
// the PCI device lists of the hosts that add or pick devices in one more
// retrieve (a run with nothing to do reads none). The hosts and VMs are
// then units of internal/driver's one loop: the plans print, the question
// is asked once, and unless it is a dry run the VMs vCenter lacks are
// cloned (clone.go), then each host is changed (UpdatePassthruConfig,
// nmlx5_core parameters) and each VM reconfigured after its host, at most
// Options.Parallel machines at once, waiting on all tasks with one poll
// (tasks.go); the clones' first boots follow. A VM's failure never stops
// the others; the Result says what failed. After a host's
// UpdatePassthruConfig the host is read again (recheckReboot): only what is
// still pending is reported as "reboot needed". Devices whose passthrough or
// SR-IOV is enabled but not active wait for the host's reboot: the VM gets
// its other settings now, the devices at the first apply after the reboot.
//
// Check (check.go) is `rdggen check --target esxi`: the same reads and plan,
// reported as readiness results instead of applied.
package esxiapply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/applyplan"
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
	// Modules reads and sets nmlx5_core parameters; nil means the host's
	// HostKernelModuleSystem over the vSphere API (KernelModuleParams: one
	// call per read or set).
	Modules ModuleParams
	// Track hears the phases, the machines in flight and what vCenter is
	// awaited for; nil for none.
	Track *progress.Tracker
	// Gate is asked once after the plan, before the first change.
	Gate applyplan.Gate
	// ToolsTimeout bounds the wait for VMware Tools after a cloned VM's
	// first power-on (0: DefaultToolsTimeout).
	ToolsTimeout time.Duration
	// Record is the last apply's Result.Record: the VMs it proves
	// unchanged are not read whole (see Record). nil reads every VM whole.
	Record *Record
	// Full reads every VM whole whatever Record says (Result.Record is
	// still written). Check always reads whole and ignores both.
	Full bool
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
	// effect, "name (reason, …)". After a push only what is still pending
	// counts: a device not active yet, nmlx5_core parameters changed, or
	// vCenter's summary.rebootRequired (see recheckReboot); a dry run
	// lists what the changes imply.
	Reboot []string
	// VMsWaiting counts the VMs with devices to attach that wait for their
	// host's reboot (passthrough or SR-IOV enabled, not active yet); Waiting
	// lists those devices. Not failures: the first apply after the reboot
	// attaches them.
	VMsWaiting int
	Waiting    []string
	// VMsBlocked counts the VMs whose SR-IOV adapter waits on a problem of
	// their ESXi host's NIC (listed in Failed and Waiting).
	VMsBlocked int
	// NotApplied: the plan had changes and none was sent (the gate said no,
	// or the run was cancelled before the first change).
	NotApplied bool
	// Machines is the outcome per ESXi host and VM for `--output json`:
	// each host, then its VMs, in inventory order.
	Machines []applyplan.Machine
	// Record is what the next apply's Options.Record should be (see
	// Record); never nil after a plan.
	Record *Record
	// VMsProven counts the VMs Options.Record proved unchanged: their
	// device lists were not read.
	VMsProven int
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
	s := r.summary()
	if r.VMsBlocked > 0 {
		s += fmt.Sprintf("; %d VM(s) wait on their ESXi host's NIC problem for the SR-IOV adapter (listed above)", r.VMsBlocked)
	}
	return s
}

func (r *Result) summary() string {
	if r.NotApplied && !r.DryRun {
		return fmt.Sprintf("esxi: nothing sent: %d VM(s) and %d host(s) to change, %d VM(s) and %d host(s) already matched, %d failed",
			r.VMsChanged, r.HostsChanged, r.VMsUnchanged, r.HostsUnchanged, len(r.Failed))
	}
	if !r.DryRun && r.VMsChanged == 0 && r.HostsChanged == 0 && len(r.Failed) == 0 {
		if r.VMsWaiting > 0 {
			return fmt.Sprintf("esxi: nothing to do before a reboot: %d VM(s) wait for passthrough devices, %d VM(s) and %d ESXi host(s) already match; reboot pending: %s; re-run apply after the reboot",
				r.VMsWaiting, r.VMsUnchanged, r.HostsUnchanged, r.rebootText())
		}
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
	if r.VMsWaiting > 0 {
		s += fmt.Sprintf("; %d VM(s) get their passthrough devices at the first apply after the reboot", r.VMsWaiting)
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
		opts.Modules = KernelModuleParams{Client: c}
	}
	opts.Track.Phase(fmt.Sprintf("reading %d VM(s) and %d ESXi host(s) from vCenter", len(inv.Hosts), len(inv.ESXiHosts())), 0)
	id := vcenterOf(c.ServiceContent.About)
	var prove func(*state) map[types.ManagedObjectReference]*VMRecord
	if opts.Record != nil && !opts.Full {
		prove = func(s *state) map[types.ManagedObjectReference]*VMRecord {
			return proveUnchanged(id, inv, s, opts.Record)
		}
	}
	var hints []string
	if !opts.Full {
		hints = vswitchHints(id, inv, opts.Record)
	}
	st, err := readStateProving(ctx, c, prove, hints, vmReadOf(inv), inventoryVMs(inv), inv.ESXiHosts(), opts.Parallel)
	if err != nil {
		return nil, err
	}
	if err := completeVSwitches(ctx, c, inv, st); err != nil {
		return nil, err
	}
	if st.clones, err = planClones(ctx, c, inv, st, opts); err != nil {
		return nil, err
	}
	opts.Track.Phase(fmt.Sprintf("planning %d ESXi host(s)", len(inv.ESXiHosts())), 0)
	res := &Result{DryRun: opts.DryRun, VMsProven: len(st.proven)}
	e := &run{c: c, inv: inv, st: st, opts: opts, hosts: plan(ctx, c, inv, st, opts), out: progress.Sync(opts.Out)}
	defer func() { res.Record = newRecord(id, inv, st, e.hosts, opts.Record) }()
	defer func() {
		if e.stop != nil {
			e.stop() // the pushes' task poll
		}
	}()
	upToDate := countPlan(e.hosts, res)
	res.Machines = machines(e.hosts)
	changes, _ := applyplan.Count(res.Machines)
	units, names := e.units()
	pushed := driver.PlanPush(ctx, names, driver.Run{
		PushPhase: driver.Phrase(fmt.Sprintf("changing ESXi hosts and VMs through vCenter, %d at a time", opts.Parallel)),
		PlanEnd: func(w io.Writer) {
			writeMatching(w, upToDate, res.HostsUnchanged)
			if res.VMsProven > 0 {
				fmt.Fprintf(w, "%d VM(s) unchanged since the last apply read them (same change version): their device lists were not read (--full reads them)\n", res.VMsProven)
			}
		},
		BeforePush: e.beforePush,
		Parallel:   opts.Parallel, DryRun: opts.DryRun, Gate: opts.Gate, Track: opts.Track, Out: e.out,
	}, units)
	switch {
	case !pushed:
		collect(e.hosts, res)
		switch {
		case opts.DryRun:
		case changes == 0:
			printPending(opts.Out, res)
		default: // the gate refused
			res.NotApplied = true
		}
		return res, nil
	case e.err != nil:
		return nil, e.err
	}
	firstBoots(ctx, c, e.hosts, opts, e.out)
	report(opts.Out, e.hosts, res)
	res.Machines = machines(e.hosts)
	return res, nil
}

// run is one apply between its plan and its end: the ESXi hosts' and VMs'
// plans (hosts, planned again once the clones exist) and what their
// pushes share.
type run struct {
	c     *vim25.Client
	inv   *inventory.Inventory
	st    *state
	opts  Options
	hosts []*hostPlan
	out   io.Writer
	// waiter polls the pushes' tasks; stop ends it. err stops the apply
	// after the clones (vCenter could not be read again): nothing is
	// pushed.
	waiter *taskWaiter
	stop   func()
	err    error
}

// units are the run's machines for driver.PlanPush, in plan order: each
// ESXi host, then its VMs, each VM pushed after its host.
func (e *run) units() ([]driver.Unit, []string) {
	var units []driver.Unit
	var names []string
	for i, hp := range e.hosts {
		units, names = append(units, &hostUnit{e: e, i: i}), append(names, "host "+hp.name)
		for j, vp := range hp.vms {
			units, names = append(units, &vmUnit{e: e, i: i, j: j}), append(names, "vm "+vp.inv.VM)
		}
	}
	return units, names
}

// beforePush runs once the push is agreed: the clones (then vCenter is
// read and planned again, with them), the distributed switches' MTU, and
// the manager references of the hosts to change.
func (e *run) beforePush(ctx context.Context) {
	hosts, err := cloneThenPlan(ctx, e.c, e.inv, e.st, e.hosts, e.opts, e.out)
	if err != nil {
		e.err = err
		return
	}
	e.hosts = hosts
	wctx, stop := context.WithCancel(ctx)
	e.waiter, e.stop = newTaskWaiter(e.c), stop
	go e.waiter.run(wctx)
	for _, hp := range e.hosts {
		if hp.err == nil && slices.ContainsFunc(hp.pfs, func(pf *pfPlan) bool { return pf.dvs != nil && pf.dvs.newMTU != 0 }) {
			e.opts.Track.Phase("raising the maximum MTU of the distributed switches", 0)
			break
		}
	}
	reconfigureDVS(ctx, e.c, e.waiter, e.hosts)
	readManagers(ctx, e.c, e.hosts)
}

// hostUnit is ESXi host i of a run: its push changes the host itself
// (applyHost); its VMs follow it.
type hostUnit struct {
	e *run
	i int
}

func (u *hostUnit) hp() *hostPlan              { return u.e.hosts[u.i] }
func (u *hostUnit) WritePlan(w io.Writer)      { writeHostPlan(w, u.hp()) }
func (u *hostUnit) Machine() applyplan.Machine { return hostMachine(u.hp()) }

// Pending: every host that can be changed is pushed, with or without
// changes of its own: its push also completes its VMs' devices.
func (u *hostUnit) Pending() bool { return u.e.err == nil && u.hp().err == nil }

func (u *hostUnit) Push(ctx context.Context) {
	hp := u.hp()
	t0 := time.Now()
	hp.started = true
	applyHost(ctx, u.e.c, hp, u.e.opts)
	hp.seconds = time.Since(t0).Seconds()
	hp.applied = hp.err == nil
}

func (u *hostUnit) WriteResult(w io.Writer) {
	switch hp := u.hp(); {
	case hp.err != nil:
		fmt.Fprintf(w, "host %s: FAILED after %.1fs: %v\n", hp.name, hp.seconds, hp.err)
	case len(hp.changes) > 0 && hp.blocked != nil:
		fmt.Fprintf(w, "host %s: changed, %d change(s); its NIC settings wait on its problem (%.1fs)\n", hp.name, len(hp.changes), hp.seconds)
	case len(hp.changes) > 0:
		fmt.Fprintf(w, "host %s: changed, %d change(s) (%.1fs)\n", hp.name, len(hp.changes), hp.seconds)
	}
}

// vmUnit is VM j of ESXi host i: its push is its one ReconfigVM_Task,
// after its host's push (the host's passthrough on, its config target
// read).
type vmUnit struct {
	e    *run
	i, j int
}

func (u *vmUnit) hp() *hostPlan              { return u.e.hosts[u.i] }
func (u *vmUnit) vp() *vmPlan                { return u.e.hosts[u.i].vms[u.j] }
func (u *vmUnit) After() []string            { return []string{"host " + u.hp().name} }
func (u *vmUnit) WritePlan(w io.Writer)      { writeVMPlan(w, u.hp(), u.vp()) }
func (u *vmUnit) Machine() applyplan.Machine { return vmMachine(u.hp(), u.vp()) }
func (u *vmUnit) Pending() bool              { return u.e.err == nil && u.vp().err == nil && u.vp().changed() }

func (u *vmUnit) Push(ctx context.Context) {
	vp := u.vp()
	t0 := time.Now()
	vp.started = true
	vp.err = reconfigure(ctx, u.e.c, u.e.waiter, vp)
	vp.seconds = time.Since(t0).Seconds()
	vp.applied = vp.err == nil
}

func (u *vmUnit) WriteResult(w io.Writer) {
	if vp := u.vp(); vp.err != nil {
		fmt.Fprintf(w, "vm %s: FAILED after %.1fs: %v\n", vp.inv.VM, vp.seconds, vp.err)
	} else {
		fmt.Fprintf(w, "vm %s: reconfigured, %d change(s) (%.1fs)\n", vp.inv.VM, len(vp.changes), vp.seconds)
	}
}

// plan builds the host and VM plans (planHosts); a host whose nmlx5_core
// parameters could not be read fails with its VMs.
func plan(ctx context.Context, c *vim25.Client, inv *inventory.Inventory, st *state, opts Options) []*hostPlan {
	hosts := planHosts(ctx, c, inv, st, opts)
	for _, hp := range hosts {
		if hp.paramsErr != nil {
			hp.fail(hp.paramsErr)
		}
		for _, vp := range hp.vms {
			vp.planFirstBoot(opts)
		}
	}
	return hosts
}

// planHosts builds the host and VM plans: first every host from the first
// retrieve alone (partial plans), then, for the hosts whose plan came out
// incomplete (devices to add or pick), a second retrieve of their PCI device
// lists and a full plan. The hosts' nmlx5_core parameters are read meanwhile
// (a round trip per host), at most opts.Parallel at once; a read
// that fails is left in paramsErr (plan fails the host, Check reports it).
func planHosts(ctx context.Context, c *vim25.Client, inv *inventory.Inventory, st *state, opts Options) []*hostPlan {
	names := inv.ESXiHosts()
	hosts := make([]*hostPlan, len(names))
	var again []int
	for i, name := range names {
		hp := newHostPlan(inv, st, name)
		hp.planVMs(st, false)
		hosts[i] = hp
		if hp.err == nil && hp.incomplete {
			again = append(again, i)
		}
	}
	type params struct {
		cur string
		err error
	}
	read := make([]*params, len(hosts))
	var todo []int
	refs := make([]Host, len(hosts))
	for i, hp := range hosts {
		if hp.err == nil && hp.blocked == nil {
			todo = append(todo, i)
			refs[i] = hostOf(hp)
		}
	}
	wait := driver.Go(func() {
		forEach(ctx, todo, opts.Parallel, func(i int) {
			cur, err := opts.Modules.Get(ctx, refs[i], vmx.NICModule)
			read[i] = &params{cur, err}
		})
	})
	if len(again) > 0 {
		var hs []*mo.HostSystem
		var vms []*mo.VirtualMachine
		for _, i := range again {
			hs = append(hs, hosts[i].host)
			if vm := hosts[i].firstVM(); vm != nil {
				vms = append(vms, vm)
			}
		}
		var extra []string
		if inv.MultiRail() {
			extra = railHostProps // the pairing's NUMA nodes
		}
		err := readDevices(ctx, c, hs, vms, extra...)
		var replanned []*hostPlan
		for _, i := range again {
			hp := newHostPlan(inv, st, names[i])
			if err != nil {
				hp.fail(err)
			} else {
				hp.planVMs(st, true)
			}
			hosts[i] = hp
			replanned = append(replanned, hp)
		}
		readGroups(ctx, c, replanned, opts.Parallel)
	}
	wait()
	for i, hp := range hosts {
		switch p := read[i]; {
		case hp.err != nil, hp.blocked != nil:
		case p == nil: // not read: the apply or check was cancelled
			hp.paramsErr = fmt.Errorf("read %s parameters: %w", vmx.NICModule, context.Canceled)
		case p.err != nil:
			hp.paramsErr = fmt.Errorf("read %s parameters: %w", vmx.NICModule, p.err)
		default:
			want := vmx.HostModuleParams(hp.nic, inv.RoCE, hp.pfPort, p.cur)
			for _, pf := range hp.pfs[1:] {
				// Each rail's PF gets its VFs at its own position too.
				for k := range want {
					if want[k].Name == vmx.ParamMaxVFs {
						want[k].Value = vmx.MaxVFs(want[k].Value, pf.port, hp.nic.VFs)
					}
				}
			}
			hp.paramsCur = p.cur
			hp.paramsNew, hp.paramsChanged = vmx.MergeParams(p.cur, want)
			if hp.paramsChanged {
				where := ""
				if len(hp.pfs) > 1 {
					var at []string
					for _, pf := range hp.pfs {
						at = append(at, fmt.Sprintf("%s value %d", pf.vmnic, pf.port+1))
					}
					where = fmt.Sprintf(" (the rails' PFs in %s's ports in PCI order: %s)", vmx.NICModule, strings.Join(at, ", "))
				} else if hp.pfPort > 0 {
					where = fmt.Sprintf(" (%s is %s port %d in PCI order, so its VFs are max_vfs's value %d)", hp.nic.PF, vmx.NICModule, hp.pfPort+1, hp.pfPort+1)
				}
				hp.change(applyplan.Update, vmx.NICModule+" parameters", p.cur, hp.paramsNew,
					fmt.Sprintf("%s parameters: %q → %q%s", vmx.NICModule, p.cur, hp.paramsNew, where))
				hp.reboot = append(hp.reboot, vmx.NICModule+" parameters")
			}
		}
	}
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

// printPlan writes what will change, from what to what, host by host,
// and how much already matches; it counts into res.
func printPlan(w io.Writer, hosts []*hostPlan, res *Result) {
	for _, hp := range hosts {
		writeHostPlan(w, hp)
		for _, vp := range hp.vms {
			writeVMPlan(w, hp, vp)
		}
	}
	writeMatching(w, countPlan(hosts, res), res.HostsUnchanged)
}

// writeHostPlan writes an ESXi host's plan: its failure or its changes,
// and its notes (its VMs' plans follow).
func writeHostPlan(w io.Writer, hp *hostPlan) {
	switch {
	case hp.err != nil:
		fmt.Fprintf(w, "host %s: cannot apply: %v\n", hp.name, hp.err)
	case hp.blocked != nil:
		fmt.Fprintf(w, "host %s: cannot apply its NIC settings (SR-IOV, MTU, %s): %v\n", hp.name, vmx.NICModule, hp.blocked)
		if len(hp.changes) > 0 {
			fmt.Fprintf(w, "host %s: its other changes:\n", hp.name)
		}
	case len(hp.changes) > 0:
		fmt.Fprintf(w, "host %s:\n", hp.name)
	}
	for _, c := range hp.changes {
		fmt.Fprintf(w, "  %s\n", c.Text)
	}
	for _, n := range hp.notes {
		fmt.Fprintf(w, "host %s: note: %s\n", hp.name, n)
	}
}

// writeVMPlan writes a VM's plan: its failure (unless it is its host's), or
// its changes and what waits; nothing when it matches.
func writeVMPlan(w io.Writer, hp *hostPlan, vp *vmPlan) {
	switch {
	case vp.err != nil:
		if vp.err != hp.err {
			fmt.Fprintf(w, "vm %s: cannot apply: %v\n", vp.inv.VM, vp.err)
		}
	case vp.anyChange() || len(vp.waiting) > 0:
		fmt.Fprintf(w, "vm %s (%s):\n", vp.inv.VM, hp.name)
		for _, c := range vp.allChanges() {
			fmt.Fprintf(w, "  %s\n", c.Text)
		}
		if vp.clone != nil && vp.vm == nil {
			for _, n := range vp.clone.notes {
				fmt.Fprintf(w, "  note: %s\n", n)
			}
		}
		for _, n := range vp.notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
		for _, l := range vp.waiting {
			fmt.Fprintf(w, "  not now: %s\n", l)
		}
	}
}

// countPlan counts the plan's hosts and VMs into res (changed or to change,
// unchanged) and returns how many VMs match.
func countPlan(hosts []*hostPlan, res *Result) (upToDate int) {
	for _, hp := range hosts {
		switch {
		case hp.err != nil, hp.blocked != nil:
		case len(hp.changes) > 0:
			res.HostsChanged++
		default:
			res.HostsUnchanged++
		}
		for _, vp := range hp.vms {
			switch {
			case vp.err != nil:
			case vp.anyChange():
				res.VMsChanged++
			case len(vp.waiting) > 0:
				if !vp.blockedBy {
					res.VMsUnchanged++
				}
			default:
				upToDate++
				res.VMsUnchanged++
			}
		}
	}
	return upToDate
}

// writeMatching says how many VMs and hosts already match, if any.
func writeMatching(w io.Writer, vms, hosts int) {
	if vms > 0 || hosts > 0 {
		fmt.Fprintf(w, "%d VM(s) and %d ESXi host(s) already match the inventory\n", vms, hosts)
	}
}

// collect fills Failed, Reboot and Waiting from the plans.
func collect(hosts []*hostPlan, res *Result) {
	for _, hp := range hosts {
		switch {
		case hp.err != nil:
			res.Failed = append(res.Failed, "host "+hp.name+": "+hp.err.Error())
		case hp.blocked != nil:
			res.Failed = append(res.Failed, "host "+hp.name+": "+hp.blocked.Error())
		case len(hp.reboot) > 0:
			res.Reboot = append(res.Reboot, fmt.Sprintf("%s (%s)", hp.name, strings.Join(slices.Compact(hp.reboot), ", ")))
		}
		for _, vp := range hp.vms {
			if vp.err != nil && vp.err != hp.err {
				res.Failed = append(res.Failed, "vm "+vp.inv.VM+": "+vp.err.Error())
			}
			if vp.err == nil && vp.blockedBy {
				res.VMsBlocked++
			} else if vp.err == nil && len(vp.waiting) > 0 {
				res.VMsWaiting++
			}
			if vp.err == nil && len(vp.waiting) > 0 {
				for _, l := range vp.waiting {
					res.Waiting = append(res.Waiting, "vm "+vp.inv.VM+": "+l)
				}
			}
		}
	}
}

// machines is the plans as applyplan machines: each host, then its VMs.
func machines(hosts []*hostPlan) []applyplan.Machine {
	var out []applyplan.Machine
	for _, hp := range hosts {
		out = append(out, hostMachine(hp))
		for _, vp := range hp.vms {
			out = append(out, vmMachine(hp, vp))
		}
	}
	return out
}

// status is a host's or VM's status and error text.
func status(err error, changes int, applied, started bool) (applyplan.Status, string) {
	switch {
	case err != nil && started && errors.Is(err, context.Canceled):
		return applyplan.Interrupted, err.Error()
	case err != nil:
		return applyplan.Failed, err.Error()
	case changes == 0:
		return applyplan.UpToDate, ""
	case applied:
		return applyplan.Changed, ""
	}
	return applyplan.Planned, ""
}

// hostMachine is an ESXi host's plan or result as an applyplan machine.
func hostMachine(hp *hostPlan) applyplan.Machine {
	m := applyplan.Machine{Target: applyplan.TargetESXi, Name: hp.name, Kind: applyplan.KindESXiHost, Changes: slices.Clone(hp.changes),
		Notes: slices.Clone(hp.notes), Seconds: hp.seconds}
	if m.Changes == nil {
		m.Changes = []applyplan.Change{}
	}
	m.Status, m.Error = status(hp.err, len(hp.changes), hp.applied, hp.started)
	if m.Error != "" {
		m.Err = hp.err
	}
	if hp.blocked != nil && hp.err == nil {
		m.Status, m.Error, m.Err = applyplan.Failed, hp.blocked.Error(), hp.blocked
	}
	if len(hp.reboot) > 0 && hp.err == nil {
		m.Notes = append(m.Notes, "reboot needed: "+strings.Join(slices.Compact(hp.reboot), ", "))
	}
	return m
}

// vmMachine is a VM's plan or result as an applyplan machine.
func vmMachine(hp *hostPlan, vp *vmPlan) applyplan.Machine {
	v := applyplan.Machine{Target: applyplan.TargetESXi, Name: vp.inv.VM, Kind: applyplan.KindVM, Address: hp.name,
		Changes: vp.allChanges(), Waiting: slices.Clone(vp.waiting), Seconds: vp.seconds}
	if vp.clone != nil && vp.clone.err == nil && vp.vm == nil {
		v.Notes = slices.Clone(vp.clone.notes)
	}
	if vp.err == nil && (vp.anyChange() || len(vp.waiting) > 0) {
		v.Notes = append(v.Notes, vp.notes...) // the rails' pairing (rails.go), as the plan prints it
	}
	v.Status, v.Error = status(vp.err, len(v.Changes), vp.applied, vp.started)
	if v.Error != "" {
		v.Err = vp.err
	}
	if vp.blockedBy && vp.err == nil {
		v.Status, v.BlockedBy, v.Error, v.Err = applyplan.Blocked, applyplan.KindESXiHost+" "+hp.name, hp.blocked.Error(), hp.blocked
	}
	return v
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
	for _, pf := range hp.pfs {
		if pf.vswitchSpec == nil {
			continue
		}
		if hp.host.ConfigManager.NetworkSystem == nil {
			hp.fail(fmt.Errorf("ESXi host %s has no network system", hp.name))
			return
		}
		ns := object.NewHostNetworkSystem(c, *hp.host.ConfigManager.NetworkSystem)
		if err := ns.UpdateVirtualSwitch(ctx, pf.vswitch, *pf.vswitchSpec); err != nil {
			hp.fail(fmt.Errorf("ESXi host %s: vSwitch %s: set MTU %d: %w", hp.name, pf.vswitch, pf.vswitchSpec.Mtu, err))
			return
		}
	}
	if hp.paramsChanged {
		if err := opts.Modules.Set(ctx, hostOf(hp), vmx.NICModule, hp.paramsNew); err != nil {
			hp.fail(fmt.Errorf("set %s parameters: %w", vmx.NICModule, err))
			return
		}
	}
	if len(hp.passthru) > 0 {
		hp.recheckReboot(ctx, c)
	}
	needTarget := false
	for _, vp := range hp.vms {
		if vp.err == nil && (len(vp.addGPUs) > 0 || len(vp.sriovs) > 0) {
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

// rebootProps are what recheckReboot reads of a host after its
// UpdatePassthruConfig: the devices' passthrough and SR-IOV state
// (HostPciPassthruInfo.passthruActive, HostSriovInfo.sriovActive and
// numVirtualFunction) and whether vCenter says the host needs a reboot
// (HostListSummary.rebootRequired); vSphere Web Services API reference.
var rebootProps = []string{"config.pciPassthruInfo", "summary.rebootRequired"}

// rebootRequiredWhy is the reboot reason of a host whose devices are all
// active but whose summary.rebootRequired is true.
const rebootRequiredWhy = "vCenter reports configuration changes that take effect at boot"

// recheckReboot reads the host again after its UpdatePassthruConfig (one
// PropertyCollector retrieve of rebootProps) and keeps, of the reboot
// reasons the plan inferred, only those still pending, each naming the
// devices that wait and what for (sriovWait, gpuWait): SR-IOV while a PF's
// SR-IOV is enabled but not active or its present VF count is not the
// requested one, GPU passthrough while one of the host's GPUs is enabled but
// not active. A host that activates the devices at once (ESXi can for some
// devices) then needs no reboot for them. The nmlx5_core parameters are
// kept: the driver reads them when it loads, at boot, and the API reports
// only the configured string. A host with summary.rebootRequired true and no
// reason left gets rebootRequiredWhy. If the read fails the inferred
// reasons stay and a note says so.
func (hp *hostPlan) recheckReboot(ctx context.Context, c *vim25.Client) {
	var h mo.HostSystem
	if err := property.DefaultCollector(c).RetrieveOne(ctx, hp.host.Self, rebootProps, &h); err != nil {
		hp.notes = append(hp.notes, fmt.Sprintf("could not read ESXi host %s again after UpdatePassthruConfig (%v): the reboot reasons are those its changes imply", hp.name, err))
		return
	}
	info := map[string]types.BaseHostPciPassthruInfo{}
	if h.Config != nil {
		for _, pi := range h.Config.PciPassthruInfo {
			info[strings.ToLower(pi.GetHostPciPassthruInfo().Id)] = pi
		}
	}
	var sriov, gpu []devWait
	for _, pf := range hp.pfs {
		if w := sriovWait(info[pf.id]); w != "" {
			sriov = append(sriov, devWait{pf.vmnic, w})
		}
	}
	pushed := map[string]bool{} // the GPUs this apply switched, and those the VMs use
	for _, pc := range hp.passthru {
		if _, ok := pc.(*types.HostSriovConfig); !ok {
			pushed[strings.ToLower(pc.GetHostPciPassthruConfig().Id)] = true
		}
	}
	for _, vp := range hp.vms {
		for _, id := range vp.gpus {
			if _, ok := pushed[id]; !ok && id != "" {
				pushed[id] = false
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(pushed)) {
		if pi := info[id]; pi != nil {
			if w := gpuWait(pi); w != "" {
				gpu = append(gpu, devWait{id, w})
			}
		} else if pushed[id] { // a pushed GPU the host no longer lists: unproven
			gpu = append(gpu, devWait{id, "not listed by the host"})
		}
	}
	for i, why := range hp.reboot {
		switch {
		case strings.HasPrefix(why, whySRIOV):
			hp.reboot[i] = deviceReason(whySRIOV, sriov, 0, "")
		case strings.HasPrefix(why, whyGPU):
			hp.reboot[i] = deviceReason(whyGPU, gpu, gpusNamed, "GPUs")
		}
	}
	hp.reboot = slices.DeleteFunc(hp.reboot, func(why string) bool { return why == "" })
	if len(hp.reboot) == 0 && h.Summary.RebootRequired {
		hp.reboot = append(hp.reboot, rebootRequiredWhy)
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
// system id and device ids (docs/rules.md#gpu-passthrough-devices, §2.5). A device that
// QueryConfigTarget does not list after this run switched its passthrough or
// SR-IOV on is postponed (the host needs a reboot for it), not failed; one
// that was active when planned and is not listed is an error.
func (vp *vmPlan) completeDevices() error {
	hp := vp.host
	systemID := map[string]string{}
	for _, p := range hp.target.PciPassthrough {
		info := p.GetVirtualMachinePciPassthroughInfo()
		systemID[strings.ToLower(info.PciDevice.Id)] = info.SystemId
	}
	ctrl := pciController(vp.vm)
	for _, a := range vp.addGPUs {
		sys, ok := systemID[a.id]
		if !ok {
			if !a.active {
				vp.postpone(a.what, a.line, hp.waitText("passthrough enabled, not active yet"))
				continue
			}
			return fmt.Errorf("GPU %s on ESXi host %s is active for passthrough but QueryConfigTarget does not offer it (is it assigned elsewhere?)", a.id, hp.name)
		}
		d := hp.devices[a.id]
		dev := &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
			Key:           vp.key(),
			ControllerKey: ctrl,
			NumaNode:      vp.gpuNode(a.id),
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
	// The SR-IOV adapters in rail order (planVM plans them so): the guest
	// finds the VFs in that order.
	for _, sc := range vp.sriovs {
		var pfSys string
		found := false
		for _, s := range hp.target.Sriov {
			if strings.ToLower(s.PciDevice.Id) == sc.pf.id && !s.VirtualFunction {
				pfSys, found = s.SystemId, true
			}
		}
		if !found {
			if !sc.active {
				vp.postpone(sc.what, sc.line, hp.waitText("SR-IOV enabled, not active yet"))
				continue
			}
			return fmt.Errorf("SR-IOV on %s (%s) of ESXi host %s is active but QueryConfigTarget does not offer the PF", sc.pf.vmnic, sc.pf.id, hp.name)
		}
		pf := hp.devices[sc.pf.id]
		pfBacking := &types.VirtualPCIPassthroughDeviceBackingInfo{Id: sc.pf.id, SystemId: pfSys}
		if pf != nil {
			pfBacking.Id, pfBacking.DeviceId, pfBacking.VendorId = pf.Id, hexID(pf.DeviceId), pf.VendorId
			pfBacking.DeviceName = pf.DeviceName
		}
		card := &types.VirtualSriovEthernetCard{
			VirtualEthernetCard: types.VirtualEthernetCard{VirtualDevice: types.VirtualDevice{
				Key:           vp.key(),
				ControllerKey: ctrl,
				NumaNode:      vp.railNode(sc.rail),
				Backing:       netBacking(sc.net),
			}},
			AllowGuestOSMtuChange: types.NewBool(false),
			SriovBacking:          &types.VirtualSriovEthernetCardSriovBackingInfo{PhysicalFunctionBacking: pfBacking},
		}
		vp.spec.DeviceChange = append(vp.spec.DeviceChange, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: card})
	}
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

// reconfigureDVS raises the maximum MTU of the distributed switches that
// carry a host's PF, once per switch, before the hosts are changed; a failure
// fails every host on that switch.
func reconfigureDVS(ctx context.Context, c *vim25.Client, w *taskWaiter, hosts []*hostPlan) {
	done := map[*dvs]bool{}
	for _, hp := range hosts {
		for _, pf := range hp.pfs {
			d := pf.dvs
			if hp.err != nil || d == nil || d.newMTU == 0 || done[d] {
				continue
			}
			done[d] = true
			spec := &types.VMwareDVSConfigSpec{DVSConfigSpec: types.DVSConfigSpec{ConfigVersion: d.configVersion}, MaxMtu: d.newMTU}
			t, err := object.NewDistributedVirtualSwitch(c, d.ref).Reconfigure(ctx, spec)
			if err == nil {
				err = w.wait(ctx, t.Reference())
			}
			if err != nil {
				d.err = fmt.Errorf("distributed switch %s: set maximum MTU %d: %w", d.name, d.newMTU, err)
			}
		}
	}
	for _, hp := range hosts {
		for _, pf := range hp.pfs {
			if pf.dvs != nil && pf.dvs.err != nil && hp.err == nil {
				hp.fail(pf.dvs.err)
			}
		}
	}
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

// report fills the Result after execute and prints what waits: reboots and
// devices for later (each failure was printed as it happened).
func report(w io.Writer, hosts []*hostPlan, res *Result) {
	res.VMsChanged, res.HostsChanged = 0, 0
	for _, hp := range hosts {
		if hp.applied && len(hp.changes) > 0 {
			res.HostsChanged++
		}
		for _, vp := range hp.vms {
			if vp.applied {
				res.VMsChanged++
			}
		}
	}
	res.NotApplied = res.HostsChanged == 0 && res.VMsChanged == 0
	for _, hp := range hosts {
		if hp.started {
			res.NotApplied = false
		}
	}
	collect(hosts, res)
	printPending(w, res)
}

// printPending prints the hosts that need a reboot and the device adds that
// wait for one.
func printPending(w io.Writer, res *Result) {
	var b strings.Builder
	for _, r := range res.Reboot {
		fmt.Fprintf(&b, "reboot needed: %s\n", r)
	}
	for _, l := range res.Waiting {
		fmt.Fprintf(&b, "not now: %s\n", l)
	}
	io.WriteString(w, b.String())
}

// forEach runs f on every item with at most n at once (driver.ForEach);
// once ctx is done the items not yet started are skipped.
func forEach[T any](ctx context.Context, items []T, n int, f func(T)) {
	driver.ForEach(len(items), n, func(i int) {
		if ctx.Err() == nil {
			f(items[i])
		}
	})
}
