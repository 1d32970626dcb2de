package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// Placement ratings of the general verdict.
const (
	RatingGood       = "good"
	RatingAcceptable = "acceptable"
	RatingAvoid      = "avoid"
)

// Uses the general verdict rates, in the order it lists them.
const (
	UseReadHeavy = "read-heavy services"
	UseDatabases = "databases"
	UseCICaches  = "CI caches"
	UseLogs      = "log aggregation"
	UseEtcd      = "etcd"
)

var generalUses = []string{UseReadHeavy, UseDatabases, UseCICaches, UseLogs, UseEtcd}

// useOrder is a use's position in generalUses; unknown uses go last.
func useOrder(name string) int {
	for i, u := range generalUses {
		if u == name {
			return i
		}
	}
	return len(generalUses)
}

// ratingUnit is the Unit of a check that rates a use.
const ratingUnit = "rating"

const generalSource = "storbench rule of thumb for homelab clusters (docs/analysis.md explains each figure)"

// figure is one measured input of a placement rule.
type figure struct {
	name     string
	value    float64
	metric   string
	workload string
	ok       bool
}

func (f figure) String() string {
	var v string
	switch result.MetricUnit(f.metric) {
	case "IOPS":
		v = units.IOPS(f.value) + " IOPS"
	case "B/s":
		v = units.MBps(f.value)
	default:
		v = units.Latency(time.Duration(f.value))
	}
	return fmt.Sprintf("%s %s (%s)", f.name, v, f.workload)
}

// groupFigure picks, among the group's workloads matching the pattern, the
// best value of metric.
func (c *Comparison) groupFigure(group, round, name, metric string, match func(pattern) bool) figure {
	f := figure{name: name, metric: metric}
	for _, w := range c.Workloads {
		if !match(patternOf(w)) {
			continue
		}
		cell, ok := c.GroupCell(group, round, w, metric)
		if !ok {
			continue
		}
		if !f.ok || better(metric, cell.Mean, f.value) {
			f.value, f.workload, f.ok = cell.Mean, w, true
		}
	}
	return f
}

// rule rates a group for one use: good when every present figure meets
// its good bound, acceptable when every one meets its acceptable bound.
type bound struct {
	fig              figure
	good, acceptable float64
}

func rate(bounds []bound) (string, bool) {
	rating, any := RatingGood, false
	for _, b := range bounds {
		if !b.fig.ok {
			continue
		}
		any = true
		okGood := better(b.fig.metric, b.fig.value, b.good) || b.fig.value == b.good
		okAcc := better(b.fig.metric, b.fig.value, b.acceptable) || b.fig.value == b.acceptable
		switch {
		case !okAcc:
			rating = RatingAvoid
		case !okGood && rating == RatingGood:
			rating = RatingAcceptable
		}
	}
	return rating, any
}

func generalVerdict(c *Comparison) (*Verdict, error) {
	v := &Verdict{}
	overall := Pass
	for _, g := range c.Groups {
		for _, round := range c.Rounds {
			label := g
			if len(c.Rounds) > 1 {
				label += " (" + round + ")"
			}
			randRead := c.groupFigure(g, round, "random read", result.MetricIOPS, func(p pattern) bool { return p.random && p.read && !p.write })
			seqRead := c.groupFigure(g, round, "sequential read", result.MetricBW, func(p pattern) bool { return !p.random && p.read && !p.write })
			randWrite := c.groupFigure(g, round, "random write", result.MetricIOPS, func(p pattern) bool { return p.random && p.write && !p.read })
			seqWrite := c.groupFigure(g, round, "sequential write", result.MetricBW, func(p pattern) bool { return !p.random && p.write && !p.read && !p.sync })
			commit := c.groupFigure(g, round, "sync p99", result.MetricSyncP99, func(pattern) bool { return true })
			if !commit.ok {
				commit = c.groupFigure(g, round, "QD1 write p99", result.MetricLatP99, func(p pattern) bool { return p.write && !p.read && p.qd1 })
			}
			etcdSync := c.groupFigure(g, round, "fdatasync p99", result.MetricSyncP99, func(pattern) bool { return true })

			uses := []struct {
				name, threshold, source string
				bounds                  []bound
			}{
				{UseReadHeavy, "good: random read >= 10k IOPS and sequential read >= 200 MB/s; acceptable: >= 1k IOPS and >= 50 MB/s", generalSource,
					[]bound{{randRead, 10000, 1000}, {seqRead, 200e6, 50e6}}},
				{UseDatabases, "good: random write >= 5k IOPS and commit (sync or QD1 write) p99 <= 1 ms; acceptable: >= 1k IOPS and <= 10 ms", generalSource,
					[]bound{{randWrite, 5000, 1000}, {commit, 1e6, 10e6}}},
				{UseCICaches, "good: random read >= 5k IOPS, random write >= 2k IOPS, sequential write >= 150 MB/s; acceptable: >= 1k, >= 500, >= 50 MB/s", generalSource,
					[]bound{{randRead, 5000, 1000}, {randWrite, 2000, 500}, {seqWrite, 150e6, 50e6}}},
				{UseLogs, "good: sequential write >= 100 MB/s; acceptable: >= 20 MB/s", generalSource,
					[]bound{{seqWrite, 100e6, 20e6}}},
				{UseEtcd, "good: fdatasync p99 <= 10 ms; acceptable: <= 20 ms", etcdSyncSource,
					[]bound{{etcdSync, 10e6, 20e6}}},
			}
			// A group passes when it is good for at least one use.
			best := Fail
			judged := 0
			for _, u := range uses {
				rating, any := rate(u.bounds)
				if !any {
					continue
				}
				judged++
				var nums []string
				for _, b := range u.bounds {
					if b.fig.ok {
						s := b.fig.String()
						if e, ok := c.EfficiencyOf(g, round, b.fig.workload, b.fig.metric); ok {
							s += fmt.Sprintf(", %.0f%% of %s", e.Percent, e.Baseline)
						}
						nums = append(nums, s)
					}
				}
				st := map[string]Status{RatingGood: Pass, RatingAcceptable: Warn, RatingAvoid: Fail}[rating]
				if st.rank() < best.rank() {
					best = st
				}
				v.Checks = append(v.Checks, Check{Subject: label, Name: u.name, Round: round, Display: rating, Unit: ratingUnit,
					Status: st, Threshold: u.threshold, Source: u.source, Detail: strings.Join(nums, "; ")})
			}
			for _, t := range c.TargetsOf(g) {
				if cl, ok := c.CliffOf(t, round); ok {
					ch := cliffCheck(label, round, cl, 100e6, "log-aggregation pace", "a bulk copy", cliffSource)
					if ch.Status == Pass {
						ch.Status = Info // good news about one property, not a placement
					}
					v.Checks = append(v.Checks, ch)
					overall = Worse(overall, ch.Status)
				}
			}
			if judged == 0 {
				continue
			}
			overall = Worse(overall, best)
		}
	}
	if len(v.Checks) == 0 {
		return nil, &MissingError{For: ForGeneral, What: "no read, write or sync workload recognised by name"}
	}
	v.Status = overall
	v.Summary = generalSummary(v)
	return v, nil
}

func generalSummary(v *Verdict) string {
	good := map[string][]string{}
	var order []string
	for _, ch := range v.Checks {
		if _, ok := good[ch.Subject]; !ok {
			order = append(order, ch.Subject)
			good[ch.Subject] = nil
		}
		if ch.Display == RatingGood {
			good[ch.Subject] = append(good[ch.Subject], ch.Name)
		}
	}
	var parts []string
	for _, s := range order {
		if len(good[s]) == 0 {
			parts = append(parts, s+": good for none of the uses checked")
			continue
		}
		parts = append(parts, s+": good for "+strings.Join(good[s], ", "))
	}
	return strings.Join(parts, "; ")
}
