package doctorcmd

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/cli"
)

func TestDoctorWithoutACluster(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	d := cli.Deps{Streams: cli.Streams{Out: &out, ErrOut: &out}, Globals: &cli.Globals{DB: filepath.Join(dir, "sub", "r.db")},
		Getenv: func(string) string { return "" }}
	cmd := NewCommand(d)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs([]string{"--k8s", "--kubeconfig", filepath.Join(dir, "missing"), "--timeout", "10s"})
	err := cmd.ExecuteContext(context.Background())
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != cli.ExitFailed {
		t.Fatalf("want exit code %d, got %v", cli.ExitFailed, err)
	}
	for _, want := range []string{"LOCAL", "results database: " + filepath.Join(dir, "sub", "r.db"), "[FAIL] kubeconfig", "fix: pass --kubeconfig"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
