package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Tests that a file is judged whole: every kind in it, every run, every
// row, and no verdict from evidence that cannot tell.

func refExpect() Expect {
	e := ExpectFor(inventory.Reference(), 100)
	e.GIDIndex = 3
	return e
}

func cat(t *testing.T, names ...string) []byte {
	t.Helper()
	var b []byte
	for _, n := range names {
		b = append(b, read(t, n)...)
	}
	return b
}

func checkStatuses(vs []Verdict) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Check+"="+string(v.Status))
	}
	return strings.Join(s, ",")
}

// TestJudgeEveryKind: a file that holds a nccl-tests table and a failed
// ib_write_bw run (or an NCCL log and a perftest report) is judged for
// both; the perftest failure is not lost behind the passing table.
func TestJudgeEveryKind(t *testing.T) {
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{"nccltests-deepops-roce-2x100g.txt", "perftest-126-cuda-mr-fail.txt"}, "busbw=passed,rdma-bandwidth=error"},
		{[]string{"perftest-126-cuda-mr-fail.txt", "nccltests-deepops-roce-2x100g.txt"}, "busbw=passed,rdma-bandwidth=error"},
		{[]string{"perftest-deepops-roce-gbits.txt", "nccllog-451-container-no-device.txt"},
			"rdma-bandwidth=passed,rdma-mtu=failed,gid-index=passed,link-type=passed,transport=failed"},
	} {
		kind, vs, err := Judge(cat(t, c.files...), refExpect())
		if err != nil || checkStatuses(vs) != c.want || Passed(vs) {
			t.Errorf("%v: %s %v %s, want %s", c.files, kind, err, checkStatuses(vs), c.want)
		}
	}
}

// TestJudgeGDRSendOnly: a log whose inter-node channels are only [send]
// lines without /GDRDMA (apptainer/singularity#4921) cannot tell whether
// GPUDirect RDMA is off: before Ampere NCCL sends through host memory even
// with GPUDirect RDMA working. Evidence that positively shows it off still
// fails: a [receive] line without /GDRDMA, NCCL's "GPU Direct RDMA
// Disabled" lines, or failed `rdggen check` prerequisites.
func TestJudgeGDRSendOnly(t *testing.T) {
	e := Expect{GIDIndex: -1}
	send := "NCCL INFO Ring 00 : 7[7000] -> 8[4000] [send] via NET/IB/0\n"
	v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(send)), e), CheckGPUDirect)
	if v.Status != StatusTooShort || !strings.Contains(v.Found, "[send]") || !strings.Contains(v.Found, "[receive]") ||
		len(v.Causes) != 1 || v.Causes[0].Layer != LayerBenchmark {
		t.Errorf("send only: %s", v.Line())
	}
	both := send + "NCCL INFO Ring 00 : 7[7000] -> 8[4000] [receive] via NET/IB/0\n"
	if v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(both)), e), CheckGPUDirect); v.Status != StatusFail || len(v.Causes) == 0 {
		t.Errorf("both directions without GDRDMA: %s", v.Line())
	}
	gdr := strings.Replace(send, "NET/IB/0", "NET/IB/0/GDRDMA", 1)
	if v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(gdr)), e), CheckGPUDirect); v.Status != StatusPass {
		t.Errorf("send with GDRDMA: %s", v.Line())
	}
	for name, extra := range map[string]string{
		"GPU decision": "NCCL INFO GPU Direct RDMA Disabled for GPU 7000 / HCA 0 (distance 5 > 4)\n",
		"HCA":          "NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n",
		"rings":        "NCCL INFO Connected all rings, use ring PXN 0 GDR 0\n",
	} {
		v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(send+extra)), e), CheckGPUDirect)
		if v.Status != StatusFail || len(v.Causes) == 0 || v.Causes[0].Layer != LayerGPUDirect {
			t.Errorf("send only + %s: %s", name, v.Line())
		}
	}
	ev := e
	ev.Evidence = []readiness.Result{readiness.Result{Target: readiness.TargetHosts, Machine: "clx-mld-44", Check: EvidencePeermem, Subject: "", Status: readiness.Failed, Found: "nvidia_peermem not loaded", Expected: "loaded", Fix: "modprobe nvidia-peermem"}}
	if v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(send)), ev), CheckGPUDirect); v.Status != StatusFail ||
		len(v.Causes) != 1 || !strings.Contains(v.Causes[0].Finding, "on clx-mld-44") {
		t.Errorf("send only + peermem evidence: %s", v.Line())
	}
}

// a3megaWithout is nccltests-a3mega-newformat.txt (16 H100 ranks on two
// hosts, -b 8 -e 8G -f 2) with the row of size replaced by repl.
func a3megaWithout(t *testing.T, size string, repl string) []byte {
	t.Helper()
	var out []string
	found := false
	for _, l := range strings.SplitAfter(string(read(t, "nccltests-a3mega-newformat.txt")), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == size {
			found = true
			if repl != "" {
				out = append(out, repl)
			}
			continue
		}
		out = append(out, l)
	}
	if !found {
		t.Fatalf("no row of %s B", size)
	}
	return []byte(strings.Join(out, ""))
}

// TestJudgeNCCLTestsRowsLost: a row that does not parse, or a size missing
// from the sweep, is said; lost rows at the top of the sweep make the
// verdict too short, never a pass on the rows that remain.
func TestJudgeNCCLTestsRowsLost(t *testing.T) {
	e := a3megaExpect()
	garbled := "     1048576        262144     float     sum      -1    203.2    5.16    9.6\n"
	vs := JudgeNCCLTests(mustNCCL(t, a3megaWithout(t, "1048576", garbled)), e)
	if v := vs[0]; v.Status != StatusPass || !strings.Contains(v.Found, "1 unreadable row skipped (line 49)") {
		t.Errorf("garbled middle row: %s", v.Line())
	}
	vs = JudgeNCCLTests(mustNCCL(t, a3megaWithout(t, "4194304", "")), e)
	if v := vs[0]; v.Status != StatusPass || !strings.Contains(v.Found, "1 size missing from the sweep") {
		t.Errorf("missing middle row: %s", v.Line())
	}
	last := "  8589934592    2147483648     float     sum      -1    47535  180.71  33\n"
	vs = JudgeNCCLTests(mustNCCL(t, a3megaWithout(t, "8589934592", last)), e)
	if v := vs[0]; v.Status != StatusTooShort || !strings.Contains(v.Found, "unreadable") || v.Measured != nil {
		t.Errorf("garbled last row: %s", v.Line())
	}
	vs = JudgeNCCLTests(mustNCCL(t, a3megaWithout(t, "8589934592", "")), e)
	if v := vs[0]; v.Status != StatusTooShort || !strings.Contains(v.Found, "8589934592 B (8 GiB)") {
		t.Errorf("missing last row: %s", v.Line())
	}
	for _, f := range []string{"nccltests-a3mega-newformat.txt", "nccltests-deepops-roce-2x100g.txt", "nccltests-superbench-single-node.txt", "nccltests-119-tail-below-1g.txt"} {
		if v := judgeFile(t, f, e)[0]; strings.Contains(v.Found, "unreadable") || strings.Contains(v.Found, "missing") {
			t.Errorf("%s: %s", f, v.Line())
		}
	}
}

// a3megaExpect is refExpect with the link of the A3 Mega fixture: 8 × 200
// Gb/s per VM.
func a3megaExpect() Expect {
	e := refExpect()
	e.LinkGbps, e.NICsPerNode = 200, 8
	return e
}

func mustNCCL(t *testing.T, data []byte) *NCCLTests {
	t.Helper()
	nt, err := ParseNCCLTests(data)
	if err != nil {
		t.Fatal(err)
	}
	return nt
}

// TestJudgeNCCLTestsTwoRuns: two runs saved one after the other are judged
// each; the second run's failure is not hidden by the first's pass.
func TestJudgeNCCLTestsTwoRuns(t *testing.T) {
	data := cat(t, "nccltests-a3mega-newformat.txt", "nccltests-superbench-single-node.txt")
	_, vs, err := Judge(data, a3megaExpect())
	if err != nil || checkStatuses(vs) != "busbw=passed,busbw=too-short" || !strings.Contains(vs[1].Found, "all 8 rank(s) ran on localhost") {
		t.Errorf("%v %s\n%s", err, checkStatuses(vs), strings.Join(Lines(vs), "\n"))
	}
	data = cat(t, "nccltests-superbench-single-node.txt", "nccltests-a3mega-newformat.txt")
	if _, vs, err := Judge(data, a3megaExpect()); err != nil || checkStatuses(vs) != "busbw=too-short,busbw=passed" || !strings.Contains(vs[1].Found, "338.82 GB/s") {
		t.Errorf("%v %s\n%s", err, checkStatuses(vs), strings.Join(Lines(vs), "\n"))
	}
}

// TestVerdictsNameCauses: every verdict that fails or errors names a
// cause, over every recorded output and the combinations above.
func TestVerdictsNameCauses(t *testing.T) {
	inputs := [][]byte{cat(t, "nccltests-deepops-roce-2x100g.txt", "perftest-126-cuda-mr-fail.txt"),
		cat(t, "nccltests-a3mega-newformat.txt", "nccltests-superbench-single-node.txt")}
	for name := range fixtures {
		inputs = append(inputs, read(t, name))
	}
	for _, data := range inputs {
		_, vs, _ := Judge(data, refExpect())
		for _, v := range vs {
			if (v.Status == StatusFail || v.Status == StatusError) && len(v.Causes) == 0 {
				t.Errorf("no cause: %s", v.Line())
			}
			if v.Status == StatusTooShort && v.Found == "" {
				t.Errorf("too short without saying why: %+v", v)
			}
		}
	}
}

// TestParseNCCLTestsRuns: a run starts at its preamble after the previous
// run's table, with the launch lines before it; preambles printed before
// any row (processes starting at once) do not split; rows after the
// footer without a run of their own are counted, not dropped silently.
func TestParseNCCLTestsRuns(t *testing.T) {
	runs, err := ParseNCCLTestsRuns(cat(t, "nccltests-superbench-single-node.txt", "nccltests-a3mega-newformat.txt"))
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	a, b := runs[0], runs[1]
	if a.FirstLine != 1 || a.LastLine != 53 || b.FirstLine != 54 || b.LastLine != 117 || a.Run != 1 || b.Run != 2 || b.Runs != 2 ||
		len(a.Ranks) != 8 || len(b.Ranks) != 16 || len(a.Rows) != 34 || len(b.Rows) != 31 || a.Ignored != 0 || b.MinBytes != 8 || a.MinBytes != 1 {
		t.Errorf("run 1 lines %d–%d, %d ranks, %d rows; run 2 lines %d–%d, %d ranks, %d rows",
			a.FirstLine, a.LastLine, len(a.Ranks), len(a.Rows), b.FirstLine, b.LastLine, len(b.Ranks), len(b.Rows))
	}
	if first, err := ParseNCCLTests(cat(t, "nccltests-superbench-single-node.txt", "nccltests-a3mega-newformat.txt")); err != nil || first.Runs != 2 || len(first.Ranks) != 8 {
		t.Errorf("ParseNCCLTests: %v %+v", err, first)
	}
	pre := "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
	one, err := ParseNCCLTestsRuns(append([]byte(pre+pre), read(t, "nccltests-a3mega-newformat.txt")...))
	if err != nil || len(one) != 1 {
		t.Errorf("preambles before any row: %d runs, %v", len(one), err)
	}
	rows := read(t, "nccltests-252-ring-8g.txt")
	var tail []string
	for _, l := range strings.Split(string(rows), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "5368") || strings.HasPrefix(strings.TrimSpace(l), "1073") {
			tail = append(tail, l)
		}
	}
	nt := mustNCCL(t, append(rows, []byte(strings.Join(tail, "\n")+"\n")...))
	v := JudgeNCCLTests(nt, refExpect())[0]
	if nt.Runs != 1 || nt.Ignored != 2 || nt.IgnoredLine != 11 || !strings.Contains(v.Found, "2 result rows after the table's end not read (from line 11)") {
		t.Errorf("rows after the footer: %d ignored from line %d: %s", nt.Ignored, nt.IgnoredLine, v.Line())
	}
}

// TestSweepStepBytes: with -i (a step in bytes) the sizes nccl-tests' loop
// runs are minBytes + k × step up to maxBytes; a size left out, or the
// last, is found as with -f.
func TestSweepStepBytes(t *testing.T) {
	head := "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 8912896 step: 1048576(bytes) warmup iters: 5 iters: 20 validation: 1\n" +
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	row := func(mib int) string {
		return fmt.Sprintf("%12d %12d float sum -1 100.0 10.00 20.00 0 100.0 10.00 20.00 0\n", mib<<20, mib<<18)
	}
	table := func(skip int) []byte {
		s := head
		for m := 1; m <= 8; m++ {
			if m != skip {
				s += row(m)
			}
		}
		return []byte(s + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 20\n")
	}
	nt := mustNCCL(t, table(0))
	if end := nt.SweepEnd(); end != 8<<20 || nt.endMissing() || nt.StepBytes != 1<<20 {
		t.Errorf("full: end %d, missing %v, step %d", end, nt.endMissing(), nt.StepBytes)
	}
	if n, from, to := mustNCCL(t, table(4)).Missing(); n != 1 || from != 3<<20 || to != 5<<20 {
		t.Errorf("without 4 MiB: %d missing between %d and %d", n, from, to)
	}
	if nt := mustNCCL(t, table(8)); !nt.endMissing() {
		t.Errorf("without 8 MiB: the end is not missing")
	}
}
