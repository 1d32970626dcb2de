package fio

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/golden"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/testenv"
)

// engineTargets are the engine targets the Ceph and Gluster kinds make.
var engineTargets = []struct {
	name string
	file File
}{
	{"rbd", File{Size: 1 << 30, Engine: &EngineTarget{IOEngine: "rbd",
		Options: []Option{{"clientname", "admin"}, {"pool", "bench"}, {"rbdname", "storbench-r1"}},
		Env:     []string{"CEPH_CONF=/etc/storbench/ceph.conf"}}}},
	{"gfapi", File{Name: "storbench-test.dat", Size: 1 << 30, Engine: &EngineTarget{IOEngine: "gfapi",
		Options: []Option{{"volume", "gv0"}, {"brick", "10.97.2.2"}, {"directory", "storbench-r1"}}}}},
	{"gfapi_async", File{Name: "storbench-test.dat", Size: 1 << 30, Engine: &EngineTarget{IOEngine: "gfapi_async",
		Options: []Option{{"volume", "gv0"}, {"brick", "10.97.2.2"}}}}},
}

// A suite on an engine target names the engine and its options instead of
// a filename, every workload on the target's engine (libaio and psync
// workloads alike), and fio reads it back as written: --parse-only accepts
// it and --showcmd lines up with the file, with no Ceph or Gluster here.
func TestSuiteOnEngineTarget(t *testing.T) {
	s, err := spec.Builtin("standard")
	if err != nil {
		t.Fatal(err)
	}
	for _, et := range engineTargets {
		t.Run(et.name, func(t *testing.T) {
			job := FromSuite(s, et.file, "libaio")
			text := job.String()
			golden.Compare(t, filepath.Join("testdata", "jobs", "engine-"+et.name+".fio"), []byte(text))
			if et.file.Name == "" && strings.Contains(text, "filename=") {
				t.Error("an RBD job names a filename")
			}
			for _, sec := range job.Sections {
				for _, o := range sec.Options {
					if o.Key == "ioengine" && o.Value != et.file.Engine.IOEngine {
						t.Errorf("workload %s runs on %s, not the target's %s", sec.Name, o.Value, et.file.Engine.IOEngine)
					}
				}
			}
			testenv.Fio(t)
			fr := Runner{Cmder: execx.Local{}, Dir: t.TempDir(), Env: et.file.Engine.Env}
			hasEngine(t, fr, et.file.Engine.IOEngine)
			jf, err := ParseJobText([]byte(text), "suite", ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(fr.Dir, "job.fio"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			rd, err := fr.Read(context.Background(), jf, "job.fio")
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range rd.Jobs {
				for _, o := range et.file.Engine.Options {
					if v, _ := j.Value(o.Key); v != o.Value {
						t.Errorf("fio reads %s=%q for job %s, want %q", o.Key, v, j.Section, o.Value)
					}
				}
			}
		})
	}
}

func hasEngine(t *testing.T, fr Runner, engine string) {
	t.Helper()
	ok, err := fr.HasEngine(context.Background(), engine)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		testenv.Missing(t, "fio-"+engine, "fio here has no %s engine (Debian's fio has it)", engine)
	}
}

// A user's job that leaves its target to the runner gets the engine
// target; one that names another engine or sets a target option itself
// keeps its own.
func TestFillRunnerDefaultsEngineTarget(t *testing.T) {
	file := engineTargets[0].file
	cases := []struct {
		name, job string
		want      []string
		notWant   []string
	}{
		{"leaves target", "[a]\nrw=randwrite\nbs=4k\n", []string{"ioengine=rbd", "pool=bench", "rbdname=storbench-r1", "clientname=admin", "size=1073741824"}, []string{"filename="}},
		{"same engine, own size", "[a]\nioengine=rbd\nrw=read\nsize=1m\n", []string{"pool=bench", "rbdname=storbench-r1"}, []string{"size=1073741824", "ioengine=rbd\nioengine"}},
		{"own image", "[a]\nioengine=rbd\npool=other\nrbdname=theirs\nrw=write\n", nil, []string{"storbench-r1", "pool=bench"}},
		{"other engine", "[a]\nioengine=psync\nrw=write\n", nil, []string{"pool=", "rbdname="}},
		{"global target", "[global]\nrbdname=mine\n[a]\nrw=write\n", nil, []string{"storbench-r1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jf, err := ParseJobText([]byte(c.job), "job.fio", ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			jf.FillRunnerDefaults(file, false)
			got := string(jf.Render())
			for _, w := range c.want {
				if !strings.Contains(got, "\n"+w+"\n") {
					t.Errorf("job lacks %s:\n%s", w, got)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("job holds %q:\n%s", w, got)
				}
			}
		})
	}
}

// Runner.Env reaches the fio process: the engine's configuration path.
func TestRunnerEnvReachesFio(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fio")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"fio-env $CEPH_CONF\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fr := Runner{Cmder: execx.Local{}, Binary: fake, Env: []string{"CEPH_CONF=/etc/storbench/ceph.conf"}}
	v, err := fr.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v != "fio-env /etc/storbench/ceph.conf" {
		t.Errorf("fio saw %q", v)
	}
}
