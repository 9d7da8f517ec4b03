package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
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
	return apply.SSH{User: s.User, Port: s.Port, KnownHosts: s.KnownHosts, Identities: s.Identities, Agent: true,
		Password: s.Password, PasswordVar: s.PasswordVar, Timeout: env.SSHTimeout, TimeoutFlag: fmt.Sprintf("--ssh-timeout %s", env.SSHTimeout)}
}

// targetRun is one target's part of an apply: where it prints, how it
// reports progress and asks to go on, and what it reports back.
type targetRun struct {
	t *applyTarget
	// Out takes the target's lines (plan, machine lines, summary).
	Out io.Writer
	// Track is the target's progress line.
	Track *progress.Tracker
	// Gate is passed to the engine: asked once between plan and change.
	Gate applyplan.Gate
	// Machines and Summary are set by the target's run.
	Machines []applyplan.Machine
	Summary  string

	err     error
	seconds float64
}

// common are the options of pkg/apply every target passes: the flags, the
// target's output and gate, and its progress line fed from the events.
func (tr *targetRun) common(env *applyEnv) apply.Common {
	return apply.Common{DryRun: env.DryRun, Parallel: env.Parallel, Confirm: tr.Gate, Out: tr.Out, Events: tr.Track.Follow()}
}

// result takes a target's apply.Result into tr; an error that only some
// machines failed (each reported in its line) is a *partFailed.
func (tr *targetRun) result(res *apply.Result, err error) error {
	if res != nil {
		tr.Machines, tr.Summary = res.Machines, res.Summary
	}
	if errors.Is(err, apply.ErrMachines) {
		return &partFailed{msg: strings.TrimPrefix(err.Error(), apply.ErrMachines.Error()+": ")}
	}
	return err
}

// partFailed is a target's error when some of its machines failed: each was
// reported in its own line, so the final line only names them.
type partFailed struct{ msg string }

func (e *partFailed) Error() string { return e.msg }

// applyTarget is one `--target` of `rdggen apply`. flags registers the
// target's own flags on the apply flag set (called once); check, when set,
// refuses flag values that make no sense (a usage error, before anything is
// loaded or contacted); prepare, when set, checks once, with the inventory
// loaded and before any target contacts anything, what the target needs on
// this machine — credentials, keys — so that a missing one is one usage
// error instead of a failure per machine; run plans, passes tr.Gate,
// pushes, sets tr.Machines and tr.Summary, and returns a non-nil error when
// anything failed (a *partFailed when only some machines did).
type applyTarget struct {
	name    applyplan.TargetName
	help    string
	flags   func(fs *pflag.FlagSet)
	check   func() error
	prepare func(env *applyEnv) error
	// accept, when set, refuses an inventory the command cannot serve
	// (a usage error, before credentials and known_hosts are looked at).
	accept func(inv *inventory.Inventory) error
	run    func(ctx context.Context, env *applyEnv, tr *targetRun) error
	// inspect is the target's part of `rdggen check`: it reads the same
	// machines over the same connections and changes nothing. applyOnly
	// lists the target's flags that only apply uses (hidden from check).
	inspect   func(ctx context.Context, env *applyEnv, tr *targetRun) ([]readiness.Result, error)
	applyOnly []string
	// switchOptions, of the switch target only, is how it reaches the
	// switches, for other commands that read them (bench's counters).
	switchOptions func(env *applyEnv) apply.SwitchOptions
}

// positive refuses a duration flag that is not above zero.
func positive(flag string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s %s: must be more than 0", flag, d)
	}
	return nil
}

// validPort refuses a TCP port flag outside 1–65535.
func validPort(flag string, p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("%s %d: a TCP port is 1–65535", flag, p)
	}
	return nil
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
