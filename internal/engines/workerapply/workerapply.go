// Package workerapply is the engine of `rdggen apply --target workers`: on
// every VM, the Horovod worker container exactly as horovod.WorkerRunArgs
// describes it, with the workers' SSH files, and its sshd answering on the
// worker port with the cluster's host key at the hostfile's address.
//
// Per host, over one SSH connection: one round trip reads the state (the SSH
// files by digest, the container, the image, sshd's host key); after the
// whole plan is printed, one more writes what differs, creates, re-creates,
// starts or restarts the container, waits for sshd and reads the state again
// to verify. A host that is already right costs one round trip. Hosts run in
// parallel up to Options.Parallel; one host's failure never stops the others.
package workerapply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Options configure a Run.
type Options struct {
	// Dial connects to a host; remote.SSH{...}.Dialer() in production.
	Dial remote.DialFunc
	// Keys are the cluster's worker keys (LoadKeys or horovod.GenerateWorkerKeys).
	Keys horovod.WorkerKeys
	// Root, when not "" or "/", is prepended to the path of the SSH files on
	// the hosts, in the files written and in the worker's bind mount; "{host}"
	// in it is replaced by the host's name. For tests and staging.
	Root string
	// ReadyTimeout bounds the wait for a started worker's sshd (default 60 s).
	ReadyTimeout time.Duration
	// Parallel bounds how many hosts are probed or changed at once (≥ 1).
	Parallel int
	// DryRun stops after the plan.
	DryRun bool
	// Out receives the plan, per-host results and the summary line.
	Out io.Writer
	// Track hears the phases and the hosts in flight; nil for none.
	Track *progress.Tracker
	// Gate is asked once after the plan, before the first change.
	Gate applyplan.Gate
	// AllPairs, for Check only, logs in from every worker to every other
	// (n(n-1) logins) instead of along a ring (n logins) with the rule
	// check for the other pairs.
	AllPairs bool
}

func (o *Options) rootFor(h *inventory.Host) string { return remote.HostRoot(o.Root, h.Name) }

// HostResult and Report are the engines' shared result types.
type (
	HostResult = driver.HostResult
	Report     = driver.Report
)

type hostRun struct {
	h    *inventory.Host
	d    *desired
	conn remote.Conn
	plan *plan
	err  error
}

// Run probes every host, prints the plan, and unless DryRun applies it. The
// error is non-nil when any host failed; it names them. The Report is always
// returned.
func Run(ctx context.Context, inv *inventory.Inventory, o Options) (*Report, error) {
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = time.Minute
	}
	runs := make([]*hostRun, len(inv.Hosts))
	hosts := make([]*inventory.Host, len(inv.Hosts))
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		hosts[i] = h
		runs[i] = &hostRun{h: h, d: desiredFor(inv, h, o.Keys, o.rootFor(h))}
	}
	defer func() {
		for _, r := range runs {
			if r.conn != nil {
				r.conn.Close()
			}
		}
	}()
	serving := func(r *hostRun) string {
		return fmt.Sprintf("%s at %s, sshd on port %d", horovod.WorkerName, r.d.Address, inv.Horovod.SSHPort)
	}
	e := driver.Hosts{
		Target: applyplan.TargetWorkers, Kind: applyplan.KindWorker, Hosts: hosts,
		Parallel: o.Parallel, DryRun: o.DryRun, Out: o.Out, Track: o.Track, Gate: o.Gate,
		UpToDateCost: ", 1 SSH command per host",
	}
	return driver.RunHosts(ctx, e, func(i int) *unit {
		r := runs[i]
		probeHost(ctx, &o, r)
		p := driver.PlannedHost{Err: r.err, UpToDate: serving(r)}
		if r.plan != nil {
			p.Changes, p.Notes = r.plan.changes(), r.plan.notes
		}
		return &unit{Host: driver.NewHost(e, r.h, p), o: &o, r: r, serving: serving(r)}
	})
}

// unit is one worker of an apply: a driver.Unit whose Push writes what
// differs, (re)starts the container and verifies it.
type unit struct {
	*driver.Host
	o       *Options
	r       *hostRun
	serving string
}

func (u *unit) Push(ctx context.Context) {
	t0 := time.Now()
	applyHost(ctx, u.o, u.r)
	u.Pushed(ctx, t0, ": "+u.serving, nil, u.r.err)
}

// probeHost connects, reads the state and makes the plan. The connection
// stays open when there is something to apply.
func probeHost(ctx context.Context, o *Options, r *hostRun) {
	conn, err := o.Dial(ctx, r.h)
	if err != nil {
		r.err = remote.DialError(err)
		return
	}
	r.conn = conn
	w := remote.NewScript(r.d.Root)
	probe(w, r.d)
	st, err := r.state(ctx, w)
	if err != nil {
		r.err = err
		return
	}
	r.plan, r.err = makePlan(r.d, st)
	if r.err == nil && (r.plan.empty() || o.DryRun) {
		r.conn.Close()
		r.conn = nil
	}
}

// state runs w and parses the probe results in its output.
func (r *hostRun) state(ctx context.Context, w *remote.Script) (*workerState, error) {
	stdout, _, err := r.conn.Run(ctx, w.End())
	if err != nil {
		return nil, err
	}
	rs, err := remote.ParseResults(stdout, w.Nonce())
	if err != nil {
		return nil, err
	}
	var steps []error
	var probes []remote.Result
	for _, res := range rs {
		name, isStep := strings.CutPrefix(res.Name, "step:")
		if !isStep {
			probes = append(probes, res)
			continue
		}
		text := strings.TrimSpace(string(res.Data))
		switch {
		case res.RC() != 0 && name == "ready": // wait_worker's message is complete
			steps = append(steps, errors.New(remote.OneLine(text)))
		case res.RC() != 0:
			steps = append(steps, fmt.Errorf("%s failed (exit %s): %s", name, res.Status, remote.OneLine(text)))
		}
	}
	if len(steps) > 0 {
		return nil, errors.Join(steps...)
	}
	return parseState(probes)
}

// applyHost sends the plan's changes and the verifying probe in one script.
func applyHost(ctx context.Context, o *Options, r *hostRun) {
	defer func() {
		r.conn.Close()
		r.conn = nil
	}()
	w := remote.NewScript(r.d.Root).WithTemp()
	applyScript(w, r.plan, o)
	probe(w, r.d)
	st, err := r.state(ctx, w)
	if err != nil {
		r.err = err
		return
	}
	left, err := makePlan(r.d, st)
	switch {
	case err != nil:
		r.err = fmt.Errorf("verify: %w", err)
	case !left.empty():
		r.err = fmt.Errorf("verify: still different after the apply: %s", strings.Join(left.describe(), "; "))
	}
}
