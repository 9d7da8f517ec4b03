package bench

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// Layouts of rails over leaves, for n hosts and k rails: leaves[r][i] is
// host i's leaf on rail r.
var railLayouts = map[string]func(k, n int) [][]string{
	// one switch, no fabric
	"single-switch": func(k, n int) [][]string {
		return fill(k, n, func(r, i int) string { return "" })
	},
	// rail-optimized: rail r of every host on leaf r
	"rail-optimized": func(k, n int) [][]string {
		return fill(k, n, func(r, i int) string { return fmt.Sprintf("leaf%d", r) })
	},
	// rail-optimized in two groups: rail r of the first half on leaf rA,
	// of the second on leaf rB (each rail's pairs cross leaves, its own)
	"rail-groups": func(k, n int) [][]string {
		return fill(k, n, func(r, i int) string { return fmt.Sprintf("leaf%d%c", r, 'a'+byte(2*i/max(n, 1))) })
	},
	// one leaf carrying every rail
	"one-leaf": func(k, n int) [][]string {
		return fill(k, n, func(r, i int) string { return "leaf1" })
	},
	// two leaves, each carrying every rail of half the hosts: every rail
	// crosses between the same two leaves
	"shared-crossing": func(k, n int) [][]string {
		return fill(k, n, func(r, i int) string { return fmt.Sprintf("leaf%d", 1+2*i/max(n, 1)) })
	},
	// rails in pairs on a leaf per half of the hosts: rails 2j and 2j+1
	// share leaves (and cross between them), other rails do not
	"paired-crossing": func(k, n int) [][]string {
		return fill(k, n, func(r, i int) string { return fmt.Sprintf("leaf%d%c", r/2, 'a'+byte(2*i/max(n, 1))) })
	},
}

func fill(k, n int, leaf func(r, i int) string) [][]string {
	out := make([][]string, k)
	for r := range out {
		out[r] = make([]string, n)
		for i := range out[r] {
			out[r][i] = leaf(r, i)
		}
	}
	return out
}

// checkRailRounds asserts RailRounds(leaves)' properties: per rail, the
// pairs are exactly RoundsByLeaf's (every host once as client and once
// as server, rail r only with rail r); no (host, rail) twice in a round;
// the rails of a round never both cross leaves from a leaf they share;
// the round count is waves × RoundCount.
func checkRailRounds(t *testing.T, name string, leaves [][]string) [][]int {
	t.Helper()
	rounds := RailRounds(leaves)
	waves := RailWaves(leaves)
	n := 0
	if len(leaves) > 0 {
		n = len(leaves[0])
	}
	if want := len(waves) * RoundCount(n); len(rounds) != want {
		t.Fatalf("%s: %d rounds, want %d waves × %d", name, len(rounds), len(waves), RoundCount(n))
	}
	got := make([][]Pair, len(leaves))
	for k, round := range rounds {
		busy := map[[2]int]bool{}
		crossAt := map[string][]int{} // leaf → rails with a pair across leaves ending there
		for _, p := range round {
			if p.Rail < 0 || p.Rail >= len(leaves) || p.Client == p.Server {
				t.Fatalf("%s: bad pair %+v", name, p)
			}
			for _, h := range []int{p.Client, p.Server} {
				if busy[[2]int{h, p.Rail}] {
					t.Fatalf("%s: host %d rail %d twice in round %d", name, h, p.Rail, k)
				}
				busy[[2]int{h, p.Rail}] = true
			}
			a, b := leaves[p.Rail][p.Client], leaves[p.Rail][p.Server]
			if a != "" && b != "" && a != b {
				for _, l := range []string{a, b} {
					if !slices.Contains(crossAt[l], p.Rail) {
						crossAt[l] = append(crossAt[l], p.Rail)
					}
				}
			}
			got[p.Rail] = append(got[p.Rail], Pair{p.Client, p.Server})
		}
		for l, rails := range crossAt {
			if len(rails) > 1 {
				t.Fatalf("%s: rails %v cross leaves from %s in round %d", name, rails, l, k)
			}
		}
	}
	for r := range leaves {
		var want []Pair
		for _, round := range RoundsByLeaf(leaves[r]) {
			want = append(want, round...)
		}
		if !reflect.DeepEqual(got[r], want) {
			t.Fatalf("%s: rail %d pairs %v, want RoundsByLeaf's %v", name, r, got[r], want)
		}
	}
	return waves
}

// TestRailRoundsProperty: every layout, 1 to 8 rails, 0 to 40 hosts, and
// 512 hosts × 8 rails.
func TestRailRoundsProperty(t *testing.T) {
	for name, layout := range railLayouts {
		for k := 1; k <= 8; k++ {
			for n := 0; n <= 40; n++ {
				checkRailRounds(t, fmt.Sprintf("%s %d×%d", name, n, k), layout(k, n))
			}
		}
		checkRailRounds(t, name+" 512×8", layout(8, 512))
	}
	if RailRounds(nil) != nil || RailRounds([][]string{{"leaf1"}}) != nil {
		t.Error("no rails, or one host, have no pairs")
	}
}

// TestRailWaves: rails that share no leaf, or share one only inside it,
// run together; rails whose pairs cross leaves from a leaf they share run
// apart.
func TestRailWaves(t *testing.T) {
	for _, c := range []struct {
		layout string
		k, n   int
		want   string
	}{
		{"single-switch", 4, 8, "[[0 1 2 3]]"},
		{"rail-optimized", 8, 16, "[[0 1 2 3 4 5 6 7]]"},
		{"rail-groups", 4, 8, "[[0 1 2 3]]"},
		{"one-leaf", 4, 8, "[[0 1 2 3]]"},
		{"shared-crossing", 4, 8, "[[0] [1] [2] [3]]"},
		{"paired-crossing", 4, 8, "[[0 2] [1 3]]"},
		{"paired-crossing", 5, 8, "[[0 2 4] [1 3]]"},
	} {
		leaves := railLayouts[c.layout](c.k, c.n)
		if got := fmt.Sprint(RailWaves(leaves)); got != c.want {
			t.Errorf("%s %d×%d: waves %s, want %s", c.layout, c.n, c.k, got, c.want)
		}
	}
}

// TestRailRoundsOneRail: one rail is RoundsByLeaf, pair for pair, on rail
// 0: a cluster without rails keeps its schedule.
func TestRailRoundsOneRail(t *testing.T) {
	for _, leaves := range [][]string{make([]string, 7), leafLabels(3, 2), leafLabels(16, 16, 16), leafLabels(5)} {
		var want [][]RailPair
		for _, round := range RoundsByLeaf(leaves) {
			var r []RailPair
			for _, p := range round {
				r = append(r, RailPair{Rail: 0, Client: p.Client, Server: p.Server})
			}
			want = append(want, r)
		}
		if got := RailRounds([][]string{leaves}); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: %v, want %v", leaves, got, want)
		}
	}
}

// TestRailRoundsCounts prints the schedule's size for the scale
// (go test -run RailRoundsCounts -v).
func TestRailRoundsCounts(t *testing.T) {
	for _, name := range []string{"rail-optimized", "paired-crossing", "shared-crossing"} {
		rs := RailRounds(railLayouts[name](8, 512))
		pairs := 0
		for _, r := range rs {
			pairs += len(r)
		}
		t.Logf("%-16s 512 hosts × 8 rails: %d waves, %d rounds, %d pairs, %d in the first round", name, len(RailWaves(railLayouts[name](8, 512))), len(rs), pairs, len(rs[0]))
		if pairs != 512*8 {
			t.Errorf("%s: %d pairs", name, pairs)
		}
	}
}

func BenchmarkRailRounds512x8(b *testing.B) {
	leaves := railLayouts["paired-crossing"](8, 512)
	for b.Loop() {
		RailRounds(leaves)
	}
}

// railRuns schedules n hosts × len(leaves) rails with RailRounds; each
// (host, rail) on port "LEAF swpI" of its leaf. Each pair gets the DeepOps
// RoCE report (92.40 Gb/s), or, where slow says, a copy lowered to 41.3
// Gb/s (built for the test: no public slow-pair report was found).
func railRuns(t *testing.T, leaves [][]string, slow func(rail int, c, s HostPort) bool) []PairRun {
	t.Helper()
	good, err := ParsePerftest(read(t, "perftest-deepops-roce-gbits.txt"))
	if err != nil {
		t.Fatal(err)
	}
	low := *good
	low.Rows = []PerftestRow{good.Rows[0]}
	low.Rows[0].AvgGbps, low.Rows[0].PeakGbps = 41.3, 41.9
	hp := func(r, i int) HostPort {
		return HostPort{Host: fmt.Sprintf("vm%d", i+1), Port: fmt.Sprintf("%s swp%d", leaves[r][i], i+1), Leaf: leaves[r][i]}
	}
	var runs []PairRun
	for _, round := range RailRounds(leaves) {
		for _, p := range round {
			run := PairRun{Rail: p.Rail, Client: hp(p.Rail, p.Client), Server: hp(p.Rail, p.Server), Report: good}
			if slow(p.Rail, run.Client, run.Server) {
				run.Report = &low
			}
			runs = append(runs, run)
		}
	}
	return runs
}

// railExpect is the expectation of k rails at gbps each.
func railExpect(k int, gbps float64) Expect {
	e := ExpectFor(inventory.Reference(), gbps)
	e.Rails = make([]Rail, k)
	for r := range e.Rails {
		e.Rails[r] = Rail{LinkGbps: gbps, HCA: fmt.Sprintf("mlx5_%d", r)}
	}
	return e
}

// TestJudgeRailPairsOneRail: one rail judges exactly as JudgePairsFabric,
// with or without a one-rail Expect.Rails, on one switch and on a fabric.
func TestJudgeRailPairsOneRail(t *testing.T) {
	inv := mixedFabric(t)
	for _, c := range []struct {
		name string
		runs []PairRun
		e    Expect
		ups  []FabricUplink
	}{
		{"switch", pairRuns(t, 8, 3), ExpectFor(inventory.Reference(), 100), nil},
		{"fabric", fabricRuns(t, inv, func(c, s HostPort) bool { return c.Leaf != s.Leaf }), ExpectFor(inv, 100), FabricUplinks(inv)},
	} {
		counters := []PortCounters{{Port: "spine2 Eth1/1", PauseBefore: 1, PauseAfter: 9}}
		want := JudgePairsFabric(c.runs, c.e, counters, c.ups)
		one := c.e
		one.Rails = []Rail{{LinkGbps: 100, HCA: "mlx5_0", GPUs: []int{0, 1}}}
		for _, e := range []Expect{c.e, one} {
			got := JudgeRailPairs(c.runs, e, counters, c.ups)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: JudgeRailPairs differs from JudgePairsFabric:\n%s\nwant\n%s", c.name, strings.Join(Lines(got), "\n"), strings.Join(Lines(want), "\n"))
			}
		}
	}
}

// TestJudgeRailPairsOneSlowRail: 4 hosts × 4 rails, rail-optimized; every
// pair of rail 2 slow. Each pair's verdict names its rail; rail 2's
// verdict fails with its own cause; the summary blames rail 2's path
// (its leaf, which no passing rail uses), not the hosts.
func TestJudgeRailPairsOneSlowRail(t *testing.T) {
	leaves := railLayouts["rail-optimized"](4, 4)
	runs := railRuns(t, leaves, func(r int, c, s HostPort) bool { return r == 2 })
	vs := JudgeRailPairs(runs, railExpect(4, 100), nil, nil)
	var railLines []string
	for _, v := range vs {
		if v.Check == CheckRDMARail {
			railLines = append(railLines, v.Line())
		}
		if v.Check == CheckRDMABandwidth && (v.Rail == nil || !strings.HasSuffix(v.Subject, fmt.Sprintf(" (rail %d)", *v.Rail))) {
			t.Errorf("pair verdict without its rail: %+v", v)
		}
	}
	want := []string{
		"rdma-rail rail 0: passed (4 pair(s) on leaf0, min 92.40 / median 92.40 Gb/s)",
		"rdma-rail rail 1: passed (4 pair(s) on leaf1, min 92.40 / median 92.40 Gb/s)",
		"rdma-rail rail 2: FAILED: found 4 pair(s) on leaf2, min 41.30 / median 41.30 Gb/s, 4 below the line; expected every pair ≥ 90 Gb/s (90 % of the 100 Gb/s link)\n" +
			"  cause (fabric): every pair of rail 2 is below the line: a cause common to the rail (its ports' link speed, MTU, PFC/ECN configuration on its leaves), not one host; fix: compare the rail's link speed with its ports' speed and run `rdggen check --target switch,hosts`",
		"rdma-rail rail 3: passed (4 pair(s) on leaf3, min 92.40 / median 92.40 Gb/s)",
	}
	if strings.Join(railLines, "\n") != strings.Join(want, "\n") {
		t.Errorf("rail verdicts:\n%s\nwant\n%s", strings.Join(railLines, "\n"), strings.Join(want, "\n"))
	}
	sum := vs[len(vs)-1]
	if sum.Check != CheckRDMAPairs || sum.Found != "4 of 16 pair(s) below the line: vm1 → vm2 (rail 2), vm3 → vm4 (rail 2), vm2 → vm3 (rail 2), vm4 → vm1 (rail 2)" {
		t.Errorf("summary %s", sum.Line())
	}
	if text := causesText(sum); text != "cause (fabric): the slow pairs are on rail 2 only, while every pair of rails 0, 1, 3 passes: the hosts carry their other rails at the line, so what is slow is the slow rails' own path (those rails' PFs and VFs, cables, switch ports or leaves), not the hosts; every slow pair has an end on leaf2, which no passing rail uses; "+
		"fix: read the rdma-rail verdicts of those rails for the hosts and switch ports their slow pairs share; check those ports (rdggen check --target switch) and the rails' VFs (rdggen check --target hosts)" {
		t.Errorf("summary cause:\n%s", text)
	}
	// the JSON document carries each rail's numbers and each pair's rail
	b, err := json.Marshal(vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`"check":"rdma-rail","subject":"rail 2","status":"failed","measured":{"value":41.3,"unit":"Gb/s","at":"the lowest BW average of 4 pair(s)"}`,
		`"rail":2,"rail_pairs":{"rail":2,"leaves":["leaf2"],"pairs":4,"measured":4,"slow":4,"min_gbps":41.3,"median_gbps":41.3}`,
		`"subject":"vm1 → vm2 (rail 3)","status":"passed"`,
	} {
		if !strings.Contains(string(b), s) {
			t.Errorf("JSON lacks %s", s)
		}
	}
}

// TestJudgeRailPairsHostOnEveryRail: vm3 slow on every rail, the other
// pairs at the line: the summary names vm3 as a whole, not one NIC; each
// rail's verdict names vm3 and its port on that rail.
func TestJudgeRailPairsHostOnEveryRail(t *testing.T) {
	leaves := railLayouts["rail-optimized"](4, 6)
	runs := railRuns(t, leaves, func(r int, c, s HostPort) bool { return c.Host == "vm3" || s.Host == "vm3" })
	vs := JudgeRailPairs(runs, railExpect(4, 100), nil, nil)
	text := causesText(vs[len(vs)-1])
	if !strings.Contains(text, "vm3 is in a slow pair on every rail (rails 0, 1, 2, 3), while other pairs pass: that host as a whole rather than one NIC") ||
		!strings.Contains(text, "rdggen check --target esxi,hosts") {
		t.Errorf("summary cause:\n%s", text)
	}
	for _, v := range vs {
		if v.Check == CheckRDMARail && *v.Rail == 1 && !strings.Contains(causesText(v), "the slow pairs share vm3 (switch port leaf1 swp3)") {
			t.Errorf("rail 1:\n%s", v.Line())
		}
	}
	// slow pairs on every rail with no host common to all: each rail's own
	runs = railRuns(t, leaves, func(r int, c, s HostPort) bool {
		return c.Host == fmt.Sprintf("vm%d", r+1) || s.Host == fmt.Sprintf("vm%d", r+1)
	})
	vs = JudgeRailPairs(runs, railExpect(4, 100), nil, nil)
	if text := causesText(vs[len(vs)-1]); !strings.Contains(text, "every rail has slow pairs (rails 0, 1, 2, 3) and no host is in a slow pair on all of them") {
		t.Errorf("no common host:\n%s", text)
	}
}

// TestJudgeRailPairsRailSpeeds: each pair is judged at its rail's speed:
// the 92.40 Gb/s report passes on the 100 Gb/s rail and fails on the 200
// Gb/s one; a leaf pair holding both rails says so.
func TestJudgeRailPairsRailSpeeds(t *testing.T) {
	leaves := railLayouts["one-leaf"](2, 4)
	runs := railRuns(t, leaves, func(int, HostPort, HostPort) bool { return false })
	e := railExpect(2, 100)
	e.Rails[1].LinkGbps = 200
	vs := JudgeRailPairs(runs, e, nil, nil)
	var lines []string
	for _, v := range vs {
		if v.Check == CheckRDMARail || v.Check == CheckRDMALeafPair {
			lines = append(lines, strings.Split(v.Line(), "\n")[0])
		}
	}
	want := []string{
		"rdma-leaf-pair leaf1 → leaf1: FAILED: found 8 pair(s), min 92.40 / median 92.40 Gb/s, 4 below the line; expected every pair at its rail's pass line",
		"rdma-rail rail 0: passed (4 pair(s) on leaf1, min 92.40 / median 92.40 Gb/s)",
		"rdma-rail rail 1: FAILED: found 4 pair(s) on leaf1, min 92.40 / median 92.40 Gb/s, 4 below the line; expected every pair ≥ 180 Gb/s (90 % of the 200 Gb/s link)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdicts:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, v := range vs {
		if v.Check == CheckRDMABandwidth && v.Subject == "vm1 → vm2 (rail 1)" && (v.PassLine == nil || v.PassLine.Value != 180) {
			t.Errorf("rail 1 pair judged at %+v", v.PassLine)
		}
	}
}

// TestBusBWPassLineRails: 0.12 GB/s per Gb/s of the rails' sum, 90 % of
// it; one rail is BusBWPassLine.
func TestBusBWPassLineRails(t *testing.T) {
	for _, c := range []struct {
		gbps []float64
		want float64
		rule string
	}{
		{[]float64{200, 200, 200, 200}, 86.4, "90 % of the expected peak 96 GB/s (12 GB/s per 100 Gb/s of the rails' sum, 4 rails × 200 Gb/s per node)"},
		{[]float64{400, 400, 400, 400, 400, 400, 400, 400}, 345.6, "90 % of the expected peak 384 GB/s (12 GB/s per 100 Gb/s of the rails' sum, 8 rails × 400 Gb/s per node)"},
		{[]float64{200, 100}, 32.4, "90 % of the expected peak 36 GB/s (12 GB/s per 100 Gb/s of the rails' sum, 2 rails: 200 + 100 Gb/s per node)"},
	} {
		pl := BusBWPassLineRails(c.gbps)
		if pl.Value != c.want || pl.Rule != c.rule || !strings.Contains(pl.Source, "NVIDIA/nccl-tests#156") {
			t.Errorf("%v: %+v", c.gbps, pl)
		}
	}
	if BusBWPassLineRails([]float64{200}) != BusBWPassLine(200, 1) || BusBWPassLineRails(nil) != BusBWPassLine(DefaultLinkGbps, 1) {
		t.Error("one rail is BusBWPassLine")
	}
}

// TestBusBWAgainstRailSum: nccl-tests is judged against the sum of the
// rails: DeepOps' 22.92 GB/s passes on 2 × 100 Gb/s (as with
// --nics-per-node 2) and fails on 4 × 100; NVIDIA/nccl-tests#252's 95.10
// GB/s ("~24GB/s per NIC") passes on 4 × 200; the ceiling is twice the sum.
func TestBusBWAgainstRailSum(t *testing.T) {
	for _, c := range []struct {
		file   string
		rails  int
		gbps   float64
		status Status
		line   float64
	}{
		{"nccltests-deepops-roce-2x100g.txt", 2, 100, StatusPass, 21.6},
		{"nccltests-deepops-roce-2x100g.txt", 4, 100, StatusFail, 43.2},
		{"nccltests-252-ring-8g.txt", 4, 200, StatusPass, 86.4},
		{"nccltests-a3mega-newformat.txt", 8, 200, StatusPass, 172.8},
		{"nccltests-deepops-dgxa100-4node.txt", 2, 100, StatusError, 21.6},
	} {
		e := railExpect(c.rails, c.gbps)
		e.GIDIndex = -1
		_, vs, err := Judge(read(t, c.file), e)
		if err != nil || vs[0].Check != CheckBusBW || vs[0].Status != c.status || vs[0].PassLine.Value != c.line {
			t.Errorf("%s on %d × %g: %v\n%s", c.file, c.rails, c.gbps, err, strings.Join(Lines(vs), "\n"))
		}
		if c.status == StatusError && !strings.Contains(vs[0].Found, "is more than 50 GB/s, twice what the 2 rails × 100 Gb/s per node carry") {
			t.Errorf("ceiling: %s", vs[0].Found)
		}
	}
	// the same verdicts as --nics-per-node for rails of one speed
	nics := Expect{LinkGbps: 100, NICsPerNode: 2, GIDIndex: -1}
	rails := Expect{LinkGbps: 100, GIDIndex: -1, Rails: []Rail{{}, {}}}
	_, a, _ := Judge(read(t, "nccltests-deepops-roce-2x100g.txt"), nics)
	_, b, _ := Judge(read(t, "nccltests-deepops-roce-2x100g.txt"), rails)
	if a[0].Status != b[0].Status || a[0].PassLine.Value != b[0].PassLine.Value || a[0].Found != b[0].Found {
		t.Errorf("2 NICs %s\n2 rails %s", a[0].Line(), b[0].Line())
	}
}

// TestOneRailJudgesAsToday: every fixture judges byte-identically with a
// one-rail Expect.Rails as without it (text and JSON): a one-rail cluster
// keeps its verdicts.
func TestOneRailJudgesAsToday(t *testing.T) {
	e := ExpectFor(inventory.Reference(), 100)
	e.GIDIndex = 3
	one := e
	one.Rails = []Rail{{LinkGbps: 100, HCA: "mlx5_0", GPUs: []int{0}}}
	for _, f := range fixtureFiles(t) {
		a, errA := JudgeParts(read(t, f), e)
		b, errB := JudgeParts(read(t, f), one)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if fmt.Sprint(errA) != fmt.Sprint(errB) || string(ja) != string(jb) {
			t.Errorf("%s: a one-rail Expect changes the verdicts", f)
		}
	}
	if d := NewDocument("c", "i", one); d.Expect.Rails != nil || d.Expect.NICsPerNode != 1 {
		t.Errorf("document %+v", d.Expect)
	}
	d := NewDocument("c", "i", railExpect(2, 200))
	b, _ := json.Marshal(d.Expect)
	if !strings.Contains(string(b), `"nics_per_node":2,`) || !strings.Contains(string(b), `"rails":[{"rail":0,"link_gbps":200,"hca":"mlx5_0"},{"rail":1,"link_gbps":200,"hca":"mlx5_1"}]`) {
		t.Errorf("document %s", b)
	}
}

// fixtureFiles is the base names of the recorded outputs in testdata.
func fixtureFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}
