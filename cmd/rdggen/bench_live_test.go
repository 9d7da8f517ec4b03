package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/horovod"
)

// liveBenchFiles are the bench replay and every recorded output the Docker
// tests of this package stage in their workers (netnstest.BenchFiles: the
// replay is built with the go command once per process, not once per
// test).
var liveBenchFiles struct {
	sync.Mutex
	files []netnstest.ImageFile
}

// liveWorkerImage is the one worker image of TestApplyWorkersDocker,
// TestBenchLive and TestBenchLiveRails: the MPI test program prog
// (netnstest.BuildMPIProgram) with the bench replay, its default outputs
// (perftest: NVIDIA/deepops' 100 GbE RoCE run; all_reduce_perf: DeepOps'
// 2 × 100 GbE sweep) and under /usr/share/rdgtest/fixtures every output a
// test stages. One content for all three, so netnstest.WorkerImage builds
// it once per process (it caches by content); the tests that do not bench
// never run the replay.
func liveWorkerImage(t *testing.T, prog string) []byte {
	t.Helper()
	files := func() []netnstest.ImageFile {
		liveBenchFiles.Lock()
		defer liveBenchFiles.Unlock() // also when BenchFiles fails the test
		if liveBenchFiles.files == nil {
			liveBenchFiles.files = netnstest.BenchFiles(t, "perftest-deepops-roce-gbits.txt", "nccltests-deepops-roce-2x100g.txt",
				"nccllog-1537-gdr-disabled-hca.txt", "tfcnn-466-resnet101-1gpu.txt", "tfcnn-693-resnet50-4gpu-interleaved.txt",
				"tfcnn-ava65-resnet50-spaces.txt", "nccllog-slurmv4-8rails-roce.txt")
		}
		return liveBenchFiles.files
	}()
	return netnstest.WorkerImage(t, prog, files...)
}

// onHosts runs f for every host of c at once (independent steps on
// different hosts: a docker exec each) and returns when every f has,
// with their errors joined. f must not call t.Fatal (it runs on another
// goroutine than the test's); the caller decides what an error means.
func onHosts(c *netnstest.Cluster, f func(i int, h *netnstest.Host) error) error {
	errs := make([]error, len(c.Hosts))
	var wg sync.WaitGroup
	for i, h := range c.Hosts {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = f(i, h) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// rdggenBench runs `rdggen bench` in-process against the cluster.
func rdggenBench(t *testing.T, c *netnstest.Cluster, ctx context.Context, extra ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"bench", "-f", c.InventoryPath, "--ssh-user", "root", "--identity", c.Identity, "--known-hosts", c.KnownHosts,
		"--host-root", c.RootTemplate(), "--perftest-seconds", "1"}, extra...)
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(ctx, args, &out, &errb, func(string) string { return "" })
	t.Logf("rdggen bench %s → exit %d in %.2fs\n%s%s", strings.Join(extra, " "), code, time.Since(start).Seconds(), out.String(), errb.String())
	return code, out.String(), errb.String()
}

// `rdggen bench` on 3 namespace VMs with real dockerd, sshd and Open MPI
// between the worker containers. No RDMA device or GPU exists here, so the
// workers' ib_write_bw and all_reduce_perf are netnstest's replay, which
// behaves as the real programs towards their callers and prints real
// recorded outputs (NVIDIA/deepops' 100 GbE RoCE runs; an NCCL log with
// GPUDirect RDMA disabled from NVIDIA/nccl#1537). What is tested is the
// launching path: the GID tables read first (ns-02's RoCE v2 GID at index
// 5), the pairs along the ring in 3 rounds of disjoint pairs with each host
// once as client and once as server, each with its own GID index, servers
// listening before their clients, all_reduce_perf launched by mpirun over
// the three workers, the verdicts and causes, --save, the JSON document,
// the dry run, and Ctrl-C stopping every remote process.
func TestBenchLive(t *testing.T) {
	t.Parallel()
	prog := netnstest.BuildMPIProgram(t)
	c := netnstest.New(t, netnstest.Options{Hosts: 3, Docker: true, Image: testImage, DataMTU: 9000})
	c.ImportImage(testImage, liveWorkerImage(t, prog))
	inv := c.Inventory
	if code, _, _ := applyTo(t, c, "hosts"); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	if code, _, _ := applyTo(t, c, "workers"); code != exitOK {
		t.Fatalf("apply workers: exit %d", code)
	}
	for i, h := range c.Hosts {
		at := 3
		if i == 1 {
			at = 5
		}
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), at))
	}

	// The dry run: the schedule and the commands, nothing run.
	code, out, _ := rdggenBench(t, c, context.Background(), "--dry-run")
	for _, want := range []string{
		"ib_write_bw: 3 host(s), 3 pair(s) in 3 round(s) of disjoint pairs; every host once as client and once as server",
		"  round 1: ns-01 → ns-02\n", "  round 2: ns-02 → ns-03\n", "  round 3: ns-03 → ns-01\n",
		"  e.g. in ns-02's worker: ib_write_bw -d mlx5_0 -i 1 -x 5 --report_gbits -F --tclass=106 -D 1 -p 18515\n",
		"  then in ns-01's worker: ib_write_bw -d mlx5_0 -i 1 -x 3 --report_gbits -F --tclass=106 -D 1 -p 18515 " + c.Hosts[1].Container.String() + "\n",
		"all_reduce_perf: in ns-01's worker: mpirun --allow-run-as-root --tag-output -np 3 ",
		"env NCCL_DEBUG_SUBSYS=INIT,NET,ENV all_reduce_perf -b 8 -e 4G -f 2 -g 1\n",
		"dry run: nothing was run",
	} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("dry run: exit %d; no %q", code, want)
		}
	}
	_ = onHosts(c, func(_ int, h *netnstest.Host) error {
		if log, _ := h.Docker("exec", horovod.WorkerName, "cat", "/tmp/rdgtest-replay.log"); strings.Contains(log, "ib_write_bw") {
			t.Errorf("%s: the dry run ran something:\n%s", h.Name, log)
		}
		return nil
	})

	// The run: every verdict passes.
	save := filepath.Join(c.Dir, "bench-out")
	code, out, errOut := rdggenBench(t, c, context.Background(), "--save", save, "-o", "json")
	var doc bench.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if code != exitOK || !doc.OK || len(doc.Inputs) != 2 || !strings.Contains(errOut, "rdggen bench: all passed: ") {
		t.Fatalf("run: exit %d, ok %v, %d inputs", code, doc.OK, len(doc.Inputs))
	}
	pairs := map[string]bench.Verdict{}
	for _, v := range doc.Inputs[0].Verdicts {
		pairs[v.Check+" "+v.Subject] = v
	}
	for _, k := range []string{"rdma-bandwidth ns-01 → ns-02", "rdma-bandwidth ns-02 → ns-03", "rdma-bandwidth ns-03 → ns-01", "gid-index ns-02 → ns-03", "rdma-pairs "} {
		if v, ok := pairs[k]; !ok || v.Status != bench.StatusPass {
			t.Errorf("%s: %+v", k, v)
		}
	}
	if v := pairs["gid-index ns-02 → ns-03"]; v.Found != "GID index 5 in the perftest header" {
		t.Errorf("ns-02's pair used another GID index: %+v", v)
	}
	if v := pairs["rdma-bandwidth ns-01 → ns-02"]; v.Measured == nil || v.Measured.Value != 92.40 || v.PassLine == nil || v.PassLine.Value != 90 {
		t.Errorf("ns-01 → ns-02: %+v", v)
	}
	if in := doc.Inputs[1]; in.Name != "all_reduce_perf (3 ranks on 3 hosts)" || len(in.Verdicts) == 0 || in.Verdicts[0].Check != bench.CheckBusBW ||
		in.Verdicts[0].Measured == nil || in.Verdicts[0].Measured.Value != 22.92 {
		t.Errorf("all_reduce_perf: %+v", in)
	}
	// Each host once as server and once as client, towards the next one's
	// worker; all_reduce_perf on every worker, rank by rank.
	if err := onHosts(c, func(i int, h *netnstest.Host) error {
		log, err := h.Docker("exec", horovod.WorkerName, "cat", "/tmp/rdgtest-replay.log")
		if err != nil {
			return fmt.Errorf("%s: %v %s", h.Name, err, log)
		}
		next := c.Hosts[(i+1)%3].Container.String()
		if strings.Count(log, "ib_write_bw ") != 2 || strings.Count(log, " -p 18515 "+next+" ") != 1 || strings.Count(log, " -p 18515 rank=") != 1 ||
			!strings.Contains(log, fmt.Sprintf("all_reduce_perf -b 8 -e 4G -f 2 -g 1 rank=%d\n", i)) {
			t.Errorf("%s's worker ran:\n%s", h.Name, log)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ib_write_bw-ns-01-to-ns-02.txt", "ib_write_bw-ns-01-to-ns-02.server.txt", "all_reduce_perf.txt",
		"ib_write_bw-round-1.svg", "all_reduce_perf.svg"} { // the pictures of the round and the sweep
		b, err := os.ReadFile(filepath.Join(save, f))
		if err != nil || len(b) == 0 {
			t.Errorf("--save %s: %v", f, err)
		}
	}
	// A saved output judged again gives the same verdict.
	if code, stdout, _ := rdggen(t, "bench", "--judge", "-f", c.InventoryPath, filepath.Join(save, "ib_write_bw-ns-01-to-ns-02.txt")); code != exitOK ||
		!strings.Contains(stdout, "rdma-bandwidth: passed (92.40 Gb/s BW average") {
		t.Errorf("the saved output judged: exit %d\n%s", code, stdout)
	}

	// NCCL without GPUDirect RDMA: the verdict fails and names the layer.
	if err := onHosts(c, func(_ int, h *netnstest.Host) error {
		if out, err := h.Docker("exec", horovod.WorkerName, "sh", "-c", "cat /usr/share/rdgtest/fixtures/nccllog-1537-gdr-disabled-hca.txt >/usr/share/rdgtest/nccl.txt"); err != nil {
			return fmt.Errorf("%s: %v %s", h.Name, err, out)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = rdggenBench(t, c, context.Background(), "--only", "nccl")
	if code != exitInvalid || !strings.Contains(out, "gpudirect-rdma: FAILED") || !strings.Contains(out, "cause (GPUDirect RDMA):") ||
		!strings.Contains(errOut, "rdggen bench: NOT at the pass lines") || strings.Contains(out, "ib_write_bw pairs") {
		t.Errorf("no GPUDirect RDMA: exit %d", code)
	}

	// The Horovod benchmark: over the 3 workers, then on ns-01's alone. The
	// replayed totals: 608.38 images/sec on the cluster (202.79 per GPU),
	// 204.75 on one GPU: 99.04 %; then 133.81 on the cluster: 21.78 %.
	stage := func(cluster, one string) {
		t.Helper()
		script := fmt.Sprintf("cd /usr/share/rdgtest && cat fixtures/%s >tfcnn-3.txt && cat fixtures/%s >tfcnn-1.txt && : >/tmp/rdgtest-replay.log", cluster, one)
		if err := onHosts(c, func(_ int, h *netnstest.Host) error {
			if out, err := h.Docker("exec", horovod.WorkerName, "sh", "-c", script); err != nil {
				return fmt.Errorf("%s: %v %s", h.Name, err, out)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	stage("tfcnn-693-resnet50-4gpu-interleaved.txt", "tfcnn-466-resnet101-1gpu.txt")
	code, out, _ = rdggenBench(t, c, context.Background(), "--only", "horovod", "--dry-run")
	if code != exitOK || !strings.Contains(out, "Horovod benchmark: in ns-01's worker, over every worker: mpirun --allow-run-as-root --tag-output -np 3 ") ||
		!strings.Contains(out, "  then on ns-01 alone: mpirun --allow-run-as-root --tag-output -np 1 -H "+c.Hosts[0].Container.String()+":1 ") ||
		!strings.Contains(out, "python "+horovod.BenchmarkScript+" --model=vgg16") || strings.Contains(out, "all_reduce_perf") {
		t.Errorf("--only horovod --dry-run: exit %d", code)
	}
	hsave := filepath.Join(c.Dir, "bench-horovod")
	code, out, _ = rdggenBench(t, c, context.Background(), "--only", "horovod", "--save", hsave)
	if code != exitOK || !strings.Contains(out, "Horovod benchmark (3 GPUs on 3 hosts, then 1 on ns-01 alone):") ||
		!strings.Contains(out, "horovod-scaling 3 GPUs vs 1 on one VM: passed (scaling efficiency 99.04 %: 608.38 images/sec on 3 GPU(s) of 3 VM(s) (202.79 per GPU); one VM 204.75 images/sec on 1 GPU(s) of 1 VM(s) (204.75 per GPU)") ||
		strings.Contains(out, "ib_write_bw pairs") || strings.Contains(out, "all_reduce_perf") {
		t.Errorf("--only horovod: exit %d", code)
	}
	_ = onHosts(c, func(i int, h *netnstest.Host) error {
		log, _ := h.Docker("exec", horovod.WorkerName, "cat", "/tmp/rdgtest-replay.log")
		want := 1 // every worker runs one rank of the cluster run; ns-01 also the one-VM run
		if i == 0 {
			want = 2
		}
		if n := strings.Count(log, "python "+horovod.BenchmarkScript+" --model=vgg16 --batch_size=64 --variable_update=horovod"); n != want {
			t.Errorf("%s's worker ran the benchmark %d time(s), want %d:\n%s", h.Name, n, want, log)
		}
		return nil
	})
	for _, f := range []string{"horovod-cluster.txt", "horovod-one-vm.txt"} {
		if b, err := os.ReadFile(filepath.Join(hsave, f)); err != nil || !bytes.Contains(b, []byte("total images/sec: ")) {
			t.Errorf("--save %s: %v", f, err)
		}
	}
	stage("tfcnn-ava65-resnet50-spaces.txt", "tfcnn-466-resnet101-1gpu.txt")
	code, out, errOut = rdggenBench(t, c, context.Background(), "--only", "horovod")
	if code != exitInvalid || !strings.Contains(out, "horovod-scaling 3 GPUs vs 1 on one VM: FAILED") || !strings.Contains(out, "21.78 %") ||
		!strings.Contains(out, "cause (fabric): no NCCL benchmark ran beside it") || !strings.Contains(out, "cause (training job):") || !strings.Contains(errOut, "NOT at the pass lines") {
		t.Errorf("--only horovod, slow cluster: exit %d", code)
	}

	// Ctrl-C while the clients hang: exit 3 within seconds, nothing left.
	if err := onHosts(c, func(_ int, h *netnstest.Host) error {
		if out, err := h.Docker("exec", horovod.WorkerName, "sh", "-c", ": >/tmp/rdgtest-hang"); err != nil {
			return fmt.Errorf("%s: %v %s", h.Name, err, out)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(3*time.Second, cancel)
	start := time.Now()
	code, _, errOut = rdggenBench(t, c, ctx, "--only", "rdma")
	if code != exitFailed || time.Since(start) > 20*time.Second || !strings.Contains(errOut, "interrupted: every benchmark process it started was stopped") {
		t.Errorf("interrupted: exit %d after %s", code, time.Since(start))
	}
	_ = onHosts(c, func(_ int, h *netnstest.Host) error {
		if top, err := h.Docker("top", horovod.WorkerName); err != nil || strings.Contains(top, "ib_write_bw") || strings.Contains(top, "all_reduce_perf") {
			t.Errorf("%s: processes left after the interrupt (%v):\n%s", h.Name, err, top)
		}
		return nil
	})

	// The workers stopped: every benchmark errs, nothing is measured, exit 3.
	if err := onHosts(c, func(_ int, h *netnstest.Host) error {
		if out, err := h.Docker("stop", "-t", "1", horovod.WorkerName); err != nil {
			return fmt.Errorf("%s: %v %s", h.Name, err, out)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := rdggenBench(t, c, context.Background(), "--only", "rdma"); code != exitFailed ||
		!strings.Contains(errOut, "rdggen bench: nothing was measured") || strings.Contains(out, ": pass") {
		t.Errorf("workers stopped: exit %d", code)
	}

	// A host without a RoCE v2 GID: nothing runs.
	v1only := roceTable(c.Hosts[2].Data.Addr(), 3)
	v1only[3] = gidEntry{"0000:0000:0000:0000:0000:0000:0000:0000", ""}
	stageRDMA(t, c.Hosts[2], inv.Horovod.HCA, inv.Hosts[2].DataInterface, v1only)
	if code, _, errOut := rdggenBench(t, c, context.Background()); code != exitFailed ||
		!strings.Contains(errOut, "rdggen bench: ns-03: gid mlx5_0 port 1: FAILED") || !strings.Contains(errOut, "not run: no usable RoCE v2 GID on ns-03: nothing was run") {
		t.Errorf("no GID on ns-03: exit %d", code)
	}
}
