package bench

import (
	"fmt"
	"strings"
)

// CheckHorovodScaling is the guide's Horovod benchmark (tf_cnn_benchmarks
// under Horovod) on the whole cluster against the same benchmark on one VM:
// the scaling efficiency.
const CheckHorovodScaling = "horovod-scaling"

// LayerTraining is the training job itself (its input pipeline, CPU threads
// per rank, batch size), where the time goes when the network passes.
const LayerTraining = "training job"

// HorovodScalingPass is the scaling efficiency a cluster run passes at, as
// a fraction: images/sec per GPU on the whole cluster at least 80 % of one
// VM's. It lies between what Horovod's maintainers measured for VGG-16 on 16
// GPUs over TCP (12.5× of one GPU, 78 %) and over RDMA (13.8×, 86 %)
// (horovod/horovod#5), above the 68 % of VGG-16 on 512 GPUs over 25 Gb/s
// RoCE that Horovod's README publishes: a cluster below it scales no better
// than TCP would.
const HorovodScalingPass = 0.8

// HorovodRun is one tf_cnn_benchmarks run under Horovod and the GPUs (ranks)
// it ran on.
type HorovodRun struct {
	Output *TFCNN
	GPUs   int
	// Hosts is how many VMs it spanned.
	Hosts int
	// Err is why the run gave no output, e.g. "mpirun exited with status 1".
	Err string
	// Unit is what GPUs counts: "GPU" ("" too), or "worker" for a run of
	// a file sized by its workers ([TFCNN.Size]). Hosts 0 leaves the VMs
	// out of the text.
	Unit string
}

func (r HorovodRun) unit() string {
	if r.Unit == "" {
		return "GPU"
	}
	return r.Unit
}

// perGPU is the run's images/sec per GPU; ok is false without a total.
func (r HorovodRun) perGPU() (float64, bool) {
	v, ok := r.Output.ImagesPerSec()
	if !ok || r.GPUs <= 0 {
		return 0, false
	}
	return v / float64(r.GPUs), true
}

func (r HorovodRun) describe() string {
	v, _ := r.Output.ImagesPerSec()
	on := fmt.Sprintf("%d %s(s)", r.GPUs, r.unit())
	if r.Hosts > 0 {
		on += fmt.Sprintf(" of %d VM(s)", r.Hosts)
	}
	return fmt.Sprintf("%s images/sec on %s (%s per %s)", trimFloat(v), on, trimFloat(v/float64(r.GPUs)), r.unit())
}

// scalingWords are the words of a scaling verdict: how it names its two
// runs, what the pass line compares, and whether a missing NCCL benchmark
// is rdggen bench's to run.
type scalingWords struct {
	subject, all, one, oneShort, rule, at string
	file                                  bool // runs of a file judged offline: no `rdggen bench` advice
}

// JudgeHorovod judges the cluster run against the one-VM run: scaling
// efficiency = (cluster images/sec ÷ its GPUs) ÷ (one VM's ÷ its GPUs),
// passing at HorovodScalingPass. A run without a total images/sec line is
// too short to judge (it did not end), a run with a Python error or none
// at all is an error. ncclVs are the NCCL verdicts of the same bench (may
// be nil): a failed one is named as the likely cause of a shortfall.
func JudgeHorovod(all, one HorovodRun, ncclVs []Verdict) Verdict {
	return judgeScaling(all, one, ncclVs, scalingWords{
		subject: fmt.Sprintf("%d GPUs vs %d on one VM", all.GPUs, one.GPUs),
		all:     "the cluster run", one: "the one-VM run", oneShort: "one VM",
		rule: "images/sec per GPU on the cluster at least 80 % of one VM's",
		at:   "images/sec per GPU, cluster ÷ one VM"})
}

func judgeScaling(all, one HorovodRun, ncclVs []Verdict, w scalingWords) Verdict {
	v := Verdict{Check: CheckHorovodScaling, Subject: w.subject}
	for _, r := range []struct {
		name string
		run  HorovodRun
	}{{w.all, all}, {w.one, one}} {
		switch {
		case r.run.Err != "":
			v.Status, v.Found = StatusError, r.name+": "+r.run.Err
			v.Causes = []Cause{notRunCause}
			return v
		case r.run.Output == nil:
			v.Status, v.Found = StatusError, r.name+": no tf_cnn_benchmarks output"
			v.Causes = []Cause{notRunCause}
			return v
		case len(r.run.Output.Failures) > 0:
			v.Status, v.Found = StatusError, r.name+" failed: "+strings.Join(r.run.Output.Failures, "; ")
			v.Causes = []Cause{failedCause(r.run.Output)}
			return v
		}
		switch g, ok := r.run.perGPU(); {
		case !ok:
			v.Status = StatusTooShort
			v.Found = fmt.Sprintf("%s printed no total images/sec (last step %d): it did not run to its end", r.name, r.run.Output.Steps)
			return v
		case g <= 0:
			v.Status, v.Found = StatusError, r.name+" printed a total of 0 images/sec"
			v.Causes = []Cause{{Layer: LayerBenchmark, Finding: "the benchmark processed no images",
				Fix: "run it by hand in the worker (./run.sh launch) and read its log"}}
			return v
		}
	}
	a, _ := all.perGPU()
	o, _ := one.perGPU()
	eff := a / o
	if !finite(eff) || !finite(a) || !finite(o) {
		v.Status = StatusError
		v.Found = fmt.Sprintf("%s and %s give no finite ratio of images/sec per %s (%s ÷ %s)", w.all, w.one, all.unit(), bigFloat(a), bigFloat(o))
		v.Causes = []Cause{{Layer: LayerBenchmark, Finding: "a total this far from the other is not a measurement (a corrupt or edited file)",
			Fix: "rerun both benchmarks and judge their whole outputs"}}
		return v
	}
	v.Measured = &Measure{Value: round2(eff * 100), Unit: "%", At: w.at}
	v.PassLine = &PassLine{Value: HorovodScalingPass * 100, Unit: "%",
		Rule:   w.rule,
		Source: "horovod/horovod#5 (VGG-16 on 16 GPUs: 78 % over TCP, 86 % over RDMA); Horovod README (68 % on 512 GPUs over 25 Gb/s RoCE)"}
	v.Found = fmt.Sprintf("scaling efficiency %s %%: %s; %s %s", trimFloat(eff*100), all.describe(), w.oneShort, one.describe())
	if m := all.Output.Model; m != "" {
		v.Found = m + ": " + v.Found
	}
	v.Expected = fmt.Sprintf("at least %g %%", HorovodScalingPass*100)
	if eff >= HorovodScalingPass {
		v.Status = StatusPass
		return v
	}
	v.Status = StatusFail
	for _, n := range ncclVs {
		if n.Status == StatusFail || n.Status == StatusError {
			v.Causes = append(v.Causes, Cause{Layer: LayerFabric,
				Finding: fmt.Sprintf("the NCCL benchmark of the same bench did not pass (%s: %s)", n.Check, n.Status.word()),
				Fix:     "fix what its verdict names first: the gradients cross the same path"})
			return v
		}
	}
	training := Cause{Layer: LayerTraining,
		Finding: "the NCCL benchmark of the same bench passed, so the time goes elsewhere: the input pipeline, the CPU threads per rank, or a batch too small for the GPUs",
		Fix:     "try a larger --batch_size, and synthetic data (no --data_dir) to take the input pipeline out"}
	if len(ncclVs) == 0 {
		c := Cause{Layer: LayerFabric,
			Finding: "no NCCL benchmark ran beside it, so the fabric is not cleared",
			Fix:     "run rdggen bench --horovod (every part): all_reduce_perf's busbw and NCCL's log say whether RDMA and GPUDirect RDMA carry the gradients"}
		if w.file {
			c.Finding = "the file has no NCCL benchmark beside it, so the fabric is not cleared"
			c.Fix = "judge the same cluster's all_reduce_perf output with its NCCL_DEBUG=INFO log: its busbw and the log say whether RDMA and GPUDirect RDMA carry the gradients"
		}
		v.Causes = append(v.Causes, c)
		training.Finding = "or the job itself: the input pipeline, the CPU threads per rank, or a batch too small for the GPUs"
	}
	v.Causes = append(v.Causes, training)
	return v
}

// JudgeTFCNN judges one tf_cnn_benchmarks output on its own (bench --judge):
// its throughput has no pass line without the same benchmark on one VM, so
// the verdict is too short to judge, and says what the output holds; a run
// that failed or did not end says that instead.
func JudgeTFCNN(r *TFCNN) Verdict {
	v := Verdict{Check: CheckHorovodScaling}
	switch _, ok := r.ImagesPerSec(); {
	case len(r.Failures) > 0:
		v.Status, v.Found = StatusError, "tf_cnn_benchmarks failed: "+strings.Join(r.Failures, "; ")
		v.Causes = []Cause{failedCause(r)}
	case !ok:
		v.Status = StatusTooShort
		v.Found = r.String() + ": the run did not end"
	default:
		v.Status = StatusTooShort
		v.Found = r.String() + "; the scaling efficiency needs the same benchmark on one VM beside it, in the same file (a run of it before or after this one) or from rdggen bench -f cluster.yaml --only horovod, which runs both and judges them"
	}
	return v
}

// JudgeTFCNNRuns judges the tf_cnn_benchmarks runs of one file
// ([ParseTFCNNRuns]). One run is [JudgeTFCNN]'s. Of several, the one with
// the fewest GPUs (or workers: [TFCNN.Size]) that printed a total is the
// baseline, and each larger run gets a CheckHorovodScaling verdict against
// it, as [JudgeHorovod] judges a cluster against one VM: images/sec per GPU
// (per worker) at least 80 % of the baseline's. A run that failed is an
// error; one whose size the file does not show, or of a unit the
// baseline's is not, is too short to judge; with no larger run than the
// baseline the file has nothing to scale against, which one too-short
// verdict says.
func JudgeTFCNNRuns(runs []*TFCNN) []Verdict {
	if len(runs) == 1 {
		return []Verdict{JudgeTFCNN(runs[0])}
	}
	name := func(r *TFCNN) string { return fmt.Sprintf("run %d (lines %d–%d)", r.Run, r.FirstLine, r.LastLine) }
	var base *TFCNN
	bn, bu := 0, ""
	for _, r := range runs {
		n, u, _ := r.Size()
		if _, ok := r.ImagesPerSec(); ok && n > 0 && len(r.Failures) == 0 && (base == nil || n < bn) {
			base, bn, bu = r, n, u
		}
	}
	var vs []Verdict
	for _, r := range runs {
		n, u, how := r.Size()
		switch {
		case r == base:
		case len(r.Failures) > 0:
			v := JudgeTFCNN(r)
			v.Subject = name(r)
			vs = append(vs, v)
		case base == nil || n == 0 || u != bu:
			v := Verdict{Check: CheckHorovodScaling, Subject: name(r), Status: StatusTooShort}
			switch {
			case base == nil:
				v.Found = r.String() + fmt.Sprintf(": none of the file's %d runs shows both a total images/sec and its size, so none is a baseline to scale against", len(runs))
			case n == 0:
				v.Found = r.String() + ": the file does not show how many GPUs or workers it ran on (no 'Batch size: … global' header, no step rows that agree with the total)"
			default:
				v.Found = fmt.Sprintf("%s on %d %s(s), but the baseline %s is counted in %ss", r.String(), n, u, name(base), bu)
			}
			vs = append(vs, v)
		case n > bn:
			_, _, bhow := base.Size()
			v := judgeScaling(HorovodRun{Output: r, GPUs: n, Unit: u}, HorovodRun{Output: base, GPUs: bn, Unit: bu}, nil, scalingWords{
				subject: fmt.Sprintf("run %d (lines %d–%d, %s) vs run %d (lines %d–%d, %s)", r.Run, r.FirstLine, r.LastLine, count(n, u, u+"s"),
					base.Run, base.FirstLine, base.LastLine, count(bn, bu, bu+"s")),
				all: "run " + fmt.Sprint(r.Run), one: "the baseline run " + fmt.Sprint(base.Run), oneShort: "run " + fmt.Sprint(base.Run),
				rule: fmt.Sprintf("images/sec per %s of run %d at least 80 %% of run %d's, the file's run on the fewest %ss (%ss: run %d %s, run %d %s)",
					u, r.Run, base.Run, u, u, r.Run, how, base.Run, bhow),
				at:   fmt.Sprintf("images/sec per %s, run %d ÷ run %d", u, r.Run, base.Run),
				file: true})
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		v := JudgeTFCNN(runs[len(runs)-1])
		if v.Status == StatusTooShort && base != nil {
			v.Found = fmt.Sprintf("all %d runs of the file ran on %d %s(s): no run with more to scale against the others; %s", len(runs), bn, bu, runs[len(runs)-1].String())
		}
		vs = append(vs, v)
	}
	return vs
}

// notRunCause explains a Horovod benchmark that printed nothing to judge.
var notRunCause = Cause{Layer: LayerBenchmark,
	Finding: "the launch failed before tf_cnn_benchmarks printed its results",
	Fix:     "rdggen check --target workers says whether the workers are up and reach each other; --save keeps the whole output"}

// failedCause explains a tf_cnn_benchmarks run that ended in a Python
// error: out of GPU memory, or an image without the benchmark's TensorFlow 1
// and Horovod.
func failedCause(r *TFCNN) Cause {
	c := Cause{Layer: LayerTraining, Finding: "tf_cnn_benchmarks stopped with " + r.Failures[0],
		Fix: "tf_cnn_benchmarks is TensorFlow 1 code (tensorflow/benchmarks): the image needs a TensorFlow 1 build with Horovod, or --horovod-cmd names another benchmark"}
	for _, f := range r.Failures {
		if strings.Contains(f, "OOM") || strings.Contains(f, "ResourceExhausted") {
			c.Finding = "tf_cnn_benchmarks ran out of GPU memory: " + f
			c.Fix = "a smaller --batch_size in --horovod-cmd"
		}
	}
	return c
}
