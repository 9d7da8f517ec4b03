package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/golden"
)

// svgElements parses data as XML, failing the test when it is not well
// formed, and counts its elements by name; texts are its character data.
func svgElements(t *testing.T, data []byte) (map[string]int, string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	n := map[string]int{}
	var text strings.Builder
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, data)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = x.Name.Local
				if x.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root namespace %q", x.Name.Space)
				}
			}
			n[x.Name.Local]++
		case xml.CharData:
			text.Write(x)
			text.WriteByte('\n')
		}
	}
	if root != "svg" {
		t.Errorf("root %q", root)
	}
	return n, text.String()
}

// TestSweepSVG: the SVG of a recorded sweep (DeepOps, 2 × 100 GbE RoCE) is
// well-formed XML with the busbw and algbw curves, a point per size, the
// pass line, the link's ceiling and the plateau size; docs/bench-sweep.svg
// is this picture.
func TestSweepSVG(t *testing.T) {
	e := Expect{LinkGbps: 100, NICsPerNode: 2, GIDIndex: -1}
	parts, err := JudgeParts(read(t, "nccltests-deepops-roce-2x100g.txt"), e)
	if err != nil || parts[0].NCCLTests == nil {
		t.Fatal(err)
	}
	nt := parts[0].NCCLTests
	svg := SweepSVG("nccltests-deepops-roce-2x100g.txt: all_reduce_perf, 2 × 100 Gb/s RoCE per node", nt, e)
	n, text := svgElements(t, svg)
	rows := len(nt.SweepRows())
	if rows != 29 || n["polyline"] != 2 || n["circle"] != 2*rows || n["title"] != 1+2*rows {
		t.Errorf("%d rows, elements %v", rows, n)
	}
	for _, s := range []string{"pass line 21.6 GB/s", "NIC bandwidth 25 GB/s (a ring's ceiling)", "plateau from 32 MiB", "busbw (out-of-place)", "algbw (out-of-place)", "2 GiB", "8 B",
		"2147483648 B (2 GiB): 22.92 GB/s"} {
		if !strings.Contains(text, s) {
			t.Errorf("the SVG lacks %q", s)
		}
	}
	if p, _ := nt.Plateau(); p.Bytes != 32<<20 {
		t.Errorf("plateau at %d", p.Bytes)
	}
	golden.Check(t, "../../docs/bench-sweep.svg", svg)
	// a hostile title is escaped; a run without rows still draws
	n, text = svgElements(t, SweepSVG("<script>&\x1b[31m", &NCCLTests{}, Expect{}))
	if n["script"] != 0 || !strings.Contains(text, "<script>&[31m") || !strings.Contains(text, "no result rows") {
		t.Errorf("%v %q", n, text)
	}
}

// TestBarsSVG: the SVG of a round of pairs (recorded reports) is
// well-formed, one bar per pair, coloured by its verdict, with the pass
// line and the link.
func TestBarsSVG(t *testing.T) {
	e := Expect{LinkGbps: 100, GIDIndex: -1}
	var reports []*Perftest
	for _, f := range []string{"perftest-deepops-roce-gbits.txt", "perftest-273-postlist-8b.txt", "perftest-126-cuda-mr-fail.txt"} {
		r, err := ParsePerftest(read(t, f))
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, r)
	}
	bars := PerftestBars([]string{"a → b", "b → c", "c → a"}, append(reports, nil)[:3], e)
	if bars[0].Status != StatusPass || bars[0].Value != 92.40 || bars[2].Status != StatusError {
		t.Errorf("%+v", bars)
	}
	svg := BarsSVG("round 1 of 2", bars, PerftestPassLine(100, false), 100)
	n, text := svgElements(t, svg)
	if n["rect"] != 1+3 || !strings.Contains(text, "a → b: 92.4 Gb/s, pass") || !strings.Contains(text, "pass line 90 Gb/s") || !strings.Contains(text, "link 100 Gb/s") {
		t.Errorf("%v\n%s", n, text)
	}
	many := make([]Bar, 100)
	if _, text := svgElements(t, BarsSVG("r", many, PerftestPassLine(100, false), 0)); !strings.Contains(text, "first 64 of 100 pairs") {
		t.Error("100 bars")
	}
}

// svgGeometry fails the test unless every coordinate and size of data
// (x, y, cx, cy, x1 … y2, width, height, a path's points) is a finite
// number inside the picture, and no text holds a number of more than 12
// digits; it returns the value axis's tick labels, bottom to top.
func svgGeometry(t *testing.T, data []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var ticks []string
	inTick := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			inTick = false
			for _, a := range x.Attr {
				var nums []string
				switch a.Name.Local {
				case "x", "y", "cx", "cy", "x1", "y1", "x2", "y2", "width", "height":
					nums = []string{a.Value}
				case "d":
					nums = strings.FieldsFunc(a.Value, func(r rune) bool { return r == ' ' || r == ',' || r == 'M' || r == 'L' || r == 'Z' })
				}
				for _, s := range nums {
					v, err := strconv.ParseFloat(s, 64)
					if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < -20 || v > svgW+20 {
						t.Errorf("<%s %s=%q>: not a coordinate inside the picture", x.Name.Local, a.Name.Local, a.Value)
					}
				}
				if x.Name.Local == "text" && a.Name.Local == "x" && a.Value == fmt.Sprintf("%.1f", float64(svgLeft-6)) {
					inTick = true
				}
			}
		case xml.CharData:
			digits := 0
			for _, r := range string(x) {
				if r >= '0' && r <= '9' {
					digits++
					if digits > 12 {
						t.Errorf("a text with a %d+ digit number: %.60q", digits, x)
						break
					}
				} else {
					digits = 0
				}
			}
			if inTick {
				ticks = append(ticks, string(x))
				inTick = false
			}
		}
	}
	return ticks
}

// reBadAttr is an attribute or a point whose value is no number.
var reBadAttr = regexp.MustCompile(`="[^"]*(Inf|NaN)|(Inf|NaN) GB/s`)

// TestSVGValuesNotDrawable: a busbw of 1e308 GB/s (the recorded DeepOps
// sweep with its last busbw edited, testdata/svg) is drawn at the top
// edge with a ▲ on the axis of the unedited sweep, and a note says so;
// NaN, infinite and negative values are left out of a curve or a bar and
// counted in the note; no coordinate is -Inf and no label has 309 digits.
func TestSVGValuesNotDrawable(t *testing.T) {
	e := Expect{LinkGbps: 100, NICsPerNode: 2, GIDIndex: -1}
	sweep := func(file string) []byte {
		parts, err := JudgeParts(read(t, file), e)
		if err != nil || parts[0].NCCLTests == nil {
			t.Fatal(file, err)
		}
		return SweepSVG(file, parts[0].NCCLTests, e)
	}
	// the verdict's text says 1e+308 too, not 309 digits
	if _, vs, _ := Judge(read(t, "svg/nccltests-busbw-1e308.txt"), e); regexp.MustCompile(`[0-9]{16}`).MatchString(strings.Join(Lines(vs), "\n")) ||
		!strings.Contains(vs[0].Found, "largest size: 1e+308 GB/s out-of-place busbw") {
		t.Errorf("%s", strings.Join(Lines(vs), "\n"))
	}
	want := svgGeometry(t, sweep("nccltests-deepops-roce-2x100g.txt"))
	svg := sweep("svg/nccltests-busbw-1e308.txt")
	if got := svgGeometry(t, svg); strings.Join(got, " ") != strings.Join(want, " ") || len(got) < 3 {
		t.Errorf("value axis %q, want the unedited sweep's %q", got, want)
	}
	n, text := svgElements(t, svg)
	if !strings.Contains(text, "note: 1 value above 2500 GB/s (100 × the highest line) at the top edge ▲, the largest 1e+308") ||
		n["path"] != 1 || n["circle"] != 2*29 || reBadAttr.Match(svg) {
		t.Errorf("%v\n%s", n, text)
	}

	rows := []NCCLRow{{Bytes: 1 << 20, Out: NCCLResult{BusBW: 10, AlgBW: 5}}, {Bytes: 1 << 21, Out: NCCLResult{BusBW: math.NaN(), AlgBW: math.Inf(1)}},
		{Bytes: 1 << 22, Out: NCCLResult{BusBW: -3, AlgBW: 6}}, {Bytes: 1 << 23, Out: NCCLResult{BusBW: 12, AlgBW: math.Inf(-1)}}}
	svg = SweepSVG("hostile", &NCCLTests{Rows: rows}, e)
	svgGeometry(t, svg)
	if n, text := svgElements(t, svg); n["circle"] != 4 || !strings.Contains(text, "note: 4 values left out (NaN, ±Inf or negative)") ||
		reBadAttr.Match(svg) {
		t.Errorf("%v\n%s", n, text)
	}

	bars := []Bar{{Name: "a", Value: 1e308, Status: StatusError}, {Name: "b", Value: math.NaN(), Status: StatusError},
		{Name: "c", Value: -5, Status: StatusError}, {Name: "d", Value: 92.4, Status: StatusPass}}
	svg = BarsSVG("hostile bars", bars, PerftestPassLine(100, false), 100)
	if ticks := svgGeometry(t, svg); ticks[len(ticks)-1] != "150" {
		t.Errorf("bars' axis %q: want it sized by the link (100 Gb/s), not by 1e308", ticks)
	}
	if n, text := svgElements(t, svg); n["rect"] != 1+2 || n["path"] != 1 ||
		!strings.Contains(text, "note: 1 value above 10000 Gb/s (100 × the highest line) at the top edge ▲, the largest 1e+308; 2 values left out (NaN, ±Inf or negative)") {
		t.Errorf("%v\n%s", n, text)
	}
	// lines that are no number are not drawn, and break nothing
	svg = BarsSVG("no lines", bars[3:], PassLine{Value: math.NaN()}, math.Inf(1))
	svgGeometry(t, svg)
	if _, text := svgElements(t, svg); strings.Contains(text, "pass line") && !strings.Contains(text, "pass line\n") || strings.Contains(text, "link Inf") {
		t.Errorf("%s", text)
	}
}
