package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
)

// A Confirm that panics does not end the caller's process (it runs in a
// goroutine of ApplyAll, where the caller could not recover it): it is a
// no, nothing is pushed, and the target that waited for it has the panic
// as its error, with the stack where it happened.
func TestApplyAllConfirmPanics(t *testing.T) {
	inv, sim, sw := switchEnv(t)
	res := apply.ApplyAll(context.Background(), inv, []apply.Target{sw}, apply.AllOptions{
		Confirm: func(context.Context, []applyplan.Machine) bool { panic("a bug in the caller's question") },
	})
	var p *apply.PanicError
	if len(res) != 1 || !errors.As(res[0].Err, &p) || p.In != "the confirmation" || p.Value != "a bug in the caller's question" {
		t.Fatalf("results %+v", res)
	}
	if !strings.Contains(string(p.Stack), "TestApplyAllConfirmPanics") {
		t.Errorf("the stack does not show where it panicked:\n%s", p.Stack)
	}
	if len(sim.Received()) != 0 || res[0].Result == nil || res[0].Result.Machines[0].Status != applyplan.Planned {
		t.Errorf("pushed after a panicking question: %q, %+v", sim.Received(), res[0].Result)
	}
}

// What can be known before anything is contacted is an error, not a
// panic: a nil inventory, an ESXiOptions without a vCenter client; then no
// target runs (the others are ErrNotRun) and nothing is sent. The same
// holds for the single-target calls.
func TestApplyAllRefusesUpFront(t *testing.T) {
	inv, sim, sw := switchEnv(t)
	ctx := context.Background()
	targets := []apply.Target{sw, apply.ESXiOptions{}}
	for _, all := range []func(context.Context, []apply.Target) []apply.TargetResult{
		func(ctx context.Context, ts []apply.Target) []apply.TargetResult {
			return apply.ApplyAll(ctx, inv, ts, apply.AllOptions{})
		},
		func(ctx context.Context, ts []apply.Target) []apply.TargetResult {
			return apply.CheckAll(ctx, inv, ts, apply.AllOptions{})
		},
	} {
		res := all(ctx, targets)
		if len(res) != 2 || !errors.Is(res[0].Err, apply.ErrNotRun) || res[1].Err == nil ||
			!strings.Contains(res[1].Err.Error(), "esxi: ESXiOptions has no Client and no Connect") || res[0].Result != nil {
			t.Errorf("results %+v", res)
		}
	}
	if _, err := apply.ESXi(ctx, inv, apply.ESXiOptions{}); err == nil || !strings.Contains(err.Error(), "no Client") {
		t.Errorf("ESXi: %v", err)
	}
	if _, err := apply.CheckESXi(ctx, inv, apply.ESXiOptions{}); err == nil || !strings.Contains(err.Error(), "no Client") {
		t.Errorf("CheckESXi: %v", err)
	}

	for _, r := range apply.ApplyAll(ctx, nil, targets, apply.AllOptions{}) {
		if !errors.Is(r.Err, apply.ErrNoInventory) {
			t.Errorf("nil inventory: %s: %v", r.Target, r.Err)
		}
	}
	if _, err := apply.Switches(ctx, nil, sw); !errors.Is(err, apply.ErrNoInventory) {
		t.Errorf("Switches(nil): %v", err)
	}
	if _, err := apply.CheckHosts(ctx, nil, apply.HostsOptions{}); !errors.Is(err, apply.ErrNoInventory) {
		t.Errorf("CheckHosts(nil): %v", err)
	}
	if len(sim.Received()) != 0 {
		t.Errorf("the switch received %q", sim.Received())
	}
}

// panicModules is an nmlx5_core parameter store with a bug: it panics in
// the goroutines where ESXi reads the hosts' parameters.
type panicModules struct{}

func (panicModules) Get(context.Context, apply.ESXiHost, string) (string, error) {
	panic("a bug in the caller's ModuleParams")
}
func (panicModules) Set(context.Context, apply.ESXiHost, string, string) error { return nil }

// A panic inside a target, even in one of its machines' goroutines, is
// that target's error (with its stack); the other targets end as they
// would, and the caller's process goes on.
func TestApplyAllTargetPanics(t *testing.T) {
	inv, sim, sw := switchEnv(t)
	vc, err := vcsimtest.New(inv, vcsimtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vc.Close)
	ctx := context.Background()
	connect := apply.VCenter{URL: vc.URL.String(), Username: vcsimtest.Username, Password: vcsimtest.Password, CACerts: vc.CAFile}.Connector()
	esxi := apply.ESXiOptions{Common: apply.Common{Parallel: 4}, Connect: connect, Modules: panicModules{}}
	res := apply.ApplyAll(ctx, inv, []apply.Target{sw, esxi}, apply.AllOptions{})
	var p *apply.PanicError
	if !errors.As(res[1].Err, &p) || p.In != "target esxi" || p.Value != "a bug in the caller's ModuleParams" || !strings.Contains(string(p.Stack), "panicModules.Get") {
		t.Fatalf("esxi: %v", res[1].Err)
	}
	// The switch got its whole plan: 18 commands (10 before every port
	// had its description).
	if res[0].Err != nil || res[0].Result.Machines[0].Status != applyplan.Changed || len(sim.Received()) != 18 ||
		len(res[0].Result.Machines[0].Changes) != 18 {
		t.Errorf("switch: %v %+v", res[0].Err, res[0].Result)
	}

	// A Connect that panics is the target's error too.
	esxi.Connect = func(context.Context) (*vim25.Client, func(), error) { panic("login") }
	res = apply.ApplyAll(ctx, inv, []apply.Target{esxi}, apply.AllOptions{})
	if !errors.As(res[0].Err, &p) || p.Value != "login" {
		t.Errorf("a panicking Connect: %v", res[0].Err)
	}
}
