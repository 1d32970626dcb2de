package healthcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/healthcmd"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

func run(t *testing.T, db string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	d := cli.Deps{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Globals: &cli.Globals{DB: db}, Getenv: func(string) string { return "" }}
	root := &cobra.Command{Use: "storbench", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(healthcmd.NewCommand(d))
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}

// Every smartctl record of a file is kept with its time; health shows the
// newest of each device, --all every one.
func TestHealthKeepsEveryRecord(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = storbench.Import(ctx, st, storbench.ImportRequest{MaxSize: 1 << 20,
		Files: []string{"../../importer/testdata/corpus/smartdisk-disk_record.md", "../../importer/testdata/corpus/scrutiny-smart-nvme-failed.json"}})
	if cerr := st.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	var all []result.Health
	if err := json.Unmarshal([]byte(run(t, db, "health", "--all", "--output", "json")), &all); err != nil {
		t.Fatal(err)
	}
	if len(all) != 7 {
		t.Fatalf("%d records, want 7", len(all))
	}
	out := run(t, db, "health")
	if strings.Count(out, "Device health of") != 2 || !strings.Contains(out, "871 power-on hours, 35 °C") ||
		!strings.Contains(out, "ATTENTION") || !strings.Contains(out, "7 NVMe media and data integrity errors") {
		t.Errorf("latest records:\n%s", out)
	}
}
