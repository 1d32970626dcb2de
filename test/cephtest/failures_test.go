package cephtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

// checkFailures kills and then freezes one OSD under a verified write and
// times what follows: mark-down, the writer's stall, throughput while
// degraded, the return to active+clean; fio reads back every block.
func checkFailures(t *testing.T, c *Cluster) {
	fioPath := testenv.Fio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// HDD tunables (the disk here says rotational) sleep 0.1 s between
	// recovery ops: 95 s back to active+clean. The test times the path, not
	// the pacing.
	if _, err := c.Ceph(ctx, "config", "set", "osd", "osd_recovery_sleep_hdd", "0"); err != nil {
		t.Fatal(err)
	}
	mustRBD(ctx, t, c, "create", c.Pool+"/failures", "--size", "1G")
	victim := c.Nodes[1]
	tests := []struct {
		fault          string
		inject, undo   []string
		undoAfterDown  time.Duration
		maxMarkedDown  time.Duration
		minMarkedDown  time.Duration
		wantStallAbove time.Duration
	}{
		{"killed", []string{"osd", "kill", strconv.Itoa(victim.OSD)}, []string{"osd", "start", strconv.Itoa(victim.OSD)}, 6 * time.Second, 5 * time.Second, 0, 0},
		// the heartbeat grace (20 s) passes first: the writer waits all of it
		{"frozen", []string{"osd", "freeze", strconv.Itoa(victim.OSD)}, []string{"osd", "thaw", strconv.Itoa(victim.OSD)}, 3 * time.Second, 40 * time.Second, 15 * time.Second, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			f := analysis.OSDFailure{Fault: tt.fault, OSD: victim.OSD, Host: victim.Name}
			dir := t.TempDir()
			fioCmd := c.Command(ctx, c.Client, fioPath, "--name=failure", "--ioengine=rbd", "--clientname=admin", "--pool="+c.Pool,
				"--rbdname=failures", "--rw=write", "--bs=4M", "--iodepth=8", "--direct=1", "--size=768M", "--randrepeat=0",
				"--verify=crc32c", "--do_verify=1", "--verify_fatal=1", "--write_bw_log="+filepath.Join(dir, "bw"), "--log_avg_msec=500",
				"--output-format=json", "--output="+filepath.Join(dir, "out.json"))
			var stderr testenv.Buffer
			fioCmd.Stderr = &stderr
			if err := fioCmd.Start(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			// fio keeps its log in memory until the end: the fault goes in
			// at a fixed time, well inside the write phase (768 MiB at the
			// 40-60 MB/s this machine gives takes 13-19 s)
			time.Sleep(4 * time.Second)
			f.FaultAt = time.Since(start)
			c.Script(t, tt.inject...)
			down := time.Now()
			waitOSDState(ctx, t, c, victim.OSD, false, 60*time.Second)
			f.MarkedDown = time.Since(down)
			time.Sleep(tt.undoAfterDown)
			c.Script(t, tt.undo...)
			f.RestoredAt = time.Since(start)
			restored := time.Now()
			err := fioCmd.Wait()
			f.Verified, f.VerifyError = err == nil, strings.TrimSpace(stderr.String())
			waitOSDState(ctx, t, c, victim.OSD, true, 60*time.Second)
			c.Script(t, "wait-clean", "180")
			f.CleanAfter = time.Since(restored)
			f.Log = rateLog(t, dir)
			check := f.Check()
			t.Logf("%s: %s", check.Status, check.Detail)
			if check.Status != result.CheckOK {
				t.Errorf("%+v", check)
			}
			if f.MarkedDown > tt.maxMarkedDown || f.MarkedDown < tt.minMarkedDown {
				t.Errorf("marked down after %s, want %s-%s", f.MarkedDown, tt.minMarkedDown, tt.maxMarkedDown)
			}
			if s := f.Stall(); s < tt.wantStallAbove {
				t.Errorf("stall %s, want over %s", s, tt.wantStallAbove)
			}
			var out struct {
				Jobs []struct {
					Error int `json:"error"`
				} `json:"jobs"`
			}
			if b, err := os.ReadFile(filepath.Join(dir, "out.json")); err != nil || json.Unmarshal(b, &out) != nil || len(out.Jobs) != 1 || out.Jobs[0].Error != 0 {
				t.Errorf("fio's report: %v %+v", err, out)
			}
		})
	}
}

func rateLog(t *testing.T, dir string) []analysis.RatePoint {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bw_bw.1.log"))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := fio.ParseBandwidthLog(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []analysis.RatePoint
	for _, s := range samples {
		out = append(out, analysis.RatePoint{At: s.At, BytesPerSec: s.BytesPerSec})
	}
	return out
}

// waitOSDState polls the OSD map every 100 ms until osd.id is up (or down).
func waitOSDState(ctx context.Context, t *testing.T, c *Cluster, id int, up bool, limit time.Duration) {
	t.Helper()
	for start := time.Now(); time.Since(start) < limit; time.Sleep(100 * time.Millisecond) {
		b, err := c.Ceph(ctx, "osd", "dump", "-f", "json")
		if err != nil {
			continue // a monitor busy electing: ask again
		}
		var d struct {
			OSDs []struct {
				OSD int `json:"osd"`
				Up  int `json:"up"`
			} `json:"osds"`
		}
		if json.Unmarshal(b, &d) != nil {
			continue
		}
		for _, o := range d.OSDs {
			if o.OSD == id && (o.Up == 1) == up {
				return
			}
		}
	}
	t.Fatalf("osd.%d not up=%v after %s", id, up, limit)
}
