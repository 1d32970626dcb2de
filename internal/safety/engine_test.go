package safety

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/testenv"
)

// inUseFacts reports one engine target in use.
type inUseFacts map[string][]string

func (f inUseFacts) InUse(_ context.Context, name string) ([]string, error) { return f[name], nil }

func TestJudgeEngineTargets(t *testing.T) {
	rbd := map[string]string{"ioengine": "rbd", "clientname": "admin", "pool": "bench", "rbdname": "img"}
	gl := map[string]string{"ioengine": "gfapi", "volume": "gv0", "brick": "10.97.2.2"}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	notNamed := func(name string) string {
		return "refusing to write: workloads j write to " + name + " and would destroy its contents: pass --destructive " + name + " to allow it, or choose a read-only suite"
	}
	cases := []struct {
		name        string
		opts        map[string]string
		owned       []string
		destructive []string
		inUse       inUseFacts
		want        string // the refusal, or a part of it; "" means allowed
	}{
		{"rbd write not named", with(rbd, "rw", "randwrite"), nil, nil, nil, notNamed("rbd:bench/img")},
		{"rbd write named", with(rbd, "rw", "randwrite"), nil, []string{"rbd:bench/img"}, nil, ""},
		{"rbd write another named", with(rbd, "rw", "write"), nil, []string{"rbd:bench/other", "/dev/sdz", "rbd:bench"}, nil, notNamed("rbd:bench/img")},
		{"rbd write created by the run", with(rbd, "rw", "write"), []string{"rbd:bench/img"}, nil, nil, ""},
		{"rbd read", with(rbd, "rw", "randread"), nil, nil, nil, ""},
		{"rbd trim writes", with(rbd, "rw", "randtrim"), nil, nil, nil, notNamed("rbd:bench/img")},
		{"rbd in use even named", with(rbd, "rw", "write"), nil, []string{"rbd:bench/img"}, inUseFacts{"rbd:bench/img": {"watcher 10.0.0.5"}}, "refuses even with --destructive: watcher 10.0.0.5"},
		{"rbd without pool", with(rbd, "rw", "write", "pool", ""), nil, nil, nil, "names no pool"},
		{"rbd without image", with(rbd, "rw", "read", "rbdname", ""), nil, nil, nil, "names no image"},
		{"rbd log outside", with(rbd, "rw", "read", "write_bw_log", "/tmp/x"), nil, nil, nil, "write_bw_log"},
		{"gluster write not named", with(gl, "rw", "write", "filename", "f"), nil, nil, nil, notNamed("gluster:gv0")},
		{"gluster volume named", with(gl, "rw", "write", "filename", "f"), nil, []string{"gluster:gv0"}, nil, ""},
		{"gluster directory named", with(gl, "rw", "write", "directory", "bench", "filename", "f"), nil, []string{"gluster:gv0/bench"}, nil, ""},
		{"gluster other directory named", with(gl, "rw", "write", "directory", "data", "filename", "f"), nil, []string{"gluster:gv0/bench"}, nil, notNamed("gluster:gv0")},
		{"gluster escape stays in the volume", with(gl, "rw", "write", "directory", "bench", "filename", "../../etc/x"), []string{"gluster:gv0/bench"}, nil, nil, notNamed("gluster:gv0")},
		{"gluster run directory", with(gl, "rw", "randwrite", "directory", "storbench-r1"), []string{"gluster:gv0/storbench-r1"}, nil, nil, ""},
		{"gluster run directory, prefix only", with(gl, "rw", "randwrite", "directory", "storbench-r10"), []string{"gluster:gv0/storbench-r1"}, nil, nil, notNamed("gluster:gv0")},
		{"gluster read lays out files", with(gl, "rw", "read", "filename", "f"), nil, nil, nil, "read gluster:gv0, where fio lays out the files it reads"},
		{"gluster colon list", with(gl, "rw", "write", "directory", "storbench-r1", "filename", "a:/../b"), []string{"gluster:gv0/storbench-r1"}, nil, nil, notNamed("gluster:gv0")},
		{"gluster without volume", with(gl, "rw", "read", "volume", ""), nil, nil, nil, "names no volume"},
		{"gluster opendir", with(gl, "rw", "read", "opendir", "x"), nil, nil, nil, "opendir"},
		{"async gluster", with(gl, "ioengine", "gfapi_async", "rw", "write", "filename", "f"), nil, nil, nil, notNamed("gluster:gv0")},
		{"rados stays refused", map[string]string{"ioengine": "rados", "pool": "bench", "rw": "write"}, nil, nil, nil, "ioengine"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := JobCheck{Policy: Policy{Destructive: c.destructive}, Stat: stubStat(nil), WorkDir: "/srv/w", Owned: c.owned}
			if c.inUse != nil {
				check.Engines = c.inUse
			}
			judgeOne(t, check, c.opts, c.want)
		})
	}
}

// An engine target is judged on fio's own reading of the job: here a
// [global] section names the image and a job's own line overrides it, and
// the refusal names the image fio would write, in the words used for
// devices. fio reads the job without a Ceph cluster.
func TestJudgeEngineTargetFromFiosReading(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	fr := fio.Runner{Cmder: execx.Local{}, Dir: dir}
	for _, e := range []string{"rbd", "gfapi"} {
		if ok, err := fr.HasEngine(context.Background(), e); err != nil || !ok {
			testenv.Missing(t, "fio-"+e, "fio here has no %s engine (%v)", e, err)
		}
	}
	cases := []struct {
		name, job   string
		owned       []string
		destructive []string
		want        string
	}{
		{"overridden image", "[global]\nioengine=rbd\npool=bench\nrbdname=storbench-r1\n[a]\nrbdname=production\nrw=randwrite\nbs=4k\nsize=1m\n",
			[]string{"rbd:bench/storbench-r1"}, nil, "workloads a write to rbd:bench/production and would destroy its contents: pass --destructive rbd:bench/production"},
		{"run's image", "[global]\nioengine=rbd\npool=bench\nrbdname=storbench-r1\n[a]\nrw=randwrite\nbs=4k\nsize=1m\n",
			[]string{"rbd:bench/storbench-r1"}, nil, ""},
		{"named image", "[a]\nioengine=rbd\npool=bench\nrbdname=production\nrw=write\nbs=4k\nsize=1m\n",
			nil, []string{"rbd:bench/production"}, ""},
		{"volume file", "[a]\nioengine=gfapi\nvolume=gv0\nbrick=10.97.2.2\nfilename=data\nrw=write\nbs=4k\nsize=1m\n",
			[]string{"gluster:gv0/storbench-r1"}, nil, "pass --destructive gluster:gv0"},
		{"run's directory", "[global]\nioengine=gfapi\nvolume=gv0\nbrick=10.97.2.2\ndirectory=storbench-r1\n[a]\nrw=write\nbs=4k\nsize=1m\n",
			[]string{"gluster:gv0/storbench-r1"}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jf, err := fio.ParseJobText([]byte(c.job), "job.fio", fio.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "job.fio"), []byte(c.job), 0o644); err != nil {
				t.Fatal(err)
			}
			rd, err := fr.Read(context.Background(), jf, "job.fio")
			if err != nil {
				t.Fatal(err)
			}
			var jobs []FioJob
			for _, j := range rd.Jobs {
				jobs = append(jobs, FioJob{Name: j.Section, Options: j.Values()})
			}
			check := JobCheck{Policy: Policy{Destructive: c.destructive}, Stat: LocalStat, WorkDir: dir, Owned: c.owned}
			v, err := check.Judge(context.Background(), jobs)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(v.Touches) == 0 || v.Touches[0].Kind != PathEngine {
					t.Errorf("touches %+v: want the engine target", v.Touches)
				}
				return
			}
			var rf *Refusal
			if !errors.As(err, &rf) || rf.Rule != RuleNotNamed || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a %s refusal with %q", err, RuleNotNamed, c.want)
			}
		})
	}
}
