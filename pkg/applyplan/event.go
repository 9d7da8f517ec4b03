package applyplan

import "time"

// EventKind says what an Event reports.
type EventKind string

// The kinds of Event, in the order a target usually sends them.
const (
	// EventPhase: the target starts a phase (What, e.g. "reading the state
	// of 8 VM(s) over SSH"), over Machines machines (0 when it is not per
	// machine).
	EventPhase EventKind = "phase"
	// EventBegin and EventEnd: Machine is in flight, then done, in the
	// current phase.
	EventBegin EventKind = "begin"
	EventEnd   EventKind = "end"
	// EventWait: the target waits for What (a vCenter login, the other
	// targets' plans); EventWaited when it no longer does.
	EventWait   EventKind = "wait"
	EventWaited EventKind = "waited"
	// EventLine: one line of the target's text output (plan, a machine's
	// result, the summary), without its newline.
	EventLine EventKind = "line"
	// EventFinish: the target is done.
	EventFinish EventKind = "finish"
)

// Event is one step of an apply or check in progress, for a caller that
// shows progress its own way (a library user's log, a web UI). The events
// of one target arrive in order; targets run concurrently, so a listener is
// called from several goroutines and must be safe for that.
type Event struct {
	// Target is the target's name: "switch", "esxi", "hosts", "workers".
	Target string    `json:"target"`
	Kind   EventKind `json:"kind"`
	// Machine is the machine of EventBegin and EventEnd.
	Machine string `json:"machine,omitempty"`
	// What is the phase, the awaited thing or the line.
	What string `json:"what,omitempty"`
	// Machines is the phase's machine count (EventPhase).
	Machines int       `json:"machines,omitempty"`
	Time     time.Time `json:"time"`
}
