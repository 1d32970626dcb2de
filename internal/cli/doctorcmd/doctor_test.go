package doctorcmd

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/cli"
)

func TestDoctorWithoutACluster(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	d := cli.Deps{Streams: cli.Streams{Out: &out, ErrOut: &out}, Globals: &cli.Globals{DB: filepath.Join(dir, "sub", "r.db")},
		Getenv: func(string) string { return "" }}
	err := run(context.Background(), d, &flags{k8s: true, kubeconfig: filepath.Join(dir, "missing"), timeout: 10 * time.Second, output: "table"})
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
