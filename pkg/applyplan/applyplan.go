// Package applyplan is the machine-readable form of `rdggen apply`: the plan
// of a dry run and the result of an apply, one [Machine] per switch, ESXi
// host, VM or worker, each with its typed [Change]s. `rdggen apply --output
// json` writes one [Document]; docs/json.md describes the schema for readers
// that are not written in Go.
//
// The schema is versioned by [SchemaApply]: fields are only ever added under
// the same version; a renamed or removed field, or a changed meaning, gets a
// new version.
package applyplan

import (
	"context"
	"encoding/json"
	"io"
)

// Schema identifiers, the "schema" field of each document.
const (
	// SchemaApply marks a plan or result of `rdggen apply`.
	SchemaApply = "rdggen.apply/v1"
	// SchemaValidate marks the findings of `rdggen validate`.
	SchemaValidate = "rdggen.validate/v1"
)

// Op is what a change does to its item.
type Op string

// The operations.
const (
	// Add creates an item that is not there (a route, a file, a device).
	Add Op = "add"
	// Update changes an item's value (From → To).
	Update Op = "update"
	// Remove deletes an item rdggen manages that the inventory no longer has.
	Remove Op = "remove"
	// Run runs an action that has no state of its own (restart Docker,
	// systemd daemon-reload, start a container).
	Run Op = "run"
)

// Change is one planned change on one machine.
type Change struct {
	Op Op `json:"op"`
	// Item names what changes in the machine's own terms: "route
	// 172.17.2.0/24", "interface ethernet 1/1 mtu", "pciPassthru.64bitMMIO".
	Item string `json:"item"`
	// From is the current value, "" when the item is absent or has none.
	From string `json:"from,omitempty"`
	// To is the wanted value, "" for a removal or an action.
	To string `json:"to,omitempty"`
	// Text is the line a person reads in the text plan.
	Text string `json:"text"`
}

// Status is where a machine stands.
type Status string

// The statuses. A plan holds UpToDate, Planned, Blocked and Failed; a result
// any of them.
const (
	// UpToDate: the machine matches the inventory; nothing to do.
	UpToDate Status = "up-to-date"
	// Planned: changes are planned and were not applied (a dry run, a
	// refused confirmation, or an apply interrupted before this machine).
	Planned Status = "planned"
	// Blocked: changes are planned but wait on another machine's problem
	// (BlockedBy), e.g. a VM whose ESXi host cannot enable SR-IOV.
	Blocked Status = "blocked"
	// Changed: the changes were applied (and verified where the engine
	// verifies).
	Changed Status = "changed"
	// Failed: planning or applying failed (Error); on an apply failure some
	// changes may have been made.
	Failed Status = "failed"
	// Interrupted: the apply was cancelled while changing this machine; some
	// changes may have been made. Run apply again to see what is left.
	Interrupted Status = "interrupted"
)

// StatusOf is a machine's status after an engine's run, in this order:
// Interrupted when the run was cancelled while changing it, Failed when
// failed, UpToDate when nothing was to do, Changed when done (the changes
// applied, verified and, where the engine saves, saved), else Planned.
func StatusOf(interrupted, failed, upToDate, done bool) Status {
	switch {
	case interrupted:
		return Interrupted
	case failed:
		return Failed
	case upToDate:
		return UpToDate
	case done:
		return Changed
	}
	return Planned
}

// Kinds of machine.
const (
	KindSwitch   = "switch"    // a switch: ONYX over SSH, Cumulus Linux through NVUE
	KindESXiHost = "esxi-host" // an ESXi host, through vCenter
	KindVM       = "vm"        // a VM's settings, through vCenter
	KindHost     = "host"      // a VM's OS (Docker, routes, RoCE), over SSH
	KindWorker   = "worker"    // a VM's Horovod worker container, over SSH
)

// TargetName is a `--target` of apply and check.
type TargetName string

// String is the target as `--target` names it.
func (t TargetName) String() string { return string(t) }

// The targets, as `--target` names them, in the order apply runs them.
const (
	TargetSwitch  TargetName = "switch"
	TargetESXi    TargetName = "esxi"
	TargetHosts   TargetName = "hosts"
	TargetWorkers TargetName = "workers"
)

// Targets are all the targets, in the order apply runs them.
var Targets = []TargetName{TargetSwitch, TargetESXi, TargetHosts, TargetWorkers}

// Machine is one machine of one target.
type Machine struct {
	// Target is the `--target` that handles it: switch, esxi, hosts, workers.
	Target TargetName `json:"target"`
	// Name is the machine's name in the inventory (a VM's name for KindVM).
	Name string `json:"machine"`
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Address is where it was reached (management address, ESXi host name);
	// "" when not applicable.
	Address string `json:"address,omitempty"`
	Status  Status `json:"status"`
	// Error is why the machine failed (Failed, Interrupted) or, for Blocked,
	// the blocking problem.
	Error string `json:"error,omitempty"`
	// Err is the same failure as a Go error, for errors.As and errors.Is
	// (e.g. pkg/apply's HostKeyError, AuthError, UnreachableError,
	// DeviceError, PushError); nil where Error is empty. Not in the JSON.
	Err error `json:"-"`
	// BlockedBy names the machine whose problem holds some of these changes
	// back ("esxi-host clx-esx-41").
	BlockedBy string `json:"blocked_by,omitempty"`
	// Changes are the planned changes (applied when Status is Changed).
	Changes []Change `json:"changes"`
	// Waiting are changes that are not part of this run: they wait for
	// something outside it (an ESXi host's reboot, another machine's fix).
	Waiting []string `json:"waiting,omitempty"`
	// Notes are remarks that change nothing.
	Notes []string `json:"notes,omitempty"`
	// Seconds is how long this machine's apply took (0 in a plan).
	Seconds float64 `json:"seconds,omitempty"`
}

// Target is one target's outcome.
type Target struct {
	Name TargetName `json:"target"`
	// Error is why the target as a whole failed (e.g. vCenter did not
	// answer); its machines may then be missing.
	Error string `json:"error,omitempty"`
	// Summary is the target's one summary line.
	Summary string `json:"summary,omitempty"`
	// Seconds is the target's wall time.
	Seconds float64 `json:"seconds"`
}

// Document is what `rdggen apply --output json` writes.
type Document struct {
	// Schema is SchemaApply.
	Schema string `json:"schema"`
	// Kind is "plan" for a dry run or a refused confirmation, "result" for
	// an apply.
	Kind string `json:"kind"`
	// Cluster is the inventory's cluster name.
	Cluster string `json:"cluster"`
	// Inventory is the inventory file as given.
	Inventory string `json:"inventory"`
	// Interrupted is true when the apply was cancelled (Ctrl-C, SIGTERM).
	Interrupted bool     `json:"interrupted,omitempty"`
	Targets     []Target `json:"targets"`
	// Machines are in target order, then inventory order.
	Machines []Machine `json:"machines"`
}

// Encode writes d as indented JSON with a final newline.
func (d *Document) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// Count returns how many changes the machines plan, and on how many
// machines (Planned ones; Blocked machines' changes are counted too, for
// they are pushed where they do not depend on the blocking problem).
func Count(ms []Machine) (changes, machines int) {
	for _, m := range ms {
		if (m.Status == Planned || m.Status == Blocked) && len(m.Changes) > 0 {
			changes += len(m.Changes)
			machines++
		}
	}
	return changes, machines
}

// Gate is how an engine asks, once, after its plan and before its first
// change, whether to go on: it passes its planned machines and changes
// nothing unless Gate returns true. A nil Gate means go on. Gate may block
// (until every target has planned and a person answered) and returns false
// when ctx ends.
type Gate func(ctx context.Context, planned []Machine) bool

// Pass calls g, or returns true when g is nil.
func (g Gate) Pass(ctx context.Context, planned []Machine) bool {
	if g == nil {
		return ctx.Err() == nil
	}
	return g(ctx, planned)
}
