package bench

import (
	"bytes"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Perftest is one perftest bandwidth report (ib_write_bw, ib_read_bw,
// ib_send_bw), client or server side, as ParsePerftest read it. Format:
// linux-rdma/perftest src/perftest_parameters.{h,c} (header fields,
// RESULT_FMT*, REPORT_FMT), src/perftest_resources.c (failure messages).
type Perftest struct {
	// Test is the title, e.g. "RDMA_Write BW Test", "Send BW Test",
	// "RDMA_Write Bidirectional BW Test"; "" when the run failed before
	// printing it.
	Test string
	// Verb is "write", "read", "send" or "atomic" (from the title, or
	// from the ib_*_bw command line in the file); "" when unknown.
	Verb string
	// Bidirectional is true for -b runs: the BW columns are then the sum
	// of both directions.
	Bidirectional bool
	// Server is true for the server side ("Waiting for client to
	// connect").
	Server bool
	// Command is the ib_*_bw command line when the file has one.
	Command string
	// Header fields; zero when absent.
	Device     string // "mlx5_0"
	QPs        int    // Number of qps
	Transport  string // "IB" (verbs; RoCE too) or "IW"
	Connection string // "RC", "UC", "UD"
	// MTU is the RDMA path MTU in bytes ("Mtu : 4096[B]"), 0 when absent.
	MTU int
	// LinkType is "Ethernet" (RoCE) or "IB".
	LinkType string
	// GIDIndex is "GID index" (older perftest: "Gid index"); -1 when the
	// header has none (InfiniBand link layer, or no header).
	GIDIndex int
	// RDMACM is true when the QPs were connected with rdma_cm (-R).
	RDMACM bool
	// Local and Remote are the QP endpoints, one per QP.
	Local, Remote []Endpoint
	// CUDA is true when the buffers were GPU memory (--use_cuda).
	CUDA bool
	// Unit is the BW unit as printed: "Gb/sec" (--report_gbits),
	// "MB/sec" (before perftest 24.04) or "MiB/sec"; "" without a table.
	Unit string
	// Rows are the result rows, message sizes strictly increasing, BW
	// converted to Gb/s.
	Rows []PerftestRow
	// Closed is true when the separator line after the rows was seen (the
	// table was not cut short).
	Closed bool
	// Warnings are the noise lines found in the table, e.g. "Conflicting
	// CPU frequency values detected: …", "WARNING: BW peak won't be
	// measured in this run.".
	Warnings []string
	// Failures are perftest's error messages, e.g. "Couldn't allocate
	// MR", "IB device mlx5_0 not found", "Couldn't connect to …".
	Failures []string
	// Run is this report's number (1-based) among the Runs reports of the
	// input ([ParsePerftestRuns]); FirstLine and LastLine the lines it
	// spans, 1-based.
	Run, Runs           int
	FirstLine, LastLine int
}

// Endpoint is one "local address:"/"remote address:" line and the GID line
// after it.
type Endpoint struct {
	LID, QPN string
	// GID as printed: 16 decimal bytes separated by ':'; "" when absent
	// (InfiniBand without -x).
	GID string
	// IPv4 is the address of an IPv4-mapped RoCE GID
	// (…:255:255:a:b:c:d); the zero Addr otherwise.
	IPv4 netip.Addr
}

// PerftestRow is one result row.
type PerftestRow struct {
	// Bytes is the message size (#bytes), Iterations the count.
	Bytes, Iterations int64
	// PeakGbps and AvgGbps are "BW peak" and "BW average" in Gb/s
	// (10^9 bit/s), converted from the printed unit. PeakGbps is 0 when
	// perftest did not measure it (-D, -b: "BW peak won't be measured").
	PeakGbps, AvgGbps float64
	// MsgRateMpps is MsgRate, millions of messages per second.
	MsgRateMpps float64
	// Line is the row's 1-based line in the input.
	Line int
}

// BytesPerMB is the byte count of perftest's "MB" and "MiB": 2^20. Perftest
// has always divided by 0x100000 for those columns (print_report_bw:
// format_factor = report_fmt == MBS ? 0x100000 : 125000000, since 2013);
// perftest 24.04 only relabelled "MB/sec" as "MiB/sec" (commit 1d202bb,
// "Display proper unit for MiB/sec results"). So both convert as
// value × 2^20 × 8 / 10^9 Gb/s.
const BytesPerMB = 1 << 20

// toGbps converts a BW value printed in unit to Gb/s; ok is false for an
// unknown unit.
func toGbps(v float64, unit string) (float64, bool) {
	switch unit {
	case "Gb/sec":
		return v, true
	case "MB/sec", "MiB/sec":
		return v * BytesPerMB * 8 / 1e9, true
	}
	return 0, false
}

var (
	rePerftestTitle   = regexp.MustCompile(`^\s*(\S.*?\bBW Test)\s*$`)
	rePerftestField   = regexp.MustCompile(`([A-Za-z][A-Za-z0-9_.* -]*?)\s*:\s*(\S+)`)
	rePerftestAddr    = regexp.MustCompile(`^\s*(local|remote) address: LID (\S+) QPN (\S+)`)
	rePerftestGID     = regexp.MustCompile(`^\s*GID: ([0-9:]+)\s*$`)
	rePerftestUnit    = regexp.MustCompile(`BW average\[([^\]]+)\]`)
	rePerftestCommand = regexp.MustCompile(`\bib_(write|read|send|atomic)_bw\b.*`)
	rePerftestMTU     = regexp.MustCompile(`^(\d+)`)
	rePerftestSep     = regexp.MustCompile(`^\s*-{20,}\s*$`)
)

// perftestFailures are the messages perftest prints when a run cannot
// measure (src/perftest_resources.c, src/perftest_communication.c), as
// substrings.
var perftestFailures = []string{
	"Couldn't allocate MR",
	"Failed to create MR",
	"failed to create mr",
	"No IB devices found",
	"Couldn't connect to ",
	"Unable to open file descriptor for socket connection",
	"Failed to exchange data between server and clients",
	"Couldn't create IB resources",
	"Unable to init the socket connection",
	"Unable to perform rdma_client function",
	"Failed to create QP",
	"Failed to initialize RDMA contexts",
	"Failed to connect RDMA CM events",
	"Couldn't create the QP",
	"Segmentation fault",
}

var reIBDeviceNotFound = regexp.MustCompile(`IB device \S+ not found`)

func perftestFailure(l string) bool {
	if strings.Contains(l, " not found") && reIBDeviceNotFound.MatchString(l) {
		return true
	}
	for _, f := range perftestFailures {
		if strings.Contains(l, f) {
			return true
		}
	}
	return false
}

func verbOf(s string) string {
	switch {
	case strings.Contains(s, "Write"), strings.Contains(s, "write"):
		return "write"
	case strings.Contains(s, "Read"), strings.Contains(s, "read"):
		return "read"
	case strings.Contains(s, "Send"), strings.Contains(s, "send"):
		return "send"
	case strings.Contains(s, "Atomic"), strings.Contains(s, "atomic"):
		return "atomic"
	}
	return ""
}

// ParsePerftest reads a perftest bandwidth report. It is tolerant of the
// formats perftest printed over the years (tab or space separated header
// fields, "Gid index"/"GID index", [Gb/sec], [MB/sec] and [MiB/sec]
// tables, the #sl column of QoS runs, noise lines inside the table, the
// server and client output interleaved) and of text around the report. It
// fails with an error wrapping [ErrNotRecognized] when data has no
// perftest title, result header, or failure message after an ib_*_bw
// command line.
func ParsePerftest(data []byte) (*Perftest, error) {
	runs, err := ParsePerftestRuns(data)
	if err != nil {
		return nil, err
	}
	return runs[0], nil
}

// ParsePerftestRuns reads every perftest run of data, as [ParsePerftest]
// reads one: a file saved from several runs one after the other (a
// `script` or `tee` transcript of ib_read_bw then ib_write_bw) holds one
// report per run. A run starts at an ib_*_bw command line, or at a title,
// after a report that has result rows or a failure; a title of another
// test starts one too. Server and client output of the same run
// interleaved (two titles before any row) stay one run.
func ParsePerftestRuns(data []byte) ([]*Perftest, error) {
	p := &pfStream{}
	_ = eachLine(bytes.NewReader(data), func(i int, l, _ string) { p.feed(i, l) })
	runs := p.finish()
	if len(runs) == 0 {
		return nil, fmt.Errorf("perftest: %w", ErrNotRecognized)
	}
	return runs, nil
}

// pfStream reads perftest runs one line at a time.
type pfStream struct {
	cur   *pfRun
	runs  []*Perftest
	lines int
}

// pfRun is the state of one report being read.
type pfRun struct {
	r                                  *Perftest
	evidence, inTable, slColumn, after bool
	lastAddr                           *Endpoint
}

func newPFRun(first int) *pfRun {
	return &pfRun{r: &Perftest{GIDIndex: -1, FirstLine: first + 1}}
}

func (x *pfRun) recognized() bool {
	return x.evidence || (x.r.Command != "" && len(x.r.Failures) > 0)
}

// done reports whether the report has what ends a run: rows, a closed
// table or a failure.
func (x *pfRun) done() bool { return len(x.r.Rows) > 0 || x.after || len(x.r.Failures) > 0 }

func (p *pfStream) feed(i int, raw string) {
	p.lines = i + 1
	if p.cur == nil {
		p.cur = newPFRun(i)
	}
	l := strings.TrimSpace(raw)
	if l == "" || strings.Contains(l, "NCCL INFO") || strings.Contains(l, "NCCL WARN") {
		return // an NCCL log printed with the report, or beside it
	}
	if p.cur.done() || p.cur.r.Test != "" {
		cmd := strings.Contains(l, "_bw") && !strings.Contains(l, "NCCL") && rePerftestCommand.MatchString(l)
		title := ""
		if strings.Contains(l, "BW Test") && !strings.Contains(l, ":") {
			if m := rePerftestTitle.FindStringSubmatch(l); m != nil {
				title = m[1]
			}
		}
		if (cmd && p.cur.done()) || (title != "" && (p.cur.done() || (p.cur.r.Test != "" && title != p.cur.r.Test))) {
			p.end(i)
			p.cur = newPFRun(i)
		}
	}
	p.cur.line(i, l)
}

// end closes the current run at line i (0-based, the next run's first).
func (p *pfStream) end(i int) {
	if p.cur != nil && p.cur.finish() {
		p.cur.r.LastLine = i
		p.runs = append(p.runs, p.cur.r)
	}
}

func (p *pfStream) finish() []*Perftest {
	p.end(p.lines)
	p.cur = nil
	for i, r := range p.runs {
		r.Run, r.Runs = i+1, len(p.runs)
	}
	return p.runs
}

// finish completes the report; false when it is not one.
func (x *pfRun) finish() bool {
	if !x.recognized() {
		return false
	}
	if x.r.Verb == "" {
		x.r.Verb = verbOf(x.r.Command)
	}
	return true
}

// line reads one non-empty line (trimmed) of the report.
func (x *pfRun) line(i int, l string) {
	r := x.r
	if r.Command == "" && strings.Contains(l, "_bw") {
		if m := rePerftestCommand.FindString(l); m != "" && !strings.Contains(l, "NCCL") {
			r.Command = clip(m, 300)
			if strings.Contains(m, "--use_cuda") {
				r.CUDA = true
			}
		}
	}
	if perftestFailure(l) {
		r.Failures = append(r.Failures, clip(l, 200))
		return
	}
	if strings.Contains(l, "Waiting for client") {
		r.Server = true
		return
	}
	if strings.HasPrefix(l, "initializing CUDA") || strings.HasPrefix(l, "allocated GPU buffer") ||
		strings.Contains(l, "CUDA tests with inline messages") {
		r.CUDA = true
		return
	}
	if strings.Contains(l, "BW Test") && !strings.Contains(l, ":") {
		if m := rePerftestTitle.FindStringSubmatch(l); m != nil {
			if r.Test == "" {
				r.Test = m[1]
				r.Verb = verbOf(m[1])
				r.Bidirectional = strings.Contains(m[1], "Bidirectional")
			}
			x.evidence = true
			return
		}
	}
	if strings.Contains(l, "#bytes") && (strings.Contains(l, "BW average[") || strings.Contains(l, "BW peak[")) {
		x.evidence = true
		if m := rePerftestUnit.FindStringSubmatch(l); m != nil && r.Unit == "" {
			r.Unit = m[1]
		}
		x.slColumn = strings.Contains(l, "#sl")
		if !x.after {
			x.inTable = true
		}
		return
	}
	if x.inTable {
		if strings.HasPrefix(l, "-") && rePerftestSep.MatchString(l) {
			if len(r.Rows) > 0 {
				r.Closed, x.inTable, x.after = true, false, true
			}
			return
		}
		if row, ok := parsePerftestRow(l, r.Unit, x.slColumn); ok {
			row.Line = i + 1
			if n := len(r.Rows); n > 0 && row.Bytes <= r.Rows[n-1].Bytes {
				r.Warnings = append(r.Warnings, "repeated row ignored: "+clip(l, 120))
				return
			}
			r.Rows = append(r.Rows, row)
			return
		}
		r.Warnings = append(r.Warnings, clip(l, 200))
		return
	}
	if strings.Contains(l, "address: LID ") {
		if m := rePerftestAddr.FindStringSubmatch(l); m != nil {
			e := Endpoint{LID: m[2], QPN: m[3]}
			if m[1] == "local" {
				r.Local = append(r.Local, e)
				x.lastAddr = &r.Local[len(r.Local)-1]
			} else {
				r.Remote = append(r.Remote, e)
				x.lastAddr = &r.Remote[len(r.Remote)-1]
			}
			return
		}
	}
	if strings.HasPrefix(l, "GID: ") {
		if m := rePerftestGID.FindStringSubmatch(l); m != nil {
			if x.lastAddr != nil && x.lastAddr.GID == "" {
				x.lastAddr.GID = m[1]
				x.lastAddr.IPv4 = gidIPv4(m[1])
			}
			return
		}
	}
	if strings.HasPrefix(l, "WARNING:") {
		r.Warnings = append(r.Warnings, clip(l, 200))
		return
	}
	if x.after {
		return
	}
	if strings.Contains(l, ":") {
		for _, f := range rePerftestField.FindAllStringSubmatch(l, -1) {
			r.setField(strings.ToLower(strings.TrimSpace(f[1])), f[2])
		}
	}
}

func (r *Perftest) setField(name, value string) {
	switch name {
	case "device":
		if r.Device == "" {
			r.Device = value
		}
	case "number of qps":
		if n, err := strconv.Atoi(value); err == nil && n > 0 && r.QPs == 0 {
			r.QPs = n
		}
	case "transport type":
		r.Transport = value
	case "connection type":
		r.Connection = value
	case "mtu":
		if m := rePerftestMTU.FindString(value); m != "" {
			if n, err := strconv.Atoi(m); err == nil && n > 0 && n <= 1<<20 {
				r.MTU = n
			}
		}
	case "link type":
		r.LinkType = value
	case "gid index":
		if n, err := strconv.Atoi(value); err == nil && n >= 0 && n < 1<<16 {
			r.GIDIndex = n
		}
	case "rdma_cm qps":
		r.RDMACM = value == "ON"
	}
}

// parsePerftestRow reads "#bytes #iterations peak average msgrate" (with
// "#sl" after #bytes in QoS runs); the per-port columns of dual-port runs
// follow and are ignored.
func parsePerftestRow(l, unit string, sl bool) (PerftestRow, bool) {
	f := strings.Fields(l)
	if sl && len(f) > 0 {
		if len(f) < 2 {
			return PerftestRow{}, false
		}
		f = append([]string{f[0]}, f[2:]...)
	}
	if len(f) < 4 {
		return PerftestRow{}, false
	}
	bytes, err1 := strconv.ParseInt(f[0], 10, 64)
	iters, err2 := strconv.ParseInt(f[1], 10, 64)
	peak, err3 := strconv.ParseFloat(f[2], 64)
	avg, err4 := strconv.ParseFloat(f[3], 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || bytes <= 0 || iters < 0 ||
		!finite(peak) || !finite(avg) || peak < 0 || avg < 0 {
		return PerftestRow{}, false
	}
	row := PerftestRow{Bytes: bytes, Iterations: iters}
	var ok bool
	if row.PeakGbps, ok = toGbps(peak, unit); !ok {
		return PerftestRow{}, false
	}
	row.AvgGbps, _ = toGbps(avg, unit)
	if !finite(row.PeakGbps) || !finite(row.AvgGbps) { // 1e308 MB/sec
		return PerftestRow{}, false
	}
	if len(f) > 4 {
		if rate, err := strconv.ParseFloat(f[4], 64); err == nil && finite(rate) && rate >= 0 {
			row.MsgRateMpps = rate
		}
	}
	return row, true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// gidIPv4 decodes an IPv4-mapped RoCE GID as perftest prints it: 16
// decimal bytes, the first ten 0, then 255:255 and the address.
func gidIPv4(gid string) netip.Addr {
	p := strings.Split(gid, ":")
	if len(p) != 16 {
		return netip.Addr{}
	}
	var b [16]byte
	for i, s := range p {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 255 {
			return netip.Addr{}
		}
		b[i] = byte(n)
	}
	a := netip.AddrFrom16(b)
	if !a.Is4In6() {
		return netip.Addr{}
	}
	return a.Unmap()
}

// Largest is the row of the largest message size; ok is false without rows.
func (r *Perftest) Largest() (PerftestRow, bool) {
	if len(r.Rows) == 0 {
		return PerftestRow{}, false
	}
	return r.Rows[len(r.Rows)-1], true
}
