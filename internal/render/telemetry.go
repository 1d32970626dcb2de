package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// limitedBy is the LIMITED BY cell: the class on a result's first row.
func limitedBy(r result.Result, row int) string {
	if r.Bottleneck == nil || row > 0 {
		return "-"
	}
	return r.Bottleneck.LimitedBy
}

// Bottlenecks writes, per result, what limited it and the evidence, then
// the telemetry sources the sampled hosts lacked, each named once.
func Bottlenecks(w io.Writer, results []result.Result) error {
	var lines []string
	missing := map[string]bool{}
	targets := map[string]bool{}
	for _, r := range results {
		if r.Bottleneck != nil {
			targets[r.Target] = true
		}
	}
	for _, r := range results {
		if r.Bottleneck != nil {
			name := r.Workload
			if len(targets) > 1 {
				name += " on " + targetWords(r)
			}
			if r.Repetition > 1 {
				name += fmt.Sprintf(" (rep %d)", r.Repetition)
			}
			lines = append(lines, fmt.Sprintf("  %s: limited by %s: %s", Terminal(name), Terminal(r.Bottleneck.LimitedBy), Terminal(r.Bottleneck.Evidence)))
		}
		if r.Telemetry != nil {
			for _, m := range r.Telemetry.Missing {
				missing[m] = true
			}
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "\nWhat limited each result (host telemetry sampled once a second):")
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
	if len(missing) > 0 {
		var m []string
		for k := range missing {
			m = append(m, k)
		}
		sort.Strings(m)
		fmt.Fprintln(w, "Telemetry sources not available, skipped:")
		for _, k := range m {
			fmt.Fprintln(w, "  "+Terminal(k))
		}
	}
	telemetrySources(w, results)
	otherNodes(w, results)
	return nil
}

// targetWords names the target a result ran on, for a list of several:
// its node and StorageClass when it has them, else the target itself.
func targetWords(r result.Result) string {
	var w []string
	if n := result.LabelNode.Of(r.Labels); n != "" {
		w = append(w, "node "+n)
	}
	if c := result.LabelStorageClass.Of(r.Labels); c != "" {
		w = append(w, "class "+c)
	}
	if len(w) == 0 {
		return r.Target
	}
	return strings.Join(w, ", ")
}

// telemetrySources writes where each group of series was read, when a
// runner read the host more than one way (a sampler pod, the kubelet's
// Summary API), each "group: source" once.
func telemetrySources(w io.Writer, results []result.Result) {
	seen := map[string]bool{}
	var lines []string
	for _, r := range results {
		if r.Telemetry == nil {
			continue
		}
		for _, t := range append([]*result.Telemetry{r.Telemetry}, r.Telemetry.Nodes...) {
			for group, src := range t.Sources {
				line := group + ": " + src
				if t != r.Telemetry && t.Host != "" {
					line = t.Host + " " + line
				}
				if !seen[line] {
					seen[line] = true
					lines = append(lines, line)
				}
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	sort.Strings(lines)
	fmt.Fprintln(w, "Telemetry read from:")
	for _, l := range lines {
		fmt.Fprintln(w, "  "+Terminal(l))
	}
}

// otherNodes writes, per result, what the run's other nodes (replica and
// server nodes) did meanwhile: CPU busy, disk written, network in and out,
// each a mean over the workload; a series the node lacked is left out.
func otherNodes(w io.Writer, results []result.Result) {
	var lines []string
	for _, r := range results {
		if r.Telemetry == nil {
			continue
		}
		for _, n := range r.Telemetry.Nodes {
			if n == nil {
				continue
			}
			var parts []string
			if m, ok := n.Summary[result.SeriesCPUBusy]; ok && m.Samples > 0 {
				parts = append(parts, fmt.Sprintf("CPU %.0f%% busy", m.Mean))
			}
			if m, ok := n.Summary[result.SeriesDiskUtil]; ok && m.Samples > 0 && n.Device != "" {
				parts = append(parts, fmt.Sprintf("disk %s %.0f%% busy", Terminal(n.Device), m.Mean))
			}
			for _, s := range []struct{ series, what string }{
				{result.SeriesDiskWriteBPS, "disk write"}, {result.SeriesDiskReadBPS, "disk read"},
				{result.SeriesNetRxBPS, "network in"}, {result.SeriesNetTxBPS, "network out"},
			} {
				if m, ok := n.Summary[s.series]; ok && m.Samples > 0 {
					parts = append(parts, s.what+" "+units.MBps(m.Mean))
				}
			}
			if len(parts) == 0 {
				parts = []string{"nothing readable"}
			}
			lines = append(lines, fmt.Sprintf("  %s on %s: %s", Terminal(r.Workload), Terminal(n.Host), strings.Join(parts, ", ")))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "The run's other nodes meanwhile (means over each workload):")
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
}

// ContentionSection writes the contention round's comparison, probe alone
// against probe under the bulk writer (internal/contention pairs them), and
// the verdicts; nothing when there is no contention round.
func ContentionSection(w io.Writer, reps []analysis.ContentionReport) error {
	if len(reps) == 0 {
		return nil
	}
	multi := false
	for _, r := range reps {
		if r.Target != reps[0].Target {
			multi = true
		}
	}
	g := &grid{left: 3}
	head := []string{"PROBE", "REP", "LATENCY", "P50 ALONE", "LOADED", "P99 ALONE", "LOADED", "P99.9 ALONE", "LOADED", "SLOWDOWN", "NOISE MB/s", "> 1 s"}
	if multi {
		head = append([]string{"TARGET"}, head...)
		g.left++
	}
	g.add(head...)
	for _, r := range reps {
		noise := "-"
		if r.NoiseBytesPerSec > 0 {
			noise = fmt.Sprintf("%.1f", r.NoiseBytesPerSec/1e6)
		}
		row := []string{r.Probe, fmt.Sprint(r.Repetition), r.Latency,
			units.Latency(r.Alone.P50), units.Latency(r.Loaded.P50),
			units.Latency(r.Alone.P99), units.Latency(r.Loaded.P99),
			units.Latency(r.Alone.P999), units.Latency(r.Loaded.P999),
			fmt.Sprintf("%.1fx", r.Slowdown), noise, timeoutCell(r)}
		if multi {
			row = append([]string{r.Target}, row...)
		}
		g.add(row...)
	}
	fmt.Fprintln(w, "\nContention round: the probe alone, then beside a bulk sequential writer (1 MiB, QD16)")
	if err := g.write(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "SLOWDOWN = p99 under load / p99 alone; > 1 s = estimated share of probe operations over a 1 s timeout under load.")
	for _, r := range reps {
		who := r.Probe
		if multi {
			who = r.Target + " " + who
		}
		fmt.Fprintf(w, "%s: %s.\n", Terminal(who), Terminal(r.Verdict))
	}
	return nil
}

func timeoutCell(r analysis.ContentionReport) string {
	switch r.TimeoutBound {
	case "":
		return "?"
	case "less than":
		return fmt.Sprintf("<%.2g%%", r.TimeoutPercent)
	case "more than":
		return fmt.Sprintf(">%.2g%%", r.TimeoutPercent)
	}
	if r.TimeoutPercent == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.2g%%", r.TimeoutPercent)
}
