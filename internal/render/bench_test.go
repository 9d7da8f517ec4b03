package render

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// syntheticYAML is an inventory of n hosts (n ≤ 8190), one per ESXi host:
// 64-port switches (SN4600C), one data network (100.64.0.0/21 up to 2,046
// hosts, /19 above), container subnets 10.x.y.0/24 from 10.0.0.0/8, Ubuntu
// 20.04 (netplan) and two V100s per VM.
func syntheticYAML(n int) []byte { return syntheticMode(n, false) }

// syntheticMode is syntheticYAML, or with routed set the routed-pool form
// of it: one SN4600C routes the pool, so its 64 ports carry all hosts, n/64
// VMs per ESXi host (n a multiple of 64), one port per ESXi host.
func syntheticMode(n int, routed bool) []byte {
	var b strings.Builder
	b.WriteString("name: synth\nswitches:\n")
	switches, perESXi := (n+63)/64, 1
	if routed {
		switches, perESXi = 1, max(n/64, 1)
	}
	for s := range switches {
		fmt.Fprintf(&b, "  - {name: leaf%d, model: SN4600C, onyx: 3.6.8190}\n", s+1)
	}
	routing := "hosts"
	if routed {
		routing = "switch"
	}
	fmt.Fprintf(&b, `docker: {pool: 10.0.0.0/8, prefix: 24, routing: %s}
defaults:
  os: ubuntu-20.04
  data_interface: ens224
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}, {model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: %d}
hosts:
`, routing, max(8, perESXi))
	bits := 21
	if n > 2046 {
		bits = 19
	}
	for i := range n {
		off := i + 1
		if routed {
			e := i / perESXi
			fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 100.64.%d.%d/%d, switch: leaf1, port: 1/%d}}\n",
				i+1, e+1, off>>8, off&255, bits, e+1)
			continue
		}
		fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 100.64.%d.%d/%d, switch: leaf%d, port: 1/%d}}\n",
			i+1, i+1, off>>8, off&255, bits, i/64+1, i%64+1)
	}
	return []byte(b.String())
}

// synthetic loads syntheticYAML(n).
func synthetic(tb testing.TB, n int) *inventory.Inventory {
	tb.Helper()
	inv, err := inventory.Load("synthetic.yaml", syntheticYAML(n))
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

func TestSyntheticIsValid(t *testing.T) {
	inv := synthetic(t, 1024)
	if len(inv.Hosts) != 1024 || len(inv.Switches) != 16 {
		t.Fatalf("%d hosts, %d switches", len(inv.Hosts), len(inv.Switches))
	}
	if got := inv.Hosts[1023].Subnet.String(); got != "10.4.0.0/24" {
		t.Errorf("subnet of host 1024: %s", got)
	}
}

// benchGenerate is what the generation benchmarks time: the whole tree of
// inv written to dir, as `rdggen -o dir` does; it returns the number of files
// and their bytes (the .rdggen list excluded).
func benchGenerate(ctx context.Context, dir string, inv *inventory.Inventory) (files int, size int64, err error) {
	s, err := Generate(ctx, dir, inv)
	return s.Files(), s.Bytes, err
}

// TestMain makes the test binary the generator of BenchmarkGenerate's child
// process when RDGGEN_BENCH_CHILD names an inventory file.
func TestMain(m *testing.M) {
	if path := os.Getenv("RDGGEN_BENCH_CHILD"); path != "" {
		os.Exit(benchChild(path, os.Getenv("RDGGEN_BENCH_OUT")))
	}
	os.Exit(m.Run())
}

// childReport is what the child process of BenchmarkGenerate prints: the
// size of the tree and its peak resident set sizes (the kernel's VmHWM of
// the child's own address space, in KiB): LoadPeakKiB once the inventory is
// loaded, GenPeakKiB while generating (the mark is reset after loading; -1
// when the kernel cannot reset it).
type childReport struct {
	LoadPeakKiB, GenPeakKiB int64
	Files                   int
	Bytes                   int64
}

// peakKiB is the child's peak over its whole life.
func (r childReport) peakKiB() int64 { return max(r.LoadPeakKiB, r.GenPeakKiB) }

func benchChild(path, out string) int {
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	inv, err := inventory.Load("synthetic.yaml", src) // the name synthetic gives: the same bytes
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := childReport{LoadPeakKiB: vmHWM(), GenPeakKiB: -1}
	// What the load left behind is garbage: hand it back, so that the
	// high-water mark measured from here on is generation's own.
	src = nil
	runtime.GC()
	debug.FreeOSMemory()
	reset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	r.Files, r.Bytes, err = benchGenerate(context.Background(), out, inv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if reset {
		r.GenPeakKiB = vmHWM()
	} else {
		r.LoadPeakKiB = vmHWM() // the whole life's peak
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// vmHWM is the process's peak resident set size in KiB (/proc/self/status).
func vmHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// measureChild loads and generates inventory file path once in a fresh
// child process (this test binary, see TestMain) and returns its report.
// The peaks are read inside the child: getrusage's ru_maxrss of a child
// would also count the benchmark process's own peak, whose address space
// the child shares between fork and exec.
func measureChild(b *testing.B, path string) childReport {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RDGGEN_BENCH_CHILD="+path, "RDGGEN_BENCH_OUT="+filepath.Join(b.TempDir(), "out"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("child: %v\n%s", err, stderr.String())
	}
	var r childReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		b.Fatalf("child's report %q: %v", stdout.String(), err)
	}
	return r
}

// BenchmarkGenerate writes the whole tree of a synthetic cluster of 1,024
// and 4,096 hosts (about 146 MB and 2.1 GB; put TMPDIR on a tmpfs to time
// the generator rather than the disk) into a new temporary directory: ns/op
// is the generation and the atomic write, with the inventory loaded once
// outside the loop and the tree removed with the timer stopped. MB-written
// and files are the tree's size (the .rdggen list excluded).
//
// Peak memory is measured in a fresh child process (this test binary,
// TestMain) that loads the inventory file and writes the tree once, as
// `rdggen -f FILE -o DIR` does, so that neither the benchmark's own heap nor
// garbage of earlier iterations counts. The child reads the kernel's
// high-water mark of its resident set (VmHWM in /proc/self/status, what
// /usr/bin/time -v reports as "Maximum resident set size") after loading;
// then it collects garbage, returns free memory to the kernel, resets the
// mark (/proc/self/clear_refs) and reads it again once the tree is written.
// gen-peak-RSS-MiB is that second mark, generation and writing with the
// loaded inventory; peak-RSS-MiB the larger of the two, the whole run's
// peak. Both are resident memory: the Go runtime, the inventory and garbage
// the collector has not yet reclaimed (GOGC applies) count.
func BenchmarkGenerate(b *testing.B) {
	for _, tc := range []struct {
		mode   string
		n      int
		routed bool
	}{{"hosts", 1024, false}, {"hosts", 4096, false}, {"switch", 1024, true}, {"switch", 4096, true}} {
		n := tc.n
		src := syntheticMode(n, tc.routed)
		path := filepath.Join(b.TempDir(), "synthetic.yaml")
		if err := os.WriteFile(path, src, 0o644); err != nil {
			b.Fatal(err)
		}
		inv, err := inventory.Load("synthetic.yaml", src)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("routing=%s/hosts=%d", tc.mode, n), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "out")
			var files int
			var size int64
			for b.Loop() {
				var err error
				files, size, err = benchGenerate(context.Background(), dir, inv)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := os.RemoveAll(dir); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.StopTimer()
			r := measureChild(b, path)
			if r.Files != files || r.Bytes != size {
				b.Fatalf("the child wrote %d files, %d bytes; the benchmark %d, %d", r.Files, r.Bytes, files, size)
			}
			b.ReportMetric(float64(size)/1e6, "MB-written")
			b.ReportMetric(float64(files), "files")
			b.ReportMetric(float64(r.peakKiB())/1024, "peak-RSS-MiB")
			if r.GenPeakKiB >= 0 {
				b.ReportMetric(float64(r.GenPeakKiB)/1024, "gen-peak-RSS-MiB")
			}
		})
		inv = nil
		runtime.GC()
	}
}

// BenchmarkTree generates every artifact for 8, 256 and 1024 hosts in
// memory (1024 hosts ≈ 1 M routes across the route scripts and persistent
// route files), without writing them. Loading and validation are outside the
// timed loop; see BenchmarkLoad.
func BenchmarkTree(b *testing.B) {
	for _, n := range []int{8, 256, 1024} {
		inv := synthetic(b, n)
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				size = 0
				for _, f := range Tree(inv) {
					size += len(f.Data)
				}
			}
			b.ReportMetric(float64(size)/1e6, "MB-out")
		})
	}
}

// BenchmarkLoad decodes and validates the synthetic inventories (the YAML
// text made outside the timed loop); pkg/inventory's BenchmarkValidate
// covers larger ones.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{8, 256, 1024} {
		src := syntheticYAML(n)
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := inventory.Load("synthetic.yaml", src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The routed-pool inventories of the benchmark are valid: one switch, up to
// 64 VMs per ESXi host.
func TestSyntheticRoutedIsValid(t *testing.T) {
	for _, n := range []int{1024, 4096} {
		inv, err := inventory.Load("synthetic.yaml", syntheticMode(n, true))
		if err != nil {
			t.Fatalf("%d hosts: %v", n, err)
		}
		if len(inv.Hosts) != n || len(inv.Switches) != 1 {
			t.Errorf("%d hosts, %d switches", len(inv.Hosts), len(inv.Switches))
		}
	}
}

// The estimate of the tree's size that the inventory's per-host-routes
// warning quotes (inventory.EstimateTreeBytes) is within 25 % of the tree
// generated for the benchmark's clusters, in both routing modes.
func TestTreeEstimate(t *testing.T) {
	for _, tc := range []struct {
		n      int
		routed bool
	}{{64, false}, {512, false}, {64, true}, {512, true}} {
		inv, err := inventory.Load("synthetic.yaml", syntheticMode(tc.n, tc.routed))
		if err != nil {
			t.Fatal(err)
		}
		var size int64
		for _, f := range Tree(inv) {
			size += int64(len(f.Data))
		}
		est := inventory.EstimateTreeBytes(tc.n, inv.Docker.Routing)
		if r := float64(est) / float64(size); r < 0.75 || r > 1.25 {
			t.Errorf("%d hosts, routing %s: estimate %d bytes, tree %d (%.0f %%)", tc.n, inv.Docker.Routing, est, size, 100*r)
		}
	}
}
