package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
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
	launcher := apply.LauncherHorovodrun
	if *useMpirun {
		launcher = apply.LauncherMpirun
	}
	if *useTorchrun || (!*useMpirun && env.Inv.Horovod.Launcher == inventory.LauncherTorchrun) {
		if len(cmd) == 0 {
			fmt.Fprintf(stderr, "rdggen: %s says horovod.launcher: torchrun, which needs the training script: rdggen run -f %s -- SCRIPT ARG... (or --mpirun for the MPI launch)\n",
				quote.Terminal(*file), quote.Terminal(quote.Sh(*file)))
			return exitUsage
		}
		launcher = apply.LauncherTorchrun
	}
	res, err := apply.Run(ctx, env.Inv, apply.RunOptions{Launcher: launcher, Command: cmd, DryRun: *dryRun,
		SSH: env.vmSSH(), Root: env.VM.root, Parallel: env.Parallel, Out: stdout, Err: stderr})
	if err != nil {
		runFailed(stderr, res, err)
		return exitFailed
	}
	return res.Status
}

// runFailed prints why the job could not be launched.
func runFailed(stderr io.Writer, res *apply.RunResult, err error) {
	var me *apply.MachinesError
	switch {
	case errors.As(err, &me) && me.Target == readiness.TargetHosts:
		for _, r := range res.NotReady {
			fmt.Fprintf(stderr, "rdggen run: %s\n", quote.Terminal(r.Line()))
		}
		fmt.Fprintf(stderr, "rdggen run: not launched: %s (NCCL needs each host's RoCE v2 GID index); fix what the lines above say, then run again\n",
			apply.NotReadySummary(res.NotReady))
	case errors.As(err, &me) && me.Target == readiness.TargetWorkers:
		for _, m := range me.Machines {
			fmt.Fprintf(stderr, "rdggen: run: %s: %v\n", m.Machine, m.Err)
		}
		if res.Launcher == apply.LauncherTorchrun {
			fmt.Fprintln(stderr, "rdggen run: not launched: torchrun needs every host")
		}
	default:
		fmt.Fprintf(stderr, "rdggen: run: %v\n", err)
	}
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
