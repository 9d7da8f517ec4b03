package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// applyEnv is what every apply target gets: the validated inventory and the
// common flags. It is shared by the targets, which run concurrently, and
// read-only.
type applyEnv struct {
	Inv      *inventory.Inventory
	DryRun   bool
	Parallel int
	// KnownHosts is the known_hosts file for every SSH target ("" means
	// ~/.ssh/known_hosts); Identities are private key files offered to every
	// SSH target besides the ssh-agent's keys.
	KnownHosts string
	Identities []string
	// SSHTimeout bounds every SSH connect and handshake (--ssh-timeout).
	SSHTimeout time.Duration
	// VM is how the VM targets (hosts, workers) reach the VMs.
	VM     *vmFlags
	Getenv func(string) string
	// Checking is set for `rdggen check`, which reads and never makes
	// anything (the workers' keys, for one, must exist already).
	Checking bool
	// AllPairs is check's --all-pairs: the workers log in along every pair.
	AllPairs bool
}

// vmSSH is how the VM targets reach the VMs.
func (env *applyEnv) vmSSH() apply.SSH {
	s := env.VM.ssh(env.KnownHosts, env.Identities, env.Getenv)
	s.Agent, s.Timeout, s.TimeoutFlag = true, env.SSHTimeout, fmt.Sprintf("--ssh-timeout %s", env.SSHTimeout)
	return s
}

// targetRun is one target's part of an apply or a check: where it prints,
// how it reports progress, and what it reported back.
type targetRun struct {
	t *applyTarget
	// Out takes the target's lines (plan, machine lines, summary).
	Out io.Writer
	// Track is the target's progress line.
	Track *progress.Tracker
	// Machines and Summary are the target's apply.Result's.
	Machines []applyplan.Machine
	Summary  string

	err     error
	seconds float64
}

// common are the options of pkg/apply every target passes: the flags, the
// target's output, and its progress line fed from the events. (ApplyAll
// asks the one question.)
func (tr *targetRun) common(env *applyEnv) apply.Common {
	return apply.Common{DryRun: env.DryRun, Parallel: env.Parallel, Out: tr.Out, Events: tr.Track.Follow()}
}

// ended takes what a target of ApplyAll or CheckAll reported into tr: its
// result, its error (with what only the CLI knows added: the flag of a
// bound) and its time; its progress line is done.
func (tr *targetRun) ended(r apply.TargetResult) {
	if r.Result != nil {
		tr.Machines, tr.Summary = r.Result.Machines, r.Result.Summary
	}
	tr.err, tr.seconds = tr.t.hinted(r.Err), r.Seconds
	tr.Track.Finish()
}

// applyTarget is one `--target` of `rdggen apply` and `rdggen check`.
// flags registers the target's own flags on the flag set (called once);
// check, when set, refuses flag values that make no sense (a usage error,
// before anything is loaded or contacted); prepare, when set, checks
// once, with the inventory loaded and before any target contacts
// anything, what the target needs on this machine — credentials, keys —
// so that a missing one is one usage error instead of a failure per
// machine; target is the target as pkg/apply runs it (ApplyAll, CheckAll:
// env.Checking says which), its options from the flags and its output and
// progress tr's; an error there is the target's own, and it does not run.
type applyTarget struct {
	name    applyplan.TargetName
	help    string
	flags   func(fs *pflag.FlagSet)
	check   func() error
	prepare func(env *applyEnv) error
	// accept, when set, refuses an inventory the command cannot serve
	// (a usage error, before credentials and known_hosts are looked at).
	accept func(inv *inventory.Inventory) error
	target func(env *applyEnv, tr *targetRun) (apply.Target, error)
	// hint, when set, adds to the target's error what only the CLI knows
	// (the flag that sets a bound); it returns an error it already added
	// to as it is.
	hint func(err error) error
	// applyOnly lists the target's flags that only apply uses (hidden from
	// check).
	applyOnly []string
	// switchOptions, of the switch target only, is how it reaches the
	// switches, for other commands that read them (bench's counters);
	// countersMissing says what keeps them from being read, "" when
	// nothing does (apply.SwitchFlags.CountersMissing).
	switchOptions   func(env *applyEnv) apply.SwitchOptions
	countersMissing func(env *applyEnv) string
}

// hinted is err with t.hint's addition.
func (t *applyTarget) hinted(err error) error {
	if err == nil || t.hint == nil {
		return err
	}
	return t.hint(err)
}

// applyTargets lists the targets in the order `apply` runs them by default.
func applyTargets() []*applyTarget {
	return []*applyTarget{switchTarget(), esxiTarget(), hostsTarget(), workersTarget()}
}

func targetNames(ts []*applyTarget) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name.String()
	}
	return strings.Join(names, ",")
}

// selectTargets parses --target (a comma-separated list) against the known targets.
func selectTargets(all []*applyTarget, spec string) ([]*applyTarget, error) {
	if spec == "" {
		return all, nil
	}
	var out []*applyTarget
	seen := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if seen[name] {
			continue
		}
		seen[name] = true
		var found *applyTarget
		for _, t := range all {
			if t.name.String() == name {
				found = t
			}
		}
		if found == nil {
			return nil, fmt.Errorf("unknown target %q (targets: %s)", name, targetNames(all))
		}
		out = append(out, found)
	}
	return out, nil
}

// usesSSH reports whether any of targets connects over SSH: the VM targets
// always, the switch target when a switch has a management address.
func usesSSH(targets []*applyTarget, inv *inventory.Inventory) bool {
	for _, t := range targets {
		switch t.name {
		case "hosts", "workers":
			return true
		case "switch":
			for _, sw := range inv.Switches {
				if sw.Mgmt != "" && sw.OS().OverSSH() { // Cumulus: HTTPS, not SSH
					return true
				}
			}
		}
	}
	return false
}
