package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// applyEnv is what every apply target gets: the validated inventory, the
// common flags and where to print. Targets print their plan before changing
// anything, stop after the plan when DryRun is set, and end with one summary line.
type applyEnv struct {
	Inv      *inventory.Inventory
	DryRun   bool
	Parallel int
	// KnownHosts is the known_hosts file for every SSH target ("" means
	// ~/.ssh/known_hosts); Identities are private key files offered to every
	// SSH target besides the ssh-agent's keys.
	KnownHosts string
	Identities []string
	// VM is how the VM targets (hosts, workers) reach the VMs.
	VM     *vmFlags
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// applyTarget is one `--target` of `rdggen apply`. flags registers the
// target's own flags on the apply flag set (called once); check, when set,
// refuses flag values that make no sense (a usage error, before anything is
// loaded or contacted); run pushes and returns a non-nil error when anything
// failed (the error is the summary).
type applyTarget struct {
	name  string
	help  string
	flags func(fs *pflag.FlagSet)
	check func() error
	run   func(ctx context.Context, env *applyEnv) error
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
		names[i] = t.name
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
			if t.name == name {
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
				if sw.Mgmt != "" {
					return true
				}
			}
		}
	}
	return false
}
