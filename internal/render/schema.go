package render

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
)

// Schema versions of the JSON and CSV documents; docs/analysis.md
// describes them. A change that removes or renames a field bumps them.
const (
	JSONSchema = "storbench.compare/v1"
	CSVSchema  = "storbench.compare.csv/v1"
)

// CompareDocument is the JSON form of a comparison or report. Every array
// is present (possibly empty) so scripts need no null checks.
type CompareDocument struct {
	Schema      string                   `json:"schema"`
	Generated   *time.Time               `json:"generated,omitempty"`
	Runs        []RunRef                 `json:"runs"`
	GroupBy     string                   `json:"group_by"`
	Baseline    string                   `json:"baseline"`
	Rounds      []string                 `json:"rounds"`
	Workloads   []string                 `json:"workloads"`
	Targets     []string                 `json:"targets"`
	GroupNames  []string                 `json:"group_names"`
	Metrics     []MetricRef              `json:"metrics"`
	Groups      []analysis.Cell          `json:"groups"`
	TargetStats []analysis.Cell          `json:"target_stats"`
	Efficiency  []analysis.Efficiency    `json:"efficiency"`
	RoundChange []analysis.RoundChange   `json:"round_change"`
	Best        []analysis.Best          `json:"best"`
	BestGroup   []analysis.Best          `json:"best_group"`
	Outliers    []analysis.Outlier       `json:"outliers"`
	Unstable    []analysis.Unstable      `json:"unstable"`
	Bottlenecks []analysis.Bottleneck    `json:"bottlenecks"`
	Environment []analysis.Environment   `json:"environments"`
	Skipped     []analysis.SkippedResult `json:"skipped"`
	Methods     []analysis.MethodNote    `json:"methods"`
	Verdicts    []*analysis.Verdict      `json:"verdicts"`
	// Measurement checks (docs/measurement.md).
	Marks      []analysis.Mark       `json:"marks"`
	Cliffs     []analysis.Cliff      `json:"write_cliffs"`
	Sanity     []analysis.Sanity     `json:"sanity"`
	Indistinct []analysis.Indistinct `json:"no_measurable_difference"`
	// Sweeps are the saturation sweeps with their knees (docs/sweep.md).
	Sweeps []analysis.SweepView `json:"sweeps"`
}

// RunRef identifies a run the comparison read.
type RunRef struct {
	ID      string            `json:"id"`
	Suite   string            `json:"suite"`
	Source  string            `json:"source"`
	Status  result.Status     `json:"status"`
	Started time.Time         `json:"started"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// MetricRef describes a metric present in the comparison.
type MetricRef struct {
	Name           string `json:"name"`
	Unit           string `json:"unit"`
	Label          string `json:"label"`
	HigherIsBetter bool   `json:"higher_is_better"`
}

func empty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Document builds the JSON document of a report.
func (r *Report) Document() CompareDocument {
	c := r.View.Comparison
	doc := CompareDocument{
		Schema: JSONSchema, GroupBy: c.GroupBy, Baseline: c.Baseline,
		Rounds: empty(c.Rounds), Workloads: empty(c.Workloads), Targets: empty(c.Targets), GroupNames: empty(c.Groups),
		Groups: empty(c.GroupCells), TargetStats: empty(c.TargetCells), Efficiency: empty(c.Efficiency),
		RoundChange: empty(c.RoundChanges), Best: empty(c.Best), BestGroup: empty(c.BestGroups), Outliers: empty(c.Outliers),
		Unstable: empty(c.Unstable), Bottlenecks: empty(c.Bottlenecks), Environment: empty(c.Environments),
		Skipped: empty(c.Skipped), Methods: empty(c.Methods), Verdicts: empty(r.Verdicts), Runs: []RunRef{}, Metrics: []MetricRef{},
		Marks: empty(c.Marks), Cliffs: empty(c.Cliffs), Sanity: empty(c.Sanity), Indistinct: empty(c.Indistinct),
		Sweeps: empty(r.View.Sweeps),
	}
	if !r.Generated.IsZero() {
		g := r.Generated.UTC()
		doc.Generated = &g
	}
	for _, run := range r.Runs {
		doc.Runs = append(doc.Runs, RunRef{ID: run.ID, Suite: run.Suite, Source: run.Source, Status: run.Status, Started: run.Started.UTC(), Labels: run.Labels})
	}
	for _, m := range c.Metrics {
		doc.Metrics = append(doc.Metrics, MetricRef{Name: m, Unit: result.MetricUnit(m), Label: MetricLabel(m), HigherIsBetter: result.HigherIsBetter(m)})
	}
	return doc
}

// CompareJSON writes the report's JSON document.
func CompareJSON(w io.Writer, r *Report) error { return JSON(w, r.Document()) }

// CSVHeader is the header row of CompareCSV.
var CSVHeader = []string{"scope", "group", "target", "round", "workload", "metric", "unit", "n", "targets",
	"mean", "median", "min", "max", "stddev", "cv_percent", "ci95_low", "ci95_high", "trimmed_mean",
	"best", "vs_baseline_percent", "unstable"}

// CompareCSV writes one row per figure: scope "target" rows hold the
// statistics of a target's repetitions; with --group-by, scope "group" rows
// follow with each group's mean of its targets' means. Values are in base
// units (IOPS, B/s, ns); empty cells mean "not applicable".
func CompareCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, rec := range r.View.Records {
		cell, st := rec.Cell, rec.Cell.Stats
		lo, hi, eff := "", "", ""
		if st.CI95 != nil {
			lo, hi = num(st.CI95.Low), num(st.CI95.High)
		}
		if rec.Efficiency != nil {
			eff = num(rec.Efficiency.Percent)
		}
		if err := cw.Write([]string{rec.Scope, cell.Group, cell.Target, cell.Round, cell.Workload, cell.Metric, cell.Unit,
			strconv.Itoa(cell.N), strconv.Itoa(cell.Targets), num(cell.Mean), num(st.Median), num(st.Min), num(st.Max),
			num(st.StdDev), num(st.CVPercent), lo, hi, num(st.TrimmedMean), strconv.FormatBool(rec.Best), eff,
			strconv.FormatBool(rec.Unstable)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
