package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/quote"
)

// consoleInfo is the process's terminal: main fills console, tests replace it.
type consoleInfo struct {
	// In is where the answer to the confirmation comes from; InTerminal
	// says a person is there to give it.
	In         io.Reader
	InTerminal bool
	// Stdout and Stderr are the raw files (the live display draws on them
	// itself); StdoutTerminal and StderrTerminal say they are terminals.
	Stdout, Stderr                 io.Writer
	StdoutTerminal, StderrTerminal bool
}

var console consoleInfo

// applyRun says how the targets of one apply run and report.
type applyRun struct {
	env     *applyEnv
	targets []*applyTarget
	// confirm: ask once, after every target planned, before any change.
	confirm bool
	// text takes the plan, progress and machine lines; live draws a live
	// display on it (a terminal).
	text io.Writer
	live bool
	// ask asks the question on the terminal; nil means console.In.
	ask func(ctx context.Context, question string) bool
}

// outcome is what an apply did, for the exit status and --output json.
type outcome struct {
	runs        []*targetRun
	declined    bool // the person said no
	interrupted bool
	dryRun      bool // nothing was to be pushed
}

// do runs the targets through apply.ApplyAll: concurrently (they touch
// different machines; workers apply after hosts, on whose Docker they
// run), each bounded by --parallel, with one confirmation for all of them
// when confirm is set. A target that cannot be made (its keys) fails on
// its own, and the others run.
func (a *applyRun) do(ctx context.Context) *outcome {
	display := progress.NewDisplay(a.text, a.live, 0)
	if a.live {
		display.Clean = quote.Terminal
	}
	display.Prefix = len(a.targets) > 1
	runs := make([]*targetRun, len(a.targets))
	var targets []apply.Target
	var at []int // runs[at[k]] is targets[k]'s
	for i, t := range a.targets {
		tr := &targetRun{t: t}
		tr.Track = display.Track(t.name.String())
		tr.Out = tr.Track.Writer()
		runs[i] = tr
		target, err := t.target(a.env, tr)
		if err != nil {
			tr.ended(apply.TargetResult{Target: t.name, Err: err})
			continue
		}
		targets, at = append(targets, target), append(at, i)
	}
	res := &outcome{runs: runs, dryRun: a.env.DryRun}
	o := apply.AllOptions{Ended: func(k int, r apply.TargetResult) { runs[at[k]].ended(r) }}
	if a.confirm && !a.env.DryRun {
		o.Confirm = func(ctx context.Context, planned []applyplan.Machine) bool {
			changes, machines := applyplan.Count(planned)
			if changes == 0 {
				return true
			}
			display.Pause()
			defer display.Resume()
			ok := a.question(ctx, fmt.Sprintf("Push %d change(s) to %d machine(s) (%s)? [y/N] ", changes, machines, perTarget(planned)))
			res.declined = !ok && ctx.Err() == nil
			return ok
		}
	}
	for k, r := range apply.ApplyAll(ctx, a.env.Inv, targets, o) {
		runs[at[k]].err = runs[at[k]].t.hinted(r.Err) // a panic of the question is the targets' too
	}
	display.Close()
	res.interrupted = ctx.Err() != nil
	return res
}

// question asks on the terminal and reads a line; only y or yes is yes. A
// cancelled ctx is a no.
func (a *applyRun) question(ctx context.Context, q string) bool {
	if a.ask != nil {
		return a.ask(ctx, q)
	}
	fmt.Fprint(a.text, "\n"+q)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(console.In).ReadString('\n')
		answer <- line
	}()
	select {
	case l := <-answer:
		l = strings.ToLower(strings.TrimSpace(l))
		return l == "y" || l == "yes"
	case <-ctx.Done():
		fmt.Fprintln(a.text)
		return false
	}
}

// perTarget counts the planned changes per target: "switch 10, hosts 24".
func perTarget(ms []applyplan.Machine) string {
	var names []string
	n := map[string]int{}
	for _, m := range ms {
		if c, _ := applyplan.Count([]applyplan.Machine{m}); c > 0 {
			if n[m.Target.String()] == 0 {
				names = append(names, m.Target.String())
			}
			n[m.Target.String()] += c
		}
	}
	parts := make([]string, len(names))
	for i, t := range names {
		parts[i] = fmt.Sprintf("%s %d", t, n[t])
	}
	return strings.Join(parts, ", ")
}

// document is the outcome for --output json.
func (o *outcome) document(env *applyEnv) *applyplan.Document {
	doc := &applyplan.Document{Schema: applyplan.SchemaApply, Kind: "result", Cluster: env.Inv.Name, Inventory: env.Inv.File,
		Interrupted: o.interrupted, Targets: []applyplan.Target{}, Machines: []applyplan.Machine{}}
	if env.DryRun || o.declined {
		doc.Kind = "plan"
	}
	for _, tr := range o.runs {
		t := applyplan.Target{Name: tr.t.name, Summary: tr.Summary, Seconds: tr.seconds}
		var me *apply.MachinesError
		switch {
		case errors.As(tr.err, &me):
			t.Error = me.Detail() // each machine has its own error
		case tr.err != nil:
			t.Error = tr.err.Error()
		}
		doc.Targets = append(doc.Targets, t)
		doc.Machines = append(doc.Machines, tr.Machines...)
	}
	return doc
}

// report prints the end of an apply on stderr: target-level errors, what an
// interruption left, the failed targets; it returns the exit status.
func (o *outcome) report(stderr io.Writer) int {
	var failed []string
	for _, tr := range o.runs {
		if tr.err == nil {
			continue
		}
		var me *apply.MachinesError
		if errors.As(tr.err, &me) {
			// Each machine's line said why; the last line names them.
			failed = append(failed, fmt.Sprintf("%s (%s)", tr.t.name, me.Detail()))
			continue
		}
		fmt.Fprintf(stderr, "rdggen: apply %s: %v\n", tr.t.name, tr.err)
		failed = append(failed, tr.t.name.String())
	}
	if o.interrupted && o.dryRun {
		fmt.Fprintln(stderr, "rdggen: interrupted: nothing was changed (dry run)")
		return exitFailed
	}
	if o.interrupted {
		var changed, notChanged, during []string
		for _, tr := range o.runs {
			for _, m := range tr.Machines {
				name := m.Target.String() + " " + m.Name
				switch m.Status {
				case applyplan.Changed:
					changed = append(changed, name)
				case applyplan.Interrupted:
					during = append(during, name)
				case applyplan.Planned, applyplan.Blocked:
					if len(m.Changes) > 0 {
						notChanged = append(notChanged, name)
					}
				}
			}
		}
		fmt.Fprintf(stderr, "rdggen: interrupted: changed: %s; not changed: %s; interrupted while changing (some changes may be made): %s; run apply again to finish\n",
			listOrNone(changed), listOrNone(notChanged), listOrNone(during))
		return exitFailed
	}
	if o.declined {
		fmt.Fprintln(stderr, "rdggen: apply cancelled: nothing was changed")
		return exitFailed
	}
	if len(failed) > 0 && o.dryRun {
		fmt.Fprintf(stderr, "rdggen: apply --dry-run could not plan: %s; nothing was changed\n", strings.Join(failed, "; "))
		return exitFailed
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "rdggen: apply failed for: %s\n", strings.Join(failed, "; "))
		return exitFailed
	}
	return exitOK
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 12 {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:12], ", "), len(names)-12)
	}
	return strings.Join(names, ", ")
}
