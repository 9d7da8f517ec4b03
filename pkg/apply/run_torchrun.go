package apply

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// launchTorchrun runs the job with torchrun (horovod.TorchrunArgs): it reads
// the hosts' GID indexes, connects to every host, then starts every node's
// launcher in its worker at once. When a node's launcher exits non-zero
// (or its connection fails), the others are stopped as on Ctrl-C: SIGTERM
// to each launcher's process group, which torchrun handles by stopping its
// processes and which ends a process that does not handle it (SIGINT may be
// ignored by processes started in the background), then SIGKILL after
// o.Grace. torchrun reports a failed process at once but exits only
// after its exit barrier (up to 300 s, until every node's launcher is
// done), so rdggen acts on that report (torchrunFailed). The exit status is
// that of the first failed process (or, without a report, of the first node
// whose torchrun failed), else 0.
func launchTorchrun(ctx context.Context, inv *inventory.Inventory, o RunOptions, res *RunResult) error {
	stdout, stderr := o.Out, o.Err
	if err := gidIndexes(ctx, inv, o, res, true); err != nil {
		return err
	}
	gids := res.GIDIndexes
	rdzv, err := horovod.RendezvousAddress(inv)
	if err != nil {
		return err
	}
	jobs := make([]*remote.ContainerJob, len(inv.Hosts))
	for i := range inv.Hosts {
		var vars []string
		for _, e := range horovod.TorchrunEnv(inv, i, gids[i]) {
			vars = append(vars, e.Name+"="+e.Value)
		}
		argv, err := horovod.TorchrunArgs(inv, i, o.Command)
		if err != nil {
			return err
		}
		jobs[i] = &remote.ContainerJob{Host: inv.Hosts[i].Name, Container: horovod.WorkerName, Env: vars,
			Argv: argv, Grace: o.Grace, Group: true, Stop: "TERM"}
		res.Launch = append(res.Launch, NodeLaunch{Host: inv.Hosts[i].Name, Mgmt: inv.Hosts[i].Mgmt, Env: vars, Argv: argv})
	}
	if o.DryRun {
		fmt.Fprintf(stderr, "rdggen run: dry run, nothing launched; in every host's worker at once (rendezvous at %s, %d processes) it would run:\n",
			rdzv, horovod.TorchrunWorldSize(inv))
		for _, n := range res.Launch {
			fmt.Fprintf(stdout, "%s: %s\n", n.Host, quote.Terminal(quote.ShJoin(n.Exec())))
		}
		return nil
	}

	// Connect to every host first: a job must start on all of them or none.
	ssh := o.SSH.remote()
	dialErr := make([]error, len(jobs))
	driver.ForEach(len(jobs), max(o.Parallel, 1), func(i int) {
		jobs[i].Conn, dialErr[i] = ssh.Dial(ctx, &inv.Hosts[i])
	})
	defer func() {
		for _, j := range jobs {
			if j.Conn != nil {
				j.Conn.Close()
			}
		}
	}()
	for _, err := range dialErr {
		if err != nil {
			hosts := make([]string, len(jobs))
			for i := range jobs {
				hosts[i] = inv.Hosts[i].Name
			}
			return dialError("not launched: torchrun needs every host", hosts, dialErr)
		}
	}
	fmt.Fprintf(stderr, "rdggen run: torchrun in %d workers at once, %d processes, rendezvous at %s (%s's worker): %s\n",
		len(jobs), horovod.TorchrunWorldSize(inv), rdzv, inv.Hosts[0].Name, quote.Terminal(quote.ShJoin(jobs[0].Argv)))

	jobCtx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu        sync.Mutex
		first     = -1 // the first node that failed
		status    = make([]int, len(jobs))
		stopNoted bool
	)
	procFailed := make([]int, len(jobs)) // a process's exit status, from torchrun's report
	lines := &nodeLines{failed: func(node, local, code int) {
		mu.Lock()
		defer mu.Unlock()
		if first >= 0 || ctx.Err() != nil {
			return
		}
		first, procFailed[node] = node, code
		fmt.Fprintf(stderr, "rdggen run: %s: rank %d (local %d) exited with status %d\n",
			inv.Hosts[node].Name, horovod.TorchrunFirstRank(inv, node)+local, local, code)
		stop()
	}}
	driver.ForEach(len(jobs), len(jobs), func(i int) {
		h := &inv.Hosts[i]
		out, errOut := lines.writer(stdout, inv, i), lines.writer(stderr, inv, i)
		st, err := jobs[i].Run(jobCtx, out, errOut, func(sig string) {
			mu.Lock()
			defer mu.Unlock()
			if sig == "KILL" {
				fmt.Fprintf(stderr, "rdggen run: %s: the job did not stop within %s: SIGKILL to its process group\n", h.Name, o.Grace)
			} else if !stopNoted {
				stopNoted = true
				if ctx.Err() != nil {
					fmt.Fprintln(stderr, "rdggen run: interrupted: sending SIGTERM to torchrun in every worker")
				} else {
					fmt.Fprintf(stderr, "rdggen run: %s failed: sending SIGTERM to torchrun in every worker\n", inv.Hosts[first].Name)
				}
			}
		})
		out.Flush()
		errOut.Flush()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: run: %s: %v\n", h.Name, err)
			st = StatusLost
		}
		status[i] = st
		if st != 0 && first < 0 && ctx.Err() == nil {
			first = i
			if jobCtx.Err() == nil {
				fmt.Fprintf(stderr, "rdggen run: %s: torchrun exited with status %d\n", h.Name, st)
			}
			stop()
		}
	})
	switch {
	case ctx.Err() != nil:
		code := 0
		for _, s := range status {
			if s != 0 {
				code = s
				break
			}
		}
		fmt.Fprintf(stderr, "rdggen run: the job stopped with status %d after the interrupt\n", code)
		res.Status, res.Interrupted = code, true
	case first >= 0:
		code := status[first]
		if procFailed[first] != 0 {
			code = procFailed[first]
		}
		fmt.Fprintf(stderr, "rdggen run: the job failed on %s (status %d)\n", inv.Hosts[first].Name, code)
		res.Status, res.FailedHost = code, inv.Hosts[first].Name
	}
	return nil
}

// torchrunTag is the prefix torchrun's --tee puts on a process's lines:
// "[default0]:" (role and local rank; PyTorch 1.13 to 2.x) or "[rank3]:"
// (the global rank, in releases that print that instead).
var torchrunTag = regexp.MustCompile(`^\[(?:` + horovod.TorchrunLocalRole + `(\d+)|rank(\d+))\]:`)

// torchrunFailed is the line torchrun's launcher logs as soon as one of
// its processes fails, before it waits for the other nodes at its exit
// barrier (up to 300 s): "failed (exitcode: 3) local_rank: 0 (pid: 123) of
// binary: …" (torch/distributed/elastic/multiprocessing/api.py, PyTorch
// 1.13 to 2.x), behind the launcher's logger prefix, which it must start
// with: Python logging's default "ERROR:torch.distributed.elastic.
// multiprocessing.api:" (PyTorch 1.13 to 2.3) or the glog-style header
// "E0101 10:00:00.000000 140 torch/distributed/elastic/multiprocessing/
// api.py:881] " (PyTorch 2.4 and later). Only a line without torchrun's
// process tag (torchrunTag) is the launcher's: a process that prints or
// quotes such a report has its tag in front. A negative exit code is the
// signal that ended the process.
var torchrunFailed = regexp.MustCompile(`^(?:ERROR:torch\.distributed\.elastic\.multiprocessing\.api:|[EWIF]\d{4} [0-9:.]+ +\d+ [^\]\s]*multiprocessing/api\.py:\d+\] )failed \(exitcode: (-?\d+)\) local_rank: (\d+) `)

// nodeLines serialises the lines of every node's output; failed (if not
// nil) hears each process failure torchrun reports: the node, the local
// rank and its exit status (128+N for signal N).
type nodeLines struct {
	mu     sync.Mutex
	failed func(node, local, code int)
}

// writer is node's output to w, line by line: a process's line as
// "<host>[rank R, local L]: text" (R its global rank), any other (the
// launcher's own) as "<host>: text".
func (n *nodeLines) writer(w io.Writer, inv *inventory.Inventory, node int) *nodeWriter {
	return &nodeWriter{lines: n, w: w, node: node, host: inv.Hosts[node].Name, first: horovod.TorchrunFirstRank(inv, node)}
}

type nodeWriter struct {
	lines *nodeLines
	w     io.Writer
	node  int
	host  string
	first int
	out   lineBuffer
}

func (n *nodeWriter) Write(p []byte) (int, error) { return n.out.write(p, n.line) }

// Flush writes a last line without its newline.
func (n *nodeWriter) Flush() { n.out.flush(n.line) }

func (n *nodeWriter) line(l []byte) {
	text := strings.TrimSuffix(string(l), "\r")
	prefix := n.host
	launcher := true // a line without a process tag is the launcher's own
	if m := torchrunTag.FindStringSubmatchIndex(text); m != nil {
		launcher = false
		if m[2] >= 0 {
			local, _ := strconv.Atoi(text[m[2]:m[3]])
			prefix = fmt.Sprintf("%s[rank %d, local %d]", n.host, n.first+local, local)
		} else {
			rank, _ := strconv.Atoi(text[m[4]:m[5]])
			prefix = fmt.Sprintf("%s[rank %d, local %d]", n.host, rank, rank-n.first)
		}
		text = text[m[1]:]
	}
	n.lines.mu.Lock()
	fmt.Fprintf(n.w, "%s: %s\n", prefix, text)
	n.lines.mu.Unlock()
	if !launcher || n.lines.failed == nil {
		return
	}
	if m := torchrunFailed.FindStringSubmatch(text); m != nil {
		code, _ := strconv.Atoi(m[1])
		local, _ := strconv.Atoi(m[2])
		if code < 0 {
			code = 128 - code
		}
		n.lines.failed(n.node, local, code)
	}
}
