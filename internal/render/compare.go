package render

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// Report is what compare and report render: a comparison, the runs behind
// it and, for reports, verdicts.
type Report struct {
	Comparison *analysis.Comparison
	Runs       []result.Run
	Verdicts   []*analysis.Verdict
	// Environment adds each target's labels (reports do, compare does not).
	Environment bool
	// Generated is when the report was made; zero omits it (golden files).
	Generated time.Time

	flags *flagIndex
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
	c := r.Comparison
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
	c := r.Comparison
	d := &doc{}
	d.h1(r.title())
	d.p("%s", r.intro())
	if len(r.Verdicts) > 0 {
		d.h2("Verdicts")
		d.add(verdicts{r.Verdicts})
	}
	if s := summaryItems(c); len(s.items) > 0 {
		d.h2("Summary")
		d.add(s)
	}
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			r.workloadSection(d, round, w)
		}
	}
	d.add(latencyCharts{c})
	if len(c.Efficiency) > 0 {
		d.h2("Efficiency against " + c.Baseline)
		d.p("Each figure as a percentage of the baseline's; for latency, baseline / value, so above 100%% is always better.")
		d.add(efficiencyTable(c))
	}
	if len(c.RoundChanges) > 0 {
		d.h2("Change between rounds")
		d.add(roundTable(c))
	}
	d.h2("Outliers")
	if len(c.Outliers) == 0 {
		d.p("None: no target below %.1fx the median of its peers' IOPS or throughput, or above %.0fx their p99 latency.", analysis.OutlierLow, analysis.OutlierHigh)
	} else {
		d.add(outlierList(c))
	}
	d.h2("Stability")
	if len(c.Unstable) == 0 {
		d.p("%s", stableText(c))
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
			s := fmt.Sprintf("%s: %s %s [%s]", ch.Subject, ch.Name, ch.Display, strings.ToUpper(string(ch.Status)))
			if ch.Detail != "" {
				s += " " + ch.Detail + "."
			}
			s += " Threshold: " + ch.Threshold + ". Source: " + ch.Source + "."
			it.sub = append(it.sub, s)
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
func summaryItems(c *analysis.Comparison) list {
	var l list
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			m := c.PrimaryMetric(w)
			grouped := c.GroupBy != ""
			list := c.Best
			if grouped {
				list = c.BestGroups
			}
			for _, b := range list {
				if b.Round == round && b.Workload == w && b.Metric == m {
					who := b.Target
					if grouped {
						who = b.Group
					}
					l.items = append(l.items, listItem{text: fmt.Sprintf("%s (%s): best %s %s, %s", w, round, who, Star, valueWithMetric(m, b.Value))})
				}
			}
		}
	}
	if c.Baseline == "" {
		return l
	}
	for _, g := range c.Groups {
		for _, round := range c.Rounds {
			var parts []string
			for _, w := range c.Workloads {
				m := c.PrimaryMetric(w)
				if e, ok := c.EfficiencyOf(g, round, w, m); ok {
					parts = append(parts, fmt.Sprintf("%s on %s", percent(e.Percent), w))
				}
			}
			if len(parts) > 0 {
				roundNote := ""
				if len(c.Rounds) > 1 {
					roundNote = " (" + round + ")"
				}
				l.items = append(l.items, listItem{text: fmt.Sprintf("%s%s reaches %s of %s", g, roundNote, strings.Join(parts, ", "), c.Baseline)})
			}
		}
	}
	return l
}

func (r *Report) workloadSection(d *doc, round, w string) {
	c := r.Comparison
	grouped := c.GroupBy != ""
	names := c.Groups
	nameHead := "TARGET"
	if grouped {
		nameHead = "GROUP"
	}
	var present []string
	for _, m := range []string{result.MetricIOPS, result.MetricBW, result.MetricLatP50, result.MetricLatP99, result.MetricSyncP99} {
		for _, g := range names {
			if _, ok := c.GroupCell(g, round, w, m); ok {
				present = append(present, m)
				break
			}
		}
	}
	if len(present) == 0 {
		return
	}
	primary := c.PrimaryMetric(w)
	d.h2(w + " · " + round)
	t := table{head: []string{nameHead}}
	if grouped {
		t.head = append(t.head, "TARGETS")
	}
	t.head = append(t.head, "N")
	for _, m := range present {
		t.head = append(t.head, map[string]string{result.MetricIOPS: "IOPS", result.MetricBW: "MB/s", result.MetricLatP50: "P50",
			result.MetricLatP99: "P99", result.MetricSyncP99: "SYNC P99"}[m])
	}
	t.head = append(t.head, "CV") // of repetitions, of the charted metric
	hasEff := c.Baseline != ""
	if hasEff {
		t.head = append(t.head, "VS BASE")
	}
	for i, h := range t.head {
		t.right = append(t.right, i > 0)
		t.optional = append(t.optional, h == "P50" || h == "TARGETS")
	}
	var bs bars
	bs.title = fmt.Sprintf("%s, %s:", MetricLabel(primary), direction(primary))
	for _, g := range names {
		pc, ok := c.GroupCell(g, round, w, primary)
		anyCell := ok
		if !ok {
			for _, m := range present {
				if _, has := c.GroupCell(g, round, w, m); has {
					anyCell = true
				}
			}
		}
		if !anyCell {
			continue
		}
		row := []string{g}
		tones := []string{""}
		if grouped {
			row = append(row, fmt.Sprint(len(c.TargetsOf(g))))
			tones = append(tones, "")
		}
		n := pc.N
		if !ok {
			for _, m := range present {
				if cell, has := c.GroupCell(g, round, w, m); has {
					n = cell.N
					break
				}
			}
		}
		row = append(row, fmt.Sprint(n))
		tones = append(tones, "")
		best := c.IsBest(g, true, round, w, primary)
		for _, m := range present {
			cell, has := c.GroupCell(g, round, w, m)
			s, tn := "-", ""
			if has {
				s = bareValue(m, cell.Mean)
				if m == primary && best {
					s += " " + Star
					tn = "best"
				}
			}
			row = append(row, s)
			tones = append(tones, tn)
		}
		cv, cvTone := "-", ""
		if worst, found := repetitionCV(c, g, round, w, primary); found {
			cv = fmt.Sprintf("%.1f%%", worst)
			if worst > analysis.UnstableCVPercent {
				cv += "!"
				cvTone = "warn"
			}
		}
		row = append(row, cv)
		tones = append(tones, cvTone)
		if hasEff {
			eff := "-"
			if e, found := efficiency(c, g, round, w, primary); found {
				eff = percent(e.Percent)
			} else if isBaseline(c, g) {
				eff = "base"
			}
			row = append(row, eff)
			tones = append(tones, "")
		}
		t.rows = append(t.rows, row)
		t.tones = append(t.tones, tones)
		if ok {
			note := ""
			if r.flagIdx().unstable[[4]string{g, round, w, primary}] {
				note = "unstable"
			}
			if r.flagIdx().outlier[[3]string{g, round, w}] {
				note = strings.TrimSpace(note + " outlier")
			}
			bs.items = append(bs.items, bar{label: g, value: pc.Mean, display: FormatValue(primary, pc.Mean), best: best, note: note})
		}
	}
	d.add(t)
	if len(bs.items) > 0 {
		d.add(bs)
	}
	var bl list
	for _, b := range c.Bottlenecks {
		if b.Round == round && b.Workload == w {
			bl.items = append(bl.items, listItem{text: fmt.Sprintf("%s limited by %s: %s", b.Target, b.LimitedBy, b.Evidence)})
		}
	}
	if len(bl.items) > 0 {
		d.add(bl)
	}
}

// repetitionCV is the spread of repeated results: a target's coefficient
// of variation, or for a group the worst of its targets' (the spread
// between a group's targets is not instability).
func repetitionCV(c *analysis.Comparison, g, round, w, m string) (float64, bool) {
	targets := []string{g}
	if c.GroupBy != "" {
		targets = c.TargetsOf(g)
	}
	worst, found := 0.0, false
	for _, t := range targets {
		if cell, ok := c.TargetCell(t, round, w, m); ok && cell.Stats.N >= 2 {
			worst, found = math.Max(worst, cell.Stats.CVPercent), true
		}
	}
	return worst, found
}

func efficiency(c *analysis.Comparison, g, round, w, m string) (analysis.Efficiency, bool) {
	return c.EfficiencyOf(g, round, w, m)
}

func isBaseline(c *analysis.Comparison, g string) bool {
	if c.Baseline == g {
		return true
	}
	k, v, ok := strings.Cut(c.Baseline, "=")
	return ok && k == c.GroupBy && v == g
}

// flagIndex says, per group (a target without grouping), round and
// workload, whether a target is unstable on a metric or an outlier.
type flagIndex struct {
	unstable map[[4]string]bool // group, round, workload, metric
	outlier  map[[3]string]bool // group, round, workload
}

func newFlagIndex(c *analysis.Comparison) flagIndex {
	fi := flagIndex{unstable: map[[4]string]bool{}, outlier: map[[3]string]bool{}}
	for _, u := range c.Unstable {
		fi.unstable[[4]string{u.Target, u.Round, u.Workload, u.Metric}] = true
		fi.unstable[[4]string{c.GroupOf(u.Target), u.Round, u.Workload, u.Metric}] = true
	}
	for _, o := range c.Outliers {
		fi.outlier[[3]string{o.Target, o.Round, o.Workload}] = true
		if c.GroupBy != "" {
			fi.outlier[[3]string{c.GroupOf(o.Target), o.Round, o.Workload}] = true
		}
	}
	return fi
}

// flagIdx builds the report's flag index once.
func (r *Report) flagIdx() flagIndex {
	if r.flags == nil {
		fi := newFlagIndex(r.Comparison)
		r.flags = &fi
	}
	return *r.flags
}

func efficiencyTable(c *analysis.Comparison) table {
	t := table{head: []string{"GROUP", "ROUND", "WORKLOAD", "METRIC", "VS BASELINE"}, right: []bool{false, false, false, false, true}}
	if c.GroupBy == "" {
		t.head[0] = "TARGET"
	}
	for _, g := range c.Groups {
		for _, e := range c.Efficiency {
			if e.Group == g && e.Metric == c.PrimaryMetric(e.Workload) {
				t.rows = append(t.rows, []string{e.Group, e.Round, e.Workload, MetricLabel(e.Metric), percent(e.Percent)})
			}
		}
	}
	return t
}

func roundTable(c *analysis.Comparison) table {
	t := table{head: []string{"GROUP", "WORKLOAD", "ROUNDS", "METRIC", "CHANGE"}, right: []bool{false, false, false, false, true}}
	if c.GroupBy == "" {
		t.head[0] = "TARGET"
	}
	for _, rc := range c.RoundChanges {
		if rc.Metric != c.PrimaryMetric(rc.Workload) {
			continue
		}
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

func stableText(c *analysis.Comparison) string {
	for _, cell := range c.TargetCells {
		if cell.N >= 2 {
			return fmt.Sprintf("Every repeated result is stable: coefficient of variation at most %d%%.", analysis.UnstableCVPercent)
		}
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
