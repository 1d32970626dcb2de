package storbench_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

// exampleStore is a new database in a temporary directory, removed by the
// returned function.
func exampleStore() (store.Store, func()) {
	dir, err := os.MkdirTemp("", "storbench-example-")
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, "results.db"))
	if err != nil {
		log.Fatal(err)
	}
	return st, func() { st.Close(); os.RemoveAll(dir) }
}

// Suites lists the built-in suites; Suite shows one with the fio job it
// runs.
func ExampleSuites() {
	suites, err := storbench.Suites()
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range suites[:2] {
		fmt.Printf("%s: %d workloads, %d MiB file, %gs\n", s.Name, len(s.Workloads), s.LargestFileBytes>>20, s.EstimatedSeconds)
	}
	quick, err := storbench.Suite("quick")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(quick.Workloads[0].Name, len(quick.FioArgs) > 0)
	// Output:
	// quick: 4 workloads, 64 MiB file, 12s
	// standard: 6 workloads, 1024 MiB file, 72s
	// seq-read true
}

// Import reads another tool's output (here fio's normal text output from a
// Raspberry Pi) and stores its results as one run.
func ExampleImport() {
	st, done := exampleStore()
	defer done()
	rep, err := storbench.Import(context.Background(), st, storbench.ImportRequest{
		Files:  []string{"testdata/fio-text-pi4-usb-sata.txt"},
		Target: "/mnt/usb-ssd",
	})
	if err != nil {
		log.Fatal(err)
	}
	f := rep.Files[0]
	fmt.Printf("%s: %v, %s, %d result\n", f.File, f.Formats, f.Tool, f.Results)
	// Output:
	// testdata/fio-text-pi4-usb-sata.txt: [fio-text], fio, 1 result
}

// Runs lists the stored runs, newest first; Show gives one with its
// results.
func ExampleShow() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	if _, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{"testdata/fio-text-pi4-usb-sata.txt"}, Target: "/mnt/usb-ssd"}); err != nil {
		log.Fatal(err)
	}
	runs, err := storbench.Runs(ctx, st, storbench.RunsRequest{})
	if err != nil {
		log.Fatal(err)
	}
	detail, err := storbench.Show(ctx, st, storbench.ShowRequest{RunID: runs[0].ID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(runs), detail.Run.Status)
	for _, r := range detail.Results {
		fmt.Println(r.Target, r.Workload)
	}
	// Output:
	// 1 complete
	// /mnt/usb-ssd iops
}

// Compare lines up the results of stored runs: a section per round and
// workload, a row per target.
func ExampleCompare() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	var ids []string
	for _, file := range []string{"testdata/fio-text-pi4-usb-sata.txt", "../importer/testdata/fio-randread-4k-qd32.json"} {
		rep, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{file}, Target: "/mnt/" + filepath.Base(file)})
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, rep.RunID)
	}
	cmp, err := storbench.Compare(ctx, st, storbench.CompareRequest{RunIDs: ids})
	if err != nil {
		log.Fatal(err)
	}
	for _, sec := range cmp.View.Sections {
		fmt.Printf("%s %s (%s): %d targets\n", sec.Round, sec.Workload, sec.Primary, len(sec.Rows))
	}
	// Output:
	// isolated iops (iops): 1 targets
	// isolated rand-read-4k-qd32 (iops): 1 targets
}

// Run runs a suite on a directory (here one workload of the quick suite in
// a temporary directory) and stores every result as it is measured. It
// needs fio on the PATH.
func ExampleRun() {
	st, done := exampleStore()
	defer done()
	dir, err := os.MkdirTemp("", "storbench-example-target-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	req := storbench.DefaultRunRequest()
	req.Suite, req.Workloads, req.Targets, req.Telemetry = "quick", []string{"seq-read"}, []string{dir}, false
	run, err := storbench.Run(context.Background(), st, req, nil)
	if err != nil {
		log.Fatal(err)
	}
	out, err := storbench.LoadRunOutcome(context.Background(), st, run)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range out.Results {
		fmt.Println(r.Workload, r.Status, r.Read.IOPS > 0)
	}
	left, _ := os.ReadDir(dir)
	fmt.Println(out.Run.Status, len(left), "files left")
	// Output:
	// seq-read complete true
	// complete 0 files left
}
