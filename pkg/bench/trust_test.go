package bench

import (
	"strings"
	"testing"
)

// edit returns fixture name with old replaced by new once (the test fails
// when old is not there): a recorded output changed in one figure, as the
// test names it.
func edit(t *testing.T, name, old, new string) []byte {
	t.Helper()
	s := string(read(t, name))
	if !strings.Contains(s, old) {
		t.Fatalf("%s has no %q", name, old)
	}
	return []byte(strings.Replace(s, old, new, 1))
}

// TestPerftestRunsEachJudged: two recorded perftest reports saved one after
// the other (as `tee -a` or a `script` transcript keeps them) are judged
// run by run, whatever their order; the second is not lost behind the
// first.
func TestPerftestRunsEachJudged(t *testing.T) {
	e := refExpect()
	e.MTU = 0
	for _, order := range [][]string{
		{"perftest-deepops-roce-gbits.txt", "perftest-273-postlist-8b.txt"},
		{"perftest-273-postlist-8b.txt", "perftest-deepops-roce-gbits.txt"},
	} {
		parts, err := JudgeParts(cat(t, order...), e)
		if err != nil || len(parts) != 2 {
			t.Fatalf("%v: %d parts, %v", order, len(parts), err)
		}
		got := map[string]string{}
		for _, p := range parts {
			if p.Kind != KindPerftest || !strings.HasPrefix(p.Name, "run ") {
				t.Errorf("%v: part %q %s", order, p.Name, p.Kind)
			}
			got[p.Verdicts[0].Measured.At] = string(p.Verdicts[0].Status)
		}
		if got["BW average at 65536 B"] != "passed" || got["BW average at 8 B"] != "too-short" {
			t.Errorf("%v: %v", order, got)
		}
		if !strings.Contains(parts[1].Name, "run 2 of 2 (lines ") {
			t.Errorf("%v: second part %q", order, parts[1].Name)
		}
	}
	runs, err := ParsePerftestRuns(cat(t, "perftest-deepops-roce-gbits.txt", "perftest-273-postlist-8b.txt"))
	if err != nil || len(runs) != 2 || runs[0].LastLine+1 != runs[1].FirstLine || runs[1].Test != "RDMA_Write Post List BW Test" {
		t.Errorf("%d runs %v", len(runs), err)
	}
	// server and client output of one run interleaved stay one run
	if runs, _ := ParsePerftestRuns(read(t, "perftest-superbench-loopback-mb.txt")); len(runs) != 1 {
		t.Errorf("superbench loopback: %d runs", len(runs))
	}
}

// TestImpossibleFiguresNeverPass: a figure above what the judged link
// carries is an error about the file or the parameters, never a pass:
// 9,240 Gb/s on a 100 Gb/s link, 1e308, 42 GB/s busbw through one 100 Gb/s
// NIC. Each is a recorded output with that one figure edited.
func TestImpossibleFiguresNeverPass(t *testing.T) {
	e := refExpect()
	for _, c := range []struct {
		name, figure string
		data         []byte
	}{
		{"9,240 Gb/s", "9240 Gb/s", edit(t, "perftest-deepops-roce-gbits.txt", "92.42              92.40", "9240.00            9240.00")},
		{"1e308 Gb/s", "1e+308 Gb/s", edit(t, "perftest-deepops-roce-gbits.txt", "92.42              92.40", "1e308              1e308")},
		{"42 GB/s busbw", "busbw 42 GB/s", edit(t, "nccltests-deepops-roce-2x100g.txt", "175667   12.22   22.92", "175667   12.22   42.00")},
	} {
		_, vs, err := Judge(c.data, e)
		if err != nil || vs[0].Status != StatusError || !strings.Contains(vs[0].Found, c.figure) ||
			len(vs[0].Causes) != 1 || vs[0].Causes[0].Layer != LayerParameters || !strings.Contains(vs[0].Causes[0].Fix, "--link-gbps") {
			t.Errorf("%s: %v\n%s", c.name, err, strings.Join(Lines(vs), "\n"))
		}
	}
	// a 1e308 in MB/sec is no Gb/s at all: the row is unreadable
	data := edit(t, "perftest-superbench-loopback-mb.txt", "23240.68            23240.68", "1e308               1e308")
	if _, vs, _ := Judge(data, e); vs[0].Status == StatusPass || (vs[0].Measured != nil && !finite(vs[0].Measured.Value)) {
		t.Errorf("1e308 MB/sec: %s", vs[0].Line())
	}
}

// TestErrorColumnJudged: the older "error" column is the largest deviation
// from the expected values; 1e+03 on the largest row is wrong results, not
// a pass (a recorded table with that one value edited); 5e-07 passes.
func TestErrorColumnJudged(t *testing.T) {
	e := refExpect()
	e.NICsPerNode = 2
	if _, vs, _ := Judge(read(t, "nccltests-deepops-roce-2x100g.txt"), e); vs[0].Status != StatusPass {
		t.Fatalf("unchanged: %s", vs[0].Line())
	}
	data := edit(t, "nccltests-deepops-roce-2x100g.txt", "22.92  5e-07", "22.92  1e+03")
	_, vs, _ := Judge(data, e)
	if v := vs[0]; v.Status != StatusError || !strings.Contains(v.Found, "the 'error' column (the largest deviation from the expected values) is 1000 at 2147483648 B (2 GiB), float, above nccl-tests' tolerance 1e-05 for float") ||
		!strings.Contains(v.Causes[0].Finding, "DeltaMaxValue") {
		t.Errorf("%s", v.Line())
	}
}

// TestCausesClaimOnlyWhatTheFileShows: a busbw below the line without an
// NCCL log does not claim RDMA was in use; with a log whose transport is
// RDMA it does.
func TestCausesClaimOnlyWhatTheFileShows(t *testing.T) {
	e := refExpect()
	e.LinkGbps = 200 // 22.92 GB/s is below 200 Gb/s's line (21.6 × 2 NICs)
	e.NICsPerNode = 2
	_, vs, _ := Judge(read(t, "nccltests-deepops-roce-2x100g.txt"), e)
	text := strings.Join(Lines(vs), "\n")
	if vs[0].Status != StatusFail || strings.Contains(text, "RDMA in use") || !strings.Contains(text, "the file does not show which transport") {
		t.Errorf("no NCCL log:\n%s", text)
	}
	_, vs, _ = Judge(read(t, "nccltests-82-broadcast-no-verbs.txt"), e)
	if text := strings.Join(Lines(vs), "\n"); strings.Contains(text, "RDMA in use") {
		t.Errorf("sockets:\n%s", text)
	}
}
