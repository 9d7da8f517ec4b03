package apply

import (
	"errors"
	"strings"
	"time"

	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// SwitchFlags are the switch target's command line as `rdggen apply
// --target switch` takes it: --backup-dir and each switch OS's own flags
// and variables (ONYX: --switch-user, RDGGEN_SWITCH_PASSWORD, …; Cumulus
// Linux: --nvue-user, RDGGEN_NVUE_PASSWORD, …), as every registered OS
// declares them (internal/switchos). A program with a command line of its
// own can offer the same: NewSwitchFlags before parsing, Check after,
// then Credentials and Options.
type SwitchFlags struct {
	fs FlagSet
	s  switchos.Settings
}

// FlagSet is the command line NewSwitchFlags registers the switch target's
// flags on. Its Var methods are those of github.com/spf13/pflag's *FlagSet
// and of the standard library's *flag.FlagSet (each binds a flag called
// name, its default value, to *p; a back-quoted word of usage names the
// value in the help); Changed reports whether the user gave the flag name,
// which then wins over its variable (RDGGEN_SWITCH_USER beside
// --switch-user). A *pflag.FlagSet, as rdggen's CLI passes, is a FlagSet;
// a *flag.FlagSet is one with Changed added (true when fs.Visit visits the
// flag, after Parse). It is an interface so that this package does not
// depend on a flag package.
type FlagSet interface {
	StringVar(p *string, name string, value string, usage string)
	IntVar(p *int, name string, value int, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
	DurationVar(p *time.Duration, name string, value time.Duration, usage string)
	Changed(name string) bool
}

// SwitchEnv is what the switch target takes from the rest of the command
// line and from the environment.
type SwitchEnv struct {
	// Getenv reads a variable (os.Getenv).
	Getenv func(string) string
	// KnownHosts, Identities and SSHTimeout are the SSH settings every SSH
	// target shares ("" is ~/.ssh/known_hosts; 0 is 15 s); SSHTimeoutFlag,
	// when set, is named in timeout errors.
	KnownHosts     string
	Identities     []string
	SSHTimeout     time.Duration
	SSHTimeoutFlag string
}

// NewSwitchFlags registers the switch target's flags on fs: --backup-dir,
// then each switch OS's, in the order of inventory.SwitchOSes. It panics
// when fs already has a flag of the same name, as pflag and flag do.
func NewSwitchFlags(fs FlagSet) *SwitchFlags {
	f := &SwitchFlags{fs: fs}
	fs.StringVar(&f.s.BackupDir, "backup-dir", "rdg-backup", "`DIR` for each switch's running-config, saved before any change (mode 0600)")
	for _, os := range switchos.All() {
		if os.CLI.Flags != nil {
			os.CLI.Flags(fs, &f.s)
		}
	}
	return f
}

// SwitchHelp is the switch target's line in `rdggen apply --help`: each
// switch OS's switches, how they are reached and their variables.
func SwitchHelp() string {
	var parts []string
	for _, os := range switchos.All() {
		parts = append(parts, os.CLI.Help)
	}
	return strings.Join(parts, ", ") + ": lossless RoCE config, only what differs"
}

// SwitchApplyOnly names the switch target's flags that only apply uses
// (check reads, so it never backs up, pastes or confirms).
func SwitchApplyOnly() []string {
	out := []string{"backup-dir"}
	for _, os := range switchos.All() {
		out = append(out, os.CLI.ApplyOnly...)
	}
	return out
}

// Check refuses flag values that make no sense, each OS's: a usage error,
// before anything is loaded or contacted.
func (f *SwitchFlags) Check() error {
	var errs []error
	for _, os := range switchos.All() {
		if os.CLI.CheckFlags != nil {
			errs = append(errs, os.CLI.CheckFlags(&f.s))
		}
	}
	return errors.Join(errs...)
}

// settings are the flags completed from env: the shared SSH settings (the
// ssh-agent's keys always offered, as to every SSH target of rdggen's
// CLI), then each OS's variables (a flag the user gave wins).
func (f *SwitchFlags) settings(env SwitchEnv) switchos.Settings {
	s := f.s
	s.SSH.KnownHosts, s.SSH.Identities, s.SSH.Agent = env.KnownHosts, env.Identities, true
	s.SSH.Timeout, s.SSH.TimeoutFlag = env.SSHTimeout, env.SSHTimeoutFlag
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	for _, os := range switchos.All() {
		if os.CLI.Env != nil {
			os.CLI.Env(&s, getenv, f.fs.Changed)
		}
	}
	return s
}

// Options are the SwitchOptions the flags and env say; c gives DryRun,
// Parallel, Confirm, Out and Events.
func (f *SwitchFlags) Options(env SwitchEnv, c Common) SwitchOptions {
	s := f.settings(env)
	return SwitchOptions{
		Common: c,
		SSH: SSH{User: s.SSH.User, Port: s.SSH.Port, KnownHosts: s.SSH.KnownHosts, Identities: s.SSH.Identities, Agent: s.SSH.Agent,
			Password: s.SSH.Password, PasswordVar: s.SSH.PasswordVar, Timeout: s.SSH.Timeout, TimeoutFlag: s.SSH.TimeoutFlag},
		NVUE:               NVUE(s.API),
		BackupDir:          s.BackupDir,
		CommandTimeout:     s.SSH.CommandTimeout,
		CommandTimeoutFlag: s.SSH.CommandTimeoutFlag,
		Batch:              s.SSH.Batch,
		OS:                 s.Own,
	}
}

// withMgmt are the inventory's switches of os that have a mgmt address.
func withMgmt(inv *inventory.Inventory, os inventory.SwitchOS) []inventory.Switch {
	var out []inventory.Switch
	for _, sw := range inv.SwitchesOf(os) {
		if sw.Mgmt != "" {
			out = append(out, sw)
		}
	}
	return out
}

// Credentials reports, before anything is contacted, what reaching the
// inventory's switches with a mgmt address lacks on this machine, each
// OS's once (an ONYX switch: something to log in over SSH with; a Cumulus
// switch: the NVUE password, a readable $RDGGEN_NVUE_CA), or that a
// switch's OS has no engine; nil when nothing is lacking.
func (f *SwitchFlags) Credentials(inv *inventory.Inventory, env SwitchEnv) error {
	s := f.settings(env)
	oses, err := switchos.Of(inv)
	errs := []error{err}
	for _, os := range oses {
		if sws := withMgmt(inv, os.OS); len(sws) > 0 {
			errs = append(errs, os.CLI.Credentials(&s, sws, env.Getenv))
		}
	}
	return errors.Join(errs...)
}

// CountersMissing says why bench reads no switch's counters when no OS of
// the inventory's switches with a mgmt address has something to log in
// with: that OS's missing credentials ("SSH credentials for the switches
// (…)") or, with several, what each needs ("no credentials for the
// switches (… for ONYX; … for Cumulus)"); "" when some OS has (bench then
// reads those it can).
func (f *SwitchFlags) CountersMissing(inv *inventory.Inventory, env SwitchEnv) string {
	s := f.settings(env)
	oses, _ := switchos.Of(inv)
	var needs []string
	missing := ""
	for _, os := range oses {
		if len(withMgmt(inv, os.OS)) == 0 {
			continue
		}
		if os.CLI.CanLogIn(&s, env.Getenv) {
			return ""
		}
		needs, missing = append(needs, os.CLI.Needs), os.CLI.Missing
	}
	switch len(needs) {
	case 0:
		return ""
	case 1:
		return missing
	}
	return "credentials for the switches (" + strings.Join(needs, "; ") + ")"
}
