package engine

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

// fio's announcement of the prerun is cut wherever it lands: between two
// lines of a JSON document, split across writes, more than once (one per
// clone); everything else passes, and a complete document is not held
// back waiting for more.
func TestCutWriter(t *testing.T) {
	cut := "w : Saving output of prerun in w.prerun.txt\n"
	doc := "{\n  \"jobs\" : [\n    {\"jobname\" : \"w\"}\n  ]\n}\n"
	stream := "{\n  \"jobs\" : [\n" + cut + "    {\"jobname\" : \"w\"}\n" + cut + "  ]\n}\n"
	for _, size := range []int{1, 3, 7, len(cut) - 1, len(stream)} {
		var out bytes.Buffer
		w := &cutWriter{next: &out, cut: []byte(cut)}
		for i := 0; i < len(stream); i += size {
			if _, err := w.Write([]byte(stream[i:min(i+size, len(stream))])); err != nil {
				t.Fatal(err)
			}
		}
		if out.String() != doc {
			t.Errorf("writes of %d bytes: got %q before flush", size, out.String())
		}
		if err := w.flush(); err != nil || out.String() != doc {
			t.Errorf("writes of %d bytes: got %q after flush (%v)", size, out.String(), err)
		}
	}
	// A tail that only looks like the start of the announcement is kept
	// until the stream says otherwise, then passed whole.
	var out bytes.Buffer
	w := &cutWriter{next: &out, cut: []byte(cut)}
	w.Write([]byte("x\nw : Sav"))
	if out.String() != "x\n" {
		t.Errorf("held %q", out.String())
	}
	w.Write([]byte("ed by the bell\n"))
	if out.String() != "x\nw : Saved by the bell\n" {
		t.Errorf("passed %q", out.String())
	}
}

// The ready signal comes once every clone's gate has spoken, and each I/O
// end line is reported; the markers are taken out of stderr, which
// otherwise passes as written.
func TestMarkerWriter(t *testing.T) {
	ready := make(chan struct{}, 2)
	var out bytes.Buffer
	ends := 0
	m := &markerWriter{next: &out, ready: ready, need: 2, ended: func() { ends++ }}
	m.Write([]byte("fio: a warning\n" + gateMarker[:5]))
	if len(ready) != 0 {
		t.Fatal("ready before any gate")
	}
	m.Write([]byte(gateMarker[5:] + "\nnote: "))
	if len(ready) != 0 {
		t.Fatal("ready after one gate of two")
	}
	m.Write([]byte("half a line, "))
	m.Write([]byte("then more\n" + gateMarker + "\n"))
	if len(ready) != 1 {
		t.Fatalf("%d ready signals after both gates", len(ready))
	}
	m.Write([]byte(endMarker[:4]))
	m.Write([]byte(endMarker[4:] + "\n" + endMarker + "\n"))
	if ends != 2 {
		t.Errorf("%d end reports, want 2", ends)
	}
	m.Write([]byte("tail without newline"))
	if err := m.flush(); err != nil {
		t.Fatal(err)
	}
	if want := "fio: a warning\nnote: half a line, then more\ntail without newline"; out.String() != want {
		t.Errorf("stderr %q, want %q", out.String(), want)
	}
}

// Real fio behind the in-fio gate: every clone of the job is set up and
// waits in its prerun, doing no I/O, until the line opens; then the job
// runs as usual, its JSON parses, fio's announcement is gone from it and
// nothing is left where fio ran. Interrupted at the line, the jobs end
// without any I/O. Released, each clone reports the end of its I/O, after
// the release and before fio has gone.
func TestFioGateHoldsJobsUntilReleased(t *testing.T) {
	testenv.Fio(t)
	for _, release := range []bool{true, false} {
		dir := t.TempDir()
		line := newStartLine(1)
		job := fio.Job{
			Global: []fio.Option{{Key: "filename", Value: filepath.Join(dir, "f")}},
			Sections: []fio.Section{{Name: "w", Options: []fio.Option{{Key: "rw", Value: "write"}, {Key: "bs", Value: "64k"},
				{Key: "size", Value: "4m"}, {Key: "ioengine", Value: "psync"}, {Key: "numjobs", Value: "2"}}}},
		}
		fr := fio.Runner{Cmder: line.cmder(0, execx.Local{}), Dir: dir}
		type outcome struct {
			o   *fio.Outcome
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			o, err := fr.Run(context.Background(), job, func(result.Progress) {})
			done <- outcome{o, err}
		}()
		select {
		case <-line.ready:
		case r := <-done:
			t.Fatalf("fio ended before its gate: %v", r.err)
		case <-time.After(30 * time.Second):
			t.Fatal("no gate reported ready")
		}
		// Both clones wait: nothing more is written while the line is shut.
		size := func() int64 {
			st, err := os.Stat(filepath.Join(dir, "f"))
			if err != nil {
				return -1
			}
			return st.Size()
		}
		laid := size()
		time.Sleep(500 * time.Millisecond)
		select {
		case r := <-done:
			t.Fatalf("fio ran past a shut line: %v", r.err)
		default:
		}
		if now := size(); now != laid {
			t.Errorf("the file changed from %d to %d bytes behind the line", laid, now)
		}
		released := time.Now()
		if err := line.release(release); err != nil {
			t.Fatal(err)
		}
		r := <-done
		end, reported := line.endOf(0)
		switch {
		case release && (!reported || end.Before(released) || end.After(time.Now())):
			t.Errorf("released at %s, fio gone at %s: I/O end reported %v at %s", released, time.Now(), reported, end)
		case !release && reported:
			t.Errorf("interrupted at the line: I/O end reported at %s", end)
		}
		var io int64
		if r.o != nil {
			for _, j := range r.o.Final.AllJobs() {
				if w := fio.ToResult(j).Write; w != nil {
					io += w.Bytes
				}
			}
			for _, n := range r.o.Noise {
				if strings.Contains(n, "prerun") || strings.Contains(n, "postrun") {
					t.Errorf("fio's announcement reached the output: %q", n)
				}
			}
		}
		switch {
		case release && (r.err != nil || io != 2*4<<20):
			t.Errorf("released: %d bytes written, %v", io, r.err)
		case !release && io != 0:
			t.Errorf("interrupted at the line: %d bytes written", io)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != "f" {
				t.Errorf("left %s where fio ran", e.Name())
			}
		}
	}
}

// A clone passes the in-fio gate on any whole line, and fails at end of
// input: the clones of a job read one pipe a byte at a time, so under load
// one may read "gg" and another "oo" of "go\ngo\n" (seen as a parallel
// workload's jobs ending with 0 bytes written and no error, once in
// five runs of the engine's tests on a loaded machine).
func TestFioGateTakesAnyWholeLine(t *testing.T) {
	for _, tc := range []struct {
		stdin string
		pass  bool
	}{{"go\n", true}, {"oo\n", true}, {"g\n", true}, {"go", false}, {"", false}} {
		cmd := exec.Command("sh", "-c", gateBody)
		cmd.Stdin = strings.NewReader(tc.stdin)
		err := cmd.Run()
		if (err == nil) != tc.pass {
			t.Errorf("stdin %q: %v, want passing %v", tc.stdin, err, tc.pass)
		}
	}
}
