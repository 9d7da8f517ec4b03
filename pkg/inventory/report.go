package inventory

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rdggen/rdggen/pkg/quote"
)

// Pos is a 1-based line and column in the inventory file; the zero Pos means unknown.
type Pos struct{ Line, Col int }

// Finding is one broken rule: where (file, position, field path) and which rule.
type Finding struct {
	// File is the inventory's name as given to Load.
	File string
	// Pos is the position of the offending key or value.
	Pos Pos
	// Path names the field, e.g. "hosts[3].data.address"; "" for the whole file.
	Path string
	// Rule says what is wrong and, where it helps, what is accepted.
	Rule string
}

// maxRule is how much of a rule String shows; a value quoted in it may be
// as long as the file.
const maxRule = 400

// String formats the finding as "file:line:col: path: rule", on one line:
// control characters from the file (a key with a newline) are escaped in
// the path and the rule (File is DisplayName's already), and a rule longer
// than 400 bytes is cut.
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.File)
	if f.Pos.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", f.Pos.Line, f.Pos.Col)
	}
	if f.Path != "" {
		b.WriteString(": ")
		b.WriteString(quote.Terminal(f.Path))
	}
	b.WriteString(": ")
	rule := f.Rule
	if len(rule) > maxRule {
		cut := maxRule
		for cut > 0 && !utf8.RuneStart(rule[cut]) {
			cut--
		}
		rule = fmt.Sprintf("%s… (%d more bytes)", rule[:cut], len(rule)-cut)
	}
	b.WriteString(quote.Terminal(rule))
	return b.String()
}

// MaxFindings is how many findings a Report keeps; the rest are only counted
// (Omitted), so that a huge broken file cannot make a huge report.
const MaxFindings = 100

// Report is every finding of one Load, in file order (at most MaxFindings;
// Omitted counts the others). A non-empty *Report is the error Load returns
// for an invalid inventory.
type Report struct {
	Findings []Finding
	// Omitted is the number of findings beyond MaxFindings.
	Omitted int
}

// add keeps f, or counts it once MaxFindings are kept.
func (r *Report) add(f Finding) {
	if len(r.Findings) >= MaxFindings {
		r.Omitted++
		return
	}
	r.Findings = append(r.Findings, f)
}

// Count is the number of findings, kept and omitted.
func (r *Report) Count() int { return len(r.Findings) + r.Omitted }

// Error lists the findings, one per line, and "and N more" when some were omitted.
func (r *Report) Error() string {
	lines := make([]string, len(r.Findings), len(r.Findings)+1)
	for i, f := range r.Findings {
		lines[i] = f.String()
	}
	if r.Omitted > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more finding(s) not shown; fix these first", r.Omitted))
	}
	return strings.Join(lines, "\n")
}

func (r *Report) sort() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i].Pos, r.Findings[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Line == 0 { // no file (Build): in field order, hosts[2] before hosts[10]
			return pathLess(r.Findings[i].Path, r.Findings[j].Path)
		}
		return a.Col < b.Col
	})
}

// positions maps field paths ("hosts[3].data.address") to the position of
// their value; path+"#key" holds the position of the mapping key itself.
type positions map[string]Pos

// lookup returns the position of path or of its deepest existing parent.
func (p positions) lookup(path string) Pos {
	for path != "" {
		if pos, ok := p[path]; ok {
			return pos
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return p[""]
}

// pathLess orders field paths as they appear in a file: element by element,
// list indices as numbers ("hosts[2].os" before "hosts[10].data").
func pathLess(a, b string) bool {
	for a != "" && b != "" {
		if la, lb := leadingIndex(a), leadingIndex(b); la > 0 && lb > 0 {
			na, _ := strconv.Atoi(a[1 : la-1])
			nb, _ := strconv.Atoi(b[1 : lb-1])
			if na != nb {
				return na < nb
			}
			a, b = a[la:], b[lb:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// leadingIndex is the length of a leading "[N]" in s, or -1.
func leadingIndex(s string) int {
	end := strings.IndexByte(s, ']')
	if !strings.HasPrefix(s, "[") || end < 2 {
		return -1
	}
	for _, c := range s[1:end] {
		if c < '0' || c > '9' {
			return -1
		}
	}
	return end + 1
}
