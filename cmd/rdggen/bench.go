package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/atomicfile"
	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

const usageBench = `Usage: rdggen bench -f cluster.yaml [--only rdma|nccl|horovod] [--horovod] [--dry-run] [-o json] [flags]
       rdggen bench --judge FILE... [-f cluster.yaml] [--link-gbps N] [--nics-per-node N]
                    [--mtu N] [--gid-index N] [--evidence check.json] [--svg DIR] [-o json]

Measures the cluster through its workers (started by 'rdggen apply --target
workers') and judges each measurement against a pass line derived from the
data link's speed (the inventory's nic.speed_gbps, 100 Gb/s by default):
  - RDMA, pair by pair: ib_write_bw (perftest) in the workers, the RDMA device
    and RoCE v2 GID index of each host (read from its GID table first, as
    'rdggen check --target hosts' does), the lossless traffic class, Gb/s;
    every host once as client and once as server along a ring, in rounds of
    disjoint pairs that run at once (2 rounds for an even host count, 3 for
    odd: never more). Pass: the BW average at least 90 % of the link speed
    (Mellanox/ngc_multinode_perf). Slow pairs name the hosts and switch ports
    they share and, where the switches have a mgmt address, whether PFC
    pauses or ECN marks rose on those ports during the rounds. On a
    leaf-spine fabric the ring alternates leaves, so nearly every pair
    crosses a spine (a pair inside one leaf never does), the pairs are
    also reported per leaf pair (min / median Gb/s), and a shortfall only
    across leaves names the leaves' uplinks, the spines and their counters;
  - NCCL, the whole cluster: all_reduce_perf (nccl-tests built with MPI=1, in
    the image) launched with the cluster's mpirun line and NCCL environment,
    NCCL_DEBUG=INFO, sizes 8 B to 4 GiB. Pass: the out-of-place busbw of the
    largest size at least 90 % of 12 GB/s per 100 Gb/s NIC (sjeaugey in
    NVIDIA/nccl-tests#119), never "# Avg bus bandwidth", the mean over all
    sizes; and the log shows RDMA (not TCP sockets) with GPUDirect RDMA on
    the inter-node channels;
  - with --horovod (or --only horovod), the guide's benchmark: the Horovod
    benchmark (tf_cnn_benchmarks, VGG16, one GPU per rank, or --horovod-cmd)
    over every worker, then on the first VM alone. Pass: images/sec per GPU
    on the cluster at least 80 % of one VM's (Horovod's maintainers measured
    VGG-16 on 16 GPUs at 78 % over TCP and 86 % over RDMA, horovod#5).
Each verdict that fails or errors names its cause: the layer, what the
output shows, and the fix; one too short to judge says what the output
lacks. --dry-run reads the GID tables and prints what would run. Ctrl-C
stops every process the bench started. --save DIR keeps the raw outputs,
which --judge reads again.

With --judge, saved outputs made by hand or by another tool are judged
offline instead, each FILE's kind detected ('-' reads stdin):
  - perftest reports (ib_write_bw, ib_read_bw, ib_send_bw; client side): the
    BW average of the largest message size, and the header's MTU and link
    type against the inventory's or --mtu's (the GID index against
    --gid-index);
  - nccl-tests output (all_reduce_perf and the collectives with the same
    table): a sweep that stops below 1 GiB, a table cut short, a run on one
    host, or a table whose largest sizes are unreadable or missing is too
    short to judge; rows lost within the table are named in the verdict;
  - the NCCL_DEBUG=INFO log, in that output or alone: the transport and
    whether the inter-node channels use GPUDirect RDMA (a log with only
    [send] lines without /GDRDMA is too short to tell).
A FILE that holds several kinds (a nccl-tests table and an ib_write_bw run)
is judged for each, and one with several nccl-tests or perftest runs saved
one after the other (a script or tee transcript) run by run, each under its
own heading. A FILE is read once, line by line, in bounded memory, up to
1 GiB. With --evidence, the results of 'rdggen check -o json' say which of
the usual causes it is.

--svg DIR writes a picture of each nccl-tests sweep (busbw and algbw
against the message size, the pass line, the link's ceiling and the size
where busbw reaches its plateau) and of each file's perftest runs
(bandwidth per run against the pass line); a live run writes them with
--save DIR.

A file from elsewhere is judged against the link it ran on: --link-gbps,
--nics-per-node and --mtu (the data network's Ethernet MTU) stand in for
an inventory, and the last lines say where each parameter came from.
Without -f or --mtu the MTU is not checked. A figure above what that link
can carry (a perftest BW above the link speed, a busbw above twice the
NICs' bandwidth) is an error about the file or the parameters, never a
pass.

With -o json the verdicts are one JSON document on stdout (schema
rdggen.bench/v2, described in docs/json.md); the text goes to stderr.

Examples:
  rdggen bench -f cluster.yaml
  rdggen bench -f cluster.yaml --dry-run
  rdggen bench -f cluster.yaml --only rdma --save bench-out
  rdggen bench -f cluster.yaml --horovod
  rdggen bench --judge ib_write_bw.txt all_reduce.log
  rdggen bench --judge -f cluster.yaml --evidence check.json all_reduce.log
  mpirun … all_reduce_perf -b 8 -e 4G -f 2 -g 1 2>&1 | rdggen bench --judge -

Exit status: 0 every verdict passed, 1 a verdict failed, could not be
judged or errored (or the inventory is invalid), 2 usage error (also: a FILE
that cannot be read or is larger than 1 GiB, --link-gbps outside 1 to 1600,
missing credentials or known_hosts), 3 the bench could not run (a host
without a usable RoCE v2 GID, an unreachable VM), measured nothing (no
benchmark ran to its end, e.g. the workers are stopped) or was interrupted.
`

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlagSet("bench", usageBench, stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (required to run; --judge defaults to the embedded reference cluster)")
	judge := fs.Bool("judge", false, "judge the saved outputs named as arguments instead of running the benchmarks")
	link := fs.Float64("link-gbps", 0, "data link speed per NIC, `Gb/s`, 1 to 1600 (default: the inventory's nic.speed_gbps, 100)")
	nics := fs.Int("nics-per-node", 1, "data NICs per node NCCL uses, `N` (the busbw pass line scales with it; an inventory with several rails gives one per rail)")
	mtu := fs.Int("mtu", 0, "--judge: the data network's Ethernet `MTU` the files' hosts ran, 1280 to 9216, whose largest RoCE MTU perftest's header must show (default: the -f inventory's data_mtu; without -f not checked)")
	evidence := fs.String("evidence", "", "`FILE` of 'rdggen check -o json' whose results explain the shortfalls")
	gid := fs.Int("gid-index", -1, "--judge: the RoCE v2 GID `INDEX` of the host the files come from, compared with theirs (default: not compared)")
	fs.Lookup("gid-index").DefValue = "0" // pflag prints no default for "0": the usage says "not compared", not "(default -1)"
	output := fs.StringP("output", "o", "text", "`FORMAT` of stdout: text, or json (the verdicts as one document; text on stderr)")
	only := fs.String("only", "", "run only `PART`: rdma (ib_write_bw pairs), nccl (all_reduce_perf) or horovod (the Horovod benchmark)")
	dryRun := fs.Bool("dry-run", false, "read the GID tables and print the schedule and the commands; run nothing")
	seconds := fs.Int("perftest-seconds", apply.DefaultPerftestSeconds, "how long each ib_write_bw pair writes, `S` seconds (ib_write_bw -D)")
	ncclTest := fs.String("nccl-test", strings.Join(apply.DefaultNCCLTest(), " "), "the all_reduce_perf `COMMAND` of every rank (words split at spaces)")
	save := fs.String("save", "", "`DIR` that receives every raw output (for --judge later) and an SVG of the sweep and of each round of pairs")
	svgDir := fs.String("svg", "", "--judge: `DIR` that receives an SVG per nccl-tests sweep (busbw and algbw against size) and per file of perftest runs (bandwidth per run against the pass line)")
	hvd := fs.Bool("horovod", false, "also run the guide's Horovod benchmark (tf_cnn_benchmarks VGG16) on the cluster and on one VM: the scaling efficiency")
	hvdCmd := fs.String("horovod-cmd", "", "the Horovod benchmark `COMMAND` of every rank (words split at spaces; default the VGG16 benchmark at "+horovod.BenchmarkScript+")")
	sw := switchTarget()
	conn := registerConnFlags(fs, []*applyTarget{sw}, "VMs read and pairs run at once, `N` ≥ 1")
	conn.checking = true
	for _, name := range sw.applyOnly {
		_ = fs.MarkHidden(name)
	}
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdggen: %s (see rdggen bench --help)\n", quote.Line(err.Error()))
		return exitUsage
	}
	var problems []error
	if *output != "text" && *output != "json" {
		problems = append(problems, fmt.Errorf("--output %q: want text or json", quote.Line(*output)))
	}
	if fs.Changed("link-gbps") && !(*link >= bench.MinLinkGbps && *link <= bench.MaxLinkGbps) { // NaN fails both
		problems = append(problems, fmt.Errorf("--link-gbps %g: want %d to %d Gb/s (the data link speed of one NIC), e.g. 100",
			*link, bench.MinLinkGbps, bench.MaxLinkGbps))
	}
	if *gid < -1 || *gid > 255 {
		problems = append(problems, fmt.Errorf("--gid-index %d: want 0 to 255 (a GID table index)", *gid))
	}
	if fs.Changed("mtu") && (*mtu < 1280 || *mtu > 9216) {
		problems = append(problems, fmt.Errorf("--mtu %d: want 1280 to 9216 (the data network's Ethernet MTU, e.g. 9000)", *mtu))
	}
	if *nics < 1 || *nics > 64 {
		problems = append(problems, fmt.Errorf("--nics-per-node %d: want 1 to 64", *nics))
	}
	if code, ok := usageErrors(stderr, problems); !ok {
		return code
	}
	if !*judge && fs.Changed("mtu") {
		fmt.Fprintln(stderr, "rdggen: bench: --mtu is for --judge; a run takes the MTU from the inventory (data_mtu)")
		return exitUsage
	}
	if !*judge && fs.Changed("svg") {
		fmt.Fprintln(stderr, "rdggen: bench: --svg is for --judge; a run writes its SVGs with --save DIR")
		return exitUsage
	}
	if !*judge {
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "rdggen: bench: files given without --judge; to judge saved outputs: rdggen bench --judge %s\n", quote.Line(strings.Join(fs.Args(), " ")))
			return exitUsage
		}
		live := liveBench{file: *file, link: *link, nics: *nics, evidence: *evidence, json: *output == "json", only: *only,
			dryRun: *dryRun, seconds: *seconds, ncclTest: strings.Fields(*ncclTest), save: *save, conn: conn, sw: sw,
			horovod: *hvd, horovodCmd: strings.Fields(*hvdCmd), horovodCmdSet: fs.Changed("horovod-cmd")}
		return live.run(ctx, fs, stdout, stderr, getenv)
	}
	for _, f := range []string{"only", "dry-run", "perftest-seconds", "nccl-test", "save", "horovod", "horovod-cmd"} {
		if fs.Changed(f) {
			fmt.Fprintf(stderr, "rdggen: bench --judge: --%s is for running the benchmarks; --judge only reads files\n", f)
			return exitUsage
		}
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "rdggen: bench --judge needs at least one FILE (a perftest report, nccl-tests output or NCCL log; '-' for stdin)")
		return exitUsage
	}
	inv, code, ok := load(ctx, fs, *file, stderr)
	if !ok {
		return code
	}
	e := bench.ExpectFor(inv, *link) // 0: the inventory's nic.speed_gbps
	if err := nicsPerNode(&e, *nics, fs.Changed("nics-per-node"), *file); err != nil {
		fmt.Fprintf(stderr, "rdggen: bench: %s\n", quote.Line(err.Error()))
		return exitUsage
	}
	e.GIDIndex = *gid
	judgeSources(&e, *file, fs.Changed("link-gbps"), fs.Changed("nics-per-node"), *mtu)
	if *evidence != "" {
		ev, err := readEvidence(ctx, *evidence)
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: --evidence %s: %s\n", quote.Line(*evidence), quote.Line(err.Error()))
			return exitUsage
		}
		e.Evidence = ev
	}
	// Each file is read and judged before anything is printed, so that a
	// file that cannot be read is a usage error with no verdicts; only its
	// verdicts are kept, not its bytes.
	files := make([]judged, fs.NArg())
	stdinUsed := false
	for i, name := range fs.Args() {
		display := name
		if name == "-" {
			if stdinUsed {
				fmt.Fprintln(stderr, "rdggen: bench: '-' (stdin) given twice")
				return exitUsage
			}
			stdinUsed = true
			display = "(stdin)"
		}
		display = quote.Line(display)
		parts, err := judgeInput(ctx, name, e)
		var re readErr
		if errors.As(err, &re) {
			err = re.err
			if errors.Is(err, errJudgeInputTooLarge) {
				err = fmt.Errorf("%s: %w", display, err)
			}
			fmt.Fprintf(stderr, "rdggen: bench: %s\n", quote.Line(err.Error()))
			return exitUsage
		}
		files[i] = judged{display, parts, err}
	}

	text := stdout
	if *output == "json" {
		text = stderr
	}
	doc := bench.NewDocument(inv.Name, inv.File, e)
	var tally benchTally
	for _, f := range files {
		if f.err != nil {
			in := bench.Input{Name: f.display, Kind: bench.KindUnknown, Error: f.err.Error()}
			tally.unknown++
			fmt.Fprintf(text, "%s: %s\n", f.display, in.Error)
			doc.Add(in)
			continue
		}
		for _, p := range f.parts {
			heading := f.display + ": " + kindText(p.Kind)
			if p.Name != "" {
				heading += ", " + p.Name
			}
			tally.print(text, heading, p.Verdicts)
			doc.Add(bench.Input{Name: f.display, Kind: p.Kind, Part: p.Name, Verdicts: p.Verdicts})
		}
	}
	if *svgDir != "" {
		if err := writeJudgeSVGs(*svgDir, fs.Args(), files, e); err != nil {
			fmt.Fprintf(stderr, "rdggen: --svg: %s\n", quote.Line(err.Error()))
			return exitInvalid
		}
	}
	if *output == "json" {
		if err := doc.Encode(stdout); err != nil {
			fmt.Fprintf(stderr, "rdggen: write the JSON document: %v\n", err)
			return exitInvalid
		}
	}
	summary := tally.String()
	if tally.unknown > 0 {
		summary += fmt.Sprintf(", %d file(s) not recognized", tally.unknown)
	}
	if tally.decided { // say what the pass lines came from when a verdict was decided against them
		fmt.Fprintf(stderr, "rdggen bench: judged against %s\n", judgeParams(e))
	}
	fmt.Fprintf(stderr, "rdggen bench: %d file(s) at %g Gb/s × %d NIC(s) per node: %s\n", len(files), e.LinkGbps, e.NICsPerNode, summary)
	if doc.OK {
		return exitOK
	}
	return exitInvalid
}

// writeJudgeSVGs writes into dir, for each judged file (names as given,
// files as judged), NAME.sweep.svg per nccl-tests run (NAME.run-N.sweep.svg
// when it holds several) and NAME.perftest.svg with one bar per perftest
// run; NAME is the file's base name without its extension ("stdin" for
// '-'; a second file of the same name gets NAME.2). Each is written beside
// its name and renamed over it (atomicfile.Replace): a link someone put in
// dir under that name is replaced, never written through.
func writeJudgeSVGs(dir string, names []string, files []judged, e bench.Expect) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	used := map[string]int{}
	for i, f := range files {
		base := filepath.Base(names[i])
		if names[i] == "-" {
			base = "stdin"
		}
		base = strings.TrimSuffix(base, filepath.Ext(base))
		if n := used[base]; n > 0 { // two files of the same name from different directories
			used[base]++
			base = fmt.Sprintf("%s.%d", base, n+1)
		} else {
			used[base] = 1
		}
		var runs []*bench.Perftest
		var runNames []string
		for _, p := range f.parts {
			switch {
			case p.NCCLTests != nil:
				name := base + ".sweep.svg"
				title := names[i] + ": " + orDefaultStr(p.NCCLTests.Program, "nccl-tests")
				if p.NCCLTests.Runs > 1 {
					name = fmt.Sprintf("%s.run-%d.sweep.svg", base, p.NCCLTests.Run)
					title += ", " + p.Name
				}
				title += fmt.Sprintf(" at %d × %g Gb/s per node", e.NICsPerNode, e.LinkGbps)
				if err := atomicfile.Replace(filepath.Join(dir, name), bench.SweepSVG(title, p.NCCLTests, e), 0o644); err != nil {
					return err
				}
			case p.Perftest != nil:
				runs = append(runs, p.Perftest)
				n := orDefaultStr(p.Perftest.Test, "perftest")
				if p.Perftest.Runs > 1 {
					n = fmt.Sprintf("run %d: %s", p.Perftest.Run, n)
				}
				runNames = append(runNames, n)
			}
		}
		if len(runs) > 0 {
			bidi := runs[0].Bidirectional
			ceiling := e.LinkGbps
			if bidi {
				ceiling *= 2
			}
			svg := bench.BarsSVG(names[i]+": perftest", bench.PerftestBars(runNames, runs, e), bench.PerftestPassLine(e.LinkGbps, bidi), ceiling)
			if err := atomicfile.Replace(filepath.Join(dir, base+".perftest.svg"), svg, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func orDefaultStr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// judgeSources fills e's parameter sources for --judge: each from its
// flag, else the inventory given with -f, else a default that says so.
// Without -f the reference inventory's data_mtu (1500) says nothing about
// a file from elsewhere, so the MTU is not checked unless --mtu is given;
// nor is the file known to come from a vSphere VM (e.VSphere): its causes
// then claim only what it shows.
func judgeSources(e *bench.Expect, file string, linkSet, nicsSet bool, mtu int) {
	e.VSphere = file != ""
	inv := "inventory " + quote.Line(file)
	switch {
	case linkSet:
		e.LinkFrom = "--link-gbps"
	case file != "":
		e.LinkFrom = inv + " (the slowest host's nic.speed_gbps)"
	default:
		e.LinkFrom = "default: the deployment guide's 100 Gb/s; no -f inventory or --link-gbps"
	}
	switch {
	case e.Rails != nil:
		e.NICsFrom = inv + fmt.Sprintf(" (%d rails, one NIC each)", len(e.Rails))
	case nicsSet:
		e.NICsFrom = "--nics-per-node"
	default:
		e.NICsFrom = "default: 1; no --nics-per-node"
	}
	switch {
	case mtu > 0:
		e.DataMTU, e.MTU = mtu, hostqos.RoCEPathMTU(mtu)
		e.MTUFrom = fmt.Sprintf("--mtu %d", mtu)
	case file != "":
		e.MTUFrom = inv + fmt.Sprintf(" (data_mtu %d)", e.DataMTU)
	default:
		e.DataMTU, e.MTU = 0, 0
		e.MTUFrom = "not checked: no -f inventory or --mtu"
	}
}

// nicsPerNode sets e's NICs per node from --nics-per-node (nics; set when
// given): on hosts with several rails (e.Rails, from the inventory) they
// are the rails, one NIC each, and busbw's line is their sum
// (bench.BusBWPassLineRails), so the flag is refused unless it says the
// same.
func nicsPerNode(e *bench.Expect, nics int, set bool, file string) error {
	if e.Rails == nil {
		e.NICsPerNode = nics
		return nil
	}
	if set && nics != len(e.Rails) {
		return fmt.Errorf("--nics-per-node %d: the hosts of %s have %d rails, one NIC each, and busbw is judged against the rails' sum: leave the flag out", nics, file, len(e.Rails))
	}
	return nil
}

// judgeParams is the line that says what --judge compared with and where
// each parameter came from.
func judgeParams(e bench.Expect) string {
	mtu := "RDMA MTU " + e.MTUFrom
	if e.MTU > 0 {
		mtu = fmt.Sprintf("RDMA MTU %d B (%s)", e.MTU, e.MTUFrom)
	}
	return fmt.Sprintf("link %g Gb/s (%s), %d NIC(s) per node (%s), %s", e.LinkGbps, e.LinkFrom, e.NICsPerNode, e.NICsFrom, mtu)
}

// maxJudgeInput is the most bytes `bench --judge` reads of one FILE (or of
// stdin): 1 GiB, some 17 times the NCCL_DEBUG=INFO output of a sweep over
// 7,235 nodes (60 MB). The judge reads a file once, line by line, in
// memory that does not grow with the file (bench.JudgeReader); the limit
// only stops an input that never ends (/dev/zero, a pipe left open).
const maxJudgeInput = 1 << 30

var errJudgeInputTooLarge = fmt.Errorf("more than %d MiB, the most bench --judge reads of one input; judge the benchmark's own output (or cut the job's log to it)", maxJudgeInput>>20)

// readErr is an error reading a judge input (a usage error), as opposed to
// a file that is none of the formats.
type readErr struct{ err error }

func (e readErr) Error() string { return e.err.Error() }
func (e readErr) Unwrap() error { return e.err }

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// judgeInput judges name ("-": stdin) as it reads it, at most
// maxJudgeInput bytes. An error reading it (errJudgeInputTooLarge after
// maxJudgeInput + 1 bytes) is a readErr; otherwise the error is
// bench.JudgeReader's.
func judgeInput(ctx context.Context, name string, e bench.Expect) ([]bench.Part, error) {
	var r io.Reader
	if name == "-" {
		r = console.In
		if r == nil {
			r = os.Stdin
		}
	} else {
		// A regular file or a pipe (<(cmd), a FIFO), read as it comes;
		// a signal (ctx) ends every wait for a pipe's writer and data, and
		// a device or a socket is refused (userfile.OpenStream).
		f, err := userfile.OpenStream(ctx, name)
		if err != nil {
			return nil, readErr{err}
		}
		defer f.Close()
		if st, ok := f.(interface{ Stat() (fs.FileInfo, error) }); ok {
			if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > maxJudgeInput {
				return nil, readErr{errJudgeInputTooLarge}
			}
		}
		r = f
	}
	c := &countReader{r: io.LimitReader(r, maxJudgeInput+1)}
	parts, err := bench.JudgeReader(c, e)
	if c.n > maxJudgeInput {
		return nil, readErr{errJudgeInputTooLarge}
	}
	if err != nil && !errors.Is(err, bench.ErrNotRecognized) {
		if name != "-" {
			return nil, readErr{err} // *PathError names the file
		}
		return nil, readErr{fmt.Errorf("(stdin): %w", err)}
	}
	return parts, err
}

// judged is one --judge FILE: its name for the output, and its parts or
// why it has none.
type judged struct {
	display string
	parts   []bench.Part
	err     error
}

// benchTally counts verdicts by status for bench's last line.
type benchTally struct {
	pass, fail, short, errs, unknown int
	// decided is true when a verdict passed, failed or errored against a
	// pass line or the expected MTU.
	decided bool
}

// print writes an input's heading and its verdicts (indented, each cause on
// its own line) and counts them.
func (t *benchTally) print(w io.Writer, heading string, vs []bench.Verdict) {
	fmt.Fprintln(w, heading)
	for _, l := range bench.Lines(vs) {
		for _, part := range strings.Split(l, "\n") {
			fmt.Fprintf(w, "  %s\n", quote.Terminal(part))
		}
	}
	for _, v := range vs {
		if v.Status != bench.StatusTooShort && (v.PassLine != nil || v.Check == bench.CheckRDMAMTU) {
			t.decided = true
		}
		switch v.Status {
		case bench.StatusPass:
			t.pass++
		case bench.StatusFail:
			t.fail++
		case bench.StatusTooShort:
			t.short++
		default:
			t.errs++
		}
	}
}

// String is "N verdict(s): N passed, N failed, N too short to judge, N
// error(s)" (a file gives a verdict per check, so the counts are of
// verdicts, not of files).
func (t *benchTally) String() string {
	return fmt.Sprintf("%d verdict(s): %d passed, %d failed, %d too short to judge, %d error(s)", t.pass+t.fail+t.short+t.errs, t.pass, t.fail, t.short, t.errs)
}

func kindText(k bench.Kind) string {
	switch k {
	case bench.KindPerftest:
		return "perftest report"
	case bench.KindNCCLTests:
		return "nccl-tests output"
	case bench.KindNCCLLog:
		return "NCCL log"
	}
	return string(k)
}

// readEvidence reads the results of an `rdggen check -o json` document:
// a regular file or a pipe (userfile.OpenStream; ctx ends every wait for
// a pipe), at most userfile.Limit bytes.
func readEvidence(ctx context.Context, path string) ([]readiness.Result, error) {
	f, err := userfile.OpenStream(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := userfile.ReadAll(f, path, userfile.Limit)
	if err != nil {
		return nil, err
	}
	var doc readiness.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON document of rdggen check -o json: %v", err)
	}
	if doc.Schema != readiness.SchemaCheck {
		return nil, fmt.Errorf("schema %q, want %q (rdggen check -o json)", doc.Schema, readiness.SchemaCheck)
	}
	return doc.Results, nil
}
