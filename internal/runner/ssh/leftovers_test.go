package ssh

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/testenv"
)

// TestFindLeftovers judges work directories on a host: only one marked
// as its run's, by a storbench process that is gone, holding only
// storbench's files with nothing working in it, is removed.
func TestFindLeftovers(t *testing.T) {
	h := newHost(t)
	c := dial(t, h.options(t))
	dir := t.TempDir()
	self, err := proc.Reader{}.Self()
	if err != nil {
		t.Fatal(err)
	}
	dead := self
	dead.StartTicks++ // this pid, but not this process: gone
	elsewhere := self
	elsewhere.Host = "controller-2"
	mk := func(id string, o *owner, files ...string) string {
		d := filepath.Join(dir, "storbench-"+id)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if o != nil {
			b, _ := json.Marshal(o)
			if err := os.WriteFile(filepath.Join(d, OwnerFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(d, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	want := map[string]string{ // run ID -> what Kept says ("" removed)
		"dead":      "",
		"alive":     "is still running",
		"unmarked":  "not a work directory storbench made",
		"other-run": "does not name run other-run",
		"elsewhere": "the run was made on host controller-2: clean up from there",
		"foreign":   "notes.txt is not a file storbench makes",
		"link":      "storbench-test.dat is not a regular file",
		"busy":      "processes still work in it on the host",
	}
	mk("dead", &owner{"dead", dead}, TestFileName, "storbench-job.fio", directIOProbe)
	mk("alive", &owner{"alive", self}, TestFileName)
	mk("unmarked", nil, TestFileName)
	mk("other-run", &owner{"dead", dead})
	mk("elsewhere", &owner{"elsewhere", elsewhere})
	mk("foreign", &owner{"foreign", dead}, "notes.txt")
	if err := os.Symlink("/etc/passwd", filepath.Join(mk("link", &owner{"link", dead}), TestFileName)); err != nil {
		t.Fatal(err)
	}
	busy := exec.Command("sleep", "60")
	busy.Dir = mk("busy", &owner{"busy", dead})
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Process.Kill(); busy.Wait() })
	if err := os.WriteFile(filepath.Join(dir, "storbench-file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	found, err := FindLeftovers(context.Background(), c, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != len(want) {
		t.Errorf("found %d directories, want %d: %+v", len(found), len(want), found)
	}
	for i := range found {
		l := &found[i]
		w, ok := want[l.RunID]
		if !ok {
			t.Errorf("unexpected %+v", l)
			continue
		}
		if w == "" && l.Kept != "" || w != "" && !strings.Contains(l.Kept, w) {
			t.Errorf("%s: kept %q, want %q", l.RunID, l.Kept, w)
		}
		err := RemoveLeftover(context.Background(), c, l)
		if (err == nil) != (w == "") {
			t.Errorf("%s: removing: %v", l.RunID, err)
		}
		_, serr := os.Stat(l.Dir)
		if gone := os.IsNotExist(serr); gone != (w == "") {
			t.Errorf("%s: gone %v after RemoveLeftover", l.RunID, gone)
		}
	}
	// A file storbench does not know appearing after Find keeps the
	// directory: rmdir fails rather than remove it.
	d := mk("late", &owner{"late", dead}, TestFileName)
	found, err = FindLeftovers(context.Background(), c, d+"/..")
	if err != nil {
		t.Fatal(err)
	}
	for i := range found {
		if found[i].RunID != "late" {
			continue
		}
		if err := os.WriteFile(filepath.Join(d, "appeared"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := RemoveLeftover(context.Background(), c, &found[i]); err == nil {
			t.Error("removed a directory a file appeared in")
		}
		if _, err := os.Stat(filepath.Join(d, "appeared")); err != nil {
			t.Errorf("the file that appeared is gone: %v", err)
		}
	}
}

// The connection of a run killed outright is dropped while its command
// still stops on the host (it ignores TERM, so its wrapper waits out the
// grace before the KILL): FindLeftovers, run straight after, waits for it
// within its bound and then finds the directory removable, where it used
// to keep it as busy. A process of the user's working there is not waited
// for.
func TestFindLeftoversWaitsForStoppingCommands(t *testing.T) {
	testenv.Measures(t)
	h := newHost(t)
	run := dial(t, h.options(t))
	self, err := proc.Reader{}.Self()
	if err != nil {
		t.Fatal(err)
	}
	dead := self
	dead.StartTicks++
	dir := t.TempDir()
	work := filepath.Join(dir, "storbench-stopping")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(owner{"stopping", dead})
	if err := os.WriteFile(filepath.Join(work, OwnerFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, procs := marker(t)
	done := make(chan error, 1)
	go func() {
		done <- run.Command(context.Background(), "sh", "-c", `trap "" TERM; sleep `+m+` & sleep `+m+` & wait`).SetDir(work).Run()
	}()
	waitFor(t, "remote command running", 20*time.Second, func() bool {
		select {
		case err := <-done:
			t.Fatalf("the command ended: %v", err)
		default:
		}
		return len(procs()) >= 2
	})
	h.srv.DropConnections(t)
	look := dial(t, h.options(t))
	start := time.Now()
	found, err := FindLeftovers(context.Background(), look, dir)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Kept != "" {
		t.Fatalf("want the directory removable once its command stopped, got %+v", found)
	}
	if took < execx.StopGrace/2 || took > lostBound+5*time.Second {
		t.Errorf("FindLeftovers took %s: want it to wait out the command's stop (grace %s), within its bound %s", took, execx.StopGrace, lostBound)
	}
	t.Logf("FindLeftovers waited %s for the command to stop", took.Round(10*time.Millisecond))
	if err := RemoveLeftover(context.Background(), look, &found[0]); err != nil {
		t.Fatal(err)
	}
	<-done

	// A user's process in such a directory is not storbench's to wait for.
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, OwnerFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	user := exec.Command("sleep", m)
	user.Dir = work
	if err := user.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { user.Process.Kill(); user.Wait() })
	start = time.Now()
	if found, err = FindLeftovers(context.Background(), look, dir); err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || !strings.Contains(found[0].Kept, "processes still work in it") || time.Since(start) > lostBound/2 {
		t.Errorf("a user's process in it: want it kept at once, got %+v after %s", found, time.Since(start))
	}
}
