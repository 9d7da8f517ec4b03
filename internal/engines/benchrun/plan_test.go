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

// The dry run on hosts with several rails prints the rails' schedule: on
// the rail-optimized golden (4 hosts × 4 rails, rail r on leaf r) every
// rail in the same 2 rounds, each pair named with its rail, and per rail
// one pair's commands on the rail's device (mlx5_0 + r), GID index and
// out-of-band port; on the shared golden (both rails of a1, a2 on leaf-a,
// of b1, b2 on leaf-b) the rails cross leaves through the same leaves, so
// they run in two waves.
func TestPlanRails(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want []string
	}{
		{"rails", []string{
			"ib_write_bw: 4 host(s) × 4 rails, 16 pair(s) in 2 round(s) of disjoint pairs; on each rail every host once as client and once as server, rail r of a host only with rail r of another\n" +
				"  rails 0–3 together, in the same rounds: no two of them cross leaves through a leaf they share\n",
			"  round 1: ",
			"  round 1: gpu1 → gpu2 (rail 0), gpu3 → gpu4 (rail 0), gpu1 → gpu2 (rail 1)",
			"  round 2: gpu2 → gpu3 (rail 0), gpu4 → gpu1 (rail 0), gpu2 → gpu3 (rail 1), gpu4 → gpu1 (rail 1), gpu2 → gpu3 (rail 2), gpu4 → gpu1 (rail 2), gpu2 → gpu3 (rail 3), gpu4 → gpu1 (rail 3)\n",
			"  rail 0: e.g. in gpu2's worker: ib_write_bw -d mlx5_0 -i 1 -x 10 --report_gbits -F --tclass=106 -D 5 -p 18515\n",
			"  rail 3: e.g. in gpu2's worker: ib_write_bw -d mlx5_3 -i 1 -x 13 --report_gbits -F --tclass=106 -D 5 -p 18518\n",
			"env NCCL_DEBUG_SUBSYS=INIT,NET,ENV,GRAPH all_reduce_perf",
		}},
		{"rails-shared", []string{
			"ib_write_bw: 4 host(s) × 2 rails, 8 pair(s) in 4 round(s) of disjoint pairs;",
			"  in 2 waves, one after the other: rail 0 (rounds 1–2); rail 1 (rounds 3–4):",
			"  leaf-spine fabric: 8 of 8 pair(s) across leaves (through a spine) first, 0 inside one leaf\n",
			"  round 3: a1 → b1 (rail 1), a2 → b2 (rail 1)\n",
			"  rail 1: e.g. in b1's worker: ib_write_bw -d mlx5_1 -i 1 -x 11 ",
		}},
	} {
		inv, err := inventory.LoadFile("../../../testdata/golden/" + tc.dir + "/inventory.yaml")
		if err != nil {
			t.Fatal(err)
		}
		gids := make([][]int, len(inv.Hosts))
		for i := range gids {
			for r := range inv.RailCount() {
				gids[i] = append(gids[i], 10+r)
			}
		}
		var out bytes.Buffer
		r := &runner{inv: inv, o: Options{RDMA: true, NCCL: true}, out: &out, gids: []int{10, 10, 10, 10}, railGIDs: gids}
		r.plan()
		for _, want := range tc.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: no %q in\n%s", tc.dir, want, out.String())
			}
		}
	}
}
