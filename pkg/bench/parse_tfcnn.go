package bench

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// KindTFCNN is tf_cnn_benchmarks output (the guide's Horovod benchmark).
const KindTFCNN Kind = "tf-cnn-benchmarks"

// TFCNN is what tf_cnn_benchmarks (github.com/tensorflow/benchmarks,
// scripts/tf_cnn_benchmarks) printed, the guide's Horovod benchmark, as
// ParseTFCNN read it. Under Horovod every rank prints the whole output, so a
// run of n ranks has n header blocks, n step tables interleaved and n
// "total images/sec" lines; each total is the job's, not the rank's
// (benchmark_cnn.py: num_workers × batch size ÷ the average step time;
// horovod/horovod#693: 4 ranks at 152 images/sec each, total 608.38).
type TFCNN struct {
	// Model is the "Model:" header field, e.g. "vgg16"; "" without a header.
	Model string
	// BatchPerDevice is the "Batch size: … per device" field, images; 0
	// without a header.
	BatchPerDevice float64
	// Steps is the highest step number in the "Step Img/sec …" table.
	Steps int
	// StepRate is the images/sec of that step's row (one GPU's rate under
	// Horovod), 0 without rows.
	StepRate float64
	// Totals are the "total images/sec" values in file order, images/sec.
	Totals []float64
	// Rank0 is the total rank 0 printed when the lines carry a launcher's
	// rank tag (mpirun --tag-output "[1,0]<stdout>:", horovodrun
	// "[0]<stdout>:"); -1 otherwise.
	Rank0 float64
	// Failures are the Python tracebacks' last lines and the lines that say
	// the job died (e.g. "ResourceExhaustedError: OOM when allocating …").
	Failures []string
	// GlobalBatch is the header's "Batch size: … global" field, images
	// (per-device batch × the job's GPUs, benchmark_cnn.py print_info); 0
	// without a header.
	GlobalBatch float64
	// Run is this run's number (1-based) among the Runs runs of the input
	// ([ParseTFCNNRuns]); FirstLine and LastLine the lines it spans,
	// 1-based.
	Run, Runs           int
	FirstLine, LastLine int
}

var (
	reTFTotal = regexp.MustCompile(`(?:\[(?:\d+,)?(\d+)\]<std(?:out|err)>:)?\s*total images/sec:\s*([0-9]+(?:\.[0-9]+)?)\s*$`)
	// reTFStep is a step row, at the start of the line or after a
	// logger's prefix that ends in a space or '|' (Kubeflow's launcher:
	// "INFO|2024-12-07T13:54:54|/opt/launcher.py|27| 10 images/sec: …").
	reTFStep   = regexp.MustCompile(`(?:^|[\s|])(\d+)\s+images/sec:\s*([0-9]+(?:\.[0-9]+)?)\s+\+/-`)
	reTFBatch  = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?) per device\s*$`)
	reTFGlobal = regexp.MustCompile(`Batch size:\s*([0-9]+(?:\.[0-9]+)?) global\s*$`)
	reTFFail   = regexp.MustCompile(`^(?:\w+\.)*\w*(?:Error|Exception): .+`)
	// reLauncherTag is a launcher's rank prefix: Open MPI's --tag-output
	// "[1,0]<stdout>:", horovodrun's "[0]<stdout>:", either after a
	// timestamp (horovodrun --verbose).
	reLauncherTag = regexp.MustCompile(`^.*?\[(?:\d+,)?\d+\]<(?:stdout|stderr|stddiag)>:`)
)

// ErrNoTFCNN is ParseTFCNN's error for data with neither a step table nor a
// total images/sec line.
var ErrNoTFCNN = errors.New("not tf_cnn_benchmarks output (no 'images/sec: … +/-' step rows, no 'total images/sec:' line)")

// ParseTFCNN reads tf_cnn_benchmarks output: the header fields, the step
// table and the "total images/sec" lines, with or without a launcher's rank
// tags and with tabs or spaces between the columns. A file without a total
// still parses (Totals empty): the run did not end, which the verdict says.
// It reads the whole input as one run; [ParseTFCNNRuns] tells the runs of
// a file apart.
func ParseTFCNN(data []byte) (*TFCNN, error) {
	runs, err := ParseTFCNNRuns(data)
	if err != nil {
		return nil, err
	}
	r := runs[0]
	for _, x := range runs[1:] {
		r.merge(x)
	}
	r.Run, r.Runs = 1, 1
	return r, nil
}

// ParseTFCNNRuns reads tf_cnn_benchmarks output as ParseTFCNN does, run by
// run, in file order: a run ends at its "total images/sec" line(s), and a
// header ("Model:", "Batch size:"), a "Step Img/sec" line or a step table
// that starts again (a step number not above the run's first) after one
// begins the next. Consecutive runs of the same size (GPUs, or workers:
// [TFCNN.Size]) are one run: Horovod's ranks print the whole output each,
// and a rank whose output came at once reads as a run of its own.
func ParseTFCNNRuns(data []byte) ([]*TFCNN, error) {
	p := newTFStream()
	for i, raw := range strings.Split(string(data), "\n") {
		p.feed(i, strings.TrimSuffix(raw, "\r"))
	}
	return p.finish()
}

// tfStream reads tf_cnn_benchmarks output one line at a time.
type tfStream struct {
	r         *TFCNN   // the run being read
	done      []*TFCNN // the runs read before it
	firstStep int      // the first step number of r's table; -1 before one
	seen      bool
}

func newTFStream() *tfStream { return &tfStream{r: &TFCNN{Rank0: -1}, firstStep: -1} }

// next ends the run being read, when it has its total: a header or a step
// table that starts again after one begins another run.
func (p *tfStream) next(restart bool) {
	if !restart || len(p.r.Totals) == 0 {
		return
	}
	p.done = append(p.done, p.r)
	p.r, p.firstStep = &TFCNN{Rank0: -1}, -1
}

// mark records line i (0-based) as the run's.
func (p *tfStream) mark(i int) {
	if p.r.FirstLine == 0 {
		p.r.FirstLine = i + 1
	}
	p.r.LastLine = i + 1
	p.seen = true
}

// feed reads line i (0-based; its line end removed, the launcher's prefix
// kept).
func (p *tfStream) feed(i int, raw string) {
	// every line read below holds one of these (reTFFail: "Error: " or
	// "Exception: ")
	if !strings.Contains(raw, "images/sec") && !strings.Contains(raw, "Model:") && !strings.Contains(raw, " per device") &&
		!strings.Contains(raw, "Error: ") && !strings.Contains(raw, "Exception: ") && !strings.Contains(raw, "Img/sec") &&
		!strings.Contains(raw, "Batch size:") {
		return
	}
	if strings.Contains(raw, "total images/sec:") {
		if m := reTFTotal.FindStringSubmatch(raw); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				return
			}
			p.r.Totals = append(p.r.Totals, v)
			if m[1] == "0" && p.r.Rank0 < 0 {
				p.r.Rank0 = v
			}
			p.mark(i)
			return
		}
	}
	l := raw
	if strings.Contains(raw, "]<std") {
		l = reLauncherTag.ReplaceAllString(raw, "")
	}
	if strings.Contains(l, "images/sec:") {
		if m := reTFStep.FindStringSubmatch(l); m != nil {
			step, err1 := strconv.Atoi(m[1])
			rate, err2 := strconv.ParseFloat(m[2], 64)
			if err1 == nil && err2 == nil {
				p.next(p.firstStep >= 0 && step <= p.firstStep)
				if p.firstStep < 0 {
					p.firstStep = step
				}
				if step >= p.r.Steps {
					p.r.Steps, p.r.StepRate = step, rate
				}
				p.mark(i)
				return
			}
		}
	}
	r := p.r
	switch t := strings.TrimSpace(l); {
	case strings.Contains(t, "Step") && strings.Contains(t, "Img/sec"): // the table's header
		p.next(true)
		p.mark(i)
	case strings.HasPrefix(t, "Model:"):
		p.next(true)
		if p.r.Model == "" {
			p.r.Model = strings.TrimSpace(strings.TrimPrefix(t, "Model:"))
		}
		p.mark(i)
	case strings.Contains(l, "Batch size:") && reTFGlobal.MatchString(l):
		p.next(true)
		if b, err := strconv.ParseFloat(reTFGlobal.FindStringSubmatch(l)[1], 64); err == nil && p.r.GlobalBatch == 0 {
			p.r.GlobalBatch = b
		}
		p.mark(i)
	case strings.Contains(l, " per device") && reTFBatch.MatchString(l) && r.BatchPerDevice == 0:
		if b, err := strconv.ParseFloat(reTFBatch.FindStringSubmatch(l)[1], 64); err == nil {
			r.BatchPerDevice = b
		}
	case (strings.Contains(t, "Error: ") || strings.Contains(t, "Exception: ")) && reTFFail.MatchString(t) &&
		len(r.Failures) < 8 && !slices.Contains(r.Failures, clip(t, 200)):
		r.Failures = append(r.Failures, clip(t, 200))
		p.mark(i)
	}
}

// finish returns the runs read, consecutive runs of one size merged, each
// numbered; ErrNoTFCNN when there was none.
func (p *tfStream) finish() ([]*TFCNN, error) {
	if !p.seen {
		return nil, ErrNoTFCNN
	}
	all := p.done
	if p.r.FirstLine > 0 {
		all = append(all, p.r)
	}
	var runs []*TFCNN
	for _, r := range all {
		if n := len(runs); n > 0 {
			last := runs[n-1]
			a, ua, _ := last.Size()
			b, ub, _ := r.Size()
			if a > 0 && a == b && ua == ub {
				last.merge(r)
				continue
			}
		}
		runs = append(runs, r)
	}
	for i, r := range runs {
		r.Run, r.Runs = i+1, len(runs)
	}
	return runs, nil
}

// merge adds x, read after r, to r: one run's output in two pieces.
func (r *TFCNN) merge(x *TFCNN) {
	if r.Model == "" {
		r.Model = x.Model
	}
	if r.BatchPerDevice == 0 {
		r.BatchPerDevice = x.BatchPerDevice
	}
	if r.GlobalBatch == 0 {
		r.GlobalBatch = x.GlobalBatch
	}
	if x.Steps >= r.Steps {
		r.Steps, r.StepRate = x.Steps, x.StepRate
	}
	r.Totals = append(r.Totals, x.Totals...)
	if r.Rank0 < 0 {
		r.Rank0 = x.Rank0
	}
	for _, f := range x.Failures {
		if len(r.Failures) < 8 && !slices.Contains(r.Failures, f) {
			r.Failures = append(r.Failures, f)
		}
	}
	if x.FirstLine > 0 && (r.FirstLine == 0 || x.FirstLine < r.FirstLine) {
		r.FirstLine = x.FirstLine
	}
	r.LastLine = max(r.LastLine, x.LastLine)
}

// Size is how many GPUs the run spanned, from its header ("Batch size: G
// global" ÷ "P per device": the per-device batch times the job's GPUs,
// benchmark_cnn.py print_info), unit "GPU"; else how many workers, its
// total ÷ its step rows' images/sec (each worker prints its own rate, the
// total is the job's: num_workers × batch ÷ step time, benchmark_cnn.py),
// unit "worker", when that is within 10 % of a whole number; else 0. how
// says which.
func (r *TFCNN) Size() (n int, unit, how string) {
	if r == nil {
		return 0, "", ""
	}
	if r.GlobalBatch > 0 && r.BatchPerDevice > 0 {
		q := r.GlobalBatch / r.BatchPerDevice
		if k := math.Round(q); k >= 1 && k <= 1<<20 && math.Abs(q-k) < 1e-6 {
			return int(k), "GPU", fmt.Sprintf("'Batch size: %s global' ÷ '%s per device'", trimFloat(r.GlobalBatch), trimFloat(r.BatchPerDevice))
		}
	}
	if v, ok := r.ImagesPerSec(); ok && r.StepRate > 0 && finite(v/r.StepRate) {
		q := v / r.StepRate
		if k := math.Round(q); k >= 1 && k <= 1<<20 && math.Abs(q/k-1) <= 0.1 {
			return int(k), "worker", fmt.Sprintf("total %s ÷ the last step row's %s images/sec", trimFloat(v), trimFloat(r.StepRate))
		}
	}
	return 0, "", ""
}

// ImagesPerSec is the job's throughput, images/sec: rank 0's total when the
// lines are tagged (Horovod's maintainers read worker 0's line,
// horovod/horovod#21), else the median of the totals; ok is false without
// one.
func (r *TFCNN) ImagesPerSec() (v float64, ok bool) {
	if r == nil || len(r.Totals) == 0 {
		return 0, false
	}
	if r.Rank0 >= 0 {
		return r.Rank0, true
	}
	s := slices.Clone(r.Totals)
	slices.Sort(s)
	return s[len(s)/2], true
}

// String is a one-line summary, e.g. "vgg16, 1540.2 images/sec", or
// "alexnet, no total images/sec (last step 80)"; without a header the model
// is left out.
func (r *TFCNN) String() string {
	v, ok := r.ImagesPerSec()
	s := fixed2(v) + " images/sec"
	if !ok {
		s = fmt.Sprintf("no total images/sec (last step %d)", r.Steps)
	}
	if r.Model != "" {
		s = r.Model + ", " + s
	}
	return s
}
