package driver

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// HostResult is what an engine did on one host.
type HostResult struct {
	Host string
	// Plan is the plan's text ("+ route ...", ...); empty when up to date.
	Plan []string
	// Changes counts the planned changes (applied unless dry run or Err).
	Changes int
	// Err is the host's failure, nil on success.
	Err error
	// RoundTrips counts the commands (SSH sessions) run on the host.
	RoundTrips int
	// Pending: changes were planned and not applied (the confirmation was
	// refused, or the run was interrupted before this host).
	Pending bool
}

// Report is the outcome of an engine's run over all hosts, in inventory order.
type Report struct {
	Hosts                     []HostResult
	Changed, UpToDate, Failed int
	// Pending counts the hosts whose planned changes were not applied.
	Pending                    int
	ProbeElapsed, TotalElapsed time.Duration
	// Machines is the same outcome for `--output json`, in inventory order.
	Machines []applyplan.Machine
	// SummaryLine is the summary Drive printed last.
	SummaryLine string
}

// Add records one host's result and counts it.
func (r *Report) Add(res HostResult) {
	switch {
	case res.Err != nil:
		r.Failed++
	case res.Pending:
		r.Pending++
	case res.Changes == 0:
		r.UpToDate++
	default:
		r.Changed++
	}
	r.Hosts = append(r.Hosts, res)
}

// FailedHosts names the hosts that failed.
func (r *Report) FailedHosts() []string {
	var out []string
	for _, h := range r.Hosts {
		if h.Err != nil {
			out = append(out, h.Host)
		}
	}
	return out
}

// Err is nil when no host failed, else an error that names them.
func (r *Report) Err() error {
	if failed := r.FailedHosts(); len(failed) > 0 {
		return fmt.Errorf("%d of %d host(s) failed: %s", len(failed), len(r.Hosts), strings.Join(failed, ", "))
	}
	return nil
}

// Summary is the engine's last line, e.g. "hosts: 2 changed, 6 up to date,
// 0 failed (1.20s)"; upToDate and changed add what a run of each kind cost.
func (r *Report) Summary(target applyplan.TargetName, dryRun bool, upToDate, changed string) string {
	secs := r.TotalElapsed.Seconds()
	failed := ""
	if f := r.FailedHosts(); len(f) > 0 {
		failed = " (" + strings.Join(f, ", ") + ")"
	}
	switch {
	case dryRun:
		return fmt.Sprintf("%s: dry run, nothing changed: %d would change, %d up to date, %d failed%s (%.2fs)",
			target, r.Changed, r.UpToDate, r.Failed, failed, secs)
	case r.Pending > 0:
		return fmt.Sprintf("%s: %d changed, %d not applied (planned), %d up to date, %d failed%s (%.2fs)",
			target, r.Changed, r.Pending, r.UpToDate, r.Failed, failed, secs)
	case r.Changed == 0 && r.Failed == 0:
		return fmt.Sprintf("%s: nothing to do: %d up to date (%.2fs%s)", target, r.UpToDate, secs, upToDate)
	}
	return fmt.Sprintf("%s: %d changed, %d up to date, %d failed%s (%.2fs%s)", target, r.Changed, r.UpToDate, r.Failed, failed, secs, changed)
}

// PlannedHost is one host's plan as an engine's Probe returns it.
type PlannedHost struct {
	// Err stops the host before anything is changed.
	Err error
	// Changes are the planned changes, every one (the text plan shortens
	// long runs of one kind).
	Changes []applyplan.Change
	// Notes are remarks that change nothing ("! …").
	Notes []string
	// UpToDate, when set, is said of a host without changes.
	UpToDate string
}

// maxListed bounds the lines of one kind (the same sign and first word of
// the item, e.g. "+ route") that a text plan prints per host.
const maxListed = 10

// PlanLines is the text of changes for a person: each change's Text, with a
// run of more than maxListed changes of one kind cut to maxListed and a
// "+ ... N more route(s)" line.
func PlanLines(changes []applyplan.Change) []string {
	var out []string
	kind := func(c applyplan.Change) string {
		w, _, _ := strings.Cut(c.Item, " ")
		return string(c.Op) + " " + w
	}
	for i := 0; i < len(changes); {
		j := i
		for j < len(changes) && kind(changes[j]) == kind(changes[i]) {
			j++
		}
		for k := i; k < j && k < i+maxListed; k++ {
			out = append(out, changes[k].Text)
		}
		if n := j - i - maxListed; n > 0 {
			sign, _, _ := strings.Cut(changes[i].Text, " ")
			w, _, _ := strings.Cut(changes[i].Item, " ")
			out = append(out, fmt.Sprintf("%s ... %d more %s(s)", sign, n, w))
		}
		i = j
	}
	return out
}

// Texts is the Text of every change.
func Texts(changes []applyplan.Change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.Text
	}
	return out
}

// Engine is what Drive needs from an SSH engine (hosts, workers): how to
// plan and apply one host, and how to talk about it.
type Engine struct {
	// Target is the engine's --target ("hosts"); Kind its machines'
	// applyplan kind.
	Target applyplan.TargetName
	Kind   string
	Hosts  []*inventory.Host
	// Parallel bounds the hosts probed or changed at once (≥ 1).
	Parallel int
	DryRun   bool
	// Out receives the plan, each host's line as it finishes and the
	// summary; writes are serialized.
	Out io.Writer
	// Track hears the phases and hosts in flight; nil for none.
	Track *progress.Tracker
	// Gate is asked once between the plan and the first change.
	Gate applyplan.Gate
	// Probe connects to host i, reads its state and plans it.
	Probe func(ctx context.Context, i int) PlannedHost
	// Apply applies host i's plan; done is what the success line adds
	// ("verified: …"), notes are printed under it.
	Apply func(ctx context.Context, i int) (done string, notes []string, err error)
	// RoundTrips, when set, counts host i's SSH commands for the Report.
	RoundTrips func(i int) int
	// UpToDateCost and ChangedCost end the summary's parenthesis.
	UpToDateCost, ChangedCost string
}

// Drive runs an SSH engine (hosts, workers) through ReadPlanPush: probe every host (Parallel
// at once), print the plan in inventory order, pass the gate, apply the
// hosts that have changes (Parallel at once) printing each one's line with
// its time as it finishes, then the summary. One host's failure never stops
// the others; a cancelled ctx stops the hosts not yet started (they stay
// "planned") and interrupts those in flight. The error names the failed
// hosts.
func Drive(ctx context.Context, e Engine) (*Report, error) {
	start := time.Now()
	out := progress.Sync(e.Out)
	names := make([]string, len(e.Hosts))
	for i, h := range e.Hosts {
		names[i] = h.Name
	}
	// probed is when the last probe ended: the read phase's length.
	var (
		mu     sync.Mutex
		probed time.Duration
	)
	units := ReadPlanPush(ctx, names, Run{
		ReadPhase: "reading the state of %d VM(s) over SSH", PushPhase: "changing %d VM(s)",
		Announce: func(n int) string {
			return fmt.Sprintf("applying to %d host(s), %d at a time\n", n, max(e.Parallel, 1))
		},
		Parallel: e.Parallel, DryRun: e.DryRun, Gate: e.Gate, Track: e.Track, Out: out,
	}, func(i int) *hostUnit {
		u := &hostUnit{e: &e, i: i, planned: e.Probe(ctx, i)}
		mu.Lock()
		probed = max(probed, time.Since(start))
		mu.Unlock()
		u.machine = u.plannedMachine()
		u.err = u.planned.Err
		return u
	})
	rep := &Report{ProbeElapsed: probed}
	machines := make([]applyplan.Machine, len(units))
	for i, u := range units {
		machines[i] = u.machine
		res := HostResult{Host: u.host().Name, Err: u.err}
		if e.RoundTrips != nil {
			res.RoundTrips = e.RoundTrips(i)
		}
		if c := u.planned.Changes; len(c) > 0 {
			res.Plan, res.Changes = Texts(c), len(c)
		}
		// Changes never applied (refused gate, interrupted before the
		// host) are pending, not changed.
		res.Pending = !e.DryRun && res.Err == nil && u.machine.Status == applyplan.Planned
		rep.Add(res)
	}
	rep.Machines = machines
	rep.TotalElapsed = time.Since(start)
	rep.SummaryLine = rep.Summary(e.Target, e.DryRun, e.UpToDateCost, e.ChangedCost)
	fmt.Fprintln(out, rep.SummaryLine)
	return rep, rep.Err()
}

// hostUnit is one host of an SSH engine as the driver sees it.
type hostUnit struct {
	e       *Engine
	i       int
	planned PlannedHost
	machine applyplan.Machine
	// err is the host's failure: its probe's, then its apply's.
	err error
	// done and notes are what a successful apply adds to its line.
	done  string
	notes []string
	secs  float64
}

func (u *hostUnit) host() *inventory.Host { return u.e.Hosts[u.i] }

// plannedMachine is the host's plan as applyplan sees it.
func (u *hostUnit) plannedMachine() applyplan.Machine {
	h, p := u.host(), u.planned
	m := applyplan.Machine{Target: u.e.Target, Name: h.Name, Kind: u.e.Kind, Address: h.Mgmt, Changes: p.Changes, Notes: p.Notes, Status: applyplan.UpToDate}
	if m.Changes == nil {
		m.Changes = []applyplan.Change{}
	}
	switch {
	case p.Err != nil:
		m.Status, m.Error, m.Err = applyplan.Failed, p.Err.Error(), p.Err
	case len(p.Changes) > 0:
		m.Status = applyplan.Planned
	}
	return m
}

func (u *hostUnit) Machine() applyplan.Machine { return u.machine }

func (u *hostUnit) Pending() bool { return u.planned.Err == nil && len(u.planned.Changes) > 0 }

func (u *hostUnit) WritePlan(w io.Writer) { writePlan(w, u.host(), u.planned, u.e.DryRun) }

func (u *hostUnit) Push(ctx context.Context) {
	t0 := time.Now()
	done, notes, err := u.e.Apply(ctx, u.i)
	u.secs = time.Since(t0).Seconds()
	u.done, u.notes, u.err = done, notes, err
	m := &u.machine
	m.Seconds = u.secs
	m.Notes = append(m.Notes, notes...)
	switch {
	case err != nil && ctx.Err() != nil:
		m.Status, m.Error, m.Err = applyplan.Interrupted, err.Error(), err
	case err != nil:
		m.Status, m.Error, m.Err = applyplan.Failed, err.Error(), err
	default:
		m.Status = applyplan.Changed
	}
}

func (u *hostUnit) WriteResult(w io.Writer) {
	var b strings.Builder
	name, secs := u.host().Name, u.secs
	switch u.machine.Status {
	case applyplan.Interrupted:
		fmt.Fprintf(&b, "%s: INTERRUPTED after %.1fs: %v (some changes may be made; run apply again)\n", name, secs, u.err)
	case applyplan.Failed:
		fmt.Fprintf(&b, "%s: FAILED after %.1fs: %v\n", name, secs, u.err)
	default:
		fmt.Fprintf(&b, "%s: applied %d change(s), verified%s (%.1fs)\n", name, len(u.machine.Changes), u.done, secs)
	}
	for _, note := range u.notes {
		fmt.Fprintf(&b, "  %s\n", note)
	}
	io.WriteString(w, b.String())
}

// writePlan prints one host's plan: its failure, "up to date", or its
// changes, then its notes.
func writePlan(out io.Writer, h *inventory.Host, p PlannedHost, dryRun bool) {
	var b strings.Builder
	switch {
	case p.Err != nil:
		fmt.Fprintf(&b, "%s (%s): FAILED: %v\n", h.Name, h.Mgmt, p.Err)
		io.WriteString(out, b.String())
		return
	case len(p.Changes) == 0:
		detail := ""
		if p.UpToDate != "" {
			detail = " (" + p.UpToDate + ")"
		}
		fmt.Fprintf(&b, "%s (%s): up to date%s\n", h.Name, h.Mgmt, detail)
	default:
		verb := "change(s)"
		if dryRun {
			verb = "change(s) planned"
		}
		fmt.Fprintf(&b, "%s (%s): %d %s\n", h.Name, h.Mgmt, len(p.Changes), verb)
		for _, l := range PlanLines(p.Changes) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "  ! %s\n", n)
	}
	io.WriteString(out, b.String())
}
