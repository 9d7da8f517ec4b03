package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/horovod"
)

// testImage is the worker image the Docker tests import (netnstest.WorkerImage).
const testImage = "rdgtest/worker:1"

// applyTo runs `rdggen apply --target T` in-process against a namespace
// cluster with the flags a user would pass, plus the test's root prefix and
// Docker stand-ins.
func applyTo(t *testing.T, c *netnstest.Cluster, target string, extra ...string) (int, string, string) {
	t.Helper()
	args := []string{"apply", "--target", target, "-f", c.InventoryPath,
		"--ssh-user", "root", "--identity", c.Identity, "--known-hosts", c.KnownHosts,
		"--host-root", c.RootTemplate(),
		"--docker-restart", c.DockerRestartCommand(), "--docker-validate", c.DockerValidateCommand(),
		"--keys", filepath.Join(c.Dir, "keys")}
	args = append(args, extra...)
	if !slices.Contains(extra, "--dry-run") {
		args = append(args, "--yes")
	}
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(context.Background(), args, &out, &errb, func(string) string { return "" })
	t.Logf("rdggen apply --target %s %s → exit %d in %.2fs\n%s%s", target, strings.Join(extra, " "), code, time.Since(start).Seconds(), out.String(), errb.String())
	return code, out.String(), errb.String()
}

// inspectWorker is the part of `docker inspect hvd-worker` the test checks.
type inspectWorker struct {
	Config struct {
		Image  string
		Labels map[string]string
		Cmd    []string
	}
	State      struct{ Running bool }
	HostConfig struct {
		Binds         []string
		CapAdd        []string
		ShmSize       int64
		RestartPolicy struct{ Name string }
		Ulimits       []struct {
			Name       string
			Hard, Soft int64
		}
		Devices        []struct{ PathOnHost, PathInContainer string }
		Runtime        string
		DeviceRequests []struct {
			Count        int
			Capabilities [][]string
		}
		NetworkMode string
	}
	NetworkSettings struct{ IPAddress string }
}

func inspect(t *testing.T, h *netnstest.Host) inspectWorker {
	t.Helper()
	out, err := h.Docker("inspect", "--type", "container", horovod.WorkerName)
	if err != nil {
		t.Fatalf("%s: docker inspect: %v\n%s", h.Name, err, out)
	}
	var w []inspectWorker
	if err := json.Unmarshal([]byte(out), &w); err != nil || len(w) != 1 {
		t.Fatalf("%s: docker inspect: %v\n%s", h.Name, err, out)
	}
	return w[0]
}

// `rdggen apply --target workers` against a real dockerd on each of 3
// namespace hosts, with an image built here: the worker is created with the
// flags of run.sh, its sshd answers the other workers on the worker port with
// the pinned host key and sees their container addresses, a second apply
// changes nothing, a changed inventory re-creates it, and an MPI job started
// by `rdggen run` passes.
func TestApplyWorkersDocker(t *testing.T) {
	t.Parallel()
	prog := netnstest.BuildMPIProgram(t)
	c := netnstest.New(t, netnstest.Options{Hosts: 3, Docker: true, Image: testImage})
	c.ImportImage(testImage, liveWorkerImage(t, prog))
	inv := c.Inventory

	if code, _, _ := applyTo(t, c, "hosts"); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	code, out, _ := applyTo(t, c, "workers", "--dry-run")
	if code != exitOK || !strings.Contains(out, "workers: dry run, nothing changed: 3 would change, 0 up to date, 0 failed") ||
		!strings.Contains(out, "+ container hvd-worker: "+testImage+", bridge network (docker0), sshd on port 12345") {
		t.Fatalf("dry run: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "keys")); err == nil {
		t.Fatal("the dry run wrote the keys")
	}
	if out, _ := c.Hosts[0].Docker("ps", "-aq"); strings.TrimSpace(out) != "" {
		t.Fatalf("the dry run created containers: %s", out)
	}

	code, out, _ = applyTo(t, c, "workers")
	if code != exitOK || !strings.Contains(out, "workers: 3 changed, 0 up to date, 0 failed") {
		t.Fatalf("apply workers: exit %d", code)
	}
	for _, name := range []string{"mpi_ed25519", "worker_host_ed25519"} {
		if fi, err := os.Stat(filepath.Join(c.Dir, "keys", name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("key %s: %v %v", name, err, fi)
		}
	}
	for _, h := range c.Hosts {
		w := inspect(t, h)
		hc := w.HostConfig
		want := h.File(horovod.WorkerSSHDir) + ":/root/.ssh:ro"
		if !w.State.Running || w.NetworkSettings.IPAddress != h.Container.String() || len(hc.Binds) != 1 || hc.Binds[0] != want ||
			len(hc.CapAdd) != 1 || strings.TrimPrefix(hc.CapAdd[0], "CAP_") != "IPC_LOCK" || hc.ShmSize != 1<<30 || hc.RestartPolicy.Name != "unless-stopped" ||
			len(hc.Ulimits) != 1 || hc.Ulimits[0].Name != "memlock" || hc.Ulimits[0].Hard != -1 ||
			len(hc.Devices) != 1 || hc.Devices[0].PathOnHost != "/dev/infiniband" ||
			len(hc.DeviceRequests) != 1 || hc.DeviceRequests[0].Count != -1 || fmt.Sprint(hc.DeviceRequests[0].Capabilities) != "[[gpu]]" ||
			w.Config.Labels[horovod.ConfigLabel] != horovod.WorkerConfigHash(inv, h.File(horovod.WorkerSSHDir)) {
			t.Errorf("%s: worker %+v", h.Name, w)
		}
		if fi, err := os.Stat(h.File(horovod.WorkerSSHDir)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %s: %v", h.Name, horovod.WorkerSSHDir, err)
		}
	}
	// From each worker to each other one: ssh with the cluster key and the
	// pinned host key, and the receiver's sshd logs the sender's container
	// address. The 6 logins at once (each worker's sshd receives 2, below
	// its MaxStartups of 10), then each receiver's log once.
	var logins sync.WaitGroup
	for _, a := range c.Hosts {
		for _, b := range c.Hosts {
			if a == b {
				continue
			}
			logins.Add(1)
			go func() {
				defer logins.Done()
				out, err := a.Docker("exec", horovod.WorkerName, "ssh", b.Container.String(), "echo", "from-"+a.Name)
				if err != nil || strings.TrimSpace(out) != "from-"+a.Name {
					t.Errorf("%s -> %s: %v %s", a.Name, b.Name, err, out)
				}
			}()
		}
	}
	logins.Wait()
	for _, b := range c.Hosts {
		log, _ := b.Docker("logs", horovod.WorkerName)
		for _, a := range c.Hosts {
			if a != b && !strings.Contains(log, "Accepted publickey for root from "+a.Container.String()+" ") {
				t.Errorf("%s's sshd did not see %s's container address:\n%s", b.Name, a.Name, log)
			}
		}
	}

	checkWorkersReadiness(t, c)

	code, out, _ = applyTo(t, c, "workers")
	if code != exitOK || !strings.Contains(out, "workers: nothing to do: 3 up to date") {
		t.Fatalf("second apply: exit %d", code)
	}

	// A changed inventory (another worker port) changes sshd's configuration
	// and restarts the workers.
	b, err := os.ReadFile(c.InventoryPath)
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(c.Dir, "changed.yaml")
	if err := os.WriteFile(changed, []byte(strings.Replace(string(b), "horovod: {network: bridge", "horovod: {ssh_port: 2222, network: bridge", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = applyTo(t, c, "workers", "-f", changed)
	if code != exitOK || !strings.Contains(out, "workers: 3 changed, 0 up to date, 0 failed") ||
		!strings.Contains(out, "~ /etc/rdggen/worker-ssh/sshd_config") || !strings.Contains(out, "~ container hvd-worker: restart (sshd's configuration or host key changed)") {
		t.Fatalf("apply of the changed inventory: exit %d", code)
	}
	if out, err := c.Hosts[0].Docker("exec", horovod.WorkerName, "ssh", c.Hosts[2].Container.String(), "echo", "port-2222"); err != nil || strings.TrimSpace(out) != "port-2222" {
		t.Errorf("ssh on the new port: %v %s", err, out)
	}
	// Docker before 19.03 has no --gpus: the worker asks for
	// nvidia-docker2's runtime by name (the hosts register it, as
	// nvidia-docker2 does) and runs.
	docker1809 := filepath.Join(c.Dir, "docker1809.yaml")
	if err := os.WriteFile(docker1809, []byte(strings.Replace(string(b), `docker: {version: "20.10"`, `docker: {version: "18.09"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ = applyTo(t, c, "workers", "-f", docker1809); code != exitOK || !strings.Contains(out, "workers: 3 changed, 0 up to date, 0 failed") {
		t.Fatalf("apply with Docker 18.09: exit %d", code)
	}
	if w := inspect(t, c.Hosts[0]); !w.State.Running || w.HostConfig.Runtime != "nvidia" || len(w.HostConfig.DeviceRequests) != 0 {
		t.Errorf("Docker 18.09: worker runtime %q, running %v, device requests %v", w.HostConfig.Runtime, w.State.Running, w.HostConfig.DeviceRequests)
	}
	if code, out, _ = applyTo(t, c, "workers"); code != exitOK || !strings.Contains(out, "workers: 3 changed") {
		t.Fatalf("back to the first inventory: exit %d", code)
	}

	// rdggen run: a real MPI job over the three workers, from ns-01's. It
	// reads each VM's GID table first (staged: ns-02's RoCE v2 GID of its
	// data address at index 5, the others' at 3), and each rank runs with its
	// own host's index and NCCL's GDR level for a VM.
	for i, h := range c.Hosts {
		at := 3
		if i == 1 {
			at = 5
		}
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), at))
	}
	code, out, errOut := rdggenRun(t, c, context.Background(), "--mpirun", "--", "/usr/local/bin/allreduce", "env=NCCL_IB_GID_INDEX,NCCL_NET_GDR_LEVEL,NCCL_IB_HCA")
	if code != 0 {
		t.Fatalf("rdggen run: exit %d", code)
	}
	for r, h := range c.Hosts {
		gid := 3
		if r == 1 {
			gid = 5
		}
		for _, want := range []string{
			fmt.Sprintf("%s[%d]: rank %d of 3: alltoall ok, allreduce 6\n", h.Name, r, r),
			fmt.Sprintf("%s[%d]: rank %d env NCCL_IB_GID_INDEX=%d NCCL_NET_GDR_LEVEL=PHB NCCL_IB_HCA=mlx5_0\n", h.Name, r, r, gid),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("rdggen run's output lacks %q", want)
			}
		}
	}
	if !strings.Contains(errOut, "rdggen run: in ns-01's worker") ||
		!strings.Contains(errOut, "rdggen run: the hosts' GID indexes differ (ns-01 3, ns-02 5, ns-03 3): each rank sets its own (RDGGEN_GID_INDEXES)") ||
		!strings.Contains(errOut, "-x 'RDGGEN_GID_INDEXES=1:3 2:5 3:3'") {
		t.Errorf("rdggen run does not say where it launches and with which GID indexes: %s", errOut)
	}
	runScriptGIDs(t, c)
	// The dry run reads the tables and prints the line, quoted for sh as it
	// would run (a quote in an argument is '\'' once, not doubled); it
	// launches nothing.
	if code, out, _ := rdggenRun(t, c, context.Background(), "--dry-run", "--", "/usr/local/bin/allreduce", "it's"); code != 0 ||
		!strings.HasPrefix(out, "docker exec -e NCCL_IB_HCA=mlx5_0 ") || !strings.Contains(out, " -e 'RDGGEN_GID_INDEXES=1:3 2:5 3:3' hvd-worker horovodrun -np 3 ") ||
		!strings.HasSuffix(out, ` rdggen-rank /usr/local/bin/allreduce 'it'\''s'`+"\n") {
		t.Errorf("dry run: exit %d: %s", code, out)
	}
	// A host without a RoCE v2 GID of its data address: nothing is launched.
	v1only := roceTable(c.Hosts[2].Data.Addr(), 3)
	v1only[3] = gidEntry{"0000:0000:0000:0000:0000:0000:0000:0000", ""}
	stageRDMA(t, c.Hosts[2], inv.Horovod.HCA, inv.Hosts[2].DataInterface, v1only)
	if code, _, errOut := rdggenRun(t, c, context.Background(), "--mpirun", "--", "/usr/local/bin/allreduce"); code != exitFailed ||
		!strings.Contains(errOut, "rdggen run: ns-03: gid mlx5_0 port 1: FAILED: found no RoCE v2 GID of "+c.Hosts[2].Data.Addr().String()) ||
		!strings.Contains(errOut, "rdggen run: not launched: no usable RoCE v2 GID on ns-03 (NCCL needs each host") || strings.Contains(errOut, "in ns-01's worker") {
		t.Errorf("no RoCE v2 GID on ns-03: exit %d", code)
	}
	for i, h := range c.Hosts {
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), 3))
	}
	// Three jobs from ns-01's worker, one after the other (two mpiruns at
	// once from one worker failed to start their daemons under load, exit
	// 255): one GID index for all, a rank exiting 3 (the job's exit status
	// is rdggen's), and horovodrun, which the test image lacks.
	var jobs []checkOutcome
	for _, args := range [][]string{{"--mpirun", "--", "/usr/local/bin/allreduce", "env=NCCL_IB_GID_INDEX"},
		{"--mpirun", "--", "/usr/local/bin/allreduce", "exit=3"}, nil} {
		var j checkOutcome
		j.code, j.out, j.errOut = rdggenRun(t, c, context.Background(), args...)
		jobs = append(jobs, j)
	}
	if j := jobs[0]; j.code != 0 ||
		!strings.Contains(j.errOut, "rdggen run: NCCL_IB_GID_INDEX=3 on every host") || !strings.Contains(j.out, "ns-03[2]: rank 2 env NCCL_IB_GID_INDEX=3\n") {
		t.Errorf("one GID index for all: exit %d", j.code)
	}
	if j := jobs[1]; j.code != 3 {
		t.Errorf("a rank exiting 3: rdggen run exited %d", j.code)
	}
	if j := jobs[2]; j.code != 127 || !strings.Contains(j.errOut, "horovodrun") {
		t.Errorf("horovodrun is not in the test image: exit %d", j.code)
	}
	// Ctrl-C stops the job everywhere: the interrupt comes once every
	// worker runs its rank (not after a fixed time, which on a loaded
	// machine can fall while mpirun still starts its daemons), and the job
	// ends within 15 s of it.
	ctx, cancel := context.WithCancel(context.Background())
	var interrupted atomic.Int64
	go func() {
		defer cancel()
		defer func() { interrupted.Store(time.Now().UnixNano()) }()
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(200 * time.Millisecond) {
			running := 0
			for _, h := range c.Hosts {
				if top, err := h.Docker("top", horovod.WorkerName); err == nil && strings.Contains(top, "/usr/local/bin/allreduce sleep=120") {
					running++
				}
			}
			if running == len(c.Hosts) {
				return
			}
		}
	}()
	code, _, errOut = rdggenRun(t, c, ctx, "--mpirun", "--", "/usr/local/bin/allreduce", "sleep=120")
	cancel()
	took := time.Since(time.Unix(0, interrupted.Load()))
	if code == 0 || interrupted.Load() == 0 || took > 15*time.Second || !strings.Contains(errOut, "interrupted: sending SIGINT") {
		t.Errorf("interrupted job: exit %d, %s after the interrupt", code, took)
	}
	for _, h := range c.Hosts {
		if top, err := h.Docker("top", horovod.WorkerName); err != nil || strings.Contains(top, "allreduce") || strings.Contains(top, "orted") {
			t.Errorf("%s: processes left after the interrupt (%v):\n%s", h.Name, err, top)
		}
	}

	// Docker restarts on ns-02 (the real dockerd, which puts its MASQUERADE
	// rule back on top): what systemd then runs, rdggen-firewall.service's
	// script, restores the exemption, and ns-02's worker (restarted by Docker,
	// restart policy unless-stopped) reaches the others with its own address.
	h2 := c.Hosts[1]
	if out, err := c.Exec(h2.NS, "env", "RDGGEN_ROOT="+h2.Root, "sh", "-c", c.DockerRestartCommand()); err != nil {
		t.Fatalf("docker restart: %v %s", err, out)
	}
	if nat, _ := c.Exec(h2.NS, "iptables", "-t", "nat", "-S", "POSTROUTING"); !strings.HasPrefix(nat, "-P POSTROUTING ACCEPT\n-A POSTROUTING -s 172.16.2.0/24 ! -o docker0 -j MASQUERADE\n") {
		t.Fatalf("after Docker's restart, POSTROUTING:\n%s", nat)
	}
	if out, err := c.Exec(h2.NS, "sh", h2.File("/etc/rdggen/firewall.sh")); err != nil {
		t.Fatalf("firewall.sh: %v %s", err, out)
	}
	code, _, _ = applyTo(t, c, "workers") // waits for the restarted worker's sshd
	if code != exitOK {
		t.Fatalf("apply after the docker restart: exit %d", code)
	}
	if out, err := h2.Docker("exec", horovod.WorkerName, "ssh", c.Hosts[0].Container.String(), "true"); err != nil {
		t.Fatalf("ns-02 -> ns-01 after Docker's restart: %v %s", err, out)
	}
	if log, _ := c.Hosts[0].Docker("logs", "--since", "30s", horovod.WorkerName); !strings.Contains(log, "Accepted publickey for root from "+h2.Container.String()+" ") {
		t.Errorf("after Docker's restart ns-01's sshd did not see ns-02's container address:\n%s", log)
	}

	// Another image re-creates the workers. One whose sshd cannot start, on
	// ns-03 only: ns-03 fails, naming the reason from the worker's log; the
	// others are re-created and ready.
	const broken = "rdgtest/worker:2"
	tagged := make(chan error, 1) // ns-01 and ns-02 tag while ns-03's image is built
	go func() {
		tagged <- onHosts(c, func(i int, h *netnstest.Host) error {
			if i == 2 {
				return nil
			}
			if out, err := h.Docker("tag", testImage, broken); err != nil {
				return fmt.Errorf("%s: %v %s", h.Name, err, out)
			}
			return nil
		})
	}()
	tarball := netnstest.ImageWithoutSSHD(t)
	if err := <-tagged; err != nil {
		t.Fatal(err)
	}
	imp := exec.Command("docker", "import", "-", broken)
	imp.Env = append(os.Environ(), "DOCKER_HOST=unix://"+c.Hosts[2].DockerSocket())
	imp.Stdin = bytes.NewReader(tarball)
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if err := os.WriteFile(changed, []byte(strings.Replace(string(b), testImage, broken, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = applyTo(t, c, "workers", "-f", changed)
	if code != exitFailed || !strings.Contains(out, "workers: 2 changed, 0 up to date, 1 failed (ns-03)") ||
		!strings.Contains(out, "~ container hvd-worker: re-create (configuration ") || !strings.Contains(out, ", image "+testImage+" -> "+broken+")") ||
		!strings.Contains(out, "ns-03: FAILED after ") || !strings.Contains(out, "s: hvd-worker is not running") || !strings.Contains(out, "/usr/sbin/sshd: not found") ||
		!strings.Contains(errOut, "apply failed for: workers (1 of 3 host(s) failed: ns-03)") {
		t.Fatalf("broken image on ns-03: exit %d", code)
	}
}

// runScriptGIDs runs the generated run.sh on ns-01 as a user would
// (`./run.sh mpirun CMD`), against the real workers: it reads each host's GID
// table in that host's worker through the workers' SSH — the staged sysfs
// trees are copied into the workers, and RDGGEN_SYSFS points there — and
// each rank gets its own host's index (ns-02's at 5). A host without a RoCE
// v2 GID stops it before mpirun starts.
func runScriptGIDs(t *testing.T, c *netnstest.Cluster) {
	t.Helper()
	script := filepath.Join(c.Dir, "run.sh")
	if err := exefile.Write(script, horovod.RunScript(c.Inventory), 0o755); err != nil {
		t.Fatal(err)
	}
	copySysfs := func() {
		t.Helper()
		if err := onHosts(c, func(_ int, h *netnstest.Host) error {
			_, _ = h.Docker("exec", horovod.WorkerName, "rm", "-rf", "/tmp/rdgsys")
			if out, err := h.Docker("cp", h.File("/sys")+"/.", horovod.WorkerName+":/tmp/rdgsys"); err != nil {
				return fmt.Errorf("%s: docker cp: %v %s", h.Name, err, out)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	h1 := c.Hosts[0]
	runSh := func(args ...string) (string, error) {
		t.Helper()
		out, err := c.Exec(h1.NS, append([]string{"env", "DOCKER_HOST=unix://" + h1.DockerSocket(), "RDGGEN_SYSFS=/tmp/rdgsys", "bash", script}, args...)...)
		t.Logf("run.sh %s: %v\n%s", strings.Join(args, " "), err, out)
		return out, err
	}
	copySysfs()
	out, err := runSh("mpirun", "/usr/local/bin/allreduce", "env=NCCL_IB_GID_INDEX,NCCL_NET_GDR_LEVEL")
	if err != nil || !strings.Contains(out, "run.sh: the hosts' GID indexes differ; per rank: RDGGEN_GID_INDEXES=1:3 2:5 3:3") {
		t.Fatalf("run.sh mpirun: %v", err)
	}
	for r := range c.Hosts {
		gid := 3
		if r == 1 {
			gid = 5
		}
		if want := fmt.Sprintf("<stdout>:rank %d env NCCL_IB_GID_INDEX=%d NCCL_NET_GDR_LEVEL=PHB\n", r, gid); !strings.Contains(out, want) {
			t.Errorf("run.sh's job lacks %q", want)
		}
	}
	if len(netnstest.RankLines(out)) != 3 {
		t.Errorf("run.sh's job did not complete on 3 ranks")
	}
	// ns-03 without a RoCE v2 GID of its data address.
	h3 := c.Hosts[2]
	v1only := roceTable(h3.Data.Addr(), 3)
	v1only[3] = gidEntry{"0000:0000:0000:0000:0000:0000:0000:0000", ""}
	stageRDMA(t, h3, c.Inventory.Horovod.HCA, c.Inventory.Hosts[2].DataInterface, v1only)
	copySysfs()
	out, err = runSh("mpirun", "/usr/local/bin/allreduce")
	if err == nil || !strings.Contains(out, "run.sh: ns-03: no RoCE v2 GID of "+h3.Data.Addr().String()+" on mlx5_0 port 1 (read in its worker "+h3.Container.String()+": not found)") ||
		len(netnstest.RankLines(out)) != 0 {
		t.Errorf("run.sh without ns-03's GID: %v", err)
	}
	stageRDMA(t, h3, c.Inventory.Horovod.HCA, c.Inventory.Hosts[2].DataInterface, roceTable(h3.Data.Addr(), 3))
}

// rdggenRun runs `rdggen run` in-process against the cluster.
func rdggenRun(t *testing.T, c *netnstest.Cluster, ctx context.Context, extra ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"run", "-f", c.InventoryPath, "--ssh-user", "root", "--identity", c.Identity, "--known-hosts", c.KnownHosts,
		"--host-root", c.RootTemplate()}, extra...)
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(ctx, args, &out, &errb, func(string) string { return "" })
	t.Logf("rdggen %s → exit %d in %.2fs\n%s%s", strings.Join(args, " "), code, time.Since(start).Seconds(), out.String(), errb.String())
	return code, out.String(), errb.String()
}

// checkWorkersReadiness is `rdggen check --target workers` on the running
// workers: all ready, the logins along the ring (ns-01 → ns-02 → ns-03 →
// ns-01) seen with the sender's own container address and every pair
// covered by the rule check; --all-pairs logs in along all 6 pairs. Then
// ns-02 loses its NAT exemption (the jump Docker pushes down at every
// start) and exactly ns-02's checks fail (its login and its rules), naming
// its nat POSTROUTING and the script that fixes it; the script run, all
// pass. Then ns-01 translates its traffic to ns-03 only, a pair the ring
// does not log in: the rule check names it, and --all-pairs' login confirms
// it.
func checkWorkersReadiness(t *testing.T, c *netnstest.Cluster) {
	t.Helper()
	// A machine that does not allow unlimited locked memory (a sandbox
	// without CAP_SYS_RESOURCE) gets its hard limit in the containers
	// (netnstest's runc-memlock): the memlock check must then say so on
	// every worker, and only that.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(unix.RLIMIT_MEMLOCK, &lim); err != nil {
		t.Fatal(err)
	}
	unlimited := lim.Max == unix.RLIM_INFINITY
	if !unlimited {
		t.Logf("this machine caps locked memory at %d bytes: the workers' memlock check fails as it must", lim.Max)
	}
	healthy := func(r checkOutcome, total int, extra ...string) string {
		t.Helper()
		code, out, errOut := r.code, r.out, r.errOut
		if unlimited {
			if code != exitOK || !strings.Contains(errOut, fmt.Sprintf("rdggen check: all %d check(s) passed", total)) {
				t.Fatalf("healthy workers %v: exit %d", extra, code)
			}
			return out
		}
		for _, h := range c.Hosts {
			want := fmt.Sprintf("%s: memlock: FAILED: found ulimit -l %d KiB: NCCL cannot register its buffers (ibv_reg_mr: Cannot allocate memory); expected unlimited", h.Name, lim.Max/1024)
			if !strings.Contains(out, want) {
				t.Errorf("no line %q", want)
			}
		}
		if code != exitInvalid || !strings.Contains(errOut, fmt.Sprintf("rdggen check: %d passed, 3 failed, 0 could not tell", total-3)) {
			t.Fatalf("healthy workers %v, memlock clamped to %d bytes by this machine: exit %d", extra, lim.Max, code)
		}
		return out
	}
	// The ring, then --all-pairs.
	runs := checksInTurn(t, c, []string{"--target", "workers"}, []string{"--target", "workers", "--all-pairs"})
	// 6 checks per worker, its ring login and its rule check.
	out := healthy(runs[0], 24)
	for _, h := range c.Hosts {
		for _, want := range []string{h.Name + ": devices /dev/infiniband: passed (uverbs0)", h.Name + ": gdr-level NCCL_NET_GDR_LEVEL: passed (PHB)",
			h.Name + ": peer-rules with 2 peer(s): passed (to every peer's worker untranslated (RDGGEN-POSTROUTING) via their data addresses on data0; new connections from them accepted (RDGGEN-CONTAINERS))"} {
			if !strings.Contains(out, want) {
				t.Errorf("no line %q", want)
			}
		}
	}
	if want := "3 workers: 3 login(s) along a ring (each worker a source and a receiver once); 6 of 6 pairs covered by the rule check\n"; !strings.Contains(out, want) {
		t.Errorf("no schedule line %q", want)
	}
	sourceLines := func(out string) int { return strings.Count(out, ": source-address to ") }
	for i, a := range c.Hosts {
		b := c.Hosts[(i+1)%3]
		if want := fmt.Sprintf("%s: source-address to %s: passed (%s's sshd saw %s)", a.Name, b.Name, b.Name, a.Container); !strings.Contains(out, want) {
			t.Errorf("no line %q", want)
		}
	}
	if n := sourceLines(out); n != 3 {
		t.Errorf("%d logins reported, want the ring's 3", n)
	}
	// --all-pairs: every worker to every other.
	out = healthy(runs[1], 27, "--all-pairs")
	for _, a := range c.Hosts {
		for _, b := range c.Hosts {
			if a != b {
				if want := fmt.Sprintf("%s: source-address to %s: passed (%s's sshd saw %s)", a.Name, b.Name, b.Name, a.Container); !strings.Contains(out, want) {
					t.Errorf("--all-pairs: no line %q", want)
				}
			}
		}
	}
	if !strings.Contains(out, "3 workers: 6 login(s), every pair (--all-pairs); 6 of 6 pairs covered by the rule check\n") {
		t.Errorf("--all-pairs: no schedule line")
	}

	failures := func(out string) []string {
		var failed []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "FAILED") && !strings.Contains(l, ": memlock: ") {
				failed = append(failed, l)
			}
		}
		return failed
	}
	h2 := c.Hosts[1]
	if out, err := c.Exec(h2.NS, "iptables", "-t", "nat", "-D", "POSTROUTING", "-j", "RDGGEN-POSTROUTING"); err != nil {
		t.Fatalf("remove the exemption: %v %s", err, out)
	}
	code, out, errOut := checkCluster(t, c, "--target", "workers")
	if code != exitInvalid {
		t.Errorf("ns-02 masquerading: exit %d, want %d", code, exitInvalid)
	}
	failed := failures(out)
	if len(failed) != 2 {
		t.Errorf("%d failures, want ns-02's login and rule check:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	noJump := "ns-02's nat POSTROUTING has no jump to RDGGEN-POSTROUTING, so Docker's MASQUERADE translates its containers' traffic"
	fixNAT := "fix: on ns-02: run /etc/rdggen/firewall.sh (or rdggen apply --target hosts"
	for _, l := range failed {
		switch {
		case strings.HasPrefix(l, "ns-02: source-address to ns-03: FAILED: found "):
			// Translated, ns-03's firewall drops the data address: no login.
			if !strings.Contains(l, noJump) || !strings.Contains(l, "expected "+h2.Container.String()+" (this worker's own address)") || !strings.Contains(l, fixNAT) {
				t.Errorf("login failure line: %s", l)
			}
		case strings.HasPrefix(l, "ns-02: peer-rules with 2 peer(s): FAILED: found "+noJump+" (ns-01, ns-03)"):
			if !strings.Contains(l, fixNAT) {
				t.Errorf("rule failure line: %s", l)
			}
		default:
			t.Errorf("failure line: %s", l)
		}
	}
	if !strings.Contains(errOut, "rdggen check: not ready: ") || !strings.Contains(errOut, "ns-02 source-address to ns-03; ns-02 peer-rules with 2 peer(s)") {
		t.Errorf("the summary does not name ns-02's checks")
	}
	if !strings.Contains(out, "; 2 of 6 pairs covered by the rule check\n") {
		t.Errorf("the schedule line does not count ns-02's 4 pairs out")
	}
	if out, err := c.Exec(h2.NS, "sh", h2.File("/etc/rdggen/firewall.sh")); err != nil {
		t.Fatalf("firewall.sh: %v %s", err, out)
	}
	if _, out, _ := checkCluster(t, c, "--target", "workers"); len(failures(out)) != 0 {
		t.Errorf("after firewall.sh: still failing:\n%s", strings.Join(failures(out), "\n"))
	}

	// ns-01 stops exempting its traffic to ns-03, a pair the ring does not
	// log in to (ns-01 logs in to ns-02).
	h1, h3 := c.Hosts[0], c.Hosts[2]
	if out, err := c.Exec(h1.NS, "iptables", "-t", "nat", "-I", "RDGGEN-POSTROUTING", "1", "-d", h3.Subnet.String(), "-j", "RETURN"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	// The ring, then --all-pairs, as above.
	runs = checksInTurn(t, c, []string{"--target", "workers"}, []string{"--target", "workers", "--all-pairs"})
	out = runs[0].out
	failed = failures(out)
	if want := "ns-01: peer-rules with 2 peer(s): FAILED: found ns-01's RDGGEN-POSTROUTING has no rule exempting its containers' traffic to the worker, so Docker's MASQUERADE translates it (ns-03)"; len(failed) != 1 || !strings.HasPrefix(failed[0], want) {
		t.Errorf("ns-01 translating to ns-03 only: want one failure %q, got:\n%s", want, strings.Join(failed, "\n"))
	}
	out = runs[1].out
	// Translated, ns-03's firewall drops ns-01's data address: no login,
	// and the rule check says why.
	if want := "ns-01: source-address to ns-03: FAILED: found no login to ns-03's worker at " + h3.Container.String() + ": "; !strings.Contains(out, want) ||
		!strings.Contains(out, "; ns-01's RDGGEN-POSTROUTING has no rule exempting its containers' traffic to the worker, so Docker's MASQUERADE translates it; expected "+h1.Container.String()) ||
		!strings.Contains(out, "ns-01: source-address to ns-02: passed") {
		t.Errorf("--all-pairs does not confirm the rule check: no line %q with the rule", want)
	}
	if out, err := c.Exec(h1.NS, "sh", h1.File("/etc/rdggen/firewall.sh")); err != nil {
		t.Fatalf("firewall.sh: %v %s", err, out)
	}
}

// checkOutcome is one `rdggen check` or `rdggen run`: its exit status,
// stdout and stderr.
type checkOutcome struct {
	code        int
	out, errOut string
}

// checksInTurn runs one `rdggen check` (checkCluster) per argument list,
// one after the other, and returns their results in the lists' order. (Run
// at once, the ring's and --all-pairs' logins together made a worker's
// sshd miss its probe under load: "sshd …: FAILED: found no answer".)
func checksInTurn(t *testing.T, c *netnstest.Cluster, args ...[]string) []checkOutcome {
	t.Helper()
	runs := make([]checkOutcome, len(args))
	for i, a := range args {
		runs[i].code, runs[i].out, runs[i].errOut = checkCluster(t, c, a...)
	}
	return runs
}
