package apply

import (
	"context"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Target is one apply target behind the interface every target shares:
// its name, its apply (read, plan, ask Confirm once, push, verify: the
// one loop of internal/driver) and its read-only check. The options of
// each target are its Target: SwitchOptions (every switch, each by its
// OS's engine), ESXiOptions, HostsOptions and WorkersOptions. ApplyAll
// runs several with one question.
type Target interface {
	// Name is the target: switch, esxi, hosts or workers.
	Name() applyplan.TargetName
	// Apply is Switches, ESXi, Hosts or Workers with these options.
	Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error)
	// Check is CheckSwitches, CheckESXi, CheckHosts or CheckWorkers.
	Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error)
	// asking is the same target with Confirm set to g.
	asking(g applyplan.Gate) Target
}

// Name is applyplan.TargetSwitch.
func (o SwitchOptions) Name() applyplan.TargetName { return applyplan.TargetSwitch }

// Apply is Switches(ctx, inv, o).
func (o SwitchOptions) Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error) {
	return Switches(ctx, inv, o)
}

// Check is CheckSwitches(ctx, inv, o).
func (o SwitchOptions) Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error) {
	return CheckSwitches(ctx, inv, o)
}

func (o SwitchOptions) asking(g applyplan.Gate) Target { o.Confirm = g; return o }

// Name is applyplan.TargetESXi.
func (o ESXiOptions) Name() applyplan.TargetName { return applyplan.TargetESXi }

// Apply is ESXi(ctx, inv, o).
func (o ESXiOptions) Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error) {
	return ESXi(ctx, inv, o)
}

// Check is CheckESXi(ctx, inv, o).
func (o ESXiOptions) Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error) {
	return CheckESXi(ctx, inv, o)
}

func (o ESXiOptions) asking(g applyplan.Gate) Target { o.Confirm = g; return o }

// Name is applyplan.TargetHosts.
func (o HostsOptions) Name() applyplan.TargetName { return applyplan.TargetHosts }

// Apply is Hosts(ctx, inv, o).
func (o HostsOptions) Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error) {
	return Hosts(ctx, inv, o)
}

// Check is CheckHosts(ctx, inv, o).
func (o HostsOptions) Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error) {
	return CheckHosts(ctx, inv, o)
}

func (o HostsOptions) asking(g applyplan.Gate) Target { o.Confirm = g; return o }

// Name is applyplan.TargetWorkers.
func (o WorkersOptions) Name() applyplan.TargetName { return applyplan.TargetWorkers }

// Apply is Workers(ctx, inv, o).
func (o WorkersOptions) Apply(ctx context.Context, inv *inventory.Inventory) (*Result, error) {
	return Workers(ctx, inv, o)
}

// Check is CheckWorkers(ctx, inv, o).
func (o WorkersOptions) Check(ctx context.Context, inv *inventory.Inventory) ([]readiness.Result, error) {
	return CheckWorkers(ctx, inv, o)
}

func (o WorkersOptions) asking(g applyplan.Gate) Target { o.Confirm = g; return o }

// TargetResult is one target's part of ApplyAll: its Result (nil when it
// could not plan) and its error (a *MachinesError when machines failed).
type TargetResult struct {
	Target applyplan.TargetName
	Result *Result
	Err    error
}

// ApplyAll applies the targets at once, as `rdggen apply` does: each
// reads and plans its machines, then confirm is asked once with every
// target's planned machines (nil pushes without asking; a target's own
// Confirm is replaced), and all targets push or none does. The targets
// touch different machines and run concurrently, except that workers
// push only after hosts has ended (the workers run on the hosts' Docker).
// The results are in the targets' order.
func ApplyAll(ctx context.Context, inv *inventory.Inventory, targets []Target, confirm applyplan.Gate) []TargetResult {
	out := make([]TargetResult, len(targets))
	ts := make([]driver.Target, len(targets))
	for i, t := range targets {
		out[i].Target = t.Name()
		ts[i] = driver.Target{Name: t.Name(), Run: func(ctx context.Context, gate applyplan.Gate) error {
			out[i].Result, out[i].Err = t.asking(gate).Apply(ctx, inv)
			return out[i].Err
		}}
	}
	driver.RunTargets(ctx, ts, driver.Targets{Confirm: confirm})
	return out
}
