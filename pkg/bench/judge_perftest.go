package bench

import (
	"fmt"
	"strconv"
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
			v.Causes = append(v.Causes, gidCause(r.GIDIndex, e))
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
			v.Causes = append(v.Causes, Cause{Layer: LayerRDMAConfig,
				Finding: fmt.Sprintf("perftest ran on %s, a link of type %s, not the RoCE data network", orNothing(r.Device), r.LinkType),
				Fix:     "run ib_write_bw with -d set to the data VF's RDMA device (horovod.hca in the inventory)"})
		}
		vs = append(vs, v)
	}
	return vs
}

func judgePerftestBW(r *Perftest, e Expect) Verdict {
	pl := PerftestPassLine(e.link(), r.Bidirectional)
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
	got := fmt.Sprintf("%s Gb/s BW average at %d B messages", fmt.Sprintf("%.2f", row.AvgGbps), row.Bytes)
	if r.Unit != "" && r.Unit != "Gb/sec" {
		got += fmt.Sprintf(" (%s %s × 2^20 × 8 / 10^9)", strconv.FormatFloat(row.AvgGbps*1e9/8/BytesPerMB, 'f', 2, 64), r.Unit)
	}
	if r.Bidirectional {
		got += ", both directions"
	}
	switch {
	case !r.Closed:
		v.Status = StatusTooShort
		v.Found = got + ": the table is cut short (no closing line), so the run may not have finished"
	case row.Bytes < MinPerftestBytes:
		v.Status = StatusTooShort
		v.Found = got + fmt.Sprintf(": messages below %d B cannot fill the link; run with perftest's default size (-s %d) or larger",
			MinPerftestBytes, MinPerftestBytes)
	case row.AvgGbps >= pl.Value:
		v.Status, v.Found = StatusPass, got
	default:
		v.Status, v.Found = StatusFail, got
		v.Causes = lowRDMACauses(r, e)
	}
	return v
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
