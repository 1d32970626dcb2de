package importcmd_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/store"
)

func TestImportTimeFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	if _, errOut, code := invoke(t, db, "", "import", samples+"results.csv", "--time", "yesterday"); code != cli.ExitUsage ||
		!strings.Contains(errOut, `--time "yesterday": expected a time in RFC 3339`) {
		t.Fatalf("bad --time: exit %d: %s", code, errOut)
	}
	out, errOut, code := invoke(t, db, "", "import", samples+"results.csv", samples+"backfill/history.csv", "--time", "2025-11-03T22:15:00+01:00")
	if code != cli.ExitOK || !strings.Contains(out, "Rows measured at 16 other times were stored as 16 more runs") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: the 16 nights of history.csv, then results.csv at --time.
	if len(runs) != 17 || !runs[16].Started.Equal(time.Date(2025, 11, 3, 21, 15, 0, 0, time.UTC)) ||
		!runs[0].Started.Equal(time.Date(2026, 3, 17, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("%d runs, oldest %v, newest %v", len(runs), runs[len(runs)-1].Started, runs[0].Started)
	}
}
