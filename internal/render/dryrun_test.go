package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/safety"
)

// TestDryRunGolden prints a judged job of two sections: one time-based
// reading a file of its own, one writing until its size is done and reading
// a device that is not storbench's.
func TestDryRunGolden(t *testing.T) {
	work := "/mnt/ssd/.storbench-check-123"
	jobs := []fio.JobReading{
		{Section: "one", Options: []fio.Option{{Key: "bs", Value: "4k"}, {Key: "filename", Value: "tmp/x.dat"}, {Key: "runtime", Value: "2"}, {Key: "time_based"}}},
		{Section: "two", Options: []fio.Option{{Key: "rw", Value: "write"}, {Key: "size", Value: "4m"}, {Key: "filename", Value: "/dev/sdz"}}},
	}
	v := analysis.DryRun{
		Target:  "/mnt/ssd",
		Text:    []byte("[one]\nbs=4k\n; changed by storbench from \"filename=/tmp/x.dat\"\nfilename=tmp/x.dat\nruntime=2\ntime_based\n\n[two]\nrw=write\nsize=4m\n"),
		WorkDir: work,
		Jobs:    []analysis.DryRunJob{{Section: "one", Options: jobs[0].String()}, {Section: "two", Options: jobs[1].String()}},
		Writers: []string{"two"},
		Touches: []analysis.DryRunTouch{
			{Job: "one", Path: work + "/tmp/x.dat", Kind: safety.PathMissing.String(), Own: true},
			{Job: "two", Path: work + "/two.0.0", Kind: safety.PathMissing.String(), Writes: true, Own: true},
			{Job: "two", Path: "/dev/sdz", Kind: safety.PathBlock.String()},
		},
		TimeBased: 2500 * time.Millisecond,
		UntilDone: 1,
	}
	var b bytes.Buffer
	DryRun(&b, v)
	v.Target, v.Writers, v.UntilDone = "/mnt/b", nil, 0
	DryRun(&b, v)
	golden(t, "dryrun.golden", b.Bytes())
}
