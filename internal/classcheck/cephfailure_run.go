package classcheck

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/ceph"
)

// opBytes is the size of each of the block writer's operations.
const opBytes = 256 << 10

// The block writer's phases: it writes each phase's operations to a ring
// of files of its own, so the last ones of every phase stay to be read
// back, and the volume never holds more than three rings.
var phases = []string{"before", "during", "after"}

// blockWriter writes one file of random data per operation, fsynced, in
// place in the ring of the phase named in /tmp/phase (outside the volume:
// storbench switches it while Ceph is degraded), then prints the
// operation's number, file and sha256: a line storbench has read is an
// acknowledged operation, and its time of arrival the operation's end. It
// stops between operations once /tmp/stop exists, so that no write is in
// flight when the files are read back.
func blockWriter(ring int) string {
	return `d=` + MountPath + `/ops; mkdir -p $d && echo before > /tmp/phase && rm -f /tmp/stop && i=0; ` +
		`while [ ! -e /tmp/stop ]; do i=$((i+1)); read p < /tmp/phase; f=$p.$(( (i-1) % ` + strconv.Itoa(ring) + ` + 1 )); ` +
		`dd if=/dev/urandom of=$d/$f bs=` + strconv.Itoa(opBytes) + ` count=1 conv=fsync 2>/dev/null || exit 1; ` +
		`echo "$i $f $(sha256sum $d/$f | cut -d' ' -f1)"; done`
}

// ringFiles is how many files each phase's ring has: three rings fill at
// most three quarters of the claim, and at least 4 files each.
func ringFiles(claimBytes int64) int {
	return max(4, int(claimBytes*3/4/3/opBytes))
}

// op is one acknowledged write.
type op struct {
	n    int
	at   time.Time
	file string // "during.7"
	sum  string
}

// opLog reads the block writer's output: each acknowledged operation with
// its time.
type opLog struct {
	mu      sync.Mutex
	partial string
	ops     []op
}

func (l *opLog) Write(p []byte) (int, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := strings.Split(l.partial+string(p), "\n")
	l.partial = lines[len(lines)-1]
	for _, line := range lines[:len(lines)-1] {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		if n, err := strconv.Atoi(f[0]); err == nil {
			l.ops = append(l.ops, op{n: n, at: now, file: f[1], sum: f[2]})
		}
	}
	return len(p), nil
}

// await waits until the writer has acknowledged a write to a file of the
// phase, checking every 100 ms, at most timeout; it fails sooner when ctx
// ends or the writer stops.
func (l *opLog) await(ctx context.Context, phase string, timeout time.Duration, done chan error) error {
	deadline := time.Now().Add(timeout)
	for {
		for _, o := range l.snapshot() {
			if strings.HasPrefix(o.file, phase+".") {
				return nil
			}
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("the writer acknowledged no write of phase %q within %s", phase, timeout)
		}
		if err := pause(ctx, min(100*time.Millisecond, time.Until(deadline)), done); err != nil {
			return err
		}
	}
}

func (l *opLog) snapshot() []op {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]op(nil), l.ops...)
}

// osdFailure is what the check measured, stamps from the hold (t0).
type osdFailure struct {
	t0, markedDown, released, up, clean, end time.Time
	degradedPGs                              int
	ops                                      []op
}

// longestStall is the longest time without an acknowledged operation
// from the last one before t0 to the end, and when it began.
func (f osdFailure) longestStall() (gap time.Duration, from time.Time) {
	prev := time.Time{}
	for _, o := range f.ops {
		if !prev.IsZero() && !o.at.Before(f.t0) && o.at.Sub(prev) > gap {
			gap, from = o.at.Sub(prev), prev
		}
		prev = o.at
	}
	if !prev.IsZero() && f.end.Sub(prev) > gap {
		gap, from = f.end.Sub(prev), prev
	}
	return gap, from
}

// bytesPerSec is the throughput of the operations acknowledged in
// [from, to).
func (f osdFailure) bytesPerSec(from, to time.Time) float64 {
	if !to.After(from) {
		return 0
	}
	n := 0
	for _, o := range f.ops {
		if !o.at.Before(from) && o.at.Before(to) {
			n++
		}
	}
	return float64(n*opBytes) / to.Sub(from).Seconds()
}

// verifyOps checks the last acknowledged write to every file against the
// checksums read back (sha256sum's output), once the writer has stopped
// between operations: none may be lost or damaged. It returns how many
// were verified per phase (before, during, after the hold).
func verifyOps(f osdFailure, sums string) ([3]int, error) {
	got := map[string]string{}
	for _, line := range strings.Split(sums, "\n") {
		if s, name, ok := strings.Cut(strings.TrimSpace(line), "  "); ok {
			got[name] = s
		}
	}
	last := map[string]op{}
	for _, o := range f.ops {
		last[o.file] = o
	}
	var n [3]int
	for file, o := range last {
		switch s, ok := got[file]; {
		case !ok:
			return n, fmt.Errorf("file %s of acknowledged write %d (at %s from the hold) is missing", file, o.n, o.at.Sub(f.t0).Round(time.Millisecond))
		case s != o.sum:
			return n, fmt.Errorf("file %s of acknowledged write %d (at %s from the hold) reads back with sha256 %s, written %s", file, o.n, o.at.Sub(f.t0).Round(time.Millisecond), s, o.sum)
		}
		phase, _, _ := strings.Cut(file, ".")
		i := slices.Index(phases, phase)
		if i < 0 {
			return n, fmt.Errorf("the writer acknowledged file %s of no phase", file)
		}
		n[i]++
	}
	return n, nil
}

// cephFailure holds the preflight's OSD down while a writer runs on a
// volume of the class, lets it back, waits for active+clean, and reads
// every acknowledged write back by checksum.
func (r *run) cephFailure(ctx context.Context) Check {
	start := time.Now()
	cf, t := r.o.CephFailure, r.cephAt
	if cf == nil || t == nil {
		return Check{Outcome: Skipped, Reason: "opt-in: it holds a Ceph OSD down (--ceph-osd-failure)"}
	}
	// Verified again right before acting: the earlier checks ran meanwhile.
	s, err := readCephState(ctx, cf.Ceph)
	if err == nil {
		err = cephRefusal(t.pool, []int{t.osd}, t.osd, s)
	}
	if err != nil {
		return failed(start, fmt.Errorf("not holding osd.%d down: %w", t.osd, err))
	}
	v, err := r.startVolume(ctx, claimSpec{}, podSpec{})
	defer func() { r.release(ctx, []*volume{v}) }()
	if err != nil {
		return failed(start, err)
	}
	w := &opWriter{pod: v.pod, log: &opLog{}, done: make(chan error, 1)}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_, err := r.execStream(wctx, v.pod, w.log, "sh", "-c", blockWriter(ringFiles(r.o.Size)))
		w.done <- err
	}()
	f, err := r.holdOSD(ctx, w)
	if err != nil {
		return failed(start, err)
	}
	// The writer stops between operations: nothing in flight to read back.
	if _, err := r.exec(ctx, v.pod, nil, "touch", "/tmp/stop"); err != nil {
		return failed(start, fmt.Errorf("stopping the writer: %w", err))
	}
	select {
	case err := <-w.done:
		if err != nil {
			return failed(start, fmt.Errorf("the writer: %w", err))
		}
	case <-time.After(r.o.Timeout):
		return failed(start, fmt.Errorf("the writer did not stop within %s of being asked", r.o.Timeout))
	}
	f.ops = w.log.snapshot()
	sums, err := r.exec(ctx, v.pod, nil, "sh", "-c", "cd "+MountPath+"/ops && sha256sum *")
	if err != nil {
		return failed(start, fmt.Errorf("reading the writes back: %w", err))
	}
	n, err := verifyOps(f, sums)
	if err != nil {
		return failed(start, err)
	}
	return r.cephFailureCheck(f, n)
}

// holdOSD runs the failure under the writer: about 3 s of writes before,
// the hold, the release, the wait for active+clean, then writes until one
// is acknowledged again (the PGs re-peer as the OSD returns, and writes
// wait meanwhile: a loaded cluster has stalled them past active+clean),
// and 3 s more.
// The OSD is let back whatever happens (Ctrl-C included).
func (r *run) holdOSD(ctx context.Context, w *opWriter) (osdFailure, error) {
	cf, osd, done := r.o.CephFailure, r.cephAt.osd, w.done
	var f osdFailure
	if err := pause(ctx, 3*time.Second, done); err != nil {
		return f, err
	}
	if len(w.log.snapshot()) == 0 {
		return f, fmt.Errorf("the writer acknowledged nothing in 3 s")
	}
	h := ceph.HeldDown{OSD: osd, RunID: r.runID, Since: time.Now(), StoppedWith: withOSD(cf.StopCommand, osd)}
	r.cephHeld = append(r.cephHeld, h)
	defer func() {
		if errs := r.releaseHeld(context.WithoutCancel(ctx)); len(errs) > 0 {
			r.notes = append(r.notes, errs...)
		}
	}()
	var err error
	if f.t0, err = r.takeOut(ctx, h); err != nil {
		return f, err
	}
	if f.markedDown, err = waitOSD(ctx, cf.Ceph, osd, false, time.Minute); err != nil {
		return f, err
	}
	r.progress("%s: %s: osd.%d marked down %s after the hold", r.o.Class, CheckCephOSDFailure, osd, f.markedDown.Sub(f.t0).Round(time.Millisecond))
	if err := r.setPhase(ctx, w, "during"); err != nil {
		return f, err
	}
	// The most PGs Ceph's manager reported degraded during the hold (its
	// PG figures lag the OSD map by a few seconds).
	for until := f.markedDown.Add(cf.Hold); time.Now().Before(until); {
		if pgs, err := cf.Ceph.PGStat(ctx); err == nil {
			f.degradedPGs = max(f.degradedPGs, pgs.Degraded())
		}
		if err := pause(ctx, min(time.Second, time.Until(until)), done); err != nil {
			return f, err
		}
	}
	f.released = time.Now()
	if errs := r.releaseHeld(ctx); len(errs) > 0 {
		return f, fmt.Errorf("letting osd.%d back: %s", osd, strings.Join(errs, "; "))
	}
	if f.up, err = waitOSD(ctx, cf.Ceph, osd, true, 2*time.Minute); err != nil {
		return f, err
	}
	if err := r.setPhase(ctx, w, "after"); err != nil {
		return f, err
	}
	if f.clean, err = waitClean(ctx, cf.Ceph, cf.Recovery); err != nil {
		return f, err
	}
	if err := w.log.await(ctx, "after", cf.Recovery, done); err != nil {
		return f, fmt.Errorf("osd.%d up and its PGs active+clean, but %w", osd, err)
	}
	err = pause(ctx, 3*time.Second, done)
	f.end = time.Now()
	return f, err
}

// takeOut takes the OSD out, recorded first: held down through Ceph's
// API, or stopped with the user's command. It returns when the command
// that takes it out was sent.
func (r *run) takeOut(ctx context.Context, h ceph.HeldDown) (time.Time, error) {
	cf := r.o.CephFailure
	if cf.Stop == nil {
		return cf.Ceph.HoldDown(ctx, h)
	}
	if err := cf.Ceph.Record(ctx, h); err != nil {
		return time.Time{}, err
	}
	t0 := time.Now()
	if err := cf.Stop(ctx, h.OSD); err != nil {
		return t0, fmt.Errorf("stopping osd.%d with %q: %w", h.OSD, cf.StopCommand, err)
	}
	return t0, nil
}

// opWriter is the block writer running in pod.
type opWriter struct {
	pod  string
	log  *opLog
	done chan error
}

// setPhase tells the writer which ring its next operations go to.
func (r *run) setPhase(ctx context.Context, w *opWriter, phase string) error {
	if _, err := r.exec(ctx, w.pod, nil, "sh", "-c", "echo "+phase+" > /tmp/phase"); err != nil {
		return fmt.Errorf("switching the writer to phase %s: %w", phase, err)
	}
	return nil
}

// pause waits d, or less when ctx ends or the writer stops (an error).
func pause(ctx context.Context, d time.Duration, done chan error) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-done:
		done <- err
		return fmt.Errorf("the writer stopped: %v", err)
	case <-time.After(d):
		return nil
	}
}

// waitOSD polls the OSD map until the OSD is up (or down), every 100 ms.
func waitOSD(ctx context.Context, c ceph.Client, osd int, up bool, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err := c.OSDMap(ctx)
		if err != nil {
			return time.Time{}, err
		}
		for _, o := range m.OSDs {
			if o.ID == osd && o.Up == up {
				return time.Now(), nil
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("osd.%d not up=%t within %s", osd, up, timeout)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitClean polls `ceph pg stat` until every PG is active+clean.
func waitClean(ctx context.Context, c ceph.Client, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		s, err := c.PGStat(ctx)
		if err != nil {
			return time.Time{}, err
		}
		if s.Clean() {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("PGs not active+clean within %s after the OSD came back: %s", timeout, s)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// cephFailureCheck states the measurement as the check's answer.
func (r *run) cephFailureCheck(f osdFailure, verified [3]int) Check {
	osd, first := r.cephAt.osd, f.t0
	if len(f.ops) > 0 {
		first = f.ops[0].at
	}
	stall, from := f.longestStall()
	before, during, after := f.bytesPerSec(first, f.t0), f.bytesPerSec(f.markedDown, f.released), f.bytesPerSec(f.up, f.end)
	stages := []Stage{
		{Name: "marked-down", Samples: []time.Duration{f.markedDown.Sub(f.t0)}},
		{Name: "longest-stall", Samples: []time.Duration{stall}},
		{Name: "released", Samples: []time.Duration{f.released.Sub(f.t0)}},
		{Name: "up", Samples: []time.Duration{f.up.Sub(f.released)}},
		{Name: "active-clean", Samples: []time.Duration{f.clean.Sub(f.up)}},
	}
	how, back := fmt.Sprintf("held down (ceph osd add-noup, ceph osd down, through the ceph CLI %s)", r.o.CephFailure.Where), "ceph osd rm-noup"
	if cf := r.o.CephFailure; cf.Stop != nil {
		how, back = fmt.Sprintf("stopped with %q (Ceph read through the ceph CLI %s)", withOSD(cf.StopCommand, osd), cf.Where), fmt.Sprintf("%q", withOSD(cf.StartCommand, osd))
	}
	reason := fmt.Sprintf("osd.%d of pool %s %s: marked down %s after; "+
		"the writer's longest stall %s (from %s after the hold); at most %d PGs degraded; throughput %.1f MB/s before, %.1f MB/s while down, %.1f MB/s after; "+
		"up %s after %s, active+clean %s after it was up; %d writes of %d KiB acknowledged, the last to each file read back by sha256: %d written before, %d while down, %d after",
		osd, r.cephAt.pool.Name, how, f.markedDown.Sub(f.t0).Round(time.Millisecond), stall.Round(time.Millisecond),
		from.Sub(f.t0).Round(time.Millisecond), f.degradedPGs, before/1e6, during/1e6, after/1e6,
		f.up.Sub(f.released).Round(time.Millisecond), back, f.clean.Sub(f.up).Round(time.Millisecond),
		len(f.ops), opBytes>>10, verified[0], verified[1], verified[2])
	return Check{Outcome: Works, Took: f.clean.Sub(f.t0), Stages: stages, Reason: reason}
}
