// Package benchrun is `rdggen bench` on a live cluster: it runs perftest's
// ib_write_bw between the workers pair by pair and nccl-tests'
// all_reduce_perf over every worker, through the same SSH connections and
// worker containers as `rdggen run`, and judges what they print with
// pkg/bench against pass lines from the link speed.
//
// On hosts with several rails (docs/rails.md) the pairs run rail by rail
// (bench.RailRounds): rail r of one VM only with rail r of another, each
// end on its rail's RDMA device, GID and address; they are judged per rail
// (bench.JudgeRailPairs), and all_reduce_perf against the sum of the rails
// with the rails' verdicts beside it (bench.Expect.PairVerdicts).
//
// One SSH connection per VM serves every run on it; each benchmark is a
// remote.ContainerJob, so Ctrl-C stops every process the bench started.
package benchrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdggen/rdggen/internal/atomicfile"
	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/engines/hostapply"
	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Defaults of Options.
const (
	// PerftestPort is ib_write_bw's out-of-band TCP port (perftest's
	// default), rail 0's; rail r's pairs use PerftestPort + r, so that the
	// servers of several rails can wait on one VM at once.
	PerftestPort = 18515
	// PerftestSeconds is how long each pair writes (ib_write_bw -D).
	PerftestSeconds = 5
)

// NCCLTest is the default all_reduce_perf run: sizes from 8 B to 4 GiB,
// doubling, one GPU per rank (nccl-tests built with MPI=1, one rank per
// slot). The sweep passes 1 GiB, below which bench judges nothing.
var NCCLTest = []string{"all_reduce_perf", "-b", "8", "-e", "4G", "-f", "2", "-g", "1"}

// ncclSubsystems makes NCCL print, with NCCL_DEBUG=INFO, what the verdicts
// read: the channels and their /GDRDMA (INIT), the NET decisions (NET) and
// the settings it took from the environment (ENV).
const ncclSubsystems = "NCCL_DEBUG_SUBSYS=INIT,NET,ENV"

// ncclSubsystemsRails is ncclSubsystems on hosts with several rails, with
// GRAPH: NCCL then prints "Loading topology file PATH" for the topology
// file it reads (NVIDIA/nccl src/graph/xml.cc ncclTopoGetXmlFromFile, an
// INFO of the GRAPH subsystem), which the GPU–NIC pairing cause reports
// (docs/bench.md, Several rails).
const ncclSubsystemsRails = ncclSubsystems + ",GRAPH"

// Options say how to reach the VMs and what to run.
type Options struct {
	// Dial connects to a VM; remote.SSH{...}.Dialer() in production.
	Dial func(ctx context.Context, h *inventory.Host) (*remote.SSHConn, error)
	// Hosts are the options the GID tables are read with (its Dial, Root,
	// Parallel, Track).
	Hosts hostapply.Options
	// Parallel bounds the pairs run at once within a round (≥ 1).
	Parallel int
	// Expect is what the outputs are judged against (bench.ExpectFor);
	// each pair's GID index is its client's, read from its GID table.
	Expect bench.Expect
	// RDMA and NCCL choose the parts that run; Horovod adds the guide's
	// benchmark (tf_cnn_benchmarks under Horovod) on the whole cluster and
	// on the first VM alone, judged by their scaling efficiency.
	RDMA, NCCL, Horovod bool
	// HorovodCmd is the benchmark command of every rank (nil: the guide's
	// VGG16, horovod.BenchmarkArgs at horovod.BenchmarkScript).
	HorovodCmd []string
	// PerftestSeconds is ib_write_bw's -D (0: PerftestSeconds).
	PerftestSeconds int
	// NCCLTest is the all_reduce_perf command of every rank (nil: NCCLTest).
	NCCLTest []string
	// Counters reads the switch ports' RoCE counters (on a fabric also
	// the leaves' and spines' uplinks); nil when the switches are not read
	// (the pair verdicts then say nothing of pauses). The ports it read
	// before and after the rounds are compared even when it also returns
	// an error for others.
	Counters func(ctx context.Context) ([]PortCount, error)
	// Save, when not "", is a directory that receives every raw output,
	// for `rdggen bench --judge` later.
	Save string
	// DryRun reads the GID tables and says what would run; it runs nothing.
	DryRun bool
	// Out receives the progress and plan lines; Track the phases.
	Out   io.Writer
	Track *progress.Tracker
}

// PortCount is a switch port's RoCE counters at one moment (-1: not read).
type PortCount struct {
	Port       string
	Pause, ECN int64
}

// NotReady is Run's error when a host has no usable RoCE v2 GID (or could
// not be read): nothing ran. Results are the failed checks.
type NotReady struct{ Results []readiness.Result }

func (e *NotReady) Error() string {
	return hostapply.NotReadySummary(e.Results) + ": nothing was run"
}

// Run benchmarks inv's cluster and returns the judged document. The error
// is a *NotReady when nothing could run, ctx's error when interrupted
// (with the document so far), or what stopped a part.
func Run(ctx context.Context, inv *inventory.Inventory, o Options) (*bench.Document, error) {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	railGIDs, bad := hostapply.RailGIDIndexes(ctx, inv, o.Hosts)
	if len(bad) > 0 {
		return nil, &NotReady{Results: bad}
	}
	gids := make([]int, len(railGIDs))
	for i, g := range railGIDs {
		gids[i] = g[0]
	}
	e := o.Expect
	doc := bench.NewDocument(inv.Name, inv.File, e)
	r := &runner{inv: inv, o: o, out: out, gids: gids, railGIDs: railGIDs, conns: make([][]*remote.SSHConn, len(inv.Hosts)), locks: make([]sync.Mutex, len(inv.Hosts))}
	defer r.close()
	if o.DryRun {
		r.plan()
		return doc, nil
	}
	if o.Save != "" {
		if err := os.MkdirAll(o.Save, 0o755); err != nil {
			return nil, fmt.Errorf("--save: %w", err)
		}
	}
	var pairVs []bench.Verdict
	if o.RDMA {
		in, err := r.pairs(ctx)
		doc.Add(in)
		if err != nil {
			return doc, err
		}
		pairVs = in.Verdicts
	}
	var ncclVs []bench.Verdict
	if o.NCCL {
		in, err := r.nccl(ctx, pairVs)
		doc.Add(in)
		if err != nil {
			return doc, err
		}
		ncclVs = in.Verdicts
	}
	if o.Horovod {
		in, err := r.horovod(ctx, ncclVs)
		doc.Add(in)
		if err != nil {
			return doc, err
		}
	}
	return doc, nil
}

type runner struct {
	inv  *inventory.Inventory
	o    Options
	out  io.Writer
	gids []int // each host's rail 0 GID index (the launch's)
	// railGIDs[i][r] is host i's GID index on rail r; nil: gids (one rail)
	railGIDs [][]int
	mu       sync.Mutex // out
	// conns[i] are host i's connections, one per rail it has run a pair
	// on (rail 0's also serves every other job): a pair holds one session
	// and, to stop it, a second; one connection per rail keeps a host that
	// is in a pair on every rail at once within sshd's MaxSessions (10 by
	// default, sshd_config(5)).
	conns [][]*remote.SSHConn
	locks []sync.Mutex // per host, around its dials
}

func (r *runner) printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, format, args...)
}

// conn is host i's connection for the pairs of rail rail (0: also every
// other job), dialled once.
func (r *runner) conn(ctx context.Context, i, rail int) (*remote.SSHConn, error) {
	r.locks[i].Lock()
	defer r.locks[i].Unlock()
	if rail < len(r.conns[i]) && r.conns[i][rail] != nil {
		return r.conns[i][rail], nil
	}
	c, err := r.o.Dial(ctx, &r.inv.Hosts[i])
	if err != nil {
		return nil, remote.DialError(err)
	}
	for len(r.conns[i]) <= rail {
		r.conns[i] = append(r.conns[i], nil)
	}
	r.conns[i][rail] = c
	return c, nil
}

func (r *runner) close() {
	for _, cs := range r.conns {
		for _, c := range cs {
			if c != nil {
				c.Close()
			}
		}
	}
}

// perftest is ib_write_bw's argv on host i for a pair of rail rail;
// server is the peer's address for the client (serverAddress), "" for the
// server. It writes on the rail's VF — its RDMA device
// (inventory.Horovod.RailHCA; horovod.hca on rail 0) and port, with the
// host's RoCE v2 GID of the rail's address — in the lossless class
// (--tclass, the ToS NCCL_IB_TC gives NCCL), reports Gb/s and leaves out
// the CPU-frequency warning; its out-of-band port is the rail's
// (PerftestPort + rail).
func (r *runner) perftest(i, rail int, server string) []string {
	secs := r.o.PerftestSeconds
	if secs <= 0 {
		secs = PerftestSeconds
	}
	hca := r.inv.Horovod.HCA
	if rail > 0 {
		hca = r.inv.Horovod.RailHCA(rail)
	}
	args := []string{"ib_write_bw", "-d", hca, "-i", strconv.Itoa(horovod.RDMAPort), "-x", strconv.Itoa(r.gid(i, rail)),
		"--report_gbits", "-F", "--tclass=" + strconv.Itoa(r.inv.RoCE.ToS()), "-D", strconv.Itoa(secs), "-p", strconv.Itoa(PerftestPort + rail)}
	if server != "" {
		args = append(args, server)
	}
	return args
}

// gid is host i's RoCE v2 GID index on rail rail.
func (r *runner) gid(i, rail int) int {
	if r.railGIDs == nil {
		return r.gids[i]
	}
	return r.railGIDs[i][rail]
}

// serverAddress is where the client of a pair of rail rail reaches the
// server on host i, for perftest's out-of-band exchange (the QP numbers
// and GIDs; the RDMA writes then go between the two GIDs, each the
// address of its host's rail): the server's worker on rail 0; on a rail
// r > 0 of a cluster whose workers use the host's network
// (horovod.network: host), the server's rail r address, so that the
// exchange also crosses rail r; in bridge mode the worker container
// answers on its rail 0 address only (its own network, docker0), which
// then carries the exchange.
func (r *runner) serverAddress(i, rail int) string {
	if rail == 0 || r.inv.Horovod.Network != inventory.NetworkHost {
		return r.address(i)
	}
	return r.inv.Hosts[i].Rails[rail].Address.Addr().String()
}

// ncclArgs is the mpirun line of all_reduce_perf (horovod.LaunchArgs with
// the hosts' GID indexes), NCCL's debug subsystems set for every rank.
func (r *runner) ncclArgs() []string {
	test := r.o.NCCLTest
	if len(test) == 0 {
		test = NCCLTest
	}
	subsys := ncclSubsystems
	if r.inv.MultiRail() {
		subsys = ncclSubsystemsRails
	}
	return horovod.LaunchArgs(r.inv, true, append([]string{"env", subsys}, test...), r.gids)
}

// plan prints what a run would do.
func (r *runner) plan() {
	n := len(r.inv.Hosts)
	leaves := bench.HostLeaves(r.inv)
	rounds := bench.RoundsByLeaf(leaves)
	if r.o.RDMA && r.inv.MultiRail() {
		r.planRails()
	} else if r.o.RDMA {
		r.printf("ib_write_bw: %d host(s), %d pair(s) in %d round(s) of disjoint pairs; every host once as client and once as server\n", n, pairCount(rounds), len(rounds))
		if r.inv.IsFabric() {
			cross := 0
			for _, round := range rounds {
				for _, p := range round {
					if leaves[p.Client] != leaves[p.Server] {
						cross++
					}
				}
			}
			r.printf("  leaf-spine fabric: %d of %d pair(s) across leaves (through a spine) first, %d inside one leaf\n", cross, pairCount(rounds), pairCount(rounds)-cross)
		}
		for k, round := range rounds {
			var ps []string
			for _, p := range round {
				ps = append(ps, r.inv.Hosts[p.Client].Name+" → "+r.inv.Hosts[p.Server].Name)
			}
			r.printf("  round %d: %s\n", k+1, strings.Join(ps, ", "))
		}
		if len(rounds) > 0 {
			p := rounds[0][0]
			r.printf("  e.g. in %s's worker: %s\n", r.inv.Hosts[p.Server].Name, quote.Terminal(quote.ShJoin(r.perftest(p.Server, 0, ""))))
			r.printf("  then in %s's worker: %s\n", r.inv.Hosts[p.Client].Name, quote.Terminal(quote.ShJoin(r.perftest(p.Client, 0, r.address(p.Server)))))
		}
	}
	if r.o.NCCL {
		r.printf("all_reduce_perf: in %s's worker: %s\n", r.inv.Hosts[0].Name, quote.Terminal(quote.ShJoin(r.ncclArgs())))
	}
	if r.o.Horovod {
		r.printf("Horovod benchmark: in %s's worker, over every worker: %s\n", r.inv.Hosts[0].Name, quote.Terminal(quote.ShJoin(r.horovodArgs(len(r.inv.Hosts)))))
		r.printf("  then on %s alone: %s\n", r.inv.Hosts[0].Name, quote.Terminal(quote.ShJoin(r.horovodArgs(1))))
	}
	r.printf("dry run: nothing was run\n")
}

// planRails prints the ib_write_bw part of a run on hosts with several
// rails: the rails' schedule (bench.RailRounds), its waves
// (bench.RailWaves), every round's pairs and, per rail, one pair's two
// commands (the rail's device, GID index, port and address).
func (r *runner) planRails() {
	n, k := len(r.inv.Hosts), r.inv.RailCount()
	leaves := bench.RailLeaves(r.inv)
	rounds := bench.RailRounds(leaves)
	waves := bench.RailWaves(leaves)
	total := 0
	for _, round := range rounds {
		total += len(round)
	}
	r.printf("ib_write_bw: %d host(s) × %d rails, %d pair(s) in %d round(s) of disjoint pairs; on each rail every host once as client and once as server, rail r of a host only with rail r of another\n", n, k, total, len(rounds))
	if len(waves) == 1 {
		r.printf("  %s together, in the same rounds: no two of them cross leaves through a leaf they share\n", railSpan(k))
	} else if len(waves) > 1 {
		per := len(rounds) / len(waves)
		var ws []string
		for w, rails := range waves {
			names := make([]string, len(rails))
			for j, x := range rails {
				names[j] = strconv.Itoa(x)
			}
			word := "rails"
			if len(rails) == 1 {
				word = "rail"
			}
			ws = append(ws, fmt.Sprintf("%s %s (rounds %d–%d)", word, strings.Join(names, ", "), w*per+1, (w+1)*per))
		}
		r.printf("  in %d waves, one after the other: %s: the rails of different waves cross leaves through a leaf they share, whose uplinks they would load together\n", len(waves), strings.Join(ws, "; "))
	}
	if r.inv.IsFabric() {
		cross := 0
		for _, round := range rounds {
			for _, p := range round {
				if leaves[p.Rail][p.Client] != leaves[p.Rail][p.Server] {
					cross++
				}
			}
		}
		r.printf("  leaf-spine fabric: %d of %d pair(s) across leaves (through a spine) first, %d inside one leaf\n", cross, total, total-cross)
	}
	for i, round := range rounds {
		ps := make([]string, len(round))
		for j, p := range round {
			ps[j] = r.railPairName(p)
		}
		r.printf("  round %d: %s\n", i+1, strings.Join(ps, ", "))
	}
	for rail := range k {
		for _, round := range rounds {
			j := slices.IndexFunc(round, func(p bench.RailPair) bool { return p.Rail == rail })
			if j < 0 {
				continue
			}
			p := round[j]
			r.printf("  rail %d: e.g. in %s's worker: %s\n", rail, r.inv.Hosts[p.Server].Name, quote.Terminal(quote.ShJoin(r.perftest(p.Server, rail, ""))))
			r.printf("    then in %s's worker: %s\n", r.inv.Hosts[p.Client].Name, quote.Terminal(quote.ShJoin(r.perftest(p.Client, rail, r.serverAddress(p.Server, rail)))))
			break
		}
	}
}

// railSpan is "rails 0–3" for k rails.
func railSpan(k int) string {
	if k == 2 {
		return "rails 0 and 1"
	}
	return fmt.Sprintf("rails 0–%d", k-1)
}

// railPairName is a pair's name: "client → server", with " (rail r)" on
// hosts with several rails (bench.JudgeRailPairs's subject).
func (r *runner) railPairName(p bench.RailPair) string {
	name := r.inv.Hosts[p.Client].Name + " → " + r.inv.Hosts[p.Server].Name
	if r.inv.MultiRail() {
		name += " (rail " + strconv.Itoa(p.Rail) + ")"
	}
	return name
}

func pairCount(rounds [][]bench.Pair) int {
	n := 0
	for _, r := range rounds {
		n += len(r)
	}
	return n
}

// address is where host i's worker is reached (the perftest server's
// out-of-band connection).
func (r *runner) address(i int) string {
	return horovod.WorkerAddress(r.inv, &r.inv.Hosts[i]).String()
}

// job is a ContainerJob on host i's worker.
func (r *runner) job(c *remote.SSHConn, i int, argv []string) *remote.ContainerJob {
	return &remote.ContainerJob{Conn: c, Host: r.inv.Hosts[i].Name, Container: horovod.WorkerName, Argv: argv, Grace: 5 * time.Second}
}

// pairs runs the ib_write_bw rounds (bench.RailRounds: on a fabric the
// pairs across leaves first; on hosts with several rails rail by rail, the
// rails of a wave in the same rounds) and judges them
// (bench.JudgeRailPairs: bench.JudgePairsFabric's verdicts on one rail,
// one per rail besides on several).
func (r *runner) pairs(ctx context.Context) (bench.Input, error) {
	in := bench.Input{Name: "ib_write_bw pairs", Kind: bench.KindPerftest}
	rounds := bench.RailRounds(bench.RailLeaves(r.inv))
	hp := bench.RailHostPorts(r.inv)
	var before []PortCount
	var countersErr error
	if r.o.Counters != nil && len(rounds) > 0 {
		before, countersErr = r.o.Counters(ctx)
	}
	var runs []bench.PairRun
	for k, round := range rounds {
		if ctx.Err() != nil {
			break
		}
		r.o.Track.Phase(fmt.Sprintf("ib_write_bw round %d of %d: %d pair(s)", k+1, len(rounds), len(round)), len(round))
		got := make([]bench.PairRun, len(round))
		driver.ForEach(len(round), r.o.Parallel, func(j int) {
			p := round[j]
			name := r.railPairName(p)
			r.o.Track.Begin(name)
			got[j] = r.pair(ctx, p, hp)
			r.o.Track.End(name)
		})
		for j, g := range got {
			status := "measured"
			if g.Err != "" {
				status = "no result: " + g.Err
			} else if g.Report != nil && len(g.Report.Rows) > 0 {
				last := g.Report.Rows[len(g.Report.Rows)-1]
				status = fmt.Sprintf("%.2f Gb/s", last.AvgGbps)
			}
			r.printf("round %d: %s: %s\n", k+1, r.railPairName(round[j]), status)
		}
		runs = append(runs, got...)
		if r.o.Save != "" {
			names := make([]string, len(got))
			reports := make([]*bench.Perftest, len(got))
			for j, g := range got {
				names[j], reports[j] = r.railPairName(round[j]), g.Report
			}
			svg := bench.BarsSVG(fmt.Sprintf("ib_write_bw round %d of %d", k+1, len(rounds)), bench.PerftestBars(names, reports, r.o.Expect),
				bench.PerftestPassLine(r.o.Expect.LinkGbps, false), r.o.Expect.LinkGbps)
			r.save(fmt.Sprintf("ib_write_bw-round-%d.svg", k+1), string(svg))
		}
	}
	var counters []bench.PortCounters
	if r.o.Counters != nil && len(rounds) > 0 && ctx.Err() == nil {
		after, err := r.o.Counters(ctx)
		counters = diffCounters(before, after)
		if err != nil || countersErr != nil {
			r.printf("switch counters: %d port(s) compared; not read: %v\n", len(counters), errors.Join(countersErr, err))
		}
	}
	in.Verdicts = bench.JudgeRailPairs(runs, r.o.Expect, counters, bench.FabricUplinks(r.inv))
	return in, ctx.Err()
}

// diffCounters pairs the readings of each port before and after.
func diffCounters(before, after []PortCount) []bench.PortCounters {
	at := map[string]PortCount{}
	for _, c := range before {
		at[c.Port] = c
	}
	var out []bench.PortCounters
	for _, a := range after {
		b, ok := at[a.Port]
		if !ok || a.Pause < 0 || b.Pause < 0 {
			continue
		}
		pc := bench.PortCounters{Port: a.Port, PauseBefore: b.Pause, PauseAfter: a.Pause}
		if a.ECN >= 0 && b.ECN >= 0 {
			pc.ECNBefore, pc.ECNAfter = b.ECN, a.ECN
		} else {
			pc.NoECN = true // not read (a Cumulus port): say nothing of ECN
		}
		out = append(out, pc)
	}
	return out
}

// readyWriter collects output and closes ready when it shows "Waiting for
// client to connect" (perftest's server, before it accepts).
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if bytes.Contains(w.buf.Bytes(), []byte("Waiting for client")) {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// serverWait bounds how long a perftest server may take to listen, and to
// end after its client.
const serverWait = 30 * time.Second

// pair runs one ib_write_bw pair on its rail: the server in its worker,
// then, once it waits for its client, the client in its own; hp are the
// hosts' ports per rail (bench.RailHostPorts).
func (r *runner) pair(ctx context.Context, p bench.RailPair, hp [][]bench.HostPort) bench.PairRun {
	gid := r.gid(p.Client, p.Rail)
	run := bench.PairRun{Client: hp[p.Rail][p.Client], Server: hp[p.Rail][p.Server], GIDIndex: &gid, Rail: p.Rail}
	sc, err := r.conn(ctx, p.Server, p.Rail)
	if err != nil {
		run.Err = r.inv.Hosts[p.Server].Name + ": " + err.Error()
		return run
	}
	cc, err := r.conn(ctx, p.Client, p.Rail)
	if err != nil {
		run.Err = r.inv.Hosts[p.Client].Name + ": " + err.Error()
		return run
	}
	sctx, cancelServer := context.WithCancel(ctx)
	defer cancelServer()
	server := &readyWriter{ready: make(chan struct{})}
	serverDone := make(chan error, 1)
	go func() {
		status, err := r.job(sc, p.Server, r.perftest(p.Server, p.Rail, "")).Run(sctx, server, server, nil)
		if err == nil && status != 0 {
			err = fmt.Errorf("exit status %d", status)
		}
		serverDone <- err
	}()
	base := fmt.Sprintf("ib_write_bw-%s-to-%s", r.inv.Hosts[p.Client].Name, r.inv.Hosts[p.Server].Name)
	if r.inv.MultiRail() {
		base += fmt.Sprintf("-rail-%d", p.Rail)
	}
	defer func() { r.save(base+".server.txt", server.String()) }()
	select {
	case <-server.ready:
	case err := <-serverDone:
		run.Err = fmt.Sprintf("the server on %s ended before it listened (%v): %s", run.Server.Host, err, remote.OneLine(lastLines(server.String(), 3)))
		return run
	case <-time.After(serverWait):
		run.Err = fmt.Sprintf("the server on %s did not listen within %s", run.Server.Host, serverWait)
		return run
	case <-ctx.Done():
		<-serverDone
		run.Err = "interrupted"
		return run
	}
	var client bytes.Buffer
	status, err := r.job(cc, p.Client, r.perftest(p.Client, p.Rail, r.serverAddress(p.Server, p.Rail))).Run(ctx, &client, &client, nil)
	r.save(base+".txt", client.String())
	select {
	case <-serverDone:
	case <-time.After(serverWait):
		cancelServer()
		<-serverDone
	}
	if rep, perr := bench.ParsePerftest(client.Bytes()); perr == nil {
		run.Report = rep
	}
	switch {
	case ctx.Err() != nil:
		run.Err = "interrupted"
		run.Report = nil
	case err != nil:
		run.Err = "the client on " + run.Client.Host + ": " + err.Error()
	case run.Report == nil:
		run.Err = fmt.Sprintf("the client on %s (exit status %d) printed no perftest report: %s", run.Client.Host, status, remote.OneLine(lastLines(client.String(), 3)))
	}
	return run
}

// onFirst runs argv in the first worker (an mpirun line over the workers),
// under phase, saves its output as name and returns it with its exit
// status. err is the connection's or the job's failure, prefixed with the
// host; ctx's error when interrupted.
func (r *runner) onFirst(ctx context.Context, phase, name string, argv []string) (out []byte, status int, err error) {
	r.o.Track.Phase(phase, 1)
	c, err := r.conn(ctx, 0, 0)
	if err != nil {
		return nil, 0, errors.New(r.inv.Hosts[0].Name + ": " + err.Error())
	}
	var outb bytes.Buffer
	w := progress.Sync(&outb)
	r.o.Track.Begin(r.inv.Hosts[0].Name)
	status, err = r.job(c, 0, argv).Run(ctx, w, w, nil)
	r.o.Track.End(r.inv.Hosts[0].Name)
	r.save(name, outb.String())
	if ctx.Err() != nil {
		return outb.Bytes(), status, ctx.Err()
	}
	return outb.Bytes(), status, err
}

// nccl runs all_reduce_perf over every worker from the first one's and
// judges its output with the NCCL log in it; pairVs, the ib_write_bw
// verdicts of this bench (nil when the pairs did not run), explain a
// busbw short of the rails' sum on hosts with several rails
// (bench.Expect.PairVerdicts).
func (r *runner) nccl(ctx context.Context, pairVs []bench.Verdict) (bench.Input, error) {
	ranks := horovod.TotalSlots(r.inv)
	in := bench.Input{Name: fmt.Sprintf("all_reduce_perf (%d ranks on %d hosts)", ranks, len(r.inv.Hosts)), Kind: bench.KindNCCLTests}
	out, status, err := r.onFirst(ctx, fmt.Sprintf("all_reduce_perf on %d rank(s)", ranks), "all_reduce_perf.txt", r.ncclArgs())
	if ctx.Err() != nil {
		in.Error = "interrupted"
		return in, ctx.Err()
	}
	if err != nil {
		in.Error = err.Error()
		return in, nil
	}
	outb := bytes.NewBuffer(out)
	e := r.o.Expect
	e.PairVerdicts = pairVs
	e.GIDIndex = -1
	if vars, wrap := horovod.GIDEnv(r.inv, r.gids); !wrap {
		e.GIDIndex, _ = strconv.Atoi(vars[0].Value)
	}
	kind, vs, jerr := bench.Judge(outb.Bytes(), e)
	if jerr != nil {
		in.Kind = bench.KindUnknown
		in.Error = fmt.Sprintf("mpirun exited with status %d and printed no nccl-tests output: %s", status, remote.OneLine(lastLines(outb.String(), 3)))
		return in, nil
	}
	in.Kind, in.Verdicts = kind, vs
	if r.o.Save != "" {
		if nt, err := bench.ParseNCCLTests(outb.Bytes()); err == nil {
			r.save("all_reduce_perf.svg", string(bench.SweepSVG(in.Name, nt, e)))
		}
	}
	if status != 0 {
		in.Verdicts = append(in.Verdicts, bench.Verdict{Check: bench.CheckNCCLErrors, Status: bench.StatusError,
			Found: fmt.Sprintf("mpirun exited with status %d: %s", status, remote.OneLine(lastLines(outb.String(), 2))),
			Causes: []bench.Cause{{Layer: bench.LayerBenchmark,
				Finding: "a rank of all_reduce_perf (or mpirun itself) failed after the output above",
				Fix:     "read the whole output (--save DIR keeps it as all_reduce_perf.txt) for the failing rank's last lines"}}})
	}
	return in, nil
}

// firstHosts is inv with its first n hosts only: the one-VM run of the
// Horovod benchmark launches over it.
func firstHosts(inv *inventory.Inventory, n int) *inventory.Inventory {
	sub := *inv
	sub.Hosts = inv.Hosts[:n]
	return &sub
}

// horovodArgs is the mpirun line of the Horovod benchmark over the first n
// workers (horovod.LaunchArgs with their GID indexes).
func (r *runner) horovodArgs(n int) []string {
	return horovod.LaunchArgs(firstHosts(r.inv, n), true, r.o.HorovodCmd, r.gids[:n])
}

// horovod runs the Horovod benchmark over every worker, then over the
// first VM's alone, and judges the scaling efficiency between them;
// ncclVs, the all_reduce_perf verdicts of this bench, may explain a
// shortfall.
func (r *runner) horovod(ctx context.Context, ncclVs []bench.Verdict) (bench.Input, error) {
	n := len(r.inv.Hosts)
	all, one := horovod.TotalSlots(r.inv), horovod.TotalSlots(firstHosts(r.inv, 1))
	in := bench.Input{Name: fmt.Sprintf("Horovod benchmark (%d GPUs on %d hosts, then %d on %s alone)", all, n, one, r.inv.Hosts[0].Name), Kind: bench.KindTFCNN}
	var runs [2]bench.HorovodRun
	for k, hosts := range []int{n, 1} {
		gpus := horovod.TotalSlots(firstHosts(r.inv, hosts))
		name := "horovod-cluster.txt"
		if hosts == 1 {
			name = "horovod-one-vm.txt"
		}
		out, status, err := r.onFirst(ctx, fmt.Sprintf("Horovod benchmark on %d GPU(s) of %d VM(s)", gpus, hosts), name, r.horovodArgs(hosts))
		if ctx.Err() != nil {
			in.Error = "interrupted"
			return in, ctx.Err()
		}
		run := bench.HorovodRun{GPUs: gpus, Hosts: hosts}
		t, perr := bench.ParseTFCNN(out)
		switch {
		case err != nil:
			run.Err = err.Error()
		case perr != nil:
			run.Err = fmt.Sprintf("mpirun exited with status %d and printed no tf_cnn_benchmarks output: %s", status, remote.OneLine(lastLines(string(out), 3)))
		case status != 0 && len(t.Totals) == 0 && len(t.Failures) == 0:
			run.Err = fmt.Sprintf("mpirun exited with status %d before the total images/sec: %s", status, remote.OneLine(lastLines(string(out), 2)))
		default:
			run.Output = t
		}
		runs[k] = run
	}
	in.Verdicts = []bench.Verdict{bench.JudgeHorovod(runs[0], runs[1], ncclVs)}
	return in, nil
}

// save writes a raw output into Options.Save, through a new file renamed
// over name (atomicfile.Replace): a link put there under that name is
// replaced, never written through.
func (r *runner) save(name, data string) {
	if r.o.Save == "" {
		return
	}
	if err := atomicfile.Replace(filepath.Join(r.o.Save, name), []byte(data), 0o644); err != nil {
		r.printf("--save: %v\n", err)
	}
}

// lastLines is the last n non-empty lines of s.
func lastLines(s string, n int) string {
	var ls []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.TrimSpace(l) != "" {
			ls = append(ls, strings.TrimSpace(l))
		}
	}
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "; ")
}
