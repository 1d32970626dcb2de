package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/units"
)

// sweepCharts are the saturation sweeps of a comparison: in HTML a chart
// each (aggregate and p99 against clients), elsewhere a table each; the
// knee follows either.
type sweepCharts struct{ sweeps []analysis.SweepView }

func (sweepCharts) isBlock() {}

// sweepDocSection adds the sweeps, if any, to a report.
func sweepDocSection(d *doc, sweeps []analysis.SweepView) {
	if len(sweeps) == 0 {
		return
	}
	d.h2("Saturation sweeps")
	d.p("Each step ran the workload on that many clients at once; the aggregate is over the window when all ran. The knee is the step after which a doubling of the clients adds less than %.0f%% throughput or multiplies p99 by more than %.0f.",
		analysis.KneeMinGain*100, analysis.KneeP99Factor)
	d.add(sweepCharts{sweeps})
}

// blocks are a table and the knee per sweep, for text and Markdown.
func (b sweepCharts) blocks() []block {
	var out []block
	for _, v := range b.sweeps {
		t := table{head: []string{"Clients", "IOPS", "MB/s", "p99", "Client min", "Client max", "Start spread", "Note"},
			right: []bool{true, true, true, true, true, true, true, false}}
		for _, s := range v.Steps {
			if s.Unusable != "" {
				t.rows = append(t.rows, []string{strconv.Itoa(s.Clients), "-", "-", "-", "-", "-", "-", "not used: " + s.Unusable})
				continue
			}
			t.rows = append(t.rows, []string{strconv.Itoa(s.Clients), units.IOPS(s.IOPS), fmt.Sprintf("%.1f", s.BytesPerSec/1e6),
				latencyCell(s.P99), units.IOPS(s.ClientMinIOPS), units.IOPS(s.ClientMaxIOPS), latencyCell(s.StartSpread), s.Unusable})
		}
		out = append(out, para{sweepTitle(v)}, t, para{"Knee: " + v.Knee.Summary})
	}
	return out
}

func (b sweepCharts) html(sb *strings.Builder) {
	for _, v := range b.sweeps {
		fmt.Fprintf(sb, "<figure>\n%s\n<figcaption>%s: aggregate (solid) and p99 (dashed) against clients<br>Knee: %s</figcaption>\n</figure>\n", SweepSVG(v), esc(sweepTitle(v)), esc(v.Knee.Summary))
	}
}

func sweepTitle(v analysis.SweepView) string {
	return fmt.Sprintf("%s on %s (run %s)", v.Workload, v.Target, v.RunID)
}
