package remote

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// HostResult is what an engine did on one host.
type HostResult struct {
	Host string
	// Plan is the printed plan ("+ route ...", ...); empty when up to date.
	Plan []string
	// Changes counts the planned changes (applied unless dry run or Err).
	Changes int
	// Err is the host's failure, nil on success.
	Err error
	// RoundTrips counts the commands (SSH sessions) run on the host.
	RoundTrips int
}

// Report is the outcome of an engine's run over all hosts, in inventory order.
type Report struct {
	Hosts                      []HostResult
	Changed, UpToDate, Failed  int
	ProbeElapsed, TotalElapsed time.Duration
}

// Add records one host's result and counts it.
func (r *Report) Add(res HostResult) {
	switch {
	case res.Err != nil:
		r.Failed++
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
func (r *Report) Summary(target string, dryRun bool, upToDate, changed string) string {
	secs := r.TotalElapsed.Seconds()
	failed := ""
	if f := r.FailedHosts(); len(f) > 0 {
		failed = " (" + strings.Join(f, ", ") + ")"
	}
	switch {
	case dryRun:
		return fmt.Sprintf("%s: dry run, nothing changed: %d would change, %d up to date, %d failed%s (%.2fs)",
			target, r.Changed, r.UpToDate, r.Failed, failed, secs)
	case r.Changed == 0 && r.Failed == 0:
		return fmt.Sprintf("%s: nothing to do: %d up to date (%.2fs%s)", target, r.UpToDate, secs, upToDate)
	}
	return fmt.Sprintf("%s: %d changed, %d up to date, %d failed%s (%.2fs%s)", target, r.Changed, r.UpToDate, r.Failed, failed, secs, changed)
}

// PlannedHost is one host's plan as the engines print it.
type PlannedHost struct {
	Name, Mgmt string
	// Err stops the host before anything is changed.
	Err error
	// Lines describe the changes; Count is how many there are.
	Lines []string
	Count int
	// Notes are remarks that change nothing ("! …").
	Notes []string
	// UpToDate, when set, is said of a host without changes.
	UpToDate string
}

// WritePlan prints one host's plan: its failure, "up to date", or its
// changes, then its notes.
func WritePlan(out io.Writer, p PlannedHost, dryRun bool) {
	switch {
	case p.Err != nil:
		fmt.Fprintf(out, "%s (%s): FAILED: %v\n", p.Name, p.Mgmt, p.Err)
		return
	case p.Count == 0:
		detail := ""
		if p.UpToDate != "" {
			detail = " (" + p.UpToDate + ")"
		}
		fmt.Fprintf(out, "%s (%s): up to date%s\n", p.Name, p.Mgmt, detail)
	default:
		verb := "change(s)"
		if dryRun {
			verb = "change(s) planned"
		}
		fmt.Fprintf(out, "%s (%s): %d %s\n", p.Name, p.Mgmt, p.Count, verb)
		for _, l := range p.Lines {
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(out, "  ! %s\n", n)
	}
}

// Apply runs apply on the hosts (by index) whose plan is not empty, at most
// parallel at once, after one line saying so.
func Apply(out io.Writer, todo []int, parallel int, apply func(i int)) {
	if len(todo) == 0 {
		return
	}
	fmt.Fprintf(out, "applying to %d host(s), %d at a time\n", len(todo), max(parallel, 1))
	ForEach(len(todo), parallel, func(k int) { apply(todo[k]) })
}
