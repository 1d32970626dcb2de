package storbench_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

func TestShow(t *testing.T) {
	st := sqliteStore(t)
	_, gone := processes(t)
	rs := fixtureResults(t, analysisFixture)
	id := storeRun(t, st, result.Run{ID: "20261122-100000-aaaa", Started: started}, rs)
	storeRun(t, st, result.Run{ID: "20261122-110000-bbbb", Started: started, Status: result.StatusRunning, Process: gone}, nil)
	ctx := context.Background()

	detail, err := storbench.Show(ctx, st, storbench.ShowRequest{RunID: "20261122-10"})
	if err != nil {
		t.Fatal(err)
	}
	if detail.Run.ID != id || len(detail.Results) != len(rs) || len(detail.Contention) != 0 {
		t.Errorf("run %s, %d results (want %d), %d contention reports", detail.Run.ID, len(detail.Results), len(rs), len(detail.Contention))
	}
	if r := detail.Results[0]; r.Target != rs[0].Target || r.Workload != rs[0].Workload || r.Read == nil || r.Read.IOPS != rs[0].Read.IOPS {
		t.Errorf("first result read back as %+v", r)
	}

	detail, err = storbench.Show(ctx, st, storbench.ShowRequest{RunID: "20261122-110000-bbbb"})
	if err != nil {
		t.Fatal(err)
	}
	if detail.Run.Status != result.StatusAbandoned || !strings.Contains(detail.Run.Note, "gone") || detail.Results == nil {
		t.Errorf("a running run whose process is gone: %s %q, results %v", detail.Run.Status, detail.Run.Note, detail.Results)
	}

	for _, idOrPrefix := range []string{"19990101", "20261122"} {
		_, err = storbench.Show(ctx, st, storbench.ShowRequest{RunID: idOrPrefix})
		var req *storbench.RequestError
		var amb *store.AmbiguousError
		if !errors.As(err, &req) || !(errors.Is(err, store.ErrNotFound) || errors.As(err, &amb)) {
			t.Errorf("%s: %v, want a RequestError for a run not found or ambiguous", idOrPrefix, err)
		}
	}
}
