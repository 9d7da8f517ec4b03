package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// railsLive is the number of rails of TestBenchLiveRails's hosts.
const railsLive = 4

// railAddr is rail r's address of host i (0-based) in TestBenchLiveRails:
// rail 0 is netnstest's data0, rail r > 0 is 10.1.r.N/24 (N = i+1), each
// rail its own subnet on the one leaf, as a leaf carrying several rails
// has them.
func railAddr(c *netnstest.Cluster, i, r int) netip.Prefix {
	if r == 0 {
		return c.Hosts[i].Data
	}
	return netip.MustParsePrefix(fmt.Sprintf("10.1.%d.%d/24", r, i+1))
}

// `rdggen bench` on 3 namespace VMs with 4 rails each: rail 0 is
// netnstest's data0, rails 1–3 one more interface each (rail1…rail3, the
// inventory's default names), every rail on its own bridge in the switch
// namespace (one leaf carrying the four rails, each its own subnet), real
// dockerd, sshd and Open MPI, the workers on the host's network. As in
// TestBenchLive the workers' ib_write_bw and all_reduce_perf are
// netnstest's replay, printing recorded outputs (perftest: NVIDIA/deepops'
// 100 GbE RoCE run; all_reduce_perf: the NCCL log of a node with 8 RoCE
// rails from devopsrustem/slurmv4 followed by DeepOps' 2 × 100 GbE sweep,
// two real outputs put one after the other, each with its .source). What
// is tested is the per-rail path: every rail's GID table read (rail r's
// RoCE v2 GID at index 3+r), the pairs rail by rail — all four rails in
// the same 3 rounds, rail r of a VM only with rail r of another, each end
// on mlx5_r with its rail's GID index and port 18515+r, the client
// reaching the server at its rail r address, through rail r's interface —,
// a verdict per rail, all_reduce_perf judged against the sum of the four
// rails (43.2 GB/s: 22.92 falls short) and, every rail passing, the
// GPU–NIC pairing named as the cause with what NCCL's log shows; a rail
// without a usable GID stops the bench before anything runs.
func TestBenchLiveRails(t *testing.T) {
	t.Parallel()
	prog := netnstest.BuildMPIProgram(t)
	c := netnstest.New(t, netnstest.Options{Hosts: 3, Docker: true, Image: testImage, DataMTU: 9000, HorovodNetwork: "host", GPUs: 8,
		OS: func(int) string { return "ubuntu-20.04" }})
	c.ImportImage(testImage, liveWorkerImage(t, prog))

	// The inventory with 4 rails: the switch a leaf, each host's data a
	// list, rail r from vmnic(4+r) on port 1/(8r+N).
	src, err := os.ReadFile(c.InventoryPath)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "onyx: 3.6.8190}", "onyx: 3.6.8190, role: leaf}", 1)
	dataRe := regexp.MustCompile(`data: \{address: ([0-9./]+), port: 1/([0-9]+)\}`)
	text = dataRe.ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(dataRe.FindStringSubmatch(m)[2])
		rails := []string{fmt.Sprintf("{address: %s, switch: sw, port: 1/%d}", dataRe.FindStringSubmatch(m)[1], n)}
		for r := 1; r < railsLive; r++ {
			rails = append(rails, fmt.Sprintf("{address: %s, switch: sw, port: 1/%d, pf: vmnic%d}", railAddr(c, n-1, r), 8*r+n, 4+r))
		}
		return "data: [" + strings.Join(rails, ", ") + "]"
	})
	if err := os.WriteFile(c.InventoryPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.LoadFile(c.InventoryPath)
	if err != nil {
		t.Fatalf("the rails inventory: %v\n%s", err, text)
	}
	if inv.RailCount() != railsLive {
		t.Fatalf("%d rails", inv.RailCount())
	}
	// Rails 1–3 in the namespaces: per rail a bridge in the switch
	// namespace and one port per host, jumbo as the fabric.
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	sw := c.SwitchNS()
	for r := 1; r < railsLive; r++ {
		br := fmt.Sprintf("rail%d", r)
		ip("-n", sw, "link", "add", br, "mtu", "9216", "type", "bridge")
		ip("-n", sw, "link", "set", br, "up")
		for i, h := range c.Hosts {
			port := fmt.Sprintf("p%dr%d", i+1, r)
			iface := inv.Hosts[i].Rails[r].Interface
			ip("-n", sw, "link", "add", port, "mtu", "9216", "type", "veth", "peer", "name", iface, "netns", h.NS)
			ip("-n", sw, "link", "set", port, "master", br, "up")
			ip("-n", h.NS, "link", "set", iface, "mtu", "9000", "up")
			ip("-n", h.NS, "addr", "add", railAddr(c, i, r).String(), "dev", iface)
		}
	}
	if code, _, _ := applyTo(t, c, "hosts"); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	if code, _, _ := applyTo(t, c, "workers"); code != exitOK {
		t.Fatalf("apply workers: exit %d", code)
	}
	for i, h := range c.Hosts {
		for r := range railsLive {
			stageRDMA(t, h, inv.Horovod.RailHCA(r), inv.Hosts[i].Rails[r].Interface, roceTable(railAddr(c, i, r).Addr(), 3+r))
		}
	}
	// railsRx is the bytes host i's rail interfaces received, in rail
	// order, read in one command.
	railsRx := func(i int) ([railsLive]int, error) {
		var rx [railsLive]int
		args := []string{"cat"}
		for r := range railsLive {
			args = append(args, "/sys/class/net/"+inv.Hosts[i].Rails[r].Interface+"/statistics/rx_bytes")
		}
		out, err := c.Exec(c.Hosts[i].NS, args...)
		f := strings.Fields(out)
		if err != nil || len(f) != railsLive {
			return rx, fmt.Errorf("%s rx_bytes: %v %q", c.Hosts[i].Name, err, out)
		}
		for r := range railsLive {
			if rx[r], err = strconv.Atoi(f[r]); err != nil {
				return rx, fmt.Errorf("%s rx_bytes: %v %q", c.Hosts[i].Name, err, out)
			}
		}
		return rx, nil
	}

	// The dry run: the rails' schedule and each rail's commands.
	code, out, _ := rdggenBench(t, c, context.Background(), "--dry-run")
	want := []string{
		"ib_write_bw: 3 host(s) × 4 rails, 12 pair(s) in 3 round(s) of disjoint pairs; on each rail every host once as client and once as server, rail r of a host only with rail r of another\n" +
			"  rails 0–3 together, in the same rounds: no two of them cross leaves through a leaf they share\n" +
			"  leaf-spine fabric: 0 of 12 pair(s) across leaves (through a spine) first, 12 inside one leaf\n" +
			"  round 1: ns-01 → ns-02 (rail 0), ns-01 → ns-02 (rail 1), ns-01 → ns-02 (rail 2), ns-01 → ns-02 (rail 3)\n" +
			"  round 2: ns-02 → ns-03 (rail 0), ns-02 → ns-03 (rail 1), ns-02 → ns-03 (rail 2), ns-02 → ns-03 (rail 3)\n" +
			"  round 3: ns-03 → ns-01 (rail 0), ns-03 → ns-01 (rail 1), ns-03 → ns-01 (rail 2), ns-03 → ns-01 (rail 3)\n",
		"env NCCL_DEBUG_SUBSYS=INIT,NET,ENV,GRAPH all_reduce_perf -b 8 -e 4G -f 2 -g 1\n",
		"dry run: nothing was run",
	}
	for r := range railsLive {
		want = append(want, fmt.Sprintf("  rail %d: e.g. in ns-02's worker: ib_write_bw -d mlx5_%d -i 1 -x %d --report_gbits -F --tclass=106 -D 1 -p %d\n", r, r, 3+r, 18515+r),
			fmt.Sprintf("    then in ns-01's worker: ib_write_bw -d mlx5_%d -i 1 -x %d --report_gbits -F --tclass=106 -D 1 -p %d %s\n", r, 3+r, 18515+r, railAddr(c, 1, r).Addr()))
	}
	for _, w := range want {
		if code != exitOK || !strings.Contains(out, w) {
			t.Errorf("dry run: exit %d; no %q", code, w)
		}
	}

	// The run: NCCL's log and DeepOps' sweep as all_reduce_perf's output.
	script := "cd /usr/share/rdgtest && cat fixtures/nccllog-slurmv4-8rails-roce.txt fixtures/nccltests-deepops-roce-2x100g.txt >nccl.txt && : >/tmp/rdgtest-replay.log"
	if err := onHosts(c, func(_ int, h *netnstest.Host) error {
		if out, err := h.Docker("exec", horovod.WorkerName, "sh", "-c", script); err != nil {
			return fmt.Errorf("%s: %v %s", h.Name, err, out)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var rxBefore [3][railsLive]int
	for i := range c.Hosts {
		if rxBefore[i], err = railsRx(i); err != nil {
			t.Fatal(err)
		}
	}
	save := filepath.Join(c.Dir, "bench-out")
	code, out, errOut := rdggenBench(t, c, context.Background(), "--save", save, "-o", "json")
	var doc bench.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if code != exitInvalid || doc.OK || len(doc.Inputs) != 2 || !strings.Contains(errOut, "rdggen bench: NOT at the pass lines") {
		t.Fatalf("run: exit %d, ok %v, %d inputs", code, doc.OK, len(doc.Inputs))
	}
	vs := map[string]bench.Verdict{}
	for _, v := range doc.Inputs[0].Verdicts {
		vs[v.Check+" "+v.Subject] = v
	}
	for r := range railsLive {
		if v, ok := vs[fmt.Sprintf("%s rail %d", bench.CheckRDMARail, r)]; !ok || v.Status != bench.StatusPass || v.Rail == nil || *v.Rail != r ||
			v.Found != "3 pair(s) on sw, min 92.40 / median 92.40 Gb/s" {
			t.Errorf("rail %d: %+v", r, v)
		}
		for _, p := range []string{"ns-01 → ns-02", "ns-02 → ns-03", "ns-03 → ns-01"} {
			k := fmt.Sprintf("rdma-bandwidth %s (rail %d)", p, r)
			if v, ok := vs[k]; !ok || v.Status != bench.StatusPass || v.Measured == nil || v.Measured.Value != 92.40 {
				t.Errorf("%s: %+v", k, v)
			}
		}
		k := fmt.Sprintf("gid-index ns-02 → ns-03 (rail %d)", r)
		if v := vs[k]; v.Found != fmt.Sprintf("GID index %d in the perftest header", 3+r) {
			t.Errorf("%s: %+v", k, v)
		}
	}
	if v := vs["rdma-pairs "]; v.Status != bench.StatusPass {
		t.Errorf("rdma-pairs: %+v", v)
	}
	nccl := doc.Inputs[1]
	var busbw *bench.Verdict
	for i, v := range nccl.Verdicts {
		if v.Check == bench.CheckBusBW {
			busbw = &nccl.Verdicts[i]
		}
	}
	if nccl.Name != "all_reduce_perf (24 ranks on 3 hosts)" || busbw == nil || busbw.Status != bench.StatusFail || busbw.Measured == nil || busbw.Measured.Value != 22.92 ||
		busbw.PassLine == nil || busbw.PassLine.Value != 43.2 || len(busbw.Causes) != 1 || busbw.Causes[0].Layer != bench.LayerPairing ||
		!strings.Contains(busbw.Causes[0].Finding, "every rail passes ib_write_bw at its line (rails 0–3, the rdma-rail verdicts)") ||
		!strings.Contains(busbw.Causes[0].Finding, "tpgds-aihub0003") {
		t.Errorf("all_reduce_perf: %+v", nccl.Verdicts)
	}
	// Each worker: per rail once server, once client towards the next
	// host's rail address; the rail's interface received the exchange.
	if err := onHosts(c, func(i int, h *netnstest.Host) error {
		log, err := h.Docker("exec", horovod.WorkerName, "cat", "/tmp/rdgtest-replay.log")
		if err != nil {
			return fmt.Errorf("%s: %v %s", h.Name, err, log)
		}
		rxAfter, err := railsRx(i)
		if err != nil {
			return err
		}
		if n := strings.Count(log, "ib_write_bw "); n != 2*railsLive {
			t.Errorf("%s's worker ran ib_write_bw %d times:\n%s", h.Name, n, log)
		}
		next := (i + 1) % 3
		for r := range railsLive {
			client := fmt.Sprintf("ib_write_bw -d mlx5_%d -i 1 -x %d --report_gbits -F --tclass=106 -D 1 -p %d %s rank=\n", r, 3+r, 18515+r, railAddr(c, next, r).Addr())
			server := fmt.Sprintf("ib_write_bw -d mlx5_%d -i 1 -x %d --report_gbits -F --tclass=106 -D 1 -p %d rank=\n", r, 3+r, 18515+r)
			if !strings.Contains(log, client) || !strings.Contains(log, server) {
				t.Errorf("%s's worker, rail %d: no %q or %q in\n%s", h.Name, r, client, server, log)
			}
			if rxAfter[r] <= rxBefore[i][r] {
				t.Errorf("%s: nothing received on rail %d's %s", h.Name, r, inv.Hosts[i].Rails[r].Interface)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ib_write_bw-ns-01-to-ns-02-rail-0.txt", "ib_write_bw-ns-01-to-ns-02-rail-3.server.txt", "all_reduce_perf.txt"} {
		if b, err := os.ReadFile(filepath.Join(save, f)); err != nil || len(b) == 0 {
			t.Errorf("--save %s: %v", f, err)
		}
	}
	// The saved all_reduce_perf judged again with the inventory's rails
	// (-f): against their sum, the pairing named after the generic causes
	// (no rail verdicts beside it).
	if code, stdout, _ := rdggen(t, "bench", "--judge", "-f", c.InventoryPath, filepath.Join(save, "all_reduce_perf.txt")); code != exitInvalid ||
		!strings.Contains(stdout, "43.2 GB/s") || !strings.Contains(stdout, "once every rail passes ib_write_bw at its line") {
		t.Errorf("the saved output judged: exit %d\n%s", code, stdout)
	}

	// Rail 2 of ns-03 without a RoCE v2 GID: nothing runs, and the failed
	// check names that rail's device.
	v1only := roceTable(railAddr(c, 2, 2).Addr(), 5)
	v1only[5] = gidEntry{"0000:0000:0000:0000:0000:0000:0000:0000", ""}
	stageRDMA(t, c.Hosts[2], inv.Horovod.RailHCA(2), inv.Hosts[2].Rails[2].Interface, v1only)
	if err := onHosts(c, func(_ int, h *netnstest.Host) error {
		if out, err := h.Docker("exec", horovod.WorkerName, "sh", "-c", ": >/tmp/rdgtest-replay.log"); err != nil {
			return fmt.Errorf("%s: %v %s", h.Name, err, out)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := rdggenBench(t, c, context.Background()); code != exitFailed ||
		!strings.Contains(errOut, "rdggen bench: ns-03: gid mlx5_2 port 1: FAILED") || strings.Contains(errOut, "mlx5_1 port 1: FAILED") ||
		!strings.Contains(errOut, ": nothing was run") {
		t.Errorf("no GID on ns-03's rail 2: exit %d", code)
	}
	_ = onHosts(c, func(_ int, h *netnstest.Host) error {
		if log, _ := h.Docker("exec", horovod.WorkerName, "cat", "/tmp/rdgtest-replay.log"); log != "" {
			t.Errorf("%s: something ran:\n%s", h.Name, log)
		}
		return nil
	})
}

// `bench --judge -f` takes the rails from the inventory: the golden 4-rail
// cluster (4 × 400 Gb/s) judges DeepOps' 22.92 GB/s against the rails'
// sum, says where its 4 NICs per node come from, and refuses a
// --nics-per-node that contradicts the rails.
func TestBenchJudgeRails(t *testing.T) {
	inv := filepath.Join("..", "..", "testdata", "golden", "rails", "inventory.yaml")
	sweep := filepath.Join("..", "..", "pkg", "bench", "testdata", "nccltests-deepops-roce-2x100g.txt")
	code, stdout, stderr := rdggen(t, "bench", "--judge", "-f", inv, sweep)
	if code != exitInvalid || !strings.Contains(stdout, "expected ≥ 172.8 GB/s out-of-place busbw at the largest size (90 % of the expected peak 192 GB/s (12 GB/s per 100 Gb/s of the rails' sum, 4 rails × 400 Gb/s per node)") ||
		!strings.Contains(stdout+stderr, "4 NIC(s) per node (inventory "+inv+" (4 rails, one NIC each))") ||
		!strings.Contains(stdout, "cause (GPU–NIC pairing): once every rail passes ib_write_bw at its line") {
		t.Errorf("judged with the rails: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := rdggen(t, "bench", "--judge", "-f", inv, "--nics-per-node", "2", sweep); code != exitUsage ||
		!strings.Contains(stderr, "--nics-per-node 2: the hosts of "+inv+" have 4 rails, one NIC each") {
		t.Errorf("--nics-per-node 2 with 4 rails: exit %d\n%s", code, stderr)
	}
	if code, _, _ := rdggen(t, "bench", "--judge", "-f", inv, "--nics-per-node", "4", sweep); code != exitInvalid {
		t.Errorf("--nics-per-node 4 with 4 rails: exit %d", code)
	}
}
