package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/engines/nvueapply"
	"github.com/rdggen/rdggen/internal/engines/onyxapply"
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

// engine is one switch OS's engine as pkg/apply drives it. A switch OS is
// one entry of switchEngines, the one place where a switch's OS
// (inventory.Switch.OS) picks the code that reaches it: Switches and
// CheckSwitches loop over the registered engines, each given the
// switches that run its OS (Select), and run every switch of every OS in
// one driver loop, so that the plans print together and Confirm is asked
// once.
type engine interface {
	// Plan connects to switch sw, reads its configuration and plans it;
	// the unit's Push sends the plan and verifies it (driver.Unit).
	Plan(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch) switchUnit
	// Check checks the switches sws (all of the engine's OS), changing
	// nothing.
	Check(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]readiness.Result, error)
}

// switchUnit is one switch between plan and summary.
type switchUnit interface {
	driver.Unit
	// Finish closes the switch's connection and says what was done.
	Finish() switchOutcome
}

// switchOutcome is one switch's part of the summary.
type switchOutcome struct {
	err           error
	empty, pushed bool
	// commands counts the ONYX commands sent; revision is an NVUE
	// revision applied.
	commands int
	revision bool
}

// switchEngine is a registered engine: how to make it, and how the phases
// and errors name its switches.
type switchEngine struct {
	make func(o SwitchOptions, r *run) engine
	// what names the switches ("Cumulus switch(es)"); reading is the verb
	// phrase of the read phase.
	what, reading string
}

// switchEngines are the switch OSes' engines, in inventory.SwitchOSes
// order: the one dispatch point of a switch's OS.
var switchEngines = map[inventory.SwitchOS]switchEngine{
	inventory.OSONYX:    {make: onyxEngine, what: "switch(es)", reading: "reading the running-config of"},
	inventory.OSCumulus: {make: nvueEngine, what: "Cumulus switch(es)", reading: "reading the applied configuration of"},
}

// onyxEngine is ONYX's engine: the CLI over SSH (internal/engines/onyxapply).
type onyxEngineT struct{ o onyxapply.Options }

func onyxEngine(o SwitchOptions, r *run) engine {
	user := o.SSH.User
	if user == "" {
		user = "admin"
	}
	return onyxEngineT{onyxapply.Options{
		User: user, Password: o.SSH.Password, Agent: o.SSH.Agent, Identities: o.SSH.Identities, Port: o.SSH.Port,
		KnownHosts: o.SSH.KnownHosts, BackupDir: o.BackupDir, DryRun: o.DryRun, Parallel: o.parallel(),
		CommandTimeout: o.CommandTimeout, DialTimeout: o.SSH.Timeout, DialTimeoutFlag: o.SSH.TimeoutFlag,
		CommandTimeoutFlag: o.CommandTimeoutFlag, PasswordVar: o.SSH.PasswordVar, Batch: o.Batch,
		Out: r.track.Writer(), Track: r.track, Gate: o.Confirm,
	}}
}

func (e onyxEngineT) Plan(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch) switchUnit {
	return onyxUnit{onyxapply.Prepare(ctx, inv, sw, e.o)}
}

func (e onyxEngineT) Check(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]readiness.Result, error) {
	return onyxapply.Check(ctx, inv, e.only(sws))
}

// only are the engine's options for the switches sws alone.
func (e onyxEngineT) only(sws []inventory.Switch) onyxapply.Options {
	o := e.o
	o.Select = func(sw inventory.Switch) bool {
		return slices.ContainsFunc(sws, func(s inventory.Switch) bool { return s.Name == sw.Name })
	}
	return o
}

type onyxUnit struct{ *onyxapply.Prepared }

func (u onyxUnit) Finish() switchOutcome {
	r := u.Prepared.Finish()
	return switchOutcome{err: r.Err, empty: r.Plan.Empty(), pushed: r.Pushed, commands: r.Sent}
}

// nvueEngine is Cumulus Linux's engine: the NVUE REST API over HTTPS
// (internal/engines/nvueapply).
type nvueEngineT struct{ o nvueapply.Options }

func nvueEngine(o SwitchOptions, r *run) engine {
	return nvueEngineT{nvueapply.Options{
		User: o.NVUE.User, Password: o.NVUE.Password, PasswordVar: o.NVUE.PasswordVar, Port: o.NVUE.Port,
		TLS:       nvueapply.TLS{CAFile: o.NVUE.CAFile, Fingerprint: o.NVUE.Fingerprint},
		BackupDir: o.BackupDir, DryRun: o.DryRun, Parallel: o.parallel(),
		RequestTimeout: o.NVUE.RequestTimeout, ConfirmTimeout: o.NVUE.ConfirmTimeout, ApplyTimeout: o.NVUE.ApplyTimeout,
		Out: r.track.Writer(), Track: r.track, Gate: o.Confirm,
	}}
}

func (e nvueEngineT) Plan(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch) switchUnit {
	return nvueUnit{nvueapply.Prepare(ctx, inv, sw, e.o)}
}

func (e nvueEngineT) Check(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]readiness.Result, error) {
	return nvueapply.Check(ctx, inv, sws, e.o)
}

type nvueUnit struct{ *nvueapply.Prepared }

func (u nvueUnit) Finish() switchOutcome {
	r := u.Prepared.Finish()
	return switchOutcome{err: r.Err, empty: r.Plan.Empty(), pushed: r.Pushed, revision: r.Applied}
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
	r := o.begin(applyplan.TargetSwitch)
	// Every switch goes to its OS's engine; one driver loop reads and
	// plans them all, asks once and pushes.
	engines := map[inventory.SwitchOS]engine{}
	var oses []inventory.SwitchOS
	for _, os := range inventory.SwitchOSes {
		if len(inv.SwitchesOf(os)) > 0 {
			engines[os] = switchEngines[os].make(o, r)
			oses = append(oses, os)
		}
	}
	names := make([]string, len(inv.Switches))
	for i, sw := range inv.Switches {
		names[i] = sw.Name
	}
	phase := switchEngine{what: "switch(es)", reading: "reading the configuration of"}
	if len(oses) == 1 {
		phase = switchEngines[oses[0]]
	}
	units := driver.ReadPlanPush(ctx, names, driver.Run{
		ReadPhase: phase.reading + " %d " + phase.what, PushPhase: "changing %d " + phase.what,
		Parallel: o.parallel(), DryRun: o.DryRun, Gate: o.Confirm, Track: r.track, Out: r.track.Writer(),
	}, func(i int) switchUnit {
		sw := inv.Switches[i]
		return engines[sw.OS()].Plan(ctx, inv, sw)
	})
	res := &Result{Target: applyplan.TargetSwitch}
	outcomes := make([]switchOutcome, len(units))
	failed := map[inventory.SwitchOS][]string{}
	for i, u := range units {
		outcomes[i] = u.Finish()
		res.Machines = append(res.Machines, u.Machine())
		if outcomes[i].err != nil {
			os := inv.Switches[i].OS()
			failed[os] = append(failed[os], names[i])
		}
	}
	res.Summary = switchSummary(outcomes, len(inv.SwitchesOf(inventory.OSONYX)) > 0, len(inv.SwitchesOf(inventory.OSCumulus)) > 0, o.DryRun)
	fmt.Fprintln(r.track.Writer(), res.Summary)
	res.Seconds = r.end()
	var msgs []string
	for _, os := range oses {
		if f := failed[os]; len(f) > 0 {
			msgs = append(msgs, fmt.Sprintf("%d of %d %s failed: %s", len(f), len(inv.SwitchesOf(os)), switchEngines[os].what, strings.Join(f, ", ")))
		}
	}
	if len(msgs) > 0 {
		return res, machinesErr(applyplan.TargetSwitch, res.Machines, msgs...)
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
	r := o.begin(applyplan.TargetSwitch)
	defer r.end()
	var out []readiness.Result
	var errs []error
	for _, os := range inventory.SwitchOSes {
		if sws := inv.SwitchesOf(os); len(sws) > 0 {
			rs, err := switchEngines[os].make(o, r).Check(ctx, inv, sws)
			out, errs = append(out, rs...), append(errs, err)
		}
	}
	// Inventory order of the switches, each switch's checks in their order.
	order := map[string]int{}
	for i, sw := range inv.Switches {
		order[sw.Name] = i
	}
	slices.SortStableFunc(out, func(a, b readiness.Result) int { return order[a.Machine] - order[b.Machine] })
	return out, errors.Join(errs...)
}

// switchSummary is the switch target's summary line: the switches by
// state, then what was sent: ONYX commands when only ONYX switches take
// part; NVUE revisions when Cumulus ones do, with the ONYX commands apart
// when some switch runs ONYX (onyx) and Cumulus ones too (cumulus).
func switchSummary(outcomes []switchOutcome, onyx, cumulus, dryRun bool) string {
	var planned, changed, upToDate, failed, pending, sent, revisions int
	for _, r := range outcomes {
		sent += r.commands
		if r.revision {
			revisions++
		}
		switch {
		case r.err != nil:
			failed++
		case r.empty:
			upToDate++
		case dryRun:
			planned++
		case !r.pushed:
			pending++
		default:
			changed++
		}
	}
	sentText, nothingSent := fmt.Sprintf("%d command(s) sent", sent), "0 commands sent"
	switch {
	case cumulus && onyx:
		sentText = fmt.Sprintf("%d ONYX command(s) sent, %d NVUE revision(s) applied", sent, revisions)
	case cumulus:
		sentText = fmt.Sprintf("%d NVUE revision(s) applied", revisions)
	}
	if cumulus {
		nothingSent = sentText
	}
	switch {
	case dryRun && cumulus:
		return fmt.Sprintf("switch: dry run: %d switch(es) would change, %d up to date, %d failed; nothing sent", planned, upToDate, failed)
	case dryRun:
		return fmt.Sprintf("switch: dry run: %d switch(es) would change, %d up to date, %d failed; 0 commands sent", planned, upToDate, failed)
	case pending > 0:
		return fmt.Sprintf("switch: %d changed, %d not applied (planned), %d up to date, %d failed; %s", changed, pending, upToDate, failed, sentText)
	case changed == 0 && failed == 0:
		return fmt.Sprintf("switch: %d switch(es) up to date, nothing changed; %s", upToDate, nothingSent)
	}
	return fmt.Sprintf("switch: %d changed, %d up to date, %d failed; %s", changed, upToDate, failed, sentText)
}
