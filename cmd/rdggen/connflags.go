package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/flagcheck"
	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// Defaults of --known-hosts and --host-root when set (rdggen lab's env
// file sets them).
const (
	envKnownHosts = "RDGGEN_KNOWN_HOSTS"
	envHostRoot   = "RDGGEN_HOST_ROOT"
)

// connFlags are the flags apply and check share: how many machines at
// once, how to reach them over SSH, and every target's own flags.
type connFlags struct {
	parallel   *int
	knownHosts *string
	identities *[]string
	sshTimeout *time.Duration
	vm         *vmFlags
	targets    []*applyTarget
	// checking: the flags are check's (applyEnv.Checking).
	checking bool
	// knownHostsFrom names where knownHosts came from, for messages:
	// "--known-hosts", "$RDGGEN_KNOWN_HOSTS", or "" (the default file).
	knownHostsFrom string
}

// registerConnFlags adds the shared flags and the targets' flags to fs;
// parallelHelp says what --parallel bounds.
func registerConnFlags(fs *pflag.FlagSet, targets []*applyTarget, parallelHelp string) *connFlags {
	// who is what the SSH flags reach: the VMs, and the switches when a
	// target reaches them (run reaches only the VMs and their workers).
	who := "VMs"
	for _, t := range targets {
		if t.name == "switch" {
			who = "switches and VMs"
		}
	}
	c := &connFlags{
		parallel:   fs.Int("parallel", 8, parallelHelp),
		knownHosts: fs.String("known-hosts", "", "known_hosts `FILE` that SSH host keys must match, "+who+" (default $"+envKnownHosts+", else ~/.ssh/known_hosts)"),
		identities: fs.StringArray("identity", nil, "private key `FILE` for SSH to "+who+" (repeatable); ssh-agent keys are offered too"),
		sshTimeout: fs.Duration("ssh-timeout", 15*time.Second, "bound on each SSH connect and handshake, "+who+" (> 0)"),
		vm:         &vmFlags{},
		targets:    targets,
	}
	c.vm.register(fs, true)
	for _, t := range targets {
		t.flags(fs)
	}
	return c
}

// check refuses flag values that make no sense (usage errors, found before
// anything is loaded or contacted).
func (c *connFlags) check() []error {
	errs := []error{c.vm.check(), flagcheck.Positive("--ssh-timeout", *c.sshTimeout)}
	if *c.parallel < 1 {
		errs = append(errs, errors.New("--parallel must be at least 1"))
	}
	for _, t := range c.targets {
		if t.check != nil {
			errs = append(errs, t.check())
		}
	}
	return errs
}

// usageErrors prints each of errs as its own line; ok is false when there
// was one.
func usageErrors(stderr io.Writer, errs []error) (int, bool) {
	err := errors.Join(errs...)
	if err == nil {
		return exitOK, true
	}
	for _, l := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(stderr, "rdggen: %s\n", l)
	}
	return exitUsage, false
}

// pickTargets parses --target.
func pickTargets(fs *pflag.FlagSet, all []*applyTarget, spec string, stderr io.Writer) ([]*applyTarget, int, bool) {
	if fs.Changed("target") && strings.TrimSpace(spec) == "" {
		fmt.Fprintln(stderr, "rdggen: --target is empty (an unset variable?); name the targets, or leave --target out for all of them")
		return nil, exitUsage, false
	}
	targets, err := selectTargets(all, spec)
	if err != nil {
		fmt.Fprintf(stderr, "rdggen: %v\n", err)
		return nil, exitUsage, false
	}
	return targets, exitOK, true
}

// identityErrors are the --identity files that cannot be read: missing,
// or not a regular file (a named pipe is refused, not waited on;
// userfile.Open).
func (c *connFlags) identityErrors() []error {
	var errs []error
	for _, id := range *c.identities {
		f, err := userfile.Open(id, userfile.Limit)
		if err != nil {
			errs = append(errs, fmt.Errorf("--identity: %w", err))
			continue
		}
		f.Close()
	}
	return errs
}

// knownHostsError is the missing known_hosts file when a target connects
// over SSH (every host key is checked against it), else nil.
func (c *connFlags) knownHostsError(targets []*applyTarget, inv *inventory.Inventory) error {
	if !usesSSH(targets, inv) {
		return nil
	}
	kh := *c.knownHosts
	if kh == "" {
		kh = apply.DefaultKnownHosts()
	}
	// Opened as Dial opens it (a regular file; a named pipe is refused, not
	// waited on: userfile.Open), and named by where it came from.
	f, err := userfile.Open(kh, userfile.Limit)
	if err != nil {
		err = &apply.KnownHostsError{File: kh, Err: err}
		if c.knownHostsFrom != "" {
			err = fmt.Errorf("%s: %w", c.knownHostsFrom, err)
		}
		return err
	}
	f.Close()
	return nil
}

// env is what every target gets.
func (c *connFlags) env(inv *inventory.Inventory, dryRun bool, getenv func(string) string) *applyEnv {
	return &applyEnv{Inv: inv, DryRun: dryRun, Parallel: *c.parallel, KnownHosts: *c.knownHosts, Identities: *c.identities,
		SSHTimeout: *c.sshTimeout, VM: c.vm, Getenv: getenv, Checking: c.checking}
}

// load reads the identities and the inventory, checks the known_hosts
// file the targets need and what each target prepares (credentials, keys),
// then returns the targets' environment; ok is false (with the exit
// status) when one of those failed. Every missing prerequisite is said in
// one round, each once, before anything is contacted: an unreadable
// --identity, a target the inventory does not allow, the known_hosts file,
// and each target's credentials and keys.
func (c *connFlags) load(ctx context.Context, fs *pflag.FlagSet, file string, targets []*applyTarget, dryRun bool,
	getenv func(string) string, stderr io.Writer) (*applyEnv, int, bool) {
	if fs.Changed("known-hosts") {
		c.knownHostsFrom = "--known-hosts"
	} else if v := getenv(envKnownHosts); v != "" {
		*c.knownHosts, c.knownHostsFrom = v, "$"+envKnownHosts
	}
	if fs.Lookup("host-root") != nil && !fs.Changed("host-root") {
		if v := getenv(envHostRoot); v != "" {
			c.vm.root = v
		}
	}
	var errs []error
	errs = append(errs, c.identityErrors()...)
	inv, code, ok := load(ctx, fs, file, stderr)
	if !ok {
		printPrerequisites(stderr, errs, false)
		return nil, code, false
	}
	for _, t := range targets {
		if t.accept != nil {
			errs = append(errs, t.accept(inv))
		}
	}
	errs = append(errs, c.knownHostsError(targets, inv))
	env := c.env(inv, dryRun, getenv)
	for _, t := range targets {
		if t.prepare != nil {
			errs = append(errs, t.prepare(env))
		}
	}
	if printPrerequisites(stderr, errs, true) {
		return nil, exitUsage, false
	}
	return env, exitOK, true
}

// printPrerequisites prints each distinct error of errs once, one line
// each (a prepare may return several, joined; the hosts and workers
// targets share the VMs' credentials), and, when there was one and
// sayNothingContacted is set, that nothing was contacted. It reports whether there
// was one.
func printPrerequisites(stderr io.Writer, errs []error, sayNothingContacted bool) bool {
	var flat []error
	seen := map[string]bool{}
	var add func(err error)
	add = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				add(e)
			}
			return
		}
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			flat = append(flat, err)
		}
	}
	for _, err := range errs {
		add(err)
	}
	if len(flat) == 0 {
		return false
	}
	for _, err := range flat {
		fmt.Fprintf(stderr, "rdggen: %s\n", quote.Line(err.Error()))
	}
	if sayNothingContacted {
		fmt.Fprintln(stderr, "rdggen: nothing was contacted")
	}
	return true
}

// sshCredentials checks, without connecting, that there is something to log
// in with over SSH: a key of the ssh-agent at $SSH_AUTH_SOCK, an --identity
// file that parses, or the password variable passwordVar. who names the
// machines ("the VMs").
func sshCredentials(env *applyEnv, who, passwordVar string) error {
	err := apply.SSH{Agent: true, Identities: env.Identities, Password: env.Getenv(passwordVar), PasswordVar: passwordVar}.CheckCredentials()
	if err != nil {
		return fmt.Errorf("SSH to %s: %w", who, err)
	}
	return nil
}

// vmCredentials is sshCredentials for the VMs (the hosts and workers
// targets).
func vmCredentials(env *applyEnv) error {
	return sshCredentials(env, "the VMs (targets hosts, workers)", envSSHPassword)
}

// textOutput is where apply and check write their text and whether it is
// a terminal for the live display: stdout, or stderr when stdout carries
// the JSON document.
func textOutput(json bool, stdout, stderr io.Writer) (io.Writer, bool) {
	switch {
	case json && console.StderrTerminal:
		return console.Stderr, true
	case json:
		return stderr, false
	case console.StdoutTerminal:
		return console.Stdout, true
	}
	return stdout, false
}
