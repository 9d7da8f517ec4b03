package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The pictures of the numbers: an SVG per nccl-tests sweep ([SweepSVG]) and
// one per round of ib_write_bw pairs ([BarsSVG]), drawn by hand as
// rdggen's cluster.svg is (plain SVG 1.1, no script, no external
// reference), in its palette.
const (
	svgW, svgH           = 760, 420
	svgLeft, svgRight    = 70, 190 // plot margins: axis labels, legend
	svgTop, svgBottom    = 46, 56
	colBusBW             = "#2e75b6" // busbw, and bars that pass
	colAlgBW             = "#7030a0"
	colPassLine          = "#548235"
	colCeiling           = "#c00000"
	colPlateau           = "#c55a11"
	colAxis              = "#595959"
	colFailBar           = "#c00000"
	colText              = "#262626"
	svgFont              = "font-family=\"Helvetica,Arial,sans-serif\""
	plateauFraction      = 0.95 // the plateau starts at the first size within 5 % of the sweep's best busbw
	maxBars              = 64   // bars drawn per picture; the rest are counted in the title
	svgMaxTitle          = 100  // characters of a title
	svgMaxLabel          = 28   // characters of a bar's label
	svgMaxNote           = 150  // bytes of the note on values not drawn where they lie
	svgTickLabelEveryPow = 3    // size ticks labelled every 2^3
	// svgMaxScale: a value more than this many times the plot's highest
	// line (its pass line or ceiling) is drawn at the top edge, marked,
	// and named in the plot's note: an axis that reached it would press
	// the lines the picture is for onto its floor (1e308 GB/s beside a
	// 21.6 GB/s pass line).
	svgMaxScale = 100
	svgMaxTicks = 12 // value ticks at most (yScale makes 5 to 10)
)

type svgDoc struct{ b bytes.Buffer }

func (d *svgDoc) f(format string, a ...any) { fmt.Fprintf(&d.b, format, a...) }

func (d *svgDoc) text(x, y float64, anchor, fill string, size int, s string) {
	d.f("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"%s\" font-size=\"%d\" %s>%s</text>\n", x, y, anchor, fill, size, svgFont, svgEsc(s))
}

func (d *svgDoc) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	extra := ""
	if dash != "" {
		extra = " stroke-dasharray=\"" + dash + "\""
	}
	d.f("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n", x1, y1, x2, y2, stroke, width, extra)
}

// svgEsc is s as XML character data, control characters dropped.
func svgEsc(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return -1
		}
		return r
	}, s)
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (d *svgDoc) open(title string) {
	d.f("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", svgW, svgH, svgW, svgH)
	d.f("<title>%s</title>\n", svgEsc(title))
	d.f("<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", svgW, svgH)
	d.text(svgW/2, 24, "middle", colText, 14, clip(title, svgMaxTitle))
}

func (d *svgDoc) close() []byte {
	d.f("</svg>\n")
	return d.b.Bytes()
}

// legend draws one entry per line at the right of the plot.
func (d *svgDoc) legend(entries [][3]string) { // colour, dash, text
	x, y := float64(svgW-svgRight+16), float64(svgTop+8)
	for _, e := range entries {
		d.line(x, y, x+22, y, e[0], 2.5, e[1])
		d.text(x+28, y+4, "start", colText, 11, e[2])
		y += 20
	}
}

// yScale returns the plot's top value: max rounded up to a 1-2-5 step,
// and that step; 1 and 0.2 when max is not a positive finite number.
// Both are finite (a max near the largest float64 keeps its own value).
func yScale(max float64) (top, step float64) {
	if !(max > 0) || math.IsInf(max, 0) {
		return 1, 0.2
	}
	raw := max / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	top = math.Ceil(max/step) * step
	if math.IsInf(top, 0) || math.IsInf(step, 0) {
		return max, max / 5
	}
	return top, step
}

// drawable reports whether v can stand on a bandwidth axis: a finite
// number, not negative (NaN, ±Inf and negative bandwidths are no
// measurement).
func drawable(v float64) bool { return finite(v) && v >= 0 }

// scale is a plot's value axis, from 0 to top in ticks of step. A value
// above cut is drawn at the top edge and marked; a value that is not
// drawable is left out. above and dropped count them, highest is the
// largest value above cut.
type scale struct {
	top, step, cut float64
	above, dropped int
	highest        float64
	unit           string
}

// newScale sizes the axis for the lines refs (pass line, ceiling: those
// not drawable are not drawn) and the values: up to the highest line and
// every value within svgMaxScale times it, plus 5 %.
func newScale(unit string, refs, values []float64) *scale {
	s := &scale{unit: unit, cut: math.Inf(1)}
	ref := 0.0
	for _, r := range refs {
		if drawable(r) {
			ref = math.Max(ref, r)
		}
	}
	if ref > 0 {
		s.cut = ref * svgMaxScale
	}
	hi := ref
	for _, v := range values {
		switch {
		case !drawable(v):
			s.dropped++
		case v > s.cut:
			s.above++
			s.highest = math.Max(s.highest, v)
		default:
			hi = math.Max(hi, v)
		}
	}
	if h := hi * 1.05; !math.IsInf(h, 0) {
		hi = h
	}
	s.top, s.step = yScale(hi)
	return s
}

// note is the plot's visible account of the values it could not draw
// where they lie; "" when there are none.
func (s *scale) note() string {
	var parts []string
	if s.above > 0 {
		parts = append(parts, fmt.Sprintf("%s above %s %s (%d × the highest line) at the top edge ▲, the largest %s",
			count(s.above, "value", "values"), svgNum(s.cut), s.unit, svgMaxScale, svgNum(s.highest)))
	}
	if s.dropped > 0 {
		parts = append(parts, count(s.dropped, "value", "values")+" left out (NaN, ±Inf or negative)")
	}
	if len(parts) == 0 {
		return ""
	}
	return "note: " + strings.Join(parts, "; ")
}

// svgNum is v for an axis or a label: as trimFloat below a million,
// else in exponent form ("1e+308", not 309 digits).
func svgNum(v float64) string {
	if math.Abs(v) < 1e6 {
		return trimFloat(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// yAxis draws the value axis of s with its ticks and unit label, and the
// note of what s could not draw where it lies; y maps a drawable value to
// its height, a value above the axis to the top edge (the fraction is
// taken first, so a value near the largest float64 does not overflow).
func (d *svgDoc) yAxis(s *scale, label string) func(float64) float64 {
	x0, x1 := float64(svgLeft), float64(svgW-svgRight)
	y0, y1 := float64(svgTop), float64(svgH-svgBottom)
	top, step := s.top, s.step
	y := func(v float64) float64 {
		if !(v > 0) {
			return y1
		}
		return y1 - (y1-y0)*math.Min(v/top, 1)
	}
	for k := 0; k <= svgMaxTicks; k++ {
		v := float64(k) * step
		if v > top+step/2 {
			break
		}
		d.line(x0, y(v), x1, y(v), "#e7e6e6", 1, "")
		d.text(x0-6, y(v)+4, "end", colAxis, 11, svgNum(v))
	}
	if n := s.note(); n != "" {
		d.text(16, y0-8, "start", colCeiling, 10, clip(n, svgMaxNote))
	}
	d.line(x0, y0, x0, y1, colAxis, 1, "")
	d.line(x0, y1, x1, y1, colAxis, 1, "")
	d.f("<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" text-anchor=\"middle\" fill=\"%s\" font-size=\"12\" %s>%s</text>\n",
		(y0+y1)/2, (y0+y1)/2, colAxis, svgFont, svgEsc(label))
	return y
}

// marker draws the ▲ of a value above the axis at x on the top edge.
func (d *svgDoc) marker(x float64, fill string) {
	y := float64(svgTop)
	d.f("<path d=\"M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f Z\" fill=\"%s\"/>\n", x-5, y+3, x, y-5, x+5, y+3, fill)
}

// sizeLabel is a power-of-two size for an axis: "8 B", "64 KiB", "4 GiB".
func sizeLabel(b int64) string {
	for _, u := range []struct {
		n    int64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if b >= u.n {
			return trimFloat(float64(b)/float64(u.n)) + " " + u.name
		}
	}
	return fmt.Sprintf("%d B", b)
}

// SweepRows are the rows SweepSVG draws: those of the type and reduction
// of the run's first row (-d all and -o all repeat the sweep per type).
func (t *NCCLTests) SweepRows() []NCCLRow {
	if len(t.Rows) == 0 {
		return nil
	}
	k := t.Rows[0].Type + " " + t.Rows[0].Redop
	var out []NCCLRow
	for _, r := range t.Rows {
		if r.Type+" "+r.Redop == k && r.Bytes > 0 {
			out = append(out, r)
		}
	}
	return out
}

// Plateau is the smallest size of the sweep (SweepRows) whose out-of-place
// busbw is within 5 % of the sweep's best: where the curve reaches its
// plateau; ok is false without rows.
func (t *NCCLTests) Plateau() (NCCLRow, bool) {
	rows := t.SweepRows()
	best := 0.0
	for _, r := range rows {
		best = math.Max(best, r.Out.BusBW)
	}
	for _, r := range rows {
		if r.Out.BusBW >= plateauFraction*best {
			return r, true
		}
	}
	return NCCLRow{}, false
}

// SweepSVG draws the sweep of a nccl-tests run as an SVG: out-of-place
// busbw and algbw (GB/s) against the message size on a log₂ axis, the
// busbw pass line and the NICs' bandwidth (nics × link / 8 GB/s) of e (a
// ring's ceiling; NCCL's tree and NVLS may reach up to twice it,
// [BusBWCeiling], so a curve above it is not by itself wrong), and the
// size where busbw reaches its plateau (within 5 % of its best). title names the run; every text is escaped.
// A value more than 100 times the highest line is drawn at the top edge
// with a ▲, one that is not a finite, non-negative number is left out of
// its curve, and a note above the plot says how many of each.
func SweepSVG(title string, t *NCCLTests, e Expect) []byte {
	var d svgDoc
	d.open(title)
	rows := t.SweepRows()
	pl := e.busBWPassLine()
	ceiling := e.ringCeiling()
	var values []float64
	for _, r := range rows {
		values = append(values, r.Out.BusBW, r.Out.AlgBW)
	}
	sc := newScale("GB/s", []float64{pl.Value, ceiling}, values)
	y := d.yAxis(sc, "GB/s (10⁹ bytes/s)")
	x0, x1 := float64(svgLeft), float64(svgW-svgRight)
	if len(rows) == 0 {
		d.text((x0+x1)/2, float64(svgH)/2, "middle", colAxis, 13, "no result rows")
		return d.close()
	}
	lo, hiB := math.Log2(float64(rows[0].Bytes)), math.Log2(float64(rows[len(rows)-1].Bytes))
	if hiB-lo < 1 {
		lo, hiB = lo-1, hiB+1
	}
	x := func(b int64) float64 { return x0 + 10 + (x1-x0-20)*(math.Log2(float64(b))-lo)/(hiB-lo) }
	yb := float64(svgH - svgBottom)
	for p := math.Ceil(lo); p <= hiB; p++ {
		b := int64(math.Exp2(p))
		d.line(x(b), yb, x(b), yb+4, colAxis, 1, "")
		if int(p)%svgTickLabelEveryPow == 0 {
			d.text(x(b), yb+18, "middle", colAxis, 11, sizeLabel(b))
		}
	}
	d.text((x0+x1)/2, float64(svgH)-12, "middle", colAxis, 12, "message size (log₂ scale)")
	if drawable(ceiling) {
		d.line(x0, y(ceiling), x1, y(ceiling), colCeiling, 1.5, "2,3")
		d.text(x1-4, y(ceiling)-5, "end", colCeiling, 11, fmt.Sprintf("NIC bandwidth %s GB/s (a ring's ceiling)", svgNum(ceiling)))
	}
	if drawable(pl.Value) {
		d.line(x0, y(pl.Value), x1, y(pl.Value), colPassLine, 1.5, "8,4")
		d.text(x0+6, y(pl.Value)-5, "start", colPassLine, 11, fmt.Sprintf("pass line %s GB/s", svgNum(pl.Value)))
	}
	if p, ok := t.Plateau(); ok {
		d.line(x(p.Bytes), float64(svgTop), x(p.Bytes), yb, colPlateau, 1.5, "4,3")
		d.text(x(p.Bytes)+4, float64(svgTop)+12, "start", colPlateau, 11, "plateau from "+sizeLabel(p.Bytes))
	}
	for _, s := range []struct {
		col string
		v   func(NCCLRow) float64
	}{{colAlgBW, func(r NCCLRow) float64 { return r.Out.AlgBW }}, {colBusBW, func(r NCCLRow) float64 { return r.Out.BusBW }}} {
		var pts []string
		for _, r := range rows {
			if drawable(s.v(r)) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(r.Bytes), y(s.v(r))))
			}
		}
		d.f("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", strings.Join(pts, " "), s.col)
		for _, r := range rows {
			v := s.v(r)
			if !drawable(v) {
				continue
			}
			if v > sc.cut {
				d.marker(x(r.Bytes), s.col)
			}
			d.f("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%s: %s GB/s</title></circle>\n", x(r.Bytes), y(v), s.col,
				svgEsc(sizeText(r.Bytes)), svgNum(v))
		}
	}
	d.legend([][3]string{{colBusBW, "", "busbw (out-of-place)"}, {colAlgBW, "", "algbw (out-of-place)"},
		{colPassLine, "8,4", "pass line"}, {colCeiling, "2,3", "NIC bandwidth"}, {colPlateau, "4,3", "plateau size"}})
	return d.close()
}

// Bar is one bar of BarsSVG: a pair's bandwidth and its verdict.
type Bar struct {
	Name   string
	Value  float64
	Status Status
}

// PerftestBars are the bars of perftest reports: each one's BW average at
// its largest message size (0 without rows), named by names[i] and
// coloured by its rdma-bandwidth verdict against e.
func PerftestBars(names []string, reports []*Perftest, e Expect) []Bar {
	var out []Bar
	for i, r := range reports {
		b := Bar{Name: names[i], Status: StatusTooShort}
		if r != nil {
			if row, ok := r.Largest(); ok {
				b.Value = row.AvgGbps
			}
			b.Status = judgePerftestBW(r, e).Status
		}
		out = append(out, b)
	}
	return out
}

// BarsSVG draws bandwidths as bars (Gb/s), one per pair, against the pass
// line pl and the link's ceiling (ceiling, Gb/s; 0 draws none): blue bars
// passed, red ones did not, grey ones have no figure. At most 64 bars are
// drawn; the title counts the rest. A bar more than 100 times the highest
// line reaches the top edge with a ▲, one whose value is not a finite,
// non-negative number is not drawn (its label stays), and a note above
// the plot says how many of each.
func BarsSVG(title string, bars []Bar, pl PassLine, ceiling float64) []byte {
	if len(bars) > maxBars {
		title += fmt.Sprintf(" (first %d of %d pairs)", maxBars, len(bars))
		bars = bars[:maxBars]
	}
	var d svgDoc
	d.open(title)
	var values []float64
	for _, b := range bars {
		values = append(values, b.Value)
	}
	sc := newScale("Gb/s", []float64{pl.Value, ceiling}, values)
	y := d.yAxis(sc, "Gb/s (10⁹ bits/s)")
	x0, x1 := float64(svgLeft), float64(svgW-svgRight)
	yb := float64(svgH - svgBottom)
	slot := (x1 - x0) / float64(max(len(bars), 1))
	for i, b := range bars {
		col := colBusBW
		switch b.Status {
		case StatusPass:
		case StatusTooShort:
			col = "#d9d9d9"
		default:
			col = colFailBar
		}
		bx := x0 + float64(i)*slot + slot*0.15
		if drawable(b.Value) {
			d.f("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s: %s Gb/s, %s</title></rect>\n",
				bx, y(b.Value), slot*0.7, yb-y(b.Value), col, svgEsc(b.Name), svgNum(b.Value), b.Status.word())
			if b.Value > sc.cut {
				d.marker(bx+slot*0.35, col)
			}
		}
		if len(bars) <= 16 {
			d.text(bx+slot*0.35, yb+16, "middle", colAxis, 10, clip(b.Name, svgMaxLabel))
		}
	}
	if ceiling > 0 && drawable(ceiling) {
		d.line(x0, y(ceiling), x1, y(ceiling), colCeiling, 1.5, "2,3")
		d.text(x1-4, y(ceiling)-5, "end", colCeiling, 11, fmt.Sprintf("link %s Gb/s", svgNum(ceiling)))
	}
	if drawable(pl.Value) {
		d.line(x0, y(pl.Value), x1, y(pl.Value), colPassLine, 1.5, "8,4")
		d.text(x0+6, y(pl.Value)-5, "start", colPassLine, 11, fmt.Sprintf("pass line %s Gb/s", svgNum(pl.Value)))
	}
	d.legend([][3]string{{colBusBW, "", "passed"}, {colFailBar, "", "below the line / error"}, {"#d9d9d9", "", "no figure"},
		{colPassLine, "8,4", "pass line"}, {colCeiling, "2,3", "link"}})
	return d.close()
}
