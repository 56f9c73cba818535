package sim

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Series is one schedule's sorted waits (seconds), named for the legend.
type Series struct {
	Name  string
	Waits []float64
}

// chartPoints bounds the points drawn per line: a distribution over
// 200,000 jobs needs no more to look the same.
const chartPoints = 2000

// Chart geometry, in SVG user units.
const (
	chartW, chartH             = 800, 480
	marginL, marginR           = 70, 20
	marginT, marginB           = 40, 60
	plotW                      = chartW - marginL - marginR
	plotH                      = chartH - marginT - marginB
	legendLineW, legendSpacing = 24, 18
)

var chartColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd"}

// Chart writes an SVG chart of the distribution of waits of each schedule
// (the share of jobs that waited at most x, x on a log scale) to path.
// It is drawn here rather than with a plotting library: every drop-in
// command shares this binary, and such a library's initialisation would
// add to each command's start-up.
func Chart(path, title string, series []Series) error {
	if strings.ToLower(filepath.Ext(path)) != ".svg" {
		return fmt.Errorf("chart %s: the name must end in .svg", path)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	w := bufio.NewWriter(f)
	writeChart(w, title, series)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("chart: %w", err)
	}
	return f.Close()
}

// writeChart draws the chart. Waits of 0 are drawn at 1 second.
func writeChart(w io.Writer, title string, series []Series) {
	maxWait := 10.0
	for _, s := range series {
		if n := len(s.Waits); n > 0 {
			maxWait = max(maxWait, s.Waits[n-1])
		}
	}
	decades := int(math.Ceil(math.Log10(maxWait)))
	x := func(wait float64) float64 {
		return marginL + plotW*math.Log10(max(wait, 1))/float64(decades)
	}
	y := func(share float64) float64 { return marginT + plotH*(1-share) }

	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartW, chartH, chartW, chartH)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="24" text-anchor="middle" font-size="15">%s</text>`+"\n", chartW/2, html.EscapeString(title))
	// Grid and ticks: decades of seconds across, tenths of jobs up.
	for d := 0; d <= decades; d++ {
		px := x(math.Pow(10, float64(d)))
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", px, marginT, px, marginT+plotH)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px, marginT+plotH+16, secondsLabel(d))
	}
	for i := 0; i <= 10; i++ {
		py := y(float64(i) / 10)
		fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", marginL, py, marginL+plotW, py)
		fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="end">%d%%</text>`+"\n", marginL-6, py+4, i*10)
	}
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>`+"\n", marginL, marginT, plotW, plotH)
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle">wait (log scale; no wait drawn at 1 s)</text>`+"\n", marginL+plotW/2, chartH-20)
	fmt.Fprintf(w, `<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">jobs that waited at most this long</text>`+"\n", marginT+plotH/2)

	for i, s := range series {
		n := len(s.Waits)
		if n == 0 {
			continue
		}
		color := chartColors[i%len(chartColors)]
		var pts strings.Builder
		step := max(n/chartPoints, 1)
		for k := 0; k < n; k += step {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(s.Waits[k]), y(float64(k+1)/float64(n)))
		}
		fmt.Fprintf(&pts, "%.1f,%.1f", x(s.Waits[n-1]), y(1))
		fmt.Fprintf(w, `<polyline fill="none" stroke="%s" stroke-width="1.8" points="%s"/>`+"\n", color, pts.String())
		ly := marginT + plotH - 14 - legendSpacing*(len(series)-1-i)
		lx := marginL + plotW - 150
		fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", lx, ly, lx+legendLineW, ly, color)
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", lx+legendLineW+6, ly+4, html.EscapeString(s.Name))
	}
	fmt.Fprintln(w, `</svg>`)
}

// secondsLabel names 10^d seconds.
func secondsLabel(d int) string {
	return Thousands(int(math.Pow(10, float64(d)))) + " s"
}
