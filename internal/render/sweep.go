package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/units"
)

// SweepSection writes each sweep (storbench run --clients) as a table of
// its steps with a bar of the aggregate, then its knee.
func SweepSection(w io.Writer, sweeps []analysis.SweepView) error {
	for _, v := range sweeps {
		fmt.Fprintf(w, "\nSweep: %s on %s, clients at once (aggregate over the window all ran)\n", v.Workload, v.Target)
		g := &grid{left: 0}
		g.add("CLIENTS", "IOPS", "MB/s", "P99", "CLIENT MIN", "CLIENT MAX", "START SPREAD", "AGGREGATE"+strings.Repeat(" ", 21))
		top := 0.0
		for _, s := range v.Steps {
			top = math.Max(top, sweepRate(s))
		}
		var notes []string
		for _, s := range v.Steps {
			if s.Unusable != "" {
				g.add(strconv.Itoa(s.Clients), "-", "-", "-", "-", "-", "-", fmt.Sprintf("%-30s", "not used"))
				notes = append(notes, fmt.Sprintf("%d clients: not used for the knee: %s\n", s.Clients, s.Unusable))
				continue
			}
			g.add(strconv.Itoa(s.Clients), units.IOPS(s.IOPS), fmt.Sprintf("%.1f", s.BytesPerSec/1e6), latencyCell(s.P99),
				units.IOPS(s.ClientMinIOPS), units.IOPS(s.ClientMaxIOPS), latencyCell(s.StartSpread), sweepBar(s, top))
		}
		if err := g.write(w); err != nil {
			return err
		}
		if _, err := io.WriteString(w, strings.Join(notes, "")); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "Knee: %s\n", v.Knee.Summary); err != nil {
			return err
		}
	}
	return nil
}

func latencyCell(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return units.Latency(d)
}

// sweepRate is what the chart plots: IOPS, or bytes per second.
func sweepRate(s analysis.SweepStep) float64 {
	if s.IOPS > 0 {
		return s.IOPS
	}
	return s.BytesPerSec
}

// sweepBar is a step's aggregate as a bar of up to 30 cells.
func sweepBar(s analysis.SweepStep, top float64) string {
	if top <= 0 {
		return ""
	}
	return fmt.Sprintf("%-30s", strings.Repeat("#", int(math.Round(30*sweepRate(s)/top))))
}

// SweepSVG draws one sweep: the aggregate (solid, left axis) and p99
// (dashed, right axis) against the clients on a doubling scale, unusable
// steps hollow, the knee marked.
func SweepSVG(v analysis.SweepView) template.HTML {
	const w, h, left, right, top, bottom = 480.0, 220.0, 56.0, 56.0, 16.0, 36.0
	if len(v.Steps) == 0 {
		return ""
	}
	lo, hi := math.Log2(float64(v.Steps[0].Clients)), math.Log2(float64(v.Steps[len(v.Steps)-1].Clients))
	x := func(n int) float64 {
		if hi == lo {
			return (left + w - right) / 2
		}
		return left + (math.Log2(float64(n))-lo)/(hi-lo)*(w-left-right)
	}
	maxRate, maxP99 := 0.0, 0.0
	for _, s := range v.Steps {
		maxRate, maxP99 = math.Max(maxRate, sweepRate(s)), math.Max(maxP99, float64(s.P99))
	}
	y := func(val, most float64) float64 {
		if most <= 0 {
			return h - bottom
		}
		return h - bottom - val/most*(h-top-bottom)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="sweep" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img">`, w, h, w, h)
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(v.Workload+" on "+v.Target+": "+v.Knee.Summary))
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/>`, left, h-bottom, w-right, h-bottom)
	unit := "IOPS"
	if v.Steps[0].IOPS <= 0 {
		unit = "MB/s"
	}
	fmt.Fprintf(&b, `<text x="4" y="%.0f" font-size="11">%s %s</text>`, top+4, sweepAxis(maxRate, unit), unit)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="end">p99 %s</text>`, w-4, top+4, units.Latency(time.Duration(maxP99)))
	var rate, p99 []string
	for _, s := range v.Steps {
		px := x(s.Clients)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="11" text-anchor="middle">%d</text>`, px, h-bottom+14, s.Clients)
		if s.Unusable != "" {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="none" stroke="#c33"><title>%s</title></circle>`, px, y(sweepRate(s), maxRate), template.HTMLEscapeString(s.Unusable))
			continue
		}
		rate = append(rate, fmt.Sprintf("%.1f,%.1f", px, y(sweepRate(s), maxRate)))
		if s.P99 > 0 {
			p99 = append(p99, fmt.Sprintf("%.1f,%.1f", px, y(float64(s.P99), maxP99)))
		}
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="middle">clients</text>`, (left+w-right)/2, h-4)
	fmt.Fprintf(&b, `<polyline fill="none" stroke="#1f6fb2" stroke-width="2" points="%s"/>`, strings.Join(rate, " "))
	fmt.Fprintf(&b, `<polyline fill="none" stroke="#d07a00" stroke-width="2" stroke-dasharray="5,3" points="%s"/>`, strings.Join(p99, " "))
	if v.Knee.Found {
		kx := x(v.Knee.Clients)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#c33" stroke-dasharray="2,2"/><text x="%.1f" y="%.0f" font-size="11" fill="#c33">knee</text>`,
			kx, top, kx, h-bottom, kx+3, top+14)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built here from numbers and escaped text
}

// sweepAxis is the top of the rate axis in its unit.
func sweepAxis(most float64, unit string) string {
	if unit == "MB/s" {
		return fmt.Sprintf("%.0f", most/1e6)
	}
	return units.IOPS(most)
}
