// Package nvueapply is `rdggen apply --target switch` and `rdggen check
// --target switch` for Cumulus Linux switches, through the NVUE REST API
// (HTTPS, port 8765, basic auth, the certificate verified against a CA
// file or a pinned SHA-256). For each switch it reads the applied
// configuration, diffs it with pkg/cumulus's intent on the parsed tree,
// backs it up, and sends only the difference: one revision, one root
// PATCH, an apply with the auto-prompt answered and (from Cumulus Linux
// 5.0) a confirm timeout so that an apply that cuts rdggen off rolls back
// by itself; then it re-reads and verifies, confirms, and saves where the
// release does not save on apply (before 5.9). docs/nvue.md gives the
// workflow with its sources.
package nvueapply

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/rdggen/rdggen/internal/backup"
	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// IntentFunc is the configuration rdggen owns on one switch (pkg/cumulus's
// Intent).
type IntentFunc func(inv *inventory.Inventory, sw inventory.Switch) Tree

// VersionFunc is the Cumulus Linux release the inventory states for a
// switch (its `cumulus:` key).
type VersionFunc func(sw inventory.Switch) inventory.Version

// Options say how to reach the switches and what to do.
type Options struct {
	// Intent is the configuration rdggen owns on a switch; nil is
	// cumulus.Intent. Version is the release a switch runs; nil is its
	// inventory key (switches[].cumulus). Tests and other generators set
	// them.
	Intent  IntentFunc
	Version VersionFunc
	// User and Password are the NVUE login (basic auth); Password is never
	// printed. PasswordVar names the variable it came from, for messages.
	User, Password, PasswordVar string
	// Port is used when a switch's mgmt address carries none; 0 is 8765.
	Port int
	// TLS says how certificates are verified (never skipped).
	TLS TLS
	// BackupDir receives <switch>-<UTC time>.json, the applied
	// configuration read before any change (mode 0600); default "rdg-backup".
	BackupDir string
	// DryRun stops after the plan: nothing is sent, no backup written.
	DryRun bool
	// Parallel bounds how many switches are handled at once (≥ 1).
	Parallel int
	// RequestTimeout bounds each HTTP request (default 30 s).
	RequestTimeout time.Duration
	// ApplyTimeout bounds the wait for an apply or a save to finish
	// (default 120 s); ConfirmTimeout is the rollback window asked for
	// with the apply (default 300 s; the switch rolls back when rdggen has
	// not confirmed by then).
	ApplyTimeout, ConfirmTimeout time.Duration
	// PollInterval is the wait between reads of a revision's state
	// (default 500 ms).
	PollInterval time.Duration
	// Out receives the plan and per-switch results; nil discards them.
	Out io.Writer
	// Track hears the phases and the switches in flight; nil for none.
	Track *progress.Tracker
	// Gate is asked once after the plan, before the first backup or change.
	Gate applyplan.Gate
	// Now is the clock for backup names; default time.Now.
	Now func() time.Time
}

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
	if o.ApplyTimeout <= 0 {
		o.ApplyTimeout = 120 * time.Second
	}
	if o.ConfirmTimeout <= 0 {
		o.ConfirmTimeout = 300 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 500 * time.Millisecond
	}
	if o.User == "" {
		o.User = "cumulus"
	}
	if o.Intent == nil {
		o.Intent = cumulus.Intent
	}
	if o.Version == nil {
		o.Version = func(sw inventory.Switch) inventory.Version { return sw.Cumulus }
	}
}

// ConfirmSince is the first release whose apply takes a confirm timeout
// (`nv config apply --confirm`, NVUE reference "Config Commands"; the page
// dates the command, not the option, to 5.0.0: docs/nvue.md).
var ConfirmSince = []int{5, 0}

// Result is what happened on one switch.
type Result struct {
	// Switch is the switch name; Addr where rdggen connected (host:port).
	Switch, Addr string
	// Version is the release the inventory states.
	Version string
	// Plan is the difference found (empty: up to date).
	Plan Plan
	// Backup is the file holding the applied configuration read before
	// any change ("" when nothing was to change, or on a dry run).
	Backup string
	// Revision is the NVUE revision rdggen made ("" when none).
	Revision string
	// Patches counts the configuration PATCH requests sent (0 or 1).
	Patches int
	// Applied, Confirmed and Saved say how far the push went;
	// SavedExplicitly that rdggen saved (the release did not on apply).
	Applied, Confirmed, Saved, SavedExplicitly bool
	// Pushed reports whether the push started (a backup was attempted).
	Pushed bool
	// Interrupted: the run was cancelled during this switch's push.
	Interrupted bool
	// Awaiting are the revisions that were applied and waited for their
	// confirmation when rdggen read the switch (NVUE's revision list): the
	// applied configuration is then provisional, and rdggen plans nothing
	// over it (Err says so). Pending are revisions made and never applied,
	// named in the plan's warnings.
	Awaiting, Pending []string
	// Notes say what rdggen found out after a lost answer.
	Notes []string
	// Err is why the switch failed (nil on success).
	Err error
	// Seconds is how long the push took.
	Seconds float64
}

// Changed reports whether the configuration was changed and kept.
func (r *Result) Changed() bool { return r.Applied && r.Err == nil }

// errText is Err's text, as the switch's lines and its Machine say it:
// the engine's errors never name the switch (the line, or
// pkg/apply.MachineError, does once).
func (r *Result) errText() string { return r.Err.Error() }

// Machine is r for `--output json` (docs/json.md): one change per NVUE
// leaf, Item its path, From/To its values, Text the plan line.
func (r *Result) Machine() applyplan.Machine {
	m := applyplan.Machine{Target: applyplan.TargetSwitch, Name: r.Switch, Kind: applyplan.KindSwitch, Address: r.Addr,
		Changes: []applyplan.Change{}, Notes: append([]string(nil), r.Plan.Warnings...), Seconds: r.Seconds}
	for _, c := range r.Plan.Changes {
		m.Changes = append(m.Changes, applyplan.Change{Op: c.Op, Item: c.Key(),
			From: valueOrEmpty(c.From), To: valueOrEmpty(c.To), Text: c.String()})
	}
	m.Notes = append(m.Notes, r.Notes...)
	if r.Backup != "" {
		m.Notes = append(m.Notes, "applied configuration backed up to "+r.Backup)
	}
	m.Status = applyplan.StatusOf(r.Interrupted, r.Err != nil, r.Plan.Empty(), r.Applied)
	if r.Err != nil {
		m.Error, m.Err = r.errText(), r.Err
	}
	return m
}

func valueOrEmpty(v any) string {
	if v == nil {
		return ""
	}
	return cumulus.LeafText(v, true)
}

// target is one switch between the phases.
type target struct {
	o       Options
	inv     *inventory.Inventory
	sw      inventory.Switch
	version inventory.Version
	intent  Tree
	applied Tree
	client  *Client
	res     *Result
	// revs are the revision ids the switch listed when rdggen read it;
	// revErr why they could not be read.
	revs   map[string]RevisionStatus
	revErr error
}

// Prepared is one Cumulus switch read and planned: a driver.Unit, whose
// Push backs the switch up and applies the plan as one revision.
type Prepared struct{ *target }

// Prepare reads switch sw's applied configuration through the NVUE API and
// plans it: the unit pkg/apply gives internal/driver's loop for a Cumulus
// switch. Finish it.
func Prepare(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch, o Options) *Prepared {
	o.defaults()
	return &Prepared{prepare(ctx, inv, sw, o)}
}

// Finish closes the switch's client and returns what was done there.
func (p *Prepared) Finish() *Result {
	if p.client != nil {
		p.client.Close()
	}
	return p.res
}

// connect makes the switch's client.
func connect(sw inventory.Switch, o Options) (*Client, error) {
	if sw.Mgmt == "" {
		return nil, fmt.Errorf("no mgmt address in the inventory: set switches[].mgmt to the address of its NVUE API (host or host:port, default port %d)", DefaultPort)
	}
	return NewClient(ClientConfig{Addr: sw.Mgmt, Port: o.Port, User: o.User, Password: o.Password, TLS: o.TLS, Timeout: o.RequestTimeout})
}

func prepare(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch, o Options) *target {
	t := &target{o: o, inv: inv, sw: sw, version: o.Version(sw), res: &Result{Switch: sw.Name, Addr: sw.Mgmt}}
	t.res.Version = t.version.String()
	c, err := connect(sw, o)
	if err != nil {
		t.res.Err = err
		return t
	}
	t.client = c
	t.res.Addr = c.Addr()
	applied, err := c.GetTree(ctx, nil, "applied")
	if err != nil {
		t.res.Err = fmt.Errorf("reading the applied configuration: %w%s", err, tlsHint(err))
		return t
	}
	t.applied = applied
	t.intent = o.Intent(inv, sw)
	t.res.Plan = cumulus.Reconcile(inv, sw, t.intent, applied)
	w, err := t.versionNote(ctx)
	if err != nil {
		t.res.Err = err
		return t
	}
	if w != "" {
		t.res.Plan.Warnings = append(t.res.Plan.Warnings, w)
	}
	t.readRevisions(ctx)
	return t
}

// readRevisions reads the switch's revisions before any verdict: one that
// was applied and waits for its confirmation makes the applied
// configuration provisional (the switch rolls it back unless someone
// confirms it), so apply plans nothing and check fails; pending ones are
// named.
func (t *target) readRevisions(ctx context.Context) {
	revs, err := t.client.Revisions(ctx)
	if err != nil {
		t.revErr = err
		t.res.Plan.Warnings = append(t.res.Plan.Warnings, fmt.Sprintf("could not read the switch's revisions (GET /nvue_v1/revision: %v): a revision applied and awaiting its confirmation, which the switch would roll back, cannot be ruled out", err))
		return
	}
	t.revs = revs
	for _, id := range sortedKeys(anyMap(revs)) {
		switch st := revs[id].State; {
		case awaitsConfirm(st):
			t.res.Awaiting = append(t.res.Awaiting, id)
		case st == "pending" && strings.HasPrefix(id, "changeset/"+t.o.User+"/"):
			// Only rdggen's user's can be rdggen's; every `nv set`
			// session of a person makes one too, so it is named, never
			// deleted.
			t.res.Pending = append(t.res.Pending, id)
			t.res.Plan.Warnings = append(t.res.Plan.Warnings, fmt.Sprintf("revision %s of user %s is pending: made, never applied; it may be someone's `nv set` session, or one rdggen made and lost the answer to (rdggen deletes those it knows it made); if it is rdggen's, discard it with DELETE %s", quote.Terminal(id), t.o.User, revisionURL(id)))
		}
	}
	if len(t.res.Awaiting) > 0 {
		id := quote.Terminal(t.res.Awaiting[0])
		t.res.Err = fmt.Errorf("revision %s is applied but awaits its confirmation, so what the switch runs is provisional: the switch rolls it back when that revision's confirm window ends, unless someone confirms it (NVUE does not show when; an rdggen apply asks for %s from its apply, %s). rdggen plans nothing over it: confirm it on the switch (`nv config apply %s --confirm-yes`) to keep it, or wait for the rollback; then run apply again",
			id, t.o.ConfirmTimeout, windowUnit, id)
	}
}

// windowUnit is what rdggen knows of the unit of the REST confirm window.
const windowUnit = "read as seconds: NVIDIA documents no unit for state-controls.confirm, docs/nvue.md"

// revisionURL is the REST path of revision id (its "/" as %2F).
func revisionURL(id string) string {
	return cumulus.Path{"revision", id}.REST()
}

func anyMap(m map[string]RevisionStatus) map[string]any {
	out := make(map[string]any, len(m))
	for k := range m {
		out[k] = nil
	}
	return out
}

// tlsHint says how to trust a certificate the client refused: Cumulus
// Linux serves a self-signed one by default (docs/nvue.md).
func tlsHint(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	if errors.As(err, &unknown) || errors.As(err, &host) {
		return " (verify the switch's certificate with its CA or self-signed certificate as a PEM file, rdggen's --nvue-ca, or pin its SHA-256, --nvue-fingerprint; rdggen never skips the check)"
	}
	return ""
}

// versionNote compares the release the switch reports (`nv show system`,
// its build, e.g. "Cumulus Linux 5.9.1") with the inventory's, both parsed
// as dotted numbers (never as text: "5.1" is not "5.15.0"): a release
// older than inventory.MinCumulus (no NVUE `qos roce`) is an error whatever
// the inventory says; every other difference is a warning that names what
// the inventory's release decides differently (NVUE paths from 5.15,
// auto-save from 5.9); a release that cannot be read is a warning too.
func (t *target) versionNote(ctx context.Context) (string, error) {
	sys, err := t.client.GetTree(ctx, []string{"system"}, "")
	if err != nil {
		return fmt.Sprintf("could not read the switch's release (GET /nvue_v1/system: %v): rdggen follows the inventory's cumulus: %s unchecked", err, t.version), nil
	}
	build, _ := sys["build"].(string)
	build = quote.Terminal(build)
	m := reRelease.FindString(build)
	v, perr := inventory.ParseVersion(m)
	if m == "" || perr != nil {
		return fmt.Sprintf("the switch reports the build %q, in which rdggen finds no release number: rdggen follows the inventory's cumulus: %s unchecked", build, t.version), nil
	}
	if v.Before(inventory.MinCumulus) {
		return "", fmt.Errorf("the switch reports %q: Cumulus Linux before %s has no NVUE `qos roce`, so rdggen does not configure it (the inventory says cumulus: %s)", build, inventory.MinCumulus, t.version)
	}
	if !v.Before(t.version) && !t.version.Before(v) {
		return "", nil
	}
	var differs []string
	inv, sw := inventory.Switch{Cumulus: t.version}, inventory.Switch{Cumulus: v}
	if cumulus.RenamedForms(inv) != cumulus.RenamedForms(sw) {
		differs = append(differs, "the NVUE names renamed in 5.15 (system lldp, qos roce state, interface ipv4 address)")
	}
	if cumulus.AutoSaves(inv) != cumulus.AutoSaves(sw) {
		differs = append(differs, "whether an apply saves (from 5.9)")
	}
	if inv.Cumulus.AtLeast(ConfirmSince...) != sw.Cumulus.AtLeast(ConfirmSince...) {
		differs = append(differs, "the confirm window")
	}
	what := "nothing rdggen writes differs between the two"
	if len(differs) > 0 {
		what = "they differ in " + strings.Join(differs, ", ") + ": rdggen follows the inventory's"
	}
	return fmt.Sprintf("the switch reports %q (release %s), the inventory says cumulus: %s; %s; set cumulus: %s", build, v, t.version, what, v), nil
}

// reRelease finds the dotted release number in a build string such as
// "Cumulus Linux 5.9.1".
var reRelease = regexp.MustCompile(`\d+(\.\d+)+`)

// BackupExt is the extension of a switch's backup: its applied
// configuration, the JSON of `nv config show -o json` (GET
// /nvue_v1/?rev=applied), indented.
const BackupExt = ".json"

// writeBackup writes the applied configuration as indented JSON to
// dir/<switch>-<time>.json (backup.Write: mode 0600, a directory of the
// user's own, never overwriting an older backup).
func writeBackup(dir, name string, now time.Time, applied Tree) (string, error) {
	data, err := json.MarshalIndent(applied, "", "  ")
	if err != nil {
		return "", err
	}
	return backup.Write(dir, name, BackupExt, now, append(data, '\n'))
}

// push makes the plan on the switch: backup, revision, one root PATCH,
// apply (auto-prompt answered, confirm timeout), wait, re-read and
// verify, confirm, save where the release does not auto-save.
func (t *target) push(ctx context.Context) {
	r, c := t.res, t.client
	if r.Err != nil || r.Plan.Empty() {
		return
	}
	r.Pushed = true
	path, err := writeBackup(t.o.BackupDir, t.sw.Name, t.o.Now(), t.applied)
	if err != nil {
		r.Err = fmt.Errorf("backup before changing anything: %w", err)
		return
	}
	r.Backup = path
	id, err := c.CreateRevision(ctx)
	if err != nil {
		note := "; nothing changed"
		if Lost(err) {
			note = t.cleanUpLostRevision(ctx)
		}
		r.Err = fmt.Errorf("creating a revision: %w%s", err, note)
		return
	}
	r.Revision = id
	before := c.Patches
	err = c.Patch(ctx, nil, id, r.Plan.Patch())
	r.Patches = c.Patches - before
	if err != nil {
		what := "the switch refused the change"
		if Lost(err) {
			what = "the answer to the change was lost"
		}
		r.Err = fmt.Errorf("%s: %w; %s", what, err, t.discard(id))
		return
	}
	confirm := t.version.AtLeast(ConfirmSince...)
	apply := Tree{"state": "apply", "auto-prompt": Tree{"ays": "ays_yes"}}
	if confirm {
		apply["auto-prompt"].(Tree)["confirm"] = "confirm_yes"
		apply["state-controls"] = Tree{"confirm": int(t.o.ConfirmTimeout / time.Second)}
	}
	appliedAt := time.Now()
	if err := c.SetState(ctx, id, apply); err != nil {
		if !Lost(err) {
			// Refused, so not applied (e.g. another revision waits for its
			// confirmation): nothing changed.
			r.Err = fmt.Errorf("the switch refused to apply revision %s: %w; %s", id, err, t.discard(id))
			return
		}
		// The switch may have applied it: read what happened.
		st, rerr := t.wait(ctx, id, func(string) bool { return true })
		_, failed := failedStates[st.State]
		switch {
		case rerr != nil && failed:
			r.Err = fmt.Errorf("apply of revision %s: %w (the answer to the apply was lost: %v)", id, rerr, err)
			return
		case rerr != nil:
			r.Err = fmt.Errorf("apply of revision %s: %w; what the switch did could not be read (%v)%s", id, err, rerr, t.cutOffNote(confirm, appliedAt))
			return
		case st.State == "pending":
			r.Err = fmt.Errorf("apply of revision %s: %w; the switch never applied it (still pending); %s", id, err, t.discard(id))
			return
		}
		r.Notes = append(r.Notes, fmt.Sprintf("the answer to the apply was lost (%v); the switch's revision state, read since, is %s", err, st.State))
	}
	st, err := t.wait(ctx, id, func(state string) bool {
		return isApplied(state) || confirm && awaitsConfirm(state)
	})
	if err != nil {
		note := ""
		if _, failed := failedStates[st.State]; !failed {
			note = t.cutOffNote(confirm, appliedAt)
		}
		r.Err = fmt.Errorf("apply of revision %s: %w%s", id, err, note)
		return
	}
	r.Applied = true
	// Verify before confirming: a switch that did not take the change is
	// left to roll back rather than confirmed.
	now, err := c.GetTree(ctx, nil, "applied")
	if err == nil {
		if left := cumulus.Reconcile(t.inv, t.sw, t.intent, now); !left.Empty() {
			err = fmt.Errorf("the revision was applied, but the applied configuration still differs (%d change(s), first %s)", len(left.Changes), left.Changes[0])
		}
	}
	if err != nil {
		r.Applied = false
		if awaitsConfirm(st.State) {
			err = fmt.Errorf("%w; not confirmed: %s", err, t.rollbackBy(appliedAt))
		}
		r.Err = err
		return
	}
	if awaitsConfirm(st.State) {
		// The apply body again confirms it (cancels the rollback).
		if err := c.SetState(ctx, id, Tree{"state": "apply", "auto-prompt": Tree{"ays": "ays_yes"}}); err != nil {
			// Read what happened: a lost answer may hide a confirmation
			// the switch made.
			now, rerr := t.wait(ctx, id, func(string) bool { return true })
			switch {
			case Lost(err) && rerr == nil && isApplied(now.State):
				r.Notes = append(r.Notes, fmt.Sprintf("the answer to the confirmation was lost (%v); the switch's revision state, read since, is %s", err, now.State))
				st = now
			case rerr != nil:
				r.Applied = false
				r.Err = fmt.Errorf("confirming revision %s: %w; its state could not be read (%v): unless the confirmation arrived, %s", id, err, rerr, t.rollbackBy(appliedAt))
				return
			default:
				r.Applied = false
				r.Err = fmt.Errorf("confirming revision %s: %w; the revision is %s: %s", id, err, now.State, t.rollbackBy(appliedAt))
				return
			}
		}
		if !isApplied(st.State) {
			if st, err = t.wait(ctx, id, isApplied); err != nil {
				r.Applied = false
				r.Err = fmt.Errorf("confirming revision %s: %w", id, err)
				return
			}
		}
		r.Confirmed = true
	}
	if strings.Contains(st.State, "saved") {
		r.Saved = true // the release (or its auto-save setting) saved on apply
		return
	}
	if err := c.SetState(ctx, "applied", Tree{"state": "save", "auto-prompt": Tree{"ays": "ays_yes"}}); err != nil && !Lost(err) {
		r.Err = fmt.Errorf("saving the applied revision: %w (applied, not saved: a reboot goes back to the startup configuration)", err)
		return
	}
	if _, err := t.wait(ctx, "applied", func(state string) bool { return strings.Contains(state, "saved") }); err != nil {
		r.Err = fmt.Errorf("saving the applied revision: %w (applied, not saved)", err)
		return
	}
	r.Saved, r.SavedExplicitly = true, true
}

// cleanUpLostRevision runs after a revision's creation lost its answer:
// a pending revision of rdggen's user that was not there when rdggen read
// the switch is the one the switch made, and is deleted. It says what it
// found.
func (t *target) cleanUpLostRevision(ctx context.Context) string {
	revs, err := t.client.Revisions(ctx)
	if err != nil {
		return fmt.Sprintf("; whether the switch made a revision could not be read (%v): a pending revision of user %s made now is rdggen's, DELETE it (or leave it: a pending revision changes nothing)", err, t.o.User)
	}
	var made []string
	for _, id := range sortedKeys(anyMap(revs)) {
		if _, known := t.revs[id]; known || revs[id].State != "pending" || !strings.HasPrefix(id, "changeset/"+t.o.User+"/") {
			continue
		}
		made = append(made, id)
	}
	if len(made) == 0 {
		return "; the switch made no revision: nothing changed"
	}
	var notes []string
	for _, id := range made {
		notes = append(notes, t.discard(id))
	}
	return fmt.Sprintf("; the switch had made %d revision(s) all the same: %s", len(made), strings.Join(notes, "; "))
}

// rollbackBy says when a revision applied at appliedAt with rdggen's
// confirm window rolls back.
func (t *target) rollbackBy(appliedAt time.Time) string {
	return fmt.Sprintf("the switch rolls it back by itself by %s (a window of %s from the apply, %s)",
		appliedAt.Add(t.o.ConfirmTimeout).UTC().Format("15:04:05 UTC"), t.o.ConfirmTimeout, windowUnit)
}

// isApplied: the revision is the applied one ("applied", or
// "applied_and_saved" where the apply saves).
func isApplied(state string) bool { return strings.HasPrefix(state, "applied") }

// awaitsConfirm: an apply with a confirm window waits for the
// confirmation ("confirm" as `nv config revision` lists it; a public REST
// client waits for a state that names "ays"; docs/nvue.md).
func awaitsConfirm(state string) bool {
	return state == "confirm" || strings.Contains(state, "ays") && state != "ays_fail"
}

// cutOffNote says what happens to an apply whose outcome is not known.
func (t *target) cutOffNote(confirm bool, appliedAt time.Time) string {
	if confirm {
		return " (not confirmed: if the switch applied it, " + t.rollbackBy(appliedAt) + ")"
	}
	return " (this release has no confirm timeout: read the switch with `nv config history` before running apply again)"
}

// discard deletes a revision that was not applied and says so: "revision
// X discarded, nothing changed", or what to do when it could not be.
func (t *target) discard(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := t.client.DeleteRevision(ctx, id); err != nil {
		return fmt.Sprintf("nothing changed, but revision %s could not be discarded (%v): it stays pending until deleted (DELETE %s)", id, err, revisionURL(id))
	}
	return fmt.Sprintf("revision %s discarded, nothing changed", id)
}

// failedStates end a revision's transition without the wanted state
// (NVUE's states as public clients test for them, and the simulator's
// confirm_fail: docs/nvue.md).
var failedStates = map[string]string{
	"ays_fail":     "the apply waited for an answer to its prompt",
	"ignore_fail":  "the switch could not apply it",
	"apply_fail":   "the switch could not apply it",
	"invalid":      "the switch found it invalid",
	"confirm_fail": "it was not confirmed in time and was rolled back",
	"save_fail":    "the switch could not save it",
}

// wait polls the revision until done(state) (or a failed state), at most
// ApplyTimeout.
func (t *target) wait(ctx context.Context, id string, done func(string) bool) (RevisionStatus, error) {
	deadline := time.Now().Add(t.o.ApplyTimeout)
	for {
		st, err := t.client.Revision(ctx, id)
		if err != nil && (!Lost(err) || time.Now().After(deadline) || ctx.Err() != nil) {
			return st, err
		}
		if err != nil {
			// No answer, or a proxy's: the switch may be busy applying
			// (or its management path was cut); ask again.
			select {
			case <-ctx.Done():
				return st, ctx.Err()
			case <-time.After(t.o.PollInterval):
			}
			continue
		}
		if why, failed := failedStates[st.State]; failed {
			msg := fmt.Sprintf("state %s: %s", st.State, why)
			if len(st.Issues) > 0 {
				msg += ": " + strings.Join(st.Issues, "; ")
			}
			return st, errors.New(msg)
		}
		if done(st.State) {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("still %q after %s", st.State, t.o.ApplyTimeout)
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(t.o.PollInterval):
		}
	}
}

func (t *target) printPlan(w io.Writer) {
	r := t.res
	switch {
	case r.Err != nil:
		fmt.Fprintf(w, "%s: cannot plan: %s\n", r.Switch, r.errText())
	case r.Plan.Empty():
		fmt.Fprintf(w, "%s (%s, Cumulus Linux %s): up to date, nothing to send\n", r.Switch, r.Addr, r.Version)
	default:
		fmt.Fprintf(w, "%s (%s, Cumulus Linux %s): %d NVUE change(s) to apply:\n", r.Switch, r.Addr, r.Version, len(r.Plan.Changes))
		for _, c := range r.Plan.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
		if t.version.AtLeast(ConfirmSince...) {
			fmt.Fprintf(w, "  # the apply asks for a confirm window of %d (state-controls.confirm): rdggen means %s, but NVIDIA documents no unit for that REST field (the CLI's bare number is minutes; docs/nvue.md); rdggen confirms as soon as it has verified the change\n",
				int(t.o.ConfirmTimeout/time.Second), t.o.ConfirmTimeout)
		}
	}
	for _, warn := range r.Plan.Warnings {
		fmt.Fprintf(w, "  # warning: %s\n", warn)
	}
}

func (t *target) printResult(w io.Writer) {
	r := t.res
	switch {
	case r.Interrupted:
		fmt.Fprintf(w, "%s: INTERRUPTED after %.1fs: %s\n", r.Switch, r.Seconds, r.errText())
	case r.Err != nil:
		fmt.Fprintf(w, "%s: FAILED after %.1fs: %s\n", r.Switch, r.Seconds, r.errText())
	case r.Applied:
		how := "saved by the apply"
		if r.SavedExplicitly {
			how = "saved"
		}
		conf := ""
		if r.Confirmed {
			conf = ", confirmed"
		}
		fmt.Fprintf(w, "%s: applied revision %s (%d change(s)%s, %s) (%.1fs)\n", r.Switch, r.Revision, len(r.Plan.Changes), conf, how, r.Seconds)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if r.Backup != "" {
		fmt.Fprintf(w, "  applied configuration before rdggen backed up to %s\n", r.Backup)
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
	t.res.Seconds = time.Since(t0).Seconds()
	t.res.Interrupted = t.res.Err != nil && ctx.Err() != nil
}
