package main

import (
	"os/user"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/flagcheck"
	"github.com/rdggen/rdggen/pkg/apply"
)

// envSSHPassword is the VMs' SSH password variable (never printed).
const envSSHPassword = "RDGGEN_SSH_PASSWORD"

// vmFlags are how rdggen reaches the VMs over SSH: the hosts and workers
// targets of apply and `rdggen run` share them.
type vmFlags struct {
	user string
	port int
	root string
}

// register adds the flags; withRoot adds --host-root (the apply targets).
func (v *vmFlags) register(f *pflag.FlagSet, withRoot bool) {
	f.StringVar(&v.user, "ssh-user", "", "SSH login `USER` on the VMs (default: $USER); privileged commands use sudo -n unless root")
	f.IntVar(&v.port, "hosts-ssh-port", 22, "SSH `PORT` of the VMs whose mgmt has no :port")
	if !withRoot {
		return
	}
	f.StringVar(&v.root, "host-root", "", "`DIR` prefixed to every file path on the VMs, {host} = the host's name (staging, tests, rdggen lab: $"+envHostRoot+");\n"+
		"live state (sysctl, routes, iptables, containers) is unaffected, and auto restart/validate are off")
}

// check refuses a port outside 1–65535.
func (v *vmFlags) check() error { return flagcheck.Port("--hosts-ssh-port", v.port) }

// ssh is the VMs' SSH settings: the login user (--ssh-user, $USER, the
// current user), the known_hosts and identities common to all SSH targets,
// and the password from RDGGEN_SSH_PASSWORD.
func (v *vmFlags) ssh(knownHosts string, identities []string, getenv func(string) string) apply.SSH {
	u := v.user
	if u == "" {
		u = getenv("USER")
	}
	if u == "" {
		if cu, err := user.Current(); err == nil {
			u = cu.Username
		}
	}
	if knownHosts == "" {
		knownHosts = apply.DefaultKnownHosts()
	}
	return apply.SSH{User: u, Port: v.port, KnownHosts: knownHosts, Identities: identities,
		Password: getenv(envSSHPassword), PasswordVar: envSSHPassword}
}
