package bench

import "slices"

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

// RoundsByLeaf schedules ib_write_bw as [Rounds] does, over hosts on a
// leaf-spine fabric: leaves[i] is host i's leaf (inventory order; "" for
// a host outside a fabric). A pair inside one leaf is switched by that
// leaf alone and never touches a spine or an uplink, so it cannot show a
// fabric shortfall; the ring is therefore ordered across leaves first
// ([LeafRing]): consecutive hosts sit on different leaves wherever the
// leaves' sizes allow, and nearly every pair crosses a spine. The
// guarantees of Rounds hold unchanged (the same ring, relabelled): every
// host once as client and once as server, rounds of disjoint pairs, the
// same round count (RoundCount(len(leaves))). Within each round the pairs
// across leaves come first; the pairs inside one leaf that remain (a leaf
// with more than half of the hosts) are at the end of the ring, so they
// fall last in their rounds, and an odd ring's closing pair, alone in the
// third round, is one of them when any remains.
//
// With fewer than two distinct leaves (a single-switch inventory, all
// "") the schedule is exactly Rounds(len(leaves)).
func RoundsByLeaf(leaves []string) [][]Pair {
	rounds := Rounds(len(leaves))
	ring := LeafRing(leaves)
	if ring == nil {
		return rounds
	}
	cross := func(p Pair) bool { return leaves[p.Client] != leaves[p.Server] }
	for _, r := range rounds {
		for k, p := range r {
			r[k] = Pair{ring[p.Client], ring[p.Server]}
		}
		slices.SortStableFunc(r, func(a, b Pair) int {
			switch ca, cb := cross(a), cross(b); {
			case ca && !cb:
				return -1
			case cb && !ca:
				return 1
			}
			return 0
		})
	}
	return rounds
}

// LeafRing orders hosts for [RoundsByLeaf]: ring[k] is the host at ring
// position k, leaves[i] host i's leaf. It interleaves the leaves: at each
// position it takes, from a leaf other than the previous position's, the
// next host (inventory order) of the leaf with the most hosts left; ties
// go to the first host's leaf (so that the ring can close across leaves),
// then to the leaf next after the previous one in order of first
// appearance (round robin: equal leaves give leaf1, leaf2, …, leaf1, …).
// Only when a single leaf has hosts left do consecutive positions share a
// leaf. The ring then has max(0, 2m − n) pairs inside one leaf, m the
// largest leaf's host count, n the hosts: the fewest any ring can have
// (a leaf with more than half of the ring's positions must put some of
// its hosts side by side). nil when fewer than two distinct leaves appear
// (then the ring is the inventory order).
func LeafRing(leaves []string) []int {
	var names []string
	var queue [][]int
	at := map[string]int{}
	for i, l := range leaves {
		g, ok := at[l]
		if !ok {
			g = len(names)
			at[l] = g
			names = append(names, l)
			queue = append(queue, nil)
		}
		queue[g] = append(queue[g], i)
	}
	if len(names) < 2 {
		return nil
	}
	ring := make([]int, 0, len(leaves))
	prev, first := -1, -1
	for len(ring) < len(leaves) {
		best := -1
		for k := range names {
			g := k
			if prev >= 0 {
				g = (prev + 1 + k) % len(names) // round robin from the previous leaf
			}
			if g == prev || len(queue[g]) == 0 {
				continue
			}
			if best < 0 || len(queue[g]) > len(queue[best]) || len(queue[g]) == len(queue[best]) && g == first {
				best = g
			}
		}
		if best < 0 {
			best = prev // only the previous leaf has hosts left
		}
		if first < 0 {
			first = best
		}
		ring = append(ring, queue[best][0])
		queue[best] = queue[best][1:]
		prev = best
	}
	return ring
}
