package kubetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A test that measures waits while the mark of the work beside the
// cluster tier exists, and goes on once it is removed.
func TestWaitBesideEnded(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "beside")
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.Remove(mark)
	}()
	r := &logRecorder{TB: t}
	start := time.Now()
	waitBesideEnded(r, mark, 20*time.Millisecond)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("returned after %s, before the mark was removed", d)
	}
	if len(r.logs) != 1 || !strings.Contains(r.logs[0], "waited") {
		t.Errorf("logged %q, want how long it waited", r.logs)
	}
	r.logs = nil
	waitBesideEnded(r, mark, 20*time.Millisecond) // gone already: no wait, nothing said
	waitBesideEnded(r, "", 20*time.Millisecond)   // no work beside
	if len(r.logs) != 0 {
		t.Errorf("logged %q without waiting", r.logs)
	}
}

type logRecorder struct {
	testing.TB
	logs []string
}

func (r *logRecorder) Helper() {}
func (r *logRecorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, format)
}
