// Package apply is rdggen's `apply` and `check` as a library. For each
// target of a cluster, it reads the state, plans, and pushes only the
// difference, or checks readiness and changes nothing:
//
//   - the switches ([Switches], [CheckSwitches]): ONYX over an SSH CLI
//     session, Cumulus Linux through the NVUE REST API over HTTPS;
//   - the ESXi hosts and VMs, through vCenter's API ([ESXi], [CheckESXi]);
//   - the VMs' Docker networking, routes, firewall and RoCE settings, over
//     SSH ([Hosts], [CheckHosts]);
//   - the Horovod worker containers, over SSH ([Workers], [CheckWorkers]).
//
// Every function takes a context (cancel it to stop: machines not yet
// started stay unchanged), an inventory (pkg/inventory, from a file or built
// in Go) and an options struct: the connection, the parallelism, the
// timeouts, a dry run, a Confirm gate asked once between plan and push, an
// io.Writer for the text a person reads, and Events for progress. The
// result is typed: one [applyplan.Machine] per switch, ESXi host, VM or
// worker, with its status and [applyplan.Change]s, the same data `rdggen
// apply -o json` writes (docs/json.md); checks return [readiness.Result]s.
//
// [Run] launches the training job in the workers (horovodrun, mpirun or
// torchrun) and returns its exit status: `rdggen run` as a call.
//
// `rdggen apply`, `rdggen check` and `rdggen run` are built on this
// package: what they print is Result.Summary and the text written to
// Common.Out (RunOptions.Out and Err).
package apply

import (
	"io"
	"time"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/internal/transport/sshconn"
	"github.com/rdggen/rdggen/pkg/applyplan"
)

// Common are the options every target takes.
type Common struct {
	// DryRun stops after the plan: nothing is sent, no backup is written.
	DryRun bool
	// Parallel bounds the machines read or changed at once (default 1).
	Parallel int
	// Confirm is asked once, with the whole plan, between the plan and the
	// first change; nil pushes without asking. Returning false changes
	// nothing (the machines stay "planned").
	Confirm applyplan.Gate
	// Out receives the text a person reads: the plan, each machine's line
	// as it finishes, the summary. nil discards it.
	Out io.Writer
	// Events hears the progress: phases, machines in flight and done, what
	// is awaited, every line written to Out. nil for none. It is called
	// from several goroutines.
	Events func(applyplan.Event)
}

// run holds one target's plumbing: the writer, the progress tracker, the
// clock.
type run struct {
	target  applyplan.TargetName
	display *progress.Display
	track   *progress.Tracker
	out     io.Writer
	start   time.Time
}

func (c Common) begin(target applyplan.TargetName) *run {
	out := c.Out
	if out == nil {
		out = io.Discard
	}
	d := progress.Lines(out)
	d.Listen = c.Events
	r := &run{target: target, display: d, out: out, start: time.Now()}
	r.track = d.Track(target.String())
	return r
}

func (r *run) end() float64 {
	r.track.Finish()
	r.display.Close()
	return time.Since(r.start).Seconds()
}

func (c Common) parallel() int { return max(c.Parallel, 1) }

// Result is what one target did.
type Result struct {
	// Target is "switch", "esxi", "hosts" or "workers".
	Target applyplan.TargetName
	// Machines are the switches, ESXi hosts and VMs, or VMs' workers, in
	// inventory order, each with its status and changes (a plan after a
	// dry run or a declined confirmation).
	Machines []applyplan.Machine
	// Summary is the one line that sums the target up, as rdggen prints it.
	Summary string
	// Seconds is how long the target took.
	Seconds float64
}

// Failed returns the machines that failed (or were interrupted).
func (r *Result) Failed() []applyplan.Machine {
	var out []applyplan.Machine
	for _, m := range r.Machines {
		if m.Status == applyplan.Failed || m.Status == applyplan.Interrupted {
			out = append(out, m)
		}
	}
	return out
}

// SSH is how rdggen reaches the switches or the VMs over SSH. Host keys are
// always verified against KnownHosts.
type SSH struct {
	// User is the login name; on the VMs privileged work goes through
	// `sudo -n` when it is not root.
	User string
	// Port is the SSH port where a machine's mgmt address carries none; 0
	// means 22.
	Port int
	// KnownHosts is the known_hosts file ("" = ~/.ssh/known_hosts).
	KnownHosts string
	// Identities are private key files to offer.
	Identities []string
	// Agent offers the keys of the ssh-agent at $SSH_AUTH_SOCK (the VMs'
	// connections always do).
	Agent bool
	// Password, when set, is offered for password authentication; never
	// printed. PasswordVar names where it came from, for messages.
	Password, PasswordVar string
	// Timeout bounds each connect and handshake (0: 15 s); TimeoutFlag,
	// when set, is named in timeout errors ("--ssh-timeout").
	Timeout     time.Duration
	TimeoutFlag string
}

func (s SSH) remote() remote.SSH {
	return remote.SSH{User: s.User, Port: s.Port, KnownHosts: s.KnownHosts, Identities: s.Identities,
		Password: s.Password, PasswordVar: s.PasswordVar, Timeout: s.Timeout, TimeoutFlag: s.TimeoutFlag}
}

// DefaultKnownHosts is the known_hosts file used when SSH.KnownHosts is
// "": ~/.ssh/known_hosts.
func DefaultKnownHosts() string { return sshconn.DefaultKnownHosts() }

// CheckCredentials reports, without connecting to any machine, whether s
// has something to log in with: a key of the ssh-agent at $SSH_AUTH_SOCK
// (when s.Agent), an identity file that parses, or a password; its error
// is the one every machine would give, so that it can be said once.
func (s SSH) CheckCredentials() error {
	return sshconn.CheckCredentials(sshconn.Config{Agent: s.Agent, Identities: s.Identities, Password: s.Password, PasswordVar: s.PasswordVar})
}

// sshReport is an SSH engine's report as a Result.
func (r *run) sshReport(rep *driver.Report, err error, seconds float64) (*Result, error) {
	res := &Result{Target: r.target, Seconds: seconds}
	if rep != nil {
		res.Machines = rep.Machines
		res.Summary = rep.SummaryLine
	}
	if err != nil && rep != nil && rep.Failed > 0 {
		return res, machinesErr(r.target, res.Machines, err.Error())
	}
	return res, err
}
