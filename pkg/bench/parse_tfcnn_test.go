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

// TestTFCNNRuns: a file with a 1-worker run (82.40 images/sec) and then a
// 2-worker run (167.40; Kubeflow's launcher prefixes every line) is read
// as two runs, each sized by its total ÷ its step rate, and the second is
// judged against the first: 101.58 %, passed. Whole runs of one size in a
// row (Horovod's ranks, each output at once) are one run; a header sizes
// a run by its GPUs; the runs of a file that cannot be sized are too
// short to judge, and a slow run fails with causes that do not send a
// file from elsewhere to `rdggen bench`.
func TestTFCNNRuns(t *testing.T) {
	kf := read(t, "tfcnn-kubeflow-1-then-2-workers.txt")
	runs, err := ParseTFCNNRuns(kf)
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	for i, want := range []struct {
		total       float64
		first, last int
		steps       int
		size        int
	}{{82.40, 2, 15, 100, 1}, {167.40, 20, 33, 100, 2}} {
		r := runs[i]
		v, _ := r.ImagesPerSec()
		n, unit, _ := r.Size()
		if v != want.total || r.FirstLine != want.first || r.LastLine != want.last || r.Steps != want.steps || n != want.size || unit != "worker" || r.Run != i+1 || r.Runs != 2 {
			t.Errorf("run %d: %+v; size %d %s", i+1, r, n, unit)
		}
	}
	vs := JudgeTFCNNRuns(runs)
	if len(vs) != 1 || vs[0].Status != StatusPass || vs[0].Measured.Value != 101.58 || vs[0].Check != CheckHorovodScaling {
		t.Errorf("%+v", vs)
	}
	if whole, _ := ParseTFCNN(kf); len(whole.Totals) != 2 || whole.Runs != 1 {
		t.Errorf("ParseTFCNN reads the whole file as one run: %+v", whole)
	}

	// the 2-worker run at 100 images/sec: 60.68 %, failed
	slow := []byte(strings.Replace(string(kf), "total images/sec: 167.40", "total images/sec: 100.00", 1))
	slow = []byte(strings.ReplaceAll(string(slow), "images/sec: 83.", "images/sec: 50."))
	runs, _ = ParseTFCNNRuns(slow)
	vs = JudgeTFCNNRuns(runs)
	if len(vs) != 1 || vs[0].Status != StatusFail || vs[0].Measured.Value != 60.68 || len(vs[0].Causes) != 2 ||
		strings.Contains(vs[0].Causes[0].Fix, "rdggen bench") || !strings.Contains(vs[0].Causes[0].Finding, "the file has no NCCL benchmark beside it") {
		t.Errorf("slow: %+v", vs)
	}

	// two whole 1-GPU outputs in a row: one run of two totals
	one := read(t, "tfcnn-466-resnet101-1gpu.txt")
	runs, _ = ParseTFCNNRuns(append(append([]byte{}, one...), one...))
	if len(runs) != 1 || len(runs[0].Totals) != 2 {
		t.Errorf("ranks in a row: %d runs", len(runs))
	}
	// a 1-GPU run, then the 4-rank interleaved run (its table's header
	// back in front of it): 74.28 %, failed
	four := append([]byte("Step\tImg/sec\ttotal_loss\n"), read(t, "tfcnn-693-resnet50-4gpu-interleaved.txt")...)
	runs, _ = ParseTFCNNRuns(append(append([]byte{}, one...), four...))
	if vs := JudgeTFCNNRuns(runs); len(runs) != 2 || len(vs) != 1 || vs[0].Status != StatusFail || vs[0].Measured.Value != 74.28 ||
		vs[0].Subject != "run 2 (lines 16–29, 4 workers) vs run 1 (lines 1–14, 1 worker)" {
		t.Errorf("1 then 4: %d runs %+v", len(runs), vs)
	}
	// a header sizes the run by its GPUs
	if n, unit, how := read232(t).Size(); n != 4 || unit != "GPU" || how != "'Batch size: 4096 global' ÷ '1024 per device'" {
		t.Errorf("header: %d %s %s", n, unit, how)
	}
	// runs that show no size: too short
	runs, _ = ParseTFCNNRuns([]byte("Step\tImg/sec\ntotal images/sec: 500\nStep\tImg/sec\ntotal images/sec: 900\n"))
	if vs := JudgeTFCNNRuns(runs); len(runs) != 2 || len(vs) != 2 || vs[1].Status != StatusTooShort || vs[1].Subject != "run 2 (lines 3–4)" ||
		!strings.Contains(vs[1].Found, "none of the file's 2 runs shows both") {
		t.Errorf("no sizes: %d runs %+v", len(runs), vs)
	}
}

func read232(t *testing.T) *TFCNN {
	r, err := ParseTFCNN(read(t, "tfcnn-benchmarks232-cut-before-total.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
