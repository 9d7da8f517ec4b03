package bench

import (
	"bytes"
	"encoding/xml"
	"io"
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
