package importcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/importcmd"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

const samples = "../../importer/testdata/"

// invoke runs the import command as the application does
// and returns stdout, stderr and the exit code.
func invoke(t *testing.T, db string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	d := cli.Deps{Streams: cli.Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, Globals: &cli.Globals{DB: db}, Getenv: func(string) string { return "" }}
	root := &cobra.Command{Use: "storbench", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.AddCommand(importcmd.NewCommand(d))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	code := cli.ExitOK
	if err != nil {
		errOut.WriteString(err.Error())
		code = cli.ExitFailed
		var ee *cli.ExitError
		if errors.As(err, &ee) {
			code = ee.Code
		}
	}
	return out.String(), errOut.String(), code
}

func openDB(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestImportStoresOneRunWithProvenance(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "results.db")
	out, errOut, code := invoke(t, db, "", "import", samples+"fio-text-pi4-usb-sata.txt", samples+"smartctl-attributes-seagate.txt",
		samples+"hdparm-dd-outputs.txt", "--label", "node=pi4-1", "--label", "storage=usb-sata", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep result.ImportReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if rep.RunID == "" || rep.Results != 6 || len(rep.Files) != 3 || len(rep.Health) != 1 || len(rep.Duplicates) != 0 {
		t.Fatalf("report %+v", rep)
	}
	st := openDB(t, db)
	run, err := st.Run(ctx, rep.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Suite != "import" || run.Source != "fio-text,smartctl,hdparm,dd" || result.LabelNode.Of(run.Labels) != "pi4-1" || !strings.Contains(run.Note, "fio-text-pi4-usb-sata.txt") {
		t.Errorf("run %+v", run)
	}
	results, _ := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
	if len(results) != 6 {
		t.Fatalf("%d results stored", len(results))
	}
	for _, r := range results {
		if result.LabelNode.Of(r.Labels) != "pi4-1" || r.Labels["storage"] != "usb-sata" || result.LabelSource.Of(r.Labels) == "" || r.Method == "" {
			t.Errorf("result %s labels %v method %q", r.Workload, r.Labels, r.Method)
		}
	}
	if results[0].Read.IOPS != 9989 {
		t.Errorf("fio read IOPS %v", results[0].Read.IOPS)
	}
	files, _ := st.RunImports(ctx, run.ID)
	if len(files) != 3 || files[0].SHA256 == "" || files[0].Imported.IsZero() {
		t.Errorf("provenance %+v", files)
	}

	// The same file again: reported, not duplicated; with a new file, only
	// the new one is imported.
	out, _, code = invoke(t, db, "", "import", samples+"fio-text-pi4-usb-sata.txt")
	if code != 0 || !strings.Contains(out, "Already imported") || !strings.Contains(out, rep.RunID) {
		t.Fatalf("second import: exit %d\n%s", code, out)
	}
	out, _, code = invoke(t, db, "", "import", samples+"fio-text-pi4-usb-sata.txt", samples+"ceph-osd-bench-2osd.txt", "--output", "json")
	var rep2 result.ImportReport
	if err := json.Unmarshal([]byte(out), &rep2); err != nil || code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if rep2.RunID == "" || rep2.Results != 2 || len(rep2.Duplicates) != 1 || rep2.Duplicates[0].RunID != rep.RunID {
		t.Errorf("mixed import %+v", rep2)
	}
	runs, _ := st.Runs(ctx, store.RunFilter{})
	if len(runs) != 2 {
		t.Errorf("%d runs stored, want 2", len(runs))
	}

	// Device health is stored.
	hs, err := storbench.Health(ctx, st, storbench.HealthRequest{})
	var text bytes.Buffer
	if err != nil || render.StoredHealthText(&text, hs) != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "0 errors in 134444568 operations") || !strings.Contains(text.String(), "healthy") {
		t.Errorf("health:\n%s", text.String())
	}
}

func TestImportRejectsMalformedInputWhole(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("target,labels,round,workload,metric,value,unit\npi,,,seq-read,bw,12,MB/s\npi,,,seq-read,bw,twelve,MB/s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := invoke(t, db, "", "import", samples+"ceph-osd-bench-2osd.txt", bad)
	if code != cli.ExitUsage || !strings.Contains(errOut, "bad.csv:3:18") || !strings.Contains(errOut, "expected a number") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st := openDB(t, db)
	if runs, _ := st.Runs(context.Background(), store.RunFilter{}); len(runs) != 0 {
		t.Errorf("%d runs stored after a rejected import", len(runs))
	}
	for _, args := range [][]string{
		{"import", filepath.Join(dir, "missing.txt")},
		{"import", "--format", "nonsense", samples + "results.csv"},
		{"import", "--format", "csv", samples + "fio-randread-4k-qd32.json"},
		{"import", "--label", "novalue", samples + "results.csv"},
	} {
		if _, errOut, code := invoke(t, db, "", args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errOut)
		}
	}
}

func TestImportDryRunAndStdin(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	out, errOut, code := invoke(t, db, "", "import", "--dry-run", samples+"results.csv", samples+"smartctl-seagate-failing.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Dry run: would store 6 results and 1 device health records", "nas, bay 2", "95.5 MiB/s", "ATTENTION", "197 Current_Pending_Sector = 16"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("dry run created the database: %v", err)
	}
	csv, _ := os.ReadFile(samples + "results.csv")
	out, errOut, code = invoke(t, db, string(csv), "import", "-", "--target", "pi4-9", "--output", "json")
	var rep result.ImportReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.RunID == "" || rep.Results != 6 {
		t.Fatalf("stdin import: exit %d %v %s %s", code, err, out, errOut)
	}
	st := openDB(t, db)
	run, _ := st.Run(context.Background(), rep.RunID)
	if len(run.Targets) != 1 || run.Targets[0] != "pi4-9" {
		t.Errorf("targets %v", run.Targets)
	}
}

// import reads regular files only: a device, a pipe or a directory is
// refused before anything is read (storbench import /dev/zero used to
// allocate until the OOM killer ended it).
func TestImportRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, kind string }{
		{"/dev/zero", "a character device"},
		{fifo, "a named pipe"},
		{dir, "a directory"},
	} {
		done := make(chan struct{})
		var errOut string
		var code int
		go func() {
			defer close(done)
			_, errOut, code = invoke(t, db, "", "import", tc.path)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("import %s did not return", tc.path)
		}
		if code != cli.ExitUsage || !strings.Contains(errOut, "is not a regular file ("+tc.kind+")") {
			t.Errorf("import %s: exit %d: %s", tc.path, code, errOut)
		}
	}
}

func TestImportMaxSize(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	_, errOut, code := invoke(t, db, "", "import", "--max-size", "1KiB", samples+"fio-randread-4k-qd32.json")
	if code != cli.ExitUsage || !strings.Contains(errOut, "larger than --max-size 1.0 KiB") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	_, errOut, code = invoke(t, db, strings.Repeat("x", 2048), "import", "--max-size", "1KiB", "-")
	if code != cli.ExitUsage || !strings.Contains(errOut, "standard input is larger than --max-size") {
		t.Errorf("stdin: exit %d: %s", code, errOut)
	}
	if _, errOut, code = invoke(t, db, "", "import", "--max-size", "lots", samples+"results.csv"); code != cli.ExitUsage || !strings.Contains(errOut, "--max-size") {
		t.Errorf("bad size: exit %d: %s", code, errOut)
	}
	if _, errOut, code = invoke(t, db, "", "import", "--max-size", "0", samples+"results.csv"); code != cli.ExitUsage || !strings.Contains(errOut, "above 0") {
		t.Errorf("zero: exit %d: %s", code, errOut)
	}
	out, errOut, code := invoke(t, db, "", "import", "--max-size", "1MiB", samples+"results.csv")
	if code != 0 {
		t.Errorf("within the limit: exit %d: %s %s", code, out, errOut)
	}
}

// A cut file: what is complete is stored, the cut is reported with its
// line, and the exit code is 1.
func TestImportCutFileExitsOne(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	data, err := os.ReadFile("../../importer/testdata/corpus/shared-vpscomp-fio2210-5runs-randread.log")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.log")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := invoke(t, db, "", "import", cut)
	if code != cli.ExitFailed || !strings.Contains(out, "CUT") || !strings.Contains(out, "cut.log:89: cut:") || !strings.Contains(errOut, "cut.log is cut") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	st := openDB(t, db)
	runs, _ := st.Runs(context.Background(), store.RunFilter{})
	if len(runs) != 1 || !strings.Contains(runs[0].Note, "cut") {
		t.Fatalf("runs %+v", runs)
	}
	results, _ := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{runs[0].ID}})
	if len(results) != 3 || results[0].Read.IOPS != 28422 || results[2].Read.IOPS != 29814 {
		t.Errorf("%d results stored", len(results))
	}
	if _, ok := results[2].Read.Completion.At(99); ok {
		t.Error("the third run's percentile table is cut before p99: p99 must not be stored")
	}
}

// An implausible figure: that result is refused with its line, the others
// are stored, and the exit code is 1.
func TestImportRefusedResultExitsOne(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	data, err := os.ReadFile("../../importer/testdata/corpus/shared-fioplot-fio31-randrw.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), `"iops" : 67060.431319`, `"iops" : 1e308`, 1)
	path := filepath.Join(dir, "two.json")
	if err := os.WriteFile(path, []byte(string(data)+bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := invoke(t, db, "", "import", path, "--output", "json")
	var rep result.ImportReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if code != cli.ExitFailed || rep.Results != 1 || rep.Files[0].Refused != 1 || !strings.Contains(errOut, "refused as implausible") {
		t.Fatalf("exit %d, %+v, %s", code, rep, errOut)
	}
	p := rep.Files[0].Problems[0]
	if p.Kind != "refused" || p.Line != strings.Count(string(data), "\n")+1 || !strings.Contains(p.Msg, "read IOPS 1e+308") {
		t.Errorf("problem %+v", p)
	}
}
