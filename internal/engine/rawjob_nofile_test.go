package engine

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/testenv"
)

// A job file whose jobs touch no file (fio's examples/cpuio.fio) runs
// exactly as fio runs it: storbench gives its jobs no file and no size.
func TestRawJobWithoutFilesGetsNoSize(t *testing.T) {
	testenv.Fio(t)
	path, err := filepath.Abs(filepath.Join("testdata", "cpuio.fio"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := runRaw(t, path, safety.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	own, ok := runFio(t, path)
	if !ok {
		t.Skip("fio cannot run cpuio jobs here")
	}
	if d := fio.Differences(own, got); len(d) > 0 {
		t.Errorf("differs from fio's own run:\n%s", strings.Join(d, "\n"))
	}
	for k := range got.GlobalOptions {
		if k == "size" || k == "filename" {
			t.Errorf("[global] got %s=%s", k, got.GlobalOptions[k])
		}
	}
	for _, j := range got.AllJobs() {
		for _, k := range []string{"size", "filename", "filesize"} {
			if v, ok := j.Options[k]; ok {
				t.Errorf("job %s got %s=%s, which fio runs without", j.Name, k, v)
			}
		}
	}
	if n := len(got.AllJobs()); n != 2 && n != 4 {
		t.Errorf("%d job reports", n)
	}
}
