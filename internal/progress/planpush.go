package progress

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/rdggen/rdggen/pkg/applyplan"
)

// Unit is one machine of a read–plan–push run (a switch of either OS).
type Unit interface {
	// WritePlan writes the machine's plan (or why it has none) to w.
	WritePlan(w io.Writer)
	// Machine is the plan as the confirmation and -o json see it.
	Machine() applyplan.Machine
	// Pending reports whether the machine was read and has changes to push.
	Pending() bool
	// Push sends the changes; it records its own result and time.
	Push(ctx context.Context)
	// WriteResult writes what Push did to w.
	WriteResult(w io.Writer)
}

// Run is what ReadPlanPush needs besides the units.
type Run struct {
	// What names the machines in the phase lines, e.g. "Cumulus switch(es)".
	What string
	// Reading is the read phase's verb phrase, e.g. "reading the running-config of".
	Reading  string
	Parallel int
	DryRun   bool
	Gate     applyplan.Gate
	Track    *Tracker
	Out      io.Writer
}

// ReadPlanPush prepares every unit (Parallel at a time; prepare(i) reads
// and plans machine i, named names[i]), prints all plans in order, stops
// there on a dry run or when the gate refuses, and else pushes the pending
// units (Parallel at a time, none once ctx is done), printing each result as
// it ends. It returns the units in the order of names.
func ReadPlanPush[U Unit](ctx context.Context, names []string, r Run, prepare func(i int) U) []U {
	units := make([]U, len(names))
	r.Track.Phase(fmt.Sprintf("%s %d %s", r.Reading, len(names), r.What), len(names))
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
	if r.DryRun || len(todo) == 0 || !r.Gate.Pass(ctx, planned) {
		return units
	}
	r.Track.Phase(fmt.Sprintf("changing %d %s", len(todo), r.What), len(todo))
	out := Sync(r.Out)
	ForEach(len(todo), r.Parallel, func(k int) {
		i := todo[k]
		if ctx.Err() != nil {
			return
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

// ForEach runs f(0) … f(n-1) with at most par (≥ 1) at once.
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
