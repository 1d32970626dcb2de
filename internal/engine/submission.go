package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// An asynchronous engine's I/O is done inside io_submit when fio spent at
// least submissionBoundShare of the job's time submitting and each
// submission took at least submissionBoundFloor: far more than the few
// microseconds of CPU a submission costs, so it waited for the I/O itself.
// Measured on a ceph-fuse mount (libaio, direct): 4 KiB random writes at
// QD1 and QD8 both 330 IOPS with 3.0 ms per submission (99.5% of the
// time); 4 KiB random reads at QD8 2,909 IOPS with 0.34 ms (98.5%); 1 MiB
// writes at QD16 22 IOPS with 46 ms. Against: sshfs 4 KiB writes 10 us per
// submission at 1,135 IOPS (1%), ext4 on a disk 1 MiB writes 98 us at about
// 1,000 IOPS (10%).
const (
	submissionBoundShare = 0.5
	submissionBoundFloor = 100 * time.Microsecond
)

// SubmissionBoundText says, when fio's asynchronous engine did r's I/O
// inside io_submit, what that means for its figures; "" otherwise (a
// synchronous engine records no submission latency). The filesystem does
// not do asynchronous direct I/O (ceph-fuse does each read and write
// before io_submit returns): the queue depth acted as 1, the completion
// latency is the time a finished I/O waited to be reaped, and the
// submission latency is what the I/O took. jobs is the workload's numjobs
// (their IOPS add up under group_reporting).
func SubmissionBoundText(r *result.Result, depth, jobs int) string {
	jobs = max(jobs, 1)
	var parts []string
	for _, d := range r.Directions() {
		slat := d.Submission.Mean
		if slat < submissionBoundFloor || d.IOPS <= 0 {
			continue
		}
		share := slat.Seconds() * d.IOPS / float64(jobs)
		if share < submissionBoundShare {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: each I/O took %s inside io_submit (%.0f%% of the run submitting; the completion latency, %s on average, is the wait to be reaped)",
			d.Name, units.Latency(slat), min(share, 1)*100, units.Latency(d.Completion.Mean)))
	}
	if len(parts) == 0 {
		return ""
	}
	s := "I/O done inside submission: " + strings.Join(parts, "; ") + ": the filesystem does not do asynchronous direct I/O (FUSE, as ceph-fuse)"
	if depth > 1 {
		s += fmt.Sprintf(", so queue depth %d acted as 1", depth)
	}
	return s
}

// intOr is *p, or def when p is nil.
func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
