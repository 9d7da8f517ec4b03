package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Target is one apply target behind the interface every target shares:
// its name, the targets it pushes after, its apply (read, plan, ask
// Confirm once, push, verify: the one loop of internal/driver) and its
// read-only check. The options of each target are its Target:
// SwitchOptions (every switch, each by its OS's engine), ESXiOptions,
// HostsOptions and WorkersOptions. ApplyAll runs several with one
// question, CheckAll checks several at once.
type Target interface {
	// Name is the target: switch, esxi, hosts or workers.
	Name() applyplan.TargetName
	// After names the targets whose push this one waits for, when they
	// take part in the same ApplyAll: the workers follow the hosts, on
	// whose Docker they run.
	After() []applyplan.TargetName
	// Apply is Switches, ESXi, Hosts or Workers with these options.
	Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error)
	// Check is CheckSwitches, CheckESXi, CheckHosts or CheckWorkers.
	Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error)
	// common is the target's Common; with gives the same target with c
	// as its Common.
	common() Common
	with(c Common) Target
	// problem is what is wrong with the options before anything is
	// contacted (nil when nothing is).
	problem() error
}

// Name is applyplan.TargetSwitch.
func (o SwitchOptions) Name() applyplan.TargetName { return applyplan.TargetSwitch }

// After is none: the switches wait for no other target.
func (o SwitchOptions) After() []applyplan.TargetName { return nil }

// Apply is Switches(ctx, inv, o).
func (o SwitchOptions) Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error) {
	return Switches(ctx, inv, o)
}

// Check is CheckSwitches(ctx, inv, o).
func (o SwitchOptions) Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error) {
	return CheckSwitches(ctx, inv, o)
}

// Name is applyplan.TargetESXi.
func (o ESXiOptions) Name() applyplan.TargetName { return applyplan.TargetESXi }

// After is none: vCenter's hosts and VMs wait for no other target.
func (o ESXiOptions) After() []applyplan.TargetName { return nil }

// Apply is ESXi(ctx, inv, o).
func (o ESXiOptions) Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error) {
	return ESXi(ctx, inv, o)
}

// Check is CheckESXi(ctx, inv, o).
func (o ESXiOptions) Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error) {
	return CheckESXi(ctx, inv, o)
}

// Name is applyplan.TargetHosts.
func (o HostsOptions) Name() applyplan.TargetName { return applyplan.TargetHosts }

// After is none: the VMs' settings wait for no other target.
func (o HostsOptions) After() []applyplan.TargetName { return nil }

// Apply is Hosts(ctx, inv, o).
func (o HostsOptions) Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error) {
	return Hosts(ctx, inv, o)
}

// Check is CheckHosts(ctx, inv, o).
func (o HostsOptions) Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error) {
	return CheckHosts(ctx, inv, o)
}

// Name is applyplan.TargetWorkers.
func (o WorkersOptions) Name() applyplan.TargetName { return applyplan.TargetWorkers }

// After is the hosts target: the workers run on the Docker that Hosts
// configures, so in one ApplyAll they are changed once Hosts has ended.
func (o WorkersOptions) After() []applyplan.TargetName {
	return []applyplan.TargetName{applyplan.TargetHosts}
}

// Apply is Workers(ctx, inv, o).
func (o WorkersOptions) Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error) {
	return Workers(ctx, inv, o)
}

// Check is CheckWorkers(ctx, inv, o).
func (o WorkersOptions) Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error) {
	return CheckWorkers(ctx, inv, o)
}

// The options' Common, and the same options with another Common.
func (o SwitchOptions) common() Common        { return o.Common }
func (o SwitchOptions) with(c Common) Target  { o.Common = c; return o }
func (o ESXiOptions) common() Common          { return o.Common }
func (o ESXiOptions) with(c Common) Target    { o.Common = c; return o }
func (o HostsOptions) common() Common         { return o.Common }
func (o HostsOptions) with(c Common) Target   { o.Common = c; return o }
func (o WorkersOptions) common() Common       { return o.Common }
func (o WorkersOptions) with(c Common) Target { o.Common = c; return o }

// What cannot work, known before anything is contacted: an ESXiOptions
// without a way to vCenter (esxi.go). A CA file of NVUE is the Cumulus
// switches' own problem, reported per switch: an inventory without one
// never reads it.
func (o SwitchOptions) problem() error  { return nil }
func (o HostsOptions) problem() error   { return nil }
func (o WorkersOptions) problem() error { return nil }

// AllOptions say how ApplyAll and CheckAll ask and report. Every field
// may be nil.
type AllOptions struct {
	// Confirm is ApplyAll's one question, asked once every target has
	// planned, with all their planned machines (a target's own Confirm is
	// not asked); nil pushes without asking. It is asked only when some
	// machine has a change. A panic in it is a no: nothing is pushed, and
	// each target that waited for the answer has the panic as its error.
	Confirm applyplan.Gate
	// Events, when set, hears every target's progress (Event.Target says
	// whose) in place of the targets' own Events. Besides what each
	// target reports, a target that waits at the question says so
	// (EventPhase "planned", then EventWait and EventWaited naming what it
	// waits for: "the plans of esxi, then the confirmation"), and a target
	// that waits for another (After) says that as an EventPhase. Called
	// from several goroutines.
	Events func(applyplan.Event)
	// Ended, when set, is called as each target ends, from its goroutine,
	// with its index in the targets and its result.
	Ended func(i int, r TargetResult)
}

// TargetResult is one target's part of ApplyAll or CheckAll.
type TargetResult struct {
	Target applyplan.TargetName
	// Result is ApplyAll's (nil when the target could not plan); Checks
	// CheckAll's.
	Result *Result
	Checks []readiness.Result
	// Err is the target's error: a *MachinesError when machines failed, a
	// *PanicError when the target (or Confirm) panicked, ErrNotRun when
	// nothing ran because another target's options were refused.
	Err error
	// Seconds is how long the target ran.
	Seconds float64
}

// ErrNotRun is the error of a target of ApplyAll or CheckAll that did not
// run because the call was refused before anything was contacted (a nil
// inventory, another target's options).
var ErrNotRun = errors.New("not run")

// ApplyAll applies the targets at once, as `rdggen apply` does: each
// reads and plans its machines, then o.Confirm is asked once with every
// target's planned machines (nil pushes without asking; a target's own
// Confirm is replaced), and all targets push or none does. The targets
// touch different machines and run concurrently, except that a target
// pushes only after the targets it names in After have ended (the
// workers after the hosts). The results are in the targets' order.
//
// What can be known before anything is contacted is checked first: a nil
// inventory, and each target's options (an ESXiOptions with neither
// Client nor Connect): then nothing runs, the refused targets carry their
// problem and the others ErrNotRun. A panic in a target (in any of its goroutines) is that
// target's error, a *PanicError with the stack where it happened; the
// other targets end as they would.
func ApplyAll(ctx context.Context, inv *inventory.Inventory, targets []Target, o AllOptions) []TargetResult {
	out, ok := refuse(inv, targets)
	if !ok {
		return out
	}
	ts := make([]driver.Target, len(targets))
	events := make([]func(applyplan.Event), len(targets))
	for i, t := range targets {
		c := t.common()
		if o.Events != nil {
			c.Events = o.Events
		}
		events[i] = c.Events
		ts[i] = driver.Target{Name: t.Name(), After: t.After(), Run: func(ctx context.Context, gate applyplan.Gate) error {
			c := c
			c.Confirm = gate
			out[i].Result, out[i].Err = t.with(c).Apply(ctx, inv)
			return out[i].Err
		}}
	}
	emit := func(i int, kind applyplan.EventKind, what string) {
		if e := events[i]; e != nil {
			e(applyplan.Event{Target: targets[i].Name().String(), Kind: kind, What: what, Time: time.Now()})
		}
	}
	dt := driver.Targets{
		Planned: func(i int, what string) func() {
			emit(i, applyplan.EventPhase, "planned")
			emit(i, applyplan.EventWait, what)
			return func() { emit(i, applyplan.EventWaited, what) }
		},
		Waiting: func(i int, what string) { emit(i, applyplan.EventPhase, what) },
		Ended: func(i int, err error, seconds float64) {
			out[i].Err, out[i].Seconds = err, seconds
			if o.Ended != nil {
				o.Ended(i, out[i])
			}
		},
	}
	if o.Confirm != nil {
		dt.Confirm = o.Confirm
	}
	errs := driver.RunTargets(ctx, ts, dt)
	for i, err := range errs {
		out[i].Err = err
	}
	return out
}

// CheckAll checks the targets at once, as `rdggen check` does, changing
// nothing; o.Confirm is not used. Each target's results are in its
// TargetResult.Checks (and given to o.Ended as it ends), in the targets'
// order. The inventory and the options are checked first, as ApplyAll
// does; a panic in a target is its error.
func CheckAll(ctx context.Context, inv *inventory.Inventory, targets []Target, o AllOptions) []TargetResult {
	out, ok := refuse(inv, targets)
	if !ok {
		return out
	}
	ts := make([]driver.Target, len(targets))
	for i, t := range targets {
		c := t.common()
		if o.Events != nil {
			c.Events = o.Events
		}
		t := t.with(c)
		ts[i] = driver.Target{Name: t.Name(), Run: func(ctx context.Context, _ applyplan.Gate) error {
			var err error
			out[i].Checks, err = t.Check(ctx, inv)
			return err
		}}
	}
	errs := driver.RunTargets(ctx, ts, driver.Targets{Ended: func(i int, err error, seconds float64) {
		out[i].Err, out[i].Seconds = err, seconds
		if o.Ended != nil {
			o.Ended(i, out[i])
		}
	}})
	for i, err := range errs {
		out[i].Err = err
	}
	return out
}

// refuse checks what ApplyAll and CheckAll can know before anything is
// contacted; ok is false when they must not run.
func refuse(inv *inventory.Inventory, targets []Target) (out []TargetResult, ok bool) {
	out = make([]TargetResult, len(targets))
	var refused []string
	for i, t := range targets {
		out[i].Target = t.Name()
		if inv == nil {
			out[i].Err = ErrNoInventory
			continue
		}
		if err := t.problem(); err != nil {
			out[i].Err = fmt.Errorf("%s: %w", t.Name(), err)
			refused = append(refused, t.Name().String())
		}
	}
	if inv == nil {
		return out, false
	}
	if len(refused) == 0 {
		return out, true
	}
	for i := range out {
		if out[i].Err == nil {
			out[i].Err = fmt.Errorf("%w: the options of %v were refused", ErrNotRun, refused)
		}
	}
	return out, false
}
