package storbench_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/testenv"
)

func TestSuites(t *testing.T) {
	suites, err := storbench.Suites()
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) != len(spec.BuiltinNames) || len(suites) == 0 {
		t.Fatalf("%d suites, want %d", len(suites), len(spec.BuiltinNames))
	}
	for i, s := range suites {
		if s.Name != spec.BuiltinNames[i] || s.EstimatedSeconds != s.Duration().Seconds() || s.FioJob != "" {
			t.Errorf("suite %d: %s, %v s, job %q", i, s.Name, s.EstimatedSeconds, s.FioJob)
		}
	}
}

// The job Suite shows is one fio itself accepts.
func TestSuiteJobParses(t *testing.T) {
	fio := testenv.Fio(t)
	file := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(file, []byte("name: mine\ndescription: one workload\nworkloads:\n  - name: rr\n    rw: randread\n    bs: 4KiB\n    size: 16MiB\n    runtime: 2s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ref := range append(append([]string{}, spec.BuiltinNames...), file) {
		t.Run(filepath.Base(ref), func(t *testing.T) {
			s, err := storbench.Suite(ref)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(s.FioJob, "TARGET/storbench-RUNID/storbench-test.dat") || len(s.FioArgs) == 0 || s.EstimatedSeconds != s.Duration().Seconds() {
				t.Fatalf("suite %s: args %v, job:\n%s", s.Name, s.FioArgs, s.FioJob)
			}
			for _, w := range s.Workloads {
				if !strings.Contains(s.FioJob, "["+w.Name+"]") {
					t.Errorf("job lacks workload %s", w.Name)
				}
			}
			job := filepath.Join(t.TempDir(), "suite.fio")
			if err := os.WriteFile(job, []byte(s.FioJob), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.CommandContext(context.Background(), fio, "--parse-only", job).CombinedOutput(); err != nil {
				t.Errorf("fio --parse-only: %v\n%s", err, out)
			}
		})
	}
	_, err := storbench.Suite("no-such-suite")
	var ie *storbench.RequestError
	if !errors.As(err, &ie) {
		t.Errorf("unknown suite: %v (%T), want an RequestError", err, err)
	}
}
