package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// The figures are fio's on this machine (submission.go): libaio on a
// ceph-fuse mount, on sshfs and on ext4.
func TestSubmissionBoundText(t *testing.T) {
	us := time.Microsecond
	dir := func(iops float64, slat, clat time.Duration) *result.Direction {
		return &result.Direction{IOPS: iops, Submission: result.Latency{Mean: slat}, Completion: result.Latency{Mean: clat}}
	}
	for _, c := range []struct {
		name        string
		r           result.Result
		depth, jobs int
		want        []string // "" when nothing is said
	}{
		{"ceph-fuse 4 KiB writes at QD8", result.Result{Write: dir(330, 3016*us, 21105*us)}, 8, 1,
			[]string{"write: each I/O took 3.016 ms inside io_submit (100% of the run submitting; the completion latency, 21.11 ms on average, is the wait to be reaped)", "queue depth 8 acted as 1"}},
		{"ceph-fuse 4 KiB writes at QD1", result.Result{Write: dir(331, 3007*us, 6*us)}, 1, 1,
			[]string{"each I/O took 3.007 ms inside io_submit", "asynchronous direct I/O (FUSE, as ceph-fuse)"}},
		{"ceph-fuse 4 KiB reads at QD8", result.Result{Read: dir(2909, 339*us, 2407*us)}, 8, 1, []string{"read: each I/O took 339 µs", "(99% of the run"}},
		{"sshfs", result.Result{Write: dir(1135, 10*us, 869*us)}, 1, 1, nil},
		{"ext4 1 MiB at QD16", result.Result{Write: dir(1000, 98*us, 15851*us)}, 16, 1, nil},
		// a CPU-bound submission: most of the time, but microseconds each
		{"fast device, busy fio", result.Result{Read: dir(120000, 6*us, 200*us)}, 32, 1, nil},
		// four jobs' IOPS add up: each spent a quarter of its time submitting
		{"four jobs", result.Result{Write: dir(1200, 200*us, 3*time.Millisecond)}, 4, 4, nil},
		{"a synchronous engine", result.Result{Write: dir(331, 0, 3*time.Millisecond)}, 1, 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := SubmissionBoundText(&c.r, c.depth, c.jobs)
			if c.want == nil {
				if got != "" {
					t.Errorf("got %q, want nothing said", got)
				}
				return
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to say %q", got, w)
				}
			}
			if c.depth == 1 && strings.Contains(got, "queue depth") {
				t.Errorf("got %q: nothing to say of queue depth 1", got)
			}
		})
	}
}
