package bench

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// mixedFabric is the mixed 2 × 2 golden fabric (leaf1 and spine1 on
// Cumulus Linux, leaf2 and spine2 on ONYX) with a third host, m13, on
// leaf1: 3 + 2 hosts, so one pair of the ring stays inside leaf1.
func mixedFabric(t *testing.T) *inventory.Inventory {
	t.Helper()
	src, err := os.ReadFile("../../testdata/golden/fabric-mixed/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "  - {name: m21,",
		"  - {name: m13, esxi: esx-13.example, data: {address: 10.1.0.13/24, switch: leaf1, port: swp3}}\n  - {name: m21,", 1)
	inv, err := inventory.Load("fabric-mixed.yaml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// fabricRuns schedules inv with RoundsByLeaf and gives each pair the
// DeepOps RoCE report (92.40 Gb/s), or, for the pairs slow says, a copy
// lowered to 41.3 Gb/s (built for the test: no public slow-pair report
// was found).
func fabricRuns(t *testing.T, inv *inventory.Inventory, slow func(c, s HostPort) bool) []PairRun {
	t.Helper()
	good, err := ParsePerftest(read(t, "perftest-deepops-roce-gbits.txt"))
	if err != nil {
		t.Fatal(err)
	}
	low := *good
	low.Rows = []PerftestRow{good.Rows[0]}
	low.Rows[0].AvgGbps, low.Rows[0].PeakGbps = 41.3, 41.9
	hp := HostPorts(inv)
	var runs []PairRun
	for _, round := range RoundsByLeaf(HostLeaves(inv)) {
		for _, p := range round {
			r := PairRun{Client: hp[p.Client], Server: hp[p.Server], Report: good}
			if slow(r.Client, r.Server) {
				r.Report = &low
			}
			runs = append(runs, r)
		}
	}
	return runs
}

// TestFabricHostPorts: the fabric's hosts carry their leaves and each
// switch's own port spelling; the uplinks come from fabric.links.
func TestFabricHostPorts(t *testing.T) {
	inv := mixedFabric(t)
	hp := HostPorts(inv)
	if len(hp) != 5 || hp[0] != (HostPort{Host: "m11", Port: "leaf1 swp1", Leaf: "leaf1"}) || hp[3] != (HostPort{Host: "m21", Port: "leaf2 Eth1/1", Leaf: "leaf2"}) {
		t.Errorf("%+v", hp)
	}
	if got := strings.Join(HostLeaves(inv), " "); got != "leaf1 leaf1 leaf1 leaf2 leaf2" {
		t.Errorf("leaves %s", got)
	}
	ups := FabricUplinks(inv)
	want := []FabricUplink{{"leaf1", "leaf1 swp31", "spine1", "spine1 swp1"}, {"leaf1", "leaf1 swp32", "spine2", "spine2 Eth1/1"},
		{"leaf2", "leaf2 Eth1/31", "spine1", "spine1 swp2"}, {"leaf2", "leaf2 Eth1/32", "spine2", "spine2 Eth1/2"}}
	if len(ups) != len(want) {
		t.Fatalf("%+v", ups)
	}
	for i := range want {
		if ups[i] != want[i] {
			t.Errorf("uplink %d: %+v, want %+v", i, ups[i], want[i])
		}
	}
	if FabricUplinks(inventory.Reference()) != nil || strings.Join(HostLeaves(inventory.Reference()), "") != "" {
		t.Error("the single-switch reference has no fabric")
	}
}

// TestJudgePairsFabricAcrossLeaves: every pair across leaves at 41.3 Gb/s,
// the one inside leaf1 (m13 → m11) at 92.40: the leaf pairs report it,
// and the cause names the fabric (the uplinks of both leaves, both spines),
// the pauses counted on spine2's ONYX port towards leaf1, the Cumulus
// ports read without a pause (their ECN marks not read, so not claimed)
// and the fabric ports not read at all.
func TestJudgePairsFabricAcrossLeaves(t *testing.T) {
	inv := mixedFabric(t)
	e := ExpectFor(inv, 100)
	runs := fabricRuns(t, inv, func(c, s HostPort) bool { return c.Leaf != s.Leaf })
	counters := []PortCounters{
		{Port: "spine2 Eth1/1", PauseBefore: 100, PauseAfter: 5100},
		{Port: "leaf1 swp31", PauseBefore: 7, PauseAfter: 7, NoECN: true},
		{Port: "spine1 swp1", PauseBefore: 0, PauseAfter: 0, NoECN: true},
	}
	vs := JudgePairsFabric(runs, e, counters, FabricUplinks(inv))
	var leafLines []string
	for _, v := range vs {
		if v.Check == CheckRDMALeafPair {
			leafLines = append(leafLines, v.Line())
		}
	}
	want := []string{
		"rdma-leaf-pair leaf1 → leaf2: FAILED: found 2 pair(s), min 41.30 / median 41.30 Gb/s, 2 below the line; expected every pair ≥ 90 Gb/s",
		"rdma-leaf-pair leaf2 → leaf1: FAILED: found 2 pair(s), min 41.30 / median 41.30 Gb/s, 2 below the line; expected every pair ≥ 90 Gb/s",
		"rdma-leaf-pair leaf1 → leaf1: passed (1 pair(s), min 92.40 / median 92.40 Gb/s)",
	}
	if strings.Join(leafLines, "\n") != strings.Join(want, "\n") {
		t.Errorf("leaf pairs:\n%s\nwant\n%s", strings.Join(leafLines, "\n"), strings.Join(want, "\n"))
	}
	sum := vs[len(vs)-1]
	if sum.Check != CheckRDMAPairs || sum.Found != "4 of 5 pair(s) below the line: m11 → m21, m12 → m22, m21 → m12, m22 → m13" {
		t.Fatalf("%s", sum.Line())
	}
	text := causesText(sum)
	for _, s := range []string{
		"every slow pair crosses leaves (leaf1 → leaf2, leaf2 → leaf1), through a spine, while the pair(s) inside one leaf pass (m13 → m11): those hosts reach the line through their leaf, the pairs through a spine do not: " +
			"the uplinks of leaf1, leaf2 (leaf1 swp31 ↔ spine1 swp1, leaf1 swp32 ↔ spine2 Eth1/1, leaf2 Eth1/31 ↔ spine1 swp2, leaf2 Eth1/32 ↔ spine2 Eth1/2) and the spine(s) spine1, spine2",
		"PFC pauses or ECN marks rose during the run on spine2 Eth1/1: 5000 pause frame(s), 0 ECN mark(s)",
		"no PFC pause frame rose on leaf1 swp31, spine1 swp1 during the run (their ECN marks were not read)",
		"the counters of leaf1 swp32, leaf2 Eth1/31, spine1 swp2, leaf2 Eth1/32, spine2 Eth1/2 were not read before and after the run",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("lacks %q:\n%s", s, text)
		}
	}
	for _, s := range []string{"other pair(s) across leaves pass", "ECN mark rose on leaf1", "not congestion"} {
		if strings.Contains(text, s) {
			t.Errorf("claims %q:\n%s", s, text)
		}
	}
	// The JSON document carries the leaf pair's numbers.
	b, err := json.Marshal(vs[len(vs)-2])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"leaf_pair":{"client_leaf":"leaf1","server_leaf":"leaf1","pairs":1,"measured":1,"slow":0,"min_gbps":92.4,"median_gbps":92.4}`) {
		t.Errorf("JSON: %s", b)
	}
}

// TestJudgePairsFabricBalanced: on the 2 × 2 Cumulus golden fabric every
// pair crosses leaves. Two slow pairs leaf1 → leaf2 that share no host:
// the fabric cause says no pair inside a leaf was measured (so the data
// cannot tell fabric from hosts) and that the other pairs across leaves
// pass. One bad host (h21): its two pairs are slow, the others pass, so
// the host is named and the fabric is not.
func TestJudgePairsFabricBalanced(t *testing.T) {
	inv, err := inventory.LoadFile("../../testdata/golden/fabric-cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := ExpectFor(inv, 100) // the link of the recorded report, not the inventory's 400 Gb/s
	ups := FabricUplinks(inv)
	runs := fabricRuns(t, inv, func(c, s HostPort) bool { return c.Leaf == "leaf1" && s.Leaf == "leaf2" })
	if len(runs) != 4 || runs[0].Client.Host != "h11" || runs[0].Server.Host != "h21" {
		t.Fatalf("%+v", runs)
	}
	vs := JudgePairsFabric(runs, e, nil, ups)
	sum := vs[len(vs)-1]
	text := causesText(sum)
	for _, s := range []string{
		"the slow pairs share no host",
		"every slow pair crosses leaves (leaf1 → leaf2), through a spine, and no pair inside one leaf was measured at the line: this run cannot tell the fabric from the hosts; " +
			"2 other pair(s) across leaves pass (with ECMP each flow takes one uplink and one spine, so one of them rather than all): " +
			"the uplinks of leaf1, leaf2 (leaf1 swp63 ↔ spine1 swp1, leaf1 swp64 ↔ spine2 swp1, leaf2 swp63 ↔ spine1 swp2, leaf2 swp64 ↔ spine2 swp2) and the spine(s) spine1, spine2",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("lacks %q:\n%s", s, text)
		}
	}
	bad := fabricRuns(t, inv, func(c, s HostPort) bool { return c.Host == "h21" || s.Host == "h21" })
	vs = JudgePairsFabric(bad, e, nil, ups)
	text = causesText(vs[len(vs)-1])
	if !strings.Contains(text, "the slow pairs share h21 (switch port leaf2 swp1s0)") || strings.Contains(text, "crosses leaves") {
		t.Errorf("one bad host:\n%s", text)
	}
}

// The fabric sample of docs/bench-live.md is this judge's output for
// TestJudgePairsFabricAcrossLeaves's run (" …" in the manual stands for
// the rest of a line, a line "…" for verdicts left out).
func TestBenchLiveFabricSample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/bench-live.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```\nib_write_bw pairs:\n  …\n")
	if !ok {
		t.Fatal("docs/bench-live.md has no fabric sample")
	}
	block, _, _ = strings.Cut(block, "```")
	inv := mixedFabric(t)
	runs := fabricRuns(t, inv, func(c, s HostPort) bool { return c.Leaf != s.Leaf })
	counters := []PortCounters{
		{Port: "spine2 Eth1/1", PauseBefore: 100, PauseAfter: 5100},
		{Port: "leaf1 swp31", PauseBefore: 7, PauseAfter: 7, NoECN: true},
		{Port: "spine1 swp1", NoECN: true},
	}
	var keep []Verdict
	for _, v := range JudgePairsFabric(runs, ExpectFor(inv, 100), counters, FabricUplinks(inv)) {
		if v.Check == CheckRDMALeafPair || v.Check == CheckRDMAPairs {
			keep = append(keep, v)
		}
	}
	var got []string
	for _, l := range Lines(keep) {
		for _, part := range strings.Split(l, "\n") {
			got = append(got, "  "+part)
		}
	}
	want := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	if len(want) != len(got) {
		t.Fatalf("the manual shows %d lines, the judge prints %d:\n%s", len(want), len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		rest, ok := got[i], true
		for j, part := range strings.Split(want[i], " …") {
			k := strings.Index(rest, part)
			if k < 0 || j == 0 && k != 0 {
				ok = false
				break
			}
			rest = rest[k+len(part):]
		}
		if !ok || !strings.Contains(want[i], " …") && rest != "" {
			t.Errorf("line %d:\nmanual %q\njudge  %q", i+1, want[i], got[i])
		}
	}
}
