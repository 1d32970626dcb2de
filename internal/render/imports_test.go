package render

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/importer"
	"github.com/storbench/storbench/internal/result"
)

// parsed reads a real sample the way an import does and describes it as
// the import report does.
func parsed(t *testing.T, name string, cut bool) (*importer.File, result.ImportedFileReport) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../importer/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if cut {
		data = data[:len(data)/2]
	}
	f, err := importer.Parse(filepath.Base(name), data, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f, result.ImportedFileReport{File: f.Name, SHA256: f.SHA256, Formats: importer.Names(f.Formats), Tool: f.Tool, ToolVersion: f.ToolVersion,
		Results: len(f.Results), Health: len(f.Health), Rows: f.Rows, Skipped: f.Skipped, Notes: f.Notes, Problems: f.Problems,
		Cut: f.Cut(), Refused: f.Refused()}
}

func importReport(t *testing.T, dryRun bool, names ...string) *result.ImportReport {
	t.Helper()
	rep := &result.ImportReport{DryRun: dryRun, Duplicates: []result.ImportedFile{}}
	for _, name := range names {
		f, fr := parsed(t, name, name == "corpus/shared-vpscomp-fio2210-5runs-randread.log")
		rep.Files = append(rep.Files, fr)
		rep.Results += len(f.Results)
		rep.Health = append(rep.Health, f.Health...)
		if dryRun {
			rep.Preview = append(rep.Preview, f.Results...)
		}
	}
	return rep
}

func TestImportText(t *testing.T) {
	imported := time.Date(2026, 11, 22, 14, 23, 0, 0, time.Local)
	stored := importReport(t, false, "fio-text-pi4-usb-sata.txt", "smartctl-attributes-seagate.txt", "hdparm-dd-outputs.txt",
		"iozone-messy.txt", "corpus/shared-vpscomp-fio2210-5runs-randread.log")
	stored.RunID = "20261122-142305-3fa9"
	stored.SameTwice = []string{"copy.txt has the same content as hdparm-dd-outputs.txt"}
	stored.Duplicates = []result.ImportedFile{{SHA256: "4be9b23d2107ac05c44393189f8dda3efe8bc36bbd7d0d47a0fb2a0d977c1dd0",
		RunID: "20261121-090000-0001", File: "old/smartctl.txt", Imported: imported}}
	nothingNew := &result.ImportReport{Duplicates: stored.Duplicates}
	for _, tc := range []struct {
		golden string
		rep    *result.ImportReport
	}{
		{"import-stored.txt", stored},
		{"import-dry-run.txt", importReport(t, true, "results.csv", "smartctl-seagate-failing.txt", "fio-status-interval.json")},
		{"import-nothing-new.txt", nothingNew},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := Formatted(&out, "table", tc.rep, ImportText); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, out.Bytes())
		})
	}
}
