package benchrun

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// The dry run of the reference cluster (every host's RoCE v2 GID at index
// 3) is what the README shows: the ring's 8 pairs in 2 rounds, a pair's
// two commands and the mpirun line ("…" in the README stands for the
// middle of a line).
func TestPlanIsREADMEs(t *testing.T) {
	inv := inventory.Reference()
	var out bytes.Buffer
	r := &runner{inv: inv, o: Options{RDMA: true, NCCL: true}, out: &out, gids: []int{3, 3, 3, 3, 3, 3, 3, 3}}
	r.plan()
	// The sample is in the bench manual (docs/), or the README.
	var readme []byte
	names, _ := filepath.Glob("../../../docs/*.md")
	for _, name := range append([]string{"../../../README.md"}, names...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(readme, b...)
	}
	const start = "$ rdggen bench -f cluster.yaml --dry-run\n"
	i := bytes.Index(readme, []byte(start))
	if i < 0 {
		t.Fatal("README has no bench dry-run sample")
	}
	block := string(readme[i+len(start):])
	block = block[:strings.Index(block, "```")]
	want, got := strings.Split(strings.TrimSpace(block), "\n"), strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(want) != len(got) {
		t.Fatalf("README shows %d lines, the dry run prints %d:\n%s", len(want), len(got), out.String())
	}
	for k := range want {
		head, tail, cut := strings.Cut(want[k], " … ")
		if !cut && want[k] != got[k] || cut && (!strings.HasPrefix(got[k], head) || !strings.HasSuffix(got[k], tail)) {
			t.Errorf("line %d: README %q, dry run %q", k+1, want[k], got[k])
		}
	}
}

// The switch counters read before and after the rounds pair by port; a
// port not read at either end is left out.
func TestDiffCounters(t *testing.T) {
	got := diffCounters(
		[]PortCount{{"sw Eth1/1", 10, 5}, {"sw Eth1/2", 0, -1}, {"sw Eth1/3", -1, 0}},
		[]PortCount{{"sw Eth1/1", 17, 9}, {"sw Eth1/2", 4, 3}, {"sw Eth1/3", 8, 8}, {"sw Eth1/4", 1, 1}})
	if len(got) != 2 || got[0].Port != "sw Eth1/1" || got[0].PauseBefore != 10 || got[0].PauseAfter != 17 || got[0].ECNBefore != 5 || got[0].ECNAfter != 9 ||
		got[0].NoECN || got[1].Port != "sw Eth1/2" || got[1].PauseAfter != 4 || got[1].ECNAfter != 0 || !got[1].NoECN {
		t.Errorf("%+v", got)
	}
}

// On the mixed 2 × 2 golden fabric the dry run schedules every pair
// across leaves (leaf1's hosts write to leaf2's, then back) and says so.
func TestPlanFabric(t *testing.T) {
	inv, err := inventory.LoadFile("../../../testdata/golden/fabric-mixed/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &runner{inv: inv, o: Options{RDMA: true}, out: &out, gids: []int{3, 3, 3, 3}}
	r.plan()
	for _, want := range []string{
		"ib_write_bw: 4 host(s), 4 pair(s) in 2 round(s) of disjoint pairs; every host once as client and once as server\n" +
			"  leaf-spine fabric: 4 of 4 pair(s) across leaves (through a spine) first, 0 inside one leaf\n" +
			"  round 1: m11 → m21, m12 → m22\n" +
			"  round 2: m21 → m12, m22 → m11\n",
		"  e.g. in m21's worker: ib_write_bw ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}
