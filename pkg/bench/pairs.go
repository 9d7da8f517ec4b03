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
}

// PortCounters are a switch port's RoCE counters read before and after the
// pairs ran (the switch check reads both: PFC pause frames on the RoCE
// priority, rx + tx, and ECN-marked packets on its traffic class).
type PortCounters struct {
	// Port names the port as HostPort.Port does: "swx-mld-1-2 Eth1/3".
	Port                    string
	PauseBefore, PauseAfter int64
	ECNBefore, ECNAfter     int64
}

// JudgePairs judges ib_write_bw pair by pair (each pair's verdicts from
// [JudgePerftest], its Subject "client → server") and adds a CheckRDMAPairs
// summary: when some pairs fall below the line and others do not, the
// hosts and switch ports that every slow pair shares (or, failing that,
// those all of whose pairs are slow), and, from counters, whether PFC
// pauses or ECN marks rose on those ports during the run.
func JudgePairs(runs []PairRun, e Expect, counters []PortCounters) []Verdict {
	var vs []Verdict
	var slow, fine []PairRun
	unjudged := 0
	for _, r := range runs {
		subject := r.Client.Host + " → " + r.Server.Host
		if r.Report == nil {
			vs = append(vs, Verdict{Check: CheckRDMABandwidth, Subject: subject, Status: StatusError,
				Found: "no report: " + orNothing(r.Err)})
			unjudged++
			continue
		}
		pe := e
		if r.GIDIndex != nil {
			pe.GIDIndex = *r.GIDIndex
		}
		pv := JudgePerftest(r.Report, pe)
		for i := range pv {
			pv[i].Subject = subject
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
			names = append(names, r.Client.Host+" → "+r.Server.Host)
		}
		sum.Found = fmt.Sprintf("%d of %d pair(s) below the line: %s", len(slow), total, Names(names))
		sum.named(names)
		sum.Causes = pairCauses(slow, fine, counters)
	}
	return append(vs, sum)
}

func pairCauses(slow, fine []PairRun, counters []PortCounters) []Cause {
	var cs []Cause
	if len(fine) == 0 {
		cs = append(cs, Cause{Layer: LayerFabric,
			Finding: "every pair is below the line: a cause common to the cluster (link speed, MTU, PFC/ECN configuration), not one host",
			Fix:     "compare --link-gbps with the ports' speed and run `rdggen check --target switch,hosts`"})
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
	if len(counters) > 0 {
		cs = append(cs, counterCauses(ports, counters)...)
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
	var rose, quiet []string
	for _, c := range counters {
		dp, de := c.PauseAfter-c.PauseBefore, c.ECNAfter-c.ECNBefore
		if dp > 0 || de > 0 {
			rose = append(rose, fmt.Sprintf("%s: %d pause frame(s), %d ECN mark(s)", c.Port, max(dp, 0), max(de, 0)))
		} else if slices.Contains(suspect, c.Port) {
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
	return cs
}
