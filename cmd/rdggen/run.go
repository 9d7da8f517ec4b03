package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdggen/rdggen/internal/remote"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

const usageRun = `Usage: rdggen run -f cluster.yaml [--mpirun | --torchrun] [--dry-run] [flags] [-- CMD ARG...]

Launches the training job from the first host's worker container (hvd-worker,
started by 'rdggen apply --target workers') with the generated launch line:
horovodrun over every worker's slots, or with --mpirun the equivalent mpirun
line (TCP on the workers' interface, NCCL's RoCE and GPUDirect RDMA settings
exported). Without CMD every rank runs the VGG16 benchmark of run.sh; with
'-- CMD ARG...' every rank runs CMD instead.

First it reads every VM's GID table over SSH (--parallel at a time, as
'rdggen check --target hosts' does): each host's ranks get the index of the
RoCE v2 GID of its data address as NCCL_IB_GID_INDEX. A host without one
fails here, with its fix, and nothing is launched. --dry-run stops after that
and prints the line it would launch.

The job's output is streamed, each rank's lines prefixed with its host and
rank ("clx-mld-42[2]: ..."). Ctrl-C stops the job (SIGINT to the launcher in
the worker, then SIGKILL after 10 s) and rdggen exits with the job's status.

With --torchrun (the default when the inventory says horovod.launcher:
torchrun) it instead starts PyTorch's torchrun in every host's worker at
once, one launcher per host: horovod.nproc_per_node processes each (default:
the host's GPU count), the rendezvous store on the first worker at
horovod.rdzv_port (29400), each node's NCCL_IB_GID_INDEX its own. The
training script is required: '-- SCRIPT ARG...'. Each line is prefixed with
its host and the process's global and local rank ("clx-mld-42[rank 3, local
1]: ...") or, for torchrun's own lines, its host. When a process or a
node's torchrun fails, every node is stopped (SIGTERM to each launcher's process group,
SIGKILL after 10 s), and rdggen exits with the failed process's status.

Examples:
  rdggen run -f cluster.yaml
  rdggen run -f cluster.yaml --torchrun -- /work/train.py --epochs 3
  rdggen run -f cluster.yaml --dry-run --mpirun
  rdggen run -f cluster.yaml --mpirun -- python /work/train.py --epochs 3

Exit status: the job's; 2 usage error; 3 the job could not be started (a
host's RDMA device or GID is not usable, the first worker cannot be reached).
`

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlagSet("run", usageRun, stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (required)")
	useMpirun := fs.Bool("mpirun", false, "launch with mpirun instead of horovodrun")
	useTorchrun := fs.Bool("torchrun", false, "launch with torchrun in every worker (default with horovod.launcher: torchrun)")
	dryRun := fs.Bool("dry-run", false, "read the GID tables and print the launch line; launch nothing")
	conn := registerConnFlags(fs, nil, "VMs whose GID table is read at once, `N` ≥ 1")
	cmd, rest := splitCommand(args)
	err := fs.Parse(rest)
	if err == nil && fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rdggen: unexpected argument %s: put the job's command after --, e.g. rdggen run -f cluster.yaml -- %s\n",
			strconv.Quote(fs.Arg(0)), quote.Terminal(quote.ShJoin(fs.Args())))
		return exitUsage
	}
	if code, ok := parsed(fs, err, stdout); !ok {
		return code
	}
	problems := conn.check()
	if *useMpirun && *useTorchrun {
		problems = append(problems, errors.New("--mpirun and --torchrun are two launchers: choose one"))
	}
	if *useTorchrun && len(cmd) == 0 {
		problems = append(problems, errors.New("--torchrun needs the training script: rdggen run -f cluster.yaml --torchrun -- SCRIPT [ARG]"))
	}
	if len(cmd) > 0 && cmd[0] == "" {
		problems = append(problems, errors.New("the job's command after -- is empty (an unset variable?): name the program every rank runs, or leave -- out for the VGG16 benchmark"))
	}
	if code, ok := usageErrors(stderr, problems); !ok {
		return code
	}
	if *file == "" {
		fmt.Fprintln(stderr, "rdggen: run needs -f cluster.yaml: it starts a job on real machines (see rdggen run --help)")
		return exitUsage
	}
	env, code, ok := conn.load(ctx, fs, *file, vmsOnly(), *dryRun, getenv, stderr)
	if !ok {
		return code
	}
	if *useTorchrun || (!*useMpirun && env.Inv.Horovod.Launcher == inventory.LauncherTorchrun) {
		if len(cmd) == 0 {
			fmt.Fprintf(stderr, "rdggen: %s says horovod.launcher: torchrun, which needs the training script: rdggen run -f %s -- SCRIPT ARG... (or --mpirun for the MPI launch)\n",
				quote.Terminal(*file), quote.Terminal(quote.Sh(*file)))
			return exitUsage
		}
		return launchTorchrun(ctx, env, *dryRun, cmd, stdout, stderr)
	}
	return launch(ctx, env, *useMpirun, *dryRun, cmd, stdout, stderr)
}

// vmsOnly is what run and bench reach: the VMs and their workers over SSH,
// with the VMs' credentials checked once before anything is contacted.
func vmsOnly() []*applyTarget { return []*applyTarget{{name: "workers", prepare: vmCredentials}} }

// splitCommand separates rdggen's arguments from the job's after "--".
func splitCommand(args []string) (cmd, rest []string) {
	for i, a := range args {
		if a == "--" {
			return args[i+1:], args[:i]
		}
	}
	return nil, args
}

// interruptGrace is how long the job gets after SIGINT before SIGKILL.
const interruptGrace = 10 * time.Second

// gidIndexes reads every host's GID table and says what the job will use;
// ok is false (the failures printed) when a host has no usable RoCE v2 GID.
// perNode says that each node's launcher takes its own index (torchrun).
func gidIndexes(ctx context.Context, env *applyEnv, perNode bool, stderr io.Writer) ([]int, bool) {
	inv := env.Inv
	gids, bad := apply.GIDIndexes(ctx, inv, apply.HostsOptions{
		Common: apply.Common{Parallel: env.Parallel, Out: stderr}, SSH: env.vmSSH(), Root: env.VM.root})
	if len(bad) > 0 {
		for _, r := range bad {
			fmt.Fprintf(stderr, "rdggen run: %s\n", quote.Terminal(r.Line()))
		}
		fmt.Fprintf(stderr, "rdggen run: not launched: %s (NCCL needs each host's RoCE v2 GID index); fix what the lines above say, then run again\n",
			apply.NotReadySummary(bad))
		return nil, false
	}
	count := map[int]int{}
	for _, g := range gids {
		count[g]++
	}
	if len(count) == 1 {
		fmt.Fprintf(stderr, "rdggen run: %s=%d on every host (each host's RoCE v2 GID of its data address)\n", horovod.GIDIndexVar, gids[0])
	} else {
		var parts []string
		for i, g := range gids {
			parts = append(parts, fmt.Sprintf("%s %d", inv.Hosts[i].Name, g))
		}
		how := fmt.Sprintf("each rank sets its own (%s)", horovod.RankGIDVar)
		if perNode {
			how = "each node's torchrun gets its own"
		}
		fmt.Fprintf(stderr, "rdggen run: the hosts' GID indexes differ (%s): %s\n", strings.Join(parts, ", "), how)
	}
	return gids, true
}

// launch reads the hosts' GID indexes, then runs the job in the first
// host's worker over SSH and returns its exit status.
func launch(ctx context.Context, env *applyEnv, useMpirun, dryRun bool, cmd []string, stdout, stderr io.Writer) int {
	inv := env.Inv
	h := &inv.Hosts[0]
	gids, ok := gidIndexes(ctx, env, false, stderr)
	if !ok {
		return exitFailed
	}
	argv := horovod.LaunchArgs(inv, useMpirun, cmd, gids)
	var jobEnv []string
	for _, e := range horovod.LaunchEnv(inv, useMpirun, gids) { // horovodrun hands its environment to every rank
		jobEnv = append(jobEnv, e.Name+"="+e.Value)
	}
	if dryRun {
		exec := []string{"docker", "exec"}
		for _, e := range jobEnv {
			exec = append(exec, "-e", e)
		}
		fmt.Fprintf(stderr, "rdggen run: dry run, nothing launched; in %s's worker (%s) it would run:\n", h.Name, h.Mgmt)
		fmt.Fprintln(stdout, quote.Terminal(quote.ShJoin(append(append(exec, horovod.WorkerName), argv...))))
		return exitOK
	}
	fmt.Fprintf(stderr, "rdggen run: in %s's worker (%s): %s\n", h.Name, h.Mgmt, quote.Terminal(quote.ShJoin(argv)))

	ssh := env.VM.ssh(env.KnownHosts, env.Identities, env.Getenv)
	ssh.Timeout, ssh.TimeoutFlag = env.SSHTimeout, fmt.Sprintf("--ssh-timeout %s", env.SSHTimeout)
	conn, err := ssh.Dial(ctx, h)
	if err != nil {
		fmt.Fprintf(stderr, "rdggen: run: %s: %v\n", h.Name, remote.DialError(err))
		return exitFailed
	}
	defer conn.Close()
	job := &remote.ContainerJob{Conn: conn, Host: h.Name, Container: horovod.WorkerName, Env: jobEnv, Argv: argv, Grace: interruptGrace}

	ranks := horovod.RankHosts(inv)
	out, errOut := newRankWriter(stdout, ranks), newRankWriter(stderr, ranks)
	status, err := job.Run(ctx, out, errOut, func(sig string) {
		if sig == "INT" {
			fmt.Fprintf(stderr, "rdggen run: interrupted: sending SIGINT to the job in %s's worker\n", h.Name)
		} else {
			fmt.Fprintf(stderr, "rdggen run: the job did not stop within %s: SIGKILL\n", interruptGrace)
		}
	})
	out.Flush()
	errOut.Flush()
	if err != nil {
		fmt.Fprintf(stderr, "rdggen: run: %s: %v\n", h.Name, err)
		return exitFailed
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "rdggen run: the job stopped with status %d after the interrupt\n", status)
	} else if status != 0 {
		fmt.Fprintf(stderr, "rdggen run: the job exited with status %d\n", status)
	}
	return status
}

// rankTag is the prefix mpirun --tag-output ("[1,3]<stdout>:") and
// horovodrun ("[3]<stdout>:") put on the ranks' lines.
var rankTag = regexp.MustCompile(`^\[(?:\d+,)?(\d+)\]<(?:stdout|stderr|stddiag)>:`)

// rankWriter writes whole lines, each tagged line as "<host>[<rank>]: text".
type rankWriter struct {
	mu    sync.Mutex
	w     io.Writer
	ranks []*inventory.Host
	buf   []byte
}

func newRankWriter(w io.Writer, ranks []*inventory.Host) *rankWriter {
	return &rankWriter{w: w, ranks: ranks}
}

func (r *rankWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		r.line(r.buf[:i])
		r.buf = r.buf[i+1:]
	}
}

// Flush writes a last line without its newline.
func (r *rankWriter) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) > 0 {
		r.line(r.buf)
		r.buf = nil
	}
}

func (r *rankWriter) line(l []byte) {
	if m := rankTag.FindSubmatchIndex(l); m != nil {
		rank, _ := strconv.Atoi(string(l[m[2]:m[3]]))
		host := "?"
		if rank < len(r.ranks) {
			host = r.ranks[rank].Name
		}
		fmt.Fprintf(r.w, "%s[%d]: %s\n", host, rank, l[m[1]:])
		return
	}
	fmt.Fprintf(r.w, "%s\n", l)
}
