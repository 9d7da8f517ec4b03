package bench

import (
	"errors"
	"fmt"
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
}

var (
	reTFTotal = regexp.MustCompile(`(?:\[(?:\d+,)?(\d+)\]<std(?:out|err)>:)?\s*total images/sec:\s*([0-9]+(?:\.[0-9]+)?)\s*$`)
	reTFStep  = regexp.MustCompile(`^\s*(\d+)\s+images/sec:\s*([0-9]+(?:\.[0-9]+)?)\s+\+/-`)
	reTFBatch = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?) per device\s*$`)
	reTFFail  = regexp.MustCompile(`^(?:\w+\.)*\w*(?:Error|Exception): .+`)
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
func ParseTFCNN(data []byte) (*TFCNN, error) {
	p := newTFStream()
	for _, raw := range strings.Split(string(data), "\n") {
		p.feed(strings.TrimSuffix(raw, "\r"))
	}
	return p.finish()
}

// tfStream reads tf_cnn_benchmarks output one line at a time.
type tfStream struct {
	r    *TFCNN
	seen bool
}

func newTFStream() *tfStream { return &tfStream{r: &TFCNN{Rank0: -1}} }

// feed reads one line (its line end removed, the launcher's prefix kept).
func (p *tfStream) feed(raw string) {
	r := p.r
	// every line read below holds one of these (reTFFail: "Error: " or
	// "Exception: ")
	if !strings.Contains(raw, "images/sec") && !strings.Contains(raw, "Model:") && !strings.Contains(raw, " per device") &&
		!strings.Contains(raw, "Error: ") && !strings.Contains(raw, "Exception: ") {
		return
	}
	if strings.Contains(raw, "total images/sec:") {
		if m := reTFTotal.FindStringSubmatch(raw); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				return
			}
			r.Totals = append(r.Totals, v)
			if m[1] == "0" && r.Rank0 < 0 {
				r.Rank0 = v
			}
			p.seen = true
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
			if err1 == nil && err2 == nil && step >= r.Steps {
				r.Steps, r.StepRate = step, rate
			}
			p.seen = true
			return
		}
	}
	switch t := strings.TrimSpace(l); {
	case strings.HasPrefix(t, "Model:") && r.Model == "":
		r.Model = strings.TrimSpace(strings.TrimPrefix(t, "Model:"))
	case strings.Contains(l, " per device") && reTFBatch.MatchString(l) && r.BatchPerDevice == 0:
		if b, err := strconv.ParseFloat(reTFBatch.FindStringSubmatch(l)[1], 64); err == nil {
			r.BatchPerDevice = b
		}
	case (strings.Contains(t, "Error: ") || strings.Contains(t, "Exception: ")) && reTFFail.MatchString(t) &&
		len(r.Failures) < 8 && !slices.Contains(r.Failures, clip(t, 200)):
		r.Failures = append(r.Failures, clip(t, 200))
	}
}

func (p *tfStream) finish() (*TFCNN, error) {
	if !p.seen {
		return nil, ErrNoTFCNN
	}
	return p.r, nil
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
	s := fmt.Sprintf("%.2f images/sec", v)
	if !ok {
		s = fmt.Sprintf("no total images/sec (last step %d)", r.Steps)
	}
	if r.Model != "" {
		s = r.Model + ", " + s
	}
	return s
}
