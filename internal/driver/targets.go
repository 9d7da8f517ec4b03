package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rdggen/rdggen/pkg/applyplan"
)

// Target is one apply target of a run of several: its name, the targets
// it pushes after when they take part in the same run (After: the workers
// after the hosts, on whose Docker they run), and its whole apply (read,
// plan, ask gate, push, verify), which calls gate once between its plan and
// its first change. The targets' After must not form a cycle (each would
// wait for the other).
type Target struct {
	Name  applyplan.TargetName
	After []applyplan.TargetName
	Run   func(ctx context.Context, gate applyplan.Gate) error
}

// Targets says how a run of several targets asks and reports. Every
// field may be nil.
type Targets struct {
	// Confirm is asked once, after every target planned (or ended), with
	// all their planned machines; nil pushes without asking (--yes, or a
	// dry run, whose targets push nothing).
	Confirm applyplan.Gate
	// Planned is called when target i has planned and waits at the
	// question; what names what it waits for ("the plans of esxi, then
	// the confirmation"). The returned func is called when it goes on.
	Planned func(i int, what string) (done func())
	// Waiting is called when target i waits for other targets to finish
	// (its After) with what it waits for.
	Waiting func(i int, what string)
	// Ended is called when target i's Run returned, with its error and
	// how long it ran (seconds).
	Ended func(i int, err error, seconds float64)
}

// RunTargets runs the targets concurrently (they touch different
// machines), with one question for all of them: each target's gate holds
// it after its plan until every target has planned or ended, then all go
// on or none does. A target whose After names targets of the run starts
// pushing only after those have ended. It returns each target's error, in
// the targets' order. A panic in a target's goroutine (or in Ended) is
// that target's error (a *PanicError); a panic of Confirm is a no, and the
// error of every target that waited for the answer.
func RunTargets(ctx context.Context, ts []Target, o Targets) []error {
	errs := make([]error, len(ts))
	done := make([]chan struct{}, len(ts))
	byName := map[applyplan.TargetName]int{}
	for i, t := range ts {
		done[i] = make(chan struct{})
		byName[t.Name] = i
	}
	var b *barrier
	if o.Confirm != nil {
		b = newBarrier(len(ts))
		go b.decide(ctx, o.Confirm)
	}
	gates := make([]applyplan.Gate, len(ts))
	for i, t := range ts {
		var g applyplan.Gate
		if b != nil {
			inner := b.gate(i)
			g = func(ctx context.Context, planned []applyplan.Machine) bool {
				if o.Planned != nil {
					defer o.Planned(i, b.waitingFor(i, ts))()
				}
				return inner(ctx, planned)
			}
		}
		var first []int
		for _, name := range t.After {
			if j, ok := byName[name]; ok && j != i {
				first = append(first, j)
			}
		}
		if len(first) > 0 {
			inner := g
			g = func(ctx context.Context, planned []applyplan.Machine) bool {
				if !inner.Pass(ctx, planned) {
					return false
				}
				for _, j := range first {
					select {
					case <-done[j]:
						continue
					default:
					}
					if o.Waiting != nil {
						o.Waiting(i, fmt.Sprintf("waiting for the %s target to finish (%s pushes after it)", ts[j].Name, t.Name))
					}
					select {
					case <-done[j]:
					case <-ctx.Done():
						return false
					}
				}
				return ctx.Err() == nil
			}
		}
		gates[i] = g
	}
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			func() {
				defer func() {
					if p := Recovered(recover(), "target "+t.Name.String()); p != nil {
						errs[i] = p
					}
				}()
				errs[i] = t.Run(ctx, gates[i])
			}()
			if o.Ended != nil {
				func() {
					defer func() {
						if p := Recovered(recover(), "the end of target "+t.Name.String()); p != nil {
							errs[i] = p
						}
					}()
					o.Ended(i, errs[i], time.Since(t0).Seconds())
				}()
			}
			close(done[i])
			if b != nil {
				b.arrive(i, nil) // a target that ended before its gate
			}
		}()
	}
	wg.Wait()
	if b != nil {
		<-b.decided // every target arrived: the decision is made or skipped
		if b.panic != nil {
			for i := range ts {
				if b.asked[i] && errs[i] == nil {
					errs[i] = b.panic
				}
			}
		}
	}
	return errs
}

// barrier holds every target at its gate until all have planned (or
// ended), then decides once for all of them.
type barrier struct {
	mu      sync.Mutex
	arrived []bool
	planned [][]applyplan.Machine
	left    int
	asking  int           // targets that arrived at their gate (not by ending)
	asked   []bool        // which did
	all     chan struct{} // closed when every target arrived
	decided chan struct{} // closed when ok is set
	ok      bool
	panic   *PanicError // of the question
}

func newBarrier(n int) *barrier {
	b := &barrier{arrived: make([]bool, n), asked: make([]bool, n), planned: make([][]applyplan.Machine, n), left: n,
		all: make(chan struct{}), decided: make(chan struct{})}
	if n == 0 {
		close(b.all)
	}
	return b
}

// arrive records target i's plan; only its first arrival counts.
func (b *barrier) arrive(i int, planned []applyplan.Machine) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.arrived[i] {
		return
	}
	b.arrived[i], b.planned[i] = true, planned
	if b.left--; b.left == 0 {
		close(b.all)
	}
}

// waitingFor says what target i waits for at the barrier: the targets
// still planning, then the answer.
func (b *barrier) waitingFor(i int, ts []Target) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var names []string
	for j, t := range ts {
		if j != i && !b.arrived[j] {
			names = append(names, t.Name.String())
		}
	}
	if len(names) == 0 {
		return "the confirmation"
	}
	return "the plans of " + strings.Join(names, ", ") + ", then the confirmation"
}

// gate is target i's Gate: arrive, then wait for the decision.
func (b *barrier) gate(i int) applyplan.Gate {
	return func(ctx context.Context, planned []applyplan.Machine) bool {
		b.mu.Lock()
		if !b.arrived[i] {
			b.asking++
			b.asked[i] = true
		}
		b.mu.Unlock()
		b.arrive(i, planned)
		select {
		case <-b.decided:
			return b.ok && ctx.Err() == nil
		case <-ctx.Done():
			return false
		}
	}
}

// decide waits for every target, then asks (ask sees all their
// machines), unless no target waits at its gate (none has a change). A
// panic of ask is a no, kept in b.panic.
func (b *barrier) decide(ctx context.Context, ask applyplan.Gate) {
	defer close(b.decided)
	defer func() {
		if p := Recovered(recover(), "the confirmation"); p != nil {
			b.ok, b.panic = false, p
		}
	}()
	select {
	case <-b.all:
	case <-ctx.Done():
		return
	}
	if b.asking == 0 {
		b.ok = true
		return
	}
	b.ok = ask(ctx, slices.Concat(b.planned...))
}
