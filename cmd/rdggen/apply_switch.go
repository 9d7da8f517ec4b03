package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Environment variables of the switch target (never printed).
const (
	envSwitchUser     = "RDGGEN_SWITCH_USER"
	envSwitchPassword = "RDGGEN_SWITCH_PASSWORD"
)

// switchTarget is `rdggen apply --target switch`: bring every ONYX switch
// to the lossless RoCE config over SSH, sending only what differs
// (apply.Switches).
func switchTarget() *applyTarget {
	var (
		fs        *pflag.FlagSet
		user      string
		backupDir string
		timeout   time.Duration
		port      int
		batch     int
	)
	// options are the switch target's settings for apply and check.
	options := func(env *applyEnv, tr *targetRun) apply.SwitchOptions {
		u := user
		if fs != nil && !fs.Changed("switch-user") {
			if v := env.Getenv(envSwitchUser); v != "" {
				u = v
			}
		}
		return apply.SwitchOptions{
			Common: tr.common(env),
			SSH: apply.SSH{User: u, Password: env.Getenv(envSwitchPassword), PasswordVar: envSwitchPassword, Agent: true,
				Identities: env.Identities, KnownHosts: env.KnownHosts, Port: port, Timeout: env.SSHTimeout, TimeoutFlag: "--ssh-timeout"},
			BackupDir:          backupDir,
			CommandTimeout:     timeout,
			CommandTimeoutFlag: fmt.Sprintf("--switch-timeout %s", timeout),
			Batch:              batch,
		}
	}
	return &applyTarget{
		switchOptions: func(env *applyEnv) apply.SwitchOptions { return options(env, &targetRun{}) },
		name:          "switch",
		help:          "ONYX switches over SSH (" + envSwitchUser + ", " + envSwitchPassword + "): lossless RoCE config, only what differs",
		flags: func(f *pflag.FlagSet) {
			fs = f
			f.StringVar(&user, "switch-user", "admin", "SSH `USER` on the switches (env "+envSwitchUser+")")
			f.IntVar(&port, "switch-ssh-port", 22, "SSH `PORT` of the switches' mgmt addresses")
			f.StringVar(&backupDir, "backup-dir", "rdg-backup", "`DIR` for each switch's running-config, saved before any change (mode 0600)")
			f.DurationVar(&timeout, "switch-timeout", 60*time.Second, "timeout per switch CLI command (> 0)")
			f.IntVar(&batch, "switch-batch", 256, "most static routes pasted in one write (`N` ≥ 1; 1: every command on its own)")
		},
		check: func() error {
			var bad error
			if batch < 1 {
				bad = fmt.Errorf("--switch-batch %d: must be at least 1", batch)
			}
			return errors.Join(positive("--switch-timeout", timeout), validPort("--switch-ssh-port", port), bad)
		},
		prepare: func(env *applyEnv) error {
			var mgmt []string
			for _, sw := range env.Inv.Switches {
				if sw.Mgmt != "" && !sw.IsCumulus() { // SSH is ONYX's; a Cumulus switch gets the engine's clear error
					mgmt = append(mgmt, sw.Name)
				}
			}
			if len(mgmt) == 0 {
				return nil // nothing to log in to
			}
			return sshCredentials(env, "the switches ("+strings.Join(mgmt, ", ")+")", envSwitchPassword)
		},
		run: func(ctx context.Context, env *applyEnv, tr *targetRun) error {
			res, err := apply.Switches(ctx, env.Inv, options(env, tr))
			return tr.result(res, err)
		},
		applyOnly: []string{"backup-dir", "switch-batch"},
		inspect: func(ctx context.Context, env *applyEnv, tr *targetRun) ([]readiness.Result, error) {
			return apply.CheckSwitches(ctx, env.Inv, options(env, tr))
		},
	}
}
