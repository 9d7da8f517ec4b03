package bench

import (
	"fmt"
	"slices"
	"strings"
)

// PairRun is one ib_write_bw pair's outcome, for JudgePairs.
type PairRun struct {
	// Client and Server are the hosts (and their switch ports).
	Client, Server HostPort
	// Report is the client side's report; nil when the run produced
	// nothing (Err says why).
	Report *Perftest
	// Err is why the pair has no report ("" otherwise), e.g. an SSH
	// failure or a timeout.
	Err string
	// GIDIndex, when set, is the GID index the client's header must show:
	// the RoCE v2 GID of its data address, as its GID table holds it; nil
	// uses the Expect's.
	GIDIndex *int
	// Rail is the rail both hosts' ports are on (0-based, rail order);
	// Client and Server are then that rail's ports and leaves. Every pair
	// of a cluster without rails is on rail 0. [JudgeRailPairs] judges
	// the pairs rail by rail.
	Rail int
}

// PortCounters are a switch port's RoCE counters read before and after the
// pairs ran (the switch check reads both: PFC pause frames on the RoCE
// priority, rx + tx, and ECN-marked packets on its traffic class).
type PortCounters struct {
	// Port names the port as HostPort.Port does: "swx-mld-1-2 Eth1/3".
	Port                    string
	PauseBefore, PauseAfter int64
	ECNBefore, ECNAfter     int64
	// NoECN says the port's ECN marks were not read (a Cumulus Linux
	// port: see internal/engines/nvueapply's Counters); ECNBefore and ECNAfter
	// are then 0 and mean nothing.
	NoECN bool
}

// JudgePairs judges ib_write_bw pair by pair (each pair's verdicts from
// [JudgePerftest], its Subject "client → server") and adds a CheckRDMAPairs
// summary: when some pairs fall below the line and others do not, the
// hosts and switch ports that every slow pair shares (or, failing that,
// those all of whose pairs are slow), and, from counters, whether PFC
// pauses or ECN marks rose on those ports during the run. It is
// [JudgePairsFabric] without the fabric's uplinks.
func JudgePairs(runs []PairRun, e Expect, counters []PortCounters) []Verdict {
	return JudgePairsFabric(runs, e, counters, nil)
}

// JudgePairsFabric is [JudgePairs] on a leaf-spine fabric. When the runs'
// hosts carry their leaves (HostPort.Leaf), one CheckRDMALeafPair verdict
// per (client leaf, server leaf), in order of first appearance, comes
// before the summary: its pairs, the lowest and the median BW average
// ("leaf1 → leaf2: 4 pair(s), min 92.10 / median 95.00 Gb/s"), failed when
// one of its pairs is below the line. When every slow pair crosses
// leaves, and either no host explains them or no pair across leaves
// passed, a cause names the fabric between those leaves: their uplinks
// (each leaf's port and the spine's port at its other end, from uplinks),
// the spines, and what counters show on those ports. It says which the
// data shows: that the pairs inside one leaf passed (so the hosts' NICs
// and host ports work and the path between leaves does not), or that no
// pair inside a leaf ran (so the data cannot tell the fabric from the
// hosts). A pair inside one leaf never reaches a spine, so its result
// says nothing of the uplinks.
func JudgePairsFabric(runs []PairRun, e Expect, counters []PortCounters, uplinks []FabricUplink) []Verdict {
	same := func(PairRun) Expect { return e }
	vs, slow, fine, unjudged := judgeEachPair(runs, same, func(v *Verdict, r PairRun) { v.Subject = pairName(r) })
	sum := pairsSummary(runs, slow, unjudged, pairName)
	if sum.Status == StatusFail {
		sum.Causes = pairCauses(slow, fine, counters, uplinks)
	}
	vs = append(vs, leafPairVerdicts(runs, same)...)
	return append(vs, sum)
}

// pairName is a pair's subject on one rail: "client → server".
func pairName(r PairRun) string { return r.Client.Host + " → " + r.Server.Host }

// judgeEachPair judges each run against expect(run), label naming its
// verdicts (their Subject), and sorts the runs by their bandwidth
// verdict: slow (below the line), fine (at it), and how many could not be
// judged.
func judgeEachPair(runs []PairRun, expect func(PairRun) Expect, label func(*Verdict, PairRun)) (vs []Verdict, slow, fine []PairRun, unjudged int) {
	for _, r := range runs {
		if r.Report == nil {
			v := Verdict{Check: CheckRDMABandwidth, Status: StatusError, Found: "no report: " + orNothing(r.Err)}
			label(&v, r)
			vs = append(vs, v)
			unjudged++
			continue
		}
		pe := expect(r)
		if r.GIDIndex != nil {
			pe.GIDIndex = *r.GIDIndex
		}
		pv := JudgePerftest(r.Report, pe)
		for i := range pv {
			label(&pv[i], r)
		}
		vs = append(vs, pv...)
		switch pv[0].Status {
		case StatusFail:
			slow = append(slow, r)
		case StatusPass:
			fine = append(fine, r)
		default:
			unjudged++
		}
	}
	return vs, slow, fine, unjudged
}

// pairsSummary is the CheckRDMAPairs verdict over runs, without causes.
func pairsSummary(runs, slow []PairRun, unjudged int, name func(PairRun) string) Verdict {
	sum := Verdict{Check: CheckRDMAPairs, Expected: "every pair at its pass line"}
	total := len(runs)
	switch {
	case total == 0:
		sum.Status, sum.Found = StatusTooShort, "no pairs ran (a cluster of one host has none)"
	case len(slow) == 0 && unjudged == 0:
		sum.Status, sum.Found = StatusPass, fmt.Sprintf("all %d pair(s) at the pass line", total)
	case len(slow) == 0:
		sum.Status = StatusError
		sum.Found = fmt.Sprintf("%d of %d pair(s) could not be judged", unjudged, total)
	default:
		sum.Status = StatusFail
		var names []string
		for _, r := range slow {
			names = append(names, name(r))
		}
		sum.Found = fmt.Sprintf("%d of %d pair(s) below the line: %s", len(slow), total, Names(names))
		sum.named(names)
	}
	return sum
}

func pairCauses(slow, fine []PairRun, counters []PortCounters, uplinks []FabricUplink) []Cause {
	return pairCausesOn(-1, slow, fine, counters, uplinks)
}

// pairCausesOn is pairCauses of the pairs of one rail (rail ≥ 0), or of a
// cluster without rails (rail -1).
func pairCausesOn(rail int, slow, fine []PairRun, counters []PortCounters, uplinks []FabricUplink) []Cause {
	var cs []Cause
	switch {
	case len(fine) > 0:
	case rail < 0:
		cs = append(cs, Cause{Layer: LayerFabric,
			Finding: "every pair is below the line: a cause common to the cluster (link speed, MTU, PFC/ECN configuration), not one host",
			Fix:     "compare --link-gbps with the ports' speed and run `rdggen check --target switch,hosts`"})
	default:
		cs = append(cs, Cause{Layer: LayerFabric,
			Finding: fmt.Sprintf("every pair of rail %d is below the line: a cause common to the rail (its ports' link speed, MTU, PFC/ECN configuration on its leaves), not one host", rail),
			Fix:     "compare the rail's link speed with its ports' speed and run `rdggen check --target switch,hosts`"})
	}
	// What every slow pair shares.
	shared := func(get func(PairRun) []string) []string {
		var common []string
		for i, r := range slow {
			cur := get(r)
			if i == 0 {
				common = slices.Clone(cur)
				continue
			}
			common = slices.DeleteFunc(common, func(x string) bool { return !slices.Contains(cur, x) })
		}
		return common
	}
	hostsOfPair := func(r PairRun) []string { return []string{r.Client.Host, r.Server.Host} }
	portsOfPair := func(r PairRun) []string {
		var ps []string
		for _, p := range []string{r.Client.Port, r.Server.Port} {
			if p != "" {
				ps = append(ps, p)
			}
		}
		return ps
	}
	var hosts, ports []string
	switch {
	case len(fine) == 0:
	case len(slow) == 1:
		r := slow[0]
		hosts, ports = hostsOfPair(r), portsOfPair(r)
		cs = append(cs, Cause{Layer: LayerFabric, Hosts: hosts,
			Finding: fmt.Sprintf("only %s → %s is slow while both hosts' other pairs pass: %s's transmit path or %s's receive path (NIC, cable, switch port %s)",
				r.Client.Host, r.Server.Host, r.Client.Host, r.Server.Host, orNothing(strings.Join(ports, ", "))),
			Fix: "rerun the pair both ways; check the ports' speed and errors (rdggen check --target switch) and the hosts' RDMA ports (rdggen check --target hosts)"})
	default:
		hosts, ports = shared(hostsOfPair), shared(portsOfPair)
		if len(hosts) == 0 {
			// No single host in all of them: those whose every pair is slow.
			hosts, ports = allSlow(slow, fine, hostsOfPair), allSlow(slow, fine, portsOfPair)
		}
		if len(hosts) > 0 {
			what := "the slow pairs share " + Names(hosts)
			if len(ports) > 0 {
				what += " (switch port " + Names(ports) + ")"
			}
			cs = append(cs, Cause{Layer: LayerFabric, Hosts: hosts,
				Finding: what + ", while the other pairs pass: that host's NIC, cable or switch port",
				Fix:     "check the port's speed and errors (rdggen check --target switch), the host's VF and its RDMA port (rdggen check --target hosts)"})
		} else {
			cs = append(cs, Cause{Layer: LayerFabric,
				Finding: "the slow pairs share no host: a path between switches or a congested uplink rather than one host",
				Fix:     "compare the slow pairs' switch ports and the uplinks between them"})
		}
	}
	fc, fabricPorts := fabricCause(slow, fine, hosts, uplinks)
	if fc != nil {
		cs = append(cs, *fc)
		for _, p := range fabricPorts {
			if !slices.Contains(ports, p) {
				ports = append(ports, p)
			}
		}
	}
	if len(counters) > 0 {
		cs = append(cs, counterCauses(ports, counters)...)
		if uc := unreadCause(fabricPorts, counters); uc != nil {
			cs = append(cs, *uc)
		}
	}
	return cs
}

// allSlow returns the items of get whose every pair (slow or fine) is slow.
func allSlow(slow, fine []PairRun, get func(PairRun) []string) []string {
	var out []string
	inFine := map[string]bool{}
	for _, r := range fine {
		for _, x := range get(r) {
			inFine[x] = true
		}
	}
	for _, r := range slow {
		for _, x := range get(r) {
			if !inFine[x] && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out
}

// counterCauses says whether PFC pauses or ECN marks rose, on the suspect
// ports first.
func counterCauses(suspect []string, counters []PortCounters) []Cause {
	var cs []Cause
	var rose, quiet, quietPause []string
	for _, c := range counters {
		dp, de := c.PauseAfter-c.PauseBefore, c.ECNAfter-c.ECNBefore
		if c.NoECN {
			de = 0
		}
		switch {
		case (dp > 0 || de > 0) && c.NoECN:
			rose = append(rose, fmt.Sprintf("%s: %d pause frame(s) (ECN marks not read)", c.Port, max(dp, 0)))
		case dp > 0 || de > 0:
			rose = append(rose, fmt.Sprintf("%s: %d pause frame(s), %d ECN mark(s)", c.Port, max(dp, 0), max(de, 0)))
		case !slices.Contains(suspect, c.Port):
		case c.NoECN:
			quietPause = append(quietPause, c.Port)
		default:
			quiet = append(quiet, c.Port)
		}
	}
	if len(rose) > 0 {
		cs = append(cs, Cause{Layer: LayerFabric,
			Finding: "PFC pauses or ECN marks rose during the run on " + namesSep(rose, "; ") + ": the RoCE priority's buffers filled there (congestion, or a receiver that cannot keep up)",
			Fix:     "check the ECN thresholds and PFC on those ports (rdggen check --target switch) and what else sends through them"})
	}
	if len(quiet) > 0 {
		cs = append(cs, Cause{Layer: LayerFabric,
			Finding: "no PFC pause or ECN mark rose on " + Names(quiet) + " during the run: not congestion",
			Fix:     "check the link itself: its negotiated speed, FEC/symbol errors and the cable (show interfaces ethernet … on the switch)"})
	}
	if len(quietPause) > 0 {
		cs = append(cs, Cause{Layer: LayerFabric,
			Finding: "no PFC pause frame rose on " + Names(quietPause) + " during the run (their ECN marks were not read): no backpressure on the lossless priority there",
			Fix:     "check the link itself: its negotiated speed, FEC/symbol errors and the cable (nv show interface <swp> on the switch)"})
	}
	return cs
}

// unreadCause names the fabric ports whose counters were not read while
// others were.
func unreadCause(ports []string, counters []PortCounters) *Cause {
	var missing []string
	for _, p := range ports {
		if !slices.ContainsFunc(counters, func(c PortCounters) bool { return c.Port == p }) {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &Cause{Layer: LayerFabric,
		Finding: "the counters of " + Names(missing) + " were not read before and after the run: whether pauses rose there is unknown",
		Fix:     "give those switches a mgmt address and credentials (ONYX: SSH; Cumulus Linux: the NVUE API) and rerun the bench"}
}

// crosses reports whether pair r runs between two leaves (through a
// spine): both hosts' leaves are known and differ.
func crosses(r PairRun) bool {
	return r.Client.Leaf != "" && r.Server.Leaf != "" && r.Client.Leaf != r.Server.Leaf
}

// fabricCause is the cause that names the fabric between the leaves of
// the slow pairs, and the fabric ports it names (for the counters), when
// every slow pair crosses leaves and either hosts (the hosts the other
// causes name) is empty or no pair across leaves passed; nil otherwise.
func fabricCause(slow, fine []PairRun, hosts []string, uplinks []FabricUplink) (*Cause, []string) {
	if len(slow) == 0 {
		return nil, nil
	}
	var leaves, pairNames []string
	for _, r := range slow {
		if !crosses(r) {
			return nil, nil
		}
		for _, l := range []string{r.Client.Leaf, r.Server.Leaf} {
			if !slices.Contains(leaves, l) {
				leaves = append(leaves, l)
			}
		}
		if n := r.Client.Leaf + " → " + r.Server.Leaf; !slices.Contains(pairNames, n) {
			pairNames = append(pairNames, n)
		}
	}
	fineCross := 0
	var inside []string
	for _, r := range fine {
		switch {
		case crosses(r):
			fineCross++
		case r.Client.Leaf != "" && r.Client.Leaf == r.Server.Leaf:
			inside = append(inside, r.Client.Host+" → "+r.Server.Host)
		}
	}
	if len(hosts) > 0 && fineCross > 0 {
		return nil, nil // a host explains them, and other pairs cross the same fabric at the line
	}
	finding := fmt.Sprintf("every slow pair crosses leaves (%s), through a spine", namesSep(pairNames, ", "))
	switch {
	case len(inside) > 0:
		finding += fmt.Sprintf(", while the pair(s) inside one leaf pass (%s): those hosts reach the line through their leaf, the pairs through a spine do not", Names(inside))
	default:
		finding += ", and no pair inside one leaf was measured at the line: this run cannot tell the fabric from the hosts"
	}
	if fineCross > 0 {
		finding += fmt.Sprintf("; %d other pair(s) across leaves pass (with ECMP each flow takes one uplink and one spine, so one of them rather than all)", fineCross)
	}
	var spines, links, ports []string
	for _, u := range uplinks {
		if !slices.Contains(leaves, u.Leaf) {
			continue
		}
		links = append(links, u.Port+" ↔ "+u.SpinePort)
		ports = append(ports, u.Port, u.SpinePort)
		if !slices.Contains(spines, u.Spine) {
			spines = append(spines, u.Spine)
		}
	}
	if len(links) > 0 {
		finding += fmt.Sprintf(": the uplinks of %s (%s) and the spine(s) %s", namesSep(leaves, ", "), namesSep(links, ", "), namesSep(spines, ", "))
	} else {
		finding += ": the uplinks of " + namesSep(leaves, ", ") + " and the spines (the inventory names no uplink)"
	}
	return &Cause{Layer: LayerFabric, Finding: finding,
		Fix: "check those uplinks and spine ports (rdggen check --target switch: link, speed, MTU on every hop, LLDP, BGP, RoCE QoS on the uplinks) and their PFC/ECN counters; then rerun the bench"}, ports
}

// CheckRDMALeafPair is the summary of the ib_write_bw pairs between one
// client leaf and one server leaf of a fabric (JudgePairsFabric).
const CheckRDMALeafPair = "rdma-leaf-pair"

// LeafPair is the pairs between one client leaf and one server leaf, in
// the JSON document (Verdict.LeafPair).
type LeafPair struct {
	// ClientLeaf and ServerLeaf are the leaves (equal for the pairs
	// inside one leaf).
	ClientLeaf string `json:"client_leaf"`
	ServerLeaf string `json:"server_leaf"`
	// Pairs is how many pairs ran between them; Measured how many gave a
	// BW average; Slow how many fell below the pass line.
	Pairs    int `json:"pairs"`
	Measured int `json:"measured"`
	Slow     int `json:"slow"`
	// MinGbps and MedianGbps are the lowest and the median BW average of
	// the measured pairs, Gb/s (absent when none was measured).
	MinGbps    *float64 `json:"min_gbps,omitempty"`
	MedianGbps *float64 `json:"median_gbps,omitempty"`
}

// leafPairVerdicts groups runs by (client leaf, server leaf), each run
// judged against expect(run); none when no run's hosts have leaves.
func leafPairVerdicts(runs []PairRun, expect func(PairRun) Expect) []Verdict {
	type group struct {
		lp     LeafPair
		values []float64
		errs   int
		lines  []float64 // the pass lines of its runs, each once
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range runs {
		if r.Client.Leaf == "" || r.Server.Leaf == "" {
			continue
		}
		key := r.Client.Leaf + " → " + r.Server.Leaf
		g := groups[key]
		if g == nil {
			g = &group{lp: LeafPair{ClientLeaf: r.Client.Leaf, ServerLeaf: r.Server.Leaf}}
			groups[key] = g
			order = append(order, key)
		}
		g.lp.Pairs++
		e := expect(r)
		if pl := PerftestPassLine(e.link(), false).Value; !slices.Contains(g.lines, pl) {
			g.lines = append(g.lines, pl)
		}
		if r.Report == nil {
			g.errs++
			continue
		}
		bw := judgePerftestBW(r.Report, e)
		if bw.Measured == nil {
			g.errs++
			continue
		}
		g.values = append(g.values, bw.Measured.Value)
		g.lp.Measured++
		if bw.Status == StatusFail {
			g.lp.Slow++
		}
	}
	var vs []Verdict
	for _, key := range order {
		g := groups[key]
		v := Verdict{Check: CheckRDMALeafPair, Subject: key, LeafPair: &g.lp, Expected: "every pair at its rail's pass line"}
		if len(g.lines) == 1 {
			v.Expected = fmt.Sprintf("every pair ≥ %s Gb/s", trimFloat(g.lines[0]))
		}
		found := fmt.Sprintf("%d pair(s)", g.lp.Pairs)
		if len(g.values) > 0 {
			sorted := slices.Clone(g.values)
			slices.Sort(sorted)
			lo, med := sorted[0], sorted[len(sorted)/2]
			if len(sorted)%2 == 0 {
				med = round2((sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2)
			}
			g.lp.MinGbps, g.lp.MedianGbps = &lo, &med
			v.Measured = &Measure{Value: lo, Unit: "Gb/s", At: fmt.Sprintf("the lowest BW average of %d pair(s)", len(sorted))}
			found += fmt.Sprintf(", min %s / median %s Gb/s", fixed2(lo), fixed2(med))
		}
		if g.lp.Slow > 0 {
			found += fmt.Sprintf(", %d below the line", g.lp.Slow)
		}
		if g.errs > 0 {
			found += fmt.Sprintf(", %d not measured", g.errs)
		}
		v.Found = found
		switch {
		case g.lp.Slow > 0:
			v.Status = StatusFail
		case g.errs > 0:
			v.Status = StatusError
		default:
			v.Status, v.Expected = StatusPass, ""
		}
		vs = append(vs, v)
	}
	return vs
}
