package apply

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

	"github.com/rdggen/rdggen/internal/engines/hostapply"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Launcher is how Run starts the training job.
type Launcher int

const (
	// LauncherDefault follows the inventory's horovod.launcher:
	// LauncherTorchrun when it says torchrun, else LauncherHorovodrun.
	LauncherDefault Launcher = iota
	// LauncherHorovodrun runs horovodrun over every worker's slots from the
	// first host's worker (horovod.LaunchArgs).
	LauncherHorovodrun
	// LauncherMpirun runs the equivalent mpirun line from the first host's
	// worker: TCP on the workers' interface, NCCL's RoCE and GPUDirect RDMA
	// settings exported (horovod.LaunchArgs).
	LauncherMpirun
	// LauncherTorchrun runs PyTorch's torchrun in every host's worker at
	// once, one launcher per host, the rendezvous store on the first worker
	// (horovod.TorchrunArgs; docs/rules.md#torchrun).
	LauncherTorchrun
)

// String is the launcher's program name ("default" for LauncherDefault).
func (l Launcher) String() string {
	switch l {
	case LauncherHorovodrun:
		return "horovodrun"
	case LauncherMpirun:
		return "mpirun"
	case LauncherTorchrun:
		return "torchrun"
	}
	return "default"
}

// resolve is the launcher Run uses for inv.
func (l Launcher) resolve(inv *inventory.Inventory) Launcher {
	if l != LauncherDefault {
		return l
	}
	if inv.Horovod.Launcher == inventory.LauncherTorchrun {
		return LauncherTorchrun
	}
	return LauncherHorovodrun
}

// DefaultGrace is how long a job gets, once asked to stop (SIGINT to
// horovodrun or mpirun, SIGTERM to torchrun's process group), before
// SIGKILL.
const DefaultGrace = 10 * time.Second

// StatusLost is the status Run gives a torchrun node whose SSH session
// failed before its launcher's exit status arrived: 3, the status `rdggen
// run` exits with when the job could not run.
const StatusLost = 3

// RunOptions say how Run reaches the VMs and what it launches.
type RunOptions struct {
	// Launcher is horovodrun, mpirun or torchrun; LauncherDefault follows
	// the inventory's horovod.launcher.
	Launcher Launcher
	// Command is what every rank runs, program first. With horovodrun or
	// mpirun, nil runs run.sh's VGG16 benchmark; torchrun needs the
	// training script and its arguments.
	Command []string
	// DryRun reads the GID tables, writes the launch line(s) to Out and
	// launches nothing.
	DryRun bool
	// SSH is how the VMs are reached (each host's mgmt address), for the
	// GID tables and the job.
	SSH SSH
	// Root prefixes the paths of the files read on the VMs, as in
	// HostsOptions.
	Root string
	// Parallel bounds the VMs whose GID table is read (and, with torchrun,
	// which are connected to) at once (default 1).
	Parallel int
	// Out receives the job's standard output, each rank's line prefixed
	// with its host and rank ("clx-mld-42[2]: …"; torchrun: "clx-mld-42[rank
	// 3, local 1]: …", or the host alone for torchrun's own lines), and a
	// dry run's launch line(s). Err receives the job's standard error,
	// prefixed alike, the GID reads' text and Run's own lines ("rdggen run:
	// …", as `rdggen run` prints them). nil discards.
	Out, Err io.Writer
	// Grace is how long the job gets after it is asked to stop, when ctx
	// ends or (torchrun) a node fails, before SIGKILL; 0 is DefaultGrace.
	Grace time.Duration
}

// NodeLaunch is one launcher Run starts: in Host's worker container
// (horovod.WorkerName), Argv with the environment Env (NAME=VALUE).
type NodeLaunch struct {
	Host, Mgmt string
	Env        []string
	Argv       []string
}

// Exec is the launch as one docker exec command line on the host.
func (n NodeLaunch) Exec() []string {
	exec := []string{"docker", "exec"}
	for _, e := range n.Env {
		exec = append(exec, "-e", e)
	}
	return append(append(exec, horovod.WorkerName), n.Argv...)
}

// RunResult is what Run did. A job that ran and failed is a Status, not
// an error.
type RunResult struct {
	// Launcher is the launcher used (never LauncherDefault).
	Launcher Launcher
	// GIDIndexes are each host's NCCL_IB_GID_INDEX (inventory order): the
	// index of the RoCE v2 GID of its data address; -1 where none is
	// usable, and NotReady says why.
	GIDIndexes []int
	NotReady   []readiness.Result
	// Launch is what was (or, in a dry run, would be) started: the first
	// host's horovodrun or mpirun, or every host's torchrun.
	Launch []NodeLaunch
	// Status is the job's exit status: horovodrun's or mpirun's; with
	// torchrun the first failed process's (128+N for signal N), else that
	// of the first node whose torchrun failed (StatusLost when its session
	// failed), else 0. 0 after a dry run.
	Status int
	// Interrupted is set when ctx ended while the job ran.
	Interrupted bool
	// FailedHost is, with torchrun, the host whose process or launcher
	// failed first ("" when none did, or after an interrupt).
	FailedHost string
}

// Run launches the training job in the workers that Workers started, as
// `rdggen run` does. It first reads every VM's GID table over SSH, as
// CheckHosts does: each host's ranks get the index of the RoCE v2 GID of its
// data address. With horovodrun or mpirun it then runs the launch line in
// the first host's worker; with torchrun it connects to every host, then
// starts every node's launcher at once, and when one node's process or
// launcher fails it stops every node (SIGTERM to each launcher's process
// group, SIGKILL after Grace). When ctx ends the job is asked to stop the
// same way (SIGINT to horovodrun or mpirun) and Run returns its status.
//
// A job that could not be launched is an error and nothing runs: a
// *MachinesError (errors.Is ErrMachines) with Target "hosts" when hosts
// have no usable RoCE v2 GID (RunResult.NotReady says why; one
// MachineError per failed result, its text the result's line), or with
// Target "workers" when a worker's VM could not be connected to; errors.As
// finds through it the HostKeyError, KnownHostsError, AuthError or
// UnreachableError of a VM that could not be connected to (for the GID
// tables or the job). Other errors (the rendezvous address, the job's SSH
// session on the first host) name their cause in their text.
func Run(ctx context.Context, inv *inventory.Inventory, o RunOptions) (*RunResult, error) {
	if inv == nil {
		return nil, ErrNoInventory
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Err == nil {
		o.Err = io.Discard
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	res := &RunResult{Launcher: o.Launcher.resolve(inv)}
	if res.Launcher == LauncherTorchrun {
		return res, launchTorchrun(ctx, inv, o, res)
	}
	return res, launch(ctx, inv, o, res)
}

// gidIndexes reads every host's GID table and says what the job will use;
// it fails when a host has no usable RoCE v2 GID. perNode says that each
// node's launcher takes its own index (torchrun).
func gidIndexes(ctx context.Context, inv *inventory.Inventory, o RunOptions, res *RunResult, perNode bool) error {
	stderr := o.Err
	// GIDIndexes, keeping each VM's connection error for errors.As.
	ho := HostsOptions{Common: Common{Parallel: o.Parallel, Out: stderr}, SSH: o.SSH, Root: o.Root}
	r := ho.begin(readiness.TargetHosts)
	eng := ho.engine(r)
	var mu sync.Mutex
	dialErr := map[string]error{}
	dial := eng.Dial
	eng.Dial = func(ctx context.Context, h *inventory.Host) (remote.Conn, error) {
		c, err := dial(ctx, h)
		if err != nil {
			mu.Lock()
			dialErr[h.Name] = remote.DialError(err)
			mu.Unlock()
		}
		return c, err
	}
	gids, bad := hostapply.GIDIndexes(ctx, inv, eng)
	r.end()
	res.GIDIndexes = gids
	if len(bad) > 0 {
		res.NotReady = bad
		e := &MachinesError{Target: readiness.TargetHosts, msg: "not launched: " + NotReadySummary(bad)}
		for _, b := range bad {
			err := dialErr[b.Machine]
			if err == nil {
				err = errors.New(b.Line())
			}
			e.Machines = append(e.Machines, &MachineError{Target: readiness.TargetHosts, Machine: b.Machine, Err: err})
		}
		return e
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
	return nil
}

// dialError is the error of workers that could not be connected to.
func dialError(msg string, hosts []string, errs []error) error {
	e := &MachinesError{Target: readiness.TargetWorkers, msg: msg}
	for i, err := range errs {
		if err != nil {
			e.Machines = append(e.Machines, &MachineError{Target: readiness.TargetWorkers, Machine: hosts[i], Err: remote.DialError(err)})
		}
	}
	return e
}

// launch reads the hosts' GID indexes, then runs the job in the first
// host's worker over SSH and sets its exit status.
func launch(ctx context.Context, inv *inventory.Inventory, o RunOptions, res *RunResult) error {
	stdout, stderr := o.Out, o.Err
	h := &inv.Hosts[0]
	if err := gidIndexes(ctx, inv, o, res, false); err != nil {
		return err
	}
	gids := res.GIDIndexes
	useMpirun := res.Launcher == LauncherMpirun
	argv := horovod.LaunchArgs(inv, useMpirun, o.Command, gids)
	var jobEnv []string
	for _, e := range horovod.LaunchEnv(inv, useMpirun, gids) { // horovodrun hands its environment to every rank
		jobEnv = append(jobEnv, e.Name+"="+e.Value)
	}
	res.Launch = []NodeLaunch{{Host: h.Name, Mgmt: h.Mgmt, Env: jobEnv, Argv: argv}}
	if o.DryRun {
		fmt.Fprintf(stderr, "rdggen run: dry run, nothing launched; in %s's worker (%s) it would run:\n", h.Name, h.Mgmt)
		fmt.Fprintln(stdout, quote.Terminal(quote.ShJoin(res.Launch[0].Exec())))
		return nil
	}
	fmt.Fprintf(stderr, "rdggen run: in %s's worker (%s): %s\n", h.Name, h.Mgmt, quote.Terminal(quote.ShJoin(argv)))

	conn, err := o.SSH.remote().Dial(ctx, h)
	if err != nil {
		return dialError(h.Name+": "+remote.DialError(err).Error(), []string{h.Name}, []error{err})
	}
	defer conn.Close()
	job := &remote.ContainerJob{Conn: conn, Host: h.Name, Container: horovod.WorkerName, Env: jobEnv, Argv: argv, Grace: o.Grace}

	ranks := horovod.RankHosts(inv)
	out, errOut := newRankWriter(stdout, ranks), newRankWriter(stderr, ranks)
	status, err := job.Run(ctx, out, errOut, func(sig string) {
		if sig == "INT" {
			fmt.Fprintf(stderr, "rdggen run: interrupted: sending SIGINT to the job in %s's worker\n", h.Name)
		} else {
			fmt.Fprintf(stderr, "rdggen run: the job did not stop within %s: SIGKILL\n", o.Grace)
		}
	})
	out.Flush()
	errOut.Flush()
	if err != nil {
		return fmt.Errorf("%s: %w", h.Name, err)
	}
	res.Status = status
	if ctx.Err() != nil {
		res.Interrupted = true
		fmt.Fprintf(stderr, "rdggen run: the job stopped with status %d after the interrupt\n", status)
	} else if status != 0 {
		fmt.Fprintf(stderr, "rdggen run: the job exited with status %d\n", status)
	}
	return nil
}

// rankTag is the prefix mpirun --tag-output ("[1,3]<stdout>:") and
// horovodrun ("[3]<stdout>:") put on the ranks' lines.
var rankTag = regexp.MustCompile(`^\[(?:\d+,)?(\d+)\]<(?:stdout|stderr|stddiag)>:`)

// rankWriter writes whole lines, each tagged line as "<host>[<rank>]: text".
type rankWriter struct {
	mu    sync.Mutex
	w     io.Writer
	ranks []*inventory.Host
	lines lineBuffer
}

func newRankWriter(w io.Writer, ranks []*inventory.Host) *rankWriter {
	return &rankWriter{w: w, ranks: ranks}
}

func (r *rankWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lines.write(p, r.line)
}

// Flush writes a last line without its newline.
func (r *rankWriter) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines.flush(r.line)
}

// lineBuffer gathers written bytes into whole lines: write hands each
// complete line (without its newline) to line, flush the last one.
type lineBuffer struct{ buf []byte }

func (b *lineBuffer) write(p []byte, line func([]byte)) (int, error) {
	b.buf = append(b.buf, p...)
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line(b.buf[:i])
		b.buf = b.buf[i+1:]
	}
}

func (b *lineBuffer) flush(line func([]byte)) {
	if len(b.buf) > 0 {
		line(b.buf)
		b.buf = nil
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
