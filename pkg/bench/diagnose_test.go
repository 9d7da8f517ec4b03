package bench

import (
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

func judgeFile(t *testing.T, name string, e Expect) []Verdict {
	t.Helper()
	_, vs, err := Judge(read(t, name), e)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func verdict(vs []Verdict, check string) Verdict {
	for _, v := range vs {
		if v.Check == check {
			return v
		}
	}
	return Verdict{}
}

// TestSocketEvidence: with check results, the Socket fallback names what
// check found on which machine, instead of the list of usual causes.
func TestSocketEvidence(t *testing.T) {
	e := ExpectFor(inventory.Reference(), 100)
	generic := verdict(judgeFile(t, "nccltests-398-socket-2.4.8.txt", e), CheckTransport)
	if len(generic.Causes) != 1 || !strings.Contains(generic.Causes[0].Finding, "neither the log nor check results say which") {
		t.Fatalf("without evidence: %+v", generic.Causes)
	}
	e.Evidence = []readiness.Result{
		readiness.Result{Target: readiness.TargetWorkers, Machine: "clx-mld-42", Check: EvidenceDevices, Subject: "", Status: readiness.Failed, Found: "no /dev/infiniband in hvd-worker", Expected: "/dev/infiniband/uverbs0", Fix: "rdggen apply --target workers"},
		readiness.Result{Target: readiness.TargetWorkers, Machine: "clx-mld-43", Check: EvidenceMemlock, Subject: "", Status: readiness.Failed, Found: "ulimit -l 8192", Expected: "unlimited", Fix: "docker run --ulimit memlock=-1"},
		readiness.Result{Target: readiness.TargetWorkers, Machine: "clx-mld-41", Check: EvidenceDevices, Subject: "", Status: readiness.Passed, Found: "/dev/infiniband/uverbs0"},
	}
	v := verdict(judgeFile(t, "nccltests-398-socket-2.4.8.txt", e), CheckTransport)
	if len(v.Causes) != 2 {
		t.Fatalf("causes %+v", v.Causes)
	}
	dev, mem := v.Causes[0], v.Causes[1]
	if dev.Layer != LayerContainerRDMA || !strings.Contains(dev.Finding, "the container has no /dev/infiniband on clx-mld-42 (rdggen check devices: no /dev/infiniband in hvd-worker)") ||
		dev.Fix != "rdggen apply --target workers" || strings.Join(dev.Hosts, ",") != "clx-mld-42" {
		t.Errorf("devices cause %+v", dev)
	}
	if !strings.Contains(mem.Finding, "locked-memory limit is too low on clx-mld-43") || mem.Fix != "docker run --ulimit memlock=-1" {
		t.Errorf("memlock cause %+v", mem)
	}
}

// TestGDREvidence: peermem, P2P and gdr-level results explain channels
// without /GDRDMA.
func TestGDREvidence(t *testing.T) {
	e := ExpectFor(inventory.Reference(), 100)
	e.Evidence = []readiness.Result{
		readiness.Result{Target: readiness.TargetHosts, Machine: "clx-mld-44", Check: EvidencePeermem, Subject: "", Status: readiness.Failed, Found: "nvidia_peermem not loaded", Expected: "loaded", Fix: "modprobe nvidia-peermem"},
		readiness.Result{Target: readiness.TargetESXi, Machine: "clx-mld-44", Check: EvidenceP2P, Subject: "", Status: readiness.Failed, Found: "pciPassthru.allowP2P absent", Expected: "TRUE", Fix: "rdggen apply --target esxi"},
		readiness.Result{Target: readiness.TargetWorkers, Machine: "clx-mld-41", Check: EvidenceGDRLevel, Subject: "", Status: readiness.Failed, Found: "NCCL_NET_GDR_LEVEL unset", Expected: "PHB", Fix: "NCCL_NET_GDR_LEVEL=PHB in run.sh"},
	}
	v := verdict(judgeFile(t, "nccllog-4921-no-gdrdma.txt", e), CheckGPUDirect)
	var got []string
	for _, c := range v.Causes {
		got = append(got, c.Layer+": "+c.Finding)
	}
	want := []string{
		"GPUDirect RDMA: nvidia_peermem is not loaded or not visible to NCCL on clx-mld-44 (rdggen check peermem: nvidia_peermem not loaded)",
		"GPUDirect RDMA: the VM lacks the P2P passthrough keys (pciPassthru.allowP2P, pciPassthru.RelaxACSforP2P) on clx-mld-44 (rdggen check p2p: pciPassthru.allowP2P absent)",
		"GPUDirect RDMA: NCCL_NET_GDR_LEVEL is too strict for the VM's PCI topology on clx-mld-41 (rdggen check gdr-level: NCCL_NET_GDR_LEVEL unset)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("causes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestGDRLevelNotSet: disabled-by-distance decisions without
// NCCL_NET_GDR_LEVEL in the log suggest PHB, the path of a passed-through
// device, in a vSphere VM of an rdggen cluster; elsewhere the level of the
// path's type, which the log does not name.
func TestGDRLevelNotSet(t *testing.T) {
	log := ParseNCCLLog([]byte("node-1:32726:33054 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 5 > 4)\n"))
	vs := JudgeNCCLLog(log, Expect{GIDIndex: -1, VSphere: true})
	if len(vs) != 1 || vs[0].Status != StatusFail || len(vs[0].Causes) != 1 ||
		!strings.Contains(vs[0].Causes[0].Finding, "NCCL_NET_GDR_LEVEL is not set") || !strings.Contains(vs[0].Causes[0].Finding, "in a vSphere VM each passthrough device") ||
		vs[0].Causes[0].Fix != "launch with NCCL_NET_GDR_LEVEL=PHB (-x NCCL_NET_GDR_LEVEL=PHB with mpirun)" {
		t.Errorf("%+v", vs)
	}
	vs = JudgeNCCLLog(log, Expect{GIDIndex: -1})
	if len(vs) != 1 || len(vs[0].Causes) != 1 || strings.Contains(vs[0].Causes[0].Line(), "VM") ||
		!strings.HasPrefix(vs[0].Causes[0].Fix, "launch with NCCL_NET_GDR_LEVEL set to that path's type (PHB for a path through the CPU's root complex") {
		t.Errorf("from elsewhere: %+v", vs)
	}
}

// TestGDRAsymmetricHosts: with the Rank lines of nccl-tests, asymmetric
// GDRDMA names hosts, not ranks (lines from NVIDIA/nccl#897 with the
// reporter's topology: rank 9 on the second machine, rank 2 on the first).
func TestGDRAsymmetricHosts(t *testing.T) {
	log := ParseNCCLLog(read(t, "nccllog-897-gdr-asymmetric.txt"))
	ranks := []NCCLRank{{Rank: 2, Host: "node-a"}, {Rank: 9, Host: "node-b"}}
	vs := judgeLog(log, Expect{GIDIndex: -1}, ranks)
	v := verdict(vs, CheckGPUDirect)
	if v.Status != StatusFail || !strings.Contains(v.Found, "GPUDirect RDMA on node-b but not on node-a") ||
		len(v.Causes) == 0 || strings.Join(v.Causes[0].Hosts, ",") != "node-a" || !strings.Contains(v.Causes[0].Fix, "on node-a: modprobe nvidia-peermem") {
		t.Errorf("%+v", v)
	}
}

// TestBusBWPassLine: 0.12 GB/s per Gb/s per NIC, 90 % of it; the DeepOps
// 2 × 100 GbE run passes at 2 NICs per node (21.6 GB/s) and fails at 4.
func TestBusBWPassLine(t *testing.T) {
	for _, c := range []struct {
		gbps float64
		nics int
		want float64
	}{{100, 1, 10.8}, {100, 2, 21.6}, {200, 8, 172.8}, {25, 1, 2.7}} {
		if got := BusBWPassLine(c.gbps, c.nics).Value; got != c.want {
			t.Errorf("%v Gb/s × %d: %v, want %v", c.gbps, c.nics, got, c.want)
		}
	}
	if got := PerftestPassLine(100, false).Value; got != 90 {
		t.Errorf("perftest at 100 Gb/s: %v", got)
	}
	e := ExpectFor(inventory.Reference(), 100)
	e.NICsPerNode = 2
	if v := judgeFile(t, "nccltests-deepops-roce-2x100g.txt", e)[0]; v.Status != StatusPass || v.PassLine.Value != 21.6 || v.Measured.Value != 22.92 {
		t.Errorf("2 NICs: %+v", v)
	}
	e.NICsPerNode = 4
	v := judgeFile(t, "nccltests-deepops-roce-2x100g.txt", e)[0]
	if v.Status != StatusFail || v.PassLine.Value != 43.2 || len(v.Causes) != 2 || v.Causes[0].Layer != LayerBenchmark || v.Causes[1].Layer != LayerFabric {
		t.Errorf("4 NICs: %+v", v)
	}
	if !strings.Contains(v.Line(), "busbw: FAILED: found 22.92 GB/s out-of-place busbw at 2147483648 B (2 GiB), float sum") ||
		!strings.Contains(v.Line(), "expected ≥ 43.2 GB/s") {
		t.Errorf("%s", v.Line())
	}
}

// TestMTUDataMTU9000: with jumbo frames the DeepOps RoCE run's MTU 4096 is
// the expected one, and the whole report passes.
func TestMTUDataMTU9000(t *testing.T) {
	e := ExpectFor(inventory.Reference(), 100)
	e.MTU, e.DataMTU = 4096, 9000
	vs := judgeFile(t, "perftest-deepops-roce-gbits.txt", e)
	if !Passed(vs) {
		t.Errorf("%s", strings.Join(Lines(vs), "\n"))
	}
	e.MTU, e.DataMTU = 4096, 9000
	low := judgeFile(t, "perftest-tf22077-gid1-server.txt", e)
	m := verdict(low, CheckRDMAMTU)
	if m.Status != StatusFail || !strings.Contains(m.Causes[0].Finding, "below the 4096 B that data_mtu 9000 allows") {
		t.Errorf("%+v", m)
	}
}

// TestFailureGPUEvidence: a failed test with a failed GPU check names it.
func TestFailureGPUEvidence(t *testing.T) {
	e := ExpectFor(inventory.Reference(), 100)
	e.Evidence = []readiness.Result{readiness.Result{Target: readiness.TargetHosts, Machine: "clx-mld-45", Check: EvidenceDriver, Subject: "", Status: readiness.Failed, Found: "NVIDIA-SMI has failed", Expected: "driver loaded", Fix: "reinstall the driver"}}
	v := judgeFile(t, "nccltests-322-failure.txt", e)[0]
	if v.Status != StatusError || len(v.Causes) != 1 || v.Causes[0].Layer != LayerGPU ||
		v.Causes[0].Finding != "the GPU driver is not loaded on clx-mld-45 (rdggen check driver: NVIDIA-SMI has failed)" {
		t.Errorf("%+v", v.Causes)
	}
}

// TestGDRSendsWithoutGDRRead: on V100 PCIe hosts NCCL sends through host
// memory (no GDR reads before Ampere unless NCCL_NET_GDR_READ=1) while
// receives use GPUDirect RDMA; that is a pass. The lines follow NCCL's
// "Channel %02d/%d : %d[%d] -> %d[%d] [send|receive] via NET/%s/%d%s"
// format; no public log of this mix on V100 was found.
func TestGDRSendsWithoutGDRRead(t *testing.T) {
	log := "a:1:2 [0] NCCL INFO Channel 00/0 : 1[b000] -> 2[b000] [receive] via NET/IB/0/GDRDMA\n" +
		"a:1:2 [0] NCCL INFO Channel 00/0 : 2[b000] -> 3[b000] [send] via NET/IB/0\n" +
		"b:1:2 [0] NCCL INFO Channel 00/0 : 2[b000] -> 3[b000] [receive] via NET/IB/0/GDRDMA\n" +
		"b:1:2 [0] NCCL INFO Channel 00/0 : 3[b000] -> 0[b000] [send] via NET/IB/0\n"
	v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(log)), Expect{GIDIndex: -1}), CheckGPUDirect)
	if v.Status != StatusPass {
		t.Errorf("%s", v.Line())
	}
	off := strings.Replace(log, "3[b000] [receive] via NET/IB/0/GDRDMA", "3[b000] [receive] via NET/IB/0", 1)
	v = verdict(JudgeNCCLLog(ParseNCCLLog([]byte(off)), Expect{GIDIndex: -1}), CheckGPUDirect)
	if v.Status != StatusFail || !strings.Contains(v.Found, "GPUDirect RDMA on a but not on b (1 inter-node receive channel(s) without /GDRDMA") {
		t.Errorf("%s", v.Line())
	}
}

// TestNCCLGIDIndex: NCCL_IB_GID_INDEX from the log or the launch line is
// compared with the RoCE v2 index; the peer-memory cause names an NCCL
// that cannot see nvidia_peermem.
func TestNCCLGIDIndex(t *testing.T) {
	e := ExpectFor(inventory.Reference(), 100)
	if e.GIDIndex != -1 {
		t.Errorf("ExpectFor checks GID index %d; the index is each host's own", e.GIDIndex)
	}
	e.GIDIndex = 3
	log := "h:1:1 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 0.\nh:1:1 [0] NCCL INFO Using network IB\n"
	v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(log)), e), CheckGIDIndex)
	if v.Status != StatusFail || !strings.HasPrefix(v.Causes[0].Finding, "NCCL used GID index 0, not the RoCE v2 GID") ||
		!strings.Contains(v.Causes[0].Fix, "NCCL_IB_GID_INDEX=3") {
		t.Errorf("%s", v.Line())
	}
	cmd := "mpirun -x NCCL_IB_GID_INDEX=3 ./all_reduce_perf\nh:1:1 [0] NCCL INFO Using network IB\n"
	if v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(cmd)), e), CheckGIDIndex); v.Status != StatusPass || v.Found != "NCCL_IB_GID_INDEX=3" {
		t.Errorf("%+v", v)
	}
	old := "h:1:1 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\nh:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
	if v := verdict(JudgeNCCLLog(ParseNCCLLog([]byte(old)), e), CheckGPUDirect); !strings.Contains(v.Causes[0].Finding, "this run's NCCL 2.18.3+cuda12.2 is one of those") {
		t.Errorf("%+v", v.Causes)
	}
	for v, want := range map[string]bool{"2.22.3+cuda12": true, "2.23.4": false, "3.0": false, "2.9.6+cuda11.2": true} {
		if got, ok := versionBefore(v, 2, 23); !ok || got != want {
			t.Errorf("%s: %v %v", v, got, ok)
		}
	}
}
