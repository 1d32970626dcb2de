package render

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// playRun tells p what the engine tells it during a run of two workloads,
// the second repeated, one failing, with notices in between.
func playRun(p *Progress) {
	ms := time.Millisecond
	p.RunStarted(&result.Run{ID: "20260101-120000-abcd", Suite: "quick", Workloads: []string{"rand-read", "etcd"}, Targets: []string{"/mnt/ssd"}})
	p.Notice("", "skipping node n2: NotReady")
	s := WorkloadStep{Workload: "rand-read", Index: 1, Count: 2, Repetition: 1, Repetitions: 1, Expected: 65 * time.Second}
	p.WorkloadStarted(s)
	p.WorkloadProgress(s, result.Progress{Elapsed: 3 * time.Second, IOPS: 12345, BytesPerSec: 50.5e6})
	p.WorkloadProgress(s, result.Progress{Elapsed: 64 * time.Second, Remaining: 2 * time.Second, IOPS: 12000, BytesPerSec: 49e6})
	p.Notice("/mnt/ssd", "page cache dropped")
	p.WorkloadFinished(s, &result.Result{Workload: "rand-read", Status: result.StatusComplete,
		Read: &result.Direction{IOPS: 12100.4, BytesPerSec: 49.6e6, TotalIOs: 726000, Completion: lat(80*time.Microsecond, 310*time.Microsecond, ms, 2*ms)}})
	for rep := 1; rep <= 2; rep++ {
		s := WorkloadStep{Workload: "etcd", Index: 2, Count: 2, Repetition: rep, Repetitions: 2}
		p.WorkloadStarted(s)
		p.WorkloadProgress(s, result.Progress{Elapsed: 1500 * ms, IOPS: 410, BytesPerSec: 943e3})
		if rep == 1 {
			sync := lat(900*time.Microsecond, 2100*time.Microsecond, 3*ms, 4*ms)
			p.WorkloadFinished(s, &result.Result{Workload: "etcd", Status: result.StatusComplete,
				Write: &result.Direction{IOPS: 412, BytesPerSec: 947600, TotalIOs: 10000, Completion: lat(20*time.Microsecond, 80*time.Microsecond, 200*time.Microsecond, ms)},
				Sync:  &sync})
			continue
		}
		p.WorkloadFinished(s, &result.Result{Workload: "etcd", Status: result.StatusFailed, Error: "fio exited 1: no space left on device"})
	}
	p.Finish()
}

// TestProgressGolden prints one run in each mode: text on a terminal (live
// lines redrawn in place), text to a file, and JSON (notices only).
func TestProgressGolden(t *testing.T) {
	var all bytes.Buffer
	for _, mode := range []struct {
		name string
		o    ProgressOptions
	}{{"live", ProgressOptions{Live: true}}, {"text", ProgressOptions{}}, {"json", ProgressOptions{JSON: true, Live: true}}} {
		var out, errOut bytes.Buffer
		p := NewProgress(&out, &errOut, mode.o)
		playRun(p)
		fmt.Fprintf(&all, "== %s (live %v)\n-- out\n%s\n-- errOut\n%s\n", mode.name, p.Live(), strings.ReplaceAll(out.String(), "\r\033[K", "<CLR>"), errOut.String())
	}
	golden(t, "progress.golden", all.Bytes())
}

// Notices come from other goroutines while the engine reports progress; the
// printer keeps each line whole.
func TestProgressConcurrentNotices(t *testing.T) {
	var out, errOut bytes.Buffer
	var mu sync.Mutex
	p := NewProgress(&lockedWriter{w: &out, mu: &mu}, &lockedWriter{w: &errOut, mu: &mu}, ProgressOptions{Live: true})
	s := WorkloadStep{Workload: "w", Index: 1, Count: 1, Repetitions: 1, Expected: time.Minute}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				p.Notice(fmt.Sprintf("k8s:c@n%d", i), fmt.Sprintf("notice %d", j))
			}
		}()
	}
	for range 200 {
		p.WorkloadProgress(s, result.Progress{Elapsed: time.Second, IOPS: 1, BytesPerSec: 1})
	}
	wg.Wait()
	p.Finish()
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d notice lines, want 400", len(lines))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "notice: k8s:c@n") || strings.Count(l, "notice") != 2 {
			t.Fatalf("torn notice line %q", l)
		}
	}
	if !strings.HasSuffix(out.String(), "\r\033[K") {
		t.Errorf("the live line was not cleared at the end: %q", out.String()[max(0, out.Len()-40):])
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
