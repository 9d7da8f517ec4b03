package bench

// Pair is one ib_write_bw run: Client writes to Server. Both are host
// indexes (0-based, inventory order).
type Pair struct {
	Client, Server int
}

// Rounds schedules ib_write_bw over n hosts along the ring i → i+1 mod n:
// every host runs once as client and once as server, against different
// peers, so one bad host shows as two slow pairs that share it. The n ring
// pairs are split into rounds of disjoint pairs (no host in two pairs of a
// round) that run in parallel:
//
//   - n < 2: no pairs (nothing to measure; the result is nil);
//   - n = 2: 2 rounds, 0 → 1 then 1 → 0 (each direction);
//   - n even: 2 rounds, the pairs from even hosts, then from odd hosts;
//   - n odd: 3 rounds, the pairs from even hosts but the last, those from
//     odd hosts, then n-1 → 0 alone (an odd ring needs 3 colours).
//
// So the round count is constant, never above 3, whatever n ([RoundCount]).
func Rounds(n int) [][]Pair {
	if n < 2 {
		return nil
	}
	if n == 2 {
		return [][]Pair{{{0, 1}}, {{1, 0}}}
	}
	var even, odd []Pair
	for i := 0; i < n; i++ {
		p := Pair{i, (i + 1) % n}
		if n%2 == 1 && i == n-1 {
			continue // the closing pair gets its own round
		}
		if i%2 == 0 {
			even = append(even, p)
		} else {
			odd = append(odd, p)
		}
	}
	rounds := [][]Pair{even, odd}
	if n%2 == 1 {
		rounds = append(rounds, []Pair{{n - 1, 0}})
	}
	return rounds
}

// RoundCount is len(Rounds(n)): 0 for n < 2, 2 for even n, 3 for odd n ≥ 3.
func RoundCount(n int) int {
	switch {
	case n < 2:
		return 0
	case n%2 == 0:
		return 2
	default:
		return 3
	}
}
