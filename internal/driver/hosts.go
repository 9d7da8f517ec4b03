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

// Hosts is what RunHosts needs besides the units of an SSH engine (hosts,
// workers).
type Hosts struct {
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
	// UpToDateCost and ChangedCost end the summary's parenthesis.
	UpToDateCost, ChangedCost string
}

// HostUnit is the Unit of an SSH engine: its own type, which embeds *Host
// (the plan and result lines every such engine shares, and its Result)
// and pushes with its own Push, ending it with Host.Pushed.
type HostUnit interface {
	Unit
	Result() HostResult
}

// Host is one VM of an SSH engine between its plan and its result: what
// the engines of the VMs (hosts, workers) print and report alike.
type Host struct {
	h       *inventory.Host
	target  applyplan.TargetName
	dryRun  bool
	planned PlannedHost
	machine applyplan.Machine
	// err is the host's failure: its probe's, then its push's.
	err error
	// done and notes are what a successful push adds to its line.
	done  string
	notes []string
	secs  float64
	// Trips counts the commands (SSH sessions) run on the host, for the
	// Report; the engine keeps it.
	Trips int
}

// NewHost is host h of engine e, as its probe planned it.
func NewHost(e Hosts, h *inventory.Host, planned PlannedHost) *Host {
	u := &Host{h: h, target: e.Target, dryRun: e.DryRun, planned: planned, err: planned.Err}
	m := applyplan.Machine{Target: e.Target, Name: h.Name, Kind: e.Kind, Address: h.Mgmt, Changes: planned.Changes, Notes: planned.Notes, Status: applyplan.UpToDate}
	if m.Changes == nil {
		m.Changes = []applyplan.Change{}
	}
	switch {
	case planned.Err != nil:
		m.Status, m.Error, m.Err = applyplan.Failed, planned.Err.Error(), planned.Err
	case len(planned.Changes) > 0:
		m.Status = applyplan.Planned
	}
	u.machine = m
	return u
}

// Result is what the engine did on the host, for the Report: changes
// never applied (a refused gate, interrupted before the host) are
// pending, not changed.
func (u *Host) Result() HostResult {
	res := HostResult{Host: u.h.Name, Err: u.err, RoundTrips: u.Trips}
	if c := u.planned.Changes; len(c) > 0 {
		res.Plan, res.Changes = Texts(c), len(c)
	}
	res.Pending = !u.dryRun && res.Err == nil && u.machine.Status == applyplan.Planned
	return res
}

// Machine is the host as applyplan sees it, planned or pushed.
func (u *Host) Machine() applyplan.Machine { return u.machine }

// Pending: the host was read and has changes.
func (u *Host) Pending() bool { return u.planned.Err == nil && len(u.planned.Changes) > 0 }

// WritePlan prints the host's plan: its failure, "up to date", or its
// changes, then its notes.
func (u *Host) WritePlan(w io.Writer) { writePlan(w, u.h, u.planned, u.dryRun) }

// Pushed records what the engine's Push did, started at t0: done is what
// the success line adds ("verified: …"), notes are printed under it, err
// the failure (interrupted when ctx ended).
func (u *Host) Pushed(ctx context.Context, t0 time.Time, done string, notes []string, err error) {
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

// WriteResult prints the line of a host whose push ended.
func (u *Host) WriteResult(w io.Writer) {
	var b strings.Builder
	name, secs := u.h.Name, u.secs
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

// RunHosts runs the units of an SSH engine (hosts, workers) through
// ReadPlanPush: prepare(i) probes host i and plans it (Parallel at once),
// the plans print in inventory order, the gate is passed, the hosts that
// have changes are pushed (Parallel at once), each one's line printed with
// its time as it finishes, then the summary. One host's failure never
// stops the others; a cancelled ctx stops the hosts not yet started (they
// stay "planned") and interrupts those in flight. The error names the
// failed hosts.
func RunHosts[U HostUnit](ctx context.Context, e Hosts, prepare func(i int) U) (*Report, error) {
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
		ReadPhase: Phrasef("reading the state of %d VM(s) over SSH"), PushPhase: Phrasef("changing %d VM(s)"),
		Announce: func(n int) string {
			return fmt.Sprintf("applying to %d host(s), %d at a time\n", n, max(e.Parallel, 1))
		},
		Parallel: e.Parallel, DryRun: e.DryRun, Gate: e.Gate, Track: e.Track, Out: out,
	}, func(i int) U {
		u := prepare(i)
		mu.Lock()
		probed = max(probed, time.Since(start))
		mu.Unlock()
		return u
	})
	rep := &Report{ProbeElapsed: probed}
	machines := make([]applyplan.Machine, len(units))
	for i, u := range units {
		machines[i] = u.Machine()
		rep.Add(u.Result())
	}
	rep.Machines = machines
	rep.TotalElapsed = time.Since(start)
	rep.SummaryLine = rep.Summary(e.Target, e.DryRun, e.UpToDateCost, e.ChangedCost)
	fmt.Fprintln(out, rep.SummaryLine)
	return rep, rep.Err()
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
