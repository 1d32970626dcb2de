package storbench_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/storbench"
)

// Report is Compare with the verdicts the runs hold data for: here the
// general one on fio's JSON output of a 4 KiB random read.
func ExampleReport() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	rep, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{"../importer/testdata/fio-randread-4k-qd32.json"}, Target: "/mnt/nvme"})
	if err != nil {
		log.Fatal(err)
	}
	r, err := storbench.Report(ctx, st, storbench.ReportRequest{CompareRequest: storbench.CompareRequest{RunIDs: []string{rep.RunID}}})
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range r.Verdicts {
		fmt.Println(v.For, v.Status, len(v.Checks) > 0)
	}
	// Output:
	// general pass true
}

// Trend judges each target and workload's history: here ten nightly
// measurements imported with the times they were taken, all steady.
func ExampleTrend() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	if _, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{"../importer/testdata/backfill/history.json"}}); err != nil {
		log.Fatal(err)
	}
	tr, err := storbench.Trend(ctx, st, storbench.TrendRequest{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tr.Verdict, len(tr.Series))
	for _, s := range tr.Series {
		fmt.Println(s.Target, s.Workload, s.Metric, s.Runs, s.Verdict)
	}
	// Output:
	// ok 1
	// usb-ssd seq-read bw 10 ok
}

// Health reads the disk health records imported from smartctl: the latest
// of each target.
func ExampleHealth() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	for _, f := range []string{"testdata/smartctl-attributes-seagate.txt", "testdata/smartctl-seagate-failing.txt"} {
		if _, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{f}, Target: "nas:/dev/sdb"}); err != nil {
			log.Fatal(err)
		}
	}
	hs, err := storbench.Health(ctx, st, storbench.HealthRequest{})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hs {
		fmt.Println(h.Target, h.Healthy())
	}
	// Output:
	// nas:/dev/sdb false
}

// Qualify judges stored runs for a use: here two Ceph OSDs from their
// imported `ceph tell osd.N bench` figures.
func ExampleQualify() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	rep, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{"testdata/ceph-osd-bench-2osd.txt"}})
	if err != nil {
		log.Fatal(err)
	}
	q, err := storbench.Qualify(ctx, st, storbench.QualifyRequest{For: analysis.ForCephOSD, RunIDs: []string{rep.RunID}, Repeat: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(q.Verdict.For, q.Verdict.Status)
	for _, c := range q.Verdict.Checks {
		fmt.Printf("%s: %s %s, %s\n", c.Subject, c.Name, c.Display, c.Status)
	}
	// Output:
	// ceph-osd pass
	// osd.0: 4 MiB write throughput 2536 MB/s, pass
	// osd.1: 4 MiB write throughput 3079 MB/s, pass
}

// Export writes every stored run as Prometheus metrics.
func ExampleExport() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	if _, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{"../importer/testdata/fio-randread-4k-qd32.json"}, Target: "/mnt/nvme"}); err != nil {
		log.Fatal(err)
	}
	var out bytes.Buffer
	if err := storbench.Export(ctx, st, storbench.ExportRequest{Format: storbench.ExportPrometheus, Path: "-", Stdout: &out}); err != nil {
		log.Fatal(err)
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "storbench_iops{") {
			fmt.Println(sc.Text())
		}
	}
	// Output:
	// storbench_iops{hostname="",node="",round="isolated",storage_class="",suite="import",target="/mnt/nvme",workload="rand-read-4k-qd32"} 108870.12987
}

// CleanupLocal finds what killed runs left on this machine; a dry run
// removes nothing.
func ExampleCleanupLocal() {
	st, done := exampleStore()
	defer done()
	c, err := storbench.CleanupLocal(context.Background(), st, storbench.CleanupRequest{DryRun: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(c.Runs), "runs left things behind")
	// Output:
	// 0 runs left things behind
}

// ParseSince reads --since: a duration back from now, a date, or a time.
func ExampleParseSince() {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"36h", "2026-11-01", "2026-11-27T08:30:00Z"} {
		t, err := storbench.ParseSince(s, now, time.UTC)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(s, t.Format(time.RFC3339))
	}
	// Output:
	// 36h 2026-11-27T00:00:00Z
	// 2026-11-01 2026-11-01T00:00:00Z
	// 2026-11-27T08:30:00Z 2026-11-27T08:30:00Z
}
