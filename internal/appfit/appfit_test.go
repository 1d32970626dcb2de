package appfit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, line string
		want       DiskCounters
		err        string
	}{
		{"linux 5.5 and later", "  120 0 960 12 4372 10 85768 900 0 300 912 0 0 0 0 1658 40",
			DiskCounters{Writes: 4372, SectorsWrite: 85768, Flushes: 1658}, ""},
		{"before flush counters", "120 0 960 12 44 10 8576 900 0 300 912",
			DiskCounters{Writes: 44, SectorsWrite: 8576, Flushes: -1}, ""},
		{"short", "1 2 3", DiskCounters{}, "3 fields"},
		{"garbage", "1 2 3 4 x 6 7 8 9 10 11", DiskCounters{}, "writes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat(tt.line)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v %v, want %+v", got, err, tt.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	first := []Answer{{Name: ODirect, Outcome: Works, Seen: "ok"},
		{Name: FsyncReadBack, Outcome: Broken, Seen: "the disk wrote only 0 KiB", Evidence: []string{"disk loop3"}}}
	second := []Answer{{Name: FcntlLock, Outcome: Broken, Seen: "both clients held the same write lock"},
		{Name: FsyncReadBack, Outcome: Works, Seen: "read back", Evidence: []string{"4096 KiB"}},
		{Name: MmapMsync, Outcome: NotApplicable, Seen: "the writer failed"}}
	got := Merge(first, second)
	var names []string
	for _, a := range got {
		names = append(names, a.Name+"="+string(a.Outcome))
	}
	want := "fcntl-lock=broken o-direct=works fsync-read-back=broken mmap-msync=not applicable"
	if strings.Join(names, " ") != want {
		t.Fatalf("merged %v, want %s", names, want)
	}
	f := got[2]
	if f.Seen != "the disk wrote only 0 KiB; read back" || len(f.Evidence) != 2 {
		t.Errorf("fsync merged as %+v: the broken side's finding first, both sides' evidence", f)
	}
}

func TestDistribution(t *testing.T) {
	var s []time.Duration
	for i := 1000; i >= 1; i-- {
		s = append(s, time.Duration(i)*time.Microsecond)
	}
	l := Distribution(s)
	for p, want := range map[float64]time.Duration{50: 500 * time.Microsecond, 99: 990 * time.Microsecond, 99.9: 999 * time.Microsecond} {
		if got, ok := l.At(p); !ok || got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if l.Min != time.Microsecond || l.Max != time.Millisecond || l.Samples != 1000 {
		t.Errorf("min %v max %v samples %d", l.Min, l.Max, l.Samples)
	}
	if e := Distribution(nil); e.Samples != 0 || len(e.Percentiles) != 0 {
		t.Errorf("no samples gave %+v", e)
	}
}

// The probe's directories are the only ones its clients create in or
// remove.
func TestRefusesOtherDirectories(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "data")
	if err := os.Mkdir(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, j := range []Job{{Role: RoleRemove, Dir: keep}, {Role: string(First), Dir: keep},
		{Role: RoleSQLite, Dir: keep, Journal: JournalWAL, Synchronous: SyncFull}} {
		if _, err := Do(ctx, j); err == nil || !strings.Contains(err.Error(), WorkDirPrefix) {
			t.Errorf("%s on %s: err %v, want a refusal naming %s", j.Role, keep, err, WorkDirPrefix)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the directory is gone: %v", err)
	}
	if _, err := Do(ctx, Job{Role: "third", Dir: keep}); err == nil {
		t.Error("an unknown role was accepted")
	}
	if _, err := MeasureSQLite(ctx, SQLiteOptions{Dir: filepath.Join(dir, WorkDirPrefix+"x"), Journal: "memory", Synchronous: SyncFull}); err == nil ||
		!strings.Contains(err.Error(), "journal") {
		t.Errorf("journal memory: err %v", err)
	}
}
