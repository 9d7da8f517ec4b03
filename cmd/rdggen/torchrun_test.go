package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/horovod"
)

// A real PyTorch DDP job (Debian's python3-torch 1.13, gloo backend) started
// by `rdggen run --torchrun` in the workers of 3 namespace hosts with a real
// dockerd each, 2 processes per host: first with the workers in the routed
// docker0 subnets (bridge), then with host networking. Every rank checks
// that it agrees with the others on the averaged gradients, and prints the
// peers its TCP connections reached: container addresses in bridge mode
// (no translation between the hosts), data addresses in host mode. In
// bridge mode (testTorchrunStops says why only there): a rank that exits
// non-zero stops the other nodes and rdggen exits with that node's status;
// Ctrl-C leaves no process in any worker.
//
// The worker image (netnstest.TorchWorkerImage) holds the programs (sshd,
// Open MPI, python3, torchrun) but not torch: the hosts' Docker runtime
// binds this machine's /usr/lib (Python's library, torch, numpy and their
// shared libraries) read-only into the worker, as nvidia-container-toolkit
// adds the host's driver libraries, so the job runs Debian's torch in real
// containers without a 600 MB copy imported into every dockerd.
func TestTorchrunDDP(t *testing.T) {
	t.Parallel()
	prog := netnstest.BuildMPIProgram(t)
	netnstest.RequireTorch(t)
	c := netnstest.New(t, netnstest.Options{Hosts: 3, Docker: true, Image: testImage, GPUs: 2})
	start := time.Now()
	image := netnstest.TorchWorkerImage(t, prog)
	built := time.Since(start)
	c.ImportImage(testImage, image)
	t.Logf("worker image with PyTorch: %d MB, built in %.1fs, imported into 3 dockerd in %.1fs",
		len(image)>>20, built.Seconds(), (time.Since(start) - built).Seconds())
	image = nil

	b, err := os.ReadFile(c.InventoryPath)
	if err != nil {
		t.Fatal(err)
	}
	inventoryFor := func(mode string) string {
		p := filepath.Join(c.Dir, "torchrun-"+mode+".yaml")
		src := strings.Replace(string(b), "horovod: {network: bridge", "horovod: {launcher: torchrun, network: "+mode, 1)
		if src == string(b) {
			t.Fatal("the inventory has no horovod: {network: bridge")
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if code, _, _ := applyTo(t, c, "hosts"); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	for i, h := range c.Hosts {
		at := 3
		if i == 1 {
			at = 5
		}
		stageRDMA(t, h, c.Inventory.Horovod.HCA, c.Inventory.Hosts[i].DataInterface, roceTable(h.Data.Addr(), at))
	}

	for _, mode := range []string{"bridge", "host"} {
		t.Run(mode, func(t *testing.T) {
			inv := inventoryFor(mode)
			if code, _, _ := applyTo(t, c, "workers", "-f", inv); code != exitOK {
				t.Fatalf("apply workers: exit %d", code)
			}
			addrs := map[string]string{} // every worker's address -> its host
			for _, h := range c.Hosts {
				a := h.Container
				if mode == "host" {
					a = h.Data.Addr()
				}
				addrs[a.String()] = h.Name
			}
			testTorchrunJob(t, c, inv, addrs)
			if mode == "bridge" {
				testTorchrunStops(t, c, inv)
			}
		})
	}
}

// testTorchrunJob runs the DDP job with the inventory at inv; addrs are the
// workers' addresses, the only peers a rank may have.
func testTorchrunJob(t *testing.T, c *netnstest.Cluster, inv string, addrs map[string]string) {
	start := time.Now()
	code, out, errOut := rdggenRun(t, c, context.Background(), "-f", inv, "--torchrun", "--", netnstest.DDPScript, "steps=3", "env=NCCL_IB_GID_INDEX,NCCL_SOCKET_IFNAME,GLOO_SOCKET_IFNAME,NCCL_NET_GDR_LEVEL")
	t.Logf("the DDP job took %.1fs", time.Since(start).Seconds())
	if code != 0 {
		t.Fatalf("rdggen run --torchrun: exit %d", code)
	}
	done := regexp.MustCompile(`(?m)^(ns-\d+)\[rank (\d), local (\d)\]: rank (\d) of 6 \(local (\d)\): 3 steps, gradients agree, peers (\S+)$`)
	lines := done.FindAllStringSubmatch(out, -1)
	if len(lines) != 6 {
		t.Fatalf("%d ranks finished, want 6", len(lines))
	}
	for _, m := range lines {
		host, rank, local := m[1], m[2], m[3]
		node := int(rank[0]-'0') / 2
		if m[4] != rank || m[5] != local || host != c.Hosts[node].Name || fmt.Sprint(int(rank[0]-'0')%2) != local {
			t.Errorf("rank line %q: wrong host or ranks", m[0])
		}
		others := 0
		for _, p := range strings.Split(m[6], ",") {
			h, ok := addrs[p]
			if !ok {
				t.Errorf("%s rank %s reached %s, which is no worker's address (translated?)", host, rank, p)
			} else if h != host {
				others++
			}
		}
		if others == 0 {
			t.Errorf("%s rank %s reached no other host's worker: %s", host, rank, m[6])
		}
	}
	for i, h := range c.Hosts {
		gid := 3
		if i == 1 {
			gid = 5
		}
		ifname := "eth0"
		if strings.HasSuffix(inv, "host.yaml") {
			ifname = "data0"
		}
		for local := 0; local < 2; local++ {
			r := 2*i + local
			for _, want := range []string{
				fmt.Sprintf("%s[rank %d, local %d]: rank %d env NCCL_IB_GID_INDEX=%d\n", h.Name, r, local, r, gid),
				fmt.Sprintf("%s[rank %d, local %d]: rank %d env NCCL_SOCKET_IFNAME=%s\n", h.Name, r, local, r, ifname),
				fmt.Sprintf("%s[rank %d, local %d]: rank %d env GLOO_SOCKET_IFNAME=%s\n", h.Name, r, local, r, ifname),
				fmt.Sprintf("%s[rank %d, local %d]: rank %d env NCCL_NET_GDR_LEVEL=PHB\n", h.Name, r, local, r),
			} {
				if !strings.Contains(out, want) {
					t.Errorf("no line %q", want)
				}
			}
		}
	}
	if !strings.Contains(errOut, "rdggen run: torchrun in 3 workers at once, 6 processes, rendezvous at ") {
		t.Errorf("rdggen run does not say what it launches")
	}

	// check --target workers: every worker reaches the rendezvous endpoint,
	// and the listener sees its own address.
	rdzvAddr, err := horovod.RendezvousAddress(c.Inventory)
	if err != nil {
		t.Fatal(err)
	}
	rdzv := rdzvAddr.Port()
	first := ""
	for a, h := range addrs {
		if h == c.Hosts[0].Name {
			first = a
		}
	}
	_, out, _ = checkCluster(t, c, "-f", inv, "--target", "workers")
	for a, h := range addrs {
		if want := fmt.Sprintf("%s: rendezvous to %s:%d: passed (connected from %s)", h, first, rdzv, a); !strings.Contains(out, want) {
			t.Errorf("no line %q", want)
		}
	}
	// The first worker's host drops new connections to the port from the
	// other hosts: their rendezvous checks fail, the first worker's own passes.
	h1 := c.Hosts[0]
	block := []string{"-p", "tcp", "--dport", fmt.Sprint(rdzv), "-i", "data0", "-j", "DROP"}
	chain := "INPUT"
	if !strings.HasSuffix(inv, "host.yaml") {
		chain = "RDGGEN-CONTAINERS"
	}
	if out, err := c.Exec(h1.NS, append([]string{"iptables", "-I", chain, "1"}, block...)...); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	code, out, _ = checkCluster(t, c, "-f", inv, "--target", "workers")
	if _, err := c.Exec(h1.NS, append([]string{"iptables", "-D", chain}, block...)...); err != nil {
		t.Fatal(err)
	}
	if code != exitInvalid || !strings.Contains(out, fmt.Sprintf("%s: rendezvous to %s:%d: passed", h1.Name, first, rdzv)) {
		t.Errorf("port blocked: exit %d", code)
	}
	for _, h := range c.Hosts[1:] {
		if want := fmt.Sprintf("%s: rendezvous to %s:%d: FAILED: found timed out", h.Name, first, rdzv); !strings.Contains(out, want) {
			t.Errorf("no line %q", want)
		}
	}

	// The dry run prints every node's line and launches nothing.
	if code, out, _ := rdggenRun(t, c, context.Background(), "-f", inv, "--dry-run", "--", netnstest.DDPScript); code != 0 ||
		!strings.Contains(out, "ns-02: docker exec -e NCCL_IB_HCA=mlx5_0 ") || !strings.Contains(out, " -e NCCL_IB_GID_INDEX=5 hvd-worker torchrun --nnodes=3 --nproc_per_node=2 --node_rank=1 ") {
		t.Errorf("dry run: exit %d: %s", code, out)
	}
}

// testTorchrunStops runs the DDP script with the inventory at inv twice: with
// one rank failing, then with Ctrl-C. It checks how rdggen run handles the
// launchers' processes (over SSH and docker exec, whatever the workers'
// network), so TestTorchrunDDP runs it in one network mode (bridge), and
// with steps=0: the ranks do not import torch (only the 3 torchrun
// launchers do; with steps they were 9 Python processes importing torch a
// run, the bulk of the test's CPU).
func testTorchrunStops(t *testing.T, c *netnstest.Cluster, inv string) {
	// Rank 4 (ns-03's local rank 0) exits 3 at once while the others sleep
	// 300 s: ns-03's torchrun reports it (within its 5 s monitor interval),
	// rdggen stops every node long before the sleep (or torchrun's 300 s
	// exit barrier) ends, and exits with the rank's status. The bound is
	// loose: a loaded CI machine starts torchrun slowly.
	start := time.Now()
	code, _, errOut := rdggenRun(t, c, context.Background(), "-f", inv, "--", netnstest.DDPScript, "steps=0", "exit=4:3", "sleep=300")
	if code != 3 || !strings.Contains(errOut, "rdggen run: ns-03: rank 4 (local 0) exited with status 3") ||
		!strings.Contains(errOut, "rdggen run: ns-03 failed: sending SIGTERM to torchrun in every worker") ||
		!strings.Contains(errOut, "rdggen run: the job failed on ns-03 (status 3)") || time.Since(start) > 200*time.Second {
		t.Errorf("a rank exiting 3: exit %d after %s", code, time.Since(start))
	}
	noProcessesLeft(t, c)

	// Ctrl-C while every rank sleeps.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if top, _ := c.Hosts[2].Docker("top", horovod.WorkerName); strings.Count(top, netnstest.DDPScript) >= 2 {
				time.Sleep(3 * time.Second)
				cancel()
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	start = time.Now()
	code, _, errOut = rdggenRun(t, c, ctx, "-f", inv, "--", netnstest.DDPScript, "steps=0", "sleep=300")
	if code == 0 || time.Since(start) > 120*time.Second || !strings.Contains(errOut, "rdggen run: interrupted: sending SIGTERM to torchrun in every worker") {
		t.Errorf("interrupted job: exit %d after %s", code, time.Since(start))
	}
	noProcessesLeft(t, c)
}

// noProcessesLeft fails unless every worker runs only its sshd.
func noProcessesLeft(t *testing.T, c *netnstest.Cluster) {
	t.Helper()
	for _, h := range c.Hosts {
		var top string
		for i := 0; i < 20; i++ { // a killed process group is gone within moments
			top, _ = h.Docker("top", horovod.WorkerName)
			if !strings.Contains(top, "python") && !strings.Contains(top, "torchrun") {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if strings.Contains(top, "python") || strings.Contains(top, "torchrun") {
			t.Errorf("%s: processes left in the worker:\n%s", h.Name, top)
		}
	}
}
