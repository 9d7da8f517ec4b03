// Package onyxapply is `rdggen apply --target switch`: for each ONYX switch
// of the inventory it reads the running-config over an SSH CLI session,
// backs it up, diffs it against pkg/onyx's desired statements, and sends only
// the missing or wrong commands (and, for the routed container pool, the
// `no` forms that remove what rdggen configured and no longer wants:
// onyx.Reconcile), saving with `configuration write` only when every
// command succeeded.
package onyxapply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rdggen/rdggen/internal/backup"
	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/internal/transport/sshcli"
	"github.com/rdggen/rdggen/internal/transport/sshconn"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
)

// Commands rdggen sends besides the plan (docs/rules.md#saving-and-backups, §3.3).
const (
	showRunning = "show running-config"
	saveConfig  = "configuration write"
)

// Options say how to reach the switches and what to do.
type Options struct {
	// User is the SSH login, e.g. "admin".
	User string
	// Password, when set, is offered for password and keyboard-interactive
	// authentication (RDGGEN_SWITCH_PASSWORD); never printed.
	Password string
	// Agent offers the keys of the ssh-agent at $SSH_AUTH_SOCK.
	Agent bool
	// Identities are private key files to offer.
	Identities []string
	// Port is the SSH port used when a switch's mgmt has none; 0 means 22.
	Port int
	// KnownHosts is the known_hosts file; "" means ~/.ssh/known_hosts.
	// Unknown or changed host keys are refused.
	KnownHosts string
	// BackupDir receives <switch>-<UTC time>.cfg, the running-config read
	// before any change (mode 0600); default "rdg-backup".
	BackupDir string
	// DryRun stops after the plan: nothing is sent and no backup is written.
	DryRun bool
	// Parallel bounds how many switches are handled at once (≥ 1).
	Parallel int
	// Batch is the most independent entries sent in one write (batch.go:
	// consecutive static routes, or routed ports' and loopbacks' addresses,
	// or BGP neighbors and networks); 0 means DefaultBatch, 1 sends every
	// command on its own. Every other command is always sent on its own.
	Batch int
	// CommandTimeout bounds each CLI command; default 60 s (sshcli).
	CommandTimeout time.Duration
	// DialTimeout bounds connect and SSH handshake; default 15 s (sshconn).
	DialTimeout time.Duration
	// DialTimeoutFlag and CommandTimeoutFlag are the flags that set the
	// timeouts ("--ssh-timeout", "--switch-timeout"); timeout errors name them.
	DialTimeoutFlag, CommandTimeoutFlag string
	// PasswordVar names the variable Password comes from, for messages.
	PasswordVar string
	// Out receives the plan and per-switch results; nil discards them.
	Out io.Writer
	// Track hears the phases and the switches in flight; nil for none.
	Track *progress.Tracker
	// Gate is asked once after the plan, before the first backup or change.
	Gate applyplan.Gate
	// Now is the clock for backup names; default time.Now.
	Now func() time.Time
	// Select, when set, picks the switches of the inventory this engine
	// handles (pkg/apply gives it the ONYX ones and the Cumulus Linux ones
	// to internal/engines/nvueapply); nil handles all.
	Select func(inventory.Switch) bool
}

// switches are the inventory's switches o selects, in inventory order.
func (o Options) switches(inv *inventory.Inventory) []inventory.Switch {
	var out []inventory.Switch
	for _, sw := range inv.Switches {
		if o.Select == nil || o.Select(sw) {
			out = append(out, sw)
		}
	}
	return out
}

// Result is what happened on one switch.
type Result struct {
	// Switch is the switch name; Addr where rdggen connected.
	Switch, Addr string
	// Plan is the difference found (empty: up to date).
	Plan onyx.Plan
	// Backup is the file holding the running-config read before any
	// change ("" when nothing was to change or on a dry run).
	Backup string
	// Sent counts the plan commands sent, the failing one included (and,
	// when it was in a block, the block's lines after it).
	Sent int
	// RoundTrips counts the CLI session's writes to the switch, each
	// followed by a wait for its reply: login answers, paging off, enable,
	// the running-config reads, configure terminal, one per command sent on
	// its own, one per block of independent entries (static routes, port
	// addresses, BGP neighbors: batch.go), the save. The SSH
	// handshake's round trips are not included.
	RoundTrips int
	// Saved reports whether `configuration write` succeeded.
	Saved bool
	// Err is why the switch failed (nil on success); a refused command is
	// a *PushError.
	Err error
	// Pushed reports whether the push started (a backup was attempted).
	Pushed bool
	// Interrupted: the run was cancelled during this switch's push.
	Interrupted bool
	// Seconds is how long the push took.
	Seconds float64
}

// errText is Err's text, as the switch's lines and its Machine say it:
// the engine's errors never name the switch (the line, or
// pkg/apply.MachineError, does once).
func (r *Result) errText() string { return r.Err.Error() }

// bound adds to err, when a CLI command timed out, the flag of the bound
// per command.
func (o Options) bound(err error) error {
	if errors.Is(err, sshcli.ErrTimeout) && o.CommandTimeoutFlag != "" {
		return fmt.Errorf("%w (the bound per command is %s)", err, o.CommandTimeoutFlag)
	}
	return err
}

// Machine is r for `--output json`.
func (r *Result) Machine() applyplan.Machine {
	m := applyplan.Machine{Target: applyplan.TargetSwitch, Name: r.Switch, Kind: applyplan.KindSwitch, Address: r.Addr,
		Changes: []applyplan.Change{}, Notes: r.Plan.Warnings, Seconds: r.Seconds}
	for _, c := range r.Plan.Changes {
		// A replaced setting's From is the switch's current command(s).
		item, value := changeItem(c)
		ch := applyplan.Change{Op: applyplan.Add, Item: item, To: value, Text: c.Command}
		switch {
		case len(c.Removed) > 0:
			// A `no` command: the item is what goes away.
			ch = applyplan.Change{Op: applyplan.Remove, Item: strings.Join(c.Removed, "; "), From: strings.Join(c.Removed, "; "), Text: c.Command}
		case len(c.Replaces) > 0:
			ch.Op, ch.From = applyplan.Update, strings.Join(c.Replaces, "; ")
		}
		m.Changes = append(m.Changes, ch)
	}
	if r.Backup != "" {
		m.Notes = append(m.Notes, "running-config backed up to "+r.Backup)
	}
	m.Status = applyplan.StatusOf(r.Interrupted, r.Err != nil, r.Plan.Empty(), r.Saved)
	if r.Err != nil {
		m.Error, m.Err = r.errText(), r.Err
	}
	return m
}

// changeItem splits a plan command into the setting it makes (interface
// and key, "interface ethernet 1/1-1/32 qos trust") and the value that
// follows the key ("L3"); a statement that is its own key ("lldp") has no
// value.
func changeItem(c onyx.Change) (item, value string) {
	item = c.Command
	if len(c.Statements) > 0 {
		st := c.Statements[0]
		if head, ok := strings.CutSuffix(c.Command, st.Body); ok && strings.HasPrefix(st.Body, st.Key) {
			item, value = head+st.Key, strings.TrimSpace(strings.TrimPrefix(st.Body, st.Key))
		}
	}
	return item, value
}

// Changed reports whether commands were sent.
func (r *Result) Changed() bool { return r.Sent > 0 }

// PushError is a command the switch refused during the push. The commands
// before it are in the running-config; nothing was saved. When the command
// was one line of a block (static routes, port addresses or BGP neighbors:
// batch.go), the block's lines after it
// were sent with it and the switch ran them too: Sent and Refused say
// exactly which took effect.
type PushError struct {
	Switch  string
	Index   int // 1-based position of the command in the plan
	Total   int
	Command string
	// Device is the switch's own message.
	Device *sshcli.DeviceError
	// From is the 1-based position of the first command of the write that
	// carried the refused one (Index when it was sent on its own).
	From int
	// Sent is how many plan commands were sent, the refused one and the
	// rest of its block included (Index when it was sent on its own).
	Sent int
	// Refused are the 1-based plan positions of every command the switch
	// refused among those sent, Index first. Every other command up to
	// Sent is in the running-config (unsaved).
	Refused []int
}

func (e *PushError) Error() string {
	if e.Sent <= e.Index {
		return fmt.Sprintf("command %d of %d refused: %q: %s; stopped there, not saved (%d command(s) before it are applied but unsaved; the saved configuration is unchanged)",
			e.Index, e.Total, e.Command, e.Device.Message, e.Index-1)
	}
	after := e.Sent - e.Index
	also := ""
	if len(e.Refused) > 1 {
		var n []string
		for _, k := range e.Refused[1:] {
			n = append(n, strconv.Itoa(k))
		}
		also = ", refused as well: " + strings.Join(n, ", ")
	}
	return fmt.Sprintf("command %d of %d refused: %q: %s; stopped after its block (commands %d-%d of %d, sent in one write): "+
		"%d of the %d after it took effect%s; not saved (%d command(s) are applied but unsaved; the saved configuration is unchanged)",
		e.Index, e.Total, e.Command, e.Device.Message, e.From, e.Sent, e.Total,
		after-(len(e.Refused)-1), after, also, e.Sent-len(e.Refused))
}

func (e *PushError) Unwrap() error { return e.Device }

// ErrCumulus is the error of a Cumulus Linux switch given to this engine,
// which configures ONYX over SSH: apply and check of Cumulus through the
// NVUE REST API are internal/engines/nvueapply's (pkg/apply sends each switch to
// its engine with Options.Select).
var ErrCumulus = errors.New("this engine configures ONYX over SSH, not Cumulus Linux (NVUE)")

func (o *Options) defaults() {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.BackupDir == "" {
		o.BackupDir = "rdg-backup"
	}
}

// Prepared is one switch read and planned: a driver.Unit, whose Push
// backs the switch up, sends the plan and saves it.
type Prepared struct{ *target }

// Prepare connects to switch sw, reads its running-config and plans it:
// the unit pkg/apply gives internal/driver's loop for an ONYX switch.
// Finish it.
func Prepare(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch, o Options) *Prepared {
	o.defaults()
	return &Prepared{prepare(ctx, inv, sw, o)}
}

// Finish closes the switch's session and returns what was done there.
func (p *Prepared) Finish() *Result {
	if p.sess != nil {
		p.res.RoundTrips = p.sess.Writes()
	}
	p.close()
	return p.res
}

// target is one switch between the phases.
type target struct {
	o       Options
	inv     *inventory.Inventory
	sw      inventory.Switch
	desired []onyx.Statement
	client  *ssh.Client
	sess    *sshcli.Session
	res     *Result
	running string // the running-config the plan was made from
}

func prepare(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch, o Options) (t *target) {
	t = &target{o: o, sw: sw, res: &Result{Switch: sw.Name, Addr: sw.Mgmt}}
	defer func() { t.res.Err = o.bound(t.res.Err) }()
	if sw.OS() != inventory.OSONYX {
		// This engine speaks ONYX's CLI over SSH; it never sends ONYX
		// commands to a Cumulus switch.
		t.res.Err = fmt.Errorf("runs %s: %w: pkg/apply (rdggen apply and check) sends it to the NVUE engine, internal/engines/nvueapply", sw.Release(), ErrCumulus)
		return t
	}
	if sw.Mgmt == "" {
		t.res.Err = errors.New("no mgmt address in the inventory: set switches[].mgmt to its management IP address or host name")
		return t
	}
	addr := sw.Mgmt
	if _, _, err := net.SplitHostPort(addr); err != nil && o.Port != 0 {
		addr = net.JoinHostPort(addr, strconv.Itoa(o.Port))
	}
	t.res.Addr = addr
	client, err := sshconn.Dial(ctx, sshconn.Config{
		Addr: addr, User: o.User, KnownHosts: o.KnownHosts, Identities: o.Identities,
		Agent: o.Agent, Password: o.Password, Timeout: o.DialTimeout, TimeoutFlag: o.DialTimeoutFlag, PasswordVar: o.PasswordVar,
	})
	if err != nil {
		t.res.Err = err
		return t
	}
	t.client = client
	sess, err := sshcli.Open(ctx, client, sshcli.ONYX, sshcli.Options{CommandTimeout: o.CommandTimeout})
	if err != nil {
		t.res.Err = fmt.Errorf("%s: %w", addr, err)
		return t
	}
	t.sess = sess
	running, err := t.readRunning(ctx)
	if err != nil {
		t.res.Err = err
		return t
	}
	t.inv = inv
	t.desired = onyx.Desired(inv, sw)
	t.res.Plan = onyx.Reconcile(inv, sw, onyx.Parse(running))
	t.running = running
	return t
}

// readRunning reads `show running-config` (enable mode or above).
func (t *target) readRunning(ctx context.Context) (string, error) {
	if t.sess.Level() == sshcli.Exec {
		if err := t.sess.Acquire(ctx, sshcli.Enable); err != nil {
			return "", fmt.Errorf("enable: %w", err)
		}
	}
	out, err := t.sess.Send(ctx, showRunning)
	if err != nil {
		return "", fmt.Errorf("%s: %w", showRunning, err)
	}
	return out + "\n", nil
}

// BackupExt is the extension of a switch's backup: its running-config as
// `show running-config` prints it, the text that pasted in config mode
// restores it.
const BackupExt = ".cfg"

// writeBackup writes the running-config to dir/<switch>-<time>.cfg
// (backup.Write: mode 0600, as it holds password hashes, a directory of
// the user's own, never overwriting an older backup).
func writeBackup(dir, name string, now time.Time, text string) (string, error) {
	return backup.Write(dir, name, BackupExt, now, []byte(text))
}

// push backs up the running-config the plan was made from, sends the plan
// in config mode (independent entries — static routes, port addresses, BGP
// neighbors and networks — in blocks, every other command on its own:
// batch.go), stops at the first refused command (a refused route: after
// its block), checks the result by reading the running-config again, and
// saves only when everything took.
func (t *target) push(ctx context.Context) {
	if t.res.Err != nil || t.res.Plan.Empty() {
		return
	}
	t.res.Pushed = true
	path, err := writeBackup(t.o.BackupDir, t.sw.Name, t.o.Now(), t.running)
	if err != nil {
		t.res.Err = fmt.Errorf("backup before changing anything: %w", err)
		return
	}
	t.res.Backup = path
	cmds := t.res.Plan.Commands()
	if err := t.sess.Acquire(ctx, sshcli.Config); err != nil {
		t.res.Err = fmt.Errorf("configure terminal: %w", err)
		return
	}
	for i := 0; i < len(cmds); {
		j := blockEnd(t.res.Plan.Changes, i, t.o.batch())
		if j-i == 1 {
			if !t.sendOne(ctx, cmds, i) {
				return
			}
		} else if !t.sendBlock(ctx, cmds, i, j) {
			return
		}
		i = j
	}
	running, err := t.readRunning(ctx)
	if err != nil {
		t.res.Err = fmt.Errorf("%w; not saved", err)
		return
	}
	if left := onyx.Reconcile(t.inv, t.sw, onyx.Parse(running)); !left.Empty() {
		t.res.Err = fmt.Errorf("every command was accepted, but the running-config still differs (%d command(s), first %q); not saved",
			len(left.Changes), left.Changes[0].Command)
		return
	}
	if _, err := t.sess.Send(ctx, saveConfig); err != nil {
		t.res.Err = fmt.Errorf("%s: %w", saveConfig, err)
		return
	}
	t.res.Saved = true
}

func (t *target) close() {
	if t.sess != nil {
		t.sess.Close()
	}
	if t.client != nil {
		t.client.Close()
	}
}

func (t *target) printPlan(w io.Writer) {
	r := t.res
	switch {
	case r.Err != nil:
		fmt.Fprintf(w, "%s: cannot plan: %s\n", r.Switch, r.errText())
	case r.Plan.Empty():
		fmt.Fprintf(w, "%s (%s): up to date, nothing to send\n", r.Switch, r.Addr)
	default:
		fmt.Fprintf(w, "%s (%s): %d command(s) to send:\n", r.Switch, r.Addr, len(r.Plan.Changes))
		for _, l := range strings.Split(strings.TrimSuffix(r.Plan.String(), "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	for _, warn := range r.Plan.Warnings {
		if r.Plan.Empty() {
			fmt.Fprintf(w, "  # warning: %s\n", warn)
		}
	}
}

// printResult prints the line of a switch whose push ended.
func (t *target) printResult(w io.Writer) {
	r := t.res
	switch {
	case r.Interrupted:
		fmt.Fprintf(w, "%s: INTERRUPTED after %.1fs, %d of %d command(s) sent, not saved: %s\n", r.Switch, r.Seconds, r.Sent, len(r.Plan.Changes), r.errText())
	case r.Err != nil:
		fmt.Fprintf(w, "%s: FAILED after %.1fs: %s\n", r.Switch, r.Seconds, r.errText())
	case r.Sent > 0:
		fmt.Fprintf(w, "%s: sent %d command(s), saved (%s) (%.1fs)\n", r.Switch, r.Sent, saveConfig, r.Seconds)
	}
	if r.Backup != "" && (r.Err != nil || r.Interrupted) {
		fmt.Fprintf(w, "  the running-config before rdggen is in %s\n", r.Backup)
	} else if r.Backup != "" {
		fmt.Fprintf(w, "  running-config backed up to %s\n", r.Backup)
	}
}

// WritePlan, Machine, Pending, Push and WriteResult make a target a
// driver.Unit.
func (t *target) WritePlan(w io.Writer)      { t.printPlan(w) }
func (t *target) Machine() applyplan.Machine { return t.res.Machine() }
func (t *target) Pending() bool              { return t.res.Err == nil && !t.res.Plan.Empty() }
func (t *target) WriteResult(w io.Writer)    { t.printResult(w) }
func (t *target) Push(ctx context.Context) {
	t0 := time.Now()
	t.push(ctx)
	t.res.Err = t.o.bound(t.res.Err)
	t.res.Seconds = time.Since(t0).Seconds()
	t.res.Interrupted = t.res.Err != nil && ctx.Err() != nil
}
