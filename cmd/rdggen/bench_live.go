package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// liveBench is `rdggen bench -f cluster.yaml`: the benchmarks run on the
// cluster (apply.Bench) and judged.
type liveBench struct {
	file, evidence, only, save string
	link                       float64
	nics, seconds              int
	json, dryRun               bool
	horovod, horovodCmdSet     bool
	ncclTest, horovodCmd       []string
	conn                       *connFlags
	sw                         *applyTarget
}

func (b *liveBench) run(ctx context.Context, fs *pflag.FlagSet, stdout, stderr io.Writer, getenv func(string) string) int {
	var problems []error
	switch b.only {
	case "", "rdma", "nccl", "horovod":
	default:
		problems = append(problems, fmt.Errorf("--only %q: want rdma, nccl or horovod", quote.Line(b.only)))
	}
	if b.horovod && b.only != "" && b.only != "horovod" {
		problems = append(problems, fmt.Errorf("--horovod with --only %s: --only runs one part; use --only horovod for the Horovod benchmark alone", b.only))
	}
	if b.horovodCmdSet && !b.horovod && b.only != "horovod" {
		problems = append(problems, errors.New("--horovod-cmd without --horovod (or --only horovod): the Horovod benchmark is not run"))
	}
	if len(b.horovodCmd) == 0 && (b.horovod || b.only == "horovod") && b.horovodCmdSet {
		problems = append(problems, errors.New("--horovod-cmd is empty: name the command of every rank, e.g. python /examples/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py --model=resnet50 --variable_update=horovod"))
	}
	if b.seconds < 1 || b.seconds > 3600 {
		problems = append(problems, fmt.Errorf("--perftest-seconds %d: want 1 to 3600", b.seconds))
	}
	if len(b.ncclTest) == 0 {
		problems = append(problems, errors.New("--nccl-test is empty: name the all_reduce_perf command, e.g. all_reduce_perf -b 8 -e 4G -f 2 -g 1"))
	}
	if b.save != "" {
		if fi, err := os.Stat(b.save); err == nil && !fi.IsDir() {
			problems = append(problems, fmt.Errorf("--save %s is a file: name a directory (made if missing) for the raw outputs", quote.Line(b.save)))
		}
	}
	problems = append(problems, b.conn.check()...)
	if code, ok := usageErrors(stderr, problems); !ok {
		return code
	}
	if b.file == "" {
		fmt.Fprintln(stderr, "rdggen: bench needs -f cluster.yaml: it runs benchmarks on real machines (rdggen bench --judge FILE... judges saved outputs)")
		return exitUsage
	}
	targets := vmsOnly()
	targets[0].accept = func(inv *inventory.Inventory) error {
		if len(inv.Hosts) < 2 {
			return fmt.Errorf("bench: %s has one host: the bench measures between hosts (ib_write_bw pairs, NCCL across nodes), so there is nothing to measure", inv.File)
		}
		return nil
	}
	env, code, ok := b.conn.load(ctx, fs, b.file, targets, b.dryRun, getenv, stderr)
	if !ok {
		return code
	}
	inv := env.Inv
	e := bench.ExpectFor(inv, b.link)
	if err := nicsPerNode(&e, b.nics, fs.Changed("nics-per-node"), inv.File); err != nil {
		fmt.Fprintf(stderr, "rdggen: bench: %s\n", quote.Line(err.Error()))
		return exitUsage
	}
	if b.evidence != "" {
		ev, err := readEvidence(ctx, b.evidence)
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: --evidence %s: %s\n", quote.Line(b.evidence), quote.Line(err.Error()))
			return exitUsage
		}
		e.Evidence = ev
	}
	text, _ := textOutput(b.json, stdout, stderr)
	opts := apply.BenchOptions{
		Common: apply.Common{Parallel: env.Parallel, DryRun: b.dryRun, Out: text},
		SSH:    env.vmSSH(), Root: env.VM.root, Expect: e,
		RDMA: b.only == "" || b.only == "rdma", NCCL: b.only == "" || b.only == "nccl", Horovod: b.horovod || b.only == "horovod",
		HorovodCmd: b.horovodCmd, PerftestSeconds: b.seconds, NCCLTest: b.ncclTest, Save: b.save,
	}
	withMgmt := slices.ContainsFunc(inv.Switches, func(s inventory.Switch) bool { return s.Mgmt != "" })
	// Each switch OS reads its switches with its own credentials
	// (apply.SwitchFlags.CountersMissing).
	switch {
	case !opts.RDMA:
	case !withMgmt:
		fmt.Fprintln(text, "rdggen bench: no switch has a mgmt address: the PFC pause and ECN counters of the data ports are not read")
	case b.sw.countersMissing(env) != "":
		fmt.Fprintf(text, "rdggen bench: no %s: their counters are not read\n", b.sw.countersMissing(env))
	default:
		so := b.sw.switchOptions(env)
		opts.Switch = &so
	}
	fmt.Fprintf(text, "rdggen bench: %s: %d host(s), link %g Gb/s × %d NIC(s) per node\n", inv.File, len(inv.Hosts), e.LinkGbps, e.NICsPerNode)
	doc, err := apply.Bench(ctx, inv, opts)
	var nr *apply.BenchNotReady
	if errors.As(err, &nr) {
		for _, r := range nr.Results {
			fmt.Fprintf(stderr, "rdggen bench: %s\n", quote.Terminal(r.Line()))
		}
		fmt.Fprintf(stderr, "rdggen bench: not run: %s; fix what the lines above say, then run again\n", nr.Error())
		return exitFailed
	}
	if doc == nil {
		fmt.Fprintf(stderr, "rdggen: bench: %s\n", quote.Line(err.Error()))
		return exitFailed
	}
	if b.dryRun {
		return exitOK
	}
	var tally benchTally
	for _, in := range doc.Inputs {
		if in.Error != "" {
			fmt.Fprintf(text, "%s: %s\n", in.Name, quote.Terminal(in.Error))
			tally.errs++
			continue
		}
		tally.print(text, in.Name+":", in.Verdicts)
	}
	if b.json {
		if err := doc.Encode(stdout); err != nil {
			fmt.Fprintf(stderr, "rdggen: write the JSON document: %v\n", err)
			return exitFailed
		}
	}
	verdict := "all passed"
	if !doc.OK {
		verdict = "NOT at the pass lines"
	}
	fmt.Fprintf(stderr, "rdggen bench: %s: %s\n", verdict, tally.String())
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(stderr, "rdggen bench: interrupted: every benchmark process it started was stopped")
		return exitFailed
	case err != nil:
		fmt.Fprintf(stderr, "rdggen: bench: %s\n", quote.Line(err.Error()))
		return exitFailed
	case tally.pass+tally.fail+tally.short == 0:
		fmt.Fprintln(stderr, "rdggen bench: nothing was measured: no benchmark ran to its end (the errors above); 'rdggen check --target workers' says whether the workers are up")
		return exitFailed
	case doc.OK:
		return exitOK
	}
	return exitInvalid
}
