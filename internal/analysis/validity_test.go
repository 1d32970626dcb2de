package analysis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// labelled adds labels to a figure.
func labelled(f result.Figures, kv ...any) result.Figures {
	l := map[string]string{}
	for k, v := range f.Labels {
		l[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		l[fmt.Sprint(kv[i])] = fmt.Sprint(kv[i+1])
	}
	f.Labels = l
	return f
}

func TestMarksFromResultLabels(t *testing.T) {
	figs := []result.Figures{
		labelled(fig("/a", "rand-read-4k-qd32", 1, map[string]float64{iops: 1000}), result.LabelSteadyState, "not_reached", result.LabelSteadyStateAfter, "5m0s",
			result.LabelCacheRisk, "may measure cache: span 1.0 GiB fits in 23.5 GiB RAM of lab"),
		labelled(fig("/a", "rand-read-4k-qd32", 2, map[string]float64{iops: 1010}), result.LabelSteadyState, "reached", result.LabelSteadyStateAfter, "41s"),
		labelled(fig("/a", "sustained-write", 1, map[string]float64{bw: 200e6}), result.LabelCliffAtBytes, "11600000000",
			result.LabelCliffBeforeBPS, "480000000", result.LabelCliffAfterBPS, "92000000", result.LabelPrecondition, "2x sequential, 1.0 GiB each"),
		labelled(fig("/b", "sustained-write", 1, map[string]float64{bw: 300e6}), result.LabelSustainedBPS, "300000000"),
		labelled(fig("/b", "rand-read-4k-qd32", 1, map[string]float64{iops: 900}), result.LabelSteadyState, "reached"),
	}
	c := mustCompare(t, figs, Options{})
	want := []string{
		"steady-state /a rand-read-4k-qd32: never reached steady state in 5m0s (1 of 2 runs)",
		"cache /a rand-read-4k-qd32: may measure cache: span 1.0 GiB fits in 23.5 GiB RAM of lab",
		"write-cliff /a sustained-write: 480 MB/s for the first 11.6 GB, then 92 MB/s",
		"preconditioned /a sustained-write: device preconditioned: 2x sequential, 1.0 GiB each",
	}
	var got []string
	for _, m := range c.Marks {
		got = append(got, m.Kind+" "+m.Target+" "+m.Workload+": "+m.Text)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("marks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cl, ok := c.CliffOf("/b", iso); !ok || cl.Found || cl.Text != "no cliff: 300 MB/s throughout" {
		t.Errorf("/b cliff %+v", cl)
	}
	for _, e := range c.Environments {
		for k := range e.Labels {
			if result.ResultLabel(k) {
				t.Errorf("environment of %s carries result label %s", e.Target, k)
			}
		}
	}
}

func TestNoMeasurableDifference(t *testing.T) {
	reps := func(target string, vals ...float64) []result.Figures {
		var out []result.Figures
		for i, v := range vals {
			out = append(out, fig(target, "rand-read-4k-qd32", i+1, map[string]float64{iops: v}))
		}
		return out
	}
	cases := []struct {
		name string
		a, b []float64
		same bool
	}{
		{"overlapping", []float64{1000, 1100, 900}, []float64{1050, 950, 1150}, true},
		{"far apart", []float64{1000, 1010, 990}, []float64{2000, 2020, 1980}, false},
		{"close but precise", []float64{1000, 1001, 999}, []float64{1030, 1031, 1029}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCompare(t, append(reps("/a", tc.a...), reps("/b", tc.b...)...), Options{})
			d, ok := c.IndistinctOf("/b", "/a", iso, "rand-read-4k-qd32", iops)
			if ok != tc.same {
				t.Fatalf("indistinct %v (%+v), want %v", ok, d, tc.same)
			}
			if ok && !(d.DiffPercent < d.UncertaintyPercent) {
				t.Errorf("%+v", d)
			}
		})
	}
	// A single run has no uncertainty to compare against.
	c := mustCompare(t, append(reps("/a", 1000), reps("/b", 1001)...), Options{})
	if len(c.Indistinct) != 0 {
		t.Errorf("single runs: %+v", c.Indistinct)
	}
}

func sanityRules(c *Comparison) []string {
	var out []string
	for _, s := range c.Sanity {
		out = append(out, s.Rule+" "+s.Who+" "+s.Workload)
	}
	return out
}

func TestSanityRulesConstructed(t *testing.T) {
	const p50, lmean = result.MetricLatP50, result.MetricLatMean
	local := func(f result.Figures) result.Figures {
		return labelled(f, "storage", "local", "fio_version", "fio-3.33")
	}
	nfs := func(f result.Figures) result.Figures { return labelled(f, "storage", "nfs", "fio_version", "fio-3.33") }
	cases := []struct {
		name string
		figs []result.Figures
		want []string
	}{
		{"reads below the local disk", []result.Figures{
			local(fig("/local", "rand-read-4k-qd1", 1, map[string]float64{p50: 90e3, lmean: 95e3})),
			nfs(fig("/nfs", "rand-read-4k-qd1", 1, map[string]float64{p50: 20e3, lmean: 25e3})),
		}, []string{"cache-answered nfs rand-read-4k-qd1"}},
		{"reads slower than the local disk", []result.Figures{
			local(fig("/local", "rand-read-4k-qd1", 1, map[string]float64{p50: 90e3})),
			nfs(fig("/nfs", "rand-read-4k-qd1", 1, map[string]float64{p50: 400e3})),
		}, nil},
		{"writes faster than the local disk", []result.Figures{
			local(fig("/local", "rand-write-4k-qd32", 1, map[string]float64{iops: 5000})),
			nfs(fig("/nfs", "rand-write-4k-qd32", 1, map[string]float64{iops: 40000})),
		}, []string{"early-ack nfs rand-write-4k-qd32"}},
		{"writes within the margin", []result.Figures{
			local(fig("/local", "rand-write-4k-qd32", 1, map[string]float64{iops: 5000})),
			nfs(fig("/nfs", "rand-write-4k-qd32", 1, map[string]float64{iops: 5200})),
		}, nil},
		{"busy CPU during a latency workload", []result.Figures{
			labelled(local(fig("/local", "rand-read-4k-qd1", 1, map[string]float64{p50: 90e3})), result.LabelCPUIdle, "25"),
			labelled(local(fig("/local", "rand-read-4k-qd32", 1, map[string]float64{iops: 9e4})), result.LabelCPUIdle, "10"),
			labelled(nfs(fig("/nfs", "rand-read-4k-qd1", 1, map[string]float64{p50: 95e3})), result.LabelCPUIdle, "70"),
		}, []string{"cpu-bound /local rand-read-4k-qd1"}},
		{"fio versions", []result.Figures{
			local(fig("/local", "seq-read", 1, map[string]float64{bw: 1e8})),
			labelled(nfs(fig("/nfs", "seq-read", 1, map[string]float64{bw: 1e8})), "fio_version", "fio-3.36"),
		}, []string{"fio-versions  "}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCompare(t, tc.figs, Options{Baseline: "storage=local"})
			if got := sanityRules(c); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("rules %q, want %q\n%+v", got, tc.want, c.Sanity)
			}
		})
	}
	// Without a baseline the baseline rules stay silent.
	c := mustCompare(t, cases[0].figs, Options{})
	if got := sanityRules(c); len(got) != 0 {
		t.Errorf("no baseline: %v", got)
	}
	if c := mustCompare(t, cases[2].figs, Options{Baseline: "storage=local"}); !strings.Contains(c.Sanity[0].Text, "700% faster than the local baseline (40k IOPS against 5000 IOPS)") {
		t.Errorf("text %q", c.Sanity[0].Text)
	}
}

func TestVerdictsUseTheCliff(t *testing.T) {
	cliffFig := func(target, after string) result.Figures {
		return labelled(fig(target, "sustained-write", 1, map[string]float64{bw: 200e6}), result.LabelCliffAtBytes, "11600000000",
			result.LabelCliffBeforeBPS, "480000000", result.LabelCliffAfterBPS, after)
	}
	figs := []result.Figures{cliffFig("/slow", "92000000"), cliffFig("/fast", "300000000")}
	v := judge(t, ForCephOSD, figs, VerdictOptions{})
	got := map[string]Status{}
	for _, ch := range v.Checks {
		if ch.Name == "sustained write" {
			got[ch.Subject] = ch.Status
			if ch.Subject == "/slow" && !strings.Contains(ch.Detail, "a backfill or recovery larger than 11.6 GB runs at 92 MB/s") {
				t.Errorf("detail %q", ch.Detail)
			}
		}
	}
	if got["/slow"] != Warn || got["/fast"] != Pass {
		t.Errorf("ceph sustained-write checks %v", got)
	}
	g := judge(t, ForGeneral, append(figs, fig("/slow", "seq-write", 1, map[string]float64{bw: 500e6}), fig("/fast", "seq-write", 1, map[string]float64{bw: 500e6})), VerdictOptions{})
	found := 0
	for _, ch := range g.Checks {
		if ch.Name == "sustained write" {
			found++
			if want := map[string]Status{"/slow": Warn, "/fast": Info}[ch.Subject]; ch.Status != want {
				t.Errorf("%s: %s, want %s", ch.Subject, ch.Status, want)
			}
		}
	}
	if found != 2 || g.Status != Warn {
		t.Errorf("general: %d cliff checks, status %s", found, g.Status)
	}
}
