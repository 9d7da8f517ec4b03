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
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/rdggen/rdggen/internal/render"
	"github.com/rdggen/rdggen/internal/userfile"
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

// command is one of rdggen's commands: its name, its lines in rdggen's
// help (each a synopsis and what it does), and what runs it.
type command struct {
	name string
	help []synopsis
	run  func(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int
}

// synopsis is one way to call a command and what it does, as rdggen's
// help shows it.
type synopsis struct {
	line string
	does []string
}

// commands is the one list of rdggen's commands, in the order the help
// shows them: rdggen's help, the dispatch, the list an unknown command is
// answered with, and the hint for a command written after a flag are all
// made from it.
func commands() []command {
	return []command{
		{name: "generate", help: []synopsis{{"[generate] [-f cluster.yaml] [-o DIR]", []string{"validate, then write every artifact under DIR", "(generate is the default command)"}}},
			run: func(ctx context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) int {
				return cmdGenerate(ctx, usageGenerate, args, stdout, stderr)
			}},
		{name: "validate", help: []synopsis{{"validate -f cluster.yaml", []string{"only check the inventory"}}},
			run: func(ctx context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) int {
				return cmdValidate(ctx, args, stdout, stderr)
			}},
		{name: "example", help: []synopsis{{"example", []string{"print the reference inventory as commented YAML"}}},
			run: func(_ context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) int {
				return cmdExample(args, stdout, stderr)
			}},
		{name: "apply", help: []synopsis{{"apply -f cluster.yaml [--target switch,esxi,hosts,workers] [--dry-run]", []string{"show what would change, then push only that"}}},
			run: cmdApply},
		{name: "check", help: []synopsis{{"check -f cluster.yaml [--target switch,esxi,hosts,workers]", []string{
			"prove the live cluster is ready for RoCE training", "(read-only; each failure with its fix)"}}},
			run: cmdCheck},
		{name: "run", help: []synopsis{{"run -f cluster.yaml [--mpirun | --torchrun] [-- CMD ARG...]", []string{
			"launch the job from the first host's worker", "(--torchrun: torchrun in every worker at once)"}}},
			run: cmdRun},
		{name: "bench", help: []synopsis{
			{"bench -f cluster.yaml [-o json]", []string{"measure RDMA pair by pair (ib_write_bw) and NCCL over the",
				"workers (all_reduce_perf) against pass lines from the link", "speed, each shortfall with its layer and fix"}},
			{"bench --judge FILE...", []string{"the same verdicts for saved ib_write_bw / all_reduce_perf /", "NCCL log outputs"}}},
			run: cmdBench},
		{name: "lab", help: []synopsis{{"lab up -f cluster.yaml", []string{"rehearse without hardware: vCenter and the switches of the",
			"inventory simulated on this machine (rdggen help lab)"}}},
			run: func(ctx context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) int {
				return cmdLab(ctx, args, stdout, stderr)
			}},
		{name: "version", help: []synopsis{{"version", []string{"rdggen's version (also --version)"}}},
			run: func(_ context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) int {
				return cmdVersion(args, stdout, stderr)
			}},
		{name: "help"}, // run's: the help of rdggen or of a command
	}
}

// commandNames are the names of rdggen's commands, "help" included.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// commandList is the list an unknown command is answered with: the
// commands the help shows, generate said to be the default.
func commandList() string {
	var names []string
	for _, c := range commands() {
		switch {
		case len(c.help) == 0:
		case c.name == "generate":
			names = append(names, c.name+", the default")
		default:
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ", ")
}

// usageColumn is where the help's description column starts.
const usageColumn = 40

// usageTop is rdggen's own help: what it is, every command (commands),
// and how -o reads.
func usageTop() string {
	var b strings.Builder
	b.WriteString(`rdggen turns one cluster inventory (YAML) into every configuration artifact of a
GPU training cluster with lossless RoCE on VMware vSphere, and pushes them.

Usage:
`)
	pad := strings.Repeat(" ", usageColumn)
	for _, c := range commands() {
		for _, s := range c.help {
			line, does := "  rdggen "+s.line, s.does
			if len(line) <= usageColumn-2 && len(does) > 0 {
				line, does = line+strings.Repeat(" ", usageColumn-len(line))+does[0], does[1:]
			}
			b.WriteString(line + "\n")
			for _, d := range does {
				b.WriteString(pad + d + "\n")
			}
		}
	}
	b.WriteString(`
Without -f, generating and validating use the embedded reference cluster
(8 hosts clx-mld-41..48); apply, check, run and bench need -f.

-o is the output DIRECTORY when generating, and the output FORMAT (text or
json) of validate, apply, check and bench, as kubectl's and terraform's -o is. So
that one is never taken for the other, generating refuses a format word as
DIR (-o json: write -o ./json for a directory of that name), and the other
commands refuse anything but text and json.

Examples:
  rdggen -o out                         # the reference cluster's artifacts in ./out
  rdggen example > cluster.yaml         # a starting point for your cluster
  rdggen validate -f cluster.yaml       # errors as cluster.yaml:LINE:COL: field: rule
  rdggen -f cluster.yaml -o out
  rdggen apply --target hosts --dry-run -f cluster.yaml

Exit status: 0 success, 1 invalid inventory (check: not ready), 2 usage error,
3 a write or apply step failed.
Run 'rdggen help <command>' (or 'rdggen <command> --help') for a command's
flags; the manual is in docs/ (docs/generate.md, docs/apply.md, ...).
`)
	return b.String()
}

const usageGenerate = `Usage: rdggen [generate] [-f cluster.yaml] [-o DIR] [-q]

Validates the inventory, then writes every artifact of the cluster under DIR:
the switch configuration (ONYX commands, or NVUE YAML and nv set lines for
Cumulus Linux), the VMX and ESXi settings, each VM's Docker, route, firewall
and RoCE files, the Horovod hostfile and launch lines, and a review picture
(cluster.txt, cluster.svg). The tree is written atomically: it is built
beside DIR and renamed into place, so an error, Ctrl-C or SIGTERM leaves
nothing half-written. DIR is replaced as a whole, so rdggen refuses a DIR it
did not write, one that holds files its .rdggen list does not name, and one
that holds the inventory.

Without -f, the embedded reference cluster (8 hosts clx-mld-41..48) is used.
-o is a directory here; a format word (json, text, yaml, ...) is refused
(write -o ./json for a directory of that name).

Examples:
  rdggen -o out                         # the reference cluster's artifacts in ./out
  rdggen generate -f cluster.yaml -o out

Exit status: 0 written, 1 invalid inventory (nothing written), 2 usage error,
3 the tree could not be written.
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
		name := args[0]
		if name == "--version" {
			name = "version"
		}
		if name == "help" {
			if len(args) < 2 || args[1] == "help" || strings.HasPrefix(args[1], "-") {
				return cmdGenerate(ctx, usageTop(), []string{"--help"}, stdout, stderr)
			}
			return run(ctx, []string{args[1], "--help"}, stdout, stderr, getenv)
		}
		for _, c := range commands() {
			if c.name == name && c.run != nil {
				return c.run(ctx, args[1:], stdout, stderr, getenv)
			}
		}
		if !strings.HasPrefix(name, "-") {
			fmt.Fprintf(stderr, "rdggen: unknown command %q (commands: %s)\n", name, commandList())
			return exitUsage
		}
	}
	return cmdGenerate(ctx, usageTop(), args, stdout, stderr)
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
	return parsed(fs, fs.Parse(args), stdout)
}

// parsed is parse after fs.Parse returned err.
func parsed(fs *pflag.FlagSet, err error, stdout io.Writer) (int, bool) {
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
		hint := ""
		if fs.Name() == "rdggen" && slices.Contains(commandNames(), fs.Arg(0)) {
			hint = fmt.Sprintf(": the command comes first (rdggen %s [flags])", fs.Arg(0))
		} else if a := fs.Arg(0); (strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml")) && fs.Lookup("file") != nil {
			hint = fmt.Sprintf(": the inventory goes after -f (-f %s)", quote.Terminal(quote.Sh(a)))
		}
		fmt.Fprintf(fs.Output(), "rdggen: unexpected argument %s%s\n", strconv.Quote(fs.Arg(0)), hint)
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
// printing them. A valid inventory's warnings go to stderr, one line each
// ("rdggen: warning: FILE:LINE:COL: field: text"); they never change the
// exit status. The inventory may use an http:// vCenter when fs's
// --vcenter-allow-http is set, or when the command has no such flag (run:
// it never contacts vCenter).
func loadReport(ctx context.Context, fs *pflag.FlagSet, file string, stderr io.Writer) (*inventory.Inventory, *inventory.Report, int, bool) {
	inv, rep, code, ok := loadInventory(ctx, fs, file, stderr)
	if inv != nil {
		for _, w := range inv.Warnings {
			fmt.Fprintf(stderr, "rdggen: warning: %s\n", w)
		}
	}
	return inv, rep, code, ok
}

// registerAllowHTTP adds --vcenter-allow-http to a command that loads an
// inventory without contacting vCenter (validate, generate), so that it
// accepts what apply and check accept with the flag.
func registerAllowHTTP(fs *pflag.FlagSet) {
	fs.Bool("vcenter-allow-http", false, "accept an http:// vcenter in the inventory (apply and check then need the flag too)")
}

func loadInventory(ctx context.Context, fs *pflag.FlagSet, file string, stderr io.Writer) (*inventory.Inventory, *inventory.Report, int, bool) {
	if file == "" {
		if fs.Changed("file") {
			fmt.Fprintln(stderr, "rdggen: -f is empty (an unset variable?); name the inventory file")
			return nil, nil, exitUsage, false
		}
		return inventory.Reference(), nil, 0, true
	}
	var opts []inventory.Option
	if f := fs.Lookup("vcenter-allow-http"); f == nil || f.Value.String() == "true" {
		opts = append(opts, inventory.AllowHTTPVCenter())
	}
	// A regular file, or a pipe (-f /dev/stdin, <(cmd), a FIFO): a pipe is
	// read as it comes, and a signal (ctx) ends every wait for it; a device
	// or a socket is refused at once (userfile.OpenStream).
	f, err := userfile.OpenStream(ctx, file)
	var inv *inventory.Inventory
	if err == nil {
		inv, err = inventory.LoadReader(file, f, opts...)
		f.Close()
	}
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "rdggen: interrupted while reading %s\n", inventory.DisplayName(file))
		return nil, nil, exitFailed, false
	}
	var rep *inventory.Report
	var ue *userfile.Error
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "rdggen: -f: %s\n", quote.Line(err.Error()))
		return nil, nil, exitUsage, false
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

// cmdGenerate is `rdggen [generate]`; usage is the help it prints: the
// top-level one for `rdggen --help`, generate's own for `rdggen generate
// --help` and `rdggen help generate`.
func cmdGenerate(ctx context.Context, usage string, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("rdggen", usage, stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (default: the embedded reference cluster)")
	out := fs.StringP("output", "o", "./rdg-out", "output `DIR`; replaced as a whole, never left half-written; a format word\n"+
		"(json, text, yaml, …) is refused: write ./json for a directory of that name")
	quiet := fs.BoolP("quiet", "q", false, "print nothing on success (warnings still go to stderr)")
	registerAllowHTTP(fs)
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
	if isFormatWord(*out) {
		fmt.Fprintf(stderr, "rdggen: -o %s: that is an output format, and generating writes files into -o DIR; for a directory of that name write -o ./%s; -o json is the format of rdggen validate, apply, check and bench (e.g. rdggen validate -f cluster.yaml -o json)\n",
			quote.Line(*out), quote.Line(*out))
		return exitUsage
	}
	if cwd, err := os.Getwd(); err == nil && insideDir(cwd, *out) {
		fmt.Fprintf(stderr, "rdggen: the output directory %s is the current directory or holds it; rdggen replaces that directory as a whole, so give a directory of its own (e.g. -o out)\n", quote.Line(*out))
		return exitUsage
	}
	if *file != "" && filepath.Clean(*file) == filepath.Clean(*out) {
		fmt.Fprintf(stderr, "rdggen: -o %s is the inventory itself; -o names the directory to write the files into (e.g. -o out)\n", quote.Line(*out))
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
Warnings (valid, but probably not meant) go to stderr as
"rdggen: warning: FILE:LINE:COL: field: text" and do not change the exit status.
With -o json, one document on stdout instead (schema rdggen.validate/v1,
described in docs/json.md), findings and warnings in it.
Exit status 0 when valid, 1 when not, 2 when FILE cannot be read or a flag
is wrong (a usage error).
`

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", usageValidate, stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (default: the embedded reference cluster)")
	output := fs.StringP("output", "o", "text", "`FORMAT` of stdout: text, or json (the findings as one document)")
	registerAllowHTTP(fs)
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	if err := checkFormat("validate", *output); err != nil {
		fmt.Fprintf(stderr, "rdggen: %v\n", err)
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

Credentials and keys are checked once, before anything is contacted: SSH
(ssh-agent, --identity or the password variable) for the switches and VMs,
$GOVC_USERNAME and $GOVC_PASSWORD for vCenter, and the --keys directory.

Exit status: 0 everything matches or was changed, 1 the inventory is invalid
(nothing contacted), 2 usage error (also: no terminal to confirm on and no
--yes; missing credentials or known_hosts; worker keys that cannot be
trusted or made), 3 a machine or target failed, the push was declined, or it
was interrupted.
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
	checks := append(conn.check(), checkFormat("apply", *output))
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

// Output formats of validate, apply and check (-o).
var outputFormats = []string{"text", "json"}

// formatWords are what -o means as a format in rdggen or in the tools its
// users know (kubectl, terraform, docker, gh, govc): as a generation DIR
// such a word is a slip, never meant.
var formatWords = []string{"json", "text", "txt", "yaml", "yml", "wide", "name", "table", "csv", "tsv", "xml", "html",
	"raw", "plain", "jsonl", "ndjson", "hcl", "toml", "go-template", "go-template-file", "template", "templatefile",
	"jsonpath", "jsonpath-file", "jsonpath-as-json", "custom-columns", "custom-columns-file"}

// isFormatWord reports whether an -o value of generation is an output
// format rather than a directory: one of formatWords, in any case, or such
// a word with "=" and an argument (kubectl's -o jsonpath={…}). A value
// with a path separator (./json, json/) is a directory.
func isFormatWord(v string) bool {
	if strings.ContainsRune(v, filepath.Separator) || strings.ContainsRune(v, '/') {
		return false
	}
	word, _, _ := strings.Cut(strings.ToLower(v), "=")
	return slices.Contains(formatWords, word)
}

// checkFormat refuses an -o of validate, apply or check that is not one
// of outputFormats, saying what -o means there and where -o DIR belongs.
func checkFormat(cmd, v string) error {
	if slices.Contains(outputFormats, v) {
		return nil
	}
	return fmt.Errorf("-o %q: %s's -o is the output format: %s; the output directory -o DIR belongs to generating (rdggen -f cluster.yaml -o DIR)",
		v, cmd, strings.Join(outputFormats, " or "))
}
