package storbench_test

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
)

// processes returns this test process (alive) and one that has exited
// (gone), as a run records them.
func processes(t *testing.T) (alive, gone *result.Process) {
	t.Helper()
	self, err := proc.Reader{}.Self()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	exited := self
	exited.PID = cmd.Process.Pid
	return &self, &exited
}

func TestRuns(t *testing.T) {
	st := sqliteStore(t)
	alive, gone := processes(t)
	at := func(h int) time.Time { return started.Add(time.Duration(h) * time.Hour) }
	storeRun(t, st, result.Run{ID: "r0-abandoned", Started: at(0), Status: result.StatusAbandoned}, nil) // as cleanup stores it
	storeRun(t, st, result.Run{ID: "r1-complete", Started: at(1)}, nil)
	storeRun(t, st, result.Run{ID: "r2-failed", Started: at(2), Status: result.StatusFailed}, nil)
	storeRun(t, st, result.Run{ID: "r3-gone", Started: at(3), Status: result.StatusRunning, Process: gone}, nil)
	storeRun(t, st, result.Run{ID: "r4-live", Started: at(4), Status: result.StatusRunning, Process: alive}, nil)
	storeRun(t, st, result.Run{ID: "r5-gone", Started: at(5), Status: result.StatusRunning, Process: gone, Suite: "quick", Source: "storbench"}, nil)

	tests := []struct {
		name string
		req  storbench.RunsRequest
		want []string
	}{
		{"all, newest first", storbench.RunsRequest{}, []string{"r5-gone", "r4-live", "r3-gone", "r2-failed", "r1-complete", "r0-abandoned"}},
		{"second page", storbench.RunsRequest{Limit: 2, Offset: 2}, []string{"r3-gone", "r2-failed"}},
		{"since and until", storbench.RunsRequest{Since: at(2), Until: at(4)}, []string{"r3-gone", "r2-failed"}},
		{"limit", storbench.RunsRequest{Limit: 2}, []string{"r5-gone", "r4-live"}},
		{"suite", storbench.RunsRequest{Suite: "quick"}, []string{"r5-gone"}},
		{"complete", storbench.RunsRequest{Status: result.StatusComplete}, []string{"r1-complete"}},
		{"running is judged now", storbench.RunsRequest{Status: result.StatusRunning}, []string{"r4-live"}},
		{"abandoned", storbench.RunsRequest{Status: result.StatusAbandoned}, []string{"r5-gone", "r3-gone", "r0-abandoned"}},
		{"abandoned, second page", storbench.RunsRequest{Status: result.StatusAbandoned, Limit: 1, Offset: 1}, []string{"r3-gone"}},
		{"abandoned, limited after judging", storbench.RunsRequest{Status: result.StatusAbandoned, Limit: 1}, []string{"r5-gone"}},
		{"none", storbench.RunsRequest{Suite: "pi"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := storbench.Runs(context.Background(), st, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if runs == nil {
				t.Error("nil list: JSON would print null")
			}
			var got []string
			for _, r := range runs {
				got = append(got, r.ID)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("runs = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("runs = %v, want %v", got, tt.want)
				}
			}
			for _, r := range runs {
				if r.ID == "r3-gone" && (r.Status != result.StatusAbandoned || r.Note == "") {
					t.Errorf("a run whose process is gone: %s %q", r.Status, r.Note)
				}
			}
		})
	}
	_, err := storbench.Runs(context.Background(), st, storbench.RunsRequest{Status: "sleeping"})
	var req *storbench.RequestError
	if !errors.As(err, &req) {
		t.Errorf("unknown status: %v, want a RequestError", err)
	}
}
