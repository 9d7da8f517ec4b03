package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rdggen/rdggen/internal/nvueapply"
	"github.com/rdggen/rdggen/internal/switchapply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// SwitchOptions say how to reach the switches (each switch's mgmt address
// in the inventory): ONYX switches over SSH, Cumulus Linux switches through
// the NVUE REST API, and what to do.
type SwitchOptions struct {
	Common
	// SSH is the login of the ONYX switches; User defaults to "admin".
	SSH SSH
	// NVUE is how the Cumulus Linux switches are reached.
	NVUE NVUE
	// BackupDir receives, before any change, <switch>-<UTC time>.cfg (an
	// ONYX running-config) or .json (a Cumulus applied configuration),
	// mode 0600; default "rdg-backup".
	BackupDir string
	// CommandTimeout bounds each ONYX CLI command (default 60 s);
	// CommandTimeoutFlag, when set, is named in timeout errors.
	CommandTimeout     time.Duration
	CommandTimeoutFlag string
	// Batch is the most static-route commands pasted in one write, each
	// line's reply still read on its own; 0 means 256, 1 sends every
	// command on its own. Other commands always go one at a time.
	Batch int
}

// NVUE is how rdggen reaches Cumulus Linux switches: the NVUE REST API
// over HTTPS with basic authentication. The certificate is always
// verified: against CAFile, against the pinned Fingerprint, or else
// against the system's roots.
type NVUE struct {
	// User is the switch user (default "cumulus"); Password its password,
	// never printed; PasswordVar names where it came from.
	User, Password, PasswordVar string
	// Port is used where a switch's mgmt address carries none; 0 is 8765.
	Port int
	// CAFile is a PEM file of the CA (or self-signed certificate) of the
	// switches' API certificates.
	CAFile string
	// Fingerprint pins the certificate instead: its SHA-256, hex (colons
	// allowed).
	Fingerprint string
	// RequestTimeout bounds each HTTP request (default 30 s).
	RequestTimeout time.Duration
	// ConfirmTimeout is the rollback window of an apply (default 300 s):
	// a switch that rdggen has not confirmed by then rolls back by itself.
	ConfirmTimeout time.Duration
	// ApplyTimeout bounds the wait for an apply or a save (default 120 s).
	ApplyTimeout time.Duration
}

// CheckTLS reports, before any switch is contacted, a CAFile that cannot be
// read or holds no PEM certificate and a Fingerprint that is not a SHA-256
// (hex, openssl's "sha256 Fingerprint=…" or OpenSSH's "SHA256:…" form).
func (n NVUE) CheckTLS() error {
	return nvueapply.TLS{CAFile: n.CAFile, Fingerprint: n.Fingerprint}.Check()
}

func (o SwitchOptions) engine(r *run) switchapply.Options {
	user := o.SSH.User
	if user == "" {
		user = "admin"
	}
	return switchapply.Options{
		User: user, Password: o.SSH.Password, Agent: o.SSH.Agent, Identities: o.SSH.Identities, Port: o.SSH.Port,
		KnownHosts: o.SSH.KnownHosts, BackupDir: o.BackupDir, DryRun: o.DryRun, Parallel: o.parallel(),
		CommandTimeout: o.CommandTimeout, DialTimeout: o.SSH.Timeout, DialTimeoutFlag: o.SSH.TimeoutFlag,
		CommandTimeoutFlag: o.CommandTimeoutFlag, PasswordVar: o.SSH.PasswordVar, Batch: o.Batch,
		Out: r.track.Writer(), Track: r.track, Gate: o.Confirm,
		Select: func(sw inventory.Switch) bool { return sw.OS() == inventory.OSONYX },
	}
}

func (o SwitchOptions) nvueEngine(r *run) nvueapply.Options {
	return nvueapply.Options{
		User: o.NVUE.User, Password: o.NVUE.Password, PasswordVar: o.NVUE.PasswordVar, Port: o.NVUE.Port,
		TLS:       nvueapply.TLS{CAFile: o.NVUE.CAFile, Fingerprint: o.NVUE.Fingerprint},
		BackupDir: o.BackupDir, DryRun: o.DryRun, Parallel: o.parallel(),
		RequestTimeout: o.NVUE.RequestTimeout, ConfirmTimeout: o.NVUE.ConfirmTimeout, ApplyTimeout: o.NVUE.ApplyTimeout,
		Out: r.track.Writer(), Track: r.track, Gate: o.Confirm,
	}
}

// cumulusSwitches are the inventory's Cumulus Linux switches.
func cumulusSwitches(inv *inventory.Inventory) []inventory.Switch {
	return inv.SwitchesOf(inventory.OSCumulus)
}

// Switches brings every switch of the inventory to the lossless RoCE
// configuration. An ONYX switch: it reads the running-config over SSH,
// diffs it against what pkg/onyx computes, and (unless DryRun, and when
// Confirm agrees) saves a backup, sends only the missing or conflicting
// commands, stops at the first refused one, and saves the configuration
// when all succeeded. A Cumulus Linux switch: it reads the applied
// configuration through the NVUE REST API, diffs it with pkg/cumulus's
// intent on the parsed tree, backs it up, and applies only the difference
// as one revision (one PATCH, apply with a confirm timeout, verified,
// confirmed, saved where the release does not save on apply).
// Configuration rdggen does not own is never touched. Confirm is asked
// once, with the plans of both kinds. The error wraps ErrMachines when
// switches failed (each has its error in Result.Machines).
func Switches(ctx context.Context, inv *inventory.Inventory, o SwitchOptions) (*Result, error) {
	r := o.begin("switch")
	cum := cumulusSwitches(inv)
	onyxN := len(inv.Switches) - len(cum)
	gates := joinGates(o.Confirm, 2)
	var (
		wg               sync.WaitGroup
		onyxRes          []*switchapply.Result
		nvueRes          []*nvueapply.Result
		onyxErr, nvueErr error
	)
	if onyxN > 0 || len(cum) == 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer gates.done(0)
			eo := o.engine(r)
			eo.Gate = gates.gate(0)
			onyxRes, onyxErr = switchapply.Run(ctx, inv, eo)
		}()
	} else {
		gates.done(0)
	}
	if len(cum) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer gates.done(1)
			eo := o.nvueEngine(r)
			eo.Gate = gates.gate(1)
			nvueRes, nvueErr = nvueapply.Run(ctx, inv, cum, eo)
		}()
	} else {
		gates.done(1)
	}
	wg.Wait()
	machines := map[string]applyplan.Machine{}
	for _, x := range onyxRes {
		machines[x.Switch] = x.Machine()
	}
	for _, x := range nvueRes {
		machines[x.Switch] = x.Machine()
	}
	res := &Result{Target: "switch"}
	for _, sw := range inv.Switches {
		if m, ok := machines[sw.Name]; ok {
			res.Machines = append(res.Machines, m)
		}
	}
	if len(cum) == 0 {
		res.Summary = switchSummary(onyxRes, o.DryRun)
	} else {
		res.Summary = mixedSummary(onyxRes, nvueRes, o.DryRun)
	}
	fmt.Fprintln(r.track.Writer(), res.Summary)
	res.Seconds = r.end()
	var msgs []string
	for _, err := range []error{onyxErr, nvueErr} {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) > 0 {
		return res, machinesErr("switch", res.Machines, msgs...)
	}
	return res, nil
}

// CheckSwitches checks every switch, changing nothing: drift from the
// inventory (the plan of Switches), and per data port the link and MTU. On
// ONYX also PFC on the RoCE priority, its pause counters and ECN on the
// RoCE traffic class, each failure with the ONYX command that fixes it
// (only show commands are sent); on Cumulus Linux `qos roce` operational
// against applied (mode, PFC priority, ECN thresholds, enabled traffic
// classes) and the PFC pause counters, each failure with the `nv` command
// that fixes it (only GET requests are sent). The error names the switches
// that could not be read.
func CheckSwitches(ctx context.Context, inv *inventory.Inventory, o SwitchOptions) ([]readiness.Result, error) {
	r := o.begin("switch")
	defer r.end()
	cum := cumulusSwitches(inv)
	var out []readiness.Result
	var errs []error
	if len(cum) < len(inv.Switches) || len(cum) == 0 {
		rs, err := switchapply.Check(ctx, inv, o.engine(r))
		out, errs = append(out, rs...), append(errs, err)
	}
	if len(cum) > 0 {
		rs, err := nvueapply.Check(ctx, inv, cum, o.nvueEngine(r))
		out, errs = append(out, rs...), append(errs, err)
	}
	// Inventory order of the switches, each switch's checks in their order.
	order := map[string]int{}
	for i, sw := range inv.Switches {
		order[sw.Name] = i
	}
	slices.SortStableFunc(out, func(a, b readiness.Result) int { return order[a.Machine] - order[b.Machine] })
	return out, errors.Join(errs...)
}

// gateJoin asks an outer gate once for several engines: each engine's gate
// arrives with its plan, an engine that ends without asking is done, and
// when all have arrived or are done the outer gate is asked (only if one
// arrived) with every plan.
type gateJoin struct {
	outer   applyplan.Gate
	mu      sync.Mutex
	left    int
	arrived []bool
	planned [][]applyplan.Machine
	decided chan struct{}
	ok      bool
	asked   bool
}

func joinGates(outer applyplan.Gate, n int) *gateJoin {
	return &gateJoin{outer: outer, left: n, arrived: make([]bool, n), planned: make([][]applyplan.Machine, n), decided: make(chan struct{})}
}

// gate is engine i's gate.
func (g *gateJoin) gate(i int) applyplan.Gate {
	return func(ctx context.Context, planned []applyplan.Machine) bool {
		g.arrive(ctx, i, planned, true)
		select {
		case <-g.decided:
			return g.ok && ctx.Err() == nil
		case <-ctx.Done():
			return false
		}
	}
}

// done marks engine i finished (a no-op after its gate).
func (g *gateJoin) done(i int) { g.arrive(context.Background(), i, nil, false) }

func (g *gateJoin) arrive(ctx context.Context, i int, planned []applyplan.Machine, asking bool) {
	g.mu.Lock()
	if g.arrived[i] {
		g.mu.Unlock()
		return
	}
	g.arrived[i] = true
	g.planned[i] = planned
	g.asked = g.asked || asking
	g.left--
	last := g.left == 0
	g.mu.Unlock()
	if !last {
		return
	}
	if g.asked {
		g.ok = g.outer.Pass(ctx, slices.Concat(g.planned...))
	}
	close(g.decided)
}

// switchSummary is the one summary line of the switch target.
func switchSummary(results []*switchapply.Result, dryRun bool) string {
	var planned, changed, upToDate, failed, sent, pending int
	for _, r := range results {
		sent += r.Sent
		switch {
		case r.Err != nil:
			failed++
		case r.Plan.Empty():
			upToDate++
		case dryRun:
			planned++
		case !r.Pushed:
			pending++
		default:
			changed++
		}
	}
	if pending > 0 {
		return fmt.Sprintf("switch: %d changed, %d not applied (planned), %d up to date, %d failed; %d command(s) sent", changed, pending, upToDate, failed, sent)
	}
	if dryRun {
		return fmt.Sprintf("switch: dry run: %d switch(es) would change, %d up to date, %d failed; 0 commands sent",
			planned, upToDate, failed)
	}
	if changed == 0 && failed == 0 {
		return fmt.Sprintf("switch: %d switch(es) up to date, nothing changed; 0 commands sent", upToDate)
	}
	return fmt.Sprintf("switch: %d changed, %d up to date, %d failed; %d command(s) sent", changed, upToDate, failed, sent)
}

// mixedSummary is the summary line when Cumulus switches take part: ONYX
// commands and NVUE revisions counted apart.
func mixedSummary(onyxRes []*switchapply.Result, nvueRes []*nvueapply.Result, dryRun bool) string {
	var planned, changed, upToDate, failed, pending, sent, revisions int
	count := func(err error, empty, pushed bool) {
		switch {
		case err != nil:
			failed++
		case empty:
			upToDate++
		case dryRun:
			planned++
		case !pushed:
			pending++
		default:
			changed++
		}
	}
	for _, r := range onyxRes {
		sent += r.Sent
		count(r.Err, r.Plan.Empty(), r.Pushed)
	}
	for _, r := range nvueRes {
		if r.Applied {
			revisions++
		}
		count(r.Err, r.Plan.Empty(), r.Pushed)
	}
	sentText := fmt.Sprintf("%d ONYX command(s) sent, %d NVUE revision(s) applied", sent, revisions)
	if len(onyxRes) == 0 {
		sentText = fmt.Sprintf("%d NVUE revision(s) applied", revisions)
	}
	switch {
	case dryRun:
		return fmt.Sprintf("switch: dry run: %d switch(es) would change, %d up to date, %d failed; nothing sent", planned, upToDate, failed)
	case pending > 0:
		return fmt.Sprintf("switch: %d changed, %d not applied (planned), %d up to date, %d failed; %s", changed, pending, upToDate, failed, sentText)
	case changed == 0 && failed == 0:
		return fmt.Sprintf("switch: %d switch(es) up to date, nothing changed; %s", upToDate, sentText)
	}
	return fmt.Sprintf("switch: %d changed, %d up to date, %d failed; %s", changed, upToDate, failed, sentText)
}
