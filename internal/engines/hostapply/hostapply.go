// Package hostapply is the engine of `rdggen apply --target hosts`: it makes
// every VM match what pkg/dockernet and pkg/hostqos compute, over SSH.
//
// Per host, one connection and one round trip to read the current state (all
// of it, in one script), then — after the whole plan is printed — one round
// trip that changes only what differs and reads the state again to verify.
// A host that is already right costs one round trip. Hosts run in parallel up
// to Options.Parallel; one host's failure never stops the others.
package hostapply

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
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Options configure a Run.
type Options struct {
	// Dial connects to a host; remote.SSH{...}.Dialer() in production.
	Dial remote.DialFunc
	// Root, when not "" or "/", is prepended to every file path rdggen reads
	// or writes on the hosts (and /sys for the RoCE probe); "{host}" in it is
	// replaced by the host's name. Live state (sysctl, routes, iptables) is
	// unaffected. For tests and staging; it also turns ModeAuto commands and
	// systemd's daemon-reload off, so nothing outside the prefix restarts.
	Root string
	// DockerValidate checks a staged daemon.json before it is installed:
	// ModeAuto (dockerd --validate, or the nobody trick on dockerd < 23),
	// ModeNone, or a shell command run as root with the candidate file as $1.
	// rdggen's own checks (dockernet.Validate) always run first.
	DockerValidate string
	// DockerRestart restarts Docker after daemon.json changed: ModeAuto
	// (systemd or init.d), ModeNone, or a shell command run as root. Commands
	// see RDGGEN_ROOT, the host's root prefix.
	DockerRestart string
	// ModuleLoad loads nvidia-peermem when it is installed but not loaded:
	// ModeAuto (modprobe), ModeNone (the plan says so and loads nothing), or
	// a shell command run as root with the module's name as $1.
	ModuleLoad string
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
	// Now stamps backups; time.Now when nil.
	Now func() time.Time
	// VNUMA, for check on a VM with several rails, gives the virtual NUMA
	// node vSphere gave each of host h's passthrough GPUs, in pciPassthru
	// order (the esxi target's view of the VM), nil when unknown: the
	// gpu-order check compares it with the guest's GPUs. nil: not checked.
	VNUMA func(h *inventory.Host) []int
}

func (o *Options) prefixed() bool { return o.Root != "" && o.Root != "/" }

func (o *Options) rootFor(h *inventory.Host) string { return remote.HostRoot(o.Root, h.Name) }

func (o *Options) mode(m string) string {
	if m == "" {
		m = ModeAuto
	}
	if m == ModeAuto && o.prefixed() {
		return ModeNone
	}
	return m
}

func (o *Options) validateMode() string { return o.mode(o.DockerValidate) }
func (o *Options) restartMode() string  { return o.mode(o.DockerRestart) }
func (o *Options) loadMode() string     { return o.mode(o.ModuleLoad) }

// planFor is how makePlan reads a host under these options.
func (o *Options) planFor() planOpts {
	return planOpts{docker0: o.restartMode() != ModeNone, modules: o.loadMode() != ModeNone}
}

// HostResult and Report are the engines' shared result types.
type (
	HostResult = driver.HostResult
	Report     = driver.Report
)

type hostRun struct {
	h     *inventory.Host
	d     *desired
	conn  remote.Conn
	plan  *plan
	err   error
	trips int
	notes []string // from the apply steps
}

// Run probes every host, prints the plan, and unless DryRun applies it. The
// error is non-nil when any host failed; it names them. The Report is always
// returned.
func Run(ctx context.Context, inv *inventory.Inventory, o Options) (*Report, error) {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	runs := make([]*hostRun, len(inv.Hosts))
	hosts := make([]*inventory.Host, len(inv.Hosts))
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		hosts[i] = h
		runs[i] = &hostRun{h: h, d: desiredFor(inv, h)}
	}
	defer func() {
		for _, r := range runs {
			if r.conn != nil {
				r.conn.Close()
			}
		}
	}()
	stamp := o.Now().UTC().Format("20060102T150405Z")
	e := driver.Hosts{
		Target: applyplan.TargetHosts, Kind: applyplan.KindHost, Hosts: hosts,
		Parallel: o.Parallel, DryRun: o.DryRun, Out: o.Out, Track: o.Track, Gate: o.Gate,
		UpToDateCost: ", 1 SSH command per host",
		ChangedCost:  "; SSH commands per host: 1 to read, 1 more to change and verify",
	}
	return driver.RunHosts(ctx, e, func(i int) *unit {
		r := runs[i]
		probeHost(ctx, inv, &o, r)
		p := driver.PlannedHost{Err: r.err}
		if r.plan != nil {
			p.Changes, p.Notes = r.plan.changes(), r.plan.notes
		}
		u := &unit{Host: driver.NewHost(e, r.h, p), inv: inv, o: &o, r: r, stamp: stamp}
		u.Trips = r.trips
		return u
	})
}

// unit is one host of an apply: a driver.Unit whose Push sends the plan's
// changes and the verifying probe in one round trip.
type unit struct {
	*driver.Host
	inv   *inventory.Inventory
	o     *Options
	r     *hostRun
	stamp string
}

func (u *unit) Push(ctx context.Context) {
	t0 := time.Now()
	applyHost(ctx, u.inv, u.o, u.r, u.stamp)
	u.Trips = u.r.trips
	u.Pushed(ctx, t0, "", u.r.notes, u.r.err)
}

// probeHost connects, reads the state and makes the plan. The connection
// stays open when there is something to apply.
func probeHost(ctx context.Context, inv *inventory.Inventory, o *Options, r *hostRun) {
	conn, err := o.Dial(ctx, r.h)
	if err != nil {
		r.err = remote.DialError(err)
		return
	}
	r.conn = conn
	root := o.rootFor(r.h)
	w := remote.NewScript(root)
	roceVar(w, r.d.RoCEScript)
	probe(w, r.d)
	rs, err := r.round(ctx, w)
	if err != nil {
		r.err = err
		return
	}
	st, err := parseState(rs, root, r.d.paths())
	if err != nil {
		r.err = err
		return
	}
	r.plan, r.err = makePlan(inv, r.d, st, o.planFor())
	if r.err == nil && (r.plan.empty() || o.DryRun) {
		r.conn.Close()
		r.conn = nil
	}
}

// round is one SSH round trip: it runs the script w and reads back its
// framed results.
func (r *hostRun) round(ctx context.Context, w *remote.Script) ([]remote.Result, error) {
	r.trips++
	stdout, _, err := r.conn.Run(ctx, w.End())
	if err != nil {
		return nil, err
	}
	return remote.ParseResults(stdout, w.Nonce())
}

// applyHost sends the plan's changes and the verifying probe in one script.
func applyHost(ctx context.Context, inv *inventory.Inventory, o *Options, r *hostRun, stamp string) {
	defer func() {
		r.conn.Close()
		r.conn = nil
	}()
	root := o.rootFor(r.h)
	w := remote.NewScript(root).WithTemp()
	roceVar(w, r.d.RoCEScript)
	applyScript(w, r.plan, o, stamp)
	probe(w, r.d)
	rs, err := r.round(ctx, w)
	if err != nil {
		r.err = err
		return
	}
	var errs []error
	var state []remote.Result
	for _, res := range rs {
		name, isStep := strings.CutPrefix(res.Name, "step:")
		if !isStep {
			state = append(state, res)
			continue
		}
		text := strings.TrimSpace(string(res.Data))
		if res.RC() != 0 {
			err := fmt.Errorf("%s failed (exit %s): %s", name, res.Status, remote.OneLine(text))
			if hint := loadHint(text); name == "peermem" && hint != "" {
				err = fmt.Errorf("%w; %s", err, hint)
			}
			errs = append(errs, err)
			continue
		}
		switch name {
		case "daemon", "restart":
			for _, l := range strings.Split(text, "\n") {
				if l != "" {
					r.notes = append(r.notes, name+": "+l)
				}
			}
		case "roce":
			for _, x := range hostqos.ParseReport(res.Data) {
				if x.State == hostqos.StateSet {
					r.notes = append(r.notes, "roce: "+x.Name+" "+x.Detail)
				}
			}
		}
	}
	if len(errs) == 0 {
		st, err := parseState(state, root, r.d.paths())
		if err != nil {
			errs = append(errs, fmt.Errorf("verify: %w", err))
		} else if left, err := makePlan(inv, r.d, st, o.planFor()); err != nil {
			errs = append(errs, fmt.Errorf("verify: %w", err))
		} else if !left.empty() {
			errs = append(errs, fmt.Errorf("verify: still different after the apply: %s", strings.Join(left.describe(), "; ")))
		}
	}
	r.err = errors.Join(errs...)
}
