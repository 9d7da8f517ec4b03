package onyx

import (
	"fmt"
	"slices"
	"strings"
)

// Change is one command of a Plan.
type Change struct {
	// Line is the command to send (ranges merged) and the statements it sets.
	Line
	// Replaces are the switch's current commands (ranges merged) that the
	// command overwrites; empty when the setting is simply missing.
	Replaces []string
	// Removed are the switch's current commands that the command, a `no`
	// form, takes away (Reconcile); empty for a command that sets something.
	Removed []string
}

// Plan is what Diff finds: the commands that bring a switch to the desired
// statements, in an order the switch accepts, and warnings for things it
// will not touch.
type Plan struct {
	Changes []Change
	// Warnings are notes for the reader, each a sentence; they include
	// every Kept, as its command and reason.
	Warnings []string
	// Kept are commands on the switch that may be rdggen's but that rdggen
	// cannot show it made (Reconcile): the plan leaves them and says why.
	Kept []Kept
}

// Kept is a command that Reconcile leaves on the switch although it may be
// rdggen's.
type Kept struct {
	// Command is the switch's command, e.g. "ip route vrf default
	// 172.16.1.0/24 10.0.0.1".
	Command string
	// Reason says why it may be rdggen's, why rdggen cannot tell, and the
	// command that removes it. Command + ": " + Reason is one of the
	// plan's Warnings.
	Reason string
}

// Commands returns the commands of the plan, in order.
func (p Plan) Commands() []string {
	out := make([]string, len(p.Changes))
	for i, c := range p.Changes {
		out[i] = c.Command
	}
	return out
}

// Empty reports whether the switch already has everything.
func (p Plan) Empty() bool { return len(p.Changes) == 0 }

// Diff compares desired statements (Desired) with a switch's current ones
// (Parse of its running-config) and returns the commands to send.
//
// Ownership is per setting: rdggen owns exactly the IDs (interface + key) of
// the desired statements, e.g. "ethernet 1/5 + traffic-class 3
// congestion-control", whose value is the mode and thresholds. For each
// desired statement:
//   - the same ID with the same body on the switch: nothing to do;
//   - the ID missing, or present with another value (`qos trust L2`, other
//     ECN thresholds, `memory percent 30.00`, `no lldp`, switch priority 3
//     mapped to another pool): send the desired command, which overwrites it.
//
// A port's MTU is a floor: a port whose MTU is already larger keeps it.
//
// Statements with any other ID (VLANs, descriptions, speeds, users, SNMP, ECN
// on other traffic classes, PFC on other priorities …) are never sent, changed
// or removed. One exception, taken from Mellanox's onyx_qos module (research
// §3.6): before a port's trust is changed to L3 or both, `no qos rewrite dscp`
// is sent for that port when DSCP rewrite is on.
//
// Commands are merged into port ranges and ordered by Kind, i.e. in
// running-config order: buffer pool (type first: it creates the pool), QoS,
// ETS, PFC (global before per-port), LLDP, hostname.
func Diff(desired, current []Statement) Plan {
	cur := make(map[ID]Statement, len(current))
	for _, s := range current {
		cur[s.ID()] = s // the switch keeps the last
	}
	var send []Statement
	replaced := map[ID]Statement{}
	for _, d := range desired {
		c, ok := cur[d.ID()]
		if ok && (c.Body == d.Body || (d.Kind == KindMTU && c.MTUValue() >= d.MTUValue())) {
			continue // an MTU is a floor: a larger one stays
		}
		send = append(send, d)
		if ok {
			replaced[c.ID()] = c
		}
		if d.Kind == KindModuleType {
			// A port is shut down before its module type changes, with
			// the port its split unmaps (split.go).
			send = append(send, splitShutdown(d)...)
		}
		if d.Kind == KindTrust && d.Body != "qos trust L2" {
			pre := NoRewriteDSCP(d.Iface)
			if r, on := cur[pre.ID()]; on && !r.Negated() {
				send = append(send, pre)
				replaced[r.ID()] = r
			}
		}
	}
	Sort(send)
	var plan Plan
	for _, l := range Lines(send) {
		ch := Change{Line: l}
		var was []Statement
		for _, s := range l.Statements {
			if r, ok := replaced[s.ID()]; ok {
				was = append(was, r)
			}
		}
		for _, w := range Lines(was) {
			ch.Replaces = append(ch.Replaces, w.Command)
		}
		plan.Changes = append(plan.Changes, ch)
	}
	plan.Warnings = mixWarnings(desired, current)
	return plan
}

// styleA are the kinds of the explicit (pre-`roce`) QoS commands.
var styleA = []Kind{KindPoolType, KindPoolMemory, KindPoolMap, KindTrust, KindCongestion, KindETS, KindPFC, KindPFCPriority, KindPFCPort}

// mixWarnings explains when the switch carries the other configuration form:
// rdggen never mixes them (docs/rules.md#switch-onyx) and never removes the other one.
func mixWarnings(desired, current []Statement) []string {
	wantRoCE := slices.ContainsFunc(desired, func(s Statement) bool { return s.Kind == KindRoCE })
	var explicit []Statement
	hasRoCE := false
	for _, s := range current {
		switch {
		case s.Kind == KindRoCE && !s.Negated():
			hasRoCE = true
		case slices.Contains(styleA, s.Kind) && !s.Negated():
			explicit = append(explicit, s)
		}
	}
	var out []string
	if wantRoCE && len(explicit) > 0 {
		lines := Lines(explicit)
		out = append(out, fmt.Sprintf("the switch has %d explicit QoS command(s) (e.g. %q) that the `roce` template may list as exceptions (show roce); rdggen leaves them", len(lines), lines[0].Command))
	}
	if !wantRoCE && hasRoCE {
		out = append(out, "the switch runs the `roce` template, but its ONYX version in the inventory asks for explicit commands; check the inventory's onyx version")
	}
	return out
}

// String prints the plan for review, one command per line, each followed
// by what it replaces.
func (p Plan) String() string {
	var b strings.Builder
	for _, c := range p.Changes {
		b.WriteString(c.Command + "\n")
		for _, r := range c.Replaces {
			b.WriteString("    # replaces: " + r + "\n")
		}
		for _, r := range c.Removed {
			b.WriteString("    # removes: " + r + "\n")
		}
	}
	for _, w := range p.Warnings {
		b.WriteString("# warning: " + w + "\n")
	}
	return b.String()
}
