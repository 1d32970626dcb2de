package app

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/version"
)

func runAs(t *testing.T, program string, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := RunAs(context.Background(), program, cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, args,
		func(string) string { return "" })
	return code, out.String() + errb.String()
}

func TestVersion(t *testing.T) {
	code, out := runAs(t, "storbench", "--version")
	want := "storbench " + version.Version + "\n"
	if code != cli.ExitOK || !strings.HasPrefix(out, want) || !strings.Contains(out, "\ngo: "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) ||
		!strings.Contains(out, "\ncommit: ") || !strings.Contains(out, "\ncommit date: ") {
		t.Errorf("storbench --version: exit %d\n%s", code, out)
	}
}

func TestVersionText(t *testing.T) {
	got := versionText(version.Info{Version: "v1.2.3", Commit: "0123abc", CommitDate: "2026-11-24T12:00:00Z", GoVersion: "go1.26.8", Platform: "linux/arm/v7"})
	want := "storbench v1.2.3\ncommit: 0123abc\ncommit date: 2026-11-24T12:00:00Z\ngo: go1.26.8 linux/arm/v7\n"
	if got != want {
		t.Errorf("versionText:\n%s\nwant\n%s", got, want)
	}
}

// Invoked as kubectl-storbench (kubectl's plugin lookup), help speaks of
// `kubectl storbench`, for the root and for every subcommand.
func TestKubectlPluginHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"classes", "--help"}} {
		code, out := runAs(t, KubectlPlugin, args...)
		if code != cli.ExitOK || !strings.Contains(out, "Usage:\n  kubectl storbench ") || strings.Contains(out, "kubectl-storbench") {
			t.Errorf("kubectl-storbench %v: exit %d\n%s", args, code, out)
		}
	}
	if _, out := runAs(t, "storbench", "--help"); !strings.Contains(out, "Usage:\n  storbench [command]") {
		t.Errorf("storbench --help:\n%s", out)
	}
}
