package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/switchapply"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Environment variables of the switch target (never printed).
const (
	envSwitchUser     = "RDGGEN_SWITCH_USER"
	envSwitchPassword = "RDGGEN_SWITCH_PASSWORD"
)

// switchTarget is `rdggen apply --target switch`: bring every ONYX switch
// to the lossless RoCE config over SSH, sending only what differs (issue #4).
func switchTarget() *applyTarget {
	var (
		fs        *pflag.FlagSet
		user      string
		backupDir string
		timeout   time.Duration
		port      int
	)
	// options are the switch target's settings for apply and check.
	options := func(env *applyEnv, tr *targetRun) switchapply.Options {
		u := user
		if fs != nil && !fs.Changed("switch-user") {
			if v := env.Getenv(envSwitchUser); v != "" {
				u = v
			}
		}
		return switchapply.Options{
			User:               u,
			Password:           env.Getenv(envSwitchPassword),
			Agent:              true,
			Identities:         env.Identities,
			KnownHosts:         env.KnownHosts,
			Port:               port,
			BackupDir:          backupDir,
			DryRun:             env.DryRun,
			Parallel:           env.Parallel,
			CommandTimeout:     timeout,
			DialTimeout:        env.SSHTimeout,
			DialTimeoutFlag:    "--ssh-timeout",
			CommandTimeoutFlag: fmt.Sprintf("--switch-timeout %s", timeout),
			PasswordVar:        envSwitchPassword,
			Out:                tr.Out,
			Track:              tr.Track,
			Gate:               tr.Gate,
		}
	}
	return &applyTarget{
		name: "switch",
		help: "ONYX switches over SSH (" + envSwitchUser + ", " + envSwitchPassword + "): lossless RoCE config, only what differs",
		flags: func(f *pflag.FlagSet) {
			fs = f
			f.StringVar(&user, "switch-user", "admin", "SSH `USER` on the switches (env "+envSwitchUser+")")
			f.IntVar(&port, "switch-ssh-port", 22, "SSH `PORT` of the switches' mgmt addresses")
			f.StringVar(&backupDir, "backup-dir", "rdg-backup", "`DIR` for each switch's running-config, saved before any change (mode 0600)")
			f.DurationVar(&timeout, "switch-timeout", 60*time.Second, "timeout per switch CLI command (> 0)")
		},
		check: func() error {
			return errors.Join(positive("--switch-timeout", timeout), validPort("--switch-ssh-port", port))
		},
		run: func(ctx context.Context, env *applyEnv, tr *targetRun) error {
			results, err := switchapply.Run(ctx, env.Inv, options(env, tr))
			tr.Summary = switchSummary(results, env.DryRun)
			fmt.Fprintln(tr.Out, tr.Summary)
			for _, r := range results {
				tr.Machines = append(tr.Machines, r.Machine())
			}
			if err != nil {
				return &partFailed{msg: err.Error()}
			}
			return nil
		},
		applyOnly: []string{"backup-dir"},
		inspect: func(ctx context.Context, env *applyEnv, tr *targetRun) ([]readiness.Result, error) {
			return switchapply.Check(ctx, env.Inv, options(env, tr))
		},
	}
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
