package gluster

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/testenv"
	"github.com/storbench/storbench/test/glustertest"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		ok      bool
		want    Spec
		wantErr string
	}{
		{"gluster://10.0.0.5/vol1", true, Spec{Server: "10.0.0.5", Volume: "vol1"}, ""},
		{"gluster://gl.lan/my_vol-2", true, Spec{Server: "gl.lan", Volume: "my_vol-2"}, ""},
		{"gluster:///vol", true, Spec{}, "no server"},
		{"gluster://host", true, Spec{}, "no plain volume name"},
		{"gluster://host/vol/dir", true, Spec{}, "no plain volume name"},
		{"/mnt/gluster", false, Spec{}, ""},
		{"gluster:vol", false, Spec{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, ok, err := Kind{}.Parse(tt.in)
			if ok != tt.ok || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Parse = %v, %v, %v", s, ok, err)
			}
			if err == nil && ok && s.(Spec) != tt.want {
				t.Errorf("spec %+v, want %+v", s, tt.want)
			}
		})
	}
}

// subject is a target on the harness's volume; leftovers are the entries
// at the volume's root.
func subject(v *glustertest.Volume, server, runID string) runnertest.Subject {
	return runnertest.Subject{
		Target: &Target{spec: Spec{Server: server, Volume: v.Name}},
		Need:   runner.Need{RunID: runID, FileSize: 8 << 20, Writers: []string{"w"}, Direct: true},
		Leftovers: func() []string {
			entries, _ := os.ReadDir(v.Mount)
			var out []string
			for _, e := range entries {
				out = append(out, e.Name())
			}
			return out
		},
	}
}

// TestKindOnRealVolume: the kind's contract on a real replica-3 volume:
// targets prepared, written by fio's gfapi_async engine, cleaned up after
// success, failure and cancellation; a volume that is not there refused;
// a killed run's directory found and removed; results labelled with the
// three servers and client-side replica 3.
func TestKindOnRealVolume(t *testing.T) {
	testenv.Measures(t)
	var v *glustertest.Volume
	t.Run("volume", func(t *testing.T) {
		testenv.Fio(t)
		v = glustertest.Start(t, glustertest.Options{})
		server := v.Nodes[0].Addr
		// the kind's own mount points go here, and must all be gone at
		// the end (a failed mount's once stayed, with an empty mnt)
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		defer func() {
			if left, _ := filepath.Glob(filepath.Join(tmp, "storbench-gluster-*")); len(left) > 0 {
				t.Errorf("mount points left: %v", left)
			}
		}()
		runnertest.KindConformance(t, runnertest.KindSuite{
			Kind:      Kind{},
			Valid:     []string{Scheme + server + "/" + v.Name},
			Malformed: []runnertest.Malformed{{Target: "gluster://" + server, Want: "gluster://SERVER/VOLUME"}},
			Foreign:   []string{"/mnt/x", "rbd:bench/img", "ssh://host/srv", "k8s:netfs"},
			Targets: &runnertest.TargetSuite{
				Safe: func(t *testing.T) runnertest.Subject { return subject(v, server, "conf") },
				Unsafe: []runnertest.Unsafe{{Name: "no such volume", Want: "mounting volume", Make: func(t *testing.T) runnertest.Subject {
					s := subject(v, server, "r")
					s.Target = &Target{spec: Spec{Server: server, Volume: "missing"}}
					return s
				}}},
			},
			Killed: func(t *testing.T) (runner.Spec, runnertest.Subject, runner.Need) {
				sub := subject(v, server, "killed1")
				if _, err := sub.Target.Prepare(context.Background(), sub.Need); err != nil {
					t.Fatal(err)
				}
				return Spec{Server: server, Volume: v.Name}, sub, sub.Need
			},
		})
		p, err := subject(v, server, "labels").Target.Prepare(context.Background(), runner.Need{RunID: "labels", FileSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if got := result.LabelVolumeServers.Of(p.Labels); strings.Count(got, ":24007") != 3 ||
			result.LabelReplicas.Of(p.Labels) != "3" || result.LabelReplicationModel.Of(p.Labels) != result.ReplicationClient {
			t.Errorf("labels %v", p.Labels)
		}
		if err := p.Cleanup(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if v != nil {
		glustertest.CheckClean(t, v)
	}
}

// removeMountDir never reaches into what is mounted on the mount point: a
// bind mount standing in for the volume keeps its file, whether the mount
// point is unmounted on the way or stays busy (then it is named and left).
func TestRemoveMountDirLeavesTheVolume(t *testing.T) {
	testenv.Root(t)
	testenv.Tool(t, "mount", "mount")
	testenv.Tool(t, "mountpoint", "util-linux")
	mountAt := func(t *testing.T) (volume, tmp, mnt string) {
		volume, tmp = t.TempDir(), t.TempDir()
		mnt = filepath.Join(tmp, "mnt")
		if err := os.Mkdir(mnt, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(volume, "data"), []byte("theirs"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, "client.log"), []byte("log"), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mount", "--bind", volume, mnt).CombinedOutput(); err != nil {
			t.Fatalf("mount --bind: %v: %s", err, out)
		}
		t.Cleanup(func() {
			if exec.Command("mountpoint", "-q", mnt).Run() == nil {
				testenv.Retry(func() error { return exec.Command("umount", mnt).Run() })
			}
		})
		return volume, tmp, mnt
	}
	theirs := func(t *testing.T, volume string) {
		if b, err := os.ReadFile(filepath.Join(volume, "data")); err != nil || string(b) != "theirs" {
			t.Errorf("the volume's file after removeMountDir: %q, %v", b, err)
		}
	}
	t.Run("unmounted", func(t *testing.T) {
		volume, tmp, mnt := mountAt(t)
		if err := removeMountDir(tmp, mnt, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after removeMountDir: %v", tmp, err)
		}
		theirs(t, volume)
	})
	t.Run("busy", func(t *testing.T) {
		volume, tmp, mnt := mountAt(t)
		f, err := os.Open(filepath.Join(mnt, "data")) // keeps the mount busy
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		err = removeMountDir(tmp, mnt, 300*time.Millisecond)
		if err == nil || !errors.Is(err, syscall.EBUSY) || !strings.Contains(err.Error(), mnt) {
			t.Errorf("removeMountDir on a busy mount: %v, want EBUSY naming %s", err, mnt)
		}
		theirs(t, volume)
	})
}
