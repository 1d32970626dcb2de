package render

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/trend"
)

// TrendText writes trend's assessments for a terminal: one row per series
// (worst first, as given), then each regression, warning and series with
// too little history in words. color adds ANSI colours.
func TrendText(w io.Writer, js []trend.Assessment, color bool) error {
	return writeText(w, trendDoc(js), color)
}

// TrendMarkdown writes the same content as Markdown.
func TrendMarkdown(w io.Writer, js []trend.Assessment) error {
	return writeMarkdown(w, trendDoc(js))
}

func trendDoc(js []trend.Assessment) *doc {
	d := &doc{}
	d.h1("Trend: each target × workload against its own history")
	if len(js) == 0 {
		d.p("Nothing to judge.")
		return d
	}
	// Names first, then what matters most; on a narrow terminal the
	// optional columns go from the right.
	tb := table{head: []string{"TARGET", "WORKLOAD", "VERDICT", "CHANGE", "BAND", "METRIC", "BASELINE", "NOW", "RUNS", "SINCE"},
		right:    []bool{false, false, false, true, true, false, true, true, true, false},
		optional: []bool{false, false, false, false, false, true, true, true, true, true}}
	for _, j := range js {
		workload := j.Workload
		if j.Round != "" && j.Round != result.RoundIsolated {
			workload += " (" + j.Round + ")"
		}
		row := []string{j.Target, workload, trendVerdict(j), "-", "-", MetricLabel(j.Metric), "-", "-", fmt.Sprint(j.Runs), "-"}
		if j.Verdict != trend.InsufficientHistory {
			row[3] = signedPercent(j.Delta)
			row[4] = "±" + percent(j.Band*100)
			row[6] = FormatValue(j.Metric, j.Baseline)
			row[7] = FormatValue(j.Metric, j.Level)
		}
		if j.Since != nil {
			row[9] = j.Since.Time.UTC().Format("2006-01-02")
		}
		tone := map[trend.Verdict]string{trend.Regression: "bad", trend.Warning: "warn", trend.InsufficientHistory: "dim"}[j.Verdict]
		if j.Improved {
			tone = "good"
		}
		tb.rows = append(tb.rows, row)
		tb.tones = append(tb.tones, []string{"", "", tone, tone})
	}
	d.add(tb)

	var findings list
	counts := map[trend.Verdict]int{}
	for _, j := range js {
		counts[j.Verdict]++
		switch {
		case j.Verdict == trend.Regression:
			findings.items = append(findings.items, listItem{text: "REGRESSION " + j.Message, tone: "bad"})
		case j.Verdict == trend.Warning:
			findings.items = append(findings.items, listItem{text: "WARNING " + j.Message, tone: "warn"})
		case j.Verdict == trend.InsufficientHistory:
			findings.items = append(findings.items, listItem{text: j.Message, tone: "dim"})
		case j.Improved:
			findings.items = append(findings.items, listItem{text: "improved: " + j.Message, tone: "good"})
		}
	}
	if len(findings.items) > 0 {
		d.h2("Findings")
		d.add(findings)
	}
	if counts[trend.InsufficientHistory] > 0 {
		d.p("Older results measured elsewhere can be brought in with storbench import --time (or a time column in CSV and JSON).")
	}
	d.p("%s judged: %d regression%s, %d warning%s, %d ok, %d with too little history.", plural(len(js), "series", "series"),
		counts[trend.Regression], pluralS(counts[trend.Regression]), counts[trend.Warning], pluralS(counts[trend.Warning]),
		counts[trend.OK], counts[trend.InsufficientHistory])
	return d
}

func trendVerdict(j trend.Assessment) string {
	switch {
	case j.Verdict == trend.InsufficientHistory:
		return "too few runs"
	case j.Improved:
		return "improved"
	}
	return string(j.Verdict)
}

func signedPercent(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	s := percent(f * 100)
	if f >= 0 && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
