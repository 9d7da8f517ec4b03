package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/readiness"
)

type fakeUnit struct {
	name    string
	changes int
	pushed  bool
}

func (u *fakeUnit) WritePlan(w io.Writer) { fmt.Fprintf(w, "%s: %d change(s)\n", u.name, u.changes) }
func (u *fakeUnit) Machine() applyplan.Machine {
	return applyplan.Machine{Name: u.name, Status: applyplan.Planned}
}
func (u *fakeUnit) Pending() bool            { return u.changes > 0 }
func (u *fakeUnit) Push(ctx context.Context) { u.pushed = true }
func (u *fakeUnit) WriteResult(w io.Writer)  { fmt.Fprintf(w, "%s: pushed\n", u.name) }

func run(t *testing.T, ctx context.Context, dryRun bool, gate applyplan.Gate) (string, []*fakeUnit) {
	t.Helper()
	names := []string{"a", "b", "c"}
	changes := []int{2, 0, 1}
	var out strings.Builder
	units := ReadPlanPush(ctx, names, Run{ReadPhase: "reading %d", PushPhase: "changing %d",
		Announce: func(n int) string { return fmt.Sprintf("pushing %d\n", n) },
		Parallel: 1, DryRun: dryRun, Gate: gate, Out: &out},
		func(i int) *fakeUnit { return &fakeUnit{name: names[i], changes: changes[i]} })
	return out.String(), units
}

func TestReadPlanPush(t *testing.T) {
	var asked []int
	gate := func(yes bool) applyplan.Gate {
		return func(_ context.Context, planned []applyplan.Machine) bool {
			asked = append(asked, len(planned))
			return yes
		}
	}
	plan := "a: 2 change(s)\nb: 0 change(s)\nc: 1 change(s)\n"

	out, units := run(t, context.Background(), false, gate(true))
	if want := plan + "pushing 2\na: pushed\nc: pushed\n"; out != want {
		t.Errorf("output = %q, want %q", out, want)
	}
	if !units[0].pushed || units[1].pushed || !units[2].pushed {
		t.Errorf("pushed = %v %v %v, want true false true", units[0].pushed, units[1].pushed, units[2].pushed)
	}
	if len(asked) != 1 || asked[0] != 3 {
		t.Errorf("gate asked %v, want once with 3 machines", asked)
	}

	asked = nil
	out, units = run(t, context.Background(), false, gate(false))
	if out != plan || units[0].pushed || len(asked) != 1 {
		t.Errorf("refused: output %q, pushed %v, asked %v", out, units[0].pushed, asked)
	}

	asked = nil
	out, units = run(t, context.Background(), true, gate(true))
	if out != plan || units[0].pushed || len(asked) != 0 {
		t.Errorf("dry run: output %q, pushed %v, asked %v", out, units[0].pushed, asked)
	}

	// Interrupted after the question: nothing starts.
	ctx, cancel := context.WithCancel(context.Background())
	out, units = run(t, ctx, false, func(context.Context, []applyplan.Machine) bool { cancel(); return true })
	if out != plan+"pushing 2\n" || units[0].pushed || units[2].pushed {
		t.Errorf("cancelled: output %q, pushed %v %v", out, units[0].pushed, units[2].pushed)
	}
}

func TestForEachBound(t *testing.T) {
	var now, most, runs atomic.Int32
	ForEach(20, 3, func(int) {
		n := now.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		for range 1000 {
			runs.Add(0)
		}
		runs.Add(1)
		now.Add(-1)
	})
	if runs.Load() != 20 || most.Load() > 3 {
		t.Errorf("ran %d (want 20), at most %d at once (want ≤ 3)", runs.Load(), most.Load())
	}
}

func TestCheckOrder(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	results, errs := Check(names, 2, nil, "checking %d", func(i int) ([]readiness.Result, error) {
		if i == 2 {
			return nil, fmt.Errorf("%s unreachable", names[i])
		}
		return []readiness.Result{{Machine: names[i], Check: "x", Status: readiness.Passed}}, nil
	})
	for i, n := range names {
		switch {
		case i == 2 && (errs[i] == nil || errs[i].Error() != "c unreachable" || results[i] != nil):
			t.Errorf("c: %v %v", results[i], errs[i])
		case i != 2 && (errs[i] != nil || len(results[i]) != 1 || results[i][0].Machine != n):
			t.Errorf("%s: %v %v", n, results[i], errs[i])
		}
	}
}

// RunTargets asks once for all targets, after every one has planned (or
// ended without a change), and the workers target goes on only after the
// hosts target has ended.
func TestRunTargets(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	planned := func(target applyplan.TargetName) []applyplan.Machine {
		return []applyplan.Machine{{Target: target, Name: target.String() + "-1", Changes: []applyplan.Change{{Item: "x"}}}}
	}
	release := make(chan struct{})
	ts := []Target{
		{Name: applyplan.TargetHosts, Run: func(ctx context.Context, gate applyplan.Gate) error {
			if !gate.Pass(ctx, planned(applyplan.TargetHosts)) {
				return errors.New("declined")
			}
			<-release
			note("hosts pushed")
			return nil
		}},
		{Name: applyplan.TargetWorkers, Run: func(ctx context.Context, gate applyplan.Gate) error {
			if !gate.Pass(ctx, planned(applyplan.TargetWorkers)) {
				return errors.New("declined")
			}
			note("workers pushed")
			return nil
		}},
		{Name: applyplan.TargetSwitch, Run: func(ctx context.Context, gate applyplan.Gate) error { return nil }}, // nothing to change
	}
	asked := 0
	o := Targets{Confirm: func(_ context.Context, ms []applyplan.Machine) bool {
		asked++
		if len(ms) != 2 {
			t.Errorf("asked with %d machines, want hosts' and workers'", len(ms))
		}
		close(release)
		return true
	}}
	errs := RunTargets(ctx, ts, o)
	if asked != 1 || fmt.Sprint(errs) != "[<nil> <nil> <nil>]" || fmt.Sprint(order) != "[hosts pushed workers pushed]" {
		t.Errorf("asked %d, errors %v, order %v", asked, errs, order)
	}

	o.Confirm = func(context.Context, []applyplan.Machine) bool { return false }
	order = nil
	if errs := RunTargets(ctx, ts, o); fmt.Sprint(errs) != "[declined declined <nil>]" || len(order) != 0 {
		t.Errorf("declined: errors %v, pushed %v", errs, order)
	}
}
