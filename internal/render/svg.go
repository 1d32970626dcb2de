package render

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/units"
)

// Charts are plain SVG drawn here: a bar chart is a few rectangles, and a
// report must open offline with no script or library behind it. Each SVG
// scales to its container (viewBox, width 100%), so it reads on a phone.

// palette holds series colours distinguishable in light and dark themes.
var palette = []string{"#2f6fdf", "#e8590c", "#2b8a3e", "#c2255c", "#7048e8", "#0c8599", "#a0740b", "#5c677d"}

const (
	svgWidth   = 420.0
	barLabelH  = 16.0
	barH       = 14.0
	barGap     = 10.0
	valueSpace = 130.0
)

// barChartSVG draws one horizontal bar per item, the label above its bar
// and the value after it.
func barChartSVG(title string, items []bar) template.HTML {
	rowH := barLabelH + barH + barGap
	height := float64(len(items))*rowH + 4
	maxV := 0.0
	for _, it := range items {
		maxV = math.Max(maxV, it.value)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="bars" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s" preserveAspectRatio="xMinYMin meet">`,
		svgWidth, height, html.EscapeString(title))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	for i, it := range items {
		y := float64(i)*rowH + 2
		w := 0.0
		if maxV > 0 {
			w = it.value / maxV * (svgWidth - valueSpace)
		}
		if w < 1 && it.value > 0 {
			w = 1
		}
		class := "bar"
		if it.best {
			class += " best"
		}
		value := it.display
		if it.best {
			value += " " + Star
		}
		if it.note != "" {
			value += " (" + it.note + ")"
		}
		fmt.Fprintf(&b, `<g><title>%s: %s</title>`, html.EscapeString(it.label), html.EscapeString(value))
		fmt.Fprintf(&b, `<text class="label" x="0" y="%.1f">%s</text>`, y+12, html.EscapeString(shorten(it.label, 56)))
		fmt.Fprintf(&b, `<rect class="%s" x="0" y="%.1f" width="%.1f" height="%.0f" rx="2"></rect>`, class, y+barLabelH, w, barH)
		fmt.Fprintf(&b, `<text class="value" x="%.1f" y="%.1f">%s</text></g>`, w+5, y+barLabelH+11, html.EscapeString(value))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// series is one line of a latency-percentile chart.
type series struct {
	name   string
	points []point // in percentile order
}

type point struct {
	p     string // axis label: p50, p99.9
	value float64
}

// percentileChartSVG draws latency against percentile, one line per
// series, on a logarithmic latency axis (tails span decades).
func percentileChartSVG(title string, axis []string, ss []series) template.HTML {
	const w, h, left, right, top, bottom = svgWidth, 240.0, 56.0, 12.0, 10.0, 26.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.points {
			if p.value > 0 {
				lo, hi = math.Min(lo, p.value), math.Max(hi, p.value)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	y := func(v float64) float64 {
		return top + (h-top-bottom)*(1-(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo)))
	}
	x := func(i int) float64 {
		if len(axis) == 1 {
			return (left + w - right) / 2
		}
		return left + 10 + float64(i)*(w-left-right-20)/float64(len(axis)-1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="latency" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s">`, w, h, html.EscapeString(title))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	for d := lo; d <= hi*1.0001; d *= 10 {
		yy := y(d)
		fmt.Fprintf(&b, `<line class="grid" x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f"></line>`, left, w-right, yy, yy)
		fmt.Fprintf(&b, `<text class="axis" x="%.0f" y="%.1f" text-anchor="end">%s</text>`, left-4, yy+4, html.EscapeString(units.Latency(time.Duration(d))))
	}
	for i, a := range axis {
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.0f" text-anchor="middle">%s</text>`, x(i), h-8, html.EscapeString(a))
	}
	for si, s := range ss {
		color := palette[si%len(palette)]
		var pts []string
		for _, p := range s.points {
			i := indexOf(axis, p.p)
			if i < 0 || p.value <= 0 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(p.value)))
		}
		if len(pts) == 0 {
			continue
		}
		fmt.Fprintf(&b, `<g class="series"><title>%s</title>`, html.EscapeString(s.name))
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"></polyline>`, strings.Join(pts, " "), color)
		for _, p := range s.points {
			i := indexOf(axis, p.p)
			if i < 0 || p.value <= 0 {
				continue
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s: %s</title></circle>`, x(i), y(p.value), color,
				html.EscapeString(s.name), p.p, html.EscapeString(units.Latency(time.Duration(p.value))))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
