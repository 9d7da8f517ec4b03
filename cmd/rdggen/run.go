package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/rdggen/rdggen/internal/remote"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

const usageRun = `Usage: rdggen run -f cluster.yaml [--mpirun] [flags] [-- CMD ARG...]

Launches the training job from the first host's worker container (hvd-worker,
started by 'rdggen apply --target workers') with the generated launch line:
horovodrun over every worker's slots, or with --mpirun the equivalent mpirun
line (TCP on the workers' interface, NCCL's RoCE settings exported). Without
CMD every rank runs the VGG16 benchmark of run.sh; with '-- CMD ARG...' every
rank runs CMD instead.

The job's output is streamed, each rank's lines prefixed with its host and
rank ("clx-mld-42[2]: ..."). Ctrl-C stops the job (SIGINT to the launcher in
the worker, then SIGKILL after 10 s) and rdggen exits with the job's status.

Examples:
  rdggen run -f cluster.yaml
  rdggen run -f cluster.yaml --mpirun -- python /work/train.py --epochs 3

Exit status: the job's; 2 usage error; 3 the job could not be started.
`

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlagSet("run", usageRun, stdout, stderr)
	file := fs.StringP("file", "f", "", "inventory `FILE` (required)")
	useMpirun := fs.Bool("mpirun", false, "launch with mpirun instead of horovodrun")
	knownHosts := fs.String("known-hosts", "", "known_hosts `FILE` that the VMs' SSH host keys must match (default ~/.ssh/known_hosts)")
	identities := fs.StringArray("identity", nil, "private key `FILE` for SSH to the VMs (repeatable); ssh-agent keys are offered too")
	vm := &vmFlags{}
	vm.register(fs, false)
	cmd, rest := splitCommand(args)
	if code, ok := parse(fs, rest, stdout); !ok {
		return code
	}
	if err := vm.check(); err != nil {
		fmt.Fprintf(stderr, "rdggen: %v\n", err)
		return exitUsage
	}
	if *file == "" {
		fmt.Fprintln(stderr, "rdggen: run needs -f cluster.yaml: it starts a job on real machines (see rdggen run --help)")
		return exitUsage
	}
	inv, code, ok := load(ctx, fs, *file, stderr)
	if !ok {
		return code
	}
	return launch(ctx, inv, vm.ssh(*knownHosts, *identities, getenv), *useMpirun, cmd, stdout, stderr)
}

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

// launch runs the job in the first host's worker over SSH and returns its
// exit status.
func launch(ctx context.Context, inv *inventory.Inventory, ssh remote.SSH, useMpirun bool, cmd []string,
	stdout, stderr io.Writer) int {
	h := &inv.Hosts[0]
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	pidFile := "/tmp/rdggen-run." + hex.EncodeToString(nonce[:]) + ".pid"
	argv := horovod.LaunchArgs(inv, useMpirun, cmd)
	fmt.Fprintf(stderr, "rdggen run: in %s's worker (%s): %s\n", h.Name, h.Mgmt, quote.Line(quote.ShJoin(argv)))

	conn, err := ssh.Dial(ctx, h)
	if err != nil {
		fmt.Fprintf(stderr, "rdggen: run: %s: %v\n", h.Name, remote.DialError(err))
		return exitFailed
	}
	defer conn.Close()

	exec := []string{"docker", "exec"}
	if !useMpirun { // horovodrun hands its environment to every rank
		for _, e := range horovod.Env(inv) {
			exec = append(exec, "-e", e.Name+"="+e.Value)
		}
	}
	exec = append(exec, horovod.WorkerName, "sh", "-c", `echo $$ >`+pidFile+` && exec "$@"`, "rdggen-run")
	remoteCmd := asRoot(`docker inspect --type container -f '{{.State.Running}}' ` + horovod.WorkerName + ` 2>/dev/null | grep -qx true || ` +
		`{ echo "rdggen run: ` + horovod.WorkerName + ` is not running on ` + h.Name + `: run 'rdggen apply --target workers' first" >&2; exit 125; }; ` +
		`exec ` + quote.ShJoin(append(exec, argv...)))

	ranks := horovod.RankHosts(inv)
	out, errOut := newRankWriter(stdout, ranks), newRankWriter(stderr, ranks)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // Ctrl-C: stop the job in the worker, then give up on it.
		defer wg.Done()
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		fmt.Fprintf(stderr, "rdggen run: interrupted: sending SIGINT to the job in %s's worker\n", h.Name)
		signalJob(conn, pidFile, "INT")
		select {
		case <-done:
		case <-time.After(interruptGrace):
			fmt.Fprintf(stderr, "rdggen run: the job did not stop within %s: SIGKILL\n", interruptGrace)
			signalJob(conn, pidFile, "KILL")
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				conn.Close()
			}
		}
	}()
	status, err := conn.Exec(context.Background(), remoteCmd, nil, out, errOut)
	close(done)
	wg.Wait()
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

// asRoot runs a shell command line as root: directly when the login user is
// root or may use Docker, through `sudo -n` otherwise.
func asRoot(cmdline string) string {
	return `if [ "$(id -u)" = 0 ] || docker info >/dev/null 2>&1; then sh -c ` + remote.Quote(cmdline) +
		`; else sudo -n sh -c ` + remote.Quote(cmdline) + `; fi`
}

// signalJob sends sig to the launcher in the worker, in a session of its own.
func signalJob(conn *remote.SSHConn, pidFile, sig string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := asRoot(`docker exec ` + horovod.WorkerName + ` sh -c ` + remote.Quote(`kill -`+sig+` "$(cat `+pidFile+`)"`))
	_, _ = conn.Exec(ctx, cmd, nil, io.Discard, io.Discard)
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
