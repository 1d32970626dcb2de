package importcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/healthcmd"
	"github.com/storbench/storbench/internal/cli/importcmd"
	"github.com/storbench/storbench/internal/store"
)

const samples = "../../importer/testdata/"

// storbench runs the import and health commands as the application does
// and returns stdout, stderr and the exit code.
func storbench(t *testing.T, db string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	d := cli.Deps{Streams: cli.Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, Globals: &cli.Globals{DB: db}, Getenv: func(string) string { return "" }}
	root := &cobra.Command{Use: "storbench", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.AddCommand(importcmd.NewCommand(d), healthcmd.NewCommand(d))
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

func openDB(t *testing.T, path string) *store.SQLite {
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
	out, errOut, code := storbench(t, db, "", "import", samples+"fio-text-pi4-usb-sata.txt", samples+"smartctl-attributes-seagate.txt",
		samples+"hdparm-dd-outputs.txt", "--label", "node=pi4-1", "--label", "storage=usb-sata", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep importcmd.Report
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
	if run.Suite != "import" || run.Source != "fio-text,smartctl,hdparm,dd" || run.Labels["node"] != "pi4-1" || !strings.Contains(run.Note, "fio-text-pi4-usb-sata.txt") {
		t.Errorf("run %+v", run)
	}
	results, _ := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
	if len(results) != 6 {
		t.Fatalf("%d results stored", len(results))
	}
	for _, r := range results {
		if r.Labels["node"] != "pi4-1" || r.Labels["storage"] != "usb-sata" || r.Labels["source"] == "" || r.Method == "" {
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
	out, _, code = storbench(t, db, "", "import", samples+"fio-text-pi4-usb-sata.txt")
	if code != 0 || !strings.Contains(out, "Already imported") || !strings.Contains(out, rep.RunID) {
		t.Fatalf("second import: exit %d\n%s", code, out)
	}
	out, _, code = storbench(t, db, "", "import", samples+"fio-text-pi4-usb-sata.txt", samples+"ceph-osd-bench-2osd.txt", "--output", "json")
	var rep2 importcmd.Report
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

	// Device health is listed.
	out, _, code = storbench(t, db, "", "health")
	if code != 0 || !strings.Contains(out, "0 errors in 134444568 operations") || !strings.Contains(out, "healthy") {
		t.Errorf("health: exit %d\n%s", code, out)
	}
}

func TestImportRejectsMalformedInputWhole(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("target,labels,round,workload,metric,value,unit\npi,,,seq-read,bw,12,MB/s\npi,,,seq-read,bw,twelve,MB/s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := storbench(t, db, "", "import", samples+"ceph-osd-bench-2osd.txt", bad)
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
		if _, errOut, code := storbench(t, db, "", args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errOut)
		}
	}
}

func TestImportDryRunAndStdin(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	out, errOut, code := storbench(t, db, "", "import", "--dry-run", samples+"results.csv", samples+"smartctl-seagate-failing.txt")
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
	out, errOut, code = storbench(t, db, string(csv), "import", "-", "--target", "pi4-9", "--output", "json")
	var rep importcmd.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.RunID == "" || rep.Results != 6 {
		t.Fatalf("stdin import: exit %d %v %s %s", code, err, out, errOut)
	}
	st := openDB(t, db)
	run, _ := st.Run(context.Background(), rep.RunID)
	if len(run.Targets) != 1 || run.Targets[0] != "pi4-9" {
		t.Errorf("targets %v", run.Targets)
	}
}
