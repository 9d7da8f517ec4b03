package bench

import (
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/readiness"
)

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
	ev.Evidence = []readiness.Result{readiness.Fail(readiness.TargetHosts, "clx-mld-44", EvidencePeermem, "", "nvidia_peermem not loaded", "loaded", "modprobe nvidia-peermem")}
	if v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(send)), ev), CheckGPUDirect); v.Status != StatusFail ||
		len(v.Causes) != 1 || !strings.Contains(v.Causes[0].Finding, "on clx-mld-44") {
		t.Errorf("send only + peermem evidence: %s", v.Line())
	}
}
