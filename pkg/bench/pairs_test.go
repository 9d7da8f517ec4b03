package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// pairRuns schedules n hosts of the reference layout (host i on port 1/i+1)
// and gives each pair the DeepOps RoCE report; the pairs that include a
// host of slowHosts get a copy whose BW average is lowered to 41.3 Gb/s (a
// value built for the test: no public slow-pair report was found).
func pairRuns(t *testing.T, n int, slowHosts ...int) []PairRun {
	t.Helper()
	good, err := ParsePerftest(read(t, "perftest-deepops-roce-gbits.txt"))
	if err != nil {
		t.Fatal(err)
	}
	slow := *good
	slow.Rows = []PerftestRow{good.Rows[0]}
	slow.Rows[0].AvgGbps, slow.Rows[0].PeakGbps = 41.3, 41.9
	hp := func(i int) HostPort {
		return HostPort{Host: fmt.Sprintf("clx-mld-%d", 41+i), Port: fmt.Sprintf("swx-mld-1-2 Eth1/%d", i+1)}
	}
	var runs []PairRun
	for _, round := range Rounds(n) {
		for _, p := range round {
			r := PairRun{Client: hp(p.Client), Server: hp(p.Server), Report: good}
			for _, h := range slowHosts {
				if p.Client == h || p.Server == h {
					r.Report = &slow
				}
			}
			runs = append(runs, r)
		}
	}
	return runs
}

func causesText(v Verdict) string {
	var s []string
	for _, c := range v.Causes {
		s = append(s, c.Line())
	}
	return strings.Join(s, "\n")
}

// TestJudgePairsSharedHost: one bad host slows both its pairs; the summary
// names it and its port, and says whether pauses rose there.
func TestJudgePairsSharedHost(t *testing.T) {
	e := ExpectFor(inventory.Reference(), 100)
	e.MTU = 4096
	runs := pairRuns(t, 8, 3)
	counters := []PortCounters{
		{Port: "swx-mld-1-2 Eth1/4", PauseBefore: 10, PauseAfter: 90210, ECNBefore: 5, ECNAfter: 5},
		{Port: "swx-mld-1-2 Eth1/1", PauseBefore: 7, PauseAfter: 7},
	}
	vs := JudgePairs(runs, e, counters)
	sum := vs[len(vs)-1]
	if sum.Check != CheckRDMAPairs || sum.Status != StatusFail || sum.Found != "2 of 8 pair(s) below the line: clx-mld-43 → clx-mld-44, clx-mld-44 → clx-mld-45" {
		t.Fatalf("%s", sum.Line())
	}
	text := causesText(sum)
	for _, s := range []string{
		"the slow pairs share clx-mld-44 (switch port swx-mld-1-2 Eth1/4), while the other pairs pass",
		"PFC pauses or ECN marks rose during the run on swx-mld-1-2 Eth1/4: 90200 pause frame(s), 0 ECN mark(s)",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "Eth1/1:") {
		t.Errorf("a port without a rise is named:\n%s", text)
	}
	var subjects []string
	for _, v := range vs {
		if v.Check == CheckRDMABandwidth && v.Status == StatusFail {
			subjects = append(subjects, v.Subject)
		}
	}
	if strings.Join(subjects, ",") != "clx-mld-43 → clx-mld-44,clx-mld-44 → clx-mld-45" {
		t.Errorf("slow pair verdicts %v", subjects)
	}

	// The same without a rise on the suspect port: not congestion.
	quiet := JudgePairs(runs, e, []PortCounters{{Port: "swx-mld-1-2 Eth1/4", PauseBefore: 3, PauseAfter: 3}})
	if q := causesText(quiet[len(quiet)-1]); !strings.Contains(q, "no PFC pause or ECN mark rose on swx-mld-1-2 Eth1/4 during the run: not congestion") {
		t.Errorf("quiet port:\n%s", q)
	}
}

// TestJudgePairsOthers: a single slow pair, every pair slow, no slow pair,
// a pair without a report, no pairs.
func TestJudgePairsOthers(t *testing.T) {
	e := ExpectFor(inventory.Reference(), 100)
	e.MTU = 4096
	one := pairRuns(t, 6)
	slow := *one[0].Report
	slow.Rows = []PerftestRow{slow.Rows[0]}
	slow.Rows[0].AvgGbps = 50
	one[1].Report = &slow // clx-mld-43 → clx-mld-44 in round 1
	vs := JudgePairs(one, e, nil)
	if s := causesText(vs[len(vs)-1]); !strings.Contains(s, "only clx-mld-43 → clx-mld-44 is slow while both hosts' other pairs pass: clx-mld-43's transmit path or clx-mld-44's receive path") {
		t.Errorf("one slow pair:\n%s", s)
	}
	all := pairRuns(t, 4, 0, 1, 2, 3)
	vs = JudgePairs(all, e, nil)
	if s := causesText(vs[len(vs)-1]); !strings.Contains(s, "every pair is below the line: a cause common to the cluster") {
		t.Errorf("all slow:\n%s", s)
	}
	fine := pairRuns(t, 5)
	vs = JudgePairs(fine, e, nil)
	if sum := vs[len(vs)-1]; sum.Status != StatusPass || sum.Found != "all 5 pair(s) at the pass line" || !Passed(vs) {
		t.Errorf("%s", strings.Join(Lines(vs), "\n"))
	}
	fine[2].Report, fine[2].Err = nil, "ssh: connection refused"
	vs = JudgePairs(fine, e, nil)
	if sum := vs[len(vs)-1]; sum.Status != StatusError || Passed(vs) {
		t.Errorf("%s", sum.Line())
	}
	if vs := JudgePairs(nil, e, nil); len(vs) != 1 || vs[0].Status != StatusTooShort {
		t.Errorf("no pairs: %+v", vs)
	}
}

// TestHostPorts: the reference inventory's hosts on swx-mld-1-2 ports 1/1…1/8.
func TestHostPorts(t *testing.T) {
	hp := HostPorts(inventory.Reference())
	if len(hp) != 8 || hp[0] != (HostPort{Host: "clx-mld-41", Port: "swx-mld-1-2 Eth1/1"}) || hp[7].Port != "swx-mld-1-2 Eth1/8" {
		t.Errorf("%+v", hp)
	}
}
