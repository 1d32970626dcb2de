package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// A user's job file reaches the pod as a file, written by a bounded command
// (kwok's exec never closes stdin), and runs there as fio runs it: kbench's
// job, includes and all, with storbench's test file and size, in a work
// directory of storbench's own on the pod's volume, removed afterwards.
func TestRawJobRunsInThePod(t *testing.T) {
	testenv.Fio(t)
	if testing.Short() {
		t.Skip("runs kbench's quick IOPS job: 4 jobs of 6 s")
	}
	f := kubekittest.NewFake(t)
	tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{Timeout: 5 * time.Second})
	path := "../../fio/testdata/corpus/kbench/iops-quick.fio"
	jf, err := fio.ReadJobFile(path, fio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := (&engine.Engine{Store: st, Observer: engine.Silent{}}).Run(context.Background(), engine.Plan{
		RawJob: &engine.RawJob{Path: path, File: jf}, Targets: []runner.Target{tg},
	})
	if err != nil {
		t.Fatal(err)
	}
	results, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range results {
		names = append(names, r.Workload)
		if len(r.Directions()) == 0 {
			t.Errorf("%s did no I/O", r.Workload)
		}
	}
	if got := strings.Join(names, ","); got != "rand-read-iops,rand-write-iops,seq-read-iops,seq-write-iops" {
		t.Errorf("results %s", got)
	}
	var wrote, read bool
	for _, c := range f.Exec.Commands() {
		line := strings.Join(c, " ")
		if strings.Contains(line, "printf") && strings.Contains(line, "include") {
			t.Errorf("the job file reached the pod with its include lines: %s", line)
		}
		wrote = wrote || strings.Contains(line, "printf '%s'") && strings.Contains(line, engine.JobFileName)
		read = read || strings.Contains(line, "--showcmd "+engine.JobFileName)
	}
	if !wrote || !read {
		t.Errorf("job file written %v, fio's reading asked %v", wrote, read)
	}
	// Nothing of the run is left where the pod worked.
	var left []string
	filepath.Walk(f.Exec.Root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() || err == nil && strings.Contains(fi.Name(), "storbench-job") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("left in the pod: %v", left)
	}
}
