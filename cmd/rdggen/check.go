package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

func usageCheck(ts []*applyTarget) string {
	var b strings.Builder
	b.WriteString(`Usage: rdggen check -f cluster.yaml [--target LIST] [-o json] [flags]

Proves that a live cluster is ready for RoCE training, and changes nothing:
it reads the switches, vCenter and the VMs over the connections apply uses
(same credentials, --parallel, timeouts and progress) and prints one line per
check and machine: passed, FAILED (what was found, what was expected and the
command or setting that fixes it) or COULD NOT TELL (why). The targets run at
the same time.

Targets (default: all), each with the checks it reports (a result line is
MACHINE: CHECK [SUBJECT]: verdict):
`)
	for _, t := range ts {
		fmt.Fprintf(&b, "  %-8s %s\n", t.name, checkHelp[t.name.String()])
		if t.name == readiness.TargetSwitch {
			// Each switch OS's checks under its heading.
			for _, os := range apply.SwitchChecks() {
				fmt.Fprintf(&b, "   %s, %s:\n", os.OS.Name(), os.How)
				for _, c := range os.Checks {
					fmt.Fprintf(&b, "    %-15s %s\n", c.Name, c.What)
				}
			}
			continue
		}
		for _, c := range apply.Checks(t.name) {
			fmt.Fprintf(&b, "    %-15s %s\n", c.Name, c.What)
		}
	}
	b.WriteString(`Every target also reports ` + apply.CheckConnect + ` (COULD NOT TELL, with why) for a machine it
could not reach or read.

With -o json the results are one JSON document on stdout (schema
rdggen.check/v1, described in docs/json.md); the text goes to stderr.

Examples:
  rdggen check -f cluster.yaml
  rdggen check --target hosts,workers -f cluster.yaml
  rdggen check -o json -f cluster.yaml > readiness.json

Exit status: 0 every check passed, 1 a check failed or could not tell (or the
inventory is invalid; no worker keys in --keys yet is this too: the workers
could not tell, the other targets are checked), 2 usage error (also: missing
credentials or known_hosts, worker keys that cannot be trusted or read; these
are checked before anything is contacted).
`)
	return b.String()
}

// checkHelp says what each target reads; apply.Checks names its checks.
var checkHelp = map[string]string{
	"switch":  "each switch, read-only; its data ports are the hosts' ports",
	"esxi":    "vCenter's view of each ESXi host, then of its VMs",
	"hosts":   "each VM over SSH, in one round trip",
	"workers": "each worker container over SSH; logins along a ring, the rules for every pair",
}

// checkRun is one target's part of a check.
type checkRun struct {
	t       *applyTarget
	tr      *targetRun
	results []readiness.Result
	err     error
	seconds float64
}

func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	all := applyTargets()
	fs := newFlagSet("check", usageCheck(all), stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (required)")
	target := fs.String("target", "", "comma-separated `LIST` of targets: "+targetNames(all)+" (default all)")
	output := fs.StringP("output", "o", "text", "`FORMAT` of stdout: text, or json (the results as one document; text on stderr)")
	allPairs := fs.Bool("all-pairs", false, "workers: log in from every worker to every other (n×(n-1) logins, for small clusters)\n"+
		"instead of along a ring (n logins) with the rule check covering the other pairs")
	conn := registerConnFlags(fs, all, "machines read at once per target, `N` ≥ 1")
	conn.checking = true
	for _, t := range all {
		for _, name := range t.applyOnly {
			_ = fs.MarkHidden(name)
		}
	}
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	checks := append(conn.check(), checkFormat("check", *output))
	for _, t := range all {
		for _, name := range t.applyOnly {
			if fs.Changed(name) {
				checks = append(checks, fmt.Errorf("--%s is a flag of apply: check changes nothing", name))
			}
		}
	}
	if code, ok := usageErrors(stderr, checks); !ok {
		return code
	}
	if *file == "" {
		fmt.Fprintln(stderr, "rdggen: check needs -f cluster.yaml: it reads the machines of your cluster (the embedded reference cluster is only an example)")
		return exitUsage
	}
	targets, code, ok := pickTargets(fs, all, *target, stderr)
	if !ok {
		return code
	}
	env, code, ok := conn.load(ctx, fs, *file, targets, true, getenv, stderr)
	if !ok {
		return code
	}
	inv := env.Inv
	env.AllPairs = *allPairs

	text, live := textOutput(*output == "json", stdout, stderr)
	start := time.Now()
	runs := checkTargets(ctx, env, targets, text, live)
	doc := &readiness.Document{Schema: readiness.SchemaCheck, Cluster: inv.Name, Inventory: inv.File}
	var total readiness.Tally
	for _, r := range runs {
		var tally readiness.Tally
		tally.Add(r.results...)
		total.Add(r.results...)
		t := readiness.Target{Name: r.t.name, Tally: tally, Seconds: round2(r.seconds)}
		if r.err != nil {
			t.Error = r.err.Error()
		}
		doc.Targets = append(doc.Targets, t)
		doc.Results = append(doc.Results, r.results...)
	}
	doc.Causes = readiness.Causes(doc.Results)
	secs := time.Since(start).Seconds()
	doc.OK, doc.Seconds = total.OK() && len(doc.Results) > 0, round2(secs)
	if doc.Results == nil {
		doc.Results = []readiness.Result{}
	}
	if *output == "json" {
		if err := doc.Encode(stdout); err != nil {
			fmt.Fprintf(stderr, "rdggen: write the JSON document: %v\n", err)
			return exitInvalid
		}
	}
	if doc.OK {
		fmt.Fprintf(stderr, "rdggen check: all %d check(s) passed (%.2fs)\n", total.Passed, secs)
		return exitOK
	}
	fmt.Fprintf(stderr, "rdggen check: %s (%.2fs)\n", total, secs)
	writeNotReady(stderr, doc)
	return exitInvalid
}

// writeNotReady writes the end of a check that did not pass: one line per
// probable cause (a finding that others follow from, readiness.Causes) with
// how many follow, then the findings named causes first, at most 20.
func writeNotReady(w io.Writer, doc *readiness.Document) {
	for _, c := range doc.Causes {
		for _, x := range doc.Results {
			if x.Ref() == c.Ref {
				fmt.Fprintf(w, "rdggen check: probable cause of %d more finding(s): %s\n", len(c.Explains), x.Line())
				break
			}
		}
	}
	if line := readiness.NotReady(doc.Results, doc.Causes, 20); line != "" {
		fmt.Fprintf(w, "rdggen check: not ready: %s\n", line)
	}
}

// checkTargets runs the targets' checks at the same time (apply.CheckAll),
// each printing its results in inventory order when it finishes, then its
// tally. A target that cannot be made (no worker keys yet) could not tell,
// and the others run.
func checkTargets(ctx context.Context, env *applyEnv, targets []*applyTarget, text io.Writer, live bool) []*checkRun {
	display := progress.NewDisplay(text, live, 0)
	if live {
		display.Clean = quote.Terminal
	}
	display.Prefix = len(targets) > 1
	runs := make([]*checkRun, len(targets))
	// ended prints a target's results and tally, as it ends.
	ended := func(r *checkRun, res apply.TargetResult) {
		r.results, r.err, r.seconds = res.Checks, r.t.hinted(res.Err), res.Seconds
		if r.err != nil && len(r.results) == 0 {
			r.results = []readiness.Result{readiness.Result{Target: r.t.name, Machine: r.t.name.String(), Check: apply.CheckConnect, Subject: "", Status: readiness.Unknown, Found: r.err.Error()}}
		}
		var b strings.Builder
		for _, x := range r.results {
			b.WriteString(x.Line())
			b.WriteByte('\n')
		}
		var tally readiness.Tally
		tally.Add(r.results...)
		fmt.Fprintf(&b, "%s: %s (%.2fs)\n", r.t.name, tally, r.seconds)
		io.WriteString(r.tr.Out, b.String())
		r.tr.Track.Finish()
	}
	var ts []apply.Target
	var at []int // runs[at[k]] is ts[k]'s
	for i, t := range targets {
		tr := &targetRun{t: t}
		tr.Track = display.Track(t.name.String())
		tr.Out = tr.Track.Writer()
		runs[i] = &checkRun{t: t, tr: tr}
		target, err := t.target(env, tr)
		if err != nil {
			ended(runs[i], apply.TargetResult{Target: t.name, Err: err})
			continue
		}
		ts, at = append(ts, target), append(at, i)
	}
	apply.CheckAll(ctx, env.Inv, ts, apply.AllOptions{Ended: func(k int, res apply.TargetResult) { ended(runs[at[k]], res) }})
	display.Close()
	return runs
}

// round2 rounds seconds to hundredths for the JSON document.
func round2(s float64) float64 { return float64(int64(s*100+0.5)) / 100 }
