package metrics

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/trend"
	"github.com/storbench/storbench/internal/version"
)

const namespace = "storbench"

// Label names. The storage labels keep storbench's own label keys, so a
// series reads like the results it comes from.
var (
	labelTarget       = "target"
	labelHostname     = result.LabelHostname.String()
	labelNode         = result.LabelNode.String()
	labelStorageClass = result.LabelStorageClass.String()
	labelSuite        = "suite"
	labelRound        = "round"
	labelWorkload     = "workload"
	labelFor          = "for"

	labelMetric = "metric"

	// trendLabels name one assessed history (storbench trend has no host).
	trendLabels = []string{labelTarget, labelRound, labelWorkload, labelMetric}

	// targetLabels name one target; figureLabels one figure of it.
	targetLabels = []string{labelTarget, labelHostname, labelNode, labelStorageClass}
	figureLabels = append(slices.Clone(targetLabels), labelSuite, labelRound, labelWorkload)
)

// Metric family names.
const (
	NameIOPS          = namespace + "_iops"
	NameBandwidth     = namespace + "_bandwidth_bytes_per_second"
	NameLatency       = namespace + "_latency_seconds"
	NameSyncP99       = namespace + "_sync_latency_p99_seconds"
	NameLastRun       = namespace + "_last_run_timestamp_seconds"
	NameVerdictStatus = namespace + "_verdict_status"
	NameBuildInfo     = namespace + "_build_info"
	NameRegression    = namespace + "_regression"
	NameTrendChange   = namespace + "_trend_change_ratio"
)

// Names lists every series name the collector can emit, a summary's _sum
// and _count included.
func Names() []string {
	return []string{NameIOPS, NameBandwidth, NameLatency, NameLatency + "_sum", NameLatency + "_count", NameSyncP99,
		NameLastRun, NameVerdictStatus, NameBuildInfo, NameRegression, NameTrendChange,
		NameSweepKneeClients, NameSweepKneeIOPS, NameSweepMaxClients}
}

// Descriptions of the metric families, one per figure.
var (
	descIOPS = prometheus.NewDesc(NameIOPS,
		"I/O operations per second of the latest run (mean over its repetitions; reads and writes added up).", figureLabels, nil)
	descBandwidth = prometheus.NewDesc(NameBandwidth,
		"Throughput of the latest run in bytes per second (mean over its repetitions; reads and writes added up).", figureLabels, nil)
	descLatency = prometheus.NewDesc(NameLatency,
		"Completion latency (fio clat) of the latest run: each quantile is the worst direction's percentile, mean over the repetitions; _count counts the repetitions, _sum/_count is the mean latency.", figureLabels, nil)
	descSyncP99 = prometheus.NewDesc(NameSyncP99,
		"99th percentile of fsync/fdatasync latency of the latest run, where the workload syncs (mean over its repetitions).", figureLabels, nil)
	descLastRun = prometheus.NewDesc(NameLastRun,
		"When the latest run holding this figure was measured (its start), in seconds since the Unix epoch.", figureLabels, nil)
	descVerdict = prometheus.NewDesc(NameVerdictStatus,
		"Verdict on the target's latest figures in this round, per use (for): 0 pass, 1 info, 2 warn, 3 fail.", append(slices.Clone(targetLabels), labelRound, labelFor), nil)
	descRegression = prometheus.NewDesc(NameRegression,
		"The target's latest figures against its own history (storbench trend), judged on the metric named: 0 within the noise band, 1 warning (the latest runs beyond it), 2 regression (a confirmed step or drift for the worse). No series: too little history.", trendLabels, nil)
	descTrendChange = prometheus.NewDesc(NameTrendChange,
		"The current level against the baseline of earlier runs (storbench trend), as a signed fraction of the baseline: -0.4 is 40% below it.", trendLabels, nil)
	descBuild = prometheus.NewDesc(NameBuildInfo,
		"The storbench build exposing these metrics (always 1).", []string{"version"}, nil)
)

// quantiles maps the latency metrics storbench keeps to the quantile
// Prometheus names them by.
var quantiles = []struct {
	metric string
	q      float64
}{{result.MetricLatP50, 0.5}, {result.MetricLatP90, 0.9}, {result.MetricLatP99, 0.99}, {result.MetricLatP999, 0.999}}

// VerdictValue is a verdict status as storbench_verdict_status reports it:
// a higher value is worse news.
func VerdictValue(s analysis.Status) float64 {
	switch s {
	case analysis.Pass:
		return 0
	case analysis.Info:
		return 1
	case analysis.Warn:
		return 2
	case analysis.Fail:
		return 3
	}
	return math.NaN()
}

// Collector is a prometheus.Collector over a store.Reader: every Collect
// reads the latest figures and emits them as constant metrics. It is
// unchecked (Describe sends nothing) because its series depend on what is
// stored; each family's description is fixed all the same.
type Collector struct {
	ctx    context.Context
	reader store.Reader
	trend  TrendFunc
	memo   *memo
}

// memo keeps what one scrape read for the next: the latest figures to
// build on (store.Reader.Latest then reads only what was stored since),
// and the trend assessments, which change only with new results.
type memo struct {
	mu   sync.Mutex
	last *store.LatestFigures
	// series are the figure and verdict series made of last, kept for
	// as long as the store answers with last itself (nothing new).
	series        []prometheus.Metric
	assessments   []trend.Assessment
	assessedUntil int64 // the last result ID when assessed; -1: never
	assessing     bool  // an assessment is under way
	errorLog      promhttp.Logger
}

func newMemo(errorLog promhttp.Logger) *memo { return &memo{assessedUntil: -1, errorLog: errorLog} }

// memoState is what the memo holds at one moment.
type memoState struct {
	last          *store.LatestFigures
	series        []prometheus.Metric
	assessments   []trend.Assessment
	assessedUntil int64
}

func (m *memo) get() memoState {
	if m == nil {
		return memoState{assessedUntil: -1}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return memoState{last: m.last, series: m.series, assessments: m.assessments, assessedUntil: m.assessedUntil}
}

func (m *memo) set(l *store.LatestFigures, series []prometheus.Metric) {
	if m != nil && l != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.last, m.series = l, series
	}
}

func (m *memo) assessed(js []trend.Assessment, until int64) {
	if m != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.assessments, m.assessedUntil = js, until
	}
}

// reassess assesses again in the background, unless an assessment is under way:
// assessing every history reads every result (seconds on a large database),
// longer than a scrape should take. Meanwhile scrapes show the previous
// assessments; a failure is logged and retried at the next scrape.
func (m *memo) reassess(assess TrendFunc, until int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.assessing {
		return
	}
	m.assessing = true
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), reassessTimeout)
		defer cancel()
		js, err := assess(ctx)
		m.mu.Lock()
		defer m.mu.Unlock()
		m.assessing = false
		if err != nil {
			if m.errorLog != nil {
				m.errorLog.Println("storbench_regression:", err)
			}
			return
		}
		m.assessments, m.assessedUntil = js, until
	}()
}

// reassessTimeout bounds an assessment in the background.
const reassessTimeout = 10 * time.Minute

// NewCollector returns a Collector reading r within ctx, the scrape's
// context (an abandoned scrape stops reading); trend, if not nil, gives
// storbench_regression.
func NewCollector(ctx context.Context, r store.Reader, trend TrendFunc) *Collector {
	return &Collector{ctx: ctx, reader: r, trend: trend}
}

// Describe sends nothing: see Collector.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the database and sends every series; a failure to read it
// is sent as an invalid metric, which fails the scrape.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descBuild, prometheus.GaugeValue, 1, version.Version)
	prev := c.memo.get()
	series, latest, err := collect(c.ctx, c.reader, prev.last, prev.series)
	js := prev.assessments
	if err == nil && c.trend != nil && latest.LastResultID() != prev.assessedUntil {
		if c.memo == nil || prev.assessedUntil < 0 {
			// Never assessed: assess now, so the first scrape shows it all.
			if js, err = c.trend(c.ctx); err == nil {
				c.memo.assessed(js, latest.LastResultID())
			}
		} else {
			c.memo.reassess(c.trend, latest.LastResultID())
		}
	}
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descIOPS, err)
		return
	}
	c.memo.set(latest, series)
	for _, m := range series {
		ch <- m
	}
	for _, m := range regressionSeries(js) {
		ch <- m
	}
}

// snapshot is what series need of the runs behind the latest figures.
type snapshot struct {
	suites map[string]string  // run ID -> suite
	times  map[string]float64 // run ID -> start, Unix seconds
}

// family emits one group of series from a snapshot.
type family func(s *snapshot, g *group, emit func(prometheus.Metric))

// families are every group of series, in exposition order.
var families = []family{figureSeries, verdictSeries}

// collect returns the metrics of the latest figures r holds, every family
// of them, in a stable order, and those figures; prev is an earlier
// answer to build on, or nil, and prevSeries its metrics.
func collect(ctx context.Context, r store.Reader, prev *store.LatestFigures, prevSeries []prometheus.Metric) ([]prometheus.Metric, *store.LatestFigures, error) {
	latest, err := r.Latest(ctx, prev)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the latest results: %w", err)
	}
	if prev != nil && latest == prev {
		return prevSeries, latest, nil
	}
	s := &snapshot{suites: map[string]string{}, times: map[string]float64{}}
	for _, run := range latest.Runs {
		s.suites[run.ID] = run.Suite
		s.times[run.ID] = float64(run.Started.UnixNano()) / 1e9
	}
	var out []prometheus.Metric
	emit := func(m prometheus.Metric) { out = append(out, m) }
	for _, g := range groups(latest.Figures) {
		if g.c, err = analysis.Compare(g.figs, analysis.Options{}); err != nil {
			return nil, latest, fmt.Errorf("comparing the latest results of %s on %q (%s): %w", g.target, g.host, g.round, err)
		}
		for _, f := range families {
			f(s, g, emit)
		}
	}
	out = append(out, kneeSeries(latest.Figures)...) // knee.go
	return out, latest, nil
}

// group is the latest figures of one target on one host in one round:
// what one comparison (and so one verdict) is made of.
type group struct {
	target, host, round string
	figs                []result.Figures
	// c is figs compared as storbench compare does it: the mean over
	// repetitions, the statistics every report shows.
	c *analysis.Comparison
}

// groups splits figures by target, host and round (a contention role
// apart), in first-stored order.
func groups(figs []result.Figures) []*group {
	index := map[[3]string]*group{}
	var out []*group
	for _, f := range figs {
		// A contention round's roles (the probe alone, the probe loaded,
		// the bulk writer) are rounds of their own, as storbench trend
		// names them: "contention:loaded".
		round := f.Round
		if role := result.LabelContention.Of(f.Labels); role != "" {
			round += ":" + role
		}
		k := [3]string{f.Target, result.LabelHostname.Of(f.Labels), round}
		g := index[k]
		if g == nil {
			g = &group{target: k[0], host: k[1], round: k[2]}
			index[k] = g
			out = append(out, g)
		}
		g.figs = append(g.figs, f)
	}
	return out
}

// targetValues are a group's values of targetLabels.
func (g *group) targetValues() []string {
	l := g.figs[0].Labels
	return []string{g.target, g.host, result.LabelNode.Of(l), result.LabelStorageClass.Of(l)}
}

// figureSeries emits the figures of every workload of the group.
func figureSeries(s *snapshot, g *group, emit func(prometheus.Metric)) {
	c := g.c
	// Compare names the target by itself: one host, one run per workload.
	target := c.Targets[0]
	round := c.Rounds[0]
	runOf := map[string]string{}
	for _, f := range g.figs {
		runOf[f.Workload] = f.RunID
	}
	tv := g.targetValues()
	for _, w := range c.Workloads {
		run := runOf[w]
		lv := append(slices.Clone(tv), s.suites[run], g.round, w)
		cell := func(m string) (analysis.Cell, bool) { return c.TargetCell(target, round, w, m) }
		gauge := func(d *prometheus.Desc, m string, scale float64) {
			if x, ok := cell(m); ok {
				emit(prometheus.MustNewConstMetric(d, prometheus.GaugeValue, x.Mean*scale, lv...))
			}
		}
		gauge(descIOPS, result.MetricIOPS, 1)
		gauge(descBandwidth, result.MetricBW, 1)
		qs := map[float64]float64{}
		n := 0
		for _, q := range quantiles {
			if x, ok := cell(q.metric); ok {
				qs[q.q] = x.Mean / 1e9
				n = max(n, x.N)
			}
		}
		mean, hasMean := cell(result.MetricLatMean)
		if len(qs) > 0 || hasMean {
			sum := math.NaN()
			if hasMean {
				n = mean.N
				sum = mean.Mean / 1e9 * float64(n)
			}
			emit(prometheus.MustNewConstSummary(descLatency, uint64(n), sum, qs, lv...))
		}
		gauge(descSyncP99, result.MetricSyncP99, 1e-9)
		if t, ok := s.times[run]; ok {
			emit(prometheus.MustNewConstMetric(descLastRun, prometheus.GaugeValue, t, lv...))
		}
	}
}

// verdictSeries emits every verdict the group's figures allow
// (analysis.Applicable: general always; etcd, ceph-osd and pi-score where
// the suite behind them was run).
func verdictSeries(_ *snapshot, g *group, emit func(prometheus.Metric)) {
	for _, kind := range analysis.Applicable(g.c) {
		v, err := analysis.VerdictFor(kind, g.c, analysis.VerdictOptions{})
		if err != nil {
			continue // Applicable judged it once already
		}
		lv := append(g.targetValues(), g.round, kind)
		emit(prometheus.MustNewConstMetric(descVerdict, prometheus.GaugeValue, VerdictValue(v.Status), lv...))
	}
}

// regressionValue is a trend verdict as storbench_regression reports it;
// ok is false for too little history.
func regressionValue(v trend.Verdict) (float64, bool) {
	switch v {
	case trend.OK:
		return 0, true
	case trend.Warning:
		return 1, true
	case trend.Regression:
		return 2, true
	}
	return 0, false
}

// regressionSeries gives every assessed history's verdict and change.
func regressionSeries(js []trend.Assessment) []prometheus.Metric {
	var out []prometheus.Metric
	for _, j := range js {
		v, ok := regressionValue(j.Verdict)
		if !ok {
			continue
		}
		lv := []string{j.Target, j.Round, j.Workload, j.Metric}
		out = append(out, prometheus.MustNewConstMetric(descRegression, prometheus.GaugeValue, v, lv...))
		if j.Baseline != 0 {
			out = append(out, prometheus.MustNewConstMetric(descTrendChange, prometheus.GaugeValue, j.Delta, lv...))
		}
	}
	return out
}
