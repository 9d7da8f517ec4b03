package bench

import (
	"strings"
	"testing"
)

// TestParseTFCNN reads the real tf_cnn_benchmarks outputs: tabs or spaces,
// one rank or several interleaved, a run cut before its total, and a
// launcher's rank tags.
func TestParseTFCNN(t *testing.T) {
	for _, c := range []struct {
		file         string
		model        string
		steps        int
		rate, images float64
		ok           bool
	}{
		{"tfcnn-466-resnet101-1gpu.txt", "", 100, 204.8, 204.75, true},
		{"tfcnn-693-resnet50-4gpu-interleaved.txt", "", 100, 152.1, 608.38, true},
		{"tfcnn-ava65-resnet50-spaces.txt", "", 100, 133.8, 133.81, true},
		{"tfcnn-benchmarks232-cut-before-total.txt", "alexnet", 80, 120.3, 0, false},
	} {
		r, err := ParseTFCNN(read(t, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		v, ok := r.ImagesPerSec()
		if r.Model != c.model || r.Steps != c.steps || r.StepRate != c.rate || v != c.images || ok != c.ok {
			t.Errorf("%s: model %q steps %d rate %g images/sec %g (%v); want %q %d %g %g (%v)", c.file, r.Model, r.Steps, r.StepRate, v, ok, c.model, c.steps, c.rate, c.images, c.ok)
		}
	}
	if r, _ := ParseTFCNN(read(t, "tfcnn-benchmarks232-cut-before-total.txt")); r.BatchPerDevice != 1024 {
		t.Errorf("batch per device %g, want 1024", r.BatchPerDevice)
	}
	// Tagged: rank 0's total wins over the median of the others'.
	tagged := "[1,1]<stdout>:total images/sec: 500.00\n[1,0]<stdout>:total images/sec: 610.50\n[1,2]<stdout>:total images/sec: 400.00\n" +
		"Wed Jul 22 11:02:05 2020[3]<stdout>:100\timages/sec: 152.1 +/- 0.2 (jitter = 2.2)\t1.678\n"
	r, err := ParseTFCNN([]byte(tagged))
	if v, _ := r.ImagesPerSec(); err != nil || v != 610.5 || len(r.Totals) != 3 || r.Steps != 100 {
		t.Errorf("tagged: %v %+v", err, r)
	}
	r, _ = ParseTFCNN([]byte("total images/sec: 500\ntotal images/sec: 400\ntotal images/sec: 450\n"))
	if v, _ := r.ImagesPerSec(); v != 450 {
		t.Errorf("untagged median %g, want 450", v)
	}
	r, _ = ParseTFCNN([]byte("10\timages/sec: 1.0 +/- 0.0 (jitter = 0.0)\t7.7\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor\n"))
	if len(r.Failures) != 1 || !strings.Contains(r.Failures[0], "OOM when allocating") {
		t.Errorf("failures %q", r.Failures)
	}
	for _, f := range []string{"nccltests-252-ring-8g.txt", "perftest-deepops-roce-gbits.txt", "nccllog-660-gdrdma-baremetal.txt"} {
		if _, err := ParseTFCNN(read(t, f)); err == nil {
			t.Errorf("%s read as tf_cnn_benchmarks output", f)
		}
	}
}

// TestJudgeHorovod: the scaling efficiency of real runs, the pass line at
// 80 %, a failed NCCL verdict named as the cause, a run without its total
// too short to judge.
func TestJudgeHorovod(t *testing.T) {
	read := func(name string) *TFCNN {
		r, err := ParseTFCNN(read(t, name))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one := HorovodRun{Output: read("tfcnn-466-resnet101-1gpu.txt"), GPUs: 1, Hosts: 1}             // 204.75 on 1 GPU
	four := HorovodRun{Output: read("tfcnn-693-resnet50-4gpu-interleaved.txt"), GPUs: 4, Hosts: 2} // 608.38 on 4: 152.1 per GPU
	v := JudgeHorovod(four, one, nil)
	if v.Status != StatusFail || v.Measured == nil || v.Measured.Value != 74.28 || v.PassLine.Value != 80 ||
		len(v.Causes) != 2 || v.Causes[0].Layer != LayerFabric || v.Causes[1].Layer != LayerTraining {
		t.Errorf("74 %%, no NCCL run: %+v", v)
	}
	passed := []Verdict{{Check: CheckBusBW, Status: StatusPass}, {Check: CheckGPUDirect, Status: StatusPass}}
	if v := JudgeHorovod(four, one, passed); len(v.Causes) != 1 || v.Causes[0].Layer != LayerTraining || !strings.Contains(v.Causes[0].Finding, "NCCL benchmark of the same bench passed") {
		t.Errorf("74 %%, NCCL passed: %+v", v.Causes)
	}
	nccl := []Verdict{{Check: CheckGPUDirect, Status: StatusFail}}
	if v := JudgeHorovod(four, one, nccl); len(v.Causes) != 1 || v.Causes[0].Layer != LayerFabric || !strings.Contains(v.Causes[0].Finding, "gpudirect-rdma: fail") {
		t.Errorf("with a failed NCCL verdict: %+v", v.Causes)
	}
	three := four
	three.GPUs = 3 // 202.8 per GPU: 99 %
	if v := JudgeHorovod(three, one, nil); v.Status != StatusPass || v.Measured.Value != 99.04 {
		t.Errorf("99 %%: %+v", v)
	}
	cut := HorovodRun{Output: read("tfcnn-benchmarks232-cut-before-total.txt"), GPUs: 8, Hosts: 2}
	if v := JudgeHorovod(cut, one, nil); v.Status != StatusTooShort || !strings.Contains(v.Found, "the cluster run printed no total images/sec (last step 80)") {
		t.Errorf("cut: %+v", v)
	}
	if v := JudgeHorovod(four, HorovodRun{Err: "mpirun exited with status 1", GPUs: 1, Hosts: 1}, nil); v.Status != StatusError || !strings.Contains(v.Found, "the one-VM run: mpirun exited") {
		t.Errorf("error: %+v", v)
	}
}
