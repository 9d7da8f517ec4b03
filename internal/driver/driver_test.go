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
	m := applyplan.Machine{Name: u.name, Status: applyplan.UpToDate}
	if u.changes > 0 {
		m.Status = applyplan.Planned
		for range u.changes {
			m.Changes = append(m.Changes, applyplan.Change{Op: applyplan.Add, Item: "x"})
		}
	}
	return m
}
func (u *fakeUnit) Pending() bool            { return u.changes > 0 }
func (u *fakeUnit) Push(ctx context.Context) { u.pushed = true }
func (u *fakeUnit) WriteResult(w io.Writer)  { fmt.Fprintf(w, "%s: pushed\n", u.name) }

func run(t *testing.T, ctx context.Context, dryRun bool, gate applyplan.Gate) (string, []*fakeUnit) {
	t.Helper()
	names := []string{"a", "b", "c"}
	changes := []int{2, 0, 1}
	var out strings.Builder
	units := ReadPlanPush(ctx, names, Run{ReadPhase: Phrasef("reading %d"), PushPhase: Phrasef("changing %d"),
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
// hosts target has ended, as it declares (After).
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
		{Name: applyplan.TargetWorkers, After: []applyplan.TargetName{applyplan.TargetHosts}, Run: func(ctx context.Context, gate applyplan.Gate) error {
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

// orderedUnit is a fakeUnit that follows other units and records when it
// was pushed.
type orderedUnit struct {
	fakeUnit
	after []string
	log   *[]string
	fail  []*orderedUnit // units this one's push fails
}

func (u *orderedUnit) After() []string { return u.after }
func (u *orderedUnit) Pending() bool   { return u.changes > 0 }
func (u *orderedUnit) Push(ctx context.Context) {
	u.pushed = true
	*u.log = append(*u.log, u.name)
	for _, f := range u.fail {
		f.changes = 0
	}
}

// PlanPush pushes a unit after those it declares it follows: with one at a
// time, the units free to go first (the ESXi hosts) and then the ones that
// waited (their VMs), each in plan order; a unit whose turn comes when the
// one it followed took its work away (a failed host fails its VMs) is
// skipped, and a unit that follows one with nothing to push does not wait.
func TestPlanPushOrder(t *testing.T) {
	var log []string
	u := func(name string, changes int, after ...string) *orderedUnit {
		return &orderedUnit{fakeUnit: fakeUnit{name: name, changes: changes}, after: after, log: &log}
	}
	h1, v1, v2 := u("host 1", 1), u("vm 1", 1, "host 1"), u("vm 2", 1, "host 1")
	h2, v3 := u("host 2", 1), u("vm 3", 1, "host 2")
	h3, v4 := u("host 3", 0), u("vm 4", 1, "host 3") // nothing on host 3 itself
	h2.fail = []*orderedUnit{v3}
	units := []*orderedUnit{h1, v1, v2, h2, v3, h3, v4}
	names := make([]string, len(units))
	for i, x := range units {
		names[i] = x.name
	}
	var out strings.Builder
	pushed := PlanPush(context.Background(), names, Run{ReadPhase: Phrase("r"), PushPhase: Phrase("p"), Parallel: 1, Out: &out}, units)
	if want := "[host 1 host 2 vm 4 vm 1 vm 2]"; !pushed || fmt.Sprint(log) != want {
		t.Errorf("pushed %v in the order %v, want %s", pushed, log, want)
	}
	if v3.pushed || strings.Contains(out.String(), "vm 3: pushed") {
		t.Errorf("vm 3, failed by its host, was pushed:\n%s", out.String())
	}

	// Many at once: a VM never starts before its host ended.
	for range 20 {
		var mu sync.Mutex
		var seen []string
		hostDone := map[string]bool{}
		var us []Unit
		var ns []string
		for h := range 4 {
			host := fmt.Sprintf("host %d", h)
			us, ns = append(us, &recordUnit{name: host, mu: &mu, seen: &seen, done: hostDone}), append(ns, host)
			for v := range 3 {
				vm := fmt.Sprintf("vm %d-%d", h, v)
				us, ns = append(us, &recordUnit{name: vm, after: host, mu: &mu, seen: &seen, done: hostDone}), append(ns, vm)
			}
		}
		PlanPush(context.Background(), ns, Run{ReadPhase: Phrase("r"), PushPhase: Phrase("p"), Parallel: 3, Out: io.Discard}, us)
		if len(seen) != len(us) {
			t.Fatalf("pushed %d of %d: %v", len(seen), len(us), seen)
		}
	}
}

// recordUnit checks, as it is pushed, that the unit it follows has ended.
type recordUnit struct {
	name, after string
	mu          *sync.Mutex
	seen        *[]string
	done        map[string]bool
}

func (u *recordUnit) WritePlan(io.Writer) {}
func (u *recordUnit) Machine() applyplan.Machine {
	return applyplan.Machine{Name: u.name, Status: applyplan.Planned, Changes: []applyplan.Change{{Item: "x"}}}
}
func (u *recordUnit) Pending() bool         { return true }
func (u *recordUnit) WriteResult(io.Writer) {}
func (u *recordUnit) After() []string {
	if u.after == "" {
		return nil
	}
	return []string{u.after}
}
func (u *recordUnit) Push(context.Context) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.after != "" && !u.done[u.after] {
		panic(u.name + " pushed before " + u.after + " ended")
	}
	u.done[u.name] = true
	*u.seen = append(*u.seen, u.name)
}

// panicUnit panics in its push.
type panicUnit struct{ fakeUnit }

func (u *panicUnit) Push(context.Context) { panic("push of " + u.name) }

// A panic in a machine's goroutine (ForEach, a push) reaches the caller's
// goroutine, where it can be recovered, once the others have ended, with
// the stack where it happened.
func TestPanicReachesTheCaller(t *testing.T) {
	caught := func(f func()) (p *PanicError) {
		defer func() {
			v := recover()
			var ok bool
			if p, ok = v.(*PanicError); !ok {
				t.Fatalf("recovered %T %v, want a *PanicError", v, v)
			}
		}()
		f()
		return nil
	}
	var ran atomic.Int32
	p := caught(func() {
		ForEach(10, 3, func(i int) {
			ran.Add(1)
			if i == 4 {
				panic(errors.New("four"))
			}
		})
	})
	if ran.Load() != 10 || p.Value.(error).Error() != "four" || !errors.Is(p, p.Unwrap()) || !strings.Contains(string(p.Stack), "driver.TestPanicReachesTheCaller") {
		t.Errorf("ran %d, panic %v, stack:\n%s", ran.Load(), p.Value, p.Stack)
	}

	units := []Unit{&fakeUnit{name: "a", changes: 1}, &panicUnit{fakeUnit{name: "b", changes: 1}}, &fakeUnit{name: "c", changes: 1}}
	p = caught(func() {
		PlanPush(context.Background(), []string{"a", "b", "c"}, Run{ReadPhase: Phrase("r"), PushPhase: Phrase("p"), Parallel: 2, Out: io.Discard}, units)
	})
	if p.Value != "push of b" || p.In != "the push of b" || !units[0].(*fakeUnit).pushed || !units[2].(*fakeUnit).pushed {
		t.Errorf("panic %+v; a pushed %v, c pushed %v", p, units[0].(*fakeUnit).pushed, units[2].(*fakeUnit).pushed)
	}
	if !strings.Contains(p.Error(), "panic in the push of b: push of b\n") || !strings.Contains(p.Error(), "panicUnit).Push") {
		t.Errorf("error text:\n%s", p.Error())
	}
}

// A panic in a target's goroutine is that target's error; the others end
// as they would. A panic of the question is a no for every target, and
// their error: nothing is pushed, and the process goes on.
func TestRunTargetsPanics(t *testing.T) {
	ctx := context.Background()
	planned := []applyplan.Machine{{Name: "m", Status: applyplan.Planned, Changes: []applyplan.Change{{Item: "x"}}}}
	pushed := false
	ts := []Target{
		{Name: applyplan.TargetSwitch, Run: func(ctx context.Context, gate applyplan.Gate) error {
			if gate.Pass(ctx, planned) {
				pushed = true
			}
			return nil
		}},
		{Name: applyplan.TargetESXi, Run: func(context.Context, applyplan.Gate) error {
			return at(nil, 1) // a bug in a target
		}},
	}
	errs := RunTargets(ctx, ts, Targets{Confirm: func(context.Context, []applyplan.Machine) bool { return true }})
	var p *PanicError
	if errs[0] != nil || !pushed || !errors.As(errs[1], &p) || p.In != "target esxi" || !strings.Contains(p.Error(), "index out of range") {
		t.Errorf("errors %v, pushed %v", errs, pushed)
	}

	pushed = false
	ts[1].Run = func(context.Context, applyplan.Gate) error { return nil }
	errs = RunTargets(ctx, ts, Targets{Confirm: func(context.Context, []applyplan.Machine) bool { panic("the question") }})
	if pushed || !errors.As(errs[0], &p) || p.In != "the confirmation" || p.Value != "the question" || errs[1] != nil {
		t.Errorf("a panicking question: errors %v, pushed %v", errs, pushed)
	}

	errs = RunTargets(ctx, ts, Targets{Ended: func(i int, _ error, _ float64) {
		if i == 1 {
			panic("the caller's Ended")
		}
	}})
	if errs[0] != nil || !errors.As(errs[1], &p) || p.In != "the end of target esxi" {
		t.Errorf("a panicking Ended: errors %v", errs)
	}
}

// at is s[i]: a target's bug when i is out of range.
func at(s []error, i int) error { return s[i] }
