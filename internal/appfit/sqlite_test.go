package appfit

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"
)

// The figures against SQLite's own behaviour, on a loop device whose
// counters are storbench's alone: synchronous=OFF commits faster than
// FULL, and with FULL every commit flushes the disk at least once (WAL
// syncs the log at each commit; the rollback journal syncs the journal and
// the database).
func TestSQLiteAgainstItsOwnBehaviour(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("loop device, mounts and storbench processes")
	}
	dir := ext4(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	modes := []Mode{{JournalWAL, SyncFull}, {JournalWAL, SyncOff}, {JournalRollback, SyncFull}, {JournalRollback, SyncOff}}
	got, err := BenchSQLite(ctx, SQLiteBenchOptions{Clients: []Client{localClient(t, dir)}, ID: "t" + strconv.Itoa(os.Getpid()),
		Modes: modes, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	leftovers(t, dir)
	rate := map[Mode]float64{}
	for _, m := range got {
		c := m.Clients[0]
		p99, _ := c.Latency.At(99)
		t.Logf("%s: %d commits, %.0f/s, p99 %s, disk %s %+v, rows %v, integrity %s", m.Mode, c.Commits, c.CommitsPerSec(), p99,
			c.Disk, c.DiskDelta, m.Check.Rows, m.Check.Integrity)
		rate[m.Mode] = c.CommitsPerSec()
		switch {
		case c.Commits < 10:
			t.Errorf("%s: %d commits in a second", m.Mode, c.Commits)
		case m.Check.Integrity != "ok" || m.Lost() != 0:
			t.Errorf("%s: integrity %q, %d committed rows missing", m.Mode, m.Check.Integrity, m.Lost())
		case c.DiskDelta == nil || c.DiskDelta.Flushes < 0:
			t.Fatalf("%s: the loop device's flushes were not counted (%s)", m.Mode, c.DiskNote)
		case m.Mode.Synchronous == SyncFull && c.FlushesPerCommit() < 1:
			t.Errorf("%s: %.2f disk flushes per commit, want at least one", m.Mode, c.FlushesPerCommit())
		}
	}
	for _, j := range []string{JournalWAL, JournalRollback} {
		if off, full := rate[Mode{j, SyncOff}], rate[Mode{j, SyncFull}]; off <= full {
			t.Errorf("%s: synchronous=OFF %.0f commits/s, not faster than FULL %.0f", j, off, full)
		}
	}
}

// Two clients (two processes) commit to one database at once: every
// commit of each is in it and SQLite finds it sound.
func TestSQLiteTwoClients(t *testing.T) {
	if testing.Short() {
		t.Skip("storbench processes")
	}
	dir := t.TempDir()
	c := localClient(t, dir)
	got, err := BenchSQLite(context.Background(), SQLiteBenchOptions{Clients: []Client{c, c}, ID: "two",
		Modes: []Mode{{JournalWAL, SyncNormal}, {JournalRollback, SyncNormal}}, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	leftovers(t, dir)
	for _, m := range got {
		t.Logf("%s: %d + %d commits, rows %v, integrity %s", m.Mode, m.Clients[0].Commits, m.Clients[1].Commits, m.Check.Rows, m.Check.Integrity)
		if m.Clients[0].Commits == 0 || m.Clients[1].Commits == 0 || m.Lost() != 0 || m.Check.Integrity != "ok" {
			t.Errorf("%s: %+v", m.Mode, m)
		}
	}
}
