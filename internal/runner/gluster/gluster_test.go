package gluster

import (
	"context"
	"os"
	"strings"
	"testing"

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
