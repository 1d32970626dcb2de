package storbench_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/importer"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/units"
)

// openDB opens a real SQLite file in a temporary directory.
func openDB(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func sample(name string) string { return filepath.Join("testdata", name) }

func importFiles(t *testing.T, st store.Store, req storbench.ImportRequest, files ...string) *result.ImportReport {
	t.Helper()
	req.Files = files
	rep, err := storbench.Import(context.Background(), st, req)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestImportStoresOneRunWithProvenance(t *testing.T) {
	ctx := context.Background()
	st := openDB(t)
	labels := map[string]string{"storage": "usb-sata"} // a user's own label
	result.LabelNode.Set(labels, "pi4-1")
	rep := importFiles(t, st, storbench.ImportRequest{Labels: labels},
		sample("fio-text-pi4-usb-sata.txt"), sample("smartctl-attributes-seagate.txt"), sample("hdparm-dd-outputs.txt"))
	if rep.RunID == "" || rep.DryRun || rep.Results != 6 || len(rep.Files) != 3 || len(rep.Health) != 1 || len(rep.Duplicates) != 0 {
		t.Fatalf("report %+v", rep)
	}
	if err := storbench.ImportIncomplete(rep); err != nil {
		t.Errorf("complete files reported as incomplete: %v", err)
	}
	run, err := st.Run(ctx, rep.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Suite != "import" || run.Source != "fio-text,smartctl,hdparm,dd" || result.LabelNode.Of(run.Labels) != "pi4-1" ||
		!strings.HasPrefix(run.Note, "imported from fio-text-pi4-usb-sata.txt (fio-text") {
		t.Errorf("run %+v", run)
	}
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil || len(results) != 6 {
		t.Fatalf("%d results stored: %v", len(results), err)
	}
	for _, r := range results {
		if result.LabelNode.Of(r.Labels) != "pi4-1" || r.Labels["storage"] != "usb-sata" || result.LabelSource.Of(r.Labels) == "" {
			t.Errorf("result %s labels %v", r.Workload, r.Labels)
		}
	}
	files, err := st.RunImports(ctx, run.ID)
	formats := map[string]string{}
	for _, f := range files {
		formats[filepath.Base(f.File)] = f.Format + " " + f.SHA256[:12]
	}
	if err != nil || len(files) != 3 || formats["fio-text-pi4-usb-sata.txt"] != "fio-text "+rep.Files[0].SHA256[:12] ||
		!strings.HasPrefix(formats["smartctl-attributes-seagate.txt"], "smartctl ") || !strings.HasPrefix(formats["hdparm-dd-outputs.txt"], "hdparm+dd ") {
		t.Errorf("provenance %+v %v", files, err)
	}
	hs, err := st.Health(ctx, store.HealthFilter{RunIDs: []string{run.ID}})
	if err != nil || len(hs) != 1 {
		t.Errorf("health %+v %v", hs, err)
	}

	// Again, with a new file: only the new one is imported; a file named
	// twice in one request is read once.
	rep2 := importFiles(t, st, storbench.ImportRequest{}, sample("fio-text-pi4-usb-sata.txt"), sample("ceph-osd-bench-2osd.txt"), sample("ceph-osd-bench-2osd.txt"))
	if rep2.RunID == "" || rep2.RunID == rep.RunID || rep2.Results != 2 || len(rep2.Files) != 1 ||
		len(rep2.Duplicates) != 1 || rep2.Duplicates[0].RunID != rep.RunID || len(rep2.SameTwice) != 1 {
		t.Errorf("second import %+v", rep2)
	}
	// Nothing new: no run.
	rep3 := importFiles(t, st, storbench.ImportRequest{}, sample("ceph-osd-bench-2osd.txt"))
	if rep3.RunID != "" || len(rep3.Files) != 0 || len(rep3.Duplicates) != 1 {
		t.Errorf("third import %+v", rep3)
	}
	if runs, _ := st.Runs(ctx, store.RunFilter{}); len(runs) != 2 {
		t.Errorf("%d runs stored, want 2", len(runs))
	}
}

func TestImportDryRunStoresNothing(t *testing.T) {
	ctx := context.Background()
	// A dry run without a database creates none.
	db := filepath.Join(t.TempDir(), "results.db")
	lazy := store.NewLazy(db)
	defer lazy.Close()
	rep := importFiles(t, lazy, storbench.ImportRequest{DryRun: true, Target: "nas"}, sample("results.csv"), sample("smartctl-seagate-failing.txt"))
	if !rep.DryRun || rep.RunID != "" || rep.Results != 6 || len(rep.Preview) != 6 || len(rep.Health) != 1 || rep.Preview[0].Target != "nas" {
		t.Fatalf("dry run %+v", rep)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("dry run created the database: %v", err)
	}
	// A nil store does for a dry run, not for an import.
	if _, err := storbench.Import(ctx, nil, storbench.ImportRequest{DryRun: true, MaxSize: 1 << 20, Files: []string{sample("results.csv")}}); err != nil {
		t.Errorf("dry run without a store: %v", err)
	}
	if _, err := storbench.Import(ctx, nil, storbench.ImportRequest{MaxSize: 1 << 20, Files: []string{sample("results.csv")}}); err == nil {
		t.Error("an import without a store did not fail")
	}
	// With a database, a dry run finds duplicates and stores nothing.
	st := openDB(t)
	importFiles(t, st, storbench.ImportRequest{}, sample("results.csv"))
	rep = importFiles(t, st, storbench.ImportRequest{DryRun: true}, sample("results.csv"), sample("iozone-nfs-hdd.txt"))
	if len(rep.Duplicates) != 1 || len(rep.Files) != 1 || rep.Files[0].Formats[0] != string(importer.Iozone) {
		t.Errorf("dry run with a database %+v", rep)
	}
	if runs, _ := st.Runs(ctx, store.RunFilter{}); len(runs) != 1 {
		t.Errorf("%d runs stored, want 1", len(runs))
	}
}

func TestImportStdin(t *testing.T) {
	st := openDB(t)
	csv, err := os.Open(sample("results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer csv.Close()
	rep := importFiles(t, st, storbench.ImportRequest{Stdin: csv, Target: "pi4-9"}, "-")
	run, err := st.Run(context.Background(), rep.RunID)
	if err != nil || rep.Results != 6 || rep.Files[0].File != "-" || len(run.Targets) != 1 || run.Targets[0] != "pi4-9" {
		t.Errorf("stdin import %+v, run %+v, %v", rep, run, err)
	}
}

// Bad input is an *RequestError naming what and where, and nothing is stored.
func TestImportRefusesBadInputWhole(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("target,labels,round,workload,metric,value,unit\npi,,,seq-read,bw,12,MB/s\npi,,,seq-read,bw,twelve,MB/s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		req   storbench.ImportRequest
		files []string
		want  string
	}{
		{"malformed row", storbench.ImportRequest{}, []string{sample("ceph-osd-bench-2osd.txt"), bad}, "bad.csv:3:18"},
		{"missing file", storbench.ImportRequest{}, []string{filepath.Join(dir, "missing.txt")}, "missing.txt: no such file"},
		{"directory", storbench.ImportRequest{}, []string{dir}, "is not a regular file (a directory)"},
		{"device", storbench.ImportRequest{}, []string{"/dev/zero"}, "is not a regular file (a character device)"},
		{"too large", storbench.ImportRequest{MaxSize: 1024}, []string{sample("fio-text-pi4-usb-sata.txt")}, "larger than MaxSize 1.0 KiB"},
		{"stdin too large", storbench.ImportRequest{MaxSize: 1024, Stdin: strings.NewReader(strings.Repeat("x", 2048))}, []string{"-"}, "standard input is larger than MaxSize"},
		{"wrong format", storbench.ImportRequest{Format: importer.CSV}, []string{sample("ceph-osd-bench-2osd.txt")}, "ceph-osd-bench-2osd.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openDB(t)
			req := tc.req
			if req.MaxSize == 0 {
				req.MaxSize = 1 << 20
			}
			req.Files = tc.files
			rep, err := storbench.Import(context.Background(), st, req)
			var ie *storbench.RequestError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || rep != nil {
				t.Fatalf("got %v (%T), want an RequestError saying %q", err, err, tc.want)
			}
			if runs, _ := st.Runs(context.Background(), store.RunFilter{}); len(runs) != 0 {
				t.Errorf("%d runs stored after a refused import", len(runs))
			}
		})
	}
}

// A cut file: what is complete is stored, and ImportIncomplete says so.
func TestImportCutFile(t *testing.T) {
	data, err := os.ReadFile(sample("vpscomp-fio2210-5runs-randread.log"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.log")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	st := openDB(t)
	rep := importFiles(t, st, storbench.ImportRequest{}, cut)
	if rep.RunID == "" || !rep.Files[0].Cut || rep.Results == 0 {
		t.Fatalf("report %+v", rep)
	}
	err = storbench.ImportIncomplete(rep)
	if err == nil || !strings.Contains(err.Error(), "cut.log is cut") {
		t.Errorf("ImportIncomplete: %v", err)
	}
	run, _ := st.Run(context.Background(), rep.RunID)
	if !strings.Contains(run.Note, ", cut)") {
		t.Errorf("note %q", run.Note)
	}
}

// DefaultMaxSize, as the --max-size flag shows it, is the limit Import
// applies when the request names none.
func TestDefaultMaxSize(t *testing.T) {
	if got, err := units.ParseSize(storbench.DefaultMaxSize); err != nil || got != 256<<20 {
		t.Errorf("DefaultMaxSize %s is %d bytes (%v), not the 256 MiB Import applies when the request names none", storbench.DefaultMaxSize, got, err)
	}
}
