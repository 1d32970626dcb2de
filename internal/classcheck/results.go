package classcheck

import (
	"fmt"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// TargetName names a class in stored results, as storbench run does
// without a node.
func TargetName(class string) string { return "k8s:" + class }

// DeclaredSummary is the declared facts as "key=value" pairs.
func (d Declared) Summary() string {
	p := []string{"provisioner=" + d.Provisioner, "binding=" + d.BindingMode, "reclaim=" + d.Reclaim,
		fmt.Sprintf("allowVolumeExpansion=%t", d.Expansion)}
	if d.CSIDriver != nil {
		p = append(p, fmt.Sprintf("attachRequired=%t", d.CSIDriver.AttachRequired), "fsGroupPolicy="+d.CSIDriver.FSGroupPolicy)
		with := 0
		for _, n := range d.Nodes {
			if n.Driver {
				with++
			}
		}
		p = append(p, fmt.Sprintf("nodesWithDriver=%d/%d", with, len(d.Nodes)))
	} else {
		p = append(p, "csiDriver=none")
	}
	switch {
	case !d.SnapshotAPI:
		p = append(p, "snapshotAPI=absent")
	case len(d.SnapshotClasses) == 0:
		p = append(p, "snapshotClasses=none")
	default:
		p = append(p, "snapshotClasses="+strings.Join(d.SnapshotClasses, ","))
	}
	return strings.Join(p, " ")
}

// Results turns a report into results of round result.RoundClass: one per
// check ("check:NAME", its time as a single latency sample) and one per
// timed stage ("NAME/STAGE", every sample, with p50 and, from
// MinClaimsForP95 samples, p95 and p99).
func (rep *Report) Results() []result.Result {
	var out []result.Result
	base := func(workload string) result.Result {
		l := map[string]string{}
		result.LabelStorageClass.Set(l, rep.Class)
		result.LabelProvisioner.Set(l, rep.Declared.Provisioner)
		result.LabelTargetKind.Set(l, "kubernetes")
		result.LabelProfile.Set(l, string(rep.Profile))
		result.LabelDeclared.Set(l, rep.Declared.Summary())
		return result.Result{RunID: rep.RunID, Target: TargetName(rep.Class), Round: result.RoundClass, Workload: workload,
			Labels: l, Status: result.StatusComplete, Started: rep.Started, Finished: rep.Finished, Method: "classcheck"}
	}
	for _, c := range rep.Checks {
		r := base("check:" + c.Name)
		result.LabelCheckOutcome.Set(r.Labels, string(c.Outcome))
		reason := c.Reason
		if c.Name == CheckCleanup && len(rep.Leaks) > 0 {
			reason += ": " + strings.Join(rep.Leaks, "; ")
		}
		result.LabelCheckReason.Set(r.Labels, reason)
		switch c.Outcome {
		case Works:
			r.Write = &result.Direction{Completion: latency([]time.Duration{c.Took})}
		case Failed:
			r.Status, r.Error = result.StatusFailed, reason
		}
		out = append(out, r)
		if c.Outcome != Works {
			continue
		}
		for _, s := range c.Stages {
			sr := base(c.Name + "/" + s.Name)
			sr.Write = &result.Direction{Completion: latency(s.Samples)}
			out = append(out, sr)
		}
	}
	return append(out, rep.Apps...)
}

// latency is samples as a latency distribution.
func latency(samples []time.Duration) result.Latency {
	l := result.Latency{Samples: int64(len(samples))}
	if len(samples) == 0 {
		return l
	}
	var sum time.Duration
	l.Min, l.Max = samples[0], samples[0]
	for _, s := range samples {
		sum += s
		l.Min, l.Max = min(l.Min, s), max(l.Max, s)
	}
	l.Mean = sum / time.Duration(len(samples))
	l.Percentiles = []result.Percentile{{P: 50, Value: percentile(samples, 0.5)}}
	if len(samples) >= MinClaimsForP95 {
		l.Percentiles = append(l.Percentiles, result.Percentile{P: 95, Value: percentile(samples, 0.95)},
			result.Percentile{P: 99, Value: percentile(samples, 0.99)})
	}
	return l
}
