// Package bench judges the benchmarks that prove a lossless-RoCE GPU cluster
// runs at RDMA speed, and names the layer that does not: perftest's
// ib_write_bw between hosts, nccl-tests' all_reduce_perf over the whole
// cluster, and the NCCL_DEBUG=INFO log printed with it.
//
// It is pure: bytes and plain values in, typed results out. The parsers
// ([ParsePerftest], [ParseNCCLTests], [ParseNCCLLog]) accept the formats
// the tools printed over the years; [Detect] says which one a file is.
// The verdicts ([JudgePerftest], [JudgeNCCLTests], [JudgeNCCLLog], or
// [Judge] for any file) compare the measurement with a pass line derived
// from the data link's speed ([Expect]) and explain each shortfall with
// [Cause]s (layer, finding, fix), using the results of `rdggen check` as
// evidence where the caller has them. [Rounds] schedules ib_write_bw pairs
// so that n hosts take a constant number of rounds ([RoundsByLeaf] across
// the leaves of a leaf-spine fabric first), and [JudgePairs] names the
// hosts and switch ports that slow pairs share ([JudgePairsFabric] also
// per leaf pair, and the uplinks and spines when only pairs across leaves
// are slow). [Document] is the
// `-o json` form (schema [SchemaBench]).
//
// Units are exact throughout: Gb/s is 10^9 bits per second (perftest's
// --report_gbits, link speeds), GB/s is 10^9 bytes per second
// (nccl-tests' algbw and busbw: bytes / 1.0E9 / seconds, nccl-tests
// src/all_reduce.cu).
package bench

import (
	"errors"
	"regexp"
	"strings"
)

// Kind is what a file holds.
type Kind string

// The kinds [Detect] tells apart.
const (
	// KindUnknown is none of the others.
	KindUnknown Kind = "unknown"
	// KindPerftest is a perftest bandwidth report (ib_write_bw,
	// ib_read_bw, ib_send_bw; client or server side), or its failure.
	KindPerftest Kind = "perftest"
	// KindNCCLTests is a nccl-tests *_perf table (all_reduce_perf and the
	// other collectives that print the same table), with or without the
	// NCCL log interleaved.
	KindNCCLTests Kind = "nccl-tests"
	// KindNCCLLog is an NCCL_DEBUG=INFO (or WARN) log without a
	// nccl-tests table, e.g. from a training job.
	KindNCCLLog Kind = "nccl-log"
)

// ErrNotRecognized is returned (wrapped) by [Judge] and the parsers for a
// file that is none of the formats.
var ErrNotRecognized = errors.New("not a perftest report (no 'BW Test' title, '#bytes … BW average' table or perftest error), " +
	"nccl-tests output (no 'size count type … busbw' table, '# nThread … minBytes' header or result rows), " +
	"tf_cnn_benchmarks output (no 'images/sec: … +/-' rows, no 'total images/sec:' line) " +
	"or NCCL log (no 'NCCL INFO' or 'NCCL WARN' lines, no 'via NET/…' channels)")

// Detect says what data is. A nccl-tests table wins over the NCCL log
// interleaved with it; a perftest report is recognized by its title, its
// result header or one of its failure messages after an ib_*_bw command.
func Detect(data []byte) Kind {
	parts, err := JudgeParts(data, Expect{GIDIndex: -1})
	if err != nil {
		return KindUnknown
	}
	return parts[0].Kind
}

// reMPITag is Open MPI's --tag-output prefix, "[1,0]<stdout>:".
var reMPITag = regexp.MustCompile(`^\[\d+,\d+\]<(?:stdout|stderr|stddiag)>:`)

// maxLineBytes is the most of one line the parsers read: every line they
// look for is far shorter (NCCL's longest, the ring order of a large
// communicator, is not read), and the regular expressions take time in
// proportion to a line's length, so a file of one huge line (a binary, a
// file of NULs) is read in milliseconds rather than minutes.
const maxLineBytes = 64 << 10

// clip shortens s for a finding: at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
