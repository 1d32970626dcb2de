package analysis

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// appResults builds one target's app-fitness results: the lock outcome and
// where its clients ran, fsync's outcome, and WAL/FULL's rate and p99.
func appResults(target, runID, lock, clients, fsync string, rate float64, p99 time.Duration) []result.Result {
	sem := func(name, outcome, seen string) result.Result {
		l := map[string]string{}
		result.LabelCheckOutcome.Set(l, outcome)
		result.LabelCheckReason.Set(l, seen)
		result.LabelAppClients.Set(l, clients)
		return result.Result{RunID: runID, Target: target, Round: result.RoundApp, Workload: "appfit:" + name, Labels: l}
	}
	lockSeen := "refused to the second client while held"
	if lock == "broken" {
		lockSeen = "both clients held the same write lock"
	}
	l := map[string]string{}
	result.LabelSQLiteJournal.Set(l, "wal")
	result.LabelSQLiteSynchronous.Set(l, "full")
	result.LabelSQLiteClients.Set(l, "1")
	result.LabelFlushesPerCommit.Set(l, "1.02")
	return []result.Result{
		sem("fcntl-lock", lock, lockSeen),
		sem("fsync-read-back", fsync, "fsync returned after 3µs but the disk loop3 wrote only 0 KiB of the 4096 KiB"),
		{RunID: runID, Target: target, Round: result.RoundApp, Workload: "sqlite:wal-full", Labels: l,
			Write: &result.Direction{IOPS: rate, Completion: result.Latency{Samples: 100,
				Percentiles: []result.Percentile{{P: 50, Value: p99 / 10}, {P: 99, Value: p99}}}}},
	}
}

func TestSQLiteVerdict(t *testing.T) {
	twoNodes := "one client on node-a, one on node-b"
	tests := []struct {
		name    string
		results []result.Result
		status  Status
		summary string
	}{
		{"fine", appResults("longhorn", "r1", "works", twoNodes, "works", 212, 9800*time.Microsecond), Pass,
			"longhorn: locks work; 212 commits/s (WAL, FULL), p99 9.8 ms: fine for Home Assistant's recorder"},
		{"locks not shared between nodes", appResults("netfs", "r1", "broken", twoNodes, "not applicable", 300, 4*time.Millisecond), Warn,
			"netfs: file locks are not shared between nodes: a SQLite database opened from two nodes can be corrupted; one node at a time is safe"},
		{"locks broken on one host", appResults("sshfs", "r1", "broken", "two processes on this host", "works", 300, 4*time.Millisecond), Fail,
			"two processes opening one SQLite database can corrupt it"},
		{"fsync dropped", appResults("testcsi-nofsync", "r1", "works", twoNodes, "broken", 9000, time.Millisecond), Fail,
			"a power loss can lose committed transactions"},
		{"slow commits", appResults("sd-card", "r1", "works", twoNodes, "works", 20, 400*time.Millisecond), Warn,
			"fine for one app on one node"},
		{"too slow", appResults("usb-hdd", "r1", "works", twoNodes, "works", 4, 2*time.Second), Fail,
			"4 commits/s (WAL, FULL), p99 2 s"},
		{"newest run only", append(appResults("disk", "r1", "broken", twoNodes, "works", 1, time.Second),
			appResults("disk", "r2", "works", twoNodes, "works", 500, time.Millisecond)...), Pass, "disk: locks work; 500 commits/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := SQLiteVerdict(tt.results)
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != tt.status || !strings.Contains(v.Summary, tt.summary) {
				t.Errorf("got %s %q, want %s with %q", v.Status, v.Summary, tt.status, tt.summary)
			}
			for _, c := range v.Checks {
				if c.Source == "" || c.Threshold == "" {
					t.Errorf("check %q has no threshold or source", c.Name)
				}
			}
		})
	}
	var missing *MissingError
	if _, err := SQLiteVerdict([]result.Result{{Round: result.RoundIsolated, Workload: "etcd-fdatasync"}}); !errors.As(err, &missing) {
		t.Errorf("no app results: err %v, want a MissingError", err)
	}
}

func TestClassAppAnswer(t *testing.T) {
	q := func(outcome, reason string) *ClassQualification {
		return &ClassQualification{Checks: []ClassCheck{{Name: "app-fit", Outcome: outcome, Reason: reason}}}
	}
	for _, tt := range []struct {
		name string
		q    *ClassQualification
		want string
	}{
		{"not measured", nil, "-"},
		{"quick profile", q("skipped", "full profile only"), "-"},
		{"warn", q("works", "warn: netfs: file locks are not shared between nodes"), "warn"},
		{"pass", q("works", "pass: longhorn: locks work"), "pass"},
		{"failed", q("failed", "fsync dropped"), "fail"},
	} {
		if got := ClassAppAnswer(tt.q, ForSQLite); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
