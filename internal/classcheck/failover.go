package classcheck

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// recordWriter appends sequence-numbered records to a file on the volume,
// fsyncing each before printing its number: a number storbench has read
// is an acknowledged record.
const recordWriter = `i=0; while :; do i=$((i+1)); echo "rec $i storbench" >> ` + MountPath + `/records; sync ` + MountPath + `/records || exit 1; echo $i; done`

// ackCounter reads the writer's standard output: the highest number seen.
type ackCounter struct {
	mu      sync.Mutex
	partial string
	acked   int
}

func (a *ackCounter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.partial + string(p)
	lines := strings.Split(s, "\n")
	a.partial = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil && n > a.acked {
			a.acked = n
		}
	}
	return len(p), nil
}

func (a *ackCounter) value() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acked
}

// checkRecords verifies that the records file holds every acknowledged
// record, in order and intact. Records after the last acknowledged one may
// be present or torn: the old writer may have added them after storbench
// stopped listening.
func checkRecords(content string, acked int) (int, error) {
	var lines []string
	if content != "" {
		lines = strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	}
	for i := 1; i <= acked; i++ {
		if i > len(lines) {
			return i - 1, fmt.Errorf("only %d of %d acknowledged records read back", i-1, acked)
		}
		if l := lines[i-1]; l != fmt.Sprintf("rec %d storbench", i) {
			return i - 1, fmt.Errorf("record %d is %q: acknowledged records lost or damaged (%d acknowledged)", i, l, acked)
		}
	}
	return acked, nil
}

// pinnedEvent is the scheduler refusing every node for the volume's node
// affinity: "volume node affinity conflict" before v1.33, "didn't match
// PersistentVolume's node affinity" from v1.33 on.
func pinnedEvent(e string) bool {
	return strings.HasPrefix(e, "FailedScheduling") &&
		(strings.Contains(e, "volume node affinity conflict") || strings.Contains(e, "didn't match PersistentVolume's node affinity"))
}

// errPinned is the scheduler refusing the moved pod because the volume is
// tied to the node it left.
type errPinned struct{ event string }

func (e *errPinned) Error() string { return "node-pinned: " + e.event }

// failover moves a writer off its node the graceful way (cordon, delete)
// and times until its acknowledged records read back intact on another
// node. A volume the scheduler cannot move is the measured answer
// "node-pinned", taken from the scheduler's event.
func (r *run) failover(ctx context.Context) Check {
	start := time.Now()
	if r.o.NoCordon {
		return Check{Outcome: Skipped, Reason: "--no-cordon: it cordons a node"}
	}
	if len(r.nodes) < 2 {
		return Check{Outcome: Skipped, Reason: "needs two schedulable nodes"}
	}
	w, err := r.startWriter(ctx, "")
	defer func() { r.release(ctx, w.vols) }()
	if err != nil {
		return failed(start, err)
	}
	from := w.from

	// The move: cordon the node, stop listening (later records do not
	// count), delete the pod, start another.
	t0 := time.Now()
	r.cordoned = append(r.cordoned, from)
	defer func() {
		// Uncordoned as soon as the check ends; cleanup retries what fails.
		if n := len(r.cordoned); n > 0 && r.cordoned[n-1] == from {
			if err := r.setUnschedulable(context.WithoutCancel(ctx), from, false); err == nil {
				r.cordoned = r.cordoned[:n-1]
			}
		}
	}()
	if err := r.setUnschedulable(ctx, from, true); err != nil {
		w.stop()
		return failed(start, err)
	}
	acked := w.acks.value()
	w.stop()
	<-w.done
	if _, err := r.deletePod(ctx, w.v.pod); err != nil {
		return failed(start, err)
	}
	moved, err := r.moveWriter(ctx, w, r.o.Timeout)
	var pinned *errPinned
	if errors.As(err, &pinned) {
		at, _ := r.tl.at(key("event", moved.pod), "FailedScheduling")
		return Check{Outcome: NotSupportedMeasured, Reason: "node-pinned: the scheduler: " + pinned.event, Took: at.Sub(t0)}
	}
	if err != nil {
		return failed(start, err)
	}
	n, to, stages, err := r.readBack(ctx, w, moved, acked, t0)
	if err != nil {
		return failed(start, err)
	}
	return Check{Outcome: Works, Took: stages[len(stages)-1].Samples[0], Stages: stages,
		Reason: fmt.Sprintf("graceful (cordon, delete) from %s to %s: %d acknowledged records intact", from, to, n)}
}

// writer is a pod appending acknowledged records to its volume.
type writer struct {
	v    *volume
	from string // the writer's node
	acks *ackCounter
	stop context.CancelFunc
	done chan error
	// vols are the volumes to delete when the check ends (the writer's,
	// then the moved pod's).
	vols []*volume
}

// startWriter starts a volume with a pod (on node, or where the scheduler
// puts it) and its record writer. w.vols is set even on error.
func (r *run) startWriter(ctx context.Context, node string) (*writer, error) {
	v, err := r.startVolume(ctx, claimSpec{}, podSpec{node: node})
	w := &writer{v: v, vols: []*volume{v}}
	if err != nil {
		return w, err
	}
	if p := r.tl.latestPod(v.pod); p != nil {
		w.from = p.Spec.NodeName
	}
	w.acks, w.stop, w.done, err = r.startRecords(ctx, v.pod)
	return w, err
}

// moveWriter starts another pod on the writer's claim and waits until it
// runs; an *errPinned error is the scheduler refusing it for the volume's
// node affinity.
func (r *run) moveWriter(ctx context.Context, w *writer, timeout time.Duration) (*volume, error) {
	moved := &volume{claim: w.v.claim, pod: r.name("moved")}
	w.vols = append(w.vols, moved)
	if _, err := r.createPod(ctx, podSpec{name: moved.pod, claim: w.v.claim}); err != nil {
		return moved, err
	}
	_, err := r.tl.wait(ctx, waitSpec{key: key("pod", moved.pod), milestone: msRunning, timeout: timeout,
		giveUp: func() error {
			for _, e := range r.tl.eventsOf(moved.pod) {
				if pinnedEvent(e) {
					return &errPinned{event: e}
				}
			}
			return r.stuck(moved.pod, "")
		}})
	var pinned *errPinned
	if err != nil && !errors.As(err, &pinned) {
		err = r.explain(err, moved.pod, w.v.claim)
	}
	return moved, err
}

// readBack reads the records on the moved pod and checks the acknowledged
// ones; it returns how many, the new node, and the move's stages from t0
// (read-back last).
func (r *run) readBack(ctx context.Context, w *writer, moved *volume, acked int, t0 time.Time) (int, string, []Stage, error) {
	out, err := r.exec(ctx, moved.pod, nil, "cat", MountPath+"/records")
	if err != nil {
		return 0, "", nil, err
	}
	readBack := time.Now()
	n, err := checkRecords(out, acked)
	if err != nil {
		return n, "", nil, err
	}
	to := ""
	if p := r.tl.latestPod(moved.pod); p != nil {
		to = p.Spec.NodeName
	}
	var stages []Stage
	pv := r.tl.volumeOf(w.v.claim)
	for _, s := range []struct{ name, k, ms string }{
		{"old-pod-gone", key("pod", w.v.pod), msGone},
		{"detached", key("pv", pv), "detached:" + w.from},
		{"attached", key("pv", pv), "attached:" + to},
		{"pod-running", key("pod", moved.pod), msRunning},
	} {
		if at, ok := r.tl.at(s.k, s.ms); ok && at.After(t0) {
			stages = append(stages, Stage{Name: s.name, Samples: []time.Duration{at.Sub(t0)}})
		}
	}
	stages = append(stages, Stage{Name: "read-back", Samples: []time.Duration{readBack.Sub(t0)}})
	return n, to, stages, nil
}

// startRecords starts the record writer in pod and waits until it has
// acknowledged some records (at most 5 s); stop ends it, done gives its end.
func (r *run) startRecords(ctx context.Context, pod string) (acks *ackCounter, stop context.CancelFunc, done chan error, err error) {
	acks = &ackCounter{}
	wctx, stop := context.WithCancel(ctx)
	done = make(chan error, 1)
	go func() {
		_, err := r.execStream(wctx, pod, acks, "sh", "-c", recordWriter)
		done <- err
	}()
	for t := time.Now(); acks.value() < 20 && time.Since(t) < 5*time.Second; {
		time.Sleep(50 * time.Millisecond)
	}
	if acks.value() == 0 {
		stop()
		return nil, nil, nil, fmt.Errorf("the record writer acknowledged nothing: %v", <-done)
	}
	return acks, stop, done, nil
}
