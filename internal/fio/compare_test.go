package fio

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"
)

// fio 3.33 never stops this example's jobs at their runtime, and its jobs
// run in sessions of their own: RunBare must still leave nothing running.
func TestRunBareLeavesNothingRunning(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	text, err := os.ReadFile("testdata/corpus/fio-examples/fixed-rate-submission.fio")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	job := filepath.Join(dir, "job.fio")
	if err := os.WriteFile(job, Shorten(text, "300ms", "16m"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := RunBare(ctx, dir, job); err == nil {
		t.Log("fio finished in time here")
	}
	time.Sleep(200 * time.Millisecond)
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		comm, _ := os.ReadFile(p + "/comm")
		cwd, _ := os.Readlink(p + "/cwd")
		if strings.TrimSpace(string(comm)) == "fio" && cwd == dir {
			t.Errorf("fio %s still runs in the test's directory", filepath.Base(p))
		}
	}
}
