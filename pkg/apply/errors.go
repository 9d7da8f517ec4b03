package apply

import (
	"errors"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/engines/nvueapply"
	"github.com/rdggen/rdggen/internal/engines/onyxapply"
	"github.com/rdggen/rdggen/internal/transport"
	"github.com/rdggen/rdggen/internal/transport/sshcli"
	"github.com/rdggen/rdggen/internal/transport/sshconn"
	"github.com/rdggen/rdggen/pkg/applyplan"
)

// The errors a program can act on. Every function of this package that
// fails because machines failed returns a *MachinesError; errors.As finds
// through it, per machine, the reason below (and errors.Is finds
// ErrMachines):
//
//	var hk *apply.HostKeyError
//	if errors.As(err, &hk) { … the key in known_hosts is missing or changed … }
//	var auth *apply.AuthError
//	if errors.As(err, &auth) { … the login was refused … }
//
// Each also stays in its machine's applyplan.Machine.Err.
type (
	// HostKeyError: the machine's SSH host key is not in known_hosts, or
	// differs from the one there (rdggen never trusts on first use).
	// Nothing was sent.
	HostKeyError = sshconn.HostKeyError
	// KnownHostsError: the known_hosts file cannot be read. Nothing was
	// sent.
	KnownHostsError = sshconn.KnownHostsError
	// AuthError: the machine refused every SSH credential offered (the
	// offered kinds are named, never the secrets). Nothing was sent.
	AuthError = sshconn.AuthError
	// UnreachableError: the machine could not be reached, over SSH (an
	// ONYX switch, a VM) or through the NVUE API (a Cumulus Linux switch)
	// alike: the connection was refused, had no route, or was not
	// answered within the timeout (no SSH banner, no TLS handshake).
	// Nothing was sent.
	UnreachableError = transport.UnreachableError
	// DeviceError: an ONYX switch refused a command (its `%` message), or
	// the command asked a question the session declined.
	DeviceError = sshcli.DeviceError
	// PushError: an ONYX push stopped at a refused command; it says which
	// commands were sent and took effect (applied, unsaved) and which were
	// refused. Unwrap gives the *DeviceError.
	PushError = onyxapply.PushError
	// NVUEError: a Cumulus Linux switch's NVUE API answered other than 2xx
	// (Status 401: the user or password was refused; 4xx: the request or
	// the configuration was refused).
	NVUEError = nvueapply.APIError
	// CertificateError: a Cumulus Linux switch presented a certificate
	// other than the pinned one (--nvue-fingerprint). Nothing was sent.
	CertificateError = nvueapply.PinError
	// PanicError: a target, a machine's goroutine or the confirmation
	// panicked (a bug, here or in a function given in the options): the
	// value and the stack where it happened. It is that target's error in
	// ApplyAll and CheckAll, never the end of the caller's process.
	PanicError = driver.PanicError
)

// ErrNoInventory is the error of a call given a nil inventory.
var ErrNoInventory = errors.New("no inventory: give a loaded or built *inventory.Inventory (inventory.LoadFile, inventory.Build)")

// ErrMachines is the error of a target whose machines failed in part (each
// is in Result.Machines with its own error); errors.Is finds it.
var ErrMachines = errors.New("some machines failed")

// MachineError is one machine's failure within a target's run. Its text
// names the machine once, "switch swx-mld-1-2: " and the machine's own
// error, which does not name it (the engines leave that to this layer).
type MachineError struct {
	// Target is the --target that handles the machine (switch, esxi,
	// hosts, workers); Machine its name in the inventory.
	Target  applyplan.TargetName
	Machine string
	// Err is why it failed.
	Err error
}

func (e *MachineError) Error() string {
	return e.Target.String() + " " + e.Machine + ": " + e.Err.Error()
}

func (e *MachineError) Unwrap() error { return e.Err }

// MachinesError is the error of a target some of whose machines failed:
// its text is the engine's one line naming them, Machines each failure.
// errors.Is(err, ErrMachines) holds; errors.As finds each machine's own
// error type through it.
type MachinesError struct {
	Target   applyplan.TargetName
	Machines []*MachineError
	msg      string
}

func (e *MachinesError) Error() string { return ErrMachines.Error() + ": " + e.msg }

// Detail is the engines' line that names the failed machines, without
// ErrMachines' words: "1 of 2 switch(es) failed: swx-mld-1-2".
func (e *MachinesError) Detail() string { return e.msg }

// Is reports ErrMachines.
func (e *MachinesError) Is(target error) bool { return target == ErrMachines }

// Unwrap gives each machine's error.
func (e *MachinesError) Unwrap() []error {
	out := make([]error, len(e.Machines))
	for i, m := range e.Machines {
		out[i] = m
	}
	return out
}

// machinesErr is the error of a target whose engines reported msg, with
// the failed machines' own errors (machines without one keep their text).
func machinesErr(target applyplan.TargetName, machines []applyplan.Machine, msgs ...string) error {
	e := &MachinesError{Target: target, msg: strings.Join(msgs, "; ")}
	for _, m := range machines {
		if m.Status != applyplan.Failed && m.Status != applyplan.Interrupted && m.Status != applyplan.Blocked {
			continue
		}
		err := m.Err
		if err == nil {
			if m.Error == "" {
				continue
			}
			err = errors.New(m.Error)
		}
		e.Machines = append(e.Machines, &MachineError{Target: m.Target, Machine: m.Name, Err: err})
	}
	return e
}
