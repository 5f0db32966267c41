package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
)

// chartSeries is one target's values, one per thread count (NaN where the
// run is missing).
type chartSeries struct {
	Label      string
	Throughput []float64
	P95        []float64
}

// chartColors: the first target (the baseline) and the second.
var chartColors = []string{"#4e79a7", "#e15759"}

const (
	chartPanelW = 460
	chartH      = 340
	chartLeft   = 72
	chartRight  = 16
	chartTop    = 64
	chartBottom = 48
)

// renderChart draws one workload's chart: two panels side by side,
// throughput against threads and 95% latency against threads, every target
// as one line in each. Thread counts are evenly spaced categories, as in
// the reference reports' charts (50, 100, 200, 400 would crowd the left
// of a linear axis). Only the standard library: the SVG is written by hand.
func renderChart(title, metric string, threads []int, series []chartSeries) []byte {
	var b bytes.Buffer
	w := 2 * chartPanelW
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", w, chartH, w, chartH)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", w, chartH)
	fmt.Fprintf(&b, `<text x="%d" y="22" text-anchor="middle" font-size="16" font-weight="bold">%s</text>`+"\n", w/2, esc(title))
	// Legend, centred under the title.
	lx := w/2 - 90*len(series)/2
	for i, s := range series {
		x := lx + i*90
		fmt.Fprintf(&b, `<line x1="%d" y1="40" x2="%d" y2="40" stroke="%s" stroke-width="2.5"/><circle cx="%d" cy="40" r="3.5" fill="%s"/>`, x, x+22, chartColors[i%len(chartColors)], x+11, chartColors[i%len(chartColors)])
		fmt.Fprintf(&b, `<text x="%d" y="44">%s</text>`+"\n", x+28, esc(s.Label))
	}
	tp := make([][]float64, len(series))
	lat := make([][]float64, len(series))
	for i, s := range series {
		tp[i], lat[i] = s.Throughput, s.P95
	}
	panel(&b, 0, metric, threads, tp, labels(series))
	panel(&b, chartPanelW, "95% latency (ms)", threads, lat, labels(series))
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func labels(series []chartSeries) []string {
	out := make([]string, len(series))
	for i, s := range series {
		out[i] = s.Label
	}
	return out
}

func panel(b *bytes.Buffer, x0 int, yTitle string, threads []int, values [][]float64, names []string) {
	left, right := float64(x0+chartLeft), float64(x0+chartPanelW-chartRight)
	top, bottom := float64(chartTop), float64(chartH-chartBottom)
	maxV := 0.0
	for _, vs := range values {
		for _, v := range vs {
			if !math.IsNaN(v) && v > maxV {
				maxV = v
			}
		}
	}
	step, yMax := niceScale(maxV, 5)
	y := func(v float64) float64 { return bottom - (v/yMax)*(bottom-top) }
	x := func(i int) float64 {
		slot := (right - left) / float64(len(threads))
		return left + slot*(float64(i)+0.5)
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+chartPanelW/2, chartTop-8, esc(yTitle))
	for v := 0.0; v <= yMax*(1+1e-9); v += step {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`, left, y(v), right, y(v))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(v)+4, esc(tickLabel(v, step)))
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", left, bottom, right, bottom)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", left, top, left, bottom)
	for i, n := range threads {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`+"\n", x(i), bottom+18, n)
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">threads</text>`+"\n", (left+right)/2, chartH-10)
	for si, vs := range values {
		color := chartColors[si%len(chartColors)]
		var pts bytes.Buffer
		for i, v := range vs {
			if math.IsNaN(v) {
				continue
			}
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(i), y(v))
		}
		if pts.Len() > 0 {
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2.5" points="%s"/>`+"\n", color, bytes.TrimSpace(pts.Bytes()))
		}
		for i, v := range vs {
			if math.IsNaN(v) {
				continue
			}
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s, %d threads: %s</title></circle>`+"\n",
				x(i), y(v), color, esc(names[si]), threads[i], esc(formatNumber(v)))
		}
	}
}

// niceScale returns a tick step of 1, 2 or 5 times a power of ten and the
// axis maximum (a multiple of the step) so that about ticks steps cover
// maxV.
func niceScale(maxV float64, ticks int) (step, top float64) {
	if maxV <= 0 || math.IsNaN(maxV) {
		return 1, float64(ticks)
	}
	raw := maxV / float64(ticks)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return step, math.Ceil(maxV/step-1e-9) * step
}

func tickLabel(v, step float64) string {
	digits := 0
	if step < 1 {
		digits = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
