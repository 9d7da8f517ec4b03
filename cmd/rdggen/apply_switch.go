package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/apply"
)

// switchTarget is `rdggen apply --target switch`: bring every switch to
// the lossless RoCE config, sending only what differs (apply.Switches),
// each through its OS's engine. Its flags, variables and credentials are
// each switch OS's (apply.SwitchFlags).
func switchTarget() *applyTarget {
	var sf *apply.SwitchFlags
	// env is what the switch target takes from the rest of the command
	// line and the environment.
	env := func(e *applyEnv) apply.SwitchEnv {
		return apply.SwitchEnv{Getenv: e.Getenv, KnownHosts: e.KnownHosts, Identities: e.Identities,
			SSHTimeout: e.SSHTimeout, SSHTimeoutFlag: "--ssh-timeout"}
	}
	t := &applyTarget{
		name:      "switch",
		help:      apply.SwitchHelp(),
		flags:     func(f *pflag.FlagSet) { sf = apply.NewSwitchFlags(f) },
		applyOnly: apply.SwitchApplyOnly(),
		check:     func() error { return sf.Check() },
		prepare: func(e *applyEnv) error {
			var errs []error
			if !anyMgmt(e) && len(e.Inv.Switches) > 0 {
				errs = append(errs, fmt.Errorf("no switch has a mgmt address: set switches[].mgmt to each switch's management address (host or host:port), or leave switch out of --target (e.g. --target esxi,hosts,workers)"))
			}
			return errors.Join(append(errs, sf.Credentials(e.Inv, env(e)))...)
		},
		target: func(e *applyEnv, tr *targetRun) (apply.Target, error) {
			return sf.Options(env(e), tr.common(e)), nil
		},
	}
	t.switchOptions = func(e *applyEnv) apply.SwitchOptions {
		return sf.Options(env(e), apply.Common{DryRun: e.DryRun, Parallel: e.Parallel})
	}
	t.countersMissing = func(e *applyEnv) string { return sf.CountersMissing(e.Inv, env(e)) }
	return t
}

// anyMgmt reports whether some switch of the inventory has a mgmt address.
func anyMgmt(e *applyEnv) bool {
	for _, sw := range e.Inv.Switches {
		if sw.Mgmt != "" {
			return true
		}
	}
	return false
}
