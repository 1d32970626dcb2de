package render

import (
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// Report is what compare and report render: a comparison completed for
// display, the runs behind it and, for reports, verdicts.
type Report struct {
	View     *analysis.View
	Runs     []result.Run
	Verdicts []*analysis.Verdict
	// Environment adds each target's labels (reports do, compare does not).
	Environment bool
	// Generated is when the report was made; zero omits it (golden files).
	Generated time.Time
}

// CompareText writes the comparison for a terminal: per workload a table
// and a bar chart fitting 80 columns, then efficiency, round changes,
// outliers and stability. color adds ANSI colours.
func CompareText(w io.Writer, r *Report, color bool) error {
	return writeText(w, r.doc(), color)
}

// CompareMarkdown writes the same content as Markdown, bar charts in
// fenced blocks, ready for a GitHub issue or a blog post.
func CompareMarkdown(w io.Writer, r *Report) error {
	return writeMarkdown(w, r.doc())
}

// WriteReport writes a report in a format: html, markdown, json, csv, or
// otherwise text for a terminal (with ANSI colours if color).
func WriteReport(w io.Writer, r *Report, format string, color bool) error {
	switch format {
	case "html":
		return ReportHTML(w, r)
	case "markdown":
		return CompareMarkdown(w, r)
	case "json":
		return CompareJSON(w, r)
	case "csv":
		return CompareCSV(w, r)
	}
	return CompareText(w, r, color)
}

// reportFormats maps file extensions to the formats WriteReport writes.
var reportFormats = map[string]string{".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
	".json": "json", ".csv": "csv", ".txt": "text"}

// ReportFormat chooses a report's format from the -o path and --format:
// --format when given, a bare format name (json, md...) to print it, or
// the path's extension. path is where to write, "" for stdout.
func ReportFormat(out, format string) (string, string, error) {
	path := out
	if path == "-" {
		path = ""
	}
	if format != "" {
		if !slices.Contains(slices.Collect(maps.Values(reportFormats)), format) {
			return "", "", fmt.Errorf("--format %q: choose one of html, markdown, json, csv, text", format)
		}
		return format, path, nil
	}
	if path == "" {
		return "text", "", nil
	}
	// --output json prints, as with every other command.
	bare := map[string]string{"table": "text", "text": "text", "json": "json", "markdown": "markdown", "md": "markdown", "csv": "csv", "html": "html"}
	if v, ok := bare[out]; ok {
		return v, "", nil
	}
	ext := strings.ToLower(filepath.Ext(out))
	if v, ok := reportFormats[ext]; ok {
		return v, out, nil
	}
	return "", "", fmt.Errorf("-o %s: unknown extension %q; use .html, .md, .json, .csv or .txt, or pass --format", out, ext)
}

// MetricLabel names a metric for people, with its unit where it has one.
func MetricLabel(m string) string {
	switch m {
	case result.MetricIOPS:
		return "IOPS"
	case result.MetricBW:
		return "MB/s"
	case result.MetricLatMean:
		return "mean latency"
	case result.MetricLatP50:
		return "p50 latency"
	case result.MetricLatP90:
		return "p90 latency"
	case result.MetricLatP99:
		return "p99 latency"
	case result.MetricLatP999:
		return "p99.9 latency"
	case result.MetricSyncP99:
		return "sync p99 latency"
	}
	return m
}

// FormatValue shows a base-unit value with its unit: "12.3k IOPS",
// "512.4 MB/s", "4.21 ms".
func FormatValue(metric string, v float64) string {
	switch result.MetricUnit(metric) {
	case "IOPS":
		return units.IOPS(v) + " IOPS"
	case "B/s":
		return units.MBps(v)
	}
	return units.Latency(time.Duration(math.Round(v)))
}

// percent shows a percentage with the precision it deserves: 96%, 3.4%.
func percent(p float64) string {
	if math.Abs(p) < 10 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

// valueWithMetric names latency figures ("4.2 ms p99 latency"); IOPS and
// MB/s name themselves.
func valueWithMetric(m string, v float64) string {
	if result.HigherIsBetter(m) {
		return FormatValue(m, v)
	}
	return FormatValue(m, v) + " " + MetricLabel(m)
}

// bareValue is FormatValue without the unit for IOPS and MB/s columns.
func bareValue(metric string, v float64) string {
	s := FormatValue(metric, v)
	return strings.TrimSuffix(strings.TrimSuffix(s, " IOPS"), " MB/s")
}

func direction(m string) string {
	if result.HigherIsBetter(m) {
		return "higher is better"
	}
	return "lower is better"
}

func (r *Report) title() string {
	if len(r.Verdicts) > 0 || r.Environment {
		return "storbench report"
	}
	return "storbench comparison"
}

func (r *Report) intro() string {
	c := r.View.Comparison
	var ids []string
	for _, run := range r.Runs {
		ids = append(ids, fmt.Sprintf("%s (%s)", run.ID, run.Suite))
	}
	s := ""
	if len(ids) > 0 {
		s = "Runs: " + strings.Join(ids, ", ") + ". "
	}
	s += fmt.Sprintf("%d target(s)", len(c.Targets))
	if c.GroupBy != "" {
		s += fmt.Sprintf(" in %d group(s) by %s", len(c.Groups), c.GroupBy)
	}
	s += fmt.Sprintf(", %d workload(s), round(s): %s.", len(c.Workloads), strings.Join(c.Rounds, ", "))
	if c.Baseline != "" {
		s += " Baseline: " + c.Baseline + "."
	}
	if !r.Generated.IsZero() {
		s += " Generated " + r.Generated.UTC().Format("2006-01-02 15:04 UTC") + "."
	}
	return s
}

func (r *Report) doc() *doc {
	v := r.View
	c := v.Comparison
	d := &doc{}
	d.h1(r.title())
	d.p("%s", r.intro())
	if len(r.Verdicts) > 0 {
		d.h2("Verdicts")
		d.add(verdicts{r.Verdicts})
	}
	if s := summaryItems(v); len(s.items) > 0 {
		d.h2("Summary")
		d.add(s)
	}
	glanceSection(d, v) // glance.go
	for _, s := range v.Sections {
		workloadSection(d, v, s)
	}
	nodeSection(d, v)
	sweepDocSection(d, v.Sweeps)             // sweep_doc.go
	explainSection(d, v.Links, v.Breakdowns) // links.go
	d.add(latencyCharts{v.Latency})
	if len(c.Efficiency) > 0 {
		d.h2("Efficiency against " + c.Baseline)
		d.p("Each figure as a percentage of the baseline's; for latency, baseline / value, so above 100%% is always better.")
		d.add(efficiencyTable(v))
	}
	if len(c.RoundChanges) > 0 {
		d.h2("Change between rounds")
		d.add(roundTable(v))
	}
	d.h2("Outliers")
	if len(c.Outliers) == 0 {
		d.p("None: no target below %.1fx the median of its peers' IOPS or throughput, or above %.0fx their p99 latency.", analysis.OutlierLow, analysis.OutlierHigh)
	} else {
		d.add(outlierList(c))
	}
	d.h2("Stability")
	if len(c.Unstable) == 0 {
		d.p("%s", stableText(v))
	} else {
		d.add(unstableList(c))
	}
	measurementSection(d, c) // validity.go
	if len(c.Methods) > 0 {
		d.h2("Different methods")
		d.p("These workloads put figures obtained by different methods side by side: equivalent tests, not identical ones.")
		var l list
		for _, m := range c.Methods {
			var parts []string
			for _, t := range slices.Sorted(maps.Keys(m.Methods)) {
				parts = append(parts, t+": "+m.Methods[t])
			}
			l.items = append(l.items, listItem{text: fmt.Sprintf("%s (%s): %s", m.Workload, m.Round, strings.Join(parts, "; ")), tone: "warn"})
		}
		d.add(l)
	}
	if len(c.Skipped) > 0 {
		d.h2("Not compared")
		var l list
		for _, s := range c.Skipped {
			l.items = append(l.items, listItem{text: fmt.Sprintf("%s %s: %d %s result(s)", s.Target, s.Workload, s.Count, s.Status), tone: "warn"})
		}
		d.add(l)
	}
	if r.Environment {
		d.h2("Environment")
		d.add(environments{c.Environments})
	}
	d.p("MB/s = 10^6 bytes/s. Latency is fio's completion latency (clat); sync is fsync/fdatasync latency. %s marks the best per workload.", Star)
	return d
}

func verdictList(vs []*analysis.Verdict) list {
	var l list
	for _, v := range vs {
		it := listItem{text: fmt.Sprintf("%s: %s. %s", v.For, strings.ToUpper(string(v.Status)), v.Summary), tone: tone(v.Status)}
		for _, ch := range v.Checks {
			it.sub = append(it.sub, checkText(ch))
		}
		it.sub = append(it.sub, v.Advice...)
		l.items = append(l.items, it)
	}
	return l
}

func tone(s analysis.Status) string {
	switch s {
	case analysis.Pass:
		return "good"
	case analysis.Warn:
		return "warn"
	case analysis.Fail:
		return "bad"
	}
	return ""
}

// summaryItems are the sentences a reader wants first: the best per
// workload and each group's efficiency on its main figure.
func summaryItems(v *analysis.View) list {
	var l list
	for _, b := range v.Leaders {
		l.items = append(l.items, listItem{text: fmt.Sprintf("%s (%s): best %s %s, %s", b.Workload, b.Round, b.Name, Star, valueWithMetric(b.Metric, b.Value))})
	}
	c := v.Comparison
	for _, r := range v.Reach {
		var parts []string
		for _, e := range r.Figures {
			parts = append(parts, fmt.Sprintf("%s on %s", percent(e.Percent), e.Workload))
		}
		roundNote := ""
		if len(c.Rounds) > 1 {
			roundNote = " (" + r.Round + ")"
		}
		l.items = append(l.items, listItem{text: fmt.Sprintf("%s%s reaches %s of %s", r.Group, roundNote, strings.Join(parts, ", "), c.Baseline)})
	}
	return l
}

var metricHeads = map[string]string{result.MetricIOPS: "IOPS", result.MetricBW: "MB/s", result.MetricLatP50: "P50",
	result.MetricLatP99: "P99", result.MetricSyncP99: "SYNC P99"}

func workloadSection(d *doc, v *analysis.View, s analysis.Section) {
	nameHead := "TARGET"
	if v.Grouped {
		nameHead = "GROUP"
	}
	d.h2(s.Workload + " · " + s.Round)
	t := table{head: []string{nameHead}}
	if v.Grouped {
		t.head = append(t.head, "TARGETS")
	}
	t.head = append(t.head, "N")
	for _, m := range s.Metrics {
		t.head = append(t.head, metricHeads[m])
	}
	t.head = append(t.head, "CV") // of repetitions, of the charted metric
	hasEff := v.Comparison.Baseline != ""
	if hasEff {
		t.head = append(t.head, "VS BASE")
	}
	for i, h := range t.head {
		t.right = append(t.right, i > 0)
		t.optional = append(t.optional, h == "P50" || h == "TARGETS")
	}
	var bs bars
	bs.title = fmt.Sprintf("%s, %s:", MetricLabel(s.Primary), direction(s.Primary))
	for _, r := range s.Rows {
		row := []string{r.Name}
		tones := []string{""}
		if v.Grouped {
			row = append(row, fmt.Sprint(r.Targets))
			tones = append(tones, "")
		}
		row = append(row, fmt.Sprint(r.N))
		tones = append(tones, "")
		for i, m := range s.Metrics {
			cell := r.Figures[i]
			text, tn := "-", ""
			if cell != nil {
				text = bareValue(m, cell.Mean)
				if m == s.Primary && r.Best {
					text += " " + Star
					tn = "best"
				}
			}
			row = append(row, text)
			tones = append(tones, tn)
		}
		cv, cvTone := "-", ""
		if r.CVKnown {
			cv = fmt.Sprintf("%.1f%%", r.CVPercent)
			if r.CVHigh {
				cv += "!"
				cvTone = "warn"
			}
		}
		row = append(row, cv)
		tones = append(tones, cvTone)
		if hasEff {
			eff := "-"
			if r.Efficiency != nil {
				eff = percent(r.Efficiency.Percent)
			} else if r.IsBaseline {
				eff = "base"
			}
			row = append(row, eff)
			tones = append(tones, "")
		}
		t.rows = append(t.rows, row)
		t.tones = append(t.tones, tones)
		if r.Primary != nil {
			note := ""
			if r.Unstable {
				note = "unstable"
			}
			if r.Outlier {
				note = strings.TrimSpace(note + " outlier")
			}
			bs.items = append(bs.items, bar{label: r.Name, value: r.Primary.Mean, display: FormatValue(s.Primary, r.Primary.Mean), best: r.Best, note: note})
		}
	}
	d.add(t)
	if len(bs.items) > 0 {
		d.add(bs)
	}
	var bl list
	for _, b := range s.Bottlenecks {
		bl.items = append(bl.items, listItem{text: fmt.Sprintf("%s limited by %s: %s", b.Target, b.LimitedBy, b.Evidence)})
	}
	if len(bl.items) > 0 {
		d.add(bl)
	}
}

func efficiencyTable(v *analysis.View) table {
	t := table{head: []string{"GROUP", "ROUND", "WORKLOAD", "METRIC", "VS BASELINE"}, right: []bool{false, false, false, false, true}}
	if !v.Grouped {
		t.head[0] = "TARGET"
	}
	for _, e := range v.Efficiency {
		t.rows = append(t.rows, []string{e.Group, e.Round, e.Workload, MetricLabel(e.Metric), percent(e.Percent)})
	}
	return t
}

func roundTable(v *analysis.View) table {
	t := table{head: []string{"GROUP", "WORKLOAD", "ROUNDS", "METRIC", "CHANGE"}, right: []bool{false, false, false, false, true}}
	if !v.Grouped {
		t.head[0] = "TARGET"
	}
	for _, rc := range v.RoundChanges {
		t.rows = append(t.rows, []string{rc.Group, rc.Workload, rc.From + " to " + rc.To, MetricLabel(rc.Metric), fmt.Sprintf("%+.0f%%", rc.Percent)})
		tn := "warn"
		if rc.Better {
			tn = "good"
		}
		t.tones = append(t.tones, []string{"", "", "", "", tn})
	}
	return t
}

// outlierList says once per target and workload which figures are off and
// by how much.
func outlierList(c *analysis.Comparison) list {
	var l list
	type key struct{ t, r, w string }
	var order []key
	parts := map[key][]string{}
	first := map[key]analysis.Outlier{}
	for _, o := range c.Outliers {
		k := key{o.Target, o.Round, o.Workload}
		if _, ok := parts[k]; !ok {
			order = append(order, k)
			first[k] = o
		}
		parts[k] = append(parts[k], fmt.Sprintf("%s %.2fx (%s against %s)", MetricLabel(o.Metric), o.Ratio,
			FormatValue(o.Metric, o.Value), FormatValue(o.Metric, o.PeerMedian)))
	}
	for _, k := range order {
		o := first[k]
		where := ""
		if o.Group != "" {
			where = " in group " + o.Group
		}
		l.items = append(l.items, listItem{tone: "bad", text: fmt.Sprintf("slow disk/node: %s%s on %s (%s), against the median of %d peer(s): %s",
			o.Target, where, o.Workload, o.Round, o.Peers, strings.Join(parts[k], "; "))})
	}
	return l
}

// headlineMetrics are detailed in stability warnings; other unstable
// figures (tail percentiles are naturally noisy) are named only.
var headlineMetrics = []string{result.MetricIOPS, result.MetricBW, result.MetricLatP99, result.MetricSyncP99}

func unstableList(c *analysis.Comparison) list {
	var l list
	type key struct{ t, r, w string }
	var order []key
	detail := map[key][]string{}
	others := map[key][]string{}
	runs := map[key]int{}
	for _, u := range c.Unstable {
		k := key{u.Target, u.Round, u.Workload}
		if _, ok := runs[k]; !ok {
			order = append(order, k)
		}
		runs[k] = u.N
		if slices.Contains(headlineMetrics, u.Metric) {
			detail[k] = append(detail[k], fmt.Sprintf("%s CV %.1f%% (%s to %s)", MetricLabel(u.Metric), u.CVPercent,
				FormatValue(u.Metric, u.Min), FormatValue(u.Metric, u.Max)))
		} else {
			others[k] = append(others[k], MetricLabel(u.Metric))
		}
	}
	for _, k := range order {
		text := fmt.Sprintf("unstable: %s %s (%s) over %d runs", k.t, k.w, k.r, runs[k])
		if len(detail[k]) > 0 {
			text += ": " + strings.Join(detail[k], "; ")
		}
		if len(others[k]) > 0 {
			text += "; also " + strings.Join(others[k], ", ") + " above " + fmt.Sprint(analysis.UnstableCVPercent) + "%"
		}
		l.items = append(l.items, listItem{tone: "warn", text: text})
	}
	return l
}

func stableText(v *analysis.View) string {
	if v.Repeated {
		return fmt.Sprintf("Every repeated result is stable: coefficient of variation at most %d%%.", analysis.UnstableCVPercent)
	}
	return "Each workload ran once per target: repeat runs (storbench run --repeat 3) to measure the spread."
}

func environmentList(envs []analysis.Environment) list {
	var l list
	for _, e := range envs {
		keys := make([]string, 0, len(e.Labels))
		for k := range e.Labels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+"="+e.Labels[k])
		}
		text := e.Target
		if e.Group != e.Target {
			text += " (group " + e.Group + ")"
		}
		text += ", run(s) " + strings.Join(e.Runs, ", ")
		l.items = append(l.items, listItem{text: text, sub: []string{strings.Join(parts, " ")}})
	}
	return l
}

// VerdictDocument is qualify's JSON document.
type VerdictDocument struct {
	Verdict *analysis.Verdict `json:"verdict"`
	Runs    []string          `json:"runs"`
	// ExitCode is the code storbench exits with for this verdict.
	ExitCode int `json:"exit_code"`
}

// Verdict writes one verdict in a format: json (with the runs judged and
// the exit code), markdown, or otherwise text for a terminal.
func Verdict(w io.Writer, format string, v *analysis.Verdict, runs []result.Run, exitCode int, color bool) error {
	switch format {
	case "json":
		doc := VerdictDocument{Verdict: v, Runs: []string{}, ExitCode: exitCode}
		for _, r := range runs {
			doc.Runs = append(doc.Runs, r.ID)
		}
		return JSON(w, doc)
	case "markdown":
		return VerdictMarkdown(w, v)
	}
	return VerdictText(w, v, color)
}

// VerdictText writes one verdict for a terminal.
func VerdictText(w io.Writer, v *analysis.Verdict, color bool) error {
	d := &doc{}
	d.h1(fmt.Sprintf("Verdict for %s: %s", v.For, strings.ToUpper(string(v.Status))))
	d.add(verdictDetail(v))
	return writeText(w, d, color)
}

// VerdictMarkdown writes one verdict as Markdown.
func VerdictMarkdown(w io.Writer, v *analysis.Verdict) error {
	d := &doc{}
	d.h1(fmt.Sprintf("Verdict for %s: %s", v.For, strings.ToUpper(string(v.Status))))
	d.add(verdictDetail(v))
	return writeMarkdown(w, d)
}

// verdictDetail lists a verdict's summary, every check with its threshold
// and source, and its advice.
func verdictDetail(v *analysis.Verdict) list {
	l := list{items: []listItem{{text: v.Summary, tone: tone(v.Status)}}}
	for _, ch := range v.Checks {
		text := fmt.Sprintf("%s: %s %s [%s]", ch.Subject, ch.Name, ch.Display, strings.ToUpper(string(ch.Status)))
		if ch.Detail != "" {
			text += ": " + ch.Detail
		}
		l.items = append(l.items, listItem{text: text, tone: tone(ch.Status),
			sub: []string{"threshold: " + ch.Threshold, "source: " + ch.Source}})
	}
	for _, a := range v.Advice {
		l.items = append(l.items, listItem{text: "advice: " + a})
	}
	return l
}
