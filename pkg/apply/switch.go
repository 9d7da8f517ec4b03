package apply

import (
	"context"
	"fmt"
	"time"

	"github.com/rdggen/rdggen/internal/switchapply"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// SwitchOptions say how to reach the ONYX switches (each switch's mgmt
// address in the inventory) and what to do.
type SwitchOptions struct {
	Common
	// SSH is the login; User defaults to "admin".
	SSH SSH
	// BackupDir receives <switch>-<UTC time>.cfg, the running-config read
	// before any change (mode 0600); default "rdg-backup".
	BackupDir string
	// CommandTimeout bounds each CLI command (default 60 s);
	// CommandTimeoutFlag, when set, is named in timeout errors.
	CommandTimeout     time.Duration
	CommandTimeoutFlag string
	// Batch is the most static-route commands pasted in one write, each
	// line's reply still read on its own; 0 means 256, 1 sends every
	// command on its own. Other commands always go one at a time.
	Batch int
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
	}
}

// Switches brings every switch of the inventory to the lossless RoCE
// configuration: it reads each running-config, diffs it against what
// pkg/onyx computes, and (unless DryRun, and when Confirm agrees) saves a
// backup, sends only the missing or conflicting commands, stops at the
// first refused one, and saves the configuration when all succeeded.
// Configuration rdggen does not own is never touched. The error wraps
// ErrMachines when switches failed (each has its error in Result.Machines).
func Switches(ctx context.Context, inv *inventory.Inventory, o SwitchOptions) (*Result, error) {
	r := o.begin("switch")
	results, err := switchapply.Run(ctx, inv, o.engine(r))
	res := &Result{Target: "switch", Summary: switchSummary(results, o.DryRun)}
	fmt.Fprintln(r.track.Writer(), res.Summary)
	for _, x := range results {
		res.Machines = append(res.Machines, x.Machine())
	}
	res.Seconds = r.end()
	if err != nil {
		return res, machinesErr(err.Error())
	}
	return res, nil
}

// CheckSwitches checks every switch, changing nothing: drift from the
// inventory (the plan of Switches), and per data port the link, MTU, PFC on
// the RoCE priority, its pause counters and ECN on the RoCE traffic class,
// each failure with the ONYX command that fixes it. Only show commands are
// sent. The error names the switches that could not be read.
func CheckSwitches(ctx context.Context, inv *inventory.Inventory, o SwitchOptions) ([]readiness.Result, error) {
	r := o.begin("switch")
	defer r.end()
	return switchapply.Check(ctx, inv, o.engine(r))
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
