package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// fixture loads testdata/fixture.json: four targets (/mnt/n1 and /mnt/n2
// labelled storage=nvme, /mnt/s1 and /mnt/s2 storage=sata), two rounds
// (isolated, parallel) and two workloads. Figures in MB/s (10^6 B/s):
//
//	seq-read            n1        n2          s1    s2
//	  isolated          1000,1100 800,1100    500   200
//	  parallel          800       700         450   150
//	rand-read-4k-qd32 IOPS (p99 µs)
//	  isolated          50000(100) 40000(120) 10000(400) 9000(1000)
//	  parallel          30000(150) 10000(200)  8000(500) 7000(600)
func fixture(t *testing.T) []result.Figures {
	t.Helper()
	return figuresFile(t, "testdata/fixture.json")
}

// figuresFile reads stored results (JSON) and returns their figures.
func figuresFile(t *testing.T, path string) []result.Figures {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []result.Result
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	var out []result.Figures
	for i := range rs {
		out = append(out, rs[i].Figures())
	}
	return out
}

func mustCompare(t *testing.T, figs []result.Figures, o Options) *Comparison {
	t.Helper()
	c, err := Compare(figs, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const (
	seq  = "seq-read"
	rand = "rand-read-4k-qd32"
	iso  = result.RoundIsolated
	par  = result.RoundParallel
	bw   = result.MetricBW
	iops = result.MetricIOPS
	p99  = result.MetricLatP99
)

func TestGroupsAndOrder(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{GroupBy: "storage"})
	if got := strings.Join(c.Rounds, ","); got != "isolated,parallel" {
		t.Errorf("rounds = %s", got)
	}
	if got := strings.Join(c.Groups, ","); got != "nvme,sata" {
		t.Errorf("groups = %s", got)
	}
	if got := strings.Join(c.Targets, ","); got != "/mnt/n1,/mnt/n2,/mnt/s1,/mnt/s2" {
		t.Errorf("targets = %s", got)
	}
	for _, tt := range []struct {
		group, round, workload, metric string
		mean                           float64
		n, targets                     int
	}{
		// Mean of the targets' means: (1050 + 950) / 2.
		{"nvme", iso, seq, bw, 1000e6, 4, 2},
		{"sata", iso, seq, bw, 350e6, 2, 2},
		{"nvme", par, seq, bw, 750e6, 2, 2},
		{"sata", par, seq, bw, 300e6, 2, 2},
		{"nvme", iso, rand, iops, 45000, 2, 2},
		{"sata", par, rand, iops, 7500, 2, 2},
		{"sata", iso, rand, p99, 700e3, 2, 2},
	} {
		cell, ok := c.GroupCell(tt.group, tt.round, tt.workload, tt.metric)
		if !ok {
			t.Errorf("no cell %s %s %s %s", tt.group, tt.round, tt.workload, tt.metric)
			continue
		}
		if !near(cell.Mean, tt.mean) || cell.N != tt.n || cell.Targets != tt.targets || cell.Unit != result.MetricUnit(tt.metric) {
			t.Errorf("%s %s %s %s = mean %g n %d targets %d unit %s, want %g %d %d", tt.group, tt.round, tt.workload, tt.metric,
				cell.Mean, cell.N, cell.Targets, cell.Unit, tt.mean, tt.n, tt.targets)
		}
	}
	n2, _ := c.TargetCell("/mnt/n2", iso, seq, bw)
	if n2.N != 2 || !near(n2.Mean, 950e6) || !near(n2.Stats.StdDev, 212.1320344e6) {
		t.Errorf("n2 seq-read = %+v", n2)
	}
}

func TestEfficiency(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{GroupBy: "storage", Baseline: "storage=nvme"})
	got := map[string]float64{}
	for _, e := range c.Efficiency {
		if e.Group == "nvme" {
			t.Errorf("the baseline compared with itself: %+v", e)
		}
		if e.Baseline != "storage=nvme" {
			t.Errorf("baseline = %q", e.Baseline)
		}
		got[fmt.Sprintf("%s/%s/%s/%s", e.Group, e.Round, e.Workload, e.Metric)] = e.Percent
	}
	for k, want := range map[string]float64{
		"sata/isolated/seq-read/bw":            35,
		"sata/parallel/seq-read/bw":            40,
		"sata/isolated/rand-read-4k-qd32/iops": 9500.0 / 45000 * 100,
		"sata/parallel/rand-read-4k-qd32/iops": 37.5,
		// Latency: baseline / value, so more is better: 110 µs / 700 µs.
		"sata/isolated/rand-read-4k-qd32/lat_p99": 110.0 / 700 * 100,
	} {
		if !near(got[k], want) {
			t.Errorf("efficiency %s = %.4f%%, want %.4f%%", k, got[k], want)
		}
	}
}

func TestEfficiencyAgainstTarget(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{Baseline: "/mnt/n1"})
	found := false
	for _, e := range c.Efficiency {
		if e.Group == "/mnt/n1" {
			t.Errorf("baseline target compared with itself: %+v", e)
		}
		if e.Group == "/mnt/s2" && e.Round == iso && e.Workload == seq && e.Metric == bw {
			found = true
			if !near(e.Percent, 200.0/1050*100) || !near(e.Ratio, 200.0/1050) {
				t.Errorf("s2 vs n1 = %+v", e)
			}
		}
	}
	if !found {
		t.Error("no efficiency of /mnt/s2 against /mnt/n1")
	}
}

func TestRoundChange(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{GroupBy: "storage"})
	got := map[string]RoundChange{}
	for _, rc := range c.RoundChanges {
		got[rc.Group+"/"+rc.Workload+"/"+rc.Metric] = rc
	}
	for k, want := range map[string]float64{
		"nvme/seq-read/bw":            -25,
		"sata/seq-read/bw":            (300.0 - 350) / 350 * 100,
		"nvme/rand-read-4k-qd32/iops": (20000.0 - 45000) / 45000 * 100,
		"sata/rand-read-4k-qd32/iops": (7500.0 - 9500) / 9500 * 100,
		// p99 110 µs -> 175 µs: up, which is worse.
		"nvme/rand-read-4k-qd32/lat_p99": (175.0 - 110) / 110 * 100,
	} {
		rc, ok := got[k]
		if !ok {
			t.Errorf("no round change %s", k)
			continue
		}
		if rc.From != iso || rc.To != par || !near(rc.Percent, want) || rc.Better {
			t.Errorf("round change %s = %+v, want isolated -> parallel %.4f%%, worse", k, rc, want)
		}
	}
}

func TestBest(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{GroupBy: "storage"})
	want := map[string]string{
		"isolated/seq-read/bw":                "/mnt/n1",
		"parallel/seq-read/bw":                "/mnt/n1",
		"isolated/rand-read-4k-qd32/iops":     "/mnt/n1",
		"parallel/rand-read-4k-qd32/iops":     "/mnt/n1",
		"isolated/rand-read-4k-qd32/lat_p99":  "/mnt/n1",
		"parallel/rand-read-4k-qd32/lat_p99":  "/mnt/n1",
		"isolated/rand-read-4k-qd32/lat_p50":  "/mnt/n1",
		"parallel/seq-read/lat_mean":          "/mnt/n1", // all equal: the first wins
		"isolated/rand-read-4k-qd32/lat_p999": "/mnt/n1",
		"parallel/rand-read-4k-qd32/lat_p999": "/mnt/n1",
		"parallel/rand-read-4k-qd32/lat_mean": "/mnt/n1",
		"isolated/rand-read-4k-qd32/lat_mean": "/mnt/n1",
		"parallel/rand-read-4k-qd32/lat_p50":  "/mnt/n1",
		"isolated/rand-read-4k-qd32/lat_p90":  "/mnt/n1",
		"parallel/rand-read-4k-qd32/lat_p90":  "/mnt/n1",
		"isolated/rand-read-4k-qd32/bw":       "/mnt/n1",
		"parallel/rand-read-4k-qd32/bw":       "/mnt/n1",
	}
	for _, b := range c.Best {
		k := b.Round + "/" + b.Workload + "/" + b.Metric
		if w, ok := want[k]; ok && b.Target != w {
			t.Errorf("best %s = %s, want %s", k, b.Target, w)
		}
	}
	if len(c.Best) != 2*2*len(c.Metrics) {
		t.Errorf("%d best entries, want one per round, workload and metric (%d)", len(c.Best), 2*2*len(c.Metrics))
	}
	for _, b := range c.BestGroups {
		if b.Group != "nvme" {
			t.Errorf("best group %s/%s/%s = %s, want nvme", b.Round, b.Workload, b.Metric, b.Group)
		}
	}
	if !c.IsBest("/mnt/n1", false, iso, seq, bw) || c.IsBest("/mnt/n2", false, iso, seq, bw) || !c.IsBest("nvme", true, iso, seq, bw) {
		t.Error("IsBest disagrees with Best")
	}
}

func outlierSet(c *Comparison) []string {
	var out []string
	for _, o := range c.Outliers {
		out = append(out, fmt.Sprintf("%s|%s|%s|%s|%s|%.4f", o.Target, o.Group, o.Round, o.Workload, o.Metric, o.Ratio))
	}
	sort.Strings(out)
	return out
}

func TestOutliers(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{GroupBy: "storage"})
	want := []string{
		// Two peers per group: each target against the other.
		"/mnt/n2|nvme|parallel|rand-read-4k-qd32|bw|0.3333",
		"/mnt/n2|nvme|parallel|rand-read-4k-qd32|iops|0.3333",
		"/mnt/s2|sata|isolated|rand-read-4k-qd32|lat_p99|2.5000",
		"/mnt/s2|sata|isolated|seq-read|bw|0.4000",
		"/mnt/s2|sata|isolated|seq-read|iops|0.4000",
		"/mnt/s2|sata|parallel|seq-read|bw|0.3333",
		"/mnt/s2|sata|parallel|seq-read|iops|0.3333",
	}
	if got := outlierSet(c); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("outliers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, o := range c.Outliers {
		if o.Peers != 1 {
			t.Errorf("%s has %d peers, want 1", o.Target, o.Peers)
		}
	}

	// Without groups every target is judged against the three others:
	// s2's 200 MB/s against the median of 1050, 950 and 500.
	c = mustCompare(t, fixture(t), Options{})
	found := false
	for _, o := range c.Outliers {
		if o.Target == "/mnt/s2" && o.Round == iso && o.Workload == seq && o.Metric == bw {
			found = true
			if o.Peers != 3 || !near(o.PeerMedian, 950e6) || !near(o.Ratio, 200.0/950) {
				t.Errorf("ungrouped outlier = %+v", o)
			}
		}
		if o.Target == "/mnt/s1" && o.Workload == seq && o.Round == iso {
			t.Errorf("s1 at 500/950 = 0.53 is not an outlier: %+v", o)
		}
	}
	if !found {
		t.Error("s2 not flagged without groups")
	}
}

func TestUnstableFlagged(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{GroupBy: "storage"})
	var got []string
	for _, u := range c.Unstable {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s|%.2f", u.Target, u.Round, u.Workload, u.Metric, u.CVPercent))
	}
	sort.Strings(got)
	// n2's 800 and 1100 MB/s: CV 212.13 / 950 = 22.33%; n1's 1000 and
	// 1100 (6.73%) is stable.
	want := []string{"/mnt/n2|isolated|seq-read|bw|22.33", "/mnt/n2|isolated|seq-read|iops|22.33"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("unstable = %v, want %v", got, want)
	}
}

func TestRoundFilter(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{GroupBy: "storage", Round: par})
	if len(c.Rounds) != 1 || c.Rounds[0] != par || len(c.RoundChanges) != 0 {
		t.Errorf("rounds %v, %d round changes", c.Rounds, len(c.RoundChanges))
	}
	if _, err := Compare(fixture(t), Options{Round: "contention"}); !errors.Is(err, ErrNoResults) {
		t.Errorf("unknown round: %v", err)
	}
}

func TestCompareErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts Options
		want string
	}{
		{"label nobody has", Options{Baseline: "storage=usb"}, "no target carries that label (labels: storage=nvme, storage=sata)"},
		{"unknown target", Options{Baseline: "/mnt/x"}, "neither KEY=VALUE nor one of the targets"},
		{"empty key", Options{Baseline: "=nvme"}, "write it as KEY=VALUE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare(fixture(t), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := Compare(nil, Options{}); !errors.Is(err, ErrNoResults) {
		t.Errorf("no figures: %v", err)
	}
}

func TestBaselineLabelGroupsByItsKey(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{Baseline: "storage=nvme"})
	if c.GroupBy != "storage" || len(c.Groups) != 2 {
		t.Errorf("group by %q, groups %v", c.GroupBy, c.Groups)
	}
}

func TestSkippedAndBottleneck(t *testing.T) {
	figs := fixture(t)
	figs[0].Bottleneck = &result.Attribution{LimitedBy: "device", Evidence: "vda 100% utilised"}
	failed := figs[1]
	failed.Status = result.StatusFailed
	failed.Values = nil
	figs = append(figs, failed)
	c := mustCompare(t, figs, Options{})
	if len(c.Skipped) != 1 || c.Skipped[0].Status != "failed" || c.Skipped[0].Count != 1 {
		t.Errorf("skipped = %+v", c.Skipped)
	}
	if len(c.Bottlenecks) != 1 || c.Bottlenecks[0].Target != "/mnt/n1" || c.Bottlenecks[0].LimitedBy != "device" {
		t.Errorf("bottlenecks = %+v", c.Bottlenecks)
	}
}

func TestTargetKeys(t *testing.T) {
	fig := func(run, target, host, round string) result.Figures {
		return result.Figures{RunID: run, Target: target, Round: round, Workload: "w", Status: result.StatusComplete,
			Labels: map[string]string{"hostname": host}, Values: []float64{1, 1, math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()}}
	}
	tests := []struct {
		name string
		figs []result.Figures
		want string
	}{
		{"two runs, same round: before and after", []result.Figures{fig("20261122-100000-aaaa", "/mnt", "h", iso), fig("20261122-110000-bbbb", "/mnt", "h", iso)},
			"/mnt@100000-aaaa,/mnt@110000-bbbb"},
		{"two runs, two rounds: one target", []result.Figures{fig("20261122-100000-aaaa", "/mnt", "h", iso), fig("20261122-110000-bbbb", "/mnt", "h", par)},
			"/mnt"},
		{"same path on two hosts", []result.Figures{fig("r1", "/mnt", "pi1", iso), fig("r1", "/mnt", "pi2", iso)},
			"pi1:/mnt,pi2:/mnt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCompare(t, tt.figs, Options{})
			if got := strings.Join(c.Targets, ","); got != tt.want {
				t.Errorf("targets = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestInconsistentGroupLabel(t *testing.T) {
	figs := fixture(t)
	figs[0].Labels = map[string]string{"storage": "ssd", "hostname": "lab"}
	if _, err := Compare(figs, Options{GroupBy: "storage"}); err == nil || !strings.Contains(err.Error(), "label it consistently") {
		t.Errorf("err = %v", err)
	}
}
