package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RailPair is one ib_write_bw run on one rail: rail Rail of host Client
// writes to rail Rail of host Server. Hosts are indexes (0-based,
// inventory order), rails too (0-based, rail order). A rail's port only
// ever meets the same rail's port of another host: rail r of one host
// with rail r of another, never rail r with rail s.
type RailPair struct {
	Rail           int
	Client, Server int
}

// RailWaves groups the rails whose ib_write_bw pairs run at the same time:
// leaves[r][i] is host i's leaf on rail r ("" outside a fabric, as for
// [RoundsByLeaf]), waves[w] the rails of wave w in rail order. Each rail's
// pairs are RoundsByLeaf(leaves[r]).
//
// Two pairs on different rails share no port: each rail has its own NIC
// port (PF) on every host and its own port on its leaf. They can only
// meet on a leaf's uplinks: a leaf forwards between its own ports without
// them, and only a pair across leaves takes an uplink. So rails run in
// the same wave unless both have a pair across leaves with an end on a
// leaf they share (several rails on one leaf, and hosts of the rails on
// other leaves too): then both rails' flows would load that leaf's
// uplinks at once, more than one rail's pairs load them, and a slow pair
// across leaves could be the bench's own crowding. Such rails go to
// separate waves (greedily, in rail order: each rail to the first wave
// holding no rail it shares such a leaf with). A rail-optimized fabric
// (rail r of every host on leaf r), one leaf carrying several rails
// whose pairs all stay inside it, and a single switch give one wave:
// every rail at once, as NCCL drives them.
func RailWaves(leaves [][]string) [][]int {
	return railWaves(leaves, railSchedules(leaves))
}

// RailRounds schedules ib_write_bw over hosts with several rails: the
// pairs of each rail are [RoundsByLeaf] of its leaves (leaves[r][i] is
// host i's leaf on rail r), so on each rail every host runs once as
// client and once as server, against different peers, and within a round
// no host's port of that rail is in two pairs. The rails of one wave
// ([RailWaves]) run in the same rounds, round k of each rail together
// (rail order, then RoundsByLeaf's order); waves follow one another. A
// round is thus disjoint by (host, rail): a host may be in one pair per
// rail, each through its own port. The round count is the waves' count
// times RoundCount (2 for an even host count, 3 for an odd one): 2 on a
// rail-optimized fabric of any size.
//
// One rail gives exactly RoundsByLeaf(leaves[0]), each pair on rail 0;
// no rails, or fewer than two hosts, give nil.
func RailRounds(leaves [][]string) [][]RailPair {
	per := railSchedules(leaves)
	var out [][]RailPair
	for _, wave := range railWaves(leaves, per) {
		n := 0
		for _, r := range wave {
			n = max(n, len(per[r]))
		}
		for k := 0; k < n; k++ {
			var round []RailPair
			for _, r := range wave {
				if k >= len(per[r]) {
					continue
				}
				for _, p := range per[r][k] {
					round = append(round, RailPair{Rail: r, Client: p.Client, Server: p.Server})
				}
			}
			if len(round) > 0 {
				out = append(out, round)
			}
		}
	}
	return out
}

// railSchedules is RoundsByLeaf of each rail.
func railSchedules(leaves [][]string) [][][]Pair {
	per := make([][][]Pair, len(leaves))
	for r := range leaves {
		per[r] = RoundsByLeaf(leaves[r])
	}
	return per
}

// railWaves assigns the rails to waves (RailWaves), per being each rail's
// rounds.
func railWaves(leaves [][]string, per [][][]Pair) [][]int {
	// crossAt[r]: the leaves where a pair of rail r across leaves ends
	crossAt := make([][]string, len(leaves))
	for r := range leaves {
		for _, round := range per[r] {
			for _, p := range round {
				a, b := leaves[r][p.Client], leaves[r][p.Server]
				if a == "" || b == "" || a == b {
					continue
				}
				for _, l := range []string{a, b} {
					if !slices.Contains(crossAt[r], l) {
						crossAt[r] = append(crossAt[r], l)
					}
				}
			}
		}
	}
	conflict := func(r, s int) bool {
		for _, l := range crossAt[r] {
			if slices.Contains(crossAt[s], l) {
				return true
			}
		}
		return false
	}
	var waves [][]int
	for r := range leaves {
		placed := false
		for w := range waves {
			if !slices.ContainsFunc(waves[w], func(s int) bool { return conflict(r, s) }) {
				waves[w] = append(waves[w], r)
				placed = true
				break
			}
		}
		if !placed {
			waves = append(waves, []int{r})
		}
	}
	return waves
}

// CheckRDMARail is the summary of the ib_write_bw pairs of one rail
// ([JudgeRailPairs]).
const CheckRDMARail = "rdma-rail"

// RailPairs is the pairs of one rail, in the JSON document
// (Verdict.RailPairs).
type RailPairs struct {
	// Rail is the rail (0-based, rail order).
	Rail int `json:"rail"`
	// Leaves are the leaves its pairs' hosts are on, in order of first
	// appearance; absent outside a fabric.
	Leaves []string `json:"leaves,omitempty"`
	// Pairs is how many pairs ran on it; Measured how many gave a BW
	// average; Slow how many fell below the pass line.
	Pairs    int `json:"pairs"`
	Measured int `json:"measured"`
	Slow     int `json:"slow"`
	// MinGbps and MedianGbps are the lowest and the median BW average of
	// the measured pairs, Gb/s (absent when none was measured).
	MinGbps    *float64 `json:"min_gbps,omitempty"`
	MedianGbps *float64 `json:"median_gbps,omitempty"`
}

// JudgeRailPairs judges ib_write_bw run rail by rail ([RailRounds]): each
// run's Rail names its rail, its hosts' ports and leaves are that rail's,
// and it is judged at its rail's link speed (e.Rails[r].LinkGbps). On a
// cluster of one rail (e.Rails with fewer than two rails, every run on
// rail 0) it is [JudgePairsFabric], verdict for verdict.
//
// With several rails: each pair's verdicts, their Subject
// "client → server (rail r)" and Rail set; the CheckRDMALeafPair verdicts
// of JudgePairsFabric (the leaves are the rails' own); one CheckRDMARail
// verdict per rail in rail order ("rail 1: 4 pair(s) on leaf2, min 182.10
// / median 190.00 Gb/s"), failed when one of its pairs is below its line,
// with the causes JudgePairsFabric gives for those pairs alone (the hosts
// and ports its slow pairs share, the fabric between its leaves, the
// counters); and the CheckRDMAPairs summary over every rail, whose causes
// compare the rails: slow pairs on some rails while every pair of the
// others passes points at the slow rails' own path (their ports, cables,
// leaves), not at the hosts, which carry their other rails at the line;
// a host in a slow pair on every rail points at that host as a whole (the
// PCIe root complex or memory its rails' NICs share, the VM's placement),
// not at one NIC.
func JudgeRailPairs(runs []PairRun, e Expect, counters []PortCounters, uplinks []FabricUplink) []Verdict {
	multi := e.multiRail()
	for _, r := range runs {
		if r.Rail != 0 {
			multi = true
		}
	}
	if !multi {
		return JudgePairsFabric(runs, e, counters, uplinks)
	}
	rails := make([]int, 0, len(e.Rails))
	for r := range e.Rails {
		rails = append(rails, r)
	}
	for _, r := range runs {
		if !slices.Contains(rails, r.Rail) {
			rails = append(rails, r.Rail)
		}
	}
	slices.Sort(rails)
	expect := func(r PairRun) Expect { return e.forRail(r.Rail) }
	vs, slow, fine, unjudged := judgeEachPair(runs, expect, func(v *Verdict, r PairRun) {
		n := r.Rail
		v.Subject, v.Rail = railPairName(r), &n
	})
	vs = append(vs, leafPairVerdicts(runs, expect)...)
	for _, r := range rails {
		vs = append(vs, railVerdict(r, runs, e.forRail(r), counters, uplinks))
	}
	sum := pairsSummary(runs, slow, unjudged, railPairName)
	if sum.Status == StatusFail {
		sum.Causes = railSummaryCauses(rails, runs, slow, fine)
	}
	return append(vs, sum)
}

// railPairName is a pair's subject on a multi-rail cluster:
// "client → server (rail r)".
func railPairName(r PairRun) string { return pairName(r) + " (rail " + strconv.Itoa(r.Rail) + ")" }

// railVerdict is the CheckRDMARail verdict of rail r's runs, judged
// against e (the rail's expectation).
func railVerdict(r int, runs []PairRun, e Expect, counters []PortCounters, uplinks []FabricUplink) Verdict {
	var mine []PairRun
	rp := RailPairs{Rail: r}
	for _, x := range runs {
		if x.Rail != r {
			continue
		}
		mine = append(mine, x)
		for _, l := range []string{x.Client.Leaf, x.Server.Leaf} {
			if l != "" && !slices.Contains(rp.Leaves, l) {
				rp.Leaves = append(rp.Leaves, l)
			}
		}
	}
	rail := r
	pl := PerftestPassLine(e.link(), false)
	v := Verdict{Check: CheckRDMARail, Subject: "rail " + strconv.Itoa(r), Rail: &rail, RailPairs: &rp,
		Expected: fmt.Sprintf("every pair ≥ %s Gb/s (%s)", trimFloat(pl.Value), pl.Rule)}
	var slow, fine []PairRun
	var values []float64
	errs := 0
	for _, x := range mine {
		rp.Pairs++
		if x.Report == nil {
			errs++
			continue
		}
		bw := judgePerftestBW(x.Report, e)
		if bw.Measured == nil {
			errs++
			continue
		}
		values = append(values, bw.Measured.Value)
		rp.Measured++
		switch bw.Status {
		case StatusFail:
			rp.Slow++
			slow = append(slow, x)
		case StatusPass:
			fine = append(fine, x)
		}
	}
	found := fmt.Sprintf("%d pair(s)", rp.Pairs)
	if len(rp.Leaves) > 0 {
		found += " on " + strings.Join(rp.Leaves, ", ")
	}
	if len(values) > 0 {
		sorted := slices.Clone(values)
		slices.Sort(sorted)
		lo, med := sorted[0], sorted[len(sorted)/2]
		if len(sorted)%2 == 0 {
			med = round2((sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2)
		}
		rp.MinGbps, rp.MedianGbps = &lo, &med
		v.Measured = &Measure{Value: lo, Unit: "Gb/s", At: fmt.Sprintf("the lowest BW average of %d pair(s)", len(sorted))}
		found += fmt.Sprintf(", min %s / median %s Gb/s", fixed2(lo), fixed2(med))
	}
	if rp.Slow > 0 {
		found += fmt.Sprintf(", %d below the line", rp.Slow)
	}
	if errs > 0 {
		found += fmt.Sprintf(", %d not measured", errs)
	}
	v.Found = found
	switch {
	case rp.Pairs == 0:
		v.Status, v.Found = StatusTooShort, "no pair ran on this rail (it needs two hosts)"
	case rp.Slow > 0:
		v.Status = StatusFail
		v.Causes = pairCausesOn(r, slow, fine, counters, uplinks)
	case errs > 0:
		v.Status = StatusError
		v.Causes = []Cause{{Layer: LayerBenchmark,
			Finding: fmt.Sprintf("%d pair(s) of rail %d gave no BW average: their own verdicts above say why", errs, r),
			Fix:     "fix what those verdicts name and rerun the bench"}}
	default:
		v.Status, v.Expected = StatusPass, ""
	}
	return v
}

// railSummaryCauses compares the rails' slow pairs (slow, fine: every
// rail's runs below and at the line).
func railSummaryCauses(rails []int, runs, slow, fine []PairRun) []Cause {
	if len(fine) == 0 {
		return []Cause{{Layer: LayerFabric,
			Finding: "every pair on every rail is below the line: a cause common to the cluster (link speed, MTU, PFC/ECN configuration), not one host or one rail",
			Fix:     "compare each rail's link speed with its ports' speed and run `rdggen check --target switch,hosts`"}}
	}
	slowHosts := map[int][]string{} // rail → hosts of its slow pairs
	var slowRails []int
	for _, x := range slow {
		if !slices.Contains(slowRails, x.Rail) {
			slowRails = append(slowRails, x.Rail)
		}
		for _, h := range []string{x.Client.Host, x.Server.Host} {
			if !slices.Contains(slowHosts[x.Rail], h) {
				slowHosts[x.Rail] = append(slowHosts[x.Rail], h)
			}
		}
	}
	slices.Sort(slowRails)
	ran, passed := map[int]int{}, map[int]int{} // rail → its runs, those at the line
	for _, x := range runs {
		ran[x.Rail]++
	}
	for _, x := range fine {
		passed[x.Rail]++
	}
	var passRails []int // rails every pair of which passed
	for _, r := range rails {
		if ran[r] > 0 && passed[r] == ran[r] {
			passRails = append(passRails, r)
		}
	}
	if len(passRails) > 0 {
		finding := fmt.Sprintf("the slow pairs are on %s only, while every pair of %s passes: the hosts carry their other rails at the line, so what is slow is the slow rails' own path (those rails' PFs and VFs, cables, switch ports or leaves), not the hosts",
			railList(slowRails), railList(passRails))
		if l := onlyLeaf(slow, runs, passRails); len(l) > 0 {
			finding += "; every slow pair has an end on " + strings.Join(l, ", ") + ", which no passing rail uses"
		}
		return []Cause{{Layer: LayerFabric, Finding: finding,
			Fix: "read the rdma-rail verdicts of those rails for the hosts and switch ports their slow pairs share; check those ports (rdggen check --target switch) and the rails' VFs (rdggen check --target hosts)"}}
	}
	// every rail that ran has slow pairs: the hosts every slow pair shares,
	// else those with no pair at the line, that are slow on every rail
	hostsOfPair := func(x PairRun) []string { return []string{x.Client.Host, x.Server.Host} }
	var common []string
	for i, x := range slow {
		if i == 0 {
			common = hostsOfPair(x)
			continue
		}
		common = slices.DeleteFunc(common, func(h string) bool { return !slices.Contains(hostsOfPair(x), h) })
	}
	if len(common) == 0 {
		common = allSlow(slow, fine, hostsOfPair)
	}
	common = slices.DeleteFunc(common, func(h string) bool {
		return slices.ContainsFunc(slowRails, func(r int) bool { return !slices.Contains(slowHosts[r], h) })
	})
	if len(slowRails) > 1 && len(common) > 0 {
		return []Cause{{Layer: LayerFabric, Hosts: common,
			Finding: fmt.Sprintf("%s %s in a slow pair on every rail (%s), while other pairs pass: that host as a whole rather than one NIC — the PCIe root complex or memory its rails' NICs share (the rails ran at the same time), or the VM's placement on the host's NUMA nodes",
				Names(common), isAre(len(common)), railList(slowRails)),
			Fix: "run `rdggen check --target esxi,hosts` (the NUMA node of each VF and GPU, the VM's memory) on " + Names(common) + "; then rerun the bench"}}
	}
	return []Cause{{Layer: LayerFabric,
		Finding: fmt.Sprintf("every rail has slow pairs (%s) and no host is in a slow pair on all of them: each rail's own causes are in its rdma-rail verdict", railList(slowRails)),
		Fix:     "read each rail's rdma-rail verdict for the hosts and ports its slow pairs share"}}
}

// onlyLeaf is the leaves every slow pair has an end on that no run of a
// passing rail uses.
func onlyLeaf(slow, runs []PairRun, passRails []int) []string {
	var common []string
	for i, x := range slow {
		ends := []string{}
		for _, l := range []string{x.Client.Leaf, x.Server.Leaf} {
			if l != "" && !slices.Contains(ends, l) {
				ends = append(ends, l)
			}
		}
		if i == 0 {
			common = ends
			continue
		}
		common = slices.DeleteFunc(common, func(l string) bool { return !slices.Contains(ends, l) })
	}
	return slices.DeleteFunc(common, func(l string) bool {
		return slices.ContainsFunc(runs, func(x PairRun) bool {
			return slices.Contains(passRails, x.Rail) && (x.Client.Leaf == l || x.Server.Leaf == l)
		})
	})
}

// railList is "rail 2" or "rails 0, 1, 3".
func railList(rails []int) string {
	s := make([]string, len(rails))
	for i, r := range rails {
		s[i] = strconv.Itoa(r)
	}
	if len(rails) == 1 {
		return "rail " + s[0]
	}
	return "rails " + strings.Join(s, ", ")
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
