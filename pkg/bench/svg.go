package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
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
	svgTickLabelEveryPow = 3    // size ticks labelled every 2^3
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
// and that step.
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
	return math.Ceil(max/step) * step, step
}

func (d *svgDoc) yAxis(top, step float64, unit string) func(float64) float64 {
	x0, x1 := float64(svgLeft), float64(svgW-svgRight)
	y0, y1 := float64(svgTop), float64(svgH-svgBottom)
	y := func(v float64) float64 { return y1 - (y1-y0)*math.Min(v, top)/top }
	for v := 0.0; v <= top+step/2; v += step {
		d.line(x0, y(v), x1, y(v), "#e7e6e6", 1, "")
		d.text(x0-6, y(v)+4, "end", colAxis, 11, trimFloat(v))
	}
	d.line(x0, y0, x0, y1, colAxis, 1, "")
	d.line(x0, y1, x1, y1, colAxis, 1, "")
	d.f("<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" text-anchor=\"middle\" fill=\"%s\" font-size=\"12\" %s>%s</text>\n",
		(y0+y1)/2, (y0+y1)/2, colAxis, svgFont, svgEsc(unit))
	return y
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
func SweepSVG(title string, t *NCCLTests, e Expect) []byte {
	var d svgDoc
	d.open(title)
	rows := t.SweepRows()
	pl := BusBWPassLine(e.link(), e.nics())
	ceiling := float64(e.nics()) * e.link() / 8
	hi := math.Max(pl.Value, ceiling)
	for _, r := range rows {
		hi = math.Max(hi, math.Max(r.Out.BusBW, r.Out.AlgBW))
	}
	top, step := yScale(hi * 1.05)
	y := d.yAxis(top, step, "GB/s (10⁹ bytes/s)")
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
	d.line(x0, y(ceiling), x1, y(ceiling), colCeiling, 1.5, "2,3")
	d.text(x1-4, y(ceiling)-5, "end", colCeiling, 11, fmt.Sprintf("NIC bandwidth %s GB/s (a ring's ceiling)", trimFloat(ceiling)))
	d.line(x0, y(pl.Value), x1, y(pl.Value), colPassLine, 1.5, "8,4")
	d.text(x0+6, y(pl.Value)-5, "start", colPassLine, 11, fmt.Sprintf("pass line %s GB/s", trimFloat(pl.Value)))
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
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(r.Bytes), y(s.v(r))))
		}
		d.f("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", strings.Join(pts, " "), s.col)
		for _, r := range rows {
			d.f("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%s: %s GB/s</title></circle>\n", x(r.Bytes), y(s.v(r)), s.col,
				svgEsc(sizeText(r.Bytes)), trimFloat(s.v(r)))
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
// drawn; the title counts the rest.
func BarsSVG(title string, bars []Bar, pl PassLine, ceiling float64) []byte {
	if len(bars) > maxBars {
		title += fmt.Sprintf(" (first %d of %d pairs)", maxBars, len(bars))
		bars = bars[:maxBars]
	}
	var d svgDoc
	d.open(title)
	hi := math.Max(pl.Value, ceiling)
	for _, b := range bars {
		hi = math.Max(hi, b.Value)
	}
	top, step := yScale(hi * 1.05)
	y := d.yAxis(top, step, "Gb/s (10⁹ bits/s)")
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
		d.f("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s: %s Gb/s, %s</title></rect>\n",
			bx, y(b.Value), slot*0.7, yb-y(b.Value), col, svgEsc(b.Name), trimFloat(b.Value), b.Status.word())
		if len(bars) <= 16 {
			d.text(bx+slot*0.35, yb+16, "middle", colAxis, 10, clip(b.Name, svgMaxLabel))
		}
	}
	if ceiling > 0 {
		d.line(x0, y(ceiling), x1, y(ceiling), colCeiling, 1.5, "2,3")
		d.text(x1-4, y(ceiling)-5, "end", colCeiling, 11, fmt.Sprintf("link %s Gb/s", trimFloat(ceiling)))
	}
	d.line(x0, y(pl.Value), x1, y(pl.Value), colPassLine, 1.5, "8,4")
	d.text(x0+6, y(pl.Value)-5, "start", colPassLine, 11, fmt.Sprintf("pass line %s Gb/s", trimFloat(pl.Value)))
	d.legend([][3]string{{colBusBW, "", "passed"}, {colFailBar, "", "below the line / error"}, {"#d9d9d9", "", "no figure"},
		{colPassLine, "8,4", "pass line"}, {colCeiling, "2,3", "link"}})
	return d.close()
}
