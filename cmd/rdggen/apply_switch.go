package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Environment variables of the switch target (never printed): the ONYX
// SSH login, and the Cumulus Linux NVUE API login.
const (
	envSwitchUser     = "RDGGEN_SWITCH_USER"
	envSwitchPassword = "RDGGEN_SWITCH_PASSWORD"
	envNVUEUser       = "RDGGEN_NVUE_USER"
	envNVUEPassword   = "RDGGEN_NVUE_PASSWORD"
	// envNVUECA is --nvue-ca's default when neither --nvue-ca nor
	// --nvue-fingerprint is given (rdggen lab's env file sets it).
	envNVUECA = "RDGGEN_NVUE_CA"
)

// switchTarget is `rdggen apply --target switch`: bring every switch to
// the lossless RoCE config, sending only what differs (apply.Switches):
// ONYX over SSH, Cumulus Linux through the NVUE REST API.
func switchTarget() *applyTarget {
	var (
		fs        *pflag.FlagSet
		user      string
		backupDir string
		timeout   time.Duration
		port      int
		batch     int
		nvue      apply.NVUE
	)
	// options are the switch target's settings for apply and check.
	options := func(env *applyEnv, tr *targetRun) apply.SwitchOptions {
		u := user
		if fs != nil && !fs.Changed("switch-user") {
			if v := env.Getenv(envSwitchUser); v != "" {
				u = v
			}
		}
		n := nvue
		if fs != nil && !fs.Changed("nvue-user") {
			if v := env.Getenv(envNVUEUser); v != "" {
				n.User = v
			}
		}
		if n.CAFile == "" && n.Fingerprint == "" {
			n.CAFile = env.Getenv(envNVUECA)
		}
		n.Password, n.PasswordVar = env.Getenv(envNVUEPassword), envNVUEPassword
		return apply.SwitchOptions{
			Common: tr.common(env),
			NVUE:   n,
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
		help: "ONYX switches over SSH (" + envSwitchUser + ", " + envSwitchPassword + "), Cumulus Linux switches through the NVUE REST API (" +
			envNVUEUser + ", " + envNVUEPassword + "): lossless RoCE config, only what differs",
		flags: func(f *pflag.FlagSet) {
			fs = f
			f.StringVar(&user, "switch-user", "admin", "SSH `USER` on the switches (env "+envSwitchUser+")")
			f.IntVar(&port, "switch-ssh-port", 22, "SSH `PORT` of the switches' mgmt addresses")
			f.StringVar(&backupDir, "backup-dir", "rdg-backup", "`DIR` for each switch's running-config, saved before any change (mode 0600)")
			f.DurationVar(&timeout, "switch-timeout", 60*time.Second, "timeout per switch CLI command (> 0)")
			f.StringVar(&nvue.User, "nvue-user", "cumulus", "NVUE API `USER` on the Cumulus switches (env "+envNVUEUser+"; password from "+envNVUEPassword+")")
			f.IntVar(&nvue.Port, "nvue-port", 8765, "NVUE API HTTPS `PORT` of the Cumulus switches' mgmt addresses")
			f.StringVar(&nvue.CAFile, "nvue-ca", "", "PEM `FILE` of the CA (or self-signed certificate) of the Cumulus switches' NVUE API (default $"+envNVUECA+", else the system's roots)")
			f.StringVar(&nvue.Fingerprint, "nvue-fingerprint", "", "pin the Cumulus switches' NVUE API certificate instead: its `SHA256` in hex (openssl x509 -noout -fingerprint -sha256)")
			f.DurationVar(&nvue.RequestTimeout, "nvue-timeout", 30*time.Second, "timeout per NVUE API request (> 0)")
			f.DurationVar(&nvue.ConfirmTimeout, "nvue-confirm-timeout", 300*time.Second, "a Cumulus switch rolls an apply back by itself unless rdggen confirms it within this time (>= 1s)")
			f.IntVar(&batch, "switch-batch", 256, "most static routes pasted in one write (`N` ≥ 1; 1: every command on its own)")
		},
		check: func() error {
			errs := []error{positive("--switch-timeout", timeout), validPort("--switch-ssh-port", port),
				positive("--nvue-timeout", nvue.RequestTimeout), validPort("--nvue-port", nvue.Port)}
			if nvue.ConfirmTimeout < time.Second {
				errs = append(errs, errors.New("--nvue-confirm-timeout must be at least 1s"))
			}
			if batch < 1 {
				errs = append(errs, fmt.Errorf("--switch-batch %d: must be at least 1", batch))
			}
			if nvue.CAFile != "" && nvue.Fingerprint != "" {
				errs = append(errs, errors.New("--nvue-ca and --nvue-fingerprint exclude each other: verify the switches' certificate one way"))
			} else if err := nvue.CheckTLS(); err != nil {
				flag := "--nvue-ca"
				if nvue.Fingerprint != "" {
					flag = "--nvue-fingerprint"
				}
				errs = append(errs, fmt.Errorf("%s: %w", flag, err))
			}
			return errors.Join(errs...)
		},
		prepare: func(env *applyEnv) error {
			var mgmt, cum []string
			for _, sw := range env.Inv.Switches {
				switch {
				case sw.Mgmt == "":
				case sw.OS() == inventory.OSCumulus:
					cum = append(cum, sw.Name)
				default:
					mgmt = append(mgmt, sw.Name)
				}
			}
			var errs []error
			if len(mgmt)+len(cum) == 0 && len(env.Inv.Switches) > 0 {
				errs = append(errs, fmt.Errorf("no switch has a mgmt address: set switches[].mgmt to each switch's management address (host or host:port), or leave switch out of --target (e.g. --target esxi,hosts,workers)"))
			}
			if len(cum) > 0 && env.Getenv(envNVUEPassword) == "" {
				errs = append(errs, fmt.Errorf("the NVUE API of the Cumulus switches (%s) needs a password: set %s (the user is --nvue-user or %s)",
					strings.Join(cum, ", "), envNVUEPassword, envNVUEUser))
			}
			if len(mgmt) > 0 {
				errs = append(errs, sshCredentials(env, "the switches ("+strings.Join(mgmt, ", ")+")", envSwitchPassword))
			}
			return errors.Join(errs...)
		},
		run: func(ctx context.Context, env *applyEnv, tr *targetRun) error {
			res, err := apply.Switches(ctx, env.Inv, options(env, tr))
			return tr.result(res, err)
		},
		applyOnly: []string{"backup-dir", "switch-batch", "nvue-confirm-timeout"},
		inspect: func(ctx context.Context, env *applyEnv, tr *targetRun) ([]readiness.Result, error) {
			return apply.CheckSwitches(ctx, env.Inv, options(env, tr))
		},
	}
}
