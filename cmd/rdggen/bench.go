package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

const usageBench = `Usage: rdggen bench --judge FILE... [-f cluster.yaml] [--link-gbps N] [--nics-per-node N]
                    [--gid-index N] [--evidence check.json] [-o json]

Judges saved benchmark outputs offline, made by hand or by another tool:
  - perftest reports (ib_write_bw, ib_read_bw, ib_send_bw; client side):
    the BW average of the largest message size against 90 % of the link
    speed (Mellanox/ngc_multinode_perf), and the header's MTU, GID index
    and link type against the inventory's;
  - nccl-tests output (all_reduce_perf and the collectives with the same
    table): the out-of-place busbw of the largest size against 90 % of
    12 GB/s per 100 Gb/s NIC (sjeaugey in NVIDIA/nccl-tests#119), never
    "# Avg bus bandwidth", the mean over all sizes; a sweep that stops below
    1 GiB, a table cut short or a run on one host is too short to judge;
  - the NCCL_DEBUG=INFO log, in that output or alone: the transport (RDMA
    or TCP sockets) and whether the inter-node channels use GPUDirect RDMA.
Each FILE's kind is detected ('-' reads stdin). Each verdict that is not a
pass names its cause: the layer, what the evidence shows, and the fix; with
--evidence, the results of 'rdggen check -o json' say which of the usual
causes it is.

The link speed and the expected MTU come from the inventory (-f; without it
the embedded reference cluster: 100 Gb/s, data_mtu 1500 so RDMA MTU 1024).
The GID index is each host's own (the RoCE v2 GID of its data address, which
'rdggen check --target hosts' reports): --gid-index N compares the file's
with N.

With -o json the verdicts are one JSON document on stdout (schema
rdggen.bench/v1, described in docs/json.md); the text goes to stderr.

Running the benchmarks on the cluster (plain 'rdggen bench -f cluster.yaml')
is not available yet.

Examples:
  rdggen bench --judge ib_write_bw.txt all_reduce.log
  rdggen bench --judge -f cluster.yaml --evidence check.json all_reduce.log
  mpirun … all_reduce_perf -b 8 -e 4G -f 2 -g 1 2>&1 | rdggen bench --judge -
  rdggen bench --judge --link-gbps 200 --nics-per-node 8 -o json run.log

Exit status: 0 every verdict passed, 1 a verdict failed, could not be
judged or errored (or the inventory is invalid), 2 usage error (also: a FILE
that cannot be read).
`

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench", usageBench, stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (default: the embedded reference cluster)")
	judge := fs.Bool("judge", false, "judge the saved outputs named as arguments (the only mode for now)")
	link := fs.Float64("link-gbps", 0, "data link speed per NIC, `Gb/s` (default: the inventory's nic.speed_gbps, 100)")
	nics := fs.Int("nics-per-node", 1, "data NICs per node NCCL uses, `N` (the busbw pass line scales with it)")
	evidence := fs.String("evidence", "", "`FILE` of 'rdggen check -o json' whose results explain the shortfalls")
	gid := fs.Int("gid-index", -1, "the RoCE v2 GID `INDEX` of the host the files come from, compared with theirs (default: not compared)")
	output := fs.StringP("output", "o", "text", "`FORMAT` of stdout: text, or json (the verdicts as one document; text on stderr)")
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
	if fs.Changed("link-gbps") && (*link <= 0 || *link > 100000) {
		problems = append(problems, fmt.Errorf("--link-gbps %g: want a speed above 0 Gb/s, e.g. 100", *link))
	}
	if *gid < -1 || *gid > 255 {
		problems = append(problems, fmt.Errorf("--gid-index %d: want 0 to 255 (a GID table index)", *gid))
	}
	if *nics < 1 || *nics > 64 {
		problems = append(problems, fmt.Errorf("--nics-per-node %d: want 1 to 64", *nics))
	}
	if code, ok := usageErrors(stderr, problems); !ok {
		return code
	}
	if !*judge {
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "rdggen: bench: files given without --judge; to judge saved outputs: rdggen bench --judge %s\n", quote.Line(strings.Join(fs.Args(), " ")))
			return exitUsage
		}
		fmt.Fprintln(stderr, "rdggen: bench: running the benchmarks on the cluster (ib_write_bw pairs, all_reduce_perf through the workers) is not available yet; judge saved outputs with: rdggen bench --judge FILE...")
		return exitUsage
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
	e.NICsPerNode = *nics
	e.GIDIndex = *gid
	if *evidence != "" {
		ev, err := readEvidence(*evidence)
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: --evidence %s: %s\n", quote.Line(*evidence), quote.Line(err.Error()))
			return exitUsage
		}
		e.Evidence = ev
	}
	inputs := make([][]byte, fs.NArg())
	stdinUsed := false
	for i, name := range fs.Args() {
		var b []byte
		var err error
		if name == "-" {
			if stdinUsed {
				fmt.Fprintln(stderr, "rdggen: bench: '-' (stdin) given twice")
				return exitUsage
			}
			stdinUsed = true
			in := console.In
			if in == nil {
				in = os.Stdin
			}
			b, err = io.ReadAll(in)
		} else {
			b, err = os.ReadFile(name)
		}
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: bench: %s\n", quote.Line(err.Error()))
			return exitUsage
		}
		inputs[i] = b
	}

	text := stdout
	if *output == "json" {
		text = stderr
	}
	doc := bench.NewDocument(inv.Name, inv.File, e)
	var tally struct{ pass, fail, short, errs, unknown int }
	for i, name := range fs.Args() {
		display := name
		if name == "-" {
			display = "(stdin)"
		}
		display = quote.Line(display)
		kind, vs, err := bench.Judge(inputs[i], e)
		in := bench.Input{Name: display, Kind: kind, Verdicts: vs}
		if err != nil {
			in.Error = err.Error()
			tally.unknown++
			fmt.Fprintf(text, "%s: %s\n", display, in.Error)
		} else {
			fmt.Fprintf(text, "%s: %s\n", display, kindText(kind))
			for _, l := range bench.Lines(vs) {
				for _, part := range strings.Split(l, "\n") {
					fmt.Fprintf(text, "  %s\n", quote.Terminal(part))
				}
			}
		}
		for _, v := range vs {
			switch v.Status {
			case bench.StatusPass:
				tally.pass++
			case bench.StatusFail:
				tally.fail++
			case bench.StatusTooShort:
				tally.short++
			default:
				tally.errs++
			}
		}
		doc.Add(in)
	}
	if *output == "json" {
		if err := doc.Encode(stdout); err != nil {
			fmt.Fprintf(stderr, "rdggen: write the JSON document: %v\n", err)
			return exitInvalid
		}
	}
	summary := fmt.Sprintf("%d passed, %d failed, %d too short to judge, %d error(s)", tally.pass, tally.fail, tally.short, tally.errs)
	if tally.unknown > 0 {
		summary += fmt.Sprintf(", %d file(s) not recognized", tally.unknown)
	}
	fmt.Fprintf(stderr, "rdggen bench: %d file(s) at %g Gb/s × %d NIC(s) per node: %s\n", len(inputs), e.LinkGbps, e.NICsPerNode, summary)
	if doc.OK {
		return exitOK
	}
	return exitInvalid
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

// readEvidence reads the results of an `rdggen check -o json` document.
func readEvidence(path string) ([]readiness.Result, error) {
	b, err := os.ReadFile(path)
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
