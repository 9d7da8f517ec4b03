package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// JudgePerftest judges one perftest report against e:
//   - CheckRDMABandwidth: the BW average of the largest message size
//     against [PerftestPassLine] (error when perftest failed; too-short
//     without result rows, with the table cut short, or when the largest
//     message is below [MinPerftestBytes]);
//   - CheckRDMAMTU, CheckGIDIndex: the header's MTU and GID index against
//     e.MTU and e.GIDIndex (RoCE only; skipped when either is unknown);
//   - CheckLinkType: the header's link type against e.LinkLayer.
func JudgePerftest(r *Perftest, e Expect) []Verdict {
	vs := []Verdict{judgePerftestBW(r, e)}
	roce := r.LinkType != "IB"
	if e.MTU > 0 && r.MTU > 0 && roce {
		v := Verdict{Check: CheckRDMAMTU, Found: fmt.Sprintf("MTU %d B in the perftest header", r.MTU)}
		exp := fmt.Sprintf("%d B", e.MTU)
		if e.DataMTU > 0 {
			exp += fmt.Sprintf(" (the largest RoCE MTU that fits data_mtu %d)", e.DataMTU)
		}
		if e.MTUFrom != "" {
			exp += "; MTU from " + e.MTUFrom
		}
		if r.MTU == e.MTU {
			v.Status = StatusPass
		} else {
			v.Status, v.Expected = StatusFail, exp
			v.Causes = append(v.Causes, mtuCause(r.MTU, e))
		}
		vs = append(vs, v)
	}
	if e.GIDIndex >= 0 && r.GIDIndex >= 0 && roce {
		v := Verdict{Check: CheckGIDIndex, Found: fmt.Sprintf("GID index %d in the perftest header", r.GIDIndex)}
		if r.GIDIndex == e.GIDIndex {
			v.Status = StatusPass
		} else {
			v.Status = StatusFail
			v.Expected = fmt.Sprintf("%d (the RoCE v2 GID of the data address, NCCL_IB_GID_INDEX)", e.GIDIndex)
			v.Causes = append(v.Causes, gidCause(r.GIDIndex, e, r.localGID()))
		}
		vs = append(vs, v)
	}
	if e.LinkLayer != "" && r.LinkType != "" {
		v := Verdict{Check: CheckLinkType, Found: "link type " + r.LinkType}
		if r.LinkType == e.LinkLayer {
			v.Status = StatusPass
		} else {
			v.Status = StatusFail
			v.Expected = e.LinkLayer + " (RoCE over the data network)"
			c := Cause{Layer: LayerRDMAConfig,
				Finding: fmt.Sprintf("perftest ran on %s, a link of type %s, not the RoCE data network", orNothing(r.Device), r.LinkType),
				Fix:     "run ib_write_bw with -d set to the data VF's RDMA device (horovod.hca in the inventory)"}
			if !e.rdggenCluster() {
				c.Fix = "run ib_write_bw with -d set to the RDMA device of the data network (ibv_devices lists them; ibv_devinfo shows each port's link layer)"
			}
			v.Causes = append(v.Causes, c)
		}
		vs = append(vs, v)
	}
	return vs
}

func judgePerftestBW(r *Perftest, e Expect) Verdict {
	pl := PerftestPassLine(e.link(), r.Bidirectional)
	pl.Rule += e.linkRule()
	v := Verdict{Check: CheckRDMABandwidth, PassLine: &pl,
		Expected: fmt.Sprintf("≥ %s Gb/s (%s; %s)", trimFloat(pl.Value), pl.Rule, pl.Source)}
	tool := "ib_" + orDefault(r.Verb, "write") + "_bw"
	if len(r.Failures) > 0 {
		v.Status = StatusError
		v.Found = tool + " failed: " + r.Failures[0]
		if len(r.Failures) > 1 {
			v.Found += fmt.Sprintf(" (and %d more error lines)", len(r.Failures)-1)
		}
		v.Causes = perftestFailureCauses(r, e)
		if r.CUDA {
			v.Causes = append(v.Causes, gpuCauses(e)...)
		}
		return v
	}
	row, ok := r.Largest()
	if !ok {
		v.Status = StatusTooShort
		switch {
		case r.Server:
			v.Found = "no result rows: this is the server side, which waited for its client; judge the client's output"
		default:
			v.Found = "no result rows: the output stops before the '#bytes … BW average' table"
		}
		return v
	}
	v.Measured = &Measure{Value: round2(row.AvgGbps), Unit: "Gb/s", At: fmt.Sprintf("BW average at %d B", row.Bytes)}
	got := fmt.Sprintf("%s Gb/s BW average at %d B messages", fixed2(row.AvgGbps), row.Bytes)
	if r.Unit != "" && r.Unit != "Gb/sec" {
		got += fmt.Sprintf(" (%s %s × 2^20 × 8 / 10^9)", fixed2(row.AvgGbps*1e9/8/BytesPerMB), r.Unit)
	}
	if r.Bidirectional {
		got += ", both directions"
	}
	ceiling, dirs := e.link(), ""
	if r.Bidirectional {
		ceiling, dirs = 2*ceiling, " in both directions"
	}
	var over *PerftestRow
	for i := range r.Rows {
		if x := &r.Rows[i]; max(x.AvgGbps, x.PeakGbps) > ceiling*Ceiling && (over == nil || max(x.AvgGbps, x.PeakGbps) > max(over.AvgGbps, over.PeakGbps)) {
			over = x
		}
	}
	switch {
	case !r.Closed:
		v.Status = StatusTooShort
		v.Found = got + ": the table is cut short (no closing line), so the run may not have finished"
	case row.Bytes < MinPerftestBytes:
		v.Status = StatusTooShort
		v.Found = got + fmt.Sprintf(": messages below %d B cannot fill the link; run with perftest's default size (-s %d) or larger",
			MinPerftestBytes, MinPerftestBytes)
	case over != nil:
		v.Status = StatusError
		v.Found = got + fmt.Sprintf("; the row at %d B (line %d) shows %s Gb/s, more than the %g Gb/s link can carry%s",
			over.Bytes, over.Line, strconv.FormatFloat(max(over.AvgGbps, over.PeakGbps), 'g', 6, 64), e.link(), dirs)
		v.Causes = []Cause{impossibleCause(fmt.Sprintf("%s Gb/s through a %g Gb/s link is impossible",
			strconv.FormatFloat(max(over.AvgGbps, over.PeakGbps), 'g', 6, 64), e.link()), e, "--link-gbps")}
	case row.AvgGbps >= pl.Value:
		v.Status, v.Found = StatusPass, got
	default:
		v.Status, v.Found = StatusFail, got
		v.Causes = lowRDMACauses(r, e)
	}
	return v
}

// localGID is the GID of the report's first local endpoint, "" when it
// shows none.
func (r *Perftest) localGID() string {
	if len(r.Local) == 0 {
		return ""
	}
	return r.Local[0].GID
}

// Ceiling is how far above a link's line rate a measured figure may lie
// before it is impossible rather than fast: 2 %, more than perftest's and
// nccl-tests' rounding and timer error at the sizes judged (a run cannot
// move more bits than the link carries).
const Ceiling = 1.02

// impossibleCause explains a figure above what the judged link carries:
// either the file is not what it claims (a corrupt or edited figure) or the
// link it ran on is faster or wider than the parameters it was judged
// against.
func impossibleCause(what string, e Expect, flags string) Cause {
	from := ""
	if e.LinkFrom != "" {
		from = " (link speed: " + e.LinkFrom
		if e.NICsFrom != "" && strings.Contains(flags, "--nics-per-node") {
			from += "; NICs per node: " + e.NICsFrom
		}
		from += ")"
	}
	return Cause{Layer: LayerParameters,
		Finding: what + from + ": either the run was on a faster or wider link than it was judged against, or the figure is not a measurement (a corrupt or edited file)",
		Fix:     "judge it with the link it ran on (" + flags + ", or -f with its inventory); if those are right, the file cannot be trusted: rerun the benchmark"}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
