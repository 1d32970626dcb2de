package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/testenv"
)

// rbdPrepared is an RBD target as a kind prepares it: fio runs here and
// reaches the image through its rbd engine; owned says the run created it.
func rbdPrepared(owned bool) *runner.Prepared {
	p := &runner.Prepared{Name: "rbd:bench", Kind: "rbd", Cmder: execx.Local{}, Local: true,
		File: fio.File{Size: 4 << 20, Engine: &fio.EngineTarget{IOEngine: "rbd",
			Options: []fio.Option{{Key: "clientname", Value: "admin"}, {Key: "pool", Value: "bench"}, {Key: "rbdname", Value: "storbench-r1"}},
			Env:     []string{"CEPH_CONF=/nonexistent/ceph.conf"}}}}
	if owned {
		p.Owned = []string{"rbd:bench/storbench-r1"}
	}
	return p
}

// A job that leaves its target to the runner gets the image the kind made
// and is judged on fio's reading (no Ceph needed to read it): allowed
// when the run created the image, refused as a device is otherwise.
// The suite's generated job is judged on an engine target too, though fio
// runs here on a path storbench does not stat.
func TestJudgeOnEngineTarget(t *testing.T) {
	testenv.Fio(t)
	if ok, err := (fio.Runner{Cmder: execx.Local{}}).HasEngine(context.Background(), "rbd"); err != nil || !ok {
		testenv.Missing(t, "fio-rbd", "fio here has no rbd engine (%v)", err)
	}
	jf, err := fio.ParseJobText([]byte("[a]\nrw=randwrite\nbs=4k\n"), "job.fio", fio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, owned := range []bool{true, false} {
		p := rbdPrepared(owned)
		j, err := Judge(context.Background(), p.FioRunner(), jf, t.TempDir(), TargetJudgeOptions(safety.Policy{}, p))
		if !owned {
			var rf *safety.Refusal
			if !errors.As(err, &rf) || rf.Rule != safety.RuleNotNamed || !strings.Contains(err.Error(), "pass --destructive rbd:bench/storbench-r1") {
				t.Fatalf("an image the run did not create: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := j.Verdict.Touches; len(got) != 1 || got[0].Kind != safety.PathEngine || !got[0].Own || got[0].Path != "rbd:bench/storbench-r1" {
			t.Errorf("touches %+v", got)
		}
		if !strings.Contains(string(j.Text), "ioengine=rbd\n") || strings.Contains(string(j.Text), "filename=") {
			t.Errorf("job file:\n%s", j.Text)
		}
	}
	s, err := spec.Builtin("quick")
	if err != nil {
		t.Fatal(err)
	}
	files := jobFilesFor(Plan{Suite: s}, &runner.Prepared{Cmder: execx.Local{}, File: rbdPrepared(true).File}, "")
	if len(files) != 1 || !files[0].generated {
		t.Errorf("a remote engine target's suite is not judged: %d job files", len(files))
	}
}
