package bench

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// JudgeNCCLTests judges a nccl-tests run against e: CheckBusBW, the busbw
// of the largest size (out-of-place, the lowest of the rows of that size)
// against [BusBWPassLine] — never "# Avg bus bandwidth", the mean over all
// sizes (NVIDIA/deepops docs/k8s-cluster/roce-perf-k8s.md prints 7.77 GB/s
// average for 22.9 GB/s at 2 GiB) — then the NCCL log's verdicts
// ([JudgeNCCLLog]) when the run printed one. The busbw verdict is an error
// when the test failed or returned wrong values, and too-short when the
// table is empty or cut short (no footer), when its largest size is below
// [MinSweepBytes], when every rank ran on one host, or when the rows
// interleave independent runs (nccl-tests built without MPI=1).
func JudgeNCCLTests(t *NCCLTests, e Expect) []Verdict {
	logVs := judgeLog(t.Log, e, t.Ranks)
	v := judgeBusBW(t, e, logVs)
	return append([]Verdict{v}, logVs...)
}

func judgeBusBW(t *NCCLTests, e Expect, logVs []Verdict) Verdict {
	pl := e.busBWPassLine()
	if e.LinkFrom != "" {
		pl.Rule += " (link speed: " + e.LinkFrom
		if e.NICsFrom != "" {
			pl.Rule += "; NICs per node: " + e.NICsFrom
		}
		pl.Rule += ")"
	}
	v := Verdict{Check: CheckBusBW, PassLine: &pl,
		Expected: fmt.Sprintf("≥ %s GB/s out-of-place busbw at the largest size (%s; %s)", trimFloat(pl.Value), pl.Rule, pl.Source)}
	prog := orDefault(t.Program, "the test")
	var got string
	end := t.SweepEnd()
	endMissing := t.endMissing()
	if rows := t.Largest(); rows != nil {
		low := rows[0]
		for _, r := range rows[1:] {
			if r.Out.BusBW < low.Out.BusBW {
				low = r
			}
		}
		at := "out-of-place busbw at " + sizeText(low.Bytes)
		if op := strings.TrimSpace(low.Type + " " + low.Redop); op != "" {
			at += ", " + op
		}
		v.Measured = &Measure{Value: low.Out.BusBW, Unit: "GB/s", At: at}
		got = fmt.Sprintf("%s GB/s %s", fixed2(low.Out.BusBW), at)
		if low.In.BusBW > 0 {
			got += fmt.Sprintf(" (in-place %s)", fixed2(low.In.BusBW))
		}
		notes := t.rowNotes()
		if t.HasAvg {
			over := plural(len(t.Rows), "size", "all %d sizes")
			if notes != "" || t.Dropped > 0 || endMissing { // nccl-tests' mean is over rows not read here
				over = "all sizes"
			}
			got += fmt.Sprintf("; '# Avg bus bandwidth' %s GB/s is the mean over %s and is not judged",
				strconv.FormatFloat(t.AvgBusBW, 'g', 6, 64), over)
		}
		got += notes
	}
	tailUnreadable := len(t.Unreadable) > 0 && len(t.Rows) > 0 && t.Unreadable[len(t.Unreadable)-1] > t.Rows[len(t.Rows)-1].Line
	wrong, _ := t.Wrong()
	errRows, errRow, errLimit := t.overTolerance()
	hosts := t.Hosts()
	ceiling := e.busBWCeiling()
	var over *NCCLRow
	for i := range t.Rows {
		x := &t.Rows[i]
		if b := max(x.Out.BusBW, x.In.BusBW); b > ceiling*Ceiling && (over == nil || b > max(over.Out.BusBW, over.In.BusBW)) {
			over = x
		}
	}
	switch {
	case len(t.Failures) > 0:
		v.Status = StatusError
		v.Found = prog + " failed: " + t.Failures[0]
		if n := len(t.Failures) - 1; n > 0 {
			v.Found += fmt.Sprintf(" (and %d more failure lines)", n)
		}
		v.Causes = failureCauses(t, e, logVs)
	case t.OutOfBounds > 0 || wrong > 0:
		v.Status = StatusError
		n := t.OutOfBounds
		if n <= 0 {
			n = wrong
		}
		v.Found = fmt.Sprintf("%s returned wrong results (%d values out of bounds)", prog, n)
		if got != "" {
			v.Found += "; " + got
		}
		v.Causes = []Cause{{Layer: LayerBenchmark,
			Finding: "the collective's result differs from the expected values, so its bandwidth means nothing",
			Fix:     "rerun; if it repeats, report it with the NCCL version (a wrong-result bug is NCCL's or the hardware's, e.g. NVIDIA/nccl-tests#37)"}}
	case errRows > 0:
		v.Status = StatusError
		v.Found = fmt.Sprintf("%s returned wrong results: the 'error' column (the largest deviation from the expected values) is %s at %s, %s, above nccl-tests' tolerance %g for %s",
			prog, strconv.FormatFloat(max(errRow.Out.MaxError, errRow.In.MaxError), 'g', 4, 64), sizeText(errRow.Bytes), errRow.Type, errLimit, errRow.Type)
		if errRows > 1 {
			v.Found += fmt.Sprintf(" (%d rows above it)", errRows)
		}
		if got != "" {
			v.Found += "; " + got
		}
		v.Causes = []Cause{{Layer: LayerBenchmark,
			Finding: "the collective's result differs from the expected values beyond rounding, so its bandwidth means nothing (nccl-tests src/common.cu DeltaMaxValue: 1e-5 for float, 1e-12 for double, 5e-2 for half, none for integers)",
			Fix:     "rerun; if it repeats, report it with the NCCL version (a wrong-result bug is NCCL's or the hardware's, e.g. NVIDIA/nccl-tests#37)"}}
	case len(t.Rows) == 0:
		v.Status = StatusTooShort
		v.Found = "no result rows: the output stops before the table"
		v.Causes = append(v.Causes, failureCauses(t, e, logVs)...)
	case t.Dropped > 0:
		v.Status = StatusTooShort
		v.Found = fmt.Sprintf("the sizes go down %d time(s): the rows interleave independent runs", t.Dropped)
		v.Causes = []Cause{{Layer: LayerBenchmark,
			Finding: "every process ran its own test: nccl-tests built without MPI=1 and launched with mpirun (AddyLaddy in NVIDIA/nccl-tests#182)",
			Fix:     "rebuild nccl-tests with `make MPI=1 MPI_HOME=…` and launch one rank per GPU with mpirun"}}
	case len(hosts) == 1:
		v.Status = StatusTooShort
		v.Found = fmt.Sprintf("all %d rank(s) ran on %s: the run measured no network", len(t.Ranks), hosts[0])
		if got != "" {
			v.Found += " (" + got + ")"
		}
		v.Causes = []Cause{{Layer: LayerBenchmark, Finding: "a single-host run exercises NVLink/PCIe only",
			Fix: "launch across the hosts with one rank per GPU (mpirun -np <GPUs> -H host1:<GPUs per host>,host2:…)"}}
	case !t.Footer:
		v.Status = StatusTooShort
		v.Found = "the output is cut short (no '# Out of bounds values' / '# Avg bus bandwidth' footer)"
		if got != "" {
			v.Found += "; last row: " + got
		}
	case tailUnreadable:
		v.Status, v.Measured = StatusTooShort, nil
		v.Found = fmt.Sprintf("the table's last row (line %d) is unreadable, so the largest size cannot be judged; last readable row: %s",
			t.Unreadable[len(t.Unreadable)-1], got)
	case endMissing:
		v.Status, v.Measured = StatusTooShort, nil
		v.Found = fmt.Sprintf("the rows stop at %s, but the sweep (minBytes %d, maxBytes %d, %s) runs to %s: the rows of the largest sizes are missing; last row: %s",
			sizeText(t.LargestBytes()), t.MinBytes, t.MaxBytes, t.stepText(), sizeText(end), got)
	case t.LargestBytes() < MinSweepBytes:
		v.Status = StatusTooShort
		v.Found = fmt.Sprintf("the sweep stops at %s, below %s where busbw reaches its plateau", sizeText(t.LargestBytes()), sizeText(MinSweepBytes))
		if got != "" {
			v.Found += " (" + got + ")"
		}
		v.Causes = []Cause{{Layer: LayerBenchmark, Finding: "the largest size is too small to judge the network",
			Fix: "rerun with -e 1G or more, e.g. all_reduce_perf -b 8 -e 4G -f 2 -g 1"}}
	case over != nil:
		v.Status = StatusError
		b := max(over.Out.BusBW, over.In.BusBW)
		v.Found = fmt.Sprintf("busbw %s GB/s at %s (line %d) is more than %s GB/s, twice what %s per node carry", strconv.FormatFloat(b, 'g', 6, 64),
			sizeText(over.Bytes), over.Line, trimFloat(ceiling), e.nicsText())
		if got != "" {
			v.Found += "; largest size: " + got
		}
		v.Causes = []Cause{impossibleCause(fmt.Sprintf("busbw counts each byte as a ring moves it, and even a tree or in-network reduction (SHARP, NVLS), which move each byte over the network once each way, reach at most twice the bandwidth of a node's NICs: %s GB/s through %s is impossible",
			strconv.FormatFloat(b, 'g', 6, 64), e.linksText()), e, "--link-gbps and --nics-per-node")}
	case v.Measured.Value >= pl.Value:
		v.Status, v.Found = StatusPass, got
	default:
		v.Status, v.Found = StatusFail, got
		v.Causes = lowBusBWCauses(t, e, logVs)
	}
	return v
}

// JudgeNCCLLog judges what an NCCL log says: CheckTransport (RDMA or TCP
// sockets between hosts), CheckGPUDirect (whether the inter-node channels
// use /GDRDMA; asymmetric use names the hosts or ranks without it) and
// CheckNCCLErrors (memory registration or completion errors) and
// CheckGIDIndex (NCCL_IB_GID_INDEX, from the log or a launch line in the
// file). A verdict whose evidence is absent from the log is left out.
func JudgeNCCLLog(l *NCCLLog, e Expect) []Verdict { return judgeLog(l, e, nil) }

func judgeLog(l *NCCLLog, e Expect, ranks []NCCLRank) []Verdict {
	if l.Empty() {
		return nil
	}
	var vs []Verdict
	tv, haveT := judgeTransport(l, e)
	if haveT {
		vs = append(vs, tv)
	}
	if !haveT || tv.Status == StatusPass {
		if gv, ok := judgeGDR(l, e, ranks); ok {
			vs = append(vs, gv)
		}
	}
	if ev, ok := judgeNCCLErrors(l, e); ok {
		vs = append(vs, ev)
	}
	if gv, ok := judgeNCCLGID(l, e); ok {
		vs = append(vs, gv)
	}
	return vs
}

// judgeNCCLGID compares NCCL_IB_GID_INDEX, as the log or a command line in
// the file reports it, with the cluster's RoCE v2 GID index. Left out when
// neither says it (NCCL ≥ 2.21 picks the RoCE v2 GID itself then).
func judgeNCCLGID(l *NCCLLog, e Expect) (Verdict, bool) {
	val, ok := l.EnvValue("NCCL_IB_GID_INDEX")
	if !ok || e.GIDIndex < 0 {
		return Verdict{}, false
	}
	v := Verdict{Check: CheckGIDIndex, Found: "NCCL_IB_GID_INDEX=" + val}
	n, err := strconv.Atoi(val)
	if err == nil && n == e.GIDIndex {
		v.Status = StatusPass
		return v, true
	}
	v.Status = StatusFail
	v.Expected = fmt.Sprintf("%d (the RoCE v2 GID of the data address)", e.GIDIndex)
	c := gidCause(n, e, "")
	c.Finding = strings.Replace(c.Finding, "perftest used GID index", "NCCL used GID index", 1)
	c.Fix = fmt.Sprintf("launch with NCCL_IB_GID_INDEX=%d (rdggen's run.sh does), or leave it unset with NCCL 2.21 or later", e.GIDIndex)
	if err != nil {
		c.Finding = fmt.Sprintf("NCCL_IB_GID_INDEX=%s is not a GID index", val)
	}
	v.Causes = []Cause{c}
	return v, true
}

// hostPrefix is "host: ", or "" for a line without a host.
func hostPrefix(h string) string {
	if h == "" {
		return ""
	}
	return h + ": "
}

// judgeTransport decides per host whether NCCL used sockets.
func judgeTransport(l *NCCLLog, e Expect) (Verdict, bool) {
	v := Verdict{Check: CheckTransport, Expected: "an RDMA network (Using network IB, channels via NET/IB) on every host"}
	socket := map[string][]string{} // host → evidence
	rdma := map[string][]string{}
	var order []string
	note := func(m map[string][]string, host, what string) {
		if _, ok := socket[host]; !ok {
			if _, ok := rdma[host]; !ok {
				order = append(order, host)
			}
		}
		if !slices.Contains(m[host], what) {
			m[host] = append(m[host], what)
		}
	}
	for _, n := range l.Networks {
		if strings.EqualFold(n.Text, "Socket") {
			note(socket, n.Host, "Using network Socket")
		} else {
			note(rdma, n.Host, "Using network "+n.Text)
		}
	}
	for _, h := range l.net.hostOrder { // every channel line, by host in order
		for _, n := range l.net.hosts[h].nets {
			if n == "Socket" {
				note(socket, h, "channels via NET/Socket")
			} else {
				note(rdma, h, "channels via NET/"+n)
			}
		}
	}
	if len(l.Networks) == 0 {
		for _, x := range l.NoIBDevice {
			note(socket, x.Host, "NET/IB : No device found")
		}
		for _, x := range l.NoVerbs {
			note(socket, x.Host, "Failed to open libibverbs")
		}
		for _, x := range l.OpenFailed {
			note(socket, x.Host, "ibv_open_device failed")
		}
		if len(socket) == 0 {
			for _, x := range l.IBDevices {
				note(rdma, x.Host, "NET/IB : Using "+strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(x.Text, "NET/IB : Using"), "NET/IB: Using")))
			}
		}
	}
	if len(socket) == 0 && len(rdma) == 0 {
		return v, false
	}
	if len(socket) == 0 {
		v.Status = StatusPass
		var parts []string
		for _, h := range order {
			parts = append(parts, hostPrefix(h)+strings.Join(rdma[h], ", "))
		}
		v.Found = "RDMA: " + namesSep(parts, "; ")
		v.named(nonEmpty(order))
		return v, true
	}
	v.Status = StatusFail
	var hosts, parts []string
	for _, h := range order {
		if ev, ok := socket[h]; ok {
			hosts = append(hosts, h)
			parts = append(parts, hostPrefix(h)+strings.Join(ev, ", "))
		}
	}
	v.Found = "NCCL fell back to TCP sockets: " + namesSep(parts, "; ")
	v.named(nonEmpty(hosts))
	v.Causes = socketCauses(l, e, nonEmpty(hosts))
	return v, true
}

func nonEmpty(hs []string) []string {
	var out []string
	for _, h := range hs {
		if h != "" {
			out = append(out, h)
		}
	}
	return out
}

// judgeGDR decides whether the inter-node channels use GPUDirect RDMA.
func judgeGDR(l *NCCLLog, e Expect, ranks []NCCLRank) (Verdict, bool) {
	v := Verdict{Check: CheckGPUDirect, Expected: gdrExpected(l)}
	rankHost := map[int]string{}
	for _, r := range ranks {
		rankHost[r.Rank] = r.Host
	}
	who := func(k holderKey) string {
		if k.host != "" {
			return k.host
		}
		if h, ok := rankHost[k.rank]; ok {
			return h
		}
		return "rank " + strconv.Itoa(k.rank)
	}
	var undecided *Verdict // channels that cannot tell; the summaries below may
	if l.net.n > 0 {
		// Per holder: the receive channels are the proof. On GPUs before
		// Ampere NCCL sends with GPUDirect RDMA (GDR reads) only between
		// NVLink-connected GPUs or with NCCL_NET_GDR_READ=1
		// (src/graph/paths.cc), so on V100 PCIe hosts working GDR shows as
		// "[receive] via NET/IB/0/GDRDMA" next to "[send] via NET/IB/0".
		// A holder without receive lines is on when its channels use
		// /GDRDMA, off when some do and others not (it can send with GDR),
		// and unknown when none does: its sends alone prove nothing.
		// The counts are the parser's aggregates of every channel line.
		type tally struct {
			recv, recvGDR, all, allGDR int
			parts                      []*chanHolder
		}
		per := map[string]*tally{}
		var order []string
		for _, h := range l.net.order {
			k := who(h.key)
			x := per[k]
			if x == nil {
				x = &tally{}
				per[k] = x
				order = append(order, k)
			}
			x.all += h.all
			x.allGDR += h.allGDR
			x.recv += h.recv
			x.recvGDR += h.recvGDR
			x.parts = append(x.parts, h)
		}
		var on, off, unknown []string
		sendOnly, offByRecv := true, true
		for _, k := range order {
			x := per[k]
			if x.recv > 0 {
				sendOnly = false
			}
			switch {
			case x.recv > 0 && x.recvGDR == x.recv, x.recv == 0 && x.allGDR == x.all:
				on = append(on, k)
			case x.recv > 0:
				off = append(off, k)
			case x.allGDR > 0:
				off = append(off, k)
				offByRecv = false
			default:
				unknown = append(unknown, k)
			}
		}
		// the first channel (by line) of each kind, over the holders of a key
		var example, unknownExample Channel
		nOff, nUnknown := 0, 0
		earlier := func(have bool, cur, c Channel) bool { return !have || c.Line < cur.Line }
		haveEx, haveUn := false, false
		for _, k := range off {
			x := per[k]
			for _, h := range x.parts {
				c, has := h.offAny, h.hasOffAny
				n := h.all - h.allGDR
				if x.recv > 0 {
					c, has = h.offRecv, h.hasOffRecv
					n = h.recv - h.recvGDR
				}
				nOff += n
				if has && earlier(haveEx, example, c) {
					example, haveEx = c, true
				}
			}
		}
		for _, k := range unknown {
			for _, h := range per[k].parts {
				nUnknown += h.all
				if earlier(haveUn, unknownExample, h.first) {
					unknownExample, haveUn = h.first, true
				}
			}
		}
		what := "inter-node channel(s)"
		if offByRecv && !sendOnly {
			what = "inter-node receive channel(s)"
		}
		var cannotTell string
		if len(unknown) > 0 {
			cannotTell = fmt.Sprintf("%d inter-node channel(s) of %s, none via /GDRDMA and none a [receive] line, e.g. %q",
				nUnknown, Names(unknown), channelText(unknownExample))
		}
		switch {
		case len(off) == 0 && len(unknown) == 0:
			v.Status = StatusPass
			v.Found = fmt.Sprintf("GPUDirect RDMA on every %s (%s via NET/…/GDRDMA, %s)", strings.TrimSuffix(what, "(s)"), l.net.gdrLines(), Names(order))
			v.named(order)
			return v, true
		case len(off) == 0:
			u := v
			u.Status = StatusTooShort
			u.Found = cannotTell + ": before Ampere NCCL sends through host memory even when GPUDirect RDMA works (it lets the NIC read GPU memory only between NVLink-connected GPUs or with NCCL_NET_GDR_READ=1), so only [receive] lines show whether GPUDirect RDMA is used"
			if len(on) > 0 {
				u.Found = "GPUDirect RDMA on " + Names(on) + "; " + u.Found
				u.named(on)
			}
			u.Causes = []Cause{{Layer: LayerBenchmark,
				Finding: "the log shows only the sending side of those channels (one rank's log, or an excerpt)",
				Fix:     "judge the NCCL_DEBUG=INFO log of every rank (NCCL_DEBUG_SUBSYS=INIT,NET prints each channel's [send] and [receive] line)"}}
			if e.rdggenCluster() {
				u.Causes[0].Fix += ", or run `rdggen check` (hosts peermem, esxi p2p) and judge again with --evidence"
			}
			undecided = &u
		case len(on) == 0:
			v.Status = StatusFail
			v.Found = fmt.Sprintf("%d %s without GPUDirect RDMA, e.g. %q", nOff, what, channelText(example))
			if !offByRecv {
				v.Found += " (some channels of the same rank use /GDRDMA, so it can send with GPUDirect RDMA)"
			}
			if cannotTell != "" {
				v.Found += "; " + cannotTell
			}
			v.Causes = gdrCauses(l, e, nil, nil)
			return v, true
		default:
			v.Status = StatusFail
			v.Found = fmt.Sprintf("GPUDirect RDMA on %s but not on %s (%d %s without /GDRDMA, e.g. %q)",
				Names(on), Names(off), nOff, what, channelText(example))
			v.named(off)
			if cannotTell != "" {
				v.Found += "; " + cannotTell
			}
			v.Causes = gdrCauses(l, e, on, off)
			return v, true
		}
	}
	if sv, ok := judgeGDRSummaries(l, e); ok {
		return sv, true
	}
	if undecided == nil {
		return v, false
	}
	if gdrEvidenceFailed(e) {
		v.Status = StatusFail
		v.Found, _, _ = strings.Cut(undecided.Found, ": before Ampere")
		v.Found += ", which alone cannot tell; `rdggen check` found GPUDirect RDMA's prerequisites missing"
		v.Causes = gdrCauses(l, e, nil, nil)
		return v, true
	}
	return *undecided, true
}

// gdrExpected is what the GPUDirect RDMA verdict expects of l's channels:
// NET/IB's, or the network plugin's ([NCCLLog.PluginNet]).
func gdrExpected(l *NCCLLog) string {
	net := "IB"
	if p := l.PluginNet(); p != "" {
		net = p
	}
	return "every inter-node channel via NET/" + net + "/<n>/GDRDMA"
}

// gdrEvidenceFailed reports whether e holds a failed `rdggen check` result
// that GPUDirect RDMA needs (peer memory, P2P keys, NCCL_NET_GDR_LEVEL,
// BAR1, EFI, NUMA).
func gdrEvidenceFailed(e Expect) bool {
	for _, c := range []struct {
		target applyplan.TargetName
		check  string
	}{
		{readiness.TargetHosts, EvidencePeermem}, {readiness.TargetESXi, EvidenceP2P}, {readiness.TargetWorkers, EvidenceGDRLevel},
		{readiness.TargetHosts, EvidenceBAR1}, {readiness.TargetHosts, EvidenceEFI}, {readiness.TargetESXi, EvidenceNUMA},
	} {
		if len(failedEvidence(e.Evidence, c.target, c.check)) > 0 {
			return true
		}
	}
	return false
}

// judgeGDRSummaries judges GPUDirect RDMA from NCCL's summary lines when
// the channels do not tell: "Connected all rings, use ring … GDR n", the
// per-GPU decisions, and the per-HCA "GPU Direct RDMA Disabled" lines.
func judgeGDRSummaries(l *NCCLLog, e Expect) (Verdict, bool) {
	v := Verdict{Check: CheckGPUDirect, Expected: gdrExpected(l)}
	if rings := l.Rings; len(rings) > 0 && rings[0].GDR >= 0 {
		off := 0
		var hosts []string
		for _, r := range rings {
			if r.GDR == 0 {
				off++
				if r.Host != "" && !slices.Contains(hosts, r.Host) {
					hosts = append(hosts, r.Host)
				}
			}
		}
		if off == 0 {
			v.Status, v.Found = StatusPass, fmt.Sprintf("'Connected all rings, use ring … GDR 1' on all %d communicator(s)", len(rings))
		} else {
			v.Status = StatusFail
			v.Found = fmt.Sprintf("'Connected all rings, use ring … GDR 0' on %d of %d communicator(s)", off, len(rings))
			v.Causes = gdrCauses(l, e, nil, hosts)
		}
		return v, true
	}
	var disabled []GDRGPU
	for _, g := range l.GDRGPU {
		if !g.Enabled {
			disabled = append(disabled, g)
		}
	}
	if len(l.GDRGPU) > 0 {
		if len(disabled) == 0 {
			v.Status = StatusPass
			v.Found = fmt.Sprintf("GPU Direct RDMA Enabled in all %d per-GPU decision(s)", len(l.GDRGPU))
			return v, true
		}
		v.Status = StatusFail
		v.Found = "NCCL disabled GPU Direct RDMA for " + gpuList(disabled)
		v.Causes = gdrCauses(l, e, nil, nil)
		return v, true
	}
	var hcaOff []GDRHCA
	for _, h := range l.GDRHCA {
		if !h.Enabled {
			hcaOff = append(hcaOff, h)
		}
	}
	if len(hcaOff) > 0 {
		var names []string
		for _, h := range hcaOff {
			s := fmt.Sprintf("HCA %d '%s'", h.HCA, h.Name)
			if h.Host != "" {
				s += " on " + h.Host
			}
			if !slices.Contains(names, s) {
				names = append(names, s)
			}
		}
		v.Status = StatusFail
		v.Found = "NET/IB : GPU Direct RDMA Disabled for " + Names(names)
		v.named(names)
		v.Causes = gdrCauses(l, e, nil, nil)
		return v, true
	}
	return v, false
}

// gdrLines counts the channel lines via /GDRDMA by direction: "2
// [receive] and 1 [send] channel line(s)"; a direction without lines is
// left out, lines without one are "other".
func (a *netAgg) gdrLines() string {
	var parts []string
	if a.recvGDR > 0 {
		parts = append(parts, fmt.Sprintf("%d [receive]", a.recvGDR))
	}
	if a.sendGDR > 0 {
		parts = append(parts, fmt.Sprintf("%d [send]", a.sendGDR))
	}
	if other := a.gdr - a.recvGDR - a.sendGDR; other > 0 {
		parts = append(parts, fmt.Sprintf("%d other", other))
	}
	return strings.Join(parts, " and ") + " channel line(s)"
}

func channelText(c Channel) string {
	s := fmt.Sprintf("%d -> %d", c.From, c.To)
	if c.Dir != "" {
		s += " [" + c.Dir + "]"
	}
	return s + " via " + c.Via
}

// gpuList is "GPU 18000, 3b000 / HCA 0 (distance 5 > 4) on node-1".
func gpuList(gs []GDRGPU) string {
	type key struct{ host, hca, dist string }
	var keys []key
	gpus := map[key][]string{}
	for _, g := range gs {
		d := "no module or not supported by GPU"
		if !g.NoModule {
			d = fmt.Sprintf("distance %d > %d", g.Distance, g.Limit)
		}
		k := key{g.Host, g.HCA, d}
		if _, ok := gpus[k]; !ok {
			keys = append(keys, k)
		}
		if !slices.Contains(gpus[k], g.GPU) {
			gpus[k] = append(gpus[k], g.GPU)
		}
	}
	var parts []string
	for _, k := range keys {
		s := fmt.Sprintf("GPU %s / HCA %s (%s)", Names(gpus[k]), k.hca, k.dist)
		if k.host != "" {
			s += " on " + k.host
		}
		parts = append(parts, s)
	}
	return namesSep(parts, "; ")
}

var reIBVCall = regexp.MustCompile(`Call to (ibv_\w+) failed`)

// judgeNCCLErrors looks for the warnings that mean the run could not use
// the RDMA device: memory registration or queue creation failures and
// completion errors.
func judgeNCCLErrors(l *NCCLLog, e Expect) (Verdict, bool) {
	v := Verdict{Check: CheckNCCLErrors, Expected: "no failed verbs call or completion error"}
	var hits []HostText
	for _, w := range l.Warnings {
		if m := reIBVCall.FindStringSubmatch(w.Text); m != nil && m[1] != "ibv_open_device" {
			hits = append(hits, w)
		} else if strings.Contains(w.Text, "Got completion with error") {
			hits = append(hits, w)
		}
	}
	if len(hits) == 0 {
		return v, false
	}
	v.Status = StatusError
	var hosts []string
	for _, h := range hits {
		if h.Host != "" && !slices.Contains(hosts, h.Host) {
			hosts = append(hosts, h.Host)
		}
	}
	v.Found = fmt.Sprintf("%d NCCL warning(s), e.g. %q", len(hits), hits[0].Text)
	if len(hosts) > 0 {
		v.Found += " on " + Names(hosts)
		v.named(hosts)
	}
	v.Causes = ncclErrorCauses(hits, e, hosts)
	return v, true
}

// plural is "the 1 size" for n == 1, else many with n.
func plural(n int, one, many string) string {
	if n == 1 {
		return "the 1 " + one
	}
	return fmt.Sprintf(many, n)
}

// BusBWCeiling is the most busbw a run over nics × linkGbps NICs per node
// can show, GB/s: twice their bandwidth. nccl-tests' busbw is algbw ×
// 2(n−1)/n, the bytes a ring moves per rank (nccl-tests doc/PERFORMANCE.md),
// which a ring carries through the node's NICs, so a ring's busbw stays
// below their bandwidth; NCCL's tree and in-network reduction (SHARP,
// NVLS) move each byte over the network once each way and reach up to
// twice it on few nodes.
func BusBWCeiling(linkGbps float64, nics int) float64 {
	if nics <= 0 {
		nics = 1
	}
	return 2 * float64(nics) * linkGbps / 8
}

// overTolerance counts the rows whose older "error" column (the largest
// deviation from the expected values) is above nccl-tests' tolerance for
// their type (src/common.cu DeltaMaxValue), and returns the first of them
// with its tolerance. Types it does not know are judged at the loosest,
// 5e-2.
func (t *NCCLTests) overTolerance() (n int, first NCCLRow, limit float64) {
	for _, r := range t.Rows {
		lim := deltaMax(r.Type)
		if max(r.Out.MaxError, r.In.MaxError) > lim {
			if n == 0 {
				first, limit = r, lim
			}
			n++
		}
	}
	return n, first, limit
}

// deltaMax is nccl-tests' DeltaMaxValue for a type name as the table
// prints it.
func deltaMax(typ string) float64 {
	switch typ {
	case "float", "float32":
		return 1e-5
	case "double", "float64":
		return 1e-12
	case "int8", "uint8", "int32", "uint32", "int64", "uint64", "int", "char":
		return 0
	}
	return 5e-2 // half, bfloat16, fp8 and others
}

// rowNotes says what of the table was not judged: rows that do not parse,
// sizes missing from the sweep, rows after the table's end; "" when
// nothing was lost.
func (t *NCCLTests) rowNotes() string {
	var notes []string
	if n := len(t.Unreadable); n > 0 {
		notes = append(notes, fmt.Sprintf("%s skipped (%s)", count(n, "unreadable row", "unreadable rows"), lineList(t.Unreadable)))
	}
	if n, from, to := t.Missing(); n > 0 {
		at := "between"
		if n > 1 {
			at = "the first between"
		}
		notes = append(notes, fmt.Sprintf("%s missing from the sweep (%s, %s %s and %s)",
			count(n, "size", "sizes"), t.stepText(), at, sizeText(from), sizeText(to)))
	}
	if t.Ignored > 0 {
		notes = append(notes, fmt.Sprintf("%s after the table's end not read (from line %d)", count(t.Ignored, "result row", "result rows"), t.IgnoredLine))
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

// stepText is the sweep's step: "step × 2", "step + 1048576 B".
func (t *NCCLTests) stepText() string {
	if t.StepFactor > 1 {
		return fmt.Sprintf("step × %d", t.StepFactor)
	}
	return fmt.Sprintf("step + %d B", t.StepBytes)
}

// count is "1 row" or "3 rows".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// lineList is "line 49", "lines 49, 52", at most three then "…".
func lineList(ls []int) string {
	var s []string
	for i, l := range ls {
		if i == 3 {
			s = append(s, "…")
			break
		}
		s = append(s, strconv.Itoa(l))
	}
	if len(ls) == 1 {
		return "line " + s[0]
	}
	return "lines " + strings.Join(s, ", ")
}

// busBWPassLine is e's all_reduce pass line: [BusBWPassLine] of its link
// and NICs per node, or on a multi-rail cluster [BusBWPassLineRails] of
// its rails.
func (e Expect) busBWPassLine() PassLine {
	if e.multiRail() {
		return BusBWPassLineRails(e.railLinks())
	}
	return BusBWPassLine(e.link(), e.nics())
}

// ringCeiling is the bandwidth of a node's NICs, GB/s: a ring's ceiling
// (nics × link / 8, or the rails' sum / 8).
func (e Expect) ringCeiling() float64 {
	if e.multiRail() {
		sum := 0.0
		for _, g := range e.railLinks() {
			sum += g
		}
		return sum / 8
	}
	return float64(e.nics()) * e.link() / 8
}

// busBWCeiling is the most busbw e's nodes can show, GB/s: twice their
// NICs' bandwidth ([BusBWCeiling]).
func (e Expect) busBWCeiling() float64 {
	if e.multiRail() {
		return 2 * e.ringCeiling()
	}
	return BusBWCeiling(e.link(), e.nics())
}

// nicsText is a node's NICs for a person: "2 × 100 Gb/s NIC(s)", or "the
// 4 rails × 200 Gb/s" on a multi-rail cluster.
func (e Expect) nicsText() string {
	if e.multiRail() {
		return "the " + railsText(e.railLinks())
	}
	return fmt.Sprintf("%d × %g Gb/s NIC(s)", e.nics(), e.link())
}

// linksText is a node's links for a person: "2 × 100 Gb/s", or "4 rails ×
// 200 Gb/s".
func (e Expect) linksText() string {
	if e.multiRail() {
		return railsText(e.railLinks())
	}
	return fmt.Sprintf("%d × %g Gb/s", e.nics(), e.link())
}
