// Package runnertest holds the conformance suites every runner passes, in
// the style of restic's backend tests: Conformance for each execx.Cmder
// that runs fio (local, Kubernetes exec, SSH), and TargetConformance for
// each runner.Target (local directory, local device, Kubernetes). Each
// implementation calls them from its own tests.
package runnertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/testenv"
)

// Env is a Cmder under test and a directory it can write in, as the Cmder
// sees it ("" means its default working directory).
type Env struct {
	Cmder execx.Cmder
	Dir   string
	// ExitCodeKnown is false for transports that report only that a command
	// failed (the exit code then reads -1).
	ExitCodeKnown bool
}

// Conformance runs the suite. newEnv is called once per subtest.
func Conformance(t *testing.T, newEnv func(t *testing.T) Env) {
	t.Run("stdout", func(t *testing.T) {
		e := newEnv(t)
		out, err := execx.Output(cmd(e, "sh", "-c", "echo hello"))
		if err != nil || strings.TrimSpace(string(out)) != "hello" {
			t.Fatalf("echo: out=%q err=%v", out, err)
		}
	})
	t.Run("failure carries stderr", func(t *testing.T) {
		e := newEnv(t)
		_, err := execx.Output(cmd(e, "sh", "-c", "echo broken-thing >&2; exit 3"))
		var re *execx.RunError
		if !errors.As(err, &re) {
			t.Fatalf("want *execx.RunError, got %T %v", err, err)
		}
		if !strings.Contains(re.Error(), "broken-thing") {
			t.Errorf("error does not carry stderr: %v", re)
		}
		if e.ExitCodeKnown && re.ExitCode != 3 {
			t.Errorf("exit code = %d, want 3", re.ExitCode)
		}
	})
	t.Run("working directory", func(t *testing.T) {
		e := newEnv(t)
		if _, err := execx.Output(cmd(e, "sh", "-c", "echo x > conformance-probe")); err != nil {
			t.Fatal(err)
		}
		out, err := execx.Output(cmd(e, "cat", "conformance-probe"))
		if err != nil || strings.TrimSpace(string(out)) != "x" {
			t.Fatalf("file written in the working directory not found there: out=%q err=%v", out, err)
		}
		if _, err := execx.Output(cmd(e, "rm", "conformance-probe")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("missing program", func(t *testing.T) {
		e := newEnv(t)
		err := cmd(e, "storbench-no-such-program").Run()
		if err == nil {
			t.Fatal("running a missing program succeeded")
		}
		if !execx.IsNotFound(err) && !strings.Contains(err.Error(), "not found") {
			t.Errorf("error does not say the program is missing: %v", err)
		}
	})
	t.Run("cancel stops the command", func(t *testing.T) {
		e := newEnv(t)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := e.Cmder.Command(ctx, "sleep", "30").SetDir(e.Dir).Run()
		if err == nil {
			t.Fatal("cancelled command reported success")
		}
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("cancel took %s", took)
		}
	})
	t.Run("a cancelled command's last words arrive", func(t *testing.T) { lastWords(t, newEnv(t)) })
	t.Run("fio runs and parses", func(t *testing.T) {
		testenv.HostTier(t, "fio")
		e := newEnv(t)
		fr := fio.Runner{Cmder: e.Cmder, Dir: e.Dir}
		v, err := fr.Version(context.Background())
		if err != nil || !strings.HasPrefix(v, "fio-") {
			t.Fatalf("fio version: %q %v", v, err)
		}
		s, err := spec.Parse([]byte(`
name: conformance
workloads:
  - {name: w, rw: randwrite, bs: 4KiB, size: 4MiB, runtime: 1s, ioengine: psync}
`), "conformance")
		if err != nil {
			t.Fatal(err)
		}
		var ticks int
		out, err := fr.Run(context.Background(), fio.FromWorkload(s.Workloads[0], fio.File{Name: "conformance.dat"}, ""), func(result.Progress) { ticks++ })
		if err != nil {
			t.Fatalf("fio run: %v", err)
		}
		jobs := out.Final.AllJobs()
		if len(jobs) != 1 || fio.ToResult(jobs[0]).Write == nil {
			t.Fatalf("fio output has no write I/O: %+v", jobs)
		}
		if ticks == 0 {
			t.Error("no progress reported")
		}
		if _, err := execx.Output(cmd(e, "rm", "-f", "conformance.dat")); err != nil {
			t.Fatal(err)
		}
	})
}

func cmd(e Env, name string, args ...string) execx.Cmd {
	c := e.Cmder.Command(context.Background(), name, args...)
	if e.Dir != "" {
		c.SetDir(e.Dir)
	}
	return c
}

// lastWords: fio stopped by a cancel prints its report of what it did
// until then (the contention round's bulk writer ends so); a transport
// delivers what the command prints as it stops.
func lastWords(t *testing.T, e Env) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &testenv.Buffer{}
	go func() {
		for deadline := time.Now().Add(15 * time.Second); !strings.Contains(out.String(), "started") && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	err := e.Cmder.Command(ctx, "sh", "-c", `trap 'echo stopped; exit 0' TERM; echo started; while :; do sleep 0.1; done`).
		SetDir(e.Dir).SetStdout(out).Run()
	if err == nil {
		t.Error("cancelled command reported success")
	}
	if got := out.String(); !strings.Contains(got, "started") || !strings.Contains(got, "stopped") {
		t.Errorf("stdout %q: want what it printed as it stopped (stopped)", got)
	}
}
