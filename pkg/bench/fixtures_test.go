package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// fixture is what one real output in testdata must give when judged
// against the reference cluster (100 Gb/s, data_mtu 1500 so RDMA MTU 1024,
// GID index 3, Ethernet).
type fixture struct {
	kind Kind
	// status per check, in verdict order.
	checks []string
	status []Status
	// has are substrings of the text verdicts (causes included).
	has []string
	// layers are the layers of the causes, in order.
	layers []string
}

var fixtures = map[string]fixture{
	"perftest-deepops-roce-gbits.txt": {KindPerftest,
		[]string{CheckRDMABandwidth, CheckRDMAMTU, CheckGIDIndex, CheckLinkType},
		[]Status{StatusPass, StatusFail, StatusPass, StatusPass},
		[]string{"92.40 Gb/s BW average at 65536 B", "pass line 90 Gb/s", "Mellanox/ngc_multinode_perf", "MTU 4096 B", "expected 1024 B"},
		[]string{LayerRDMAConfig}},
	"perftest-superbench-loopback-mb.txt": {KindPerftest, // a 200 Gb/s HDR port judged at 100 Gb/s
		[]string{CheckRDMABandwidth, CheckLinkType},
		[]Status{StatusError, StatusFail},
		[]string{"194.96 Gb/s BW average at 8388608 B", "23240.68 MB/sec × 2^20 × 8 / 10^9", "more than the 100 Gb/s link can carry", "link type IB"},
		[]string{LayerParameters, LayerRDMAConfig}},
	"perftest-273-postlist-8b.txt": {KindPerftest,
		[]string{CheckRDMABandwidth, CheckRDMAMTU, CheckGIDIndex, CheckLinkType},
		[]Status{StatusTooShort, StatusFail, StatusFail, StatusPass},
		[]string{"0.48 Gb/s BW average at 8 B", "messages below 65536 B", "GID index 2", "-x 3"},
		[]string{LayerRDMAConfig, LayerRDMAConfig}},
	"perftest-126-cuda-mr-fail.txt": {KindPerftest,
		[]string{CheckRDMABandwidth},
		[]Status{StatusError},
		[]string{"ib_write_bw failed: Couldn't allocate MR", "GPU buffer", "modprobe nvidia-peermem"},
		[]string{LayerGPUDirect}},
	"perftest-softiwarp-send-mr-fail.txt": {KindPerftest,
		[]string{CheckRDMABandwidth, CheckRDMAMTU, CheckGIDIndex, CheckLinkType},
		[]Status{StatusError, StatusPass, StatusFail, StatusPass},
		[]string{"ib_send_bw failed: Couldn't allocate MR", "host memory", "memlock", "GID index 0"},
		[]string{LayerContainerRDMA, LayerRDMAConfig}},
	"perftest-okehpc-4qp-64k.txt": {KindPerftest, // 4 QPs, 98.01 Gb/s: passes at 100 Gb/s
		[]string{CheckRDMABandwidth, CheckRDMAMTU, CheckGIDIndex, CheckLinkType},
		[]Status{StatusPass, StatusFail, StatusPass, StatusPass},
		[]string{"98.01 Gb/s BW average at 65536 B", "MTU 4096 B"},
		[]string{LayerRDMAConfig}},
	"perftest-tf22077-gid1-server.txt": {KindPerftest,
		[]string{CheckRDMABandwidth, CheckRDMAMTU, CheckGIDIndex, CheckLinkType},
		[]Status{StatusTooShort, StatusPass, StatusFail, StatusPass},
		[]string{"server side", "GID index 1", "IPv4-mapped (12.12.12.16, the data address's)"},
		[]string{LayerRDMAConfig}},

	"nccltests-deepops-roce-2x100g.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusPass},
		[]string{"22.92 GB/s out-of-place busbw at 2147483648 B (2 GiB)", "'# Avg bus bandwidth' 7.76739 GB/s is the mean", "pass line 10.8 GB/s", "NVIDIA/nccl-tests#119"},
		nil},
	"nccltests-eksefa-awslibfabric-g4dn.txt": {KindNCCLTests, // AWS EFA through aws-ofi-nccl, no GPUDirect RDMA
		[]string{CheckBusBW, CheckTransport, CheckGPUDirect}, []Status{StatusFail, StatusPass, StatusFail},
		[]string{"3.11 GB/s out-of-place busbw at 1073741824 B (1 GiB)", "Using network AWS Libfabric", "channels over NET/AWS Libfabric go through host memory",
			"expected every inter-node channel via NET/AWS Libfabric/<n>/GDRDMA", "src/nccl_ofi_net.c support_gdr"},
		[]string{LayerGPUDirect, LayerGPUDirect}},
	"nccltests-deepops-dgxa100-4node.txt": {KindNCCLTests, // 8 × 200G per node: impossible through one 100G NIC
		[]string{CheckBusBW}, []Status{StatusError},
		[]string{"busbw 191.56 GB/s at 4294967296 B (4 GiB) (line 17) is more than 25 GB/s, twice what 1 × 100 Gb/s NIC(s) per node carry", "--nics-per-node"},
		[]string{LayerParameters}},
	"nccltests-a3mega-newformat.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusError},
		[]string{"338.82 GB/s out-of-place busbw at 8589934592 B (8 GiB), float sum (in-place 337.35)", "is more than 25 GB/s"},
		[]string{LayerParameters}},
	"nccltests-252-ring-8g.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusError},
		[]string{"95.10 GB/s out-of-place busbw at 8589934592 B"}, []string{LayerParameters}},
	"nccltests-rccl2078-concluded.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusError},
		[]string{"360.98 GB/s out-of-place busbw at 17179869184 B (16 GiB)"}, []string{LayerParameters}},
	"nccltests-superbench-single-node.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusTooShort},
		[]string{"all 8 rank(s) ran on localhost", "measured no network"},
		[]string{LayerBenchmark}},
	"nccltests-119-tail-below-1g.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusTooShort},
		[]string{"the sweep stops at 133169160 B (127.0 MiB), below 1073741824 B (1 GiB)", "-e 1G"},
		[]string{LayerBenchmark}},
	"nccltests-spark103-version-header.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusTooShort},
		[]string{"cut short", "last row: 0.96 GB/s out-of-place busbw at 65536 B (64 KiB)"}, nil},
	"nccltests-82-broadcast-no-verbs.txt": {KindNCCLTests,
		[]string{CheckBusBW, CheckTransport}, []Status{StatusTooShort, StatusFail},
		[]string{"cut short", "v100-gpu-1: Failed to open libibverbs", "NCCL_IB_DISABLE=1 was set", "rdma-core"},
		[]string{LayerNCCLEnv, LayerContainerRDMA}},
	"nccltests-398-socket-2.4.8.txt": {KindNCCLTests,
		[]string{CheckBusBW, CheckTransport}, []Status{StatusTooShort, StatusFail},
		[]string{"no result rows", "ip-172-31-0-112: NET/IB : No device found", "as for busbw above"},
		[]string{LayerContainerRDMA, LayerContainerRDMA}},
	"nccltests-182-interleaved-no-mpi.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusTooShort},
		[]string{"the sizes go down 2 time(s)", "MPI=1", "NVIDIA/nccl-tests#182"},
		[]string{LayerBenchmark}},
	"nccltests-322-failure.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusError},
		[]string{"failed: HCA-128: Test NCCL failure common.cu:1204", "(and 7 more failure lines)"},
		[]string{LayerBenchmark}},
	"nccltests-37-out-of-bounds.txt": {KindNCCLTests,
		[]string{CheckBusBW}, []Status{StatusError},
		[]string{"all_gather_perf returned wrong results (2 values out of bounds)"},
		[]string{LayerBenchmark}},
	"nccltests-24-completion-error.txt": {KindNCCLTests,
		[]string{CheckBusBW, CheckNCCLErrors}, []Status{StatusError, StatusError},
		[]string{"got completion with error", "Got completion with error 4", "on gpu5"},
		[]string{LayerRDMAConfig, LayerRDMAConfig}},

	"nccllog-4921-no-gdrdma.txt": {KindNCCLLog,
		[]string{CheckTransport, CheckGPUDirect}, []Status{StatusPass, StatusTooShort},
		[]string{`"7 -> 8 [send] via NET/IB/0"`, "of rank 7, none via /GDRDMA and none a [receive] line", "NCCL_NET_GDR_READ=1", "log of every rank"},
		[]string{LayerBenchmark}},
	"nccllog-897-gdr-asymmetric.txt": {KindNCCLLog,
		[]string{CheckTransport, CheckGPUDirect}, []Status{StatusPass, StatusFail},
		[]string{"GPUDirect RDMA on rank 9 but not on rank 2", "NVIDIA/nccl#897", "on rank 2: modprobe nvidia-peermem"},
		[]string{LayerGPUDirect}},
	"nccllog-451-container-no-device.txt": {KindNCCLLog,
		[]string{CheckTransport}, []Status{StatusFail},
		[]string{"Using network Socket", "/dev/infiniband", "--device=/dev/infiniband"},
		[]string{LayerContainerRDMA}},
	"nccllog-383-gdr-level-distance.txt": {KindNCCLLog,
		[]string{CheckGPUDirect}, []Status{StatusFail},
		[]string{"GPU 18000, 3b000 / HCA 0 (distance 5 > 4) on node-1", "NCCL_NET_GDR_LEVEL=PHB is set", "NCCL_NET_GDR_LEVEL=SYS"},
		[]string{LayerGPUDirect}},
	"nccllog-1537-gdr-disabled-hca.txt": {KindNCCLLog,
		[]string{CheckTransport, CheckGPUDirect}, []Status{StatusPass, StatusFail},
		[]string{"Using network IB", "GPU Direct RDMA Disabled for HCA 0 'mlx5_0' on hostname1", "/sys/module/nvidia_peermem/version"},
		[]string{LayerGPUDirect}},
	"nccllog-660-gdrdma-baremetal.txt": {KindNCCLLog,
		[]string{CheckTransport, CheckGPUDirect}, []Status{StatusPass, StatusPass},
		[]string{"GPUDirect RDMA on every inter-node receive channel (2 [receive] and 1 [send] channel line(s) via NET/…/GDRDMA, instance-ubm6ko9y)"}, nil},
	"nccllog-slurmv4-8rails-roce.txt": {KindNCCLLog, // 8 GPUs, each on its own RoCE NIC
		[]string{CheckTransport, CheckGPUDirect, CheckGIDIndex}, []Status{StatusPass, StatusPass, StatusPass},
		[]string{"tpgds-aihub0003: Using network IB, channels via NET/IB", "32 [receive] and 32 [send] channel line(s) via NET/…/GDRDMA", "NCCL_IB_GID_INDEX=3"}, nil},
	"nccllog-deepep143-cq-enomem.txt": {KindNCCLLog,
		[]string{CheckNCCLErrors}, []Status{StatusError},
		[]string{"Call to ibv_create_cq failed with error Cannot allocate memory", "on msm-h200-2", "memlock"},
		[]string{LayerContainerRDMA}},

	"tfcnn-466-resnet101-1gpu.txt": {KindTFCNN,
		[]string{CheckHorovodScaling}, []Status{StatusTooShort},
		[]string{"204.75 images/sec", "needs the same benchmark on one VM", "--only horovod"}, nil},
	"tfcnn-693-resnet50-4gpu-interleaved.txt": {KindTFCNN,
		[]string{CheckHorovodScaling}, []Status{StatusTooShort},
		[]string{"608.38 images/sec"}, nil},
	"tfcnn-ava65-resnet50-spaces.txt": {KindTFCNN,
		[]string{CheckHorovodScaling}, []Status{StatusTooShort},
		[]string{"133.81 images/sec"}, nil},
	"tfcnn-kubeflow-1-then-2-workers.txt": {KindTFCNN, // two runs: 1 worker, then 2
		[]string{CheckHorovodScaling}, []Status{StatusPass},
		[]string{"run 2 (lines 20–33, 2 workers) vs run 1 (lines 2–15, 1 worker)", "scaling efficiency 101.58 %: 167.4 images/sec on 2 worker(s) (83.7 per worker); run 1 82.4 images/sec on 1 worker(s)"},
		nil},
	"tfcnn-benchmarks232-cut-before-total.txt": {KindTFCNN,
		[]string{CheckHorovodScaling}, []Status{StatusTooShort},
		[]string{"alexnet, no total images/sec (last step 80): the run did not end"}, nil},
}

// TestJudgeFixtures judges every real output in testdata: its kind, each
// verdict's status, the named causes' layers and key words. Every file has
// a .source naming where it was published.
func TestJudgeFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(fixtures) {
		t.Errorf("%d fixture files, %d expectations: every file needs one", len(files), len(fixtures))
	}
	e := ExpectFor(inventory.Reference(), 100)
	e.GIDIndex = 3 // as if each file came from a host whose RoCE v2 GID is at index 3
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f + ".source")
			if err != nil || !strings.HasPrefix(string(src), "https://github.com/") {
				t.Errorf("%s.source must name the public source (a GitHub URL): %v %q", name, err, src)
			}
			want, ok := fixtures[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if k := Detect(data); k != want.kind {
				t.Errorf("Detect = %s, want %s", k, want.kind)
			}
			kind, vs, err := Judge(data, e)
			if err != nil || kind != want.kind {
				t.Fatalf("Judge: %s, %v; want %s", kind, err, want.kind)
			}
			if parts, err := JudgeParts(data, e); err != nil || len(parts) != 1 || parts[0].Name != "" {
				t.Errorf("JudgeParts: %d parts, %v; want the one %s", len(parts), err, want.kind)
			}
			var checks []string
			var status []Status
			var layers []string
			for _, v := range vs {
				checks = append(checks, v.Check)
				status = append(status, v.Status)
				for _, c := range v.Causes {
					layers = append(layers, c.Layer)
				}
				if v.Status != StatusPass && v.Status != StatusTooShort && len(v.Causes) == 0 {
					t.Errorf("%s %s has no cause", v.Check, v.Status)
				}
			}
			text := strings.Join(Lines(vs), "\n")
			if strings.Join(checks, ",") != strings.Join(want.checks, ",") {
				t.Errorf("checks %v, want %v\n%s", checks, want.checks, text)
			}
			for i := range want.status {
				if i < len(status) && status[i] != want.status[i] {
					t.Errorf("%s: %s, want %s\n%s", want.checks[i], status[i], want.status[i], text)
				}
			}
			if strings.Join(layers, ",") != strings.Join(want.layers, ",") {
				t.Errorf("cause layers %v, want %v\n%s", layers, want.layers, text)
			}
			for _, s := range want.has {
				if !strings.Contains(text, s) {
					t.Errorf("verdicts lack %q:\n%s", s, text)
				}
			}
			if Passed(vs) != allPass(want.status) {
				t.Errorf("Passed = %v", Passed(vs))
			}
		})
	}
}

// TestFixturesAtTheirLink: the fixtures whose figures are impossible at
// the reference's one 100 Gb/s NIC pass when judged with the link their
// source names (--link-gbps, --nics-per-node).
func TestFixturesAtTheirLink(t *testing.T) {
	for _, c := range []struct {
		file  string
		gbps  float64
		nics  int
		found string
	}{
		{"nccltests-deepops-dgxa100-4node.txt", 200, 8, "191.05 GB/s"}, // 8 × 200G InfiniBand per DGX A100
		{"nccltests-a3mega-newformat.txt", 200, 8, "338.82 GB/s"},      // A3 Mega: 8 × 200 Gb/s per VM
		{"nccltests-252-ring-8g.txt", 200, 4, "95.10 GB/s"},            // "~24GB/s per NIC": 4 × 200G
		{"nccltests-rccl2078-concluded.txt", 400, 8, "360.98 GB/s"},    // 8 × 400G AMD AINIC
		{"nccltests-deepops-roce-2x100g.txt", 100, 2, "22.92 GB/s"},    // 2 × 100 GbE RoCE
		{"perftest-superbench-loopback-mb.txt", 200, 1, "194.96 Gb/s"}, // one HDR port
	} {
		e := Expect{LinkGbps: c.gbps, NICsPerNode: c.nics, GIDIndex: -1, LinkFrom: "--link-gbps", NICsFrom: "--nics-per-node"}
		_, vs, err := Judge(read(t, c.file), e)
		if err != nil || vs[0].Status != StatusPass || !strings.Contains(vs[0].Found, c.found) ||
			!strings.Contains(vs[0].PassLine.Rule, "(link speed: --link-gbps") {
			t.Errorf("%s at %d × %g Gb/s: %v\n%s", c.file, c.nics, c.gbps, err, strings.Join(Lines(vs), "\n"))
		}
	}
}

func allPass(ss []Status) bool {
	for _, s := range ss {
		if s != StatusPass {
			return false
		}
	}
	return len(ss) > 0
}

// TestJudgeNotRecognized: a file that is none of the formats says so,
// naming what each format needs.
func TestJudgeNotRecognized(t *testing.T) {
	for _, data := range []string{"", "hello\nworld\n", "#bytes are not enough\n", "# Avg bus bandwidth : 3\n"} {
		k, vs, err := Judge([]byte(data), Expect{GIDIndex: -1})
		if k != KindUnknown || vs != nil || err == nil || !strings.Contains(err.Error(), "not a perftest report") ||
			!strings.Contains(err.Error(), "nccl-tests output") || !strings.Contains(err.Error(), "NCCL log") {
			t.Errorf("%q: %s %v %v", data, k, vs, err)
		}
		if Detect([]byte(data)) != KindUnknown {
			t.Errorf("%q detected as %s", data, Detect([]byte(data)))
		}
	}
}
