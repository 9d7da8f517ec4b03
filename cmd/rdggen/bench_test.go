package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/golden"
	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

const fixtureDir = "../../pkg/bench/testdata/"

func fixtureFiles(t *testing.T) []string {
	t.Helper()
	fs, err := filepath.Glob(fixtureDir + "*.txt")
	if err != nil || len(fs) < 10 {
		t.Fatalf("fixtures: %v %v", fs, err)
	}
	return fs
}

// TestBenchJudgeGolden judges every recorded public output, as a user
// would: the verdict lines and causes per file, the summary, exit 1.
func TestBenchJudgeGolden(t *testing.T) {
	code, stdout, stderr := rdggen(t, append([]string{"bench", "--judge"}, fixtureFiles(t)...)...)
	if code != exitInvalid {
		t.Errorf("exit %d, want %d", code, exitInvalid)
	}
	got := fmt.Sprintf("exit %d\n-- stdout\n%s-- stderr\n%s", code, stdout, stderr)
	golden.Check(t, "../../testdata/golden/cli/bench/judge.txt", []byte(strings.ReplaceAll(got, fixtureDir, "")))
}

// TestBenchJudgeJSON: the rdggen.bench/v2 document of a passing input, two
// too short to judge and one with a failed verdict.
func TestBenchJudgeJSON(t *testing.T) {
	files := []string{fixtureDir + "nccltests-deepops-roce-2x100g.txt", fixtureDir + "nccllog-4921-no-gdrdma.txt",
		fixtureDir + "nccltests-119-tail-below-1g.txt", fixtureDir + "perftest-deepops-roce-gbits.txt"}
	code, stdout, stderr := rdggen(t, append([]string{"bench", "--judge", "-o", "json"}, files...)...)
	if code != exitInvalid {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	var doc bench.Document
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != bench.SchemaBench || doc.OK || len(doc.Inputs) != 4 || doc.Expect.LinkGbps != 100 || doc.Expect.MTU != 0 ||
		doc.Expect.MTUFrom != "not checked: no -f inventory or --mtu" ||
		doc.Inputs[0].Verdicts[0].PassLine.Value != 10.8 || doc.Inputs[1].Verdicts[1].Status != bench.StatusTooShort ||
		doc.Inputs[1].Verdicts[1].Causes[0].Layer != bench.LayerBenchmark || doc.Inputs[3].Verdicts[0].Status != bench.StatusPass {
		t.Errorf("%+v", doc)
	}
	if !strings.Contains(stderr, "nccllog-4921-no-gdrdma.txt: NCCL log\n  transport: passed") {
		t.Errorf("the text goes to stderr with -o json:\n%s", stderr)
	}
	golden.Check(t, "../../testdata/golden/cli/bench/judge.json", []byte(strings.ReplaceAll(stdout, fixtureDir, "")))
}

// TestBenchExit: 0 only when every verdict passes; 1 when one does not or
// a file is none of the formats; 2 for usage errors.
func TestBenchExit(t *testing.T) {
	pass := []string{fixtureDir + "nccltests-deepops-roce-2x100g.txt", fixtureDir + "perftest-deepops-roce-gbits.txt", fixtureDir + "nccllog-660-gdrdma-baremetal.txt"}
	code, stdout, stderr := rdggen(t, append([]string{"bench", "--judge"}, pass...)...)
	if code != exitOK || !strings.Contains(stderr, "rdggen bench: 3 file(s) at 100 Gb/s × 1 NIC(s) per node: 5 verdict(s): 5 passed, 0 failed, 0 too short to judge, 0 error(s)") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	// Twice the link: the DeepOps 2 × 100 GbE run is now below the line.
	code, stdout, _ = rdggen(t, "bench", "--judge", "--link-gbps", "200", "--nics-per-node", "2", pass[0])
	if code != exitInvalid || !strings.Contains(stdout, "busbw: FAILED: found 22.92 GB/s") || !strings.Contains(stdout, "expected ≥ 43.2 GB/s") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	junk := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(junk, []byte("the run went fine, 92 Gb/s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = rdggen(t, "bench", "--judge", junk)
	if code != exitInvalid || !strings.Contains(stdout, "notes.txt: not a perftest report") {
		t.Errorf("junk: exit %d\n%s", code, stdout)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"bench"}, "rdggen: bench needs -f cluster.yaml: it runs benchmarks on real machines (rdggen bench --judge FILE... judges saved outputs)"},
		{[]string{"bench", "-f", "x.yaml", "--only", "tcp"}, `--only "tcp": want rdma, nccl or horovod`},
		{[]string{"bench", "-f", "x.yaml", "--only", "nccl", "--horovod"}, "--horovod with --only nccl: --only runs one part"},
		{[]string{"bench", "-f", "x.yaml", "--horovod-cmd", "python x.py"}, "--horovod-cmd without --horovod"},
		{[]string{"bench", "-f", "x.yaml", "--horovod", "--horovod-cmd", ""}, "--horovod-cmd is empty"},
		{[]string{"bench", "--judge", "--horovod", pass[0]}, "--horovod is for running the benchmarks"},
		{[]string{"bench", "-f", "x.yaml", "--perftest-seconds", "0"}, "--perftest-seconds 0: want 1 to 3600"},
		{[]string{"bench", "-f", "x.yaml", "--parallel", "0"}, "--parallel must be at least 1"},
		{[]string{"bench", "--judge", "--dry-run", pass[0]}, "--dry-run is for running the benchmarks; --judge only reads files"},
		{[]string{"bench", pass[0]}, "files given without --judge"},
		{[]string{"bench", "--judge"}, "needs at least one FILE"},
		{[]string{"bench", "--judge", "/nonexistent/run.log"}, "/nonexistent/run.log: no such file or directory"},
		{[]string{"bench", "--judge", "-o", "yaml", pass[0]}, `--output "yaml": want text or json`},
		{[]string{"bench", "--judge", "--link-gbps", "0", pass[0]}, "--link-gbps 0: want 1 to 1600 Gb/s (the data link speed of one NIC), e.g. 100"},
		{[]string{"bench", "--judge", "--nics-per-node", "0", pass[0]}, "--nics-per-node 0: want 1 to 64"},
		{[]string{"bench", "--judge", "--evidence", pass[0], pass[0]}, "not a JSON document of rdggen check -o json"},
		{[]string{"bench", "--judge", "-", "-"}, "'-' (stdin) given twice"},
		{[]string{"bench", "--judge", "--bogus", pass[0]}, "unknown flag: --bogus"},
	} {
		code, _, stderr := rdggen(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.args, code, c.msg, stderr)
		}
	}
	code, stdout, _ = rdggen(t, "bench", "--help")
	if code != exitOK || !strings.Contains(stdout, "Usage: rdggen bench -f cluster.yaml") || !strings.Contains(stdout, "rdggen bench --judge FILE...") ||
		!strings.Contains(stdout, "--link-gbps") || strings.Contains(stdout, "--backup-dir") {
		t.Errorf("help: %d\n%s", code, stdout)
	}
	if _, stdout, _ := rdggen(t, "--help"); !strings.Contains(stdout, "rdggen bench --judge FILE...") {
		t.Errorf("the top usage lacks bench:\n%s", stdout)
	}
}

// TestBenchInventory: -f gives the expected MTU; with data_mtu 9000 the
// DeepOps RoCE report (MTU 4096, GID 3, 92.40 Gb/s) passes in full.
func TestBenchInventory(t *testing.T) {
	y := strings.Replace(string(inventory.ReferenceYAML), "  # data_mtu: 9000", "  data_mtu: 9000", 1)
	if y == string(inventory.ReferenceYAML) {
		t.Fatal("the reference has no data_mtu line to enable")
	}
	inv := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(inv, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	report := fixtureDir + "perftest-deepops-roce-gbits.txt"
	code, stdout, stderr := rdggen(t, "bench", "--judge", "-f", inv, report)
	if code != exitOK || !strings.Contains(stdout, "rdma-mtu: passed (MTU 4096 B in the perftest header)") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	// without -f the reference's data_mtu 1500 says nothing about a file
	// from elsewhere: the MTU is not checked (--mtu checks it)
	code, stdout, _ = rdggen(t, "bench", "--judge", report)
	if code != exitOK || strings.Contains(stdout, "rdma-mtu") {
		t.Errorf("reference: exit %d\n%s", code, stdout)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nbogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := rdggen(t, "bench", "--judge", "-f", bad, report); code != exitInvalid || !strings.Contains(stderr, "bad.yaml") {
		t.Errorf("invalid inventory: exit %d\n%s", code, stderr)
	}
}

// TestBenchEvidence: the results of `rdggen check -o json` name the cause
// of a Socket fallback.
func TestBenchEvidence(t *testing.T) {
	doc := readiness.Document{Schema: readiness.SchemaCheck, Cluster: "clx-mld", Results: []readiness.Result{
		readiness.Result{Target: readiness.TargetWorkers, Machine: "clx-mld-42", Check: bench.EvidenceDevices, Subject: "", Status: readiness.Failed, Found: "no /dev/infiniband in hvd-worker", Expected: "/dev/infiniband/uverbs0", Fix: "rdggen apply --target workers"},
	}}
	path := filepath.Join(t.TempDir(), "check.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Encode(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, stdout, _ := rdggen(t, "bench", "--judge", "--evidence", path, fixtureDir+"nccltests-398-socket-2.4.8.txt")
	if code != exitInvalid || !strings.Contains(stdout, "cause (container RDMA): the container has no /dev/infiniband on clx-mld-42 (rdggen check devices: no /dev/infiniband in hvd-worker); fix: rdggen apply --target workers") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	wrong := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(wrong, []byte(`{"schema":"rdggen.apply/v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := rdggen(t, "bench", "--judge", "--evidence", wrong, fixtureDir+"nccltests-398-socket-2.4.8.txt"); code != exitUsage ||
		!strings.Contains(stderr, `schema "rdggen.apply/v1", want "rdggen.check/v1"`) {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// TestBenchStdin: '-' judges what the run piped in.
func TestBenchStdin(t *testing.T) {
	b, err := os.ReadFile(fixtureDir + "nccllog-451-container-no-device.txt")
	if err != nil {
		t.Fatal(err)
	}
	withTerminal(t, string(b))
	code, stdout, _ := rdggen(t, "bench", "--judge", "-")
	if code != exitInvalid || !strings.HasPrefix(stdout, "(stdin): NCCL log\n  transport: FAILED: found NCCL fell back to TCP sockets") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
}

// TestREADMEBenchSample runs the README's bench example on the recorded
// outputs, so the sample cannot drift from the tool.
func TestREADMEBenchSample(t *testing.T) {
	readme := docsText(t)
	const cmd = "$ rdggen bench --judge pkg/bench/testdata/nccltests-82-broadcast-no-verbs.txt pkg/bench/testdata/nccllog-4921-no-gdrdma.txt\n"
	_, block, ok := strings.Cut(string(readme), cmd)
	if !ok {
		t.Fatal("README has no bench sample")
	}
	want, _, _ := strings.Cut(block, "```")
	t.Chdir("../..") // the manual's paths are the repository's
	code, stdout, stderr := rdggen(t, strings.Fields(strings.TrimPrefix(cmd, "$ rdggen "))...)
	if code != exitInvalid || stdout+stderr != want {
		t.Errorf("exit %d; README shows:\n%s\nthe tool prints:\n%s%s", code, want, stdout, stderr)
	}
}

// TestBenchLinkGbpsRange: --link-gbps outside 1 to 1600 Gb/s, NaN or Inf
// is a usage error that states the range.
func TestBenchLinkGbpsRange(t *testing.T) {
	f := fixtureDir + "nccltests-deepops-roce-2x100g.txt"
	for _, v := range []string{"NaN", "nan", "Inf", "+Inf", "-Inf", "-1", "0", "0.5", "1601", "1e300"} {
		code, _, stderr := rdggen(t, "bench", "--judge", "--link-gbps", v, f)
		if code != exitUsage || !strings.Contains(stderr, "rdggen: --link-gbps ") || !strings.Contains(stderr, ": want 1 to 1600 Gb/s (the data link speed of one NIC)") {
			t.Errorf("--link-gbps %s: exit %d\n%s", v, code, stderr)
		}
	}
	for _, v := range []string{"1", "25", "1600"} {
		if code, _, stderr := rdggen(t, "bench", "--judge", "--link-gbps", v, f); code == exitUsage {
			t.Errorf("--link-gbps %s refused:\n%s", v, stderr)
		}
	}
}

// TestBenchJudgeInputLimit: --judge reads at most bench's input limit of a
// file or stdin, in bounded memory, naming the file and the limit; a
// device such as /dev/zero is refused before it is read.
func TestBenchJudgeInputLimit(t *testing.T) {
	code, _, stderr := rdggen(t, "bench", "--judge", "/dev/zero")
	if code != exitUsage || !strings.Contains(stderr, "rdggen: bench: /dev/zero is not a regular file or a pipe (a device)") {
		t.Errorf("/dev/zero: exit %d\n%s", code, stderr)
	}
	big := filepath.Join(t.TempDir(), "big.log")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<30+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	if code, _, stderr := rdggen(t, "bench", "--judge", big); code != exitUsage || !strings.Contains(stderr, "big.log: more than 1024 MiB") {
		t.Errorf("1 GiB + 1: exit %d\n%s", code, stderr)
	}
	saved := console
	console = consoleInfo{In: io.LimitReader(zeros{}, 1<<40)}
	t.Cleanup(func() { console = saved })
	if code, _, stderr := rdggen(t, "bench", "--judge", "-"); code != exitUsage || !strings.Contains(stderr, "(stdin): more than 1024 MiB") {
		t.Errorf("stdin: exit %d\n%s", code, stderr)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestREADMEBenchLiveSample: the live run's sample in the README is what
// its replayed log (NVIDIA/nccl#1537) is judged to be as coming from an
// rdggen cluster's VMs (-f, as the live run judges it), "…" standing for
// the rest of a line; the live test (root) replays it for real.
func TestREADMEBenchLiveSample(t *testing.T) {
	readme := docsText(t)
	_, block, ok := strings.Cut(string(readme), "```\nall_reduce_perf (3 ranks on 3 hosts):\n")
	if !ok || !strings.Contains(string(readme), "(the recorded log of NVIDIA/nccl#1537, replayed by\nthe test's workers)") {
		t.Fatal("README has no live bench sample of nccllog-1537")
	}
	block, _, _ = strings.Cut(block, "```")
	want := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	want = want[:len(want)-1] // the live run's summary line
	_, stdout, _ := rdggen(t, "bench", "--judge", "-f", "../../testdata/golden/minimal/inventory.yaml", fixtureDir+"nccllog-1537-gdr-disabled-hca.txt")
	got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")[1:]
	if len(got) != len(want) {
		t.Fatalf("README shows %d verdict lines, --judge prints %d:\n%s", len(want), len(got), stdout)
	}
	for i := range want {
		ok := true
		rest := got[i]
		for j, part := range strings.Split(want[i], " …") {
			k := strings.Index(rest, part)
			if k < 0 || j == 0 && k != 0 {
				ok = false
				break
			}
			rest = rest[k+len(part):]
		}
		if !ok || (!strings.HasSuffix(want[i], "…") && rest != "") {
			t.Errorf("line %d: README %q, --judge %q", i+1, want[i], got[i])
		}
	}
}

// concat writes the fixtures one after the other into a file of dir.
func concat(t *testing.T, name string, fixtures ...string) string {
	t.Helper()
	var b []byte
	for _, f := range fixtures {
		x, err := os.ReadFile(fixtureDir + f)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, x...)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBenchJudgeWholeFile: a file with a passing nccl-tests table and a
// failed ib_write_bw run is judged for both and exits 1; two nccl-tests
// runs saved into one file are judged run by run.
func TestBenchJudgeWholeFile(t *testing.T) {
	mixed := concat(t, "mixed.txt", "nccltests-deepops-roce-2x100g.txt", "perftest-126-cuda-mr-fail.txt")
	code, stdout, stderr := rdggen(t, "bench", "--judge", mixed)
	if code != exitInvalid || !strings.Contains(stdout, "mixed.txt: nccl-tests output\n  busbw: passed") ||
		!strings.Contains(stdout, "mixed.txt: perftest report\n  rdma-bandwidth: ERROR: ib_write_bw failed: Couldn't allocate MR") ||
		!strings.Contains(stderr, "1 file(s) at 100 Gb/s × 1 NIC(s) per node: 2 verdict(s): 1 passed, 0 failed, 0 too short to judge, 1 error(s)") {
		t.Errorf("mixed: exit %d\n%s%s", code, stdout, stderr)
	}
	runs := concat(t, "runs.txt", "nccltests-a3mega-newformat.txt", "nccltests-superbench-single-node.txt")
	code, stdout, stderr = rdggen(t, "bench", "--judge", "-o", "json", "--link-gbps", "200", "--nics-per-node", "8", runs) // A3 Mega: 8 × 200 Gb/s
	var doc bench.Document
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if code != exitInvalid || doc.OK || len(doc.Inputs) != 2 || !strings.Contains(stdout, `"part": "run 1 of 2 (lines 1–64)"`) || !strings.Contains(stdout, `"part": "run 2 of 2 (lines 65–117)"`) ||
		!strings.Contains(stderr, "runs.txt: nccl-tests output, run 1 of 2 (lines 1–64)\n  busbw: passed (338.82 GB/s") ||
		!strings.Contains(stderr, "runs.txt: nccl-tests output, run 2 of 2 (lines 65–117)\n  busbw: TOO SHORT TO JUDGE: all 8 rank(s) ran on localhost") {
		t.Errorf("two runs: exit %d %+v\n%s", code, doc.Inputs, stderr)
	}
}

// TestREADMEBenchCauses: the README says which verdicts name a cause, and
// every recorded output bears it out: each failed or errored verdict has
// one, each too short to judge says why.
func TestREADMEBenchCauses(t *testing.T) {
	readme := docsText(t)
	flat := strings.Join(strings.Fields(string(readme)), " ")
	if !strings.Contains(flat, "every verdict that fails or errors names its cause — the layer, what the evidence shows, and the fix — and one too short to judge says what the output lacks") {
		t.Error("README does not state which verdicts name their cause")
	}
	code, stdout, _ := rdggen(t, append([]string{"bench", "--judge", "-o", "json", concat(t, "mixed.txt", "nccltests-deepops-roce-2x100g.txt", "perftest-126-cuda-mr-fail.txt")},
		fixtureFiles(t)...)...)
	var doc bench.Document
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != exitInvalid {
		t.Fatalf("exit %d: %v", code, err)
	}
	n := 0
	for _, in := range doc.Inputs {
		for _, v := range in.Verdicts {
			n++
			if (v.Status == bench.StatusFail || v.Status == bench.StatusError) && len(v.Causes) == 0 || v.Status == bench.StatusTooShort && v.Found == "" {
				t.Errorf("%s: %s %s without a cause: %+v", in.Name, v.Check, v.Status, v)
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d verdicts", n)
	}
}

// TestBenchJudgeParameters: a file from elsewhere is judged against the
// link given by flags, and the output says where each parameter came from;
// without -f or --mtu a 9000-MTU perftest report's MTU 4096 is not failed
// against the reference inventory's 1500.
func TestBenchJudgeParameters(t *testing.T) {
	f := filepath.Join("..", "..", "pkg", "bench", "testdata", "perftest-deepops-roce-gbits.txt")
	code, stdout, stderr := rdggen(t, "bench", "--judge", f)
	if code != exitOK || strings.Contains(stdout, "rdma-mtu") ||
		!strings.Contains(stderr, "judged against link 100 Gb/s (default: the deployment guide's 100 Gb/s; no -f inventory or --link-gbps), 1 NIC(s) per node (default: 1; no --nics-per-node), RDMA MTU not checked: no -f inventory or --mtu") {
		t.Errorf("no flags: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = rdggen(t, "bench", "--judge", "--mtu", "9000", "--link-gbps", "100", "--nics-per-node", "2", f)
	if code != exitOK || !strings.Contains(stdout, "rdma-mtu: passed") || !strings.Contains(stdout, "(link speed: --link-gbps)") ||
		!strings.Contains(stderr, "link 100 Gb/s (--link-gbps), 2 NIC(s) per node (--nics-per-node), RDMA MTU 4096 B (--mtu 9000)") {
		t.Errorf("--mtu 9000: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = rdggen(t, "bench", "--judge", "--mtu", "1500", f)
	if code != exitInvalid || !strings.Contains(stdout, "rdma-mtu: FAILED: found MTU 4096 B in the perftest header; expected 1024 B (the largest RoCE MTU that fits data_mtu 1500); MTU from --mtu 1500") {
		t.Errorf("--mtu 1500: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = rdggen(t, "bench", "--judge", "-o", "json", "--link-gbps", "25", f)
	if code != exitInvalid || !strings.Contains(stdout, `"link_gbps_from": "--link-gbps"`) || !strings.Contains(stdout, `"status": "error"`) {
		t.Errorf("92.40 Gb/s at 25 Gb/s: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := rdggen(t, "bench", "--judge", "--mtu", "100", f); code != exitUsage || !strings.Contains(stderr, "--mtu 100: want 1280 to 9216") {
		t.Errorf("--mtu 100: exit %d\n%s", code, stderr)
	}
}

// TestBenchJudgeVSphereNeedsInventory: a file judged without -f gets no
// cause that holds only on an rdggen (vSphere) cluster; with -f, whose
// inventory is such a cluster, it does (`rdggen check`, the VM).
func TestBenchJudgeVSphereNeedsInventory(t *testing.T) {
	f := fixtureDir + "nccllog-4921-no-gdrdma.txt"
	if _, stdout, _ := rdggen(t, "bench", "--judge", f); strings.Contains(stdout, "rdggen check") {
		t.Errorf("without -f:\n%s", stdout)
	}
	if _, stdout, _ := rdggen(t, "bench", "--judge", "-f", "../../testdata/golden/minimal/inventory.yaml", f); !strings.Contains(stdout, "or run `rdggen check` (hosts peermem, esxi p2p)") {
		t.Errorf("with -f:\n%s", stdout)
	}
}

// TestBenchJudgeSVGPlantedLinks: --svg DIR into a directory where someone
// planted symbolic links under the names the pictures get (one to a file
// of theirs, one to a path that does not exist) writes neither through:
// the links are replaced by the pictures, the linked file keeps its
// bytes, nothing is created where the dangling link pointed, and no
// temporary file is left.
func TestBenchJudgeSVGPlantedLinks(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	victim := filepath.Join(elsewhere, "authorized_keys")
	if err := os.WriteFile(victim, []byte("ssh-ed25519 AAAA precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(elsewhere, "made-through-a-link")
	for name, target := range map[string]string{"perftest-deepops-roce-gbits.perftest.svg": victim, "nccltests-deepops-roce-2x100g.sweep.svg": nowhere} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := rdggen(t, "bench", "--judge", "--svg", dir, fixtureDir+"perftest-deepops-roce-gbits.txt", fixtureDir+"nccltests-deepops-roce-2x100g.txt")
	if code != exitOK || strings.Contains(stderr, "--svg") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "ssh-ed25519 AAAA precious\n" {
		t.Errorf("written through the link: %q", b)
	}
	if _, err := os.Lstat(nowhere); err == nil {
		t.Error("the dangling link's target was created")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		if b, _ := os.ReadFile(filepath.Join(dir, e.Name())); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 || !bytes.HasPrefix(b, []byte("<svg ")) {
			t.Errorf("%s: %v %v %.20q", e.Name(), fi.Mode(), err, b)
		}
	}
	if len(entries) != 2 {
		t.Errorf("in DIR: %v", entries)
	}
}

// TestBenchJudgeSVG: --svg DIR writes one well-formed SVG per nccl-tests
// run and one per file of perftest runs.
func TestBenchJudgeSVG(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pictures")
	runs := concat(t, "runs.txt", "nccltests-a3mega-newformat.txt", "nccltests-superbench-single-node.txt")
	code, _, stderr := rdggen(t, "bench", "--judge", "--svg", dir, runs, fixtureDir+"perftest-deepops-roce-gbits.txt", fixtureDir+"nccllog-660-gdrdma-baremetal.txt")
	if code != exitInvalid {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader(b))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("%s: %v", e.Name(), err)
				break
			}
		}
	}
	if strings.Join(names, " ") != "perftest-deepops-roce-gbits.perftest.svg runs.run-1.sweep.svg runs.run-2.sweep.svg" {
		t.Errorf("wrote %v", names)
	}
	if code, _, stderr := rdggen(t, "bench", "-f", "x.yaml", "--svg", dir); code != exitUsage || !strings.Contains(stderr, "--svg is for --judge") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}
