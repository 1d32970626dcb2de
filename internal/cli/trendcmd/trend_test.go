package trendcmd_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/app"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/clitest"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/trend/trendtest"
)

// seed stores one run per generated point, each holding one result of
// the workload on the target.
func seed(t *testing.T, db, target, workload string, h trendtest.History, seedN uint64) {
	t.Helper()
	for i, p := range h.Series(seedN).Points {
		r := result.Result{Target: target, Workload: workload, Round: result.RoundIsolated, Repetition: 1,
			Status: result.StatusComplete, Started: p.Time, Finished: p.Time.Add(time.Minute),
			Labels: map[string]string{"storage": "hdd"},
			Write:  &result.Direction{IOPS: p.Value, BytesPerSec: p.Value * 4096, TotalIOs: int64(p.Value * 60)}}
		clitest.SeedResults(t, db, fmt.Sprintf("%s-%s-%03d", p.Time.Format("20060102"), target, i), []result.Result{r})
	}
}

func TestTrendExitCodes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	if inv := clitest.Run(t, app.Run, db, "trend"); inv.Code != cli.ExitOK || !strings.Contains(inv.Stdout, "Nothing to judge") {
		t.Fatalf("empty database: exit %d\n%s%s", inv.Code, inv.Stdout, inv.Stderr)
	}
	seed(t, db, "nvme0", "rand-write-4k-qd32", trendtest.History{Runs: 20, CV: 0.03}, 1)
	seed(t, db, "usb-ssd", "rand-write-4k-qd32", trendtest.History{Runs: 20, CV: 0.03, Step: -0.4, StepAt: 19}, 2)
	seed(t, db, "nas-disk-2", "rand-write-4k-qd32", trendtest.History{Runs: 20, CV: 0.03, Step: -0.41, StepAt: 14}, 3)

	for _, tc := range []struct {
		name string
		args []string
		code int
		out  []string
	}{
		{"steady", []string{"trend", "--target", "nvme0"}, cli.ExitOK, []string{"nvme0", " ok ", "1 series judged: 0 regressions, 0 warnings, 1 ok"}},
		{"warning", []string{"trend", "--target", "usb-ssd"}, cli.ExitWarn, []string{"WARNING rand-write-4k-qd32 on usb-ssd: 37% below", "only the latest run"}},
		{"regression", []string{"trend"}, cli.ExitVerdictFail, []string{"REGRESSION rand-write-4k-qd32 on nas-disk-2: 41% below its baseline of 14 runs since 2026-01-01; 6 runs since 2026-01-15"}},
		{"label", []string{"trend", "--label", "storage=hdd", "--workload", "rand-write-4k-qd32", "--output", "markdown"}, cli.ExitVerdictFail, []string{"| nas-disk-2 | rand-write-4k-qd32 | regression |"}},
		{"too little history since", []string{"trend", "--target", "nas-disk-2", "--since", "2026-01-17"}, cli.ExitOK, []string{"too little history to judge: 3 earlier run(s), at least 5 needed"}},
		{"min history", []string{"trend", "--target", "nvme0", "--min-history", "30"}, cli.ExitOK, []string{"too few runs"}},
		{"nothing matches", []string{"trend", "--target", "nas-disk-9"}, cli.ExitUsage, []string{"no complete results match --target nas-disk-9"}},
		{"bad since", []string{"trend", "--since", "last tuesday"}, cli.ExitUsage, []string{`--since "last tuesday"`}},
		{"bad label", []string{"trend", "--label", "storage"}, cli.ExitUsage, []string{"key=value"}},
		{"bad metric", []string{"trend", "--metric", "speed"}, cli.ExitUsage, []string{`--metric "speed"`}},
		{"bad output", []string{"trend", "--output", "html"}, cli.ExitUsage, []string{"--output"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := clitest.Run(t, app.Run, db, tc.args...)
			// Findings wrap at 80 columns: compare words, not lines.
			all := strings.Join(strings.Fields(inv.Stdout+inv.Stderr), " ")
			if inv.Code != tc.code {
				t.Errorf("exit %d, want %d\n%s", inv.Code, tc.code, all)
			}
			for _, want := range tc.out {
				if !strings.Contains(all, want) {
					t.Errorf("output lacks %q:\n%s", want, all)
				}
			}
		})
	}

	inv := clitest.Run(t, app.Run, db, "trend", "--output", "json")
	var rep struct {
		Verdict string `json:"verdict"`
		Series  []struct {
			Target   string  `json:"target"`
			Verdict  string  `json:"verdict"`
			Metric   string  `json:"metric"`
			Baseline float64 `json:"baseline"`
			Delta    float64 `json:"delta"`
			Band     float64 `json:"band"`
			Since    *struct {
				RunID string `json:"run_id"`
			} `json:"since"`
			Message string `json:"message"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(inv.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, inv.Stdout)
	}
	if inv.Code != cli.ExitVerdictFail || rep.Verdict != "regression" || len(rep.Series) != 3 {
		t.Fatalf("exit %d, %+v", inv.Code, rep)
	}
	worst := rep.Series[0]
	if worst.Target != "nas-disk-2" || worst.Metric != result.MetricIOPS || worst.Since == nil ||
		worst.Since.RunID != "20260115-nas-disk-2-014" || worst.Delta > -0.35 || worst.Band <= 0 {
		t.Errorf("worst series: %+v", worst)
	}
}
