package render

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// Timeline is one chart of a workload's telemetry over its run time.
type Timeline struct {
	Title  string
	SVG    template.HTML
	Legend []LegendEntry
}

// LegendEntry names a series and its colour.
type LegendEntry struct {
	Name  string
	Color template.CSS
}

// timelineGroups are the telemetry charts drawn per result: series that
// share an axis.
var timelineGroups = []struct {
	title  string
	series []string
	// scale turns a stored value into the axis unit; pct fixes the axis
	// at 0-100.
	scale float64
	unit  string
	pct   bool
}{
	{"CPU, disk and I/O pressure", []string{result.SeriesCPUBusy, result.SeriesCPUIOWait, result.SeriesCPUCoreMaxBusy, result.SeriesDiskUtil, result.SeriesIOPressureSome}, 1, "%", true},
	{"Disk throughput", []string{result.SeriesDiskReadBPS, result.SeriesDiskWriteBPS}, 1e-6, "MB/s", false},
}

// Timelines draws each result's telemetry time series, one chart per
// group of series sampled; results without series give none.
func Timelines(results []result.Result) []Timeline {
	var out []Timeline
	for _, r := range results {
		if r.Telemetry == nil || r.Telemetry.Series == nil || len(r.Telemetry.Series.OffsetsMS) < 2 {
			continue
		}
		s := r.Telemetry.Series
		name := r.Workload
		if r.Repetition > 1 {
			name += fmt.Sprintf(" (rep %d)", r.Repetition)
		}
		for _, g := range timelineGroups {
			var lines []timelineLine
			for _, n := range g.series {
				if v := s.Values[n]; len(v) == len(s.OffsetsMS) {
					lines = append(lines, timelineLine{name: n, values: v})
				}
			}
			if len(lines) == 0 {
				continue
			}
			title := fmt.Sprintf("%s on %s · %s (%s) over %s", name, r.Target, g.title, g.unit, r.Round)
			t := Timeline{Title: title, SVG: timelineSVG(title, s.OffsetsMS, lines, g.scale, g.unit, g.pct)}
			for i, l := range lines {
				t.Legend = append(t.Legend, LegendEntry{Name: l.name, Color: template.CSS(palette[i%len(palette)])})
			}
			out = append(out, t)
		}
	}
	return out
}

type timelineLine struct {
	name   string
	values []float64
}

// timelineSVG draws series against seconds since the workload started.
func timelineSVG(title string, offsetsMS []int64, lines []timelineLine, scale float64, unit string, pct bool) template.HTML {
	const w, h, left, right, top, bottom = svgWidth, 180.0, 48.0, 12.0, 10.0, 24.0
	hi := 100.0
	if !pct {
		hi = 0
		for _, l := range lines {
			for _, v := range l.values {
				if !math.IsNaN(v) {
					hi = math.Max(hi, v*scale)
				}
			}
		}
		hi = niceCeil(hi)
	}
	end := float64(offsetsMS[len(offsetsMS)-1]) / 1000
	if end <= 0 {
		end = 1
	}
	x := func(ms int64) float64 { return left + (w-left-right)*float64(ms)/1000/end }
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-math.Min(v, hi)/hi) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="timeline" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s">`, w, h, html.EscapeString(title))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	for i := 0; i <= 4; i++ {
		v := hi * float64(i) / 4
		fmt.Fprintf(&b, `<line class="grid" x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f"></line>`, left, w-right, y(v), y(v))
		fmt.Fprintf(&b, `<text class="axis" x="%.0f" y="%.1f" text-anchor="end">%s</text>`, left-4, y(v)+4, sig3(v))
	}
	for i := 0; i <= 4; i++ {
		sec := end * float64(i) / 4
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.0f" text-anchor="middle">%s s</text>`, left+(w-left-right)*float64(i)/4, h-6, sig3(sec))
	}
	for i, l := range lines {
		var pts []string
		for j, v := range l.values {
			if !math.IsNaN(v) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(offsetsMS[j]), y(v*scale)))
			}
		}
		fmt.Fprintf(&b, `<g class="series"><title>%s</title><polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"></polyline></g>`,
			html.EscapeString(l.name+" ("+unit+")"), strings.Join(pts, " "), palette[i%len(palette)])
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 1).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func sig3(v float64) string {
	s := fmt.Sprintf("%.3g", v)
	if strings.Contains(s, "e") {
		return fmt.Sprintf("%.0f", v)
	}
	return s
}
