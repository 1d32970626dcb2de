package ceph

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The testdata/ outputs were captured from test/cluster/ceph.sh's standalone
// Ceph 16.2.15 (three OSD nodes, size-3 pool rbd with 32 PGs); the *-20MBps
// and *-100mbit files during a 4 MiB sequential write with osd.2's disk
// throttled to 20 MiB/s, or with sbceph-node-3's link shaped to 100 Mbit/s.
// fsid.json is `ceph fsid -f json` from another bring-up of the same harness.

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOSDsFromTreeAndMetadata(t *testing.T) {
	osds, err := ParseOSDTree(read(t, "osd-tree.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := AddMetadata(osds, read(t, "osd-metadata.json")); err != nil {
		t.Fatal(err)
	}
	want := []OSD{
		{ID: 0, Name: "osd.0", Host: "sbceph-node-1", Up: true, DeviceClass: "hdd", Devices: []string{"vda"}, Rotational: true,
			Objectstore: "bluestore", DataPath: "/var/tmp/storbench-ceph-t1/osd/ceph-0", Addr: "10.97.1.11", Port: 6800},
		{ID: 1, Name: "osd.1", Host: "sbceph-node-2", Up: true, DeviceClass: "hdd", Devices: []string{"vda"}, Rotational: true,
			Objectstore: "bluestore", DataPath: "/var/tmp/storbench-ceph-t1/osd/ceph-1", Addr: "10.97.1.12", Port: 6800},
		{ID: 2, Name: "osd.2", Host: "sbceph-node-3", Up: true, DeviceClass: "hdd", Devices: []string{"vda"}, Rotational: true,
			Objectstore: "bluestore", DataPath: "/var/tmp/storbench-ceph-t1/osd/ceph-2", Addr: "10.97.1.13", Port: 6800},
	}
	if !reflect.DeepEqual(osds, want) {
		t.Errorf("OSDs:\n got %+v\nwant %+v", osds, want)
	}
}

func TestPoolsAndPrimaryShare(t *testing.T) {
	pools, err := ParsePools(read(t, "osd-pool-ls-detail.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rbd Pool
	for _, p := range pools {
		if p.Name == "rbd" {
			rbd = p
		}
	}
	if want := (Pool{ID: 2, Name: "rbd", Size: 3, MinSize: 2, PGNum: 32}); rbd != want {
		t.Errorf("pool rbd = %+v, want %+v", rbd, want)
	}
	pgs, err := ParsePGs(read(t, "pg-ls-by-pool-rbd.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pgs) != 32 {
		t.Fatalf("%d PGs, want 32", len(pgs))
	}
	for _, pg := range pgs {
		if len(pg.Acting) != 3 || pg.Acting[0] != pg.Primary || pg.State != "active+clean" {
			t.Errorf("PG %+v: want 3 acting OSDs led by the primary, active+clean", pg)
		}
	}
	share := PrimaryShare(pgs)
	sum := 0.0
	for id, s := range share {
		if s <= 0 || s >= 1 {
			t.Errorf("osd.%d leads %.2f of the PGs", id, s)
		}
		sum += s
	}
	if sum < 0.999 || sum > 1.001 || len(share) != 3 {
		t.Errorf("shares %v: want three summing to 1", share)
	}
}

// perfSamples reads a file of `ceph osd perf -f json` outputs one after another.
func perfSamples(t *testing.T, name string) [][]Latency {
	t.Helper()
	out, err := ParsePerfStream(read(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPerf(t *testing.T) {
	idle, err := ParsePerf(read(t, "osd-perf-idle.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Latency{{0, 11 * time.Millisecond, 11 * time.Millisecond}, {1, 11 * time.Millisecond, 11 * time.Millisecond}, {2, 0, 0}}
	if !reflect.DeepEqual(idle, want) {
		t.Errorf("idle perf %v, want %v", idle, want)
	}
	slow := perfSamples(t, "osd-perf-seqwrite-osd2-disk-20MBps.txt")
	if len(slow) < 5 {
		t.Fatalf("%d samples", len(slow))
	}
	// the throttled OSD's commit latency stands out in every sample of the write
	for i, s := range slow {
		if s[2].Commit < 300*time.Millisecond || s[0].Commit > 100*time.Millisecond || s[1].Commit > 100*time.Millisecond {
			t.Errorf("sample %d: %v", i, s)
		}
	}
	if _, err := ParsePerf([]byte(`{"osdstats":`)); err == nil {
		t.Error("a cut output parsed")
	}
}

func TestBench(t *testing.T) {
	tests := []struct {
		file        string
		osd         int
		minMBPerSec float64
		maxMBPerSec float64
	}{
		{"osd-bench-0.json", 0, 100, 5000},
		{"osd-bench-2.json", 2, 100, 5000},
		{"osd-bench-2-slowed.json", 2, 19, 22}, // throttled to 20 MiB/s = 20.97 MB/s
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := ParseBench(tt.osd, read(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if mb := b.BytesPerSec / 1e6; mb < tt.minMBPerSec || mb > tt.maxMBPerSec {
				t.Errorf("%.1f MB/s, want %v-%v", mb, tt.minMBPerSec, tt.maxMBPerSec)
			}
			if b.BytesWritten != 100<<20 || b.BlockBytes != 4<<20 || b.Elapsed <= 0 || b.OSD != tt.osd {
				t.Errorf("bench %+v", b)
			}
		})
	}
	if _, err := ParseBench(1, []byte(`{"error": "x"}`)); err == nil {
		t.Error("an output without bytes_per_sec parsed")
	}
}

func TestBenchGuardRails(t *testing.T) {
	tests := []struct {
		name string
		req  BenchRequest
		ok   bool
	}{
		{"defaults", BenchRequest{OSD: 1}, true},
		{"1 GiB in 4 MiB", BenchRequest{TotalBytes: 1 << 30, BlockBytes: 4 << 20}, true},
		{"3000 MiB is the most in large blocks", BenchRequest{TotalBytes: 3000 << 20, BlockBytes: 4 << 20}, true},
		{"over 3000 MiB", BenchRequest{TotalBytes: 3001 << 20, BlockBytes: 4 << 20}, false},
		{"12 MiB in 4 KiB blocks", BenchRequest{TotalBytes: 12 << 20, BlockBytes: 4096}, false},
		{"11 MiB in 4 KiB blocks", BenchRequest{TotalBytes: 11 << 20, BlockBytes: 4096}, true},
		{"block over 64 MiB", BenchRequest{TotalBytes: 1 << 30, BlockBytes: 128 << 20}, false},
		{"total under a block", BenchRequest{TotalBytes: 1 << 20, BlockBytes: 4 << 20}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Check()
			if (err == nil) != tt.ok {
				t.Errorf("Check() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestFSID: `ceph fsid -f json` as Ceph 16.2 prints it, and what is not it.
func TestFSID(t *testing.T) {
	fsid, err := ParseFSID(read(t, "fsid.json"))
	if err != nil || len(fsid) != 36 {
		t.Fatalf("%q, %v: want the cluster's UUID", fsid, err)
	}
	for _, bad := range []string{"", "{}", `{"fsid":""}`, "b09daf9d-4e6a-441d-9f8d-1055c8586f9e"} {
		if _, err := ParseFSID([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
