package bench

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Status is a verdict's outcome.
type Status string

// word is the status as bench's text and chart spell it: "pass", "fail",
// "too-short", "error" (the JSON's "passed" and "failed" are those of
// rdggen.check/v1 and rdggen.apply/v1).
func (s Status) word() string {
	switch s {
	case StatusPass:
		return "pass"
	case StatusFail:
		return "fail"
	}
	return string(s)
}

// The outcomes, spelled in JSON as rdggen check spells its verdicts
// ("passed", "failed"). Only StatusPass is a pass; `rdggen bench` exits 0 only when
// every verdict has it.
const (
	// StatusPass: the measurement meets its pass line (or the setting is
	// as expected).
	StatusPass Status = "passed"
	// StatusFail: it does not; Causes say why where the evidence tells.
	StatusFail Status = "failed"
	// StatusTooShort: the input cannot be judged: the sweep stops below
	// the size the pass line needs, the output is cut short, the run
	// measured no network.
	StatusTooShort Status = "too-short"
	// StatusError: the tool failed (an error message, wrong results).
	StatusError Status = "error"
)

// The checks a verdict can be about.
const (
	// CheckRDMABandwidth is perftest's BW average at its largest message
	// size against 90 % of the link speed.
	CheckRDMABandwidth = "rdma-bandwidth"
	// CheckRDMAMTU is the MTU in perftest's header against the RoCE MTU
	// that fits the data network's MTU.
	CheckRDMAMTU = "rdma-mtu"
	// CheckGIDIndex is the GID index in perftest's header (or
	// NCCL_IB_GID_INDEX in an NCCL log) against the cluster's RoCE v2 GID
	// index.
	CheckGIDIndex = "gid-index"
	// CheckLinkType is perftest's "Link type" against the data network's
	// link layer (Ethernet for RoCE).
	CheckLinkType = "link-type"
	// CheckBusBW is nccl-tests' busbw of the largest size, out-of-place.
	CheckBusBW = "busbw"
	// CheckTransport is the transport NCCL chose between hosts (RDMA or
	// TCP sockets).
	CheckTransport = "transport"
	// CheckGPUDirect is whether NCCL's inter-node channels use GPUDirect
	// RDMA (/GDRDMA).
	CheckGPUDirect = "gpudirect-rdma"
	// CheckNCCLErrors is the NCCL warnings that mean the run failed
	// (memory registration, completion errors).
	CheckNCCLErrors = "nccl-errors"
	// CheckRDMAPairs is the summary over ib_write_bw pairs (JudgePairs).
	CheckRDMAPairs = "rdma-pairs"
)

// The pass lines and the sizes a verdict needs, with their sources.
const (
	// PerftestPassFraction: ib_write_bw passes at 90 % of the port speed
	// (twice that for bidirectional runs), the criterion of NVIDIA's
	// multinode certification scripts (Mellanox/ngc_multinode_perf
	// README "Pass criterion is 90% of the port link speed", common.sh
	// BW_PASS_RATE = multiplier × 0.9 × port_rate).
	PerftestPassFraction = 0.9
	// MinPerftestBytes is the smallest message size that can show line
	// rate: perftest's default size for bandwidth tests, 65536 B (the
	// size DeepOps' 92.40 Gb/s on 100 GbE was measured at).
	MinPerftestBytes = 65536
	// BusBWPerGbps is the peak all-reduce busbw per Gb/s of NIC speed,
	// GB/s: "24GB/s is the peak performance per 200G NIC (12 GB/s for
	// 100G NICs)" (sjeaugey in NVIDIA/nccl-tests#119).
	BusBWPerGbps = 0.12
	// BusBWPassFraction: busbw passes at 90 % of that peak, the same
	// margin as ib_write_bw's (10.8 GB/s per 100 Gb/s NIC).
	BusBWPassFraction = 0.9
	// MinSweepBytes is the largest size a sweep must reach to be judged:
	// 1 GiB (nccl-tests prints sizes in bytes; -e 1G is 1073741824).
	// Below it busbw has not reached its plateau (NVIDIA/deepops
	// docs/k8s-cluster/roce-perf-k8s.md: 15.63 GB/s at 4 MiB, 22.9 at
	// 512 MiB to 2 GiB, on 2 × 100 GbE).
	MinSweepBytes = 1 << 30
)

// Verdict is one judgement of one input.
type Verdict struct {
	// Check is what is judged (Check*).
	Check string `json:"check"`
	// Subject narrows it: a host pair, a host; "" for the input as a
	// whole.
	Subject string `json:"subject,omitempty"`
	Status  Status `json:"status"`
	// Measured is the value judged; nil when there is none.
	Measured *Measure `json:"measured,omitempty"`
	// PassLine is the line it was judged against; nil for settings
	// compared with an expected value.
	PassLine *PassLine `json:"pass_line,omitempty"`
	// Found says what the input showed, Expected what passes.
	Found    string `json:"found,omitempty"`
	Expected string `json:"expected,omitempty"`
	// Causes explain a verdict that fails or errors (at least one), or
	// what would make one too short to judge judgeable; each with its
	// layer and fix.
	Causes []Cause `json:"causes,omitempty"`
	// Named is every host, node or rank of a list the text cut to its
	// first MaxNamed ([Names]); absent when the text names them all.
	Named []string `json:"named,omitempty"`
	// LeafPair, on a CheckRDMALeafPair verdict, is its pairs' numbers.
	LeafPair *LeafPair `json:"leaf_pair,omitempty"`
	// Rail is the rail of a pair's verdicts and of a CheckRDMARail verdict
	// when the pairs ran on several rails ([JudgeRailPairs]); nil
	// otherwise (a cluster without rails has only rail 0).
	Rail *int `json:"rail,omitempty"`
	// RailPairs, on a CheckRDMARail verdict, is its rail's pairs' numbers.
	RailPairs *RailPairs `json:"rail_pairs,omitempty"`
}

// MaxNamed is how many hosts, nodes or ranks a verdict's text names in
// one list; the rest are counted ("… and 7,222 more"), and the verdict's
// Named keeps them all.
const MaxNamed = 8

// Names is names joined with ", ", the first MaxNamed of them and then
// "… and N more" (N with thousands separators).
func Names(names []string) string { return namesSep(names, ", ") }

func namesSep(names []string, sep string) string {
	if len(names) <= MaxNamed {
		return strings.Join(names, sep)
	}
	return strings.Join(names[:MaxNamed], sep) + sep + "… and " + thousands(len(names)-MaxNamed) + " more"
}

// named records on v the full list behind a text cut by Names.
func (v *Verdict) named(names []string) {
	if len(names) > MaxNamed && len(v.Named) == 0 {
		v.Named = append([]string(nil), names...)
	}
}

// thousands is n with a comma every three digits: 7222 → "7,222".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Measure is a measured value.
type Measure struct {
	Value float64 `json:"value"`
	// Unit is "Gb/s" (10^9 bit/s), "GB/s" (10^9 byte/s) or "B".
	Unit string `json:"unit"`
	// At says where the value was read, e.g. "BW average at 65536 B",
	// "out-of-place busbw at 2147483648 B (2 GiB), float sum".
	At string `json:"at,omitempty"`
}

// PassLine is a threshold: a measurement passes at Value or more.
type PassLine struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Rule says how Value was derived, Source where the rule comes from.
	Rule   string `json:"rule"`
	Source string `json:"source"`
}

// Cause is one explanation of a shortfall.
type Cause struct {
	// Layer is where the problem is (Layer*).
	Layer string `json:"layer"`
	// Finding is what the evidence shows; Fix what makes it pass.
	Finding string `json:"finding"`
	Fix     string `json:"fix,omitempty"`
	// Hosts are the hosts it concerns, when the evidence names them.
	Hosts []string `json:"hosts,omitempty"`
}

// PerftestPassLine is ib_write_bw's pass line at linkGbps: 90 % of the
// link, doubled for bidirectional runs (their BW is the sum of both
// directions).
func PerftestPassLine(linkGbps float64, bidirectional bool) PassLine {
	mult, dir := 1.0, ""
	if bidirectional {
		mult, dir = 2, " × 2 directions"
	}
	return PassLine{
		Value:  round2(PerftestPassFraction * linkGbps * mult),
		Unit:   "Gb/s",
		Rule:   fmt.Sprintf("90 %% of the %g Gb/s link%s", linkGbps, dir),
		Source: "Mellanox/ngc_multinode_perf (NVIDIA's multinode certification: pass at 90 % of the port speed)",
	}
}

// BusBWPassLine is all_reduce's pass line: 90 % of the expected peak busbw,
// 0.12 GB/s per Gb/s of NIC speed times the NICs per node (10.8 GB/s for
// one 100 Gb/s NIC).
func BusBWPassLine(linkGbps float64, nics int) PassLine {
	if nics <= 0 {
		nics = 1
	}
	peak := BusBWPerGbps * linkGbps * float64(nics)
	nic := fmt.Sprintf("%d × %g Gb/s NIC", nics, linkGbps)
	if nics > 1 {
		nic += "s"
	}
	return PassLine{
		Value:  round2(BusBWPassFraction * peak),
		Unit:   "GB/s",
		Rule:   fmt.Sprintf("90 %% of the expected peak %s GB/s (12 GB/s per 100 Gb/s, %s per node)", trimFloat(peak), nic),
		Source: "sjeaugey in NVIDIA/nccl-tests#119: \"24GB/s is the peak performance per 200G NIC (12 GB/s for 100G NICs)\"",
	}
}

// BusBWPassLineRails is all_reduce's pass line on hosts with one NIC per
// rail, gbps the rails' link speeds (Gb/s, rail order): 90 % of the
// expected peak busbw, 0.12 GB/s per Gb/s of the SUM of the rails' link
// speeds — the factors of [BusBWPassLine] for one NIC, applied to every
// rail. NCCL spreads its channels over every NIC of a node, so the peaks
// add up: 96 GB/s bare metal on 4 × 200 Gb/s RoCE (NVIDIA/nccl-tests#156,
// 4 × the 24 GB/s per 200G NIC of NVIDIA/nccl-tests#119), 22.9 GB/s on
// 2 × 100 GbE (NVIDIA/deepops docs/k8s-cluster/roce-perf-k8s.md). 4 ×
// 200 Gb/s: 86.4 GB/s. One rail is [BusBWPassLine] of its speed.
func BusBWPassLineRails(gbps []float64) PassLine {
	if len(gbps) <= 1 {
		link := float64(DefaultLinkGbps)
		if len(gbps) == 1 {
			link = gbps[0]
		}
		return BusBWPassLine(link, 1)
	}
	sum := 0.0
	for _, g := range gbps {
		sum += g
	}
	peak := BusBWPerGbps * sum
	return PassLine{
		Value:  round2(BusBWPassFraction * peak),
		Unit:   "GB/s",
		Rule:   fmt.Sprintf("90 %% of the expected peak %s GB/s (12 GB/s per 100 Gb/s of the rails' sum, %s per node)", trimFloat(peak), railsText(gbps)),
		Source: "sjeaugey in NVIDIA/nccl-tests#119: \"24GB/s is the peak performance per 200G NIC (12 GB/s for 100G NICs)\"; the rails add up (NVIDIA/nccl-tests#156: 96 GB/s bare metal on 4 × 200 Gb/s RoCE)",
	}
}

// railsText is the rails' link speeds for a person: "4 rails × 200 Gb/s",
// or "4 rails: 200 + 200 + 100 + 100 Gb/s" when they differ.
func railsText(gbps []float64) string {
	same := true
	for _, g := range gbps[1:] {
		if g != gbps[0] {
			same = false
		}
	}
	if same {
		return fmt.Sprintf("%d rails × %g Gb/s", len(gbps), gbps[0])
	}
	parts := make([]string, len(gbps))
	for i, g := range gbps {
		parts[i] = strconv.FormatFloat(g, 'g', -1, 64)
	}
	return fmt.Sprintf("%d rails: %s Gb/s", len(gbps), strings.Join(parts, " + "))
}

func round2(v float64) float64 {
	if v > 1e15 || v < -1e15 || v != v { // beyond int64 cents: nothing to round
		return v
	}
	if v < 0 {
		return -round2(-v)
	}
	return float64(int64(v*100+0.5)) / 100
}

// trimFloat is v with at most two decimals and no trailing zeros ("22.9",
// "100"); from 10^15 on (no measurement, an edited or corrupt figure) in
// exponent form, "1e+308", not 309 digits.
func trimFloat(v float64) string {
	if !(math.Abs(v) < 1e15) {
		return bigFloat(v)
	}
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// fixed2 is v with two decimals ("22.92"); from 10^15 on in exponent form,
// as trimFloat.
func fixed2(v float64) string {
	if !(math.Abs(v) < 1e15) {
		return bigFloat(v)
	}
	return fmt.Sprintf("%.2f", v)
}

func bigFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// Line is v for a person, one line, then one indented line per cause:
//
//	busbw: FAILED: found …; expected …
//	  cause (GPUDirect RDMA): …; fix: …
func (v Verdict) Line() string {
	var b strings.Builder
	b.WriteString(v.Check)
	if v.Subject != "" {
		b.WriteString(" " + v.Subject)
	}
	switch v.Status {
	case StatusPass:
		b.WriteString(": passed")
		if v.Found != "" {
			b.WriteString(" (" + v.Found)
			if v.PassLine != nil {
				fmt.Fprintf(&b, "; pass line %s %s: %s; source: %s", trimFloat(v.PassLine.Value), v.PassLine.Unit, v.PassLine.Rule, v.PassLine.Source)
			}
			b.WriteString(")")
		}
	case StatusFail:
		b.WriteString(": FAILED: found " + orNothing(v.Found))
		if v.Expected != "" {
			b.WriteString("; expected " + v.Expected)
		}
	case StatusTooShort:
		b.WriteString(": TOO SHORT TO JUDGE: " + orNothing(v.Found))
	default:
		b.WriteString(": ERROR: " + orNothing(v.Found))
	}
	for _, c := range v.Causes {
		b.WriteString("\n  " + c.Line())
	}
	return b.String()
}

// Lines is vs for a person, as Verdict.Line prints each, except that a
// cause already printed for an earlier verdict of vs is printed once, then
// referred to: "  cause (container RDMA): as for busbw above".
func Lines(vs []Verdict) []string {
	var out []string
	seen := map[string]string{} // cause → the check it was printed for
	for _, v := range vs {
		head := v
		head.Causes = nil
		s := head.Line()
		for _, c := range v.Causes {
			k := c.Layer + "\x00" + c.Finding
			if first, ok := seen[k]; ok {
				s += "\n  cause (" + c.Layer + "): as for " + first + " above"
				continue
			}
			seen[k] = v.Check
			s += "\n  " + c.Line()
		}
		out = append(out, s)
	}
	return out
}

// Line is c for a person: "cause (LAYER): FINDING; fix: FIX".
func (c Cause) Line() string {
	s := "cause (" + c.Layer + "): " + c.Finding
	if c.Fix != "" {
		s += "; fix: " + c.Fix
	}
	return s
}

func orNothing(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

// sizeText is a byte count for a person: "2147483648 B (2 GiB)",
// "133169160 B (127.0 MiB)", "8 B".
func sizeText(b int64) string {
	units := []struct {
		n    int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}}
	for _, u := range units {
		if b >= u.n {
			if b%u.n == 0 {
				return fmt.Sprintf("%d B (%d %s)", b, b/u.n, u.name)
			}
			return fmt.Sprintf("%d B (%.1f %s)", b, float64(b)/float64(u.n), u.name)
		}
	}
	return fmt.Sprintf("%d B", b)
}

// Passed reports whether every verdict passed (and there is at least one).
func Passed(vs []Verdict) bool {
	if len(vs) == 0 {
		return false
	}
	for _, v := range vs {
		if v.Status != StatusPass {
			return false
		}
	}
	return true
}

// Part is one judged piece of a file: one kind of output found in it (or
// one run, when it holds several nccl-tests runs) and its verdicts.
type Part struct {
	Kind Kind
	// Name tells the part from the others of its kind in the same file,
	// "run 2 of 3 (lines 118–240)"; "" when there are none.
	Name     string
	Verdicts []Verdict
	// NCCLTests is the run a nccl-tests part judged, Perftest the report
	// of a perftest part (for SweepSVG and BarsSVG); nil otherwise.
	NCCLTests *NCCLTests
	Perftest  *Perftest
}

// JudgeParts judges every kind of output in data, in this order: each
// nccl-tests run (with the NCCL log printed in its lines;
// [ParseNCCLTestsRuns]), each perftest run ([ParsePerftestRuns]),
// tf_cnn_benchmarks output (the Horovod benchmark; its runs, one part:
// [JudgeTFCNNRuns]), and the NCCL log when
// no nccl-tests table holds it. A file of one kind and one run gives one
// part. It fails with an error wrapping [ErrNotRecognized] when data is
// none of the formats. It is [JudgeReader] of data.
func JudgeParts(data []byte, e Expect) ([]Part, error) {
	return JudgeReader(bytes.NewReader(data), e)
}

// JudgeReader is [JudgeParts] of what r holds, read once, line by line, in
// memory bounded by the aggregates the verdicts need (not by r's size): a
// line longer than 64 KiB is read up to there. Each line goes to the
// parsers of every format, each of which passes over a line that lacks its
// literals without a regular expression; an error reading r is returned
// as is.
func JudgeReader(r io.Reader, e Expect) ([]Part, error) {
	s := newScan()
	if err := eachLine(r, s.feed); err != nil {
		return nil, err
	}
	return s.parts(e)
}

// scan is the state of one pass over an input: a reader per format.
type scan struct {
	nt *ntStream
	pf *pfStream
	tf *tfStream
}

func newScan() *scan { return &scan{nt: newNTStream(), pf: &pfStream{}, tf: newTFStream()} }

func (s *scan) feed(i int, l, raw string) {
	// an NCCL log line in its usual form is read by the NCCL readers only
	// (the perftest reader passes over NCCL lines; no tf_cnn_benchmarks
	// line is one)
	if strings.Contains(l, " NCCL ") {
		t := strings.TrimSpace(l)
		if host, level, msg, ok := fastNCCLLine(t); ok {
			s.nt.feedNCCL(i, t, host, level, msg)
			s.pf.lines = i + 1
			return
		}
	}
	s.nt.feed(i, l)
	s.pf.feed(i, l)
	s.tf.feed(i, raw)
}

// parts judges what the pass read.
func (s *scan) parts(e Expect) ([]Part, error) {
	var parts []Part
	runs, whole := s.nt.finish()
	for _, t := range runs {
		p := Part{Kind: KindNCCLTests, Verdicts: JudgeNCCLTests(t, e), NCCLTests: t}
		if t.Runs > 1 {
			p.Name = fmt.Sprintf("run %d of %d (lines %d–%d)", t.Run, t.Runs, t.FirstLine, t.LastLine)
		}
		parts = append(parts, p)
	}
	for _, r := range s.pf.finish() {
		p := Part{Kind: KindPerftest, Verdicts: JudgePerftest(r, e), Perftest: r}
		if r.Runs > 1 {
			p.Name = fmt.Sprintf("run %d of %d (lines %d–%d, %s)", r.Run, r.Runs, r.FirstLine, r.LastLine, orDefault(r.Test, "ib_"+orDefault(r.Verb, "write")+"_bw"))
		}
		parts = append(parts, p)
	}
	if runs, err := s.tf.finish(); err == nil {
		parts = append(parts, Part{Kind: KindTFCNN, Verdicts: JudgeTFCNNRuns(runs)})
	}
	if len(runs) == 0 {
		if l := whole; !l.Empty() {
			vs := JudgeNCCLLog(l, e)
			switch {
			case len(vs) > 0:
				parts = append(parts, Part{Kind: KindNCCLLog, Verdicts: vs})
			case len(parts) == 0: // alone, a log that says nothing cannot pass
				parts = append(parts, Part{Kind: KindNCCLLog, Verdicts: []Verdict{{Check: CheckTransport, Status: StatusTooShort,
					Found: fmt.Sprintf("%d NCCL log line(s), none about the transport, GPUDirect RDMA or a failure (run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV)", l.Lines)}}})
			}
		}
	}
	if len(parts) == 0 {
		return nil, ErrNotRecognized
	}
	return parts, nil
}

// Judge detects what data is and judges it: the kind of its first part
// and the verdicts of all its parts ([JudgeParts]), or an error wrapping
// [ErrNotRecognized] when data is none of the formats.
func Judge(data []byte, e Expect) (Kind, []Verdict, error) {
	parts, err := JudgeParts(data, e)
	if err != nil {
		return KindUnknown, nil, err
	}
	var vs []Verdict
	for _, p := range parts {
		vs = append(vs, p.Verdicts...)
	}
	return parts[0].Kind, vs, nil
}
