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
	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// SwitchOptions say how to reach the switches (each switch's mgmt address
// in the inventory) and what to do. Each switch goes to its OS's engine
// (internal/switchos): ONYX switches over SSH (SSH, CommandTimeout,
// Batch), Cumulus Linux switches through the NVUE REST API (NVUE), a
// switch of another registered OS with what that OS takes (OS).
type SwitchOptions struct {
	Common
	// SSH is the login of the switches reached over SSH (ONYX); User
	// defaults to "admin".
	SSH SSH
	// NVUE is how the switches reached through an HTTPS API (Cumulus
	// Linux's NVUE) are reached.
	NVUE NVUE
	// BackupDir receives, before any change, <switch>-<UTC time><ext>,
	// the switch's configuration as read, in its OS's format (SwitchOSes:
	// .cfg, an ONYX running-config; .json, a Cumulus applied
	// configuration), mode 0600; default "rdg-backup".
	BackupDir string
	// CommandTimeout bounds each command of a switch CLI (ONYX; default 60
	// s); CommandTimeoutFlag, when set, is named in timeout errors.
	CommandTimeout     time.Duration
	CommandTimeoutFlag string
	// Batch is the most independent entries (consecutive static routes,
	// routed ports' addresses, BGP neighbors and networks) pasted in one
	// write, each line's reply still read on its own; 0 means 256, 1 sends
	// every command on its own. Other commands always go one at a time.
	Batch int
	// OS holds the options of a registered switch OS that SSH and NVUE do
	// not hold, keyed by the OS; the OS documents the type it takes.
	OS map[inventory.SwitchOS]any
}

// settings are the options as every OS's engine takes them.
func (o SwitchOptions) settings(r *run) switchos.Settings {
	return switchos.Settings{
		BackupDir: o.BackupDir, DryRun: o.DryRun, Parallel: o.parallel(),
		Out: r.track.Writer(), Track: r.track, Gate: o.Confirm,
		SSH: switchos.SSH{
			User: o.SSH.User, Port: o.SSH.Port, KnownHosts: o.SSH.KnownHosts, Identities: o.SSH.Identities, Agent: o.SSH.Agent,
			Password: o.SSH.Password, PasswordVar: o.SSH.PasswordVar, Timeout: o.SSH.Timeout, TimeoutFlag: o.SSH.TimeoutFlag,
			CommandTimeout: o.CommandTimeout, CommandTimeoutFlag: o.CommandTimeoutFlag, Batch: o.Batch,
		},
		API: switchos.API(o.NVUE),
		Own: o.OS,
	}
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

// Switches brings every switch of the inventory to the lossless RoCE
// configuration, each through its OS's engine (internal/switchos). An
// ONYX switch: it reads the running-config over SSH, diffs it against what
// pkg/onyx computes, and (unless DryRun, and when Confirm agrees) saves a
// backup, sends only the missing or conflicting commands, stops at the
// first refused one, and saves the configuration when all succeeded. A
// Cumulus Linux switch: it reads the applied configuration through the
// NVUE REST API, diffs it with pkg/cumulus's intent on the parsed tree,
// backs it up, and applies only the difference as one revision (one PATCH,
// apply with a confirm timeout, verified, confirmed, saved where the
// release does not save on apply). Configuration rdggen does not own is
// never touched. Every switch of every OS is read and planned in one
// driver loop, so the plans print in inventory order and Confirm is asked
// once. The error wraps ErrMachines when switches failed (each has its
// error in Result.Machines); a switch whose OS has no engine is an error
// before anything is contacted.
func Switches(ctx context.Context, inv *inventory.Inventory, o SwitchOptions) (*Result, error) {
	if inv == nil {
		return nil, ErrNoInventory
	}
	oses, err := switchos.Of(inv)
	if err != nil {
		return nil, err
	}
	r := o.begin(applyplan.TargetSwitch)
	engines := map[inventory.SwitchOS]switchos.Engine{}
	for _, os := range oses {
		engines[os.OS] = os.Engine(o.settings(r))
	}
	names := make([]string, len(inv.Switches))
	for i, sw := range inv.Switches {
		names[i] = sw.Name
	}
	phase := switchos.Words{What: "switch(es)", Reading: "reading the configuration of"}
	if len(oses) == 1 {
		phase = oses[0].Words
	}
	units := driver.ReadPlanPush(ctx, names, driver.Run{
		ReadPhase: driver.Phrasef(phase.Reading + " %d " + phase.What), PushPhase: driver.Phrasef("changing %d " + phase.What),
		Parallel: o.parallel(), DryRun: o.DryRun, Gate: o.Confirm, Track: r.track, Out: r.track.Writer(),
	}, func(i int) switchos.Unit {
		sw := inv.Switches[i]
		return engines[sw.OS()].Plan(ctx, inv, sw)
	})
	res := &Result{Target: applyplan.TargetSwitch}
	outcomes := map[inventory.SwitchOS][]switchos.Outcome{}
	failed := map[inventory.SwitchOS][]string{}
	for i, u := range units {
		os, out := inv.Switches[i].OS(), u.Finish()
		outcomes[os] = append(outcomes[os], out)
		res.Machines = append(res.Machines, u.Machine())
		if out.Err != nil {
			failed[os] = append(failed[os], names[i])
		}
	}
	res.Summary = switchSummary(oses, outcomes, o.DryRun)
	fmt.Fprintln(r.track.Writer(), res.Summary)
	res.Seconds = r.end()
	var msgs []string
	for _, os := range oses {
		if f := failed[os.OS]; len(f) > 0 {
			msgs = append(msgs, fmt.Sprintf("%d of %d %s failed: %s", len(f), len(inv.SwitchesOf(os.OS)), os.Words.What, strings.Join(f, ", ")))
		}
	}
	if len(msgs) > 0 {
		return res, machinesErr(applyplan.TargetSwitch, res.Machines, msgs...)
	}
	return res, nil
}

// CheckSwitches checks every switch, changing nothing, each through its
// OS's engine (SwitchChecks lists each OS's checks): drift from the
// inventory (the plan of Switches), and per data port the link and MTU. On
// ONYX also PFC on the RoCE priority, its pause counters and ECN on the
// RoCE traffic class, each failure with the ONYX command that fixes it
// (only show commands are sent); on Cumulus Linux `qos roce` operational
// against applied (mode, PFC priority, ECN thresholds, enabled traffic
// classes) and the PFC pause counters, each failure with the `nv` command
// that fixes it (only GET requests are sent). The error names the switches
// that could not be read.
func CheckSwitches(ctx context.Context, inv *inventory.Inventory, o SwitchOptions) ([]readiness.Result, error) {
	if inv == nil {
		return nil, ErrNoInventory
	}
	oses, err := switchos.Of(inv)
	if err != nil {
		return nil, err
	}
	r := o.begin(applyplan.TargetSwitch)
	defer r.end()
	var out []readiness.Result
	var errs []error
	for _, os := range oses {
		rs, err := os.Engine(o.settings(r)).Check(ctx, inv, inv.SwitchesOf(os.OS))
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

// switchSummary is the switch target's summary line: the switches by
// state, then what was sent, in each OS's words (switchos.Words): an OS
// alone says its own (an ONYX run "3 command(s) sent"), several OSes each
// theirs ("3 ONYX command(s) sent, 1 NVUE revision(s) applied").
func switchSummary(oses []switchos.OS, outcomes map[inventory.SwitchOS][]switchos.Outcome, dryRun bool) string {
	var planned, changed, upToDate, failed, pending int
	var sent []string
	for _, os := range oses {
		n := 0
		for _, r := range outcomes[os.OS] {
			n += r.Sent
			switch {
			case r.Err != nil:
				failed++
			case r.Empty:
				upToDate++
			case dryRun:
				planned++
			case !r.Pushed:
				pending++
			default:
				changed++
			}
		}
		sent = append(sent, os.Words.Sent(n, len(oses) == 1))
	}
	sentText, nothingSent, dryRunSent := strings.Join(sent, ", "), strings.Join(sent, ", "), "nothing sent"
	if len(oses) == 1 && oses[0].Words.Nothing != "" {
		nothingSent, dryRunSent = oses[0].Words.Nothing, oses[0].Words.Nothing
	}
	switch {
	case dryRun:
		return fmt.Sprintf("switch: dry run: %d switch(es) would change, %d up to date, %d failed; %s", planned, upToDate, failed, dryRunSent)
	case pending > 0:
		return fmt.Sprintf("switch: %d changed, %d not applied (planned), %d up to date, %d failed; %s", changed, pending, upToDate, failed, sentText)
	case changed == 0 && failed == 0:
		return fmt.Sprintf("switch: %d switch(es) up to date, nothing changed; %s", upToDate, nothingSent)
	}
	return fmt.Sprintf("switch: %d changed, %d up to date, %d failed; %s", changed, upToDate, failed, sentText)
}
