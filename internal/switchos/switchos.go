// Package switchos is a switch operating system as one plug-in: all that
// rdggen does with a switch and that depends on its OS, in one value per OS
// (OS), registered once (Register) and looked up by the switch's
// inventory.SwitchOS. The output tree (internal/render), apply, check and
// bench (pkg/apply), the switch target's flags and credentials (pkg/apply's
// SwitchFlags, for the CLI) and the lab (internal/lab) dispatch on a
// switch's OS here and nowhere else.
//
// ONYX (onyx.go) and Cumulus Linux (cumulus.go) register here; what a new OS
// adds and touches is in docs/architecture.md#adding-a-switch-os.
package switchos

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// OS is one switch operating system as rdggen uses it: the registration of
// the OS. Every field is required except Traits and the optional parts
// named in each field's comment.
type OS struct {
	// OS is the OS's key in the model (inventory.SwitchOS: "onyx").
	OS inventory.SwitchOS
	// Traits, when set, makes OS known to the model as Register registers
	// it (inventory.RegisterSwitchOS: its key in a switch's mapping, its
	// port names, its version rule); nil for an OS whose row is in the
	// model's table (pkg/inventory's switchOSTraits: ONYX, Cumulus Linux).
	Traits *inventory.SwitchOSTraits

	// Files are switch sw's files of the output tree (switch/<name>.*), a
	// pure function of the inventory that never fails (pkg/onyx's
	// SwitchArtifact, pkg/cumulus's SwitchArtifacts).
	Files func(inv *inventory.Inventory, sw inventory.Switch) []artifact.File
	// Picture is what cluster.txt says of the OS's switches.
	Picture Picture

	// Engine makes the OS's engine for one run of the switch target
	// (apply, check, or bench's counters), with that run's settings.
	Engine func(s Settings) Engine
	// Words name the OS's switches and what a push sent in the switch
	// target's lines.
	Words Words
	// Checks are the checks the engine reports per switch, as `rdggen
	// check --help`, pkg/apply's SwitchChecks and docs/check.md list them.
	Checks Checks
	// BackupExt is the extension of the file the engine writes into the
	// backup directory before it changes a switch ("<switch>-<UTC
	// time><BackupExt>", internal/backup): ".cfg" for an ONYX
	// running-config.
	BackupExt string

	// CLI is the switch target's command line for the OS: its flags,
	// variables and credentials.
	CLI CLI
	// Lab is the OS's simulator in `rdggen lab`.
	Lab Lab
}

// Picture is what the review picture (cluster.txt) says of an OS's
// switches.
type Picture struct {
	// Gateway is the interface that carries the data subnet's gateway on
	// switch sw ("vlan 10", "vlan1"). PortMTU is the MTU rdggen gives the
	// data ports, bytes.
	Gateway func(inv *inventory.Inventory, sw inventory.Switch) string
	PortMTU func(inv *inventory.Inventory) int
	// PortName, optional, is port p of switch sw as the OS's configuration
	// names the interface, for a port's tooltip in cluster.svg ("ethernet
	// 1/1" on ONYX, whose CLI says `interface ethernet 1/1`); nil: the
	// model's name, sw.PortName(p) ("swp1").
	PortName func(sw inventory.Switch, p inventory.Port) string
}

// Engine is an OS's apply engine for one run: a handful of methods, each
// given the switches of its OS only.
type Engine interface {
	// Plan connects to switch sw, reads its configuration and plans it;
	// the unit's Push sends the plan and verifies it (driver.Unit). It
	// never fails: a failure is the unit's (driver.Unit.Machine's Err).
	Plan(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch) Unit
	// Check checks the switches sws, changing nothing: per switch its
	// Checks.List (and driver.CheckConnect when it cannot be read). The
	// error names the switches that could not be read.
	Check(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]readiness.Result, error)
	// Counters reads the RoCE counters of the data ports and fabric
	// uplinks of sws (each has a mgmt address), read-only; the counters
	// read are returned with the error of those that were not.
	Counters(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]PortCount, error)
}

// Unit is one switch between its plan and the run's summary.
type Unit interface {
	driver.Unit
	// Finish closes the switch's connection and says what was done.
	Finish() Outcome
}

// Outcome is one switch's part of the switch target's summary.
type Outcome struct {
	Err error
	// Empty: nothing to change; Pushed: the push started.
	Empty, Pushed bool
	// Sent counts what the push sent, in the OS's unit (Words.Sent):
	// commands on ONYX, revisions applied on Cumulus Linux.
	Sent int
}

// PortCount is one port's RoCE counters, for bench: Port as pkg/bench
// names a host's port ("switch Eth1/3": the switch's name and
// inventory.SwitchOS.ShownPortName), the PFC pause frames on the RoCE
// priority and the ECN-marked packets of its traffic class, -1 when not
// read.
type PortCount struct {
	Port       string
	Pause, ECN int64
}

// Words are how the switch target's lines speak of an OS's switches.
type Words struct {
	// What names its switches in a failure line ("2 of 3 Cumulus
	// switch(es) failed"); Reading is the read phase's verb phrase
	// ("reading the running-config of"), when only this OS takes part.
	What, Reading string
	// Sent says what n pushes sent, alone when every switch of the run
	// runs this OS: "3 command(s) sent", "3 ONYX command(s) sent" (beside
	// another OS), "1 NVUE revision(s) applied".
	Sent func(n int, alone bool) string
	// Nothing, when set, is what a run of this OS alone says when it sent
	// nothing ("0 commands sent", also in a dry run); when "", such a run
	// says Sent(0, true), and a dry run "nothing sent".
	Nothing string
}

// Checks are an OS's checks of the switch target.
type Checks struct {
	// How says how they read the switch, for `rdggen check --help`: "over
	// SSH (show commands only)".
	How string
	// List is every check the engine reports per switch, except
	// driver.CheckConnect, in the order it reports them.
	List []Check
}

// Check is one check: its name, as readiness.Result.Check carries it
// (the engine's constant), and what it reads and wants, for a person.
type Check struct {
	Name, What string
}

// Settings are what the switch target gives an OS's engine: the options
// of the run whichever OS, the two logins rdggen's switch OSes are reached
// with (an OS takes what it needs), and an OS's own settings.
// pkg/apply.SwitchOptions carries the same values (SSH, NVUE,
// CommandTimeout, Batch, OS).
type Settings struct {
	// BackupDir receives each switch's backup before a change ("" is
	// "rdg-backup"); DryRun stops after the plan; Parallel bounds the
	// switches handled at once (≥ 1).
	BackupDir string
	DryRun    bool
	Parallel  int
	// Out receives the plans and results (never nil); Track hears the
	// phases and switches in flight; Gate is asked once after the plan.
	Out   io.Writer
	Track *progress.Tracker
	Gate  applyplan.Gate
	// SSH is the login of the switches reached over SSH and the bounds of
	// their CLI.
	SSH SSH
	// API is the login of the switches reached through an HTTPS API.
	API API
	// Own holds an OS's own settings, by its key, for what SSH and API do
	// not hold (set by its CLI.Flags, or by a library caller through
	// pkg/apply's SwitchOptions.OS); the OS documents the type it takes.
	Own map[inventory.SwitchOS]any
}

// SSH is the login of the switches an engine reaches over SSH (as
// pkg/apply's SSH) and their CLI's bounds.
type SSH struct {
	// User is the login name ("" is the OS's default); Port the SSH port
	// where a switch's mgmt address has none (0 is 22); KnownHosts the
	// known_hosts file ("" is ~/.ssh/known_hosts).
	User       string
	Port       int
	KnownHosts string
	// Identities are private key files to offer; Agent offers the
	// ssh-agent's keys; Password, when set, is offered (never printed),
	// PasswordVar names where it came from.
	Identities            []string
	Agent                 bool
	Password, PasswordVar string
	// Timeout bounds each connect and handshake (0: 15 s); TimeoutFlag,
	// when set, is named in timeout errors.
	Timeout     time.Duration
	TimeoutFlag string
	// CommandTimeout bounds each CLI command (0: the engine's default);
	// CommandTimeoutFlag is named in timeout errors. Batch is the most
	// static-route commands pasted in one write (0: the engine's default).
	CommandTimeout     time.Duration
	CommandTimeoutFlag string
	Batch              int
}

// API is the login of the switches an engine reaches through an HTTPS
// API (as pkg/apply's NVUE): basic authentication, the certificate always
// verified (against CAFile, the pinned Fingerprint, or the system's roots).
type API struct {
	// User and Password (never printed; PasswordVar names where it came
	// from); Port where a switch's mgmt address has none (0: the OS's).
	User, Password, PasswordVar string
	Port                        int
	// CAFile is a PEM file of the switches' CA; Fingerprint a pinned
	// SHA-256 of their certificate instead.
	CAFile, Fingerprint string
	// RequestTimeout bounds each request; ConfirmTimeout is an apply's
	// rollback window; ApplyTimeout bounds the wait for an apply or a
	// save (0: the engine's defaults).
	RequestTimeout, ConfirmTimeout, ApplyTimeout time.Duration
}

// CLI is the switch target's command line for an OS: the flags it adds,
// the variables it reads, and what it needs on this machine. pkg/apply's
// SwitchFlags calls these for every registered OS, in the order of
// inventory.SwitchOSes.
type CLI struct {
	// Help is the OS's part of the switch target's line in `rdggen apply
	// --help`: which switches, how they are reached, its variables.
	Help string
	// Flags registers the OS's flags on fs, bound to s (optional).
	// ApplyOnly names those among them that only apply uses (check hides
	// them).
	Flags     func(fs FlagSet, s *Settings)
	ApplyOnly []string
	// CheckFlags refuses flag values that make no sense, a usage error
	// before anything is loaded (optional).
	CheckFlags func(s *Settings) error
	// Env completes s from the environment once the flags are parsed;
	// given reports whether the user gave a flag, which then wins over its
	// variable (optional).
	Env func(s *Settings, getenv func(string) string, given func(flag string) bool)
	// Credentials reports, before anything is contacted, what reaching
	// sws (the OS's switches with a mgmt address, at least one) lacks on
	// this machine (a password, a key, a readable CA file), in one error
	// said once for all of them; nil when nothing is lacking.
	Credentials func(s *Settings, sws []inventory.Switch, getenv func(string) string) error
	// CanLogIn reports whether s holds something to log in with, so that
	// bench reads the OS's counters; when it does not, bench says it does
	// not read them with Missing alone ("SSH credentials for the switches
	// (RDGGEN_SWITCH_PASSWORD, ssh-agent or --identity)") or, when no OS
	// of the cluster can log in, each OS's Needs ("RDGGEN_NVUE_PASSWORD
	// for Cumulus").
	CanLogIn       func(s *Settings, getenv func(string) string) bool
	Missing, Needs string
}

// FlagSet is what an OS's CLI.Flags registers its flags on: the methods
// that github.com/spf13/pflag's *FlagSet (rdggen's CLI) and the standard
// library's *flag.FlagSet both have, with the same signatures (each binds
// a flag called name, its default value, to *p; a back-quoted word of
// usage names the value in the help). It is an interface so that the
// registrations, and pkg/apply, which a library user links, do not depend
// on a flag package: the CLI passes its *pflag.FlagSet.
type FlagSet interface {
	StringVar(p *string, name string, value string, usage string)
	IntVar(p *int, name string, value int, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
	DurationVar(p *time.Duration, name string, value time.Duration, usage string)
}

// Lab is an OS's simulator in `rdggen lab`: a server on 127.0.0.1 that
// rdggen reaches as it reaches a switch of the OS.
type Lab struct {
	// User is the simulated switches' login user; the lab's env file sets
	// UserVar to it and PasswordVar to a password made per lab (the
	// variables the OS's CLI.Env reads).
	User, UserVar, PasswordVar string
	// CAFile, when set, is the file in the lab's directory that holds the
	// simulators' certificates (PEM, every switch's LabSwitch.CA), and
	// CAVar the variable the env file points at it.
	CAFile, CAVar string
	// LosesAnswers: its simulators take the fault lose-answer
	// (LabSwitch.LoseAnswer).
	LosesAnswers bool
	// Start starts a simulator of switch sw with the login user and
	// password.
	Start func(sw inventory.Switch, user, password string) (LabSwitch, error)
	// Serves is what a simulator at addr serves, for `rdggen lab up` and
	// `status` ("ONYX CLI over SSH on 127.0.0.1:2201"); Log the
	// supervisor's line for it, with the switch's name and release.
	Serves func(addr string) string
	Log    func(sw inventory.Switch, addr string) string
}

// LabSwitch is one running simulator of the lab.
type LabSwitch interface {
	// Addr is where it answers: 127.0.0.1:PORT.
	Addr() string
	// KnownHosts is its known_hosts line ("" when not reached over SSH);
	// CA its certificate, PEM (nil when none).
	KnownHosts() string
	CA() []byte
	// SetMTU sets port's MTU behind rdggen's back, as a person at the
	// switch would (the fault mtu SWITCH:PORT N); the text says what was
	// done, the error why not (both name the switch, and port as given).
	SetMTU(port string, mtu int) (string, error)
	// LoseAnswer makes the switch apply the next change rdggen applies
	// and drop the connection before its answer (Lab.LosesAnswers; else
	// never called).
	LoseAnswer() string
	// Server is the simulator itself (*onyxsim.Server, *nvuesim.Server):
	// on a fabric the lab runs FRR and lldpd behind it
	// (internal/testing/fabricnet's Follow, which knows the simulators it
	// can follow; behind another, nothing runs).
	Server() any
	Close()
}

var (
	mu       sync.RWMutex
	registry = map[inventory.SwitchOS]OS{}
)

// Register registers os, and its Traits with the model when set
// (inventory.RegisterSwitchOS); its error says what is missing or taken.
// Register at initialization (as onyx.go and cumulus.go do) or at the
// start of a test, before any inventory is loaded.
func Register(os OS) error {
	switch {
	case os.OS == "":
		return fmt.Errorf("switchos: an OS without its key")
	case os.Files == nil || os.Picture.Gateway == nil || os.Picture.PortMTU == nil:
		return fmt.Errorf("switchos: %s: Files and Picture are required", os.OS)
	case os.Engine == nil || os.Words.What == "" || os.Words.Reading == "" || os.Words.Sent == nil:
		return fmt.Errorf("switchos: %s: Engine and Words are required", os.OS)
	case len(os.Checks.List) == 0 || os.Checks.How == "" || os.BackupExt == "":
		return fmt.Errorf("switchos: %s: Checks and BackupExt are required", os.OS)
	case os.CLI.Help == "" || os.CLI.Credentials == nil || os.CLI.CanLogIn == nil || os.CLI.Missing == "" || os.CLI.Needs == "":
		return fmt.Errorf("switchos: %s: CLI's Help, Credentials, CanLogIn, Missing and Needs are required", os.OS)
	case os.Lab.Start == nil || os.Lab.Serves == nil || os.Lab.Log == nil || os.Lab.User == "" || os.Lab.UserVar == "" || os.Lab.PasswordVar == "":
		return fmt.Errorf("switchos: %s: Lab's Start, Serves, Log, User, UserVar and PasswordVar are required", os.OS)
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[os.OS]; dup {
		return fmt.Errorf("switchos: %s is already registered", os.OS)
	}
	if os.Traits != nil {
		if err := inventory.RegisterSwitchOS(os.OS, *os.Traits); err != nil {
			return fmt.Errorf("switchos: %w", err)
		}
	} else if !os.OS.Known() {
		return fmt.Errorf("switchos: %s is not an OS of the model: give its Traits", os.OS)
	}
	registry[os.OS] = os
	return nil
}

// mustRegister is Register for the OSes of this package, at
// initialization.
func mustRegister(os OS) {
	if err := Register(os); err != nil {
		panic(err)
	}
}

// For is the registration of os; false when os has none.
func For(os inventory.SwitchOS) (OS, bool) {
	mu.RLock()
	defer mu.RUnlock()
	r, ok := registry[os]
	return r, ok
}

// All are the registered OSes in the model's order
// (inventory.SwitchOSes).
func All() []OS {
	mu.RLock()
	defer mu.RUnlock()
	var out []OS
	for _, os := range inventory.SwitchOSes {
		if r, ok := registry[os]; ok {
			out = append(out, r)
		}
	}
	return out
}

// Of are the OSes of the inventory's switches, registered, in the model's
// order, each with its switches (inventory order); the error names a
// switch whose OS has no registration (an OS of the model that no
// package registered here).
func Of(inv *inventory.Inventory) ([]OS, error) {
	var out []OS
	for _, r := range All() {
		if len(inv.SwitchesOf(r.OS)) > 0 {
			out = append(out, r)
		}
	}
	for _, sw := range inv.Switches {
		if !slices.ContainsFunc(out, func(r OS) bool { return r.OS == sw.OS() }) {
			return out, fmt.Errorf("switch %s runs %s, which has no engine: its OS is known to the inventory, not registered with internal/switchos", sw.Name, sw.OS().Name())
		}
	}
	return out, nil
}

// Files yields the output tree's switch files of the inventory: per
// registered OS in the model's order, its switches' Files in inventory
// order. A switch whose OS has no registration has no files.
func Files(inv *inventory.Inventory) func(yield func(artifact.File) bool) {
	return func(yield func(artifact.File) bool) {
		for _, r := range All() {
			for _, sw := range inv.SwitchesOf(r.OS) {
				for _, f := range r.Files(inv, sw) {
					if !yield(f) {
						return
					}
				}
			}
		}
	}
}

// names are the switches' names, comma-separated, for messages.
func names(sws []inventory.Switch) string {
	var out []string
	for _, sw := range sws {
		out = append(out, sw.Name)
	}
	return strings.Join(out, ", ")
}
