package apply

import (
	"context"
	"errors"
	"slices"

	"github.com/rdggen/rdggen/internal/engines/benchrun"
	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// BenchOptions say how to reach the VMs (and, for their counters, the
// switches) and what to run.
type BenchOptions struct {
	// Common: Parallel bounds the GID-table reads and the pairs run at once
	// in a round; DryRun reads the GID tables and prints what would run;
	// Out and Events as for the targets. Confirm is ignored.
	Common
	// SSH reaches the VMs; Root is HostsOptions.Root (the GID tables are
	// read below it).
	SSH  SSH
	Root string
	// Switch, when set, reaches the switches (those with a mgmt address):
	// their ports' PFC pause and ECN counters are read before and after
	// the ib_write_bw rounds, so a slow pair's verdict says whether pauses
	// rose on its ports. On a fabric the uplinks of every leaf and spine
	// are read too. Each switch is read by its OS's engine: ONYX switches
	// over SSH (pause and ECN), Cumulus Linux ones through the NVUE API
	// (pause frames only: no documented NVUE view of ECN marks).
	Switch *SwitchOptions
	// Expect is what the outputs are judged against (bench.ExpectFor).
	Expect bench.Expect
	// RDMA runs ib_write_bw pair by pair (bench.Rounds); NCCL runs
	// all_reduce_perf over every worker.
	RDMA, NCCL bool
	// Horovod runs the guide's benchmark (tf_cnn_benchmarks under Horovod)
	// over every worker and on the first VM alone: the scaling efficiency.
	// HorovodCmd is each rank's command (nil: the VGG16 benchmark).
	Horovod    bool
	HorovodCmd []string
	// PerftestSeconds is each pair's duration (0: DefaultPerftestSeconds);
	// NCCLTest the all_reduce_perf command (nil: DefaultNCCLTest, 8 B to 4
	// GiB).
	PerftestSeconds int
	NCCLTest        []string
	// Save, when set, receives every raw output (for bench --judge).
	Save string
}

// DefaultPerftestSeconds is how long each ib_write_bw pair writes by
// default (its -D).
const DefaultPerftestSeconds = benchrun.PerftestSeconds

// DefaultNCCLTest is the default all_reduce_perf command of every rank:
// sizes from 8 B to 4 GiB, doubling, one GPU per rank.
func DefaultNCCLTest() []string { return slices.Clone(benchrun.NCCLTest) }

// ErrBenchNotReady is wrapped by Bench's error when a host has no usable
// RoCE v2 GID: nothing was run. errors.As to *BenchNotReady for the
// failed checks.
var ErrBenchNotReady = errors.New("not ready to benchmark")

// BenchNotReady lists the checks that kept Bench from running.
type BenchNotReady struct {
	Results []readiness.Result
	msg     string
}

func (e *BenchNotReady) Error() string { return e.msg }
func (e *BenchNotReady) Unwrap() error { return ErrBenchNotReady }

// Bench measures the cluster through the workers: ib_write_bw between
// the hosts, every host once as client and once as server, in rounds of
// disjoint pairs (bench.Rounds: 2 rounds for an even count, 3 for odd; on
// a leaf-spine fabric bench.RoundsByLeaf, pairs across leaves first, and
// a verdict per leaf pair; on hosts with several rails bench.RailRounds,
// rail r of a host only with rail r of another, each end on its rail's
// RDMA device, GID and address, and a verdict per rail),
// all_reduce_perf launched with the cluster's mpirun line and, with
// o.Horovod, the Horovod benchmark on the cluster and on one VM; it reads
// every host's GID table first (every rail's) and uses each host's RoCE v2
// GID index; all_reduce_perf is judged against the rails' sum, with the
// rails' verdicts beside it (bench.Expect.PairVerdicts). It
// returns the judged document (rdggen.bench/v2). The error is a
// *BenchNotReady when nothing could run, or ctx's when interrupted (every
// process started is stopped; the document holds what was measured).
func Bench(ctx context.Context, inv *inventory.Inventory, o BenchOptions) (*bench.Document, error) {
	if inv == nil {
		return nil, ErrNoInventory
	}
	r := o.begin("bench")
	defer r.end()
	ssh := o.SSH.remote()
	hosts := HostsOptions{Common: Common{Parallel: o.Parallel}, SSH: o.SSH, Root: o.Root}
	bo := benchrun.Options{
		Dial:  func(ctx context.Context, h *inventory.Host) (*remote.SSHConn, error) { return ssh.Dial(ctx, h) },
		Hosts: hosts.engine(r), Parallel: o.parallel(), Expect: o.Expect, RDMA: o.RDMA, NCCL: o.NCCL,
		Horovod: o.Horovod, HorovodCmd: o.HorovodCmd, PerftestSeconds: o.PerftestSeconds, NCCLTest: o.NCCLTest, Save: o.Save, DryRun: o.DryRun,
		Out: r.track.Writer(), Track: r.track,
	}
	if o.Switch != nil {
		bo.Counters = benchCounters(inv, *o.Switch, r)
	}
	doc, err := benchrun.Run(ctx, inv, bo)
	var nr *benchrun.NotReady
	if errors.As(err, &nr) {
		return nil, &BenchNotReady{Results: nr.Results, msg: nr.Error()}
	}
	return doc, err
}

// benchCounters reads the PFC pause and ECN counters of every data port
// and fabric uplink of the switches with a mgmt address, each OS's through
// its engine (switchos.Engine.Counters: ONYX over SSH; Cumulus Linux
// through the NVUE API, pause frames only, ECN -1: not read). The counters
// read are returned with the error of those that were not.
func benchCounters(inv *inventory.Inventory, sw SwitchOptions, r *run) func(ctx context.Context) ([]benchrun.PortCount, error) {
	return func(ctx context.Context) ([]benchrun.PortCount, error) {
		var out []benchrun.PortCount
		var errs []error
		oses, err := switchos.Of(inv)
		errs = append(errs, err)
		for _, os := range oses {
			var sws []inventory.Switch
			for _, s := range inv.SwitchesOf(os.OS) {
				if s.Mgmt != "" {
					sws = append(sws, s)
				}
			}
			if len(sws) == 0 {
				continue
			}
			cs, err := os.Engine(sw.settings(r)).Counters(ctx, inv, sws)
			for _, c := range cs {
				out = append(out, benchrun.PortCount{Port: c.Port, Pause: c.Pause, ECN: c.ECN})
			}
			errs = append(errs, err)
		}
		return out, errors.Join(errs...)
	}
}
