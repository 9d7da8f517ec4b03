package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// seed adds every fixture to f's corpus.
func seed(f *testing.F) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

var statuses = map[Status]bool{StatusPass: true, StatusFail: true, StatusTooShort: true, StatusError: true}

func checkVerdicts(t *testing.T, vs []Verdict) {
	for _, v := range vs {
		if !statuses[v.Status] || v.Check == "" {
			t.Fatalf("verdict %+v", v)
		}
		if v.Measured != nil && (!finite(v.Measured.Value) || v.Measured.Value < 0) {
			t.Fatalf("measured %+v", v.Measured)
		}
		if v.Status == StatusPass && len(v.Causes) > 0 {
			t.Fatalf("a pass with causes: %+v", v)
		}
		if (v.Status == StatusFail || v.Status == StatusError) && len(v.Causes) == 0 {
			t.Fatalf("a failure without a cause: %+v", v)
		}
		if v.Status == StatusTooShort && v.Found == "" {
			t.Fatalf("too short without saying why: %+v", v)
		}
		_ = v.Line()
	}
	_ = Lines(vs)
}

// FuzzParsePerftest: never panics; rows have increasing sizes and finite,
// non-negative Gb/s; the verdicts are well formed.
func FuzzParsePerftest(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParsePerftest(data)
		if err != nil {
			return
		}
		var last int64
		for _, row := range r.Rows {
			if row.Bytes <= last || !finite(row.AvgGbps) || !finite(row.PeakGbps) || row.AvgGbps < 0 || row.PeakGbps < 0 || row.Line < 1 {
				t.Fatalf("row %+v after %d", row, last)
			}
			last = row.Bytes
		}
		if r.GIDIndex < -1 || r.MTU < 0 || r.QPs < 0 || (len(r.Rows) > 0 && r.Unit == "") {
			t.Fatalf("header %+v", r)
		}
		checkVerdicts(t, JudgePerftest(r, Expect{MTU: 1024, GIDIndex: 3, LinkLayer: "Ethernet"}))
	})
}

// FuzzParseNCCLTests: never panics; sizes never go down within a data
// type and reduction; bandwidths are finite and non-negative; #wrong is -1
// or a count.
func FuzzParseNCCLTests(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		nt, err := ParseNCCLTests(data)
		if err != nil {
			return
		}
		last := map[string]int64{}
		for _, row := range nt.Rows {
			k := row.Type + " " + row.Redop
			if row.Bytes < last[k] || row.Bytes < 0 || row.Count < 0 {
				t.Fatalf("row %+v after %d", row, last[k])
			}
			last[k] = row.Bytes
			for _, x := range []NCCLResult{row.Out, row.In} {
				if !finite(x.BusBW) || x.BusBW < 0 || !finite(x.AlgBW) || x.AlgBW < 0 || x.Wrong < -1 || x.MaxError < -1 {
					t.Fatalf("result %+v", x)
				}
			}
		}
		if nt.Log == nil || nt.OutOfBounds < -1 || nt.Dropped < 0 || nt.Run != 1 || nt.Runs < 1 || nt.FirstLine != 1 || nt.LastLine < 1 {
			t.Fatalf("%+v", nt)
		}
		checkVerdicts(t, JudgeNCCLTests(nt, Expect{GIDIndex: -1}))
		runs, err := ParseNCCLTestsRuns(data)
		if err != nil || len(runs) != nt.Runs {
			t.Fatalf("%d runs, %v; ParseNCCLTests says %d", len(runs), err, nt.Runs)
		}
		for i, r := range runs {
			if r.Run != i+1 || r.FirstLine < 1 || r.LastLine < r.FirstLine || (i > 0 && r.FirstLine != runs[i-1].LastLine+1) {
				t.Fatalf("run %d of %d: lines %d–%d", r.Run, r.Runs, r.FirstLine, r.LastLine)
			}
		}
	})
}

// FuzzParseNCCLLog: never panics; a network channel's Via starts with NET/ and
// only network channels claim GDRDMA; every host seen is listed once.
func FuzzParseNCCLLog(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		l := ParseNCCLLog(data)
		if l.Lines < len(l.Warnings) {
			t.Fatalf("%d lines, %d warnings", l.Lines, len(l.Warnings))
		}
		for _, c := range l.Channels {
			if (c.Net != "" && !strings.HasPrefix(c.Via, "NET/")) || (c.GDR && c.Net == "") {
				t.Fatalf("channel %+v", c)
			}
		}
		seen := map[string]bool{}
		for _, h := range l.Hosts {
			if seen[h] || h == "" {
				t.Fatalf("hosts %q", l.Hosts)
			}
			seen[h] = true
		}
		n := 0
		for _, g := range l.GPUNICs() {
			if len(g.NICs) == 0 {
				t.Fatalf("GPU without a NIC: %+v", g)
			}
			for _, u := range g.NICs {
				if u.Lines < 1 || u.Net == "" || u.Net == "Socket" {
					t.Fatalf("NIC use %+v", u)
				}
				n += u.Lines
			}
		}
		if n > l.ChannelLines {
			t.Fatalf("%d channel lines counted per GPU, %d read", n, l.ChannelLines)
		}
		checkVerdicts(t, JudgeNCCLLog(l, Expect{GIDIndex: -1}))
	})
}

// fuzzRails is 4 rails of 200 Gb/s, two GPUs each, every rail passed:
// the expectation under which a busbw below its line names the pairing.
func fuzzRails() Expect {
	e := Expect{MTU: 4096, GIDIndex: 3, VSphere: true}
	for r := 0; r < 4; r++ {
		n := r
		e.Rails = append(e.Rails, Rail{LinkGbps: 200, HCA: "mlx5_" + strconv.Itoa(r), GPUs: []int{2 * r, 2*r + 1}})
		e.PairVerdicts = append(e.PairVerdicts, Verdict{Check: CheckRDMARail, Rail: &n, Status: StatusPass})
	}
	return e
}

// FuzzJudge: Detect and Judge agree on the kind, and never panic.
func FuzzJudge(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		k, vs, err := Judge(data, Expect{MTU: 4096, GIDIndex: 3})
		if d := Detect(data); d != k {
			t.Fatalf("Detect %s, Judge %s", d, k)
		}
		if (err != nil) != (k == KindUnknown) {
			t.Fatalf("kind %s err %v", k, err)
		}
		checkVerdicts(t, vs)
		parts, _ := JudgeParts(data, Expect{MTU: 4096, GIDIndex: 3})
		n := 0
		for _, p := range parts {
			if len(p.Verdicts) == 0 {
				t.Fatalf("a %s part without verdicts", p.Kind)
			}
			n += len(p.Verdicts)
		}
		if n != len(vs) {
			t.Fatalf("%d verdicts in the parts, %d from Judge", n, len(vs))
		}
		_, rvs, _ := Judge(data, fuzzRails())
		checkVerdicts(t, rvs)
	})
}

// FuzzParseTFCNN: never panics; the totals and the step rate are finite and
// non-negative, the throughput is one of the totals; the verdicts, alone and
// against a one-VM run, are well formed.
func FuzzParseTFCNN(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseTFCNN(data)
		if err != nil {
			return
		}
		for _, v := range append([]float64{r.StepRate, r.BatchPerDevice}, r.Totals...) {
			if !finite(v) || v < 0 {
				t.Fatalf("value %g in %+v", v, r)
			}
		}
		if v, ok := r.ImagesPerSec(); ok && !slices.Contains(r.Totals, v) {
			t.Fatalf("images/sec %g not among the totals %v", v, r.Totals)
		}
		one := HorovodRun{Output: r, GPUs: 1, Hosts: 1}
		checkVerdicts(t, []Verdict{JudgeTFCNN(r), JudgeHorovod(HorovodRun{Output: r, GPUs: 8, Hosts: 4}, one, nil)})
		runs, err := ParseTFCNNRuns(data)
		if err != nil || len(runs) == 0 {
			t.Fatalf("ParseTFCNN read it, ParseTFCNNRuns: %d runs, %v", len(runs), err)
		}
		for i, x := range runs {
			if x.Run != i+1 || x.Runs != len(runs) || x.FirstLine < 1 || x.LastLine < x.FirstLine || (i > 0 && x.FirstLine <= runs[i-1].LastLine) {
				t.Fatalf("run %d of %d: lines %d–%d", x.Run, x.Runs, x.FirstLine, x.LastLine)
			}
		}
		vs := JudgeTFCNNRuns(runs)
		if len(vs) == 0 {
			t.Fatal("no verdict for the runs")
		}
		checkVerdicts(t, vs)
	})
}
