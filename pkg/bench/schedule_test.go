package bench

import (
	"fmt"
	"slices"
	"testing"
)

// checkRounds asserts Rounds(n)'s properties: every host at least once as
// client and once as server, no host in two pairs of one round, no pair of
// a host with itself, the round count as documented.
func checkRounds(t testing.TB, n int) {
	rs := Rounds(n)
	if len(rs) != RoundCount(n) {
		t.Fatalf("n=%d: %d rounds, RoundCount says %d", n, len(rs), RoundCount(n))
	}
	want := 2
	if n%2 == 1 {
		want = 3
	}
	if n < 2 {
		want = 0
	}
	if len(rs) != want {
		t.Fatalf("n=%d: %d rounds, want %d", n, len(rs), want)
	}
	client := make([]int, n)
	server := make([]int, n)
	busy := make([]int, n) // the round a host was last seen in, +1
	pairs := 0
	for ri, r := range rs {
		if len(r) == 0 {
			t.Fatalf("n=%d: round %d is empty", n, ri)
		}
		for _, p := range r {
			if p.Client < 0 || p.Client >= n || p.Server < 0 || p.Server >= n || p.Client == p.Server {
				t.Fatalf("n=%d: bad pair %+v", n, p)
			}
			for _, h := range []int{p.Client, p.Server} {
				if busy[h] == ri+1 {
					t.Fatalf("n=%d: host %d twice in round %d", n, h, ri)
				}
				busy[h] = ri + 1
			}
			client[p.Client]++
			server[p.Server]++
			pairs++
		}
	}
	for h := 0; h < n && n >= 2; h++ {
		if client[h] < 1 || server[h] < 1 {
			t.Fatalf("n=%d: host %d is client %d, server %d times", n, h, client[h], server[h])
		}
	}
	if n >= 2 && pairs != n {
		t.Fatalf("n=%d: %d pairs, want %d (the ring)", n, pairs, n)
	}
}

// TestRoundsProperty checks every n from 0 to 4096.
func TestRoundsProperty(t *testing.T) {
	for n := 0; n <= 4096; n++ {
		checkRounds(t, n)
	}
	if Rounds(1) != nil || Rounds(0) != nil {
		t.Error("one host has no pairs")
	}
	if got := fmt.Sprint(Rounds(2)); got != "[[{0 1}] [{1 0}]]" {
		t.Errorf("n=2: %s, want each direction", got)
	}
	if got := fmt.Sprint(Rounds(3)); got != "[[{0 1}] [{1 2}] [{2 0}]]" {
		t.Errorf("n=3: %s", got)
	}
	if got := fmt.Sprint(Rounds(4)); got != "[[{0 1} {2 3}] [{1 2} {3 0}]]" {
		t.Errorf("n=4: %s", got)
	}
}

// TestRoundsCounts prints the schedule's size for the cluster sizes the
// issue names (go test -run RoundsCounts -v).
func TestRoundsCounts(t *testing.T) {
	for _, n := range []int{8, 64, 512, 4096} {
		rs := Rounds(n)
		pairs := 0
		for _, r := range rs {
			pairs += len(r)
		}
		t.Logf("%5d hosts: %d rounds, %d pairs, %d pairs in parallel per round", n, len(rs), pairs, len(rs[0]))
		if len(rs) != 2 || pairs != n || len(rs[0]) != n/2 {
			t.Errorf("n=%d: %d rounds %d pairs", n, len(rs), pairs)
		}
	}
}

func BenchmarkRounds4096(b *testing.B) {
	for b.Loop() {
		Rounds(4096)
	}
	b.ReportMetric(float64(len(Rounds(4096))), "rounds")
}

// leafLabels is hosts on leaves: sizes[k] hosts on "leafk+1", the leaves'
// hosts one after another (inventory order).
func leafLabels(sizes ...int) []string {
	var out []string
	for k, n := range sizes {
		for range n {
			out = append(out, fmt.Sprintf("leaf%d", k+1))
		}
	}
	return out
}

// checkLeafRounds asserts RoundsByLeaf(leaves) keeps every property of
// Rounds (every host once as client and once as server, disjoint rounds,
// RoundCount rounds, n pairs), that the pairs inside one leaf are the
// fewest any ring allows, max(0, 2m − n), and that within each round they
// come after the pairs across leaves. It returns the pairs inside a leaf.
func checkLeafRounds(t testing.TB, leaves []string) int {
	t.Helper()
	n := len(leaves)
	rs := RoundsByLeaf(leaves)
	if len(rs) != RoundCount(n) {
		t.Fatalf("%v: %d rounds, want %d", leaves, len(rs), RoundCount(n))
	}
	client, server := make([]int, n), make([]int, n)
	inside, pairs := 0, 0
	for ri, r := range rs {
		busy := map[int]bool{}
		seenInside := false
		for _, p := range r {
			if p.Client == p.Server || busy[p.Client] || busy[p.Server] {
				t.Fatalf("%v: round %d: %+v", leaves, ri, r)
			}
			busy[p.Client], busy[p.Server] = true, true
			client[p.Client]++
			server[p.Server]++
			pairs++
			if leaves[p.Client] == leaves[p.Server] {
				inside++
				seenInside = true
			} else if seenInside {
				t.Fatalf("%v: round %d has a pair across leaves after one inside a leaf: %+v", leaves, ri, r)
			}
		}
	}
	for h := range n {
		if n >= 2 && (client[h] != 1 || server[h] != 1) {
			t.Fatalf("%v: host %d is client %d, server %d times", leaves, h, client[h], server[h])
		}
	}
	if n >= 2 && pairs != n {
		t.Fatalf("%v: %d pairs, want %d", leaves, pairs, n)
	}
	size := map[string]int{}
	m := 0
	for _, l := range leaves {
		size[l]++
		m = max(m, size[l])
	}
	if n >= 2 {
		if want := max(0, 2*m-n); n > 2 && inside != want || n == 2 && inside != 2*(m-1) {
			t.Fatalf("%v: %d pairs inside a leaf, the fewest possible is %d", leaves, inside, want)
		}
	}
	return inside
}

// TestRoundsByLeafFabrics: 2 leaves × 2 hosts cross in every pair; 3 + 2
// hosts (unbalanced) leave one pair inside leaf1, the odd ring's closing
// pair, alone in the last round; 5 + 1 leave four; 32 leaves × 16 hosts
// cross in all 512 pairs.
func TestRoundsByLeafFabrics(t *testing.T) {
	two := leafLabels(2, 2) // h11 h12 on leaf1, h21 h22 on leaf2
	if got := fmt.Sprint(RoundsByLeaf(two)); got != "[[{0 2} {1 3}] [{2 1} {3 0}]]" {
		t.Errorf("2 × 2: %s", got)
	}
	if got := checkLeafRounds(t, two); got != 0 {
		t.Errorf("2 × 2: %d pairs inside a leaf", got)
	}
	uneven := leafLabels(3, 2)
	if got := fmt.Sprint(RoundsByLeaf(uneven)); got != "[[{0 3} {1 4}] [{3 1} {4 2}] [{2 0}]]" {
		t.Errorf("3 + 2: %s", got)
	}
	if got := checkLeafRounds(t, uneven); got != 1 {
		t.Errorf("3 + 2: %d pairs inside a leaf, want 1", got)
	}
	lopsided := leafLabels(5, 1)
	if got := fmt.Sprint(RoundsByLeaf(lopsided)); got != "[[{0 5} {1 2} {3 4}] [{5 1} {2 3} {4 0}]]" {
		t.Errorf("5 + 1: %s", got)
	}
	if got := checkLeafRounds(t, lopsided); got != 4 {
		t.Errorf("5 + 1: %d pairs inside a leaf, want 4", got)
	}
	big := make([]int, 32)
	for k := range big {
		big[k] = 16
	}
	labels := leafLabels(big...)
	if got := checkLeafRounds(t, labels); got != 0 {
		t.Errorf("32 × 16: %d of 512 pairs inside a leaf, want 0", got)
	}
	// Round robin: host k of leaf l writes to host k of leaf l+1, and
	// leaf32's to the next host of leaf1.
	rs := RoundsByLeaf(labels)
	if p := rs[0][0]; labels[p.Client] != "leaf1" || labels[p.Server] != "leaf2" || p.Client != 0 || p.Server != 16 {
		t.Errorf("32 × 16: first pair %+v (%s → %s)", p, labels[p.Client], labels[p.Server])
	}
	t.Logf("32 leaves × 16 hosts: %d rounds of %d and %d pairs, 512 of 512 across leaves", len(rs), len(rs[0]), len(rs[1]))
}

// TestRoundsByLeafSingleSwitch: one leaf, or none, is Rounds itself.
func TestRoundsByLeafSingleSwitch(t *testing.T) {
	for n := 0; n <= 64; n++ {
		for _, label := range []string{"", "leaf1"} {
			leaves := make([]string, n)
			for i := range leaves {
				leaves[i] = label
			}
			if got, want := fmt.Sprint(RoundsByLeaf(leaves)), fmt.Sprint(Rounds(n)); got != want {
				t.Fatalf("n=%d %q: %s, Rounds %s", n, label, got, want)
			}
		}
	}
}

// TestRoundsByLeafEveryShape checks every way of spreading 2 to 12 hosts
// over leaves (hosts of a leaf one after another, or the leaves' hosts
// interleaved in the inventory): the fewest pairs inside a leaf.
func TestRoundsByLeafEveryShape(t *testing.T) {
	shapes := 0
	var parts func(left, maxPart int, acc []int)
	parts = func(left, maxPart int, acc []int) {
		if left == 0 {
			if len(acc) < 2 {
				return
			}
			labels := leafLabels(acc...)
			checkLeafRounds(t, labels)
			rev := slices.Clone(acc)
			slices.Reverse(rev)
			checkLeafRounds(t, leafLabels(rev...))
			mixed := slices.Clone(labels) // a deterministic shuffle
			for i := range mixed {
				j := (i*7 + 3) % len(mixed)
				mixed[i], mixed[j] = mixed[j], mixed[i]
			}
			checkLeafRounds(t, mixed)
			shapes++
			return
		}
		for p := min(left, maxPart); p >= 1; p-- {
			parts(left-p, p, append(acc, p))
		}
	}
	for n := 2; n <= 12; n++ {
		parts(n, n, nil)
	}
	t.Logf("%d shapes", shapes)
}
