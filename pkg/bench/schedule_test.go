package bench

import (
	"fmt"
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
