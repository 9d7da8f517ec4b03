package main

import (
	"context"
	"os/user"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/hostapply"
	"github.com/rdggen/rdggen/internal/sshconn"
)

// hostsTarget is `rdggen apply --target hosts`: Docker networking, routes,
// firewall and in-VM RoCE settings pushed to every VM over SSH
// (internal/hostapply).
func hostsTarget() *applyTarget {
	var fs *pflag.FlagSet
	var root, restart, validate string
	var port int
	return &applyTarget{
		name: "hosts",
		help: "the VMs over SSH: daemon.json (merged), forwarding, firewall, routes, RoCE",
		flags: func(f *pflag.FlagSet) {
			fs = f
			hostsSharedString(f, "ssh-user", "", "SSH login `USER` on the VMs (default: $USER); privileged commands use sudo -n unless root")
			hostsSharedStringArray(f, "identity", "private key `FILE` for SSH (repeatable); keys in ssh-agent ($SSH_AUTH_SOCK) are used too")
			hostsSharedString(f, "known-hosts", "", "known_hosts `FILE` that host keys are verified against (default ~/.ssh/known_hosts)")
			f.IntVar(&port, "hosts-ssh-port", 22, "SSH `PORT` of the VMs' management addresses")
			f.StringVar(&root, "host-root", "", "`DIR` prefixed to every file path on the VMs, {host} = the host's name (staging and tests);\n"+
				"live state (sysctl, routes, iptables) is unaffected, and auto restart/validate are off")
			f.StringVar(&restart, "docker-restart", hostapply.ModeAuto, "after daemon.json changed: auto (systemd or init.d), none, or a shell `CMD` run as root")
			f.StringVar(&validate, "docker-validate", hostapply.ModeAuto, "check a staged daemon.json ($1) before installing it: auto (dockerd --validate), none, or a shell `CMD`")
		},
		run: func(ctx context.Context, env *applyEnv) error {
			sshUser := hostsStringFlag(fs, "ssh-user")
			if sshUser == "" {
				sshUser = env.Getenv("USER")
			}
			if sshUser == "" {
				if u, err := user.Current(); err == nil {
					sshUser = u.Username
				}
			}
			kh := hostsStringFlag(fs, "known-hosts")
			if kh == "" {
				kh = sshconn.DefaultKnownHosts()
			}
			ssh := hostapply.SSH{
				User: sshUser, Port: port, KnownHosts: kh,
				Identities: hostsStringArrayFlag(fs, "identity"),
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

// hostsSharedString defines a string flag unless another target already has; the
// SSH flags are common to every target that uses SSH.
func hostsSharedString(fs *pflag.FlagSet, name, def, usage string) {
	if fs.Lookup(name) == nil {
		fs.String(name, def, usage)
	}
}

func hostsSharedStringArray(fs *pflag.FlagSet, name, usage string) {
	if fs.Lookup(name) == nil {
		fs.StringArray(name, nil, usage)
	}
}

// hostsStringFlag reads a flag by name, whichever target defined it.
func hostsStringFlag(fs *pflag.FlagSet, name string) string {
	if f := fs.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

func hostsStringArrayFlag(fs *pflag.FlagSet, name string) []string {
	f := fs.Lookup(name)
	if f == nil {
		return nil
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	if s := f.Value.String(); s != "" {
		return []string{s}
	}
	return nil
}
