package bench

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// NCCLTests is the output of a nccl-tests *_perf run (all_reduce_perf and
// the collectives that print the same table), as ParseNCCLTests read it.
// Format: NVIDIA/nccl-tests src/util.cu (writeDeviceReport,
// writeResultHeader, writeBenchmarkLineBody, writeResultFooter) and its
// history: the "error" column became "#wrong" in 2022 (NCCL 2.13 resync),
// "Group" joined the Rank line in 2022, the PCI id became
// [domain:bus:dev] in 2025, and all_reduce's "root" column is absent in
// older output.
type NCCLTests struct {
	// Program is the test, e.g. "all_reduce_perf", from "# Collective test
	// starting:" or a command line in the file; "" when unknown.
	Program string
	// Version is nccl-tests' own version ("# nccl-tests version 2.20.0
	// …", since 2025); "" when absent.
	Version string
	// The "# nThread … nGpus … minBytes … maxBytes … validation: …"
	// header; MaxBytes is 0 when absent. Validation is 1 or 0, -1 when
	// absent.
	NThread, NGPUs     int
	MinBytes, MaxBytes int64
	Validation         int
	// Ranks are the "# Using devices" lines.
	Ranks []NCCLRank
	// Header is true when the column header was seen; Root and Redop
	// say whether it had those columns, WrongColumn is "#wrong" or the
	// older "error" ("" without a header).
	Header      bool
	Root, Redop bool
	WrongColumn string
	// Rows are the result rows of the first table. Sizes never go down
	// within one data type and reduction; -d all and -o all repeat the
	// sweep for each type and op.
	Rows []NCCLRow
	// Dropped counts rows not kept because their size was below the
	// previous one of the same type and reduction: rows of independent
	// runs interleaved, which is what nccl-tests built without MPI=1
	// prints when launched with mpirun (every process runs its own test).
	Dropped int
	// Tables counts the column headers; rows after a second header are
	// not read (see Ignored).
	Tables int
	// Unreadable are the lines of the table that begin with a size like a
	// result row but do not parse as one (a row cut short, or broken by
	// other output), 1-based, in order.
	Unreadable []int
	// Ignored counts result rows not read because they come after the
	// table's footer or a second column header without a run of their own
	// (no "# nThread …" line or header after the footer: see
	// [ParseNCCLTestsRuns]); IgnoredLine is the first of them.
	Ignored, IgnoredLine int
	// StepFactor is the header's "step: N(factor)" (-f N), StepBytes its
	// "step: N(bytes)" (-i N); 0 when absent.
	StepFactor, StepBytes int64
	// ReducedMaxBytes is the N of "Reducing maxBytes to N due to memory
	// limitation", the largest size the sweep then runs to; 0 when absent.
	ReducedMaxBytes int64
	// Run is this run's number (1-based) among the Runs runs of the input
	// (1 of 1 for most files); FirstLine and LastLine are the lines of the
	// input it spans, 1-based.
	Run, Runs           int
	FirstLine, LastLine int
	// OutOfBounds is "# Out of bounds values : N OK|FAILED"; -1 when
	// absent.
	OutOfBounds int64
	// AvgBusBW is "# Avg bus bandwidth", GB/s: the mean busbw over every
	// row, which small sizes drag down (nccl-tests src/common.cu), so
	// verdicts never use it. HasAvg says whether the line was there.
	AvgBusBW float64
	HasAvg   bool
	// AvgGate is the "OK" or "FAILED" NCCL_TESTS_MIN_BW appends to the
	// average line (FAILED below 90 % of the given GB/s); "" without it.
	AvgGate string
	// Footer is true when "Out of bounds values" or "Avg bus bandwidth"
	// was printed: the sweep ran to its end. Concluded is the newer
	// "# Collective test concluded:" line.
	Footer, Concluded bool
	// Failures are nccl-tests' error lines ("Test NCCL failure …",
	// "Test CUDA failure …", "… Test failure …") and libmlx5's "got
	// completion with error".
	Failures []string
	// Notes are informational lines, e.g. "Reducing maxBytes to N due to
	// memory limitation".
	Notes []string
	// Log is the NCCL log interleaved with the output (empty when the
	// run had no NCCL_DEBUG=INFO).
	Log *NCCLLog
}

// NCCLRank is one "#  Rank  0 Group  0 Pid 1887 on worker-1 device  0
// [0000:0b:00] Tesla V100-PCIE-16GB" line (Group absent before 2022).
type NCCLRank struct {
	Rank, Group, PID int
	Host             string
	Device           int
	// Bus is the PCI id as printed: "0x0b" (older) or "0000:0b:00".
	Bus  string
	Name string
}

// NCCLRow is one result row.
type NCCLRow struct {
	// Bytes is the message size (size, bytes), Count the element count.
	Bytes, Count int64
	// Type is the data type ("float"), Redop the reduction ("sum"; "" when
	// the table has no redop column), Root the root rank (-1 for "-1" or
	// when the table has no root column).
	Type, Redop string
	Root        int
	// Out and In are the out-of-place and in-place measurements.
	Out, In NCCLResult
	// Line is the row's 1-based line in the input.
	Line int
}

// NCCLResult is one half of a row.
type NCCLResult struct {
	// TimeUS is the time per operation, microseconds.
	TimeUS float64
	// AlgBW and BusBW are GB/s (10^9 bytes per second).
	AlgBW, BusBW float64
	// Wrong is #wrong, the count of wrong elements; -1 when not reported
	// ("N/A" with -c 0, or the older "error" column).
	Wrong int64
	// MaxError is the older "error" column, the largest error seen
	// (e.g. 2e-07); -1 when absent or "N/A".
	MaxError float64
}

var (
	reNTVersion   = regexp.MustCompile(`nccl-tests version (\S+)`)
	reNTStarting  = regexp.MustCompile(`Collective test starting: (\S+)`)
	reNTConcluded = regexp.MustCompile(`Collective test concluded: (\S+)`)
	reNTParams    = regexp.MustCompile(`minBytes\s+(\d+)\s+maxBytes\s+(\d+)`)
	reNTThreads   = regexp.MustCompile(`nThread\s+(\d+)`)
	reNTGPUs      = regexp.MustCompile(`nGpus(?:\(perProc\))?\s+(\d+)`)
	reNTValid     = regexp.MustCompile(`validation:\s*(\d+)`)
	reNTRank      = regexp.MustCompile(`^Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$`)
	reNTOOB       = regexp.MustCompile(`^Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?`)
	reNTAvg       = regexp.MustCompile(`^Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?`)
	reNTFailure   = regexp.MustCompile(`Test (?:NCCL|CUDA) failure|: Test failure |got completion with error`)
	reNTProgram   = regexp.MustCompile(`\b([a-z_]+_perf)\b`)
	reNTType      = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	reNTReducing  = regexp.MustCompile(`Reducing maxBytes to (\d+)`)
	reNTStep      = regexp.MustCompile(`step:\s*(\d+)\((factor|bytes)\)`)
)

// columns maps a column header to token positions: row field i is header
// token i.
type columns struct {
	size, count, typ, redop, root int
	out, in                       group
}

type group struct{ time, algbw, busbw, wrong int }

// headerColumns reads a column header line ("size count type redop root
// time algbw busbw #wrong time …", '#' already removed); ok is false when
// the line is not one.
func headerColumns(tok []string) (columns, bool) {
	c := columns{size: -1, count: -1, typ: -1, redop: -1, root: -1}
	c.out, c.in = group{-1, -1, -1, -1}, group{-1, -1, -1, -1}
	g := 0
	for i, t := range tok {
		switch t {
		case "size":
			c.size = i
		case "count":
			c.count = i
		case "type":
			c.typ = i
		case "redop":
			c.redop = i
		case "root":
			c.root = i
		case "time", "cputime":
			g++
			if g == 1 {
				c.out.time = i
			} else if g == 2 {
				c.in.time = i
			}
		case "algbw", "busbw", "#wrong", "error":
			gr := &c.out
			if g == 2 {
				gr = &c.in
			}
			if g == 0 {
				continue
			}
			switch t {
			case "algbw":
				if gr.algbw < 0 {
					gr.algbw = i
				}
			case "busbw":
				if gr.busbw < 0 {
					gr.busbw = i
				}
			default:
				if gr.wrong < 0 {
					gr.wrong = i
				}
			}
		}
	}
	ok := c.size == 0 && c.count == 1 && c.typ >= 0 && c.out.busbw > 0
	return c, ok
}

// fallbackColumns places the columns of a row read without a header by
// its field count: size count type [redop] [root] then two quartets of
// time algbw busbw wrong|error (11 to 13 fields).
func fallbackColumns(f []string) (columns, bool) {
	n := len(f)
	if n < 11 || n > 13 {
		return columns{}, false
	}
	c := columns{size: 0, count: 1, typ: 2, redop: -1, root: -1}
	c.out = group{n - 8, n - 7, n - 6, n - 5}
	c.in = group{n - 4, n - 3, n - 2, n - 1}
	switch n {
	case 13:
		c.redop, c.root = 3, 4
	case 12:
		if _, err := strconv.Atoi(f[3]); err == nil {
			c.root = 3
		} else {
			c.redop = 3
		}
	}
	return c, true
}

// ParseNCCLTests reads the output of a nccl-tests run. It is tolerant of
// the formats nccl-tests printed over the years (with or without the
// root, redop and Group columns, "#wrong" or the older "error" column,
// "N/A" when validation is off), of text around the output (launcher
// lines, the NCCL log, WARN lines between header and table, Open MPI's
// [1,0]<stdout>: prefix), of lines whose leading '#' was lost in a paste,
// and of output cut short (no footer; see Footer). It fails with an error
// wrapping [ErrNotRecognized] when data has no column header, no "#
// nThread … minBytes …" header, and fewer than two result rows. When data
// holds several runs one after the other, it returns the first (Runs says
// how many there are; [ParseNCCLTestsRuns] reads them all).
func ParseNCCLTests(data []byte) (*NCCLTests, error) {
	runs, err := ParseNCCLTestsRuns(data)
	if err != nil {
		return nil, err
	}
	return runs[0], nil
}

// ParseNCCLTestsRuns reads every run of a nccl-tests output saved from
// several runs one after the other (a loop, or `>>` into one file), as
// [ParseNCCLTests] reads one. A run starts at a "# nccl-tests version",
// "# Collective test starting" or "# nThread … minBytes" line after a
// previous run's rows or footer, or at a column header after a previous
// run's footer; the text between the previous run's last line and that
// line (a launch command, say) belongs to the new run. Each run has the
// NCCL log printed within its lines. Runs interleaved line by line (every
// process running its own test) are one run whose sizes go down
// ([NCCLTests.Dropped]).
func ParseNCCLTestsRuns(data []byte) ([]*NCCLTests, error) {
	p := newNTStream()
	_ = eachLine(bytes.NewReader(data), func(i int, l, _ string) { p.feed(i, l) })
	runs, _ := p.finish()
	if len(runs) == 0 {
		return nil, fmt.Errorf("nccl-tests: %w", ErrNotRecognized)
	}
	return runs, nil
}

// maxPending is how many lines after a run's last line of its own a
// parser holds while it cannot tell whether they open the next run (a
// launch command, say); older ones are given to the earlier run, so that
// memory stays bounded whatever the text between two runs.
const maxPending = 10000

// ntStream reads nccl-tests runs one line at a time: each run, and the
// NCCL log printed within its lines, in one pass. The lines after a run's
// last line of its own wait (pending) until a line of the run follows
// (they are then its own) or a new run starts (they are then the new
// run's, as its launch command).
type ntStream struct {
	lines   int // lines read
	cur     *ntRun
	pending []numbered
	runs    []*NCCLTests
}

type numbered struct {
	i int
	l string
}

// ntRun is the state of one run being read.
type ntRun struct {
	t                          *NCCLTests
	log                        *logParser
	cols                       columns
	haveCols, params, stopRows bool
	rowsSeen                   int
	lastOwn                    int              // the last line read as the run's own, 0-based; -1 before
	lastBytes                  map[string]int64 // per type and reduction
}

func newNTStream() *ntStream { return &ntStream{cur: newNTRun(0)} }

func newNTRun(first int) *ntRun {
	return &ntRun{t: &NCCLTests{Validation: -1, OutOfBounds: -1, FirstLine: first + 1}, log: newLogParser(),
		lastOwn: -1, lastBytes: map[string]int64{}}
}

func (r *ntRun) recognized() bool { return r.t.Header || r.params || r.rowsSeen >= 2 }

// feed reads line i.
func (p *ntStream) feed(i int, l string) {
	p.lines = max(p.lines, i+1)
	switch p.cur.step(i, l) {
	case lineOwn:
		p.flush()
		p.cur.log.feed(i, l)
	case lineOther:
		if !p.cur.recognized() { // nothing before recognition can open another run
			p.cur.other(i, l)
			return
		}
		p.pending = append(p.pending, numbered{i, l})
		if len(p.pending) > maxPending {
			p.cur.other(p.pending[0].i, p.pending[0].l)
			p.pending = p.pending[1:]
		}
	case lineNewRun:
		p.end()
		first := i
		if len(p.pending) > 0 {
			first = p.pending[0].i
		}
		if p.cur.lastOwn >= 0 {
			first = p.cur.lastOwn + 1 // blank lines after the last own line too
		}
		pend := p.pending
		p.pending = nil
		p.cur = newNTRun(first)
		for _, x := range pend {
			p.feed(x.i, x.l)
		}
		p.feed(i, l)
	}
}

// feedNCCL is feed of an NCCL log line (trimmed) that fastNCCLLine read:
// always the run's own.
func (p *ntStream) feedNCCL(i int, l, host, level, msg string) {
	p.lines = max(p.lines, i+1)
	r := p.cur
	// reNTFailure on l: its words have spaces, which the host prefix has
	// not, so only the message can hold them
	if (strings.Contains(msg, "failure") || strings.Contains(msg, "completion with error")) && reNTFailure.MatchString(l) {
		r.t.Failures = append(r.t.Failures, clip(l, 200))
	}
	r.lastOwn = i
	p.flush()
	r.log.feedNCCL(i, l, host, level, msg)
}

// flush gives the pending lines to the current run.
func (p *ntStream) flush() {
	for _, x := range p.pending {
		p.cur.other(x.i, x.l)
	}
	p.pending = p.pending[:0]
}

// end closes the current run, keeping it when it was nccl-tests output.
func (p *ntStream) end() {
	r := p.cur
	if !r.recognized() {
		return
	}
	r.t.LastLine = r.lastOwn + 1
	r.t.Log = r.log.result()
	p.runs = append(p.runs, r.t)
}

// finish ends the input: the runs read, numbered, and the NCCL log of the
// whole input when it held no run.
func (p *ntStream) finish() ([]*NCCLTests, *NCCLLog) {
	p.flush()
	r := p.cur
	var whole *NCCLLog
	if r.recognized() {
		r.t.LastLine = p.lines
		r.t.Log = r.log.result()
		p.runs = append(p.runs, r.t)
	} else if len(p.runs) == 0 {
		whole = r.log.result()
	}
	for i, t := range p.runs {
		t.Run, t.Runs = i+1, len(p.runs)
	}
	return p.runs, whole
}

// The ways a line relates to the run being read.
const (
	lineOwn    = iota // the run's own line
	lineOther         // none of the run's: text around it, or the next run's launch line
	lineNewRun        // it starts a new run
	lineBlank         // empty
)

// other reads a line that is not the run's own but lies within it.
func (r *ntRun) other(i int, l string) {
	if r.t.Program == "" && strings.Contains(l, "_perf") {
		if m := reNTProgram.FindStringSubmatch(l); m != nil {
			r.t.Program = m[1]
		}
	}
	r.log.feed(i, l)
}

// step reads line i of the input into the run (its own lines only).
func (r *ntRun) step(i int, raw string) int {
	t := r.t
	l := strings.TrimSpace(raw)
	if l == "" {
		return lineBlank
	}
	if strings.Contains(l, "NCCL INFO") || strings.Contains(l, "NCCL WARN") {
		if strings.Contains(l, " NCCL INFO ") || strings.Contains(l, " NCCL WARN ") ||
			strings.HasPrefix(l, "NCCL INFO ") || strings.HasPrefix(l, "NCCL WARN ") {
			if strings.Contains(l, "failure") || strings.Contains(l, "completion with error") {
				if reNTFailure.MatchString(l) {
					t.Failures = append(t.Failures, clip(l, 200))
				}
			}
			r.lastOwn = i
			return lineOwn
		}
	}
	body := strings.TrimSpace(strings.TrimLeft(l, "#"))
	tok := strings.Fields(body)
	if r.recognized() {
		preamble := (strings.Contains(body, "nccl-tests version ") && reNTVersion.MatchString(body)) ||
			(strings.Contains(body, "Collective test starting: ") && reNTStarting.MatchString(body)) ||
			(strings.Contains(body, "minBytes") && reNTParams.MatchString(body))
		if (preamble && (r.rowsSeen > 0 || t.Footer)) || (t.Footer && isHeader(tok)) {
			return lineNewRun
		}
	}
	if body == "" { // nccl-tests' "#" between its blocks
		r.lastOwn = i
		return lineOwn
	}
	if own := r.ownLine(i, l, body, tok); own {
		r.lastOwn = i
		return lineOwn
	}
	return lineOther
}

// ownLine reads one non-empty line that is not an NCCL log line; it
// reports whether the line is the run's own.
func (r *ntRun) ownLine(i int, l, body string, tok []string) bool {
	t := r.t
	if strings.Contains(body, "nccl-tests version ") {
		if m := reNTVersion.FindStringSubmatch(body); m != nil {
			t.Version = m[1]
			return true
		}
	}
	if strings.Contains(body, "Collective test ") {
		if m := reNTStarting.FindStringSubmatch(body); m != nil {
			t.Program = m[1]
			return true
		}
		if m := reNTConcluded.FindStringSubmatch(body); m != nil {
			t.Concluded = true
			if t.Program == "" {
				t.Program = m[1]
			}
			return true
		}
	}
	if strings.Contains(body, "minBytes") {
		if m := reNTParams.FindStringSubmatch(body); m != nil {
			r.params = true
			t.MinBytes, _ = strconv.ParseInt(m[1], 10, 64)
			t.MaxBytes, _ = strconv.ParseInt(m[2], 10, 64)
			if m := reNTThreads.FindStringSubmatch(body); m != nil {
				t.NThread, _ = strconv.Atoi(m[1])
			}
			if m := reNTGPUs.FindStringSubmatch(body); m != nil {
				t.NGPUs, _ = strconv.Atoi(m[1])
			}
			if m := reNTValid.FindStringSubmatch(body); m != nil {
				t.Validation, _ = strconv.Atoi(m[1])
			}
			if m := reNTStep.FindStringSubmatch(body); m != nil {
				n, _ := strconv.ParseInt(m[1], 10, 64)
				if m[2] == "factor" {
					t.StepFactor = n
				} else {
					t.StepBytes = n
				}
			}
			return true
		}
	}
	if strings.HasPrefix(body, "Rank") {
		if m := reNTRank.FindStringSubmatch(body); m != nil {
			var rk NCCLRank
			rk.Rank, _ = strconv.Atoi(m[1])
			rk.Group, _ = strconv.Atoi(m[2])
			rk.PID, _ = strconv.Atoi(m[3])
			rk.Host = m[4]
			rk.Device, _ = strconv.Atoi(m[5])
			rk.Bus, rk.Name = m[6], strings.TrimSpace(m[7])
			t.Ranks = append(t.Ranks, rk)
			return true
		}
	}
	if strings.HasPrefix(body, "Out of bounds values") {
		if m := reNTOOB.FindStringSubmatch(body); m != nil {
			t.OutOfBounds, _ = strconv.ParseInt(m[1], 10, 64)
			t.Footer, r.stopRows = true, true
			return true
		}
	}
	if strings.HasPrefix(body, "Avg bus bandwidth") {
		if m := reNTAvg.FindStringSubmatch(body); m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil && finite(v) {
				t.AvgBusBW, t.HasAvg = v, true
			}
			t.AvgGate = m[2]
			t.Footer, r.stopRows = true, true
			return true
		}
	}
	if (strings.Contains(l, "failure") || strings.Contains(l, "completion with error")) && reNTFailure.MatchString(l) {
		t.Failures = append(t.Failures, clip(l, 200))
		return true
	}
	if strings.Contains(body, "Reducing maxBytes to ") {
		if m := reNTReducing.FindStringSubmatch(body); m != nil {
			t.Notes = append(t.Notes, clip(body, 200))
			t.ReducedMaxBytes, _ = strconv.ParseInt(m[1], 10, 64)
			return true
		}
	}
	if c, ok := headerColumns(tok); ok {
		t.Tables++
		if t.Tables == 1 {
			r.cols, r.haveCols, t.Header = c, true, true
			t.Root, t.Redop = c.root >= 0, c.redop >= 0
			t.WrongColumn = ""
			if c.out.wrong >= 0 {
				t.WrongColumn = tok[c.out.wrong]
			}
		} else if len(t.Rows) > 0 {
			r.stopRows = true
		}
		return true
	}
	f := strings.Fields(l)
	rc, ok := r.cols, r.haveCols
	if !ok {
		rc, ok = fallbackColumns(f)
	}
	if ok {
		if row, ok := parseNCCLRow(f, rc); ok {
			r.rowsSeen++
			if r.stopRows {
				if t.Ignored == 0 {
					t.IgnoredLine = i + 1
				}
				t.Ignored++
				return true
			}
			row.Line = i + 1
			key := row.Type + " " + row.Redop
			if last, ok := r.lastBytes[key]; ok && row.Bytes < last {
				t.Dropped++
				return true
			}
			r.lastBytes[key] = row.Bytes
			t.Rows = append(t.Rows, row)
			return true
		}
	}
	if (t.Header || r.rowsSeen > 0) && !r.stopRows && len(f) > 0 && allDigits(f[0]) && !strings.HasPrefix(l, "#") {
		t.Unreadable = append(t.Unreadable, i+1)
		return true
	}
	return false
}

// isHeader reports whether tok is a column header line's tokens.
func isHeader(tok []string) bool {
	_, ok := headerColumns(tok)
	return ok
}

// parseNCCLRow reads one result row with the column positions c.
func parseNCCLRow(f []string, c columns) (NCCLRow, bool) {
	need := max(c.size, c.count, c.typ, c.redop, c.root, c.out.time, c.out.algbw, c.out.busbw, c.out.wrong,
		c.in.time, c.in.algbw, c.in.busbw, c.in.wrong)
	if need >= len(f) || c.out.busbw < 0 {
		return NCCLRow{}, false
	}
	var row NCCLRow
	var err error
	if row.Bytes, err = strconv.ParseInt(f[c.size], 10, 64); err != nil || row.Bytes < 0 {
		return NCCLRow{}, false
	}
	if row.Count, err = strconv.ParseInt(f[c.count], 10, 64); err != nil || row.Count < 0 {
		return NCCLRow{}, false
	}
	if !reNTType.MatchString(f[c.typ]) {
		return NCCLRow{}, false
	}
	row.Type = f[c.typ]
	row.Root = -1
	if c.redop >= 0 {
		if !reNTType.MatchString(f[c.redop]) {
			return NCCLRow{}, false
		}
		row.Redop = f[c.redop]
	}
	if c.root >= 0 {
		if row.Root, err = strconv.Atoi(f[c.root]); err != nil {
			return NCCLRow{}, false
		}
	}
	var ok bool
	if row.Out, ok = parseNCCLResult(f, c.out); !ok {
		return NCCLRow{}, false
	}
	if c.in.busbw >= 0 {
		if row.In, ok = parseNCCLResult(f, c.in); !ok {
			return NCCLRow{}, false
		}
	} else {
		row.In = NCCLResult{Wrong: -1, MaxError: -1}
	}
	return row, true
}

func parseNCCLResult(f []string, g group) (NCCLResult, bool) {
	r := NCCLResult{Wrong: -1, MaxError: -1}
	num := func(i int) (float64, bool) {
		if i < 0 {
			return 0, true
		}
		v, err := strconv.ParseFloat(f[i], 64)
		return v, err == nil && finite(v) && v >= 0
	}
	var ok bool
	if r.TimeUS, ok = num(g.time); !ok {
		return r, false
	}
	if r.AlgBW, ok = num(g.algbw); !ok {
		return r, false
	}
	if r.BusBW, ok = num(g.busbw); !ok {
		return r, false
	}
	if g.wrong >= 0 {
		s := strings.TrimSuffix(f[g.wrong], "*")
		if s != "N/A" {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !finite(v) || v < 0 {
				return r, false
			}
			if strings.ContainsAny(s, ".eE") {
				r.MaxError = v
			} else {
				r.Wrong = int64(v)
			}
		}
	}
	return r, true
}

// Largest returns the rows of the largest size (several with -d all or
// -o all); nil without rows.
func (t *NCCLTests) Largest() []NCCLRow {
	if len(t.Rows) == 0 {
		return nil
	}
	max := t.LargestBytes()
	var out []NCCLRow
	for _, r := range t.Rows {
		if r.Bytes == max {
			out = append(out, r)
		}
	}
	return out
}

// LargestBytes is the largest size of the rows; -1 without rows.
func (t *NCCLTests) LargestBytes() int64 {
	m := int64(-1)
	for _, r := range t.Rows {
		m = max(m, r.Bytes)
	}
	return m
}

// Hosts are the distinct hosts of the Rank lines, in order.
func (t *NCCLTests) Hosts() []string {
	var hs []string
	seen := map[string]bool{}
	for _, r := range t.Ranks {
		if !seen[r.Host] {
			seen[r.Host] = true
			hs = append(hs, r.Host)
		}
	}
	return hs
}

// Wrong is the total of #wrong over every row (out- and in-place), and
// whether any row reported it.
func (t *NCCLTests) Wrong() (int64, bool) {
	var n int64
	any := false
	for _, r := range t.Rows {
		for _, x := range []NCCLResult{r.Out, r.In} {
			if x.Wrong >= 0 {
				any = true
				n += x.Wrong
			}
		}
	}
	return n, any
}

// gapMinBytes is the smallest size whose step to the next row is checked
// for missing sizes: nccl-tests prints a size rounded down to whole
// elements per rank (count × type size × ranks), which at small sizes can
// halve it or make it 0 (8 ranks of all_gather at 8 B); at 1 MiB and more
// the rounding is below a percent even with 2,048 ranks of 8-byte types.
const gapMinBytes = 1 << 20

// SweepEnd is the size the sweep of the "# nThread … minBytes … maxBytes
// … step:" header ends at: the last of minBytes, minBytes × factor, … (or
// minBytes + step, …) not above maxBytes (nccl-tests' size loop), or
// above ReducedMaxBytes when set; 0 when the header gives no step.
func (t *NCCLTests) SweepEnd() int64 {
	end := t.MaxBytes
	if t.ReducedMaxBytes > 0 && t.ReducedMaxBytes < end {
		end = t.ReducedMaxBytes
	}
	if t.MinBytes <= 0 || end < t.MinBytes {
		return 0
	}
	switch {
	case t.StepFactor > 1:
		s := t.MinBytes
		for s <= end/t.StepFactor {
			s *= t.StepFactor
		}
		return s
	case t.StepBytes > 0:
		return t.MinBytes + (end-t.MinBytes)/t.StepBytes*t.StepBytes
	}
	return 0
}

// endMissing reports whether the rows stop at least one step before
// SweepEnd (of 1 MiB or more): the largest sizes' rows are not in the
// output. A printed size is below its loop size by under a percent there
// (gapMinBytes), and by less than half a step.
func (t *NCCLTests) endMissing() bool {
	end := t.SweepEnd()
	if end < gapMinBytes || len(t.Rows) == 0 {
		return false
	}
	tol := end / 100
	if t.StepFactor <= 1 {
		tol = min(tol, t.StepBytes/2)
	}
	return t.LargestBytes() < end-tol
}

// Missing counts the sizes absent between consecutive rows of the same
// type and reduction, by the header's step (0 without one), from rows of
// at least 1 MiB; from and to are the rows around the first gap.
func (t *NCCLTests) Missing() (n int, from, to int64) {
	if t.StepFactor <= 1 && t.StepBytes <= 0 {
		return 0, 0, 0
	}
	prev := map[string]int64{}
	for _, r := range t.Rows {
		key := r.Type + " " + r.Redop
		p, ok := prev[key]
		prev[key] = r.Bytes
		if !ok || p < gapMinBytes || r.Bytes <= p {
			continue
		}
		var steps float64
		if t.StepFactor > 1 {
			steps = math.Log(float64(r.Bytes)/float64(p)) / math.Log(float64(t.StepFactor))
		} else {
			steps = float64(r.Bytes-p) / float64(t.StepBytes)
		}
		if k := int(math.Round(steps)); k >= 2 {
			if n == 0 {
				from, to = p, r.Bytes
			}
			n += k - 1
		}
	}
	return n, from, to
}
