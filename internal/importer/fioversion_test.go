package importer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// Every fio result carries the version of fio that measured it, whatever
// the output form, so compare can call out versions side by side.
func TestFioResultsCarryTheirFioVersion(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"fio-randread-4k-qd32.json", "fio-3.33"},
		{"fio-randread-minimal.terse", "fio-3.33"},
		{"fio-randrw-text.txt", "fio-3.33"},
		{"corpus/fioplot-fio218-randread-01.json", "fio-2.18-59-g618e"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(tc.file, data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Results) == 0 {
				t.Fatal("no results")
			}
			for _, r := range f.Results {
				if got := result.LabelFioVersion.Of(r.Labels); got != tc.want {
					t.Errorf("%s: fio_version %q, want %q", r.Workload, got, tc.want)
				}
			}
		})
	}
}
