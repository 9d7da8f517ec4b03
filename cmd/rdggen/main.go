// Command rdggen turns one cluster inventory into every configuration artifact
// of a GPU training cluster with lossless RoCE on vSphere, and pushes them.
//
// Exit status: 0 success, 1 invalid inventory (findings on stderr), 2 usage
// error, 3 an apply or write step failed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/rdggen/rdggen/internal/render"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// Exit statuses.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
	exitFailed  = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stdout, stderr := io.Writer(os.Stdout), io.Writer(os.Stderr)
	if len(os.Args) < 2 || os.Args[1] != "run" { // a job's own output is the user's, untouched
		stdout, stderr = quote.NewTerminalWriter(stdout), quote.NewTerminalWriter(stderr)
	}
	console = consoleInfo{
		In: os.Stdin, InTerminal: term.IsTerminal(int(os.Stdin.Fd())),
		Stdout: os.Stdout, StdoutTerminal: liveTerminal(os.Stdout),
		Stderr: os.Stderr, StderrTerminal: liveTerminal(os.Stderr),
	}
	code := run(ctx, os.Args[1:], stdout, stderr, os.Getenv)
	stop()
	os.Exit(code)
}

const usageTop = `rdggen turns one cluster inventory (YAML) into every configuration artifact of a
GPU training cluster with lossless RoCE on VMware vSphere, and pushes them.

Usage:
  rdggen [-f cluster.yaml] [-o DIR]     validate, then write every artifact under DIR
  rdggen validate -f cluster.yaml       only check the inventory
  rdggen example                        print the reference inventory as commented YAML
  rdggen apply -f cluster.yaml [--target switch,esxi,hosts,workers] [--dry-run]
                                        show what would change, then push only that
  rdggen check -f cluster.yaml [--target switch,esxi,hosts,workers]
                                        prove the live cluster is ready for RoCE training
                                        (read-only; each failure with its fix)
  rdggen run -f cluster.yaml [--mpirun] [-- CMD ARG...]
                                        launch the job from the first host's worker
  rdggen bench --judge FILE...          judge saved ib_write_bw / all_reduce_perf / NCCL log
                                        outputs against the link speed, naming each cause
  rdggen version                        rdggen's version (also --version)

Without -f, generating and validating use the embedded reference cluster
(8 hosts clx-mld-41..48); apply, check and run need -f.

Examples:
  rdggen -o out                         # the reference cluster's artifacts in ./out
  rdggen example > cluster.yaml         # a starting point for your cluster
  rdggen validate -f cluster.yaml       # errors as cluster.yaml:LINE:COL: field: rule
  rdggen -f cluster.yaml -o out
  rdggen apply --target hosts --dry-run -f cluster.yaml

Exit status: 0 success, 1 invalid inventory (check: not ready), 2 usage error,
3 a write or apply step failed.
Run 'rdggen <command> --help' for a command's flags.
`

// liveTerminal reports whether f is a terminal the live display can draw
// on: one that knows its width (a pty without a size, as under script(1),
// gets the plain lines, which always say what is awaited).
func liveTerminal(f *os.File) bool {
	if !term.IsTerminal(int(f.Fd())) {
		return false
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	return err == nil && cols >= 40
}

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		switch args[0] {
		case "validate":
			return cmdValidate(ctx, args[1:], stdout, stderr)
		case "example":
			return cmdExample(args[1:], stdout, stderr)
		case "apply":
			return cmdApply(ctx, args[1:], stdout, stderr, getenv)
		case "check":
			return cmdCheck(ctx, args[1:], stdout, stderr, getenv)
		case "run":
			return cmdRun(ctx, args[1:], stdout, stderr, getenv)
		case "bench":
			return cmdBench(ctx, args[1:], stdout, stderr)
		case "version", "--version":
			return cmdVersion(args[1:], stdout, stderr)
		case "help":
			if len(args) < 2 {
				return cmdGenerate(ctx, []string{"--help"}, stdout, stderr)
			}
			if args[1] == "help" || args[1] == "generate" || strings.HasPrefix(args[1], "-") {
				return cmdGenerate(ctx, []string{"--help"}, stdout, stderr)
			}
			return run(ctx, []string{args[1], "--help"}, stdout, stderr, getenv)
		}
		if !strings.HasPrefix(args[0], "-") {
			fmt.Fprintf(stderr, "rdggen: unknown command %q (commands: validate, example, apply, check, run, bench, version)\n", args[0])
			return exitUsage
		}
	}
	return cmdGenerate(ctx, args, stdout, stderr)
}

// newFlagSet makes a subcommand's flag set: errors go to stderr, --help (asked
// for, so the output of the command) to stdout.
func newFlagSet(name, usage string, stdout, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprint(stdout, usage)
		if f := fs.FlagUsages(); f != "" {
			fmt.Fprintf(stdout, "\nFlags:\n%s", f)
		}
	}
	return fs
}

// parse parses args; it returns an exit status and false when the caller must stop.
func parse(fs *pflag.FlagSet, args []string, stdout io.Writer) (int, bool) {
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK, false
	}
	if err != nil {
		help := "rdggen --help"
		if fs.Name() != "rdggen" {
			help = "rdggen " + fs.Name() + " --help"
		}
		fmt.Fprintf(fs.Output(), "rdggen: %s (see %s)\n", quote.Line(err.Error()), help)
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "rdggen: unexpected argument %s\n", strconv.Quote(fs.Arg(0)))
		return exitUsage, false
	}
	return 0, true
}

// load returns the inventory named by fs's -f flag (file), or the embedded
// reference when -f was not given. An -f given but empty (an unset shell
// variable, typically) is a usage error, never the reference. Findings go to
// stderr; ok is false when the inventory is invalid or missing.
func load(ctx context.Context, fs *pflag.FlagSet, file string, stderr io.Writer) (*inventory.Inventory, int, bool) {
	inv, rep, code, ok := loadReport(ctx, fs, file, stderr)
	if rep != nil {
		fmt.Fprintln(stderr, rep.Error())
		fmt.Fprintf(stderr, "rdggen: %s: %d problem(s); nothing was written or pushed\n", inventory.DisplayName(file), rep.Count())
	}
	return inv, code, ok
}

// loadReport is load that returns an invalid inventory's findings instead of
// printing them.
func loadReport(ctx context.Context, fs *pflag.FlagSet, file string, stderr io.Writer) (*inventory.Inventory, *inventory.Report, int, bool) {
	if file == "" {
		if fs.Changed("file") {
			fmt.Fprintln(stderr, "rdggen: -f is empty (an unset variable?); name the inventory file")
			return nil, nil, exitUsage, false
		}
		return inventory.Reference(), nil, 0, true
	}
	// Reading may block (a FIFO, a process substitution): a signal ends the
	// wait, and the reader is left to the exiting process.
	type loaded struct {
		inv *inventory.Inventory
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		inv, err := inventory.LoadFile(file)
		done <- loaded{inv, err}
	}()
	var inv *inventory.Inventory
	var err error
	select {
	case l := <-done:
		inv, err = l.inv, l.err
	case <-ctx.Done():
		fmt.Fprintf(stderr, "rdggen: interrupted while reading %s\n", inventory.DisplayName(file))
		return nil, nil, exitFailed, false
	}
	var rep *inventory.Report
	switch {
	case errors.As(err, &rep):
		return nil, rep, exitInvalid, false
	case err != nil:
		fmt.Fprintf(stderr, "rdggen: %s\n", quote.Line(err.Error()))
		return nil, nil, exitUsage, false
	}
	return inv, nil, 0, true
}

// insideDir reports whether path is dir or lies below it (both made
// absolute, symbolic links in existing parents resolved).
func insideDir(path, dir string) bool {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		// Resolve what exists: the deepest existing parent, plus the rest.
		rest := ""
		for cur := a; ; cur = filepath.Dir(cur) {
			if r, err := filepath.EvalSymlinks(cur); err == nil {
				return filepath.Join(r, rest)
			}
			if cur == filepath.Dir(cur) {
				return a
			}
			rest = filepath.Join(filepath.Base(cur), rest)
		}
	}
	rel, err := filepath.Rel(abs(dir), abs(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func cmdGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("rdggen", usageTop, stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (default: the embedded reference cluster)")
	out := fs.StringP("output", "o", "./rdg-out", "output `DIR`; replaced as a whole, never left half-written")
	quiet := fs.BoolP("quiet", "q", false, "print nothing on success")
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	inv, code, ok := load(ctx, fs, *file, stderr)
	if !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(stderr, "rdggen: -o is empty (an unset variable?); name the output directory")
		return exitUsage
	}
	if cwd, err := os.Getwd(); err == nil && insideDir(cwd, *out) {
		fmt.Fprintf(stderr, "rdggen: the output directory %s is the current directory or holds it; rdggen replaces that directory as a whole, so give a directory of its own (e.g. -o out)\n", quote.Line(*out))
		return exitUsage
	}
	if *file != "" && insideDir(*file, *out) {
		fmt.Fprintf(stderr, "rdggen: the output directory %s holds the inventory %s, and rdggen replaces that directory as a whole; keep the inventory elsewhere or choose another -o\n",
			quote.Line(*out), inv.File)
		return exitUsage
	}
	written, err := render.Generate(ctx, *out, inv)
	if err != nil {
		fmt.Fprintf(stderr, "rdggen: %s\n", quote.Line(err.Error()))
		return exitFailed
	}
	if !*quiet {
		fmt.Fprintf(stdout, "rdggen: %s: %d hosts, %d switch(es) -> %d files in %s\n",
			inv.File, len(inv.Hosts), len(inv.Switches), written.Files(), quote.Line(*out))
		fmt.Fprint(stdout, written.Summary())
	}
	return exitOK
}

const usageValidate = `Usage: rdggen validate -f cluster.yaml [-o json]

Checks the inventory and prints every problem as FILE:LINE:COL: field: rule.
With -o json, one document on stdout instead (schema rdggen.validate/v1,
described in docs/json.md).
Exit status 0 when valid, 1 when not.
`

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", usageValidate, stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (default: the embedded reference cluster)")
	output := fs.StringP("output", "o", "text", "`FORMAT` of stdout: text, or json (the findings as one document)")
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	if *output != "text" && *output != "json" {
		fmt.Fprintf(stderr, "rdggen: --output %q: want text or json\n", quote.Line(*output))
		return exitUsage
	}
	if *output == "text" {
		inv, code, ok := load(ctx, fs, *file, stderr)
		if !ok {
			return code
		}
		fmt.Fprintf(stdout, "%s: valid: %d hosts on %d ESXi host(s), %d switch(es)\n",
			inv.File, len(inv.Hosts), len(inv.ESXiHosts()), len(inv.Switches))
		return exitOK
	}
	inv, rep, code, ok := loadReport(ctx, fs, *file, stderr)
	if !ok && rep == nil {
		return code
	}
	doc := newValidateDocument(*file, inv, rep)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		fmt.Fprintf(stderr, "rdggen: write the JSON document: %v\n", err)
		return exitFailed
	}
	return code
}

const usageExample = `Usage: rdggen example > cluster.yaml

Prints the reference inventory (the deployment guide's 8-host cluster) as
commented YAML, a starting point for your own cluster.
`

func cmdExample(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("example", usageExample, stdout, stderr)
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	_, err := stdout.Write(inventory.ReferenceYAML)
	if err != nil {
		return exitFailed
	}
	return exitOK
}

func usageApply(ts []*applyTarget) string {
	var b strings.Builder
	b.WriteString(`Usage: rdggen apply -f cluster.yaml [--target LIST] [--dry-run | --yes] [-o json] [flags]

Compares each machine with what the inventory asks for and prints the plan.
On a terminal it then asks once, for all targets, before pushing only the
difference; --yes pushes without asking (scripts, CI); without a terminal and
without --yes nothing is pushed. A second run finds nothing to do and says so.
Nothing is contacted when the inventory is invalid.

The targets run at the same time (they touch different machines; workers
change after hosts), each at most --parallel machines at once. Each machine's
line is printed as it finishes, with its time; a wait longer than a few
seconds says what it waits for. Ctrl-C stops within a second and says which
machines were changed and which were not.

Targets (default: all):
`)
	for _, t := range ts {
		fmt.Fprintf(&b, "  %-8s %s\n", t.name, t.help)
	}
	b.WriteString(`
With -o json the plan (--dry-run) or the result is one JSON document on stdout
(schema rdggen.apply/v1, described in docs/json.md); the text goes to stderr.

Examples:
  rdggen apply --dry-run -f cluster.yaml
  rdggen apply --target esxi -f cluster.yaml
  rdggen apply --target switch,hosts --parallel 16 --yes -f cluster.yaml
  rdggen apply --dry-run -o json -f cluster.yaml > plan.json

Exit status: 0 everything matches or was changed, 1 the inventory is invalid
(nothing contacted), 2 usage error (also: no terminal to confirm on and no
--yes), 3 a machine or target failed, the push was declined, or it was
interrupted.
`)
	return b.String()
}

func cmdApply(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	all := applyTargets()
	fs := newFlagSet("apply", usageApply(all), stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (required)")
	target := fs.String("target", "", "comma-separated `LIST` of targets: "+targetNames(all)+" (default all)")
	dryRun := fs.Bool("dry-run", false, "print the plan and change nothing")
	yes := fs.BoolP("yes", "y", false, "push without asking (needed when there is no terminal to ask on)")
	output := fs.StringP("output", "o", "text", "`FORMAT` of stdout: text, or json (the plan or result as one document; text on stderr)")
	conn := registerConnFlags(fs, all, "machines changed at once per target, `N` ≥ 1")
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	checks := conn.check()
	if *output != "text" && *output != "json" {
		checks = append(checks, fmt.Errorf("--output %q: want text or json", quote.Line(*output)))
	}
	if *yes && *dryRun {
		checks = append(checks, errors.New("--yes and --dry-run: a dry run pushes nothing, so there is nothing to say yes to; pick one"))
	}
	if code, ok := usageErrors(stderr, checks); !ok {
		return code
	}
	if *file == "" {
		fmt.Fprintln(stderr, "rdggen: apply needs -f cluster.yaml: it changes real machines (the embedded reference cluster is only for generating files and `rdggen example`)")
		return exitUsage
	}
	targets, code, ok := pickTargets(fs, all, *target, stderr)
	if !ok {
		return code
	}
	if !*dryRun && !*yes && !console.InTerminal {
		fmt.Fprintln(stderr, "rdggen: apply: stdin is not a terminal, so there is no one to confirm the push: pass --yes to push without asking, or --dry-run to only see the plan")
		return exitUsage
	}
	env, code, ok := conn.load(ctx, fs, *file, targets, *dryRun, getenv, stderr)
	if !ok {
		return code
	}
	a := &applyRun{env: env, targets: targets, confirm: !*yes}
	a.text, a.live = textOutput(*output == "json", stdout, stderr)
	res := a.do(ctx)
	if *output == "json" {
		if err := res.document(env).Encode(stdout); err != nil {
			fmt.Fprintf(stderr, "rdggen: write the JSON document: %v\n", err)
			return exitFailed
		}
	}
	return res.report(stderr)
}
