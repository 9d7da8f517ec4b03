package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/hostapply"
	"github.com/rdggen/rdggen/internal/remote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// hostsTarget is `rdggen apply --target hosts`: Docker networking, routes,
// firewall, address translation and in-VM RoCE settings pushed to every VM
// over SSH (internal/hostapply).
func hostsTarget() *applyTarget {
	var restart, validate string
	return &applyTarget{
		name: "hosts",
		help: "the VMs over SSH (ssh-agent, --identity or " + envSSHPassword + "): daemon.json (merged), forwarding, firewall, routes, RoCE",
		flags: func(f *pflag.FlagSet) {
			f.StringVar(&restart, "docker-restart", hostapply.ModeAuto, "after daemon.json changed: auto (systemd or init.d), none, or a shell `CMD` run as root")
			f.StringVar(&validate, "docker-validate", hostapply.ModeAuto, "check a staged daemon.json ($1) before installing it: auto (dockerd --validate), none, or a shell `CMD`")
		},
		run: func(ctx context.Context, env *applyEnv, tr *targetRun) error {
			rep, err := hostapply.Run(ctx, env.Inv, hostapply.Options{
				Dial:           env.vmSSH().Dialer(),
				Root:           env.VM.root,
				DockerRestart:  restart,
				DockerValidate: validate,
				Parallel:       env.Parallel,
				DryRun:         env.DryRun,
				Out:            tr.Out,
				Track:          tr.Track,
				Gate:           tr.Gate,
			})
			return tr.sshReport(rep, err)
		},
		applyOnly: []string{"docker-restart", "docker-validate"},
		inspect: func(ctx context.Context, env *applyEnv, tr *targetRun) ([]readiness.Result, error) {
			return hostapply.Check(ctx, env.Inv, hostapply.Options{
				Dial: env.vmSSH().Dialer(), Root: env.VM.root, Parallel: env.Parallel, Track: tr.Track,
			})
		},
	}
}

// sshReport takes an SSH engine's report into tr; the error, when only
// hosts failed, is a *partFailed.
func (tr *targetRun) sshReport(rep *remote.Report, err error) error {
	if rep != nil {
		tr.Machines = rep.Machines
	}
	if err != nil && rep != nil && rep.Failed > 0 {
		return &partFailed{msg: err.Error()}
	}
	return err
}
