package fio

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/golden"
	"github.com/storbench/storbench/internal/testenv"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/spec"
)

// Every built-in suite's job file is pinned by a golden file, and fio itself
// must accept it (--parse-only) where fio is installed.
func TestBuiltinSuiteJobsGolden(t *testing.T) {
	for _, name := range spec.BuiltinNames {
		t.Run(name, func(t *testing.T) {
			s, err := spec.Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			job := FromSuite(s, File{Name: "storbench-test.dat"}, "")
			got := job.String()
			golden.Compare(t, filepath.Join("testdata", "jobs", name+".fio"), []byte(got))
			for _, must := range []string{"randrepeat=0", "refill_buffers=1", "stonewall", "lat_percentiles=1"} {
				if !strings.Contains(got, must) {
					t.Errorf("job lacks %s", must)
				}
			}
			if strings.Contains(got, "gtod_reduce") {
				t.Error("job uses gtod_reduce")
			}
			fioAccepts(t, got)
		})
	}
}

func fioAccepts(t *testing.T, job string) {
	t.Helper()
	if testing.Short() {
		t.Log("the unit tier (-short) leaves fio --parse-only to the host tier")
		return
	}
	if _, err := exec.LookPath("fio"); err != nil {
		t.Log("fio not installed: skipping fio --parse-only")
		return
	}
	f := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(f, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("fio", "--parse-only", f).CombinedOutput()
	if err != nil {
		t.Fatalf("fio --parse-only rejects the job: %v\n%s", err, out)
	}
}

func TestEveryWorkloadIsDirectUnlessBuffered(t *testing.T) {
	buffered := map[string]bool{"etcd-fdatasync": true, "seq-write-dd": true}
	for _, name := range spec.BuiltinNames {
		s, _ := spec.Builtin(name)
		for _, w := range s.Workloads {
			if *w.Direct == buffered[w.Name] {
				t.Errorf("%s/%s: direct=%v", name, w.Name, *w.Direct)
			}
		}
	}
}

// The command-line form of a job and fio's own rendering of the job file
// must mean the same: fio --showcmd turns a job file into arguments.
func TestJobFileAndArgsAgree(t *testing.T) {
	testenv.Fio(t)
	s, _ := spec.Builtin("standard")
	job := FromSuite(s, File{Name: "x.dat"}, "")
	f := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(f, []byte(job.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("fio", "--showcmd", f).Output()
	if err != nil {
		t.Fatal(err)
	}
	// fio prints global options first, then each job's, in its own order:
	// compare option sets per section.
	if got, want := sectionSets(strings.Fields(strings.TrimPrefix(strings.TrimSpace(string(out)), "fio "))), sectionSets(job.Args()); !reflect.DeepEqual(got, want) {
		t.Errorf("fio --showcmd:\n%v\nours:\n%v", got, want)
	}
	// storbench reads its own job file as fio does: the same sections and
	// options, line for line.
	parsed, err := ParseJobText([]byte(job.String()), "job.fio", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := ParseShowcmd(string(out), parsed)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Jobs) != len(job.Sections) {
		t.Errorf("fio reads %d jobs, the job has %d", len(rd.Jobs), len(job.Sections))
	}
}

func TestRunReportsFioFailureInItsOwnWords(t *testing.T) {
	testenv.Fio(t)
	fr := Runner{Cmder: execx.Local{}, Dir: t.TempDir()}
	job := Job{Sections: []Section{{Name: "bad", Options: []Option{{"rw", "read"}, {"size", "1M"}, {"filename", "f"}, {"ioengine", "storbench-no-such-engine"}}}}}
	_, err := fr.Run(context.Background(), job, nil)
	if err == nil {
		t.Fatal("fio with a missing engine succeeded")
	}
	var fe *Error
	if !errorsAs(err, &fe) || !strings.Contains(err.Error(), "storbench-no-such-engine") {
		t.Fatalf("error %T %v does not carry fio's message", err, err)
	}
}

func TestRunMissingFio(t *testing.T) {
	fr := Runner{Cmder: execx.Local{}, Binary: "/nonexistent/fio"}
	_, err := fr.Version(context.Background())
	var me *MissingError
	if !errorsAs(err, &me) || !strings.Contains(err.Error(), "apt-get install fio") {
		t.Fatalf("error %v does not say how to install fio", err)
	}
}

func sectionSets(args []string) []map[string]bool {
	sets := []map[string]bool{{}}
	for _, a := range args {
		if strings.HasPrefix(a, "--name=") {
			sets = append(sets, map[string]bool{})
		}
		sets[len(sets)-1][a] = true
	}
	return sets
}
