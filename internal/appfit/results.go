package appfit

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Measured is one target's app-fitness measurement, ready to store.
type Measured struct {
	RunID, Target string
	// Labels go on every result (the target's own: storage class, node).
	Labels map[string]string
	// Kind is the target's kind as runners name it (local, kubernetes).
	Kind     string
	Started  time.Time
	Semantic *Report
	SQLite   []SQLiteMeasurement
}

// Results turns a measurement into results of round result.RoundApp.
func (m Measured) Results() []result.Result {
	base := func(workload string) result.Result {
		l := maps.Clone(m.Labels)
		if l == nil {
			l = map[string]string{}
		}
		result.LabelTargetKind.Set(l, m.Kind)
		return result.Result{RunID: m.RunID, Target: m.Target, Round: result.RoundApp, Repetition: 1, Workload: workload,
			Labels: l, Status: result.StatusComplete, Started: m.Started, Finished: time.Now()}
	}
	var out []result.Result
	if m.Semantic != nil {
		for _, a := range m.Semantic.Answers {
			r := base("appfit:" + a.Name)
			result.LabelCheckOutcome.Set(r.Labels, string(a.Outcome))
			result.LabelCheckReason.Set(r.Labels, a.Seen)
			result.LabelCheckEvidence.Set(r.Labels, strings.Join(a.Evidence, "\n"))
			result.LabelAppClients.Set(r.Labels, m.Semantic.Clients)
			r.Write = &result.Direction{Completion: result.Latency{Samples: 1, Mean: a.Took, Min: a.Took, Max: a.Took}}
			out = append(out, r)
		}
	}
	for _, s := range m.SQLite {
		out = append(out, s.result(base))
	}
	return out
}

// SQLiteWorkload names a mode's result: "sqlite:wal-full", with
// "-2clients" when two clients committed at once.
func SQLiteWorkload(m Mode, clients int) string {
	w := "sqlite:" + m.Journal + "-" + m.Synchronous
	if clients > 1 {
		w += fmt.Sprintf("-%dclients", clients)
	}
	return w
}

func (s SQLiteMeasurement) result(base func(string) result.Result) result.Result {
	r := base(SQLiteWorkload(s.Mode, len(s.Clients)))
	result.LabelSQLiteJournal.Set(r.Labels, s.Mode.Journal)
	result.LabelSQLiteSynchronous.Set(r.Labels, s.Mode.Synchronous)
	result.LabelSQLiteClients.Set(r.Labels, strconv.Itoa(len(s.Clients)))
	result.LabelAppClients.Set(r.Labels, strings.Join(s.Where, ", "))
	d := &result.Direction{}
	var flushes, commits int64
	counted := true
	for i, c := range s.Clients {
		d.IOPS += c.CommitsPerSec()
		d.TotalIOs += c.Commits
		d.Runtime = max(d.Runtime, c.Elapsed)
		// The slowest client's times stand for the mode: an app waits on
		// its own commits.
		if p, _ := c.Latency.At(99); i == 0 || p > worstP99(d.Completion) {
			d.Completion = c.Latency
		}
		commits += c.Commits
		if c.DiskDelta == nil || c.DiskDelta.Flushes < 0 {
			counted = false
		} else {
			flushes = max(flushes, c.DiskDelta.Flushes) // clients on one disk count the same flushes
		}
	}
	r.Write = d
	if counted && commits > 0 && len(s.Clients) == 1 {
		result.LabelFlushesPerCommit.Set(r.Labels, strconv.FormatFloat(float64(flushes)/float64(commits), 'f', 2, 64))
	}
	if s.Check != nil {
		integrity := s.Check.Integrity
		if lost := s.Lost(); lost > 0 {
			integrity += fmt.Sprintf("; %d committed rows missing", lost)
		}
		result.LabelSQLiteIntegrity.Set(r.Labels, integrity)
	}
	return r
}

func worstP99(l result.Latency) time.Duration {
	p, _ := l.At(99)
	return p
}
