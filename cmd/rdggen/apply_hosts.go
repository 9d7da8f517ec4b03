package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// hostsTarget is `rdggen apply --target hosts`: Docker networking, routes,
// firewall, address translation and in-VM RoCE settings pushed to every VM
// over SSH (apply.Hosts).
func hostsTarget() *applyTarget {
	var restart, validate, load string
	options := func(env *applyEnv, tr *targetRun) apply.HostsOptions {
		return apply.HostsOptions{Common: tr.common(env), SSH: env.vmSSH(), Root: env.VM.root, DockerRestart: restart, DockerValidate: validate, ModuleLoad: load}
	}
	return &applyTarget{
		name: "hosts",
		help: "the VMs over SSH (ssh-agent, --identity or " + envSSHPassword + "): daemon.json (merged), forwarding, firewall, routes, RoCE, nvidia-peermem",
		flags: func(f *pflag.FlagSet) {
			f.StringVar(&restart, "docker-restart", apply.ModeAuto, "after daemon.json changed: auto (systemd or init.d), none, or a shell `CMD` run as root")
			f.StringVar(&validate, "docker-validate", apply.ModeAuto, "check a staged daemon.json ($1) before installing it: auto (dockerd --validate), none, or a shell `CMD`")
			f.StringVar(&load, "module-load", apply.ModeAuto, "load nvidia-peermem ($1) where it is installed, not loaded: auto (modprobe), none, or a shell `CMD` run as root")
		},
		prepare: vmCredentials,
		run: func(ctx context.Context, env *applyEnv, tr *targetRun) error {
			res, err := apply.Hosts(ctx, env.Inv, options(env, tr))
			return tr.result(res, err)
		},
		applyOnly: []string{"docker-restart", "docker-validate", "module-load"},
		inspect: func(ctx context.Context, env *applyEnv, tr *targetRun) ([]readiness.Result, error) {
			return apply.CheckHosts(ctx, env.Inv, options(env, tr))
		},
	}
}
