package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/flagcheck"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/horovod"
)

// workersTarget is `rdggen apply --target workers`: the Horovod worker
// container on every VM, with the cluster's SSH keys, checked until its sshd
// answers (apply.Workers).
func workersTarget() *applyTarget {
	var fs *pflag.FlagSet
	var keys string
	var ready time.Duration
	// The cluster's keys, read by prepare before anything is contacted.
	var (
		dir   string
		k     horovod.WorkerKeys
		found bool
	)
	return &applyTarget{
		name: "workers",
		help: "the Horovod worker container on every VM over SSH: the cluster's MPI keys, sshd on the worker port, checked",
		flags: func(f *pflag.FlagSet) {
			fs = f
			f.StringVar(&keys, "keys", "", "`DIR` of the cluster's worker SSH keys, generated there once (mode 0600); refused when\n"+
				"anyone but you or root owns or can write it or a directory above it, as sshd refuses such keys\n"+
				"(default $XDG_CONFIG_HOME/rdggen/<cluster>, else ~/.config/rdggen/<cluster>)")
			f.DurationVar(&ready, "worker-timeout", time.Minute, "how long to wait for a started worker's sshd (> 0)")
		},
		check: func() error {
			var err error
			if fs != nil && fs.Changed("keys") && keys == "" {
				err = errors.New("--keys is empty (an unset variable?); name the worker key directory, or leave --keys out for the default ($XDG_CONFIG_HOME/rdggen/<cluster>, else ~/.config/rdggen/<cluster>)")
			}
			return errors.Join(err, flagcheck.Positive("--worker-timeout", ready))
		},
		prepare: func(env *applyEnv) error {
			return errors.Join(vmCredentials(env), func() error {
				dir = keys
				if dir == "" {
					var err error
					if dir, err = apply.DefaultKeyDir(env.Inv.Name, env.Getenv); err != nil {
						return err
					}
				}
				var err error
				if k, found, err = apply.LoadWorkerKeys(dir); err != nil {
					return fmt.Errorf("--keys: %w", err)
				}
				if !found && !env.Checking {
					// Say now, not after the confirmation, that they cannot be made.
					if err := apply.CanSaveWorkerKeys(dir); err != nil {
						return fmt.Errorf("--keys: the cluster's worker keys are not in %s yet, and apply cannot make them: %w", dir, err)
					}
				}
				return nil
			}())
		},
		target: func(env *applyEnv, tr *targetRun) (apply.Target, error) {
			o := apply.WorkersOptions{Common: tr.common(env), SSH: env.vmSSH(), Keys: k, Root: env.VM.root}
			switch {
			case env.Checking && !found:
				return nil, fmt.Errorf("no worker keys in %s (--keys): the workers are checked against the cluster's keys, which rdggen apply --target workers makes", dir)
			case env.Checking:
				o.AllPairs = env.AllPairs
				return o, nil
			case !found:
				// New keys, saved in dir once the push is confirmed.
				var err error
				if o.Keys, err = horovod.GenerateWorkerKeys(); err != nil {
					return nil, err
				}
				o.SaveKeys = dir
			}
			o.ReadyTimeout = ready
			return o, nil
		},
		applyOnly: []string{"worker-timeout"},
	}
}
