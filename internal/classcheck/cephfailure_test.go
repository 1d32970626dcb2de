package classcheck

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/ceph"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testdata/ceph/ holds outputs of test/cluster/ceph.sh's standalone Ceph
// 16.2.15 (three OSDs, pool rbd size 3 min_size 2): whole, and with osd.1
// held down (ceph osd add-noup osd.1; ceph osd down osd.1).
func readState(t *testing.T, dump, pgs, health string) cephState {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "ceph", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var s cephState
	var err error
	if s.osds, err = ceph.ParseOSDDump(read(dump)); err != nil {
		t.Fatal(err)
	}
	if s.pgs, err = ceph.ParsePGStat(read(pgs)); err != nil {
		t.Fatal(err)
	}
	if s.health, err = ceph.ParseHealth(read(health)); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCephRefusal(t *testing.T) {
	whole := readState(t, "osd-dump-clean.json", "pg-stat-clean.json", "health-ok.json")
	held := readState(t, "osd-dump-noup-down.json", "pg-stat-degraded.json", "health-noup.json")
	rbd := ceph.Pool{Name: "rbd", Size: 3, MinSize: 2, PGNum: 32}
	acting := []int{0, 1, 2}
	flagged := whole
	flagged.osds.Flags += ",noout"
	for _, tc := range []struct {
		name   string
		pool   ceph.Pool
		osd    int
		state  cephState
		refuse string // "" : allowed
	}{
		{"whole, size 3 min_size 2", rbd, 2, whole, ""},
		{"size 1", ceph.Pool{Name: "rbd", Size: 1, MinSize: 1}, 2, whole, "keeps 1 copy"},
		{"size 2 min_size 2", ceph.Pool{Name: "rbd", Size: 2, MinSize: 2}, 2, whole, "would stop taking I/O"},
		{"an OSD not of the pool", rbd, 7, whole, "does not act for pool rbd"},
		{"already degraded", rbd, 2, held, "osd.1 is already down"},
		{"a cluster flag", rbd, 2, flagged, "cluster flag noout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := cephRefusal(tc.pool, acting, tc.osd, tc.state)
			switch {
			case tc.refuse == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.refuse != "" && (err == nil || !strings.Contains(err.Error(), tc.refuse)):
				t.Errorf("got %v, want a refusal saying %q", err, tc.refuse)
			}
		})
	}
	// The PGs and health alone, with every OSD up: still refused.
	pgsOnly := whole
	pgsOnly.pgs = held.pgs
	if err := cephRefusal(rbd, acting, 2, pgsOnly); err == nil || !strings.Contains(err.Error(), "not every PG is active+clean") {
		t.Errorf("degraded PGs: %v", err)
	}
	healthOnly := whole
	healthOnly.health = held.health
	if err := cephRefusal(rbd, acting, 2, healthOnly); err == nil || !strings.Contains(err.Error(), "OSD_DOWN") {
		t.Errorf("OSD_DOWN health: %v", err)
	}
}

func TestCephPlan(t *testing.T) {
	r := &run{runID: "20261128-130000-abcd", ns: "storbench", o: Options{Class: "cephfs", Only: []string{CheckCephOSDFailure},
		CephFailure: &CephFailure{Where: "on this host (CEPH_CONF, else /etc/ceph/ceph.conf)", Hold: 15 * time.Second}},
		cephAt: &cephTarget{pool: ceph.Pool{Name: "cephfs_data", Size: 3, MinSize: 2}, osd: 2}}
	got := r.plan() + "\n"
	golden := filepath.Join("testdata", "plan-ceph-osd-failure.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
	r.o.CephFailure.Stop = func(context.Context, int) error { return nil }
	r.o.CephFailure.StopCommand, r.o.CephFailure.StartCommand = "ssh node-3 sudo systemctl kill -s KILL ceph-osd@{osd}", "ssh node-3 sudo systemctl start ceph-osd@{osd}"
	got = r.plan() + "\n"
	golden = filepath.Join("testdata", "plan-ceph-osd-stop.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err = os.ReadFile(golden); err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("plan with a stop command:\n%s\nwant:\n%s", got, want)
	}
	// A stop command without a start command is refused before anything.
	err = r.checkCephFailure(context.Background())
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), string(FieldCephFailureStart)) {
		t.Errorf("a stop command without a start command: %v", err)
	}
	// This host's ceph.conf and Rook's toolbox together are refused
	// before anything, naming both fields.
	r.o.CephFailure.Start = func(context.Context, int) error { return nil }
	r.o.CephFailure.Ceph.Conf, r.o.CephFailure.Toolbox = "/etc/ceph/ceph.conf", "rook-ceph"
	err = r.checkCephFailure(context.Background())
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), string(FieldCephFailureConf)) || !strings.Contains(err.Error(), string(FieldCephFailureToolbox)) {
		t.Errorf("a ceph.conf and Rook's toolbox together: %v", err)
	}
	r.o.Only = []string{CheckProvisioning}
	if strings.Contains(r.plan(), "osd") {
		t.Errorf("plan names the OSD check when it is not asked for: %s", r.plan())
	}
}

func TestOSDFailureFigures(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	f := osdFailure{t0: t0, markedDown: at(50), released: at(8000), up: at(9000), clean: at(12000), end: at(15000)}
	// Every 100 ms but a 2.5 s gap after the hold, and none 14-15 s; each
	// phase's writes in a ring of 8 files, as the writer names them.
	files := map[string]string{} // file -> the last sum written to it
	for ms, n := -3000, 1; ms < 14000; ms += 100 {
		if ms > 0 && ms < 2500 {
			continue
		}
		phase := "before"
		if ms >= 50 {
			phase = "during"
		}
		if ms >= 9000 {
			phase = "after"
		}
		o := op{n: n, at: at(ms), file: phase + "." + strconv.Itoa((n-1)%8+1), sum: fmt.Sprintf("sum%d", n)}
		f.ops = append(f.ops, o)
		files[o.file] = o.sum
		n++
	}
	gap, from := f.longestStall()
	if gap != 2500*time.Millisecond || !from.Equal(at(0)) {
		t.Errorf("longest stall %s from %s, want 2.5s from the hold", gap, from.Sub(t0))
	}
	if got := f.bytesPerSec(at(-3000), t0); got != 30*opBytes/3.0 {
		t.Errorf("before: %.0f B/s", got)
	}
	readBack := func(change func(map[string]string)) string {
		m := maps.Clone(files)
		change(m)
		var b strings.Builder
		for file, sum := range m {
			b.WriteString(sum + "  " + file + "\n")
		}
		return b.String()
	}
	last := f.ops[len(f.ops)-1]
	for _, tc := range []struct {
		name   string
		change func(map[string]string)
		want   string // "" : verified
	}{
		{"intact", func(map[string]string) {}, ""},
		{"damaged", func(m map[string]string) { m[last.file] = "x" }, fmt.Sprintf("acknowledged write %d (at", last.n)},
		{"missing", func(m map[string]string) { delete(m, "during.3") }, "during.3 of acknowledged write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := verifyOps(f, readBack(tc.change))
			switch {
			case tc.want == "" && (err != nil || n != [3]int{8, 8, 8}):
				t.Errorf("verified %v, %v; want 8 files of each phase", n, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if r := ringFiles(64 << 20); r != 64 {
		t.Errorf("ring of a 64 MiB claim: %d files, want 64 (48 MiB in three rings)", r)
	}
}

// The after phase waits for the writer's first acknowledged write of it,
// and says so when none comes.
func TestOpLogAwaitsThePhase(t *testing.T) {
	ctx := context.Background()
	l, done := &opLog{}, make(chan error, 1)
	fmt.Fprint(l, "1 before.1 s1\n2 during.2 s2\n3 aft")
	if err := l.await(ctx, "after", 300*time.Millisecond, done); err == nil || !strings.Contains(err.Error(), `no write of phase "after" within 300ms`) {
		t.Errorf("no write of the phase yet (and half a line): %v, want an error naming the phase and the wait", err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		fmt.Fprint(l, "er.3 s3\n")
	}()
	if err := l.await(ctx, "after", time.Minute, done); err != nil {
		t.Errorf("the write came: %v", err)
	}
	done <- fmt.Errorf("exit status 1")
	if err := l.await(ctx, "later", time.Minute, done); err == nil || !strings.Contains(err.Error(), "the writer stopped: exit status 1") {
		t.Errorf("the writer stopped: %v, want an error saying so", err)
	}
}
