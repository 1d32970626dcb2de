package orphan

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// gone is a process record of a process that has exited.
func gone(t *testing.T) *result.Process {
	t.Helper()
	self, err := proc.Reader{}.Self()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	self.PID = c.Process.Pid
	return &self
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindAndClean(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	target := t.TempDir()
	self, err := proc.Reader{}.Self()
	if err != nil {
		t.Fatal(err)
	}
	secret := t.TempDir()
	write(t, filepath.Join(secret, "storbench-test.dat"), "not storbench's")

	runs := []struct {
		id      string
		process *result.Process
		status  result.Status
		files   []string // in its work directory
		link    string   // the work directory is a symbolic link to this
	}{
		{id: "killed", process: gone(t), status: result.StatusRunning, files: []string{"storbench-test.dat", ".direct-io-probe", "storbench-suite.fio", "storbench-job-2.fio", "storbench-seq-write_bw.1.log"}},
		{id: "raw", process: gone(t), status: result.StatusRunning, files: []string{"reader.0.0", "reader.1.0"}},
		{id: "foreign", process: gone(t), status: result.StatusRunning, files: []string{"storbench-test.dat", "precious.txt"}},
		{id: "subdir", process: gone(t), status: result.StatusRunning, files: []string{"nested/storbench-test.dat"}},
		{id: "linked", process: gone(t), status: result.StatusRunning, link: secret},
		{id: "live", process: &self, status: result.StatusRunning, files: []string{"storbench-test.dat"}},
		{id: "finished", process: gone(t), status: result.StatusComplete, files: []string{"storbench-test.dat"}},
		{id: "elsewhere", process: &result.Process{PID: 1, StartTicks: 1, BootID: self.BootID, Host: "another-host"}, status: result.StatusRunning, files: []string{"storbench-test.dat"}},
	}
	for i, r := range runs {
		err := st.CreateRun(ctx, &result.Run{ID: r.id, Suite: "s", Status: r.status, Started: time.Unix(int64(i), 0),
			Targets: []string{target, "k8s:longhorn", "/dev/sdz"}, Workloads: []string{"reader"}, Process: r.process})
		if err != nil {
			t.Fatal(err)
		}
		work := filepath.Join(target, "storbench-"+r.id)
		if r.link != "" {
			if err := os.Symlink(r.link, work); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range r.files {
			write(t, filepath.Join(work, f), "x")
		}
	}

	found, err := Find(ctx, st, proc.Reader{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range found {
		ids = append(ids, f.ID)
	}
	sort.Strings(ids)
	if want := []string{"foreign", "killed", "linked", "raw", "subdir"}; !slices.Equal(ids, want) {
		t.Fatalf("abandoned runs %v, want %v", ids, want)
	}
	if err := Clean(ctx, st, found); err != nil {
		t.Fatal(err)
	}
	exists := func(id string) bool {
		_, err := os.Lstat(filepath.Join(target, "storbench-"+id))
		return err == nil
	}
	for id, want := range map[string]bool{"killed": false, "raw": false, "foreign": true, "subdir": true, "linked": true, "live": true, "finished": true, "elsewhere": true} {
		if exists(id) != want {
			t.Errorf("work directory of %s: exists %v, want %v", id, !want, want)
		}
	}
	if _, err := os.Stat(filepath.Join(secret, "storbench-test.dat")); err != nil {
		t.Errorf("cleanup followed a symbolic link: %v", err)
	}
	for _, id := range []string{"killed", "foreign", "linked"} {
		r, err := st.Run(ctx, id)
		if err != nil || r.Status != result.StatusAbandoned {
			t.Errorf("%s stored as %v (%v), want abandoned", id, r.Status, err)
		}
	}
	for id, want := range map[string]result.Status{"live": result.StatusRunning, "finished": result.StatusComplete, "elsewhere": result.StatusRunning} {
		if r, _ := st.Run(ctx, id); r.Status != want {
			t.Errorf("%s stored as %s, want %s", id, r.Status, want)
		}
	}
	// Abandoned and stored so: not found again.
	if again, err := Find(ctx, st, proc.Reader{}, ""); err != nil || len(again) != 0 {
		t.Errorf("second Find: %v %v", again, err)
	}
}
