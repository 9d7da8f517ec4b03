package netnstest

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/pkg/horovod"
)

// Unavailable skips t with the reason, or fails it when CI=true: in CI every
// prerequisite is installed, so a missing one is a broken set-up, not a
// reason to skip.
func Unavailable(t TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true, but "+format, args...)
	}
	t.Skipf(format, args...)
}

//go:embed testdata/allreduce.c
var allreduceSource []byte

// RequireMPI is Unavailable unless Open MPI's mpicc, mpirun and orted exist
// (Debian: openmpi-bin, libopenmpi-dev).
func RequireMPI(t TB) {
	t.Helper()
	for _, tool := range []string{"mpicc", "mpirun", "orted", "ssh"} {
		if _, err := exec.LookPath(tool); err != nil {
			Unavailable(t, "netnstest: %s not found (install openmpi-bin, libopenmpi-dev, openssh-client)", tool)
		}
	}
}

// BuildMPIProgram compiles the test program (testdata/allreduce.c) with
// mpicc and returns its path. Run with mpirun, every rank prints
// "rank R of N: alltoall ok, allreduce S"; "exit=N" makes rank 1 exit with
// status N, "sleep=S" makes every rank sleep first.
//
// mpicc runs once per process: the program it built is kept in memory
// and written into each caller's own t.TempDir (tests that run in
// parallel each get their file, removed with their test).
func BuildMPIProgram(t TB) string {
	t.Helper()
	RequireMPI(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "allreduce")
	mpiProgram.Lock()
	defer mpiProgram.Unlock()
	if mpiProgram.data == nil {
		src := filepath.Join(dir, "allreduce.c")
		if err := os.WriteFile(src, allreduceSource, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mpicc", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
			t.Fatalf("mpicc: %v\n%s", err, out)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		mpiProgram.data = data
		return bin
	}
	if err := exefile.Write(bin, mpiProgram.data, 0o755); err != nil {
		t.Fatal(err)
	}
	// Every namespace host must be able to reach it: t.TempDir's parents
	// may be private to root's umask, which they are not here.
	return bin
}

// mpiProgram is the program BuildMPIProgram compiled, once per process.
var mpiProgram struct {
	sync.Mutex
	data []byte
}

// mcaParamsFile is Open MPI's system-wide parameter file (Debian's openmpi-bin).
const mcaParamsFile = "/etc/openmpi/openmpi-mca-params.conf"

// yieldingMCAParams is this machine's mcaParamsFile with
// mpi_yield_when_idle = 1, for the workers the tests start (the emulated
// ones and the worker images): a rank that waits for its peers (in
// MPI_Alltoall, MPI_Allreduce, MPI_Finalize, or for a rank that exited)
// yields the CPU instead of polling at 100 %, as Open MPI does by itself
// only when a node is oversubscribed ("mpi_yield_when_idle", Open MPI 4.1's
// ompi_info; its FAQ "Running MPI jobs", oversubscription). The tests' ranks
// share two cores with dockerd, sshd, FRR and each other: measured over
// cmd/rdggen's tests, the ranks' CPU fell from 54 s to 25 s. An error when
// this machine has no such file.
func yieldingMCAParams() ([]byte, error) {
	b, err := os.ReadFile(mcaParamsFile)
	if err != nil {
		return nil, err
	}
	return append(b, "\n# netnstest: a waiting rank yields the CPU to the other processes of the test machine\nmpi_yield_when_idle = 1\n"...), nil
}

// workerRoot is where the emulated workers' /root comes from: it holds .ssh,
// the workers' SSH files.
func (c *Cluster) workerRoot() string { return filepath.Join(c.Dir, "worker-root") }

// StartWorkers emulates the worker containers of the cluster: for each host,
// horovod.WorkerCommand (sshd with the workers' configuration) in the host's
// container namespace, or in the host's own namespace when hostNetwork is
// set, each with its own hostname (the host's name), /root holding files as
// .ssh and a private /run. Teardown stops them.
func (c *Cluster) StartWorkers(files []horovod.WorkerFile, hostNetwork bool) {
	c.t.Helper()
	dir := filepath.Join(c.workerRoot(), ".ssh")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, f.Mode); err != nil {
			c.t.Fatal(err)
		}
	}
	for _, h := range c.Hosts {
		ns := h.ContainerNS
		if hostNetwork {
			ns = h.NS
		}
		cmd := c.inWorker(context.Background(), h, ns, append([]string{"sh", "-c", `mount -t tmpfs none /run && exec "$@"`, "worker"}, horovod.WorkerCommand()...)...)
		log, err := os.Create(filepath.Join(c.Dir, h.Name+"-worker.log"))
		if err != nil {
			c.t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			c.t.Fatal(err)
		}
		c.t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			log.Close()
		})
	}
}

// WorkerLog is the output of h's emulated worker (sshd -e logs each login
// there, with the address it came from).
func (c *Cluster) WorkerLog(h *Host) string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, h.Name+"-worker.log"))
	return string(b)
}

// WorkerExec is `docker exec` in h's emulated worker: argv runs in the
// worker's namespace (container or host, as StartWorkers set up) with the
// worker's hostname and /root. The command is not started.
func (c *Cluster) WorkerExec(ctx context.Context, h *Host, hostNetwork bool, argv ...string) *exec.Cmd {
	ns := h.ContainerNS
	if hostNetwork {
		ns = h.NS
	}
	return c.inWorker(ctx, h, ns, argv...)
}

func (c *Cluster) inWorker(ctx context.Context, h *Host, ns string, argv ...string) *exec.Cmd {
	// Open MPI's parameter file, when this machine has one, is
	// yieldingMCAParams in the worker's own mount namespace.
	script := `hostname "$1" && mount --bind "$2" /root && shift 2 && exec "$@"`
	if params, err := yieldingMCAParams(); err == nil {
		p := filepath.Join(c.Dir, "openmpi-mca-params.conf")
		if err := os.WriteFile(p, params, 0o644); err != nil {
			c.t.Fatal(err)
		}
		script = `hostname "$1" && mount --bind "$2" /root && mount --bind "$3" ` + mcaParamsFile + ` && shift 3 && exec "$@"`
		argv = append([]string{p}, argv...)
	}
	args := append([]string{"netns", "exec", ns, "unshare", "-m", "-u", "--propagation", "private",
		"sh", "-c", script, "worker", h.Name, c.workerRoot()}, argv...)
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Env = append(os.Environ(), "HOME=/root")
	return cmd
}

// MPIJob runs argv (an mpirun line) in h's emulated worker and returns its
// combined output; err is non-nil when it failed or ctx ended first.
func (c *Cluster) MPIJob(ctx context.Context, h *Host, hostNetwork bool, argv ...string) (string, error) {
	return c.MPIJobUntil(ctx, h, hostNetwork, "", argv...)
}

// MPIJobUntil is MPIJob for a job a test expects to hang once it has said
// why (Open MPI's ranks wait on for a peer they refused): as soon as its
// output contains until, the job's process group is killed and the error
// says it was stopped so. An empty until never stops it.
func (c *Cluster) MPIJobUntil(ctx context.Context, h *Host, hostNetwork bool, until string, argv ...string) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := c.WorkerExec(ctx, h, hostNetwork, argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out := &untilWriter{until: until, seen: cancel}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	if out.said {
		return out.String(), fmt.Errorf("stopped once its output said %q", until)
	}
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("still running after the test's deadline: %w", ctx.Err())
	}
	return out.String(), err
}

// untilWriter collects a job's output and calls seen once it contains until.
type untilWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	until string
	said  bool
	seen  func()
}

func (w *untilWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.until != "" && !w.said && strings.Contains(w.buf.String(), w.until) {
		w.said = true
		w.seen()
	}
	return len(p), nil
}

func (w *untilWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// RankLines returns the test program's per-rank result lines in out.
func RankLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "rank "); i >= 0 && strings.Contains(l, " of ") {
			lines = append(lines, l[i:])
		}
	}
	return lines
}
