// Package readiness is the outcome of `rdggen check`: whether a live
// cluster is ready for RoCE training, one [Result] per check, machine and
// subject (a port, a GPU, a peer worker), each failure with what was found,
// what was expected and the command or setting that fixes it.
//
// `rdggen check --output json` writes one [Document] (schema
// [SchemaCheck], described in docs/json.md). Fields are only ever added
// under the same schema version.
package readiness

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/rdggen/rdggen/pkg/applyplan"
)

// SchemaCheck marks the document of `rdggen check`.
const SchemaCheck = "rdggen.check/v1"

// Status is a check's verdict.
type Status string

// The verdicts.
const (
	// Passed: the machine is as the inventory and the field's rules want.
	Passed Status = "passed"
	// Failed: it is not; Found, Expected and Fix say how.
	Failed Status = "failed"
	// Unknown: the check could not tell (the machine did not answer, a
	// file or command was missing); Found says why.
	Unknown Status = "unknown"
)

// The targets, as `--target` names them (applyplan's).
const (
	TargetSwitch  = applyplan.TargetSwitch
	TargetESXi    = applyplan.TargetESXi
	TargetHosts   = applyplan.TargetHosts
	TargetWorkers = applyplan.TargetWorkers
)

// Result is one check of one machine. Build it as a struct literal with
// its fields named, e.g.
//
//	readiness.Result{Target: readiness.TargetSwitch, Machine: "sw-1", Check: "pfc",
//		Subject: "Eth1/3", Status: readiness.Failed, Found: "oper Disabled",
//		Expected: "oper Enabled", Fix: "interface ethernet 1/3 dcb priority-flow-control mode on force"}
type Result struct {
	// Target is the --target the check belongs to (TargetSwitch, …).
	Target applyplan.TargetName `json:"target"`
	// Machine is the switch, ESXi host, VM or worker checked, by its
	// inventory name.
	Machine string `json:"machine"`
	// Check is the check's short name, the same on every machine: "pfc",
	// "gid", "source-address".
	Check string `json:"check"`
	// Subject narrows it within the machine: a port ("Eth1/3"), a PCI
	// device, a peer worker; "" for the machine as a whole.
	Subject string `json:"subject,omitempty"`
	Status  Status `json:"status"`
	// Found is what the machine showed (for Unknown: why nothing could be
	// read); Expected what the inventory or the rule wants.
	Found    string `json:"found,omitempty"`
	Expected string `json:"expected,omitempty"`
	// Fix is the command or setting that makes a failed check pass (for
	// Unknown, when set: how to let the check see).
	Fix string `json:"fix,omitempty"`
	// After names the results this one follows from when they do not pass
	// (a BGP session's links and its peer's session, a route's sessions;
	// DependsOn makes it): Causes reads them to put the probable cause of a
	// group of findings first. Not written to JSON; the Document's Causes
	// are their outcome.
	After Deps `json:"-"`
}

// Line is r for a person, one line without the target:
//
//	clx-mld-42: gid mlx5_0 port 1: FAILED: found …; expected …; fix: …
func (r Result) Line() string {
	var b strings.Builder
	b.WriteString(r.Machine)
	b.WriteString(": ")
	b.WriteString(r.Check)
	if r.Subject != "" {
		b.WriteString(" ")
		b.WriteString(r.Subject)
	}
	switch r.Status {
	case Passed:
		b.WriteString(": passed")
		if r.Found != "" {
			b.WriteString(" (" + r.Found + ")")
		}
	case Failed:
		b.WriteString(": FAILED: found " + orNone(r.Found) + "; expected " + orNone(r.Expected))
		if r.Fix != "" {
			b.WriteString("; fix: " + r.Fix)
		}
	default:
		b.WriteString(": COULD NOT TELL: " + orNone(r.Found))
		if r.Expected != "" {
			b.WriteString("; expected " + r.Expected)
		}
		if r.Fix != "" {
			b.WriteString("; fix: " + r.Fix)
		}
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

// Tally counts results by status.
type Tally struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Unknown int `json:"unknown"`
}

// Add counts rs.
func (t *Tally) Add(rs ...Result) {
	for _, r := range rs {
		switch r.Status {
		case Passed:
			t.Passed++
		case Failed:
			t.Failed++
		default:
			t.Unknown++
		}
	}
}

// OK reports whether every counted check passed.
func (t Tally) OK() bool { return t.Failed == 0 && t.Unknown == 0 }

// String is "12 passed, 1 failed, 0 could not tell".
func (t Tally) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d could not tell", t.Passed, t.Failed, t.Unknown)
}

// Target is one target's part of a Document.
type Target struct {
	Name applyplan.TargetName `json:"target"`
	Tally
	// Error is why the target could not check everything (no vCenter, no
	// credentials), "" otherwise; its machines' checks are then Unknown or
	// missing.
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Document is the whole outcome of `rdggen check`, as `--output json`
// writes it.
type Document struct {
	Schema    string   `json:"schema"`
	Cluster   string   `json:"cluster"`
	Inventory string   `json:"inventory"`
	OK        bool     `json:"ok"`
	Seconds   float64  `json:"seconds"`
	Targets   []Target `json:"targets"`
	Results   []Result `json:"results"`
	// Causes are the findings that other findings follow from, each with
	// those it explains (Causes of Results); absent when no finding
	// follows from another.
	Causes []Cause `json:"causes,omitempty"`
}

// Encode writes d as indented JSON (no HTML escaping) and a newline.
func (d *Document) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}
