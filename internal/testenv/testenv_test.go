package testenv

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestRequired(t *testing.T) {
	for _, tc := range []struct {
		env, prereq string
		want        bool
	}{
		{"", "fio", false},
		{"fio,root", "fio", true},
		{"fio, root", "root", true},
		{"fio,root", "loop", false},
		{"all", "chromium", true},
		{"fiox", "fio", false},
	} {
		t.Setenv(EnvRequire, tc.env)
		if got := Required(tc.prereq); got != tc.want {
			t.Errorf("%s=%q Required(%q) = %v, want %v", EnvRequire, tc.env, tc.prereq, got, tc.want)
		}
	}
}

// TestHostTierUnderShort: under -short every host-tier check skips before
// looking, even when STORBENCH_REQUIRE=all would fail a missing tool; the
// shell stays available to the unit tier, and without -short a missing
// tool fails as required.
func TestHostTierUnderShort(t *testing.T) {
	was := flag.Lookup("test.short").Value.String()
	t.Cleanup(func() {
		if err := flag.Set("test.short", was); err != nil {
			t.Error(err)
		}
	})
	t.Setenv(EnvRequire, "all")
	t.Setenv("PATH", t.TempDir()) // nothing installed: a look fails
	for _, tc := range []struct {
		name  string
		short bool
		check func(testing.TB)
		want  string
	}{
		{"fio, short", true, func(t testing.TB) { Fio(t) }, "skip"},
		{"root, short", true, func(t testing.TB) { Root(t) }, "skip"},
		{"loop, short", true, func(t testing.TB) { Loop(t) }, "skip"},
		{"chromium, short", true, func(t testing.TB) { Chromium(t) }, "skip"},
		{"sshd, short", true, func(t testing.TB) { Tool(t, "sshd", "openssh-server", "sshd") }, "skip"},
		{"host tier, short", true, func(t testing.TB) { HostTier(t, "k8s") }, "skip"},
		{"the shell, short", true, func(t testing.TB) { Tool(t, "sh", "dash") }, "fail"},
		{"host tier, long", false, func(t testing.TB) { HostTier(t, "k8s") }, "run"},
		{"fio, long", false, func(t testing.TB) { Fio(t) }, "fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := flag.Set("test.short", strconv.FormatBool(tc.short)); err != nil {
				t.Fatal(err)
			}
			if got := outcome(t, tc.check); got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}

// outcome runs check against a testing.TB that records a skip or a
// failure instead of ending the test.
func outcome(t *testing.T, check func(testing.TB)) (got string) {
	r := &recorder{TB: t}
	got = "run"
	defer func() {
		if v := recover(); v != nil && v != r {
			panic(v)
		}
		switch {
		case r.failed:
			got = "fail"
		case r.skipped:
			got = "skip"
		}
	}()
	check(r)
	return got
}

type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skipf(string, ...any)  { r.skipped = true; panic(r) }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }

func TestMeasuresFailsOnlyBesideTheClusterTier(t *testing.T) {
	for _, tc := range []struct{ env, want string }{{"", "run"}, {"0", "run"}, {"1", "fail"}} {
		t.Setenv(EnvBeside, tc.env)
		if got := outcome(t, Measures); got != tc.want {
			t.Errorf("%s=%q: Measures: %s, want %s", EnvBeside, tc.env, got, tc.want)
		}
	}
}

// The source tree is found from the working directory, not from paths
// compiled into the binary (scripts/test.sh builds with -trimpath), and
// holds what the helpers look for in it.
func TestSourceTree(t *testing.T) {
	top, err := SourceTree()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(top, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/storbench/storbench\n") {
		t.Fatalf("%s/go.mod: %v, %.60q", top, err, mod)
	}
	for _, p := range []string{"test/cluster/ceph.sh", "test/cluster/gluster.sh", "internal/fio/testdata", "deploy"} {
		if _, err := os.Stat(SourcePath(t, p)); err != nil {
			t.Error(err)
		}
	}
	t.Chdir(t.TempDir()) // outside any tree
	if top, err := SourceTree(); err == nil {
		t.Errorf("found a source tree at %s above a temporary directory", top)
	}
}
