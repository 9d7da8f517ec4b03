package bench

import (
	"strings"
	"testing"
)

// TestLowRDMAAdviceReadsTheRun: the advice on an ib_write_bw below its
// line names only what the run did not already do. The OKE run (4 QPs,
// 65536 B, 98.01 Gb/s) judged at 200 Gb/s is not told to retry with -q 4,
// only with larger messages; DeepOps' (1 QP, 65536 B) is told both; the
// OKE run with its messages at 8 MiB is told neither, and the finding
// says its settings are the ones perftest's maintainers advise.
func TestLowRDMAAdviceReadsTheRun(t *testing.T) {
	e := Expect{LinkGbps: 200, GIDIndex: -1}
	judge := func(data []byte) Verdict {
		t.Helper()
		r, err := ParsePerftest(data)
		if err != nil {
			t.Fatal(err)
		}
		v := JudgePerftest(r, e)[0]
		if v.Status != StatusFail || len(v.Causes) != 1 {
			t.Fatalf("%+v", v)
		}
		return v
	}
	oke := read(t, "perftest-okehpc-4qp-64k.txt")
	c := judge(oke).Causes[0]
	if strings.Contains(c.Fix, "-q") || strings.Contains(c.Finding, "QP") ||
		!strings.Contains(c.Fix, "retry with -s 8388608 or larger (this run's largest: 65536 B) (perftest maintainers in linux-rdma/perftest#252)") ||
		!strings.Contains(c.Finding, "or the run's own settings: messages of at most 65536 B (64 KiB)") {
		t.Errorf("4 QPs at 64 KiB: %s", c.Line())
	}
	c = judge(read(t, "perftest-deepops-roce-gbits.txt")).Causes[0]
	if !strings.Contains(c.Fix, "retry with -q 4 (this run: 1) and -s 8388608 or larger (this run's largest: 65536 B)") ||
		!strings.Contains(c.Finding, "1 QP (Number of qps : 1)") {
		t.Errorf("1 QP at 64 KiB: %s", c.Line())
	}
	big := strings.Replace(string(oke), " 65536      20000 ", " 8388608    20000 ", 1)
	c = judge([]byte(big)).Causes[0]
	if strings.Contains(c.Fix, "retry") || !strings.Contains(c.Finding, "not the run's settings: it already used 4 QPs and messages of 8388608 B (8 MiB)") {
		t.Errorf("4 QPs at 8 MiB: %s", c.Line())
	}
}

// TestAdviceReadsTheRunsOwnSettings: advice that the run already followed
// is not given again: a GPU–NIC path too long for NCCL_NET_GDR_LEVEL=SYS
// is not told to set SYS; a CUDA run that failed with --use_cuda_dmabuf
// is not told to use --use_cuda_dmabuf.
func TestAdviceReadsTheRunsOwnSettings(t *testing.T) {
	for level, want := range map[string]bool{"PHB": true, "SYS": false} {
		log := "node-1:1:1 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to " + level + "\n" +
			"node-1:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 7 > 6)\n"
		vs := JudgeNCCLLog(ParseNCCLLog([]byte(log)), Expect{GIDIndex: -1})
		if len(vs) != 1 || len(vs[0].Causes) != 1 || strings.Contains(vs[0].Causes[0].Fix, "set NCCL_NET_GDR_LEVEL=SYS") != want ||
			!strings.Contains(vs[0].Causes[0].Fix, "NCCL_TOPO_FILE") {
			t.Errorf("%s: %+v", level, vs)
		}
	}
	data := string(read(t, "perftest-126-cuda-mr-fail.txt"))
	for cmd, want := range map[string]bool{"--use_cuda=0": true, "--use_cuda=0 --use_cuda_dmabuf": false} {
		r, err := ParsePerftest([]byte(strings.Replace(data, "--use_cuda=0", cmd, 1)))
		if err != nil {
			t.Fatal(err)
		}
		v := JudgePerftest(r, Expect{GIDIndex: -1})[0]
		if v.Status != StatusError || strings.Contains(v.Causes[0].Fix, "or use --use_cuda_dmabuf") != want || !strings.Contains(v.Causes[0].Fix, "modprobe nvidia-peermem") {
			t.Errorf("%s: %s", cmd, v.Line())
		}
	}
}
