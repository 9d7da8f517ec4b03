// Package driver is the one loop of `rdggen apply`, shared by every target
// (the switches of each OS, the ESXi hosts and their VMs, the VMs over SSH,
// the workers): read every machine and plan it, print the plans in
// inventory order, ask once, push the machines that have changes (each
// after the machines it declares it follows: a VM after its ESXi host),
// each push verified by its engine, and print each result as it ends
// (ReadPlanPush, or PlanPush for an engine that reads all its machines at
// once). Between targets it runs several loops with one question for all
// of them, each target after those it declares it follows (RunTargets). It
// also holds the one bounded ForEach the engines use for their reads and
// checks, and the check loop (Check, CheckEach).
//
// A panic in a machine's or a target's goroutine is not lost with the
// process: ForEach and the push loop hand it to their caller, and
// RunTargets turns it into that target's error (a *PanicError, with the
// stack where it happened).
//
// The engines know their machines (what to read, how to plan, what to send
// and how to verify it); package progress only displays; the transports
// (SSH, the NVUE REST API, vCenter) only transport.
package driver

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/applyplan"
)

// Unit is one machine of a read–plan–push run.
type Unit interface {
	// WritePlan writes the machine's plan (or why it has none) to w.
	WritePlan(w io.Writer)
	// Machine is the plan as the confirmation and -o json see it.
	Machine() applyplan.Machine
	// Pending reports whether the machine has work to push: it is pushed
	// when its turn comes and it is still pending then.
	Pending() bool
	// Push sends the changes and verifies them; it records its own result
	// and time.
	Push(ctx context.Context)
	// WriteResult writes what Push did to w.
	WriteResult(w io.Writer)
}

// Ordered is a Unit that is pushed only after other units of its run:
// After names them (as the loop names its units). A unit named there that
// is not pushed (nothing to change, not read) is not waited for; a unit
// whose turn comes when it is no longer Pending (the unit it followed
// failed it) is skipped.
type Ordered interface {
	Unit
	After() []string
}

// Run is what ReadPlanPush and PlanPush need besides the units.
type Run struct {
	// ReadPhase and PushPhase name the two phases for the progress display,
	// given the number of machines, e.g. "reading the running-config of 2
	// switch(es)" and "changing 2 switch(es)".
	ReadPhase, PushPhase func(n int) string
	// Announce, when set, is written once before the first push, given the
	// number of machines to push.
	Announce func(n int) string
	// PlanEnd, when set, writes what follows the units' plans (a count of
	// what already matches).
	PlanEnd func(w io.Writer)
	// BeforePush, when set, runs once the push is agreed, before the first
	// unit is pushed: a step of the whole target (ESXi clones the VMs
	// vCenter lacks and plans again). Pending is asked after it.
	BeforePush func(ctx context.Context)
	Parallel   int
	DryRun     bool
	Gate       applyplan.Gate
	Track      *progress.Tracker
	Out        io.Writer
}

// Phrase is a phase name of Run that does not depend on the count.
func Phrase(s string) func(int) string { return func(int) string { return s } }

// Phrasef is a phase name of Run with the count in it: format takes it as
// its one %d.
func Phrasef(format string) func(int) string {
	return func(n int) string { return fmt.Sprintf(format, n) }
}

// ReadPlanPush prepares every unit (Parallel at a time; prepare(i) reads
// and plans machine i, named names[i]), then runs PlanPush. It returns the
// units in the order of names.
func ReadPlanPush[U Unit](ctx context.Context, names []string, r Run, prepare func(i int) U) []U {
	units := make([]U, len(names))
	r.Track.Phase(r.ReadPhase(len(names)), len(names))
	ForEach(len(names), r.Parallel, func(i int) {
		r.Track.Begin(names[i])
		units[i] = prepare(i)
		r.Track.End(names[i])
	})
	PlanPush(ctx, names, r, units)
	return units
}

// PlanPush prints every unit's plan in order, stops there on a dry run,
// when nothing is to change or when the gate refuses (Ask), and else runs
// BeforePush and pushes the pending units: Parallel at a time, each after
// the units it follows (Ordered), a unit free to go before one that waits
// on others and else in the order of names, none once ctx is done; each
// result is printed as it ends. It reports whether the push was agreed.
// Unit i is named names[i]. A panic in a push is raised again here, once
// every other push has ended.
func PlanPush[U Unit](ctx context.Context, names []string, r Run, units []U) bool {
	var plan strings.Builder
	planned := make([]applyplan.Machine, len(units))
	for i, u := range units {
		u.WritePlan(&plan)
		planned[i] = u.Machine()
	}
	if r.PlanEnd != nil {
		r.PlanEnd(&plan)
	}
	io.WriteString(r.Out, plan.String())
	if !Ask(ctx, r.DryRun, r.Gate, planned) {
		return false
	}
	if r.BeforePush != nil {
		r.BeforePush(ctx)
	}
	var todo []int
	for i, u := range units {
		if u.Pending() {
			todo = append(todo, i)
		}
	}
	r.Track.Phase(r.PushPhase(len(todo)), len(todo))
	out := progress.Sync(r.Out)
	if r.Announce != nil {
		io.WriteString(out, r.Announce(len(todo)))
	}
	push(ctx, names, units, todo, r, out)
	return true
}

// push pushes units todo (indexes into units) as PlanPush says.
func push[U Unit](ctx context.Context, names []string, units []U, todo []int, r Run, out io.Writer) {
	// waits[i] counts the pushes unit i waits for; next[i] the units that
	// wait for unit i; level[i] how many waits deep it is.
	at := map[string]int{}
	for _, i := range todo {
		at[names[i]] = i
	}
	waits, next, level := map[int]int{}, map[int][]int{}, map[int]int{}
	for _, i := range todo {
		o, ok := any(units[i]).(Ordered)
		if !ok {
			continue
		}
		for _, name := range o.After() {
			if j, ok := at[name]; ok && j != i {
				waits[i]++
				next[j] = append(next[j], i)
			}
		}
	}
	var ready []int
	for _, i := range todo {
		if waits[i] == 0 {
			ready = append(ready, i)
		}
	}
	// Levels in waiting order (a cycle, which no engine makes, is broken
	// by starting its units as if they waited for nothing).
	for queue := slices.Clone(ready); len(queue) > 0; queue = queue[1:] {
		for _, k := range next[queue[0]] {
			level[k] = max(level[k], level[queue[0]]+1)
			if waits[k]--; waits[k] == 0 {
				queue = append(queue, k)
			}
		}
	}
	waits = map[int]int{}
	for _, i := range todo {
		for _, k := range next[i] {
			waits[k]++
		}
	}
	for _, i := range todo {
		if waits[i] > 0 && level[i] == 0 {
			waits[i] = 0 // in a cycle
			ready = append(ready, i)
		}
	}
	less := func(a, b int) int {
		if level[a] != level[b] {
			return level[a] - level[b]
		}
		return a - b
	}
	type ended struct {
		i int
		p *PanicError
	}
	done := make(chan ended)
	var caught *PanicError
	running := 0
	for {
		for running < max(r.Parallel, 1) && len(ready) > 0 && ctx.Err() == nil {
			slices.SortFunc(ready, less)
			i := ready[0]
			ready = ready[1:]
			if !units[i].Pending() {
				// Its turn came, and there is nothing left to push: what it
				// followed failed it, or a step before the push did it.
				for _, k := range next[i] {
					if waits[k]--; waits[k] == 0 {
						ready = append(ready, k)
					}
				}
				continue
			}
			running++
			go func() {
				defer func() { done <- ended{i, Recovered(recover(), "the push of "+names[i])} }()
				r.Track.Begin(names[i])
				units[i].Push(ctx)
				r.Track.End(names[i])
				var b strings.Builder
				units[i].WriteResult(&b)
				io.WriteString(out, b.String())
			}()
		}
		if running == 0 {
			break
		}
		e := <-done
		running--
		if caught == nil {
			caught = e.p
		}
		for _, k := range next[e.i] {
			if waits[k]--; waits[k] == 0 {
				ready = append(ready, k)
			}
		}
	}
	if caught != nil {
		panic(caught)
	}
}

// Ask is the one question between a plan and its push: false on a dry run
// or when no planned machine has a change (the gate is not asked), else
// what the gate answers, asked with every planned machine.
func Ask(ctx context.Context, dryRun bool, gate applyplan.Gate, planned []applyplan.Machine) bool {
	if changes, _ := applyplan.Count(planned); dryRun || changes == 0 {
		return false
	}
	return gate.Pass(ctx, planned)
}

// ForEach runs f(0) … f(n-1) with at most par (≥ 1) at once and returns
// when all have returned. A panic in f is raised again in the caller's
// goroutine once all have returned (the first one, as a *PanicError).
func ForEach(n, par int, f func(int)) {
	sem := make(chan struct{}, max(par, 1))
	var wg sync.WaitGroup
	var once sync.Once
	var caught *PanicError
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() {
				if v := recover(); v != nil {
					once.Do(func() { caught = asPanic(v, "") })
				}
				<-sem
				wg.Done()
			}()
			f(i)
		}()
	}
	wg.Wait()
	if caught != nil {
		panic(caught)
	}
}

// Go runs f in its own goroutine; wait waits for it to return and raises
// again, in the caller's goroutine, a panic of f.
func Go(f func()) (wait func()) {
	done := make(chan *PanicError, 1)
	go func() {
		var caught *PanicError
		defer func() { done <- caught }()
		defer func() {
			if v := recover(); v != nil {
				caught = asPanic(v, "")
			}
		}()
		f()
	}()
	return func() {
		if p := <-done; p != nil {
			panic(p)
		}
	}
}

// PanicError is a panic caught in a goroutine of apply, check or their
// question, given back as an error: what panicked (In, e.g. "target
// esxi"), the value it panicked with, and the stack of the goroutine where
// it happened (runtime/debug.Stack), so that a bug can be found without
// the process being lost.
type PanicError struct {
	In    string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	in := ""
	if e.In != "" {
		in = " in " + e.In
	}
	return fmt.Sprintf("panic%s: %v\n%s", in, e.Value, e.Stack)
}

// Unwrap gives the value panicked with when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// asPanic is v, a recovered value, as a *PanicError: the one raised again
// by ForEach or the push loop as it is (in is then set when it was not),
// any other with the stack of the recovering goroutine.
func asPanic(v any, in string) *PanicError {
	if p, ok := v.(*PanicError); ok {
		if p.In == "" {
			p.In = in
		}
		return p
	}
	return &PanicError{In: in, Value: v, Stack: debug.Stack()}
}

// Recovered is v, a value recovered in the goroutine of in ("target
// esxi"), as a *PanicError; nil for nil.
func Recovered(v any, in string) *PanicError {
	if v == nil {
		return nil
	}
	return asPanic(v, in)
}
