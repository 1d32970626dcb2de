package analysis

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// ClassQualification is the newest qualification of one StorageClass:
// what the class declares and each check's measured answer.
type ClassQualification struct {
	Class    string       `json:"class"`
	RunID    string       `json:"run_id"`
	Profile  string       `json:"profile"`
	When     time.Time    `json:"when"`
	Declared string       `json:"declared"`
	Checks   []ClassCheck `json:"checks"`
}

// ClassCheck is one check's answer with its timed stages.
type ClassCheck struct {
	Name    string        `json:"name"`
	Outcome string        `json:"outcome"`
	Reason  string        `json:"reason,omitempty"`
	Took    time.Duration `json:"took_ns,omitempty"`
	Stages  []ClassStage  `json:"stages,omitempty"`
}

// Answer is the check as one phrase: "works (1.2s)", "not supported
// (declared: ...)", "failed (reason, after 3s)", "skipped (why)".
func (c ClassCheck) Answer() string {
	switch c.Outcome {
	case "works":
		s := fmt.Sprintf("works (%s)", c.Took.Round(time.Millisecond))
		if c.Reason != "" {
			s += ": " + c.Reason
		}
		return s
	case "failed":
		return fmt.Sprintf("failed (%s, after %s)", c.Reason, c.Took.Round(time.Millisecond))
	case "not supported (declared)", "not supported (measured)":
		return strings.TrimSuffix(c.Outcome, ")") + ": " + c.Reason + ")"
	}
	return c.Outcome + " (" + c.Reason + ")"
}

// ClassStage is one timed stage: its samples' p50, and p95 only from
// enough samples (HasP95).
type ClassStage struct {
	Name    string        `json:"name"`
	Samples int64         `json:"samples"`
	P50     time.Duration `json:"p50_ns"`
	P95     time.Duration `json:"p95_ns,omitempty"`
	HasP95  bool          `json:"has_p95"`
}

// Check returns the named check, or nil.
func (q *ClassQualification) Check(name string) *ClassCheck {
	for i := range q.Checks {
		if q.Checks[i].Name == name {
			return &q.Checks[i]
		}
	}
	return nil
}

// ClassQualifications groups results of round result.RoundClass by class
// and keeps each class's newest run, checks in the order they ran.
func ClassQualifications(results []result.Result) map[string]*ClassQualification {
	newest := map[string]string{}
	for _, r := range results {
		c := result.LabelStorageClass.Of(r.Labels)
		if r.Round == result.RoundClass && c != "" && r.RunID > newest[c] {
			newest[c] = r.RunID
		}
	}
	out := map[string]*ClassQualification{}
	stages := map[string][]ClassStage{} // class + "\x00" + check
	for _, r := range results {
		c := result.LabelStorageClass.Of(r.Labels)
		if r.Round != result.RoundClass || c == "" || r.RunID != newest[c] {
			continue
		}
		q := out[c]
		if q == nil {
			q = &ClassQualification{Class: c, RunID: r.RunID, Profile: result.LabelProfile.Of(r.Labels),
				When: r.Finished, Declared: result.LabelDeclared.Of(r.Labels)}
			out[c] = q
		}
		if name, ok := strings.CutPrefix(r.Workload, "check:"); ok {
			ch := ClassCheck{Name: name, Outcome: result.LabelCheckOutcome.Of(r.Labels), Reason: result.LabelCheckReason.Of(r.Labels)}
			if r.Write != nil {
				ch.Took = r.Write.Completion.Mean
			} else if r.Status == result.StatusFailed {
				ch.Took = r.Finished.Sub(r.Started)
			}
			q.Checks = append(q.Checks, ch)
			continue
		}
		check, stage, ok := strings.Cut(r.Workload, "/")
		if !ok || r.Write == nil {
			continue
		}
		s := ClassStage{Name: stage, Samples: r.Write.Completion.Samples}
		for _, p := range r.Write.Completion.Percentiles {
			switch p.P {
			case 50:
				s.P50 = p.Value
			case 95:
				s.P95, s.HasP95 = p.Value, true
			}
		}
		stages[c+"\x00"+check] = append(stages[c+"\x00"+check], s)
	}
	for c, q := range out {
		for i := range q.Checks {
			q.Checks[i].Stages = stages[c+"\x00"+q.Checks[i].Name]
		}
	}
	return out
}

// PickTwo is the homelab trade-off line for a class: provisioning (p95,
// or p50 with too few claims), failover (time, or node-pinned) and
// performance (the stored suite figures), each measured or "not measured".
func PickTwo(q *ClassQualification, perf []ClassFigure) string {
	prov, fail := "not measured", "not measured"
	if q != nil {
		if c := q.Check("provisioning"); c != nil {
			prov = c.Outcome
			for _, s := range c.Stages {
				if s.Name == "first-write" {
					if s.HasP95 {
						prov = fmt.Sprintf("p95 %s to a written volume", s.P95.Round(10*time.Millisecond))
					} else {
						prov = fmt.Sprintf("p50 %s to a written volume (%d claims, too few for a p95)", s.P50.Round(10*time.Millisecond), s.Samples)
					}
				}
			}
		}
		if c := q.Check("failover"); c != nil {
			switch {
			case c.Outcome == "works":
				fail = fmt.Sprintf("%s (graceful)", c.Took.Round(100*time.Millisecond))
			case strings.HasPrefix(c.Reason, "node-pinned"):
				fail = "node-pinned"
			default:
				fail = c.Outcome
			}
		}
		if c := q.Check("node-failure"); c != nil && c.Outcome == "works" {
			fail += fmt.Sprintf(", %s after a node failure", c.Took.Round(100*time.Millisecond))
		}
	}
	speed := "not measured"
	if len(perf) > 0 {
		best := perf[0]
		for _, f := range perf {
			if f.IOPS > best.IOPS {
				best = f
			}
		}
		speed = fmt.Sprintf("%s %s IOPS, %s", best.Workload, units.IOPS(best.IOPS), units.MBps(best.BytesPerSec))
	}
	return fmt.Sprintf("provisioning: %s · failover: %s · performance: %s", prov, fail, speed)
}

// SortedClassNames returns the map's classes in name order.
func SortedClassNames(m map[string]*ClassQualification) []string {
	var out []string
	for c := range m {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// ClassQualificationDocument is what storbench classes --measure prints
// with --output json: the stored view and the pick-two line.
type ClassQualificationDocument struct {
	Qualification *ClassQualification `json:"qualification"`
	PickTwo       string              `json:"pick_two"`
	Leaks         []string            `json:"leaks"`
	Notes         []string            `json:"notes,omitempty"`
}
