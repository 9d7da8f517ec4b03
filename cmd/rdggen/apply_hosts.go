package main

import (
	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/apply"
)

// Defaults of --docker-restart and --docker-validate when set (rdggen
// lab's env file sets them for its namespace hosts).
const (
	envDockerRestart  = "RDGGEN_DOCKER_RESTART"
	envDockerValidate = "RDGGEN_DOCKER_VALIDATE"
)

// hostsTarget is `rdggen apply --target hosts`: Docker networking, routes,
// firewall, address translation and in-VM RoCE settings pushed to every VM
// over SSH (apply.Hosts).
func hostsTarget() *applyTarget {
	var restart, validate, load string
	var fs *pflag.FlagSet
	options := func(env *applyEnv, tr *targetRun) apply.HostsOptions {
		r, v := restart, validate
		if fs != nil && !fs.Changed("docker-restart") && env.Getenv(envDockerRestart) != "" {
			r = env.Getenv(envDockerRestart)
		}
		if fs != nil && !fs.Changed("docker-validate") && env.Getenv(envDockerValidate) != "" {
			v = env.Getenv(envDockerValidate)
		}
		return apply.HostsOptions{Common: tr.common(env), SSH: env.vmSSH(), Root: env.VM.root, DockerRestart: r, DockerValidate: v, ModuleLoad: load}
	}
	return &applyTarget{
		name: "hosts",
		help: "the VMs over SSH (ssh-agent, --identity or " + envSSHPassword + "): daemon.json (merged), forwarding, firewall, routes, RoCE, nvidia-peermem",
		flags: func(f *pflag.FlagSet) {
			fs = f
			f.StringVar(&restart, "docker-restart", apply.ModeAuto, "after daemon.json changed: auto (systemd or init.d), none, or a shell `CMD` run as root (default $"+envDockerRestart+" when set)")
			f.StringVar(&validate, "docker-validate", apply.ModeAuto, "check a staged daemon.json ($1) before installing it: auto (dockerd --validate), none, or a shell `CMD` (default $"+envDockerValidate+" when set)")
			f.StringVar(&load, "module-load", apply.ModeAuto, "load nvidia-peermem ($1) where it is installed, not loaded: auto (modprobe), none, or a shell `CMD` run as root")
		},
		prepare: vmCredentials,
		target: func(env *applyEnv, tr *targetRun) (apply.Target, error) {
			return options(env, tr), nil
		},
		applyOnly: []string{"docker-restart", "docker-validate", "module-load"},
	}
}
