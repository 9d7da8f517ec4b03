package main

import (
	"context"
	"os/user"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/hostapply"
	"github.com/rdggen/rdggen/internal/remote"
	"github.com/rdggen/rdggen/internal/sshconn"
)

// hostsTarget is `rdggen apply --target hosts`: Docker networking, routes,
// firewall and in-VM RoCE settings pushed to every VM over SSH
// (internal/hostapply).
func hostsTarget() *applyTarget {
	var sshUser, root, restart, validate string
	var port int
	return &applyTarget{
		name: "hosts",
		help: "the VMs over SSH (ssh-agent, --identity or RDGGEN_SSH_PASSWORD): daemon.json (merged), forwarding, firewall, routes, RoCE",
		flags: func(f *pflag.FlagSet) {
			f.StringVar(&sshUser, "ssh-user", "", "SSH login `USER` on the VMs (default: $USER); privileged commands use sudo -n unless root")
			f.IntVar(&port, "hosts-ssh-port", 22, "SSH `PORT` of the VMs whose mgmt has no :port")
			f.StringVar(&root, "host-root", "", "`DIR` prefixed to every file path on the VMs, {host} = the host's name (staging and tests);\n"+
				"live state (sysctl, routes, iptables) is unaffected, and auto restart/validate are off")
			f.StringVar(&restart, "docker-restart", hostapply.ModeAuto, "after daemon.json changed: auto (systemd or init.d), none, or a shell `CMD` run as root")
			f.StringVar(&validate, "docker-validate", hostapply.ModeAuto, "check a staged daemon.json ($1) before installing it: auto (dockerd --validate), none, or a shell `CMD`")
		},
		run: func(ctx context.Context, env *applyEnv) error {
			if sshUser == "" {
				sshUser = env.Getenv("USER")
			}
			if sshUser == "" {
				if u, err := user.Current(); err == nil {
					sshUser = u.Username
				}
			}
			kh := env.KnownHosts
			if kh == "" {
				kh = sshconn.DefaultKnownHosts()
			}
			ssh := remote.SSH{
				User: sshUser, Port: port, KnownHosts: kh,
				Identities: env.Identities,
				Password:   env.Getenv("RDGGEN_SSH_PASSWORD"),
			}
			_, err := hostapply.Run(ctx, env.Inv, hostapply.Options{
				Dial:           ssh.Dialer(),
				Root:           root,
				DockerRestart:  restart,
				DockerValidate: validate,
				Parallel:       env.Parallel,
				DryRun:         env.DryRun,
				Out:            env.Stdout,
			})
			return err
		},
	}
}
