// Package driver is the one loop of `rdggen apply`, shared by every target
// (the switches of each OS, the ESXi hosts, the VMs, the workers): read
// every machine and plan it, print the plans in inventory order, ask once,
// push the machines that have changes, each push verified by its engine,
// and print each result as it ends (ReadPlanPush; Drive for the engines
// that reach the VMs over SSH, with their per-host lines and summary). It
// also holds the one bounded ForEach the engines use for their reads and
// checks, and the check loop of the VMs (CheckEach).
//
// The engines know their machines (what to read, how to plan, what to send
// and how to verify it); package progress only displays; the transports
// (SSH, the NVUE REST API, vCenter) only transport.
package driver

import (
	"context"
	"fmt"
	"io"
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
	// Pending reports whether the machine was read and has changes to push.
	Pending() bool
	// Push sends the changes and verifies them; it records its own result
	// and time.
	Push(ctx context.Context)
	// WriteResult writes what Push did to w.
	WriteResult(w io.Writer)
}

// Run is what ReadPlanPush needs besides the units.
type Run struct {
	// ReadPhase and PushPhase name the two phases for the progress display,
	// as fmt formats taking the number of machines, e.g. "reading the
	// running-config of %d switch(es)" and "changing %d switch(es)".
	ReadPhase, PushPhase string
	// Announce, when set, is written once before the first push, given the
	// number of machines to push.
	Announce func(n int) string
	Parallel int
	DryRun   bool
	Gate     applyplan.Gate
	Track    *progress.Tracker
	Out      io.Writer
}

// ReadPlanPush prepares every unit (Parallel at a time; prepare(i) reads
// and plans machine i, named names[i]), prints all plans in order, stops
// there on a dry run or when the gate refuses (Ask), and else pushes the
// pending units (Parallel at a time, none once ctx is done), printing each
// result as it ends. It returns the units in the order of names.
func ReadPlanPush[U Unit](ctx context.Context, names []string, r Run, prepare func(i int) U) []U {
	units := make([]U, len(names))
	r.Track.Phase(fmt.Sprintf(r.ReadPhase, len(names)), len(names))
	ForEach(len(names), r.Parallel, func(i int) {
		r.Track.Begin(names[i])
		units[i] = prepare(i)
		r.Track.End(names[i])
	})
	var plan strings.Builder
	var todo []int
	planned := make([]applyplan.Machine, len(units))
	for i, u := range units {
		u.WritePlan(&plan)
		planned[i] = u.Machine()
		if u.Pending() {
			todo = append(todo, i)
		}
	}
	io.WriteString(r.Out, plan.String())
	if !Ask(ctx, r.DryRun, len(todo), r.Gate, planned) {
		return units
	}
	r.Track.Phase(fmt.Sprintf(r.PushPhase, len(todo)), len(todo))
	out := progress.Sync(r.Out)
	if r.Announce != nil {
		io.WriteString(out, r.Announce(len(todo)))
	}
	ForEach(len(todo), r.Parallel, func(k int) {
		i := todo[k]
		if ctx.Err() != nil {
			return // not started: stays planned
		}
		r.Track.Begin(names[i])
		units[i].Push(ctx)
		r.Track.End(names[i])
		var b strings.Builder
		units[i].WriteResult(&b)
		io.WriteString(out, b.String())
	})
	return units
}

// ReadPlanPushResults is ReadPlanPush for units that end in a result
// (finish returns it and whether the machine failed): the results in the
// order of names, and err naming the failed machines, "N of M what
// failed: a, b" (what names the machines, e.g. "switch(es)"), or nil.
func ReadPlanPushResults[U Unit, R any](ctx context.Context, names []string, r Run, what string, prepare func(i int) U, finish func(U) (R, bool)) ([]R, error) {
	units := ReadPlanPush(ctx, names, r, prepare)
	results := make([]R, len(units))
	var failed []string
	for i, u := range units {
		var bad bool
		if results[i], bad = finish(u); bad {
			failed = append(failed, names[i])
		}
	}
	if len(failed) > 0 {
		return results, fmt.Errorf("%d of %d %s failed: %s", len(failed), len(units), what, strings.Join(failed, ", "))
	}
	return results, nil
}

// Ask is the one question between a plan and its push: false on a dry run
// or when nothing is pending (the gate is not asked), else what the gate
// answers, asked with every planned machine.
func Ask(ctx context.Context, dryRun bool, pending int, gate applyplan.Gate, planned []applyplan.Machine) bool {
	return !dryRun && pending > 0 && gate.Pass(ctx, planned)
}

// ForEach runs f(0) … f(n-1) with at most par (≥ 1) at once and returns
// when all have returned.
func ForEach(n, par int, f func(int)) {
	sem := make(chan struct{}, max(par, 1))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}
