package ceph

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestParsePerfDump: osd.0's counters before and after a 5 s write of
// 1 MiB blocks (real Ceph 16.2's output): the means over the write.
func TestParsePerfDump(t *testing.T) {
	read := func(name string) OSDCounters {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParsePerfDump(0, b)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	before, after := read("perf-dump-osd0-before.json"), read("perf-dump-osd0-after-write.json")
	if after.DeviceWait.Count != 1026 || after.DeviceWait.Sum != 1472264314*time.Nanosecond {
		t.Errorf("device wait %+v", after.DeviceWait)
	}
	wait, n := after.DeviceWait.Since(before.DeviceWait)
	commit, _ := after.Commit.Since(before.Commit)
	write, writes := after.ClientWrite.Since(before.ClientWrite)
	t.Logf("over the write: %d transactions, device wait %v, commit %v; %d client writes, %v", n, wait, commit, writes, write)
	if n <= 0 || wait <= 0 || commit < wait || writes <= 0 || write <= 0 {
		t.Errorf("means: %d at %v (commit %v), %d writes at %v", n, wait, commit, writes, write)
	}
	if m, n := before.DeviceWait.Since(after.DeviceWait); m != 0 || n != 0 {
		t.Errorf("a restarted daemon's counters gave %v, %d", m, n)
	}
	if _, err := ParsePerfDump(3, []byte(`{"osd": {}}`)); err == nil {
		t.Error("a dump without bluestore was read")
	}
	if _, err := ParsePerfDump(3, []byte(`{`)); err == nil {
		t.Error("bad JSON was read")
	}
}
