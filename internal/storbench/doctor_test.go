package storbench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/testenv"
)

// Doctor runs the real fio through the runner it is given.
func TestDoctor(t *testing.T) {
	testenv.Fio(t)
	ctx := context.Background()
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	local := fio.Runner{Cmder: execx.Local{}}
	missing := fio.Runner{Cmder: execx.Local{}, Binary: filepath.Join(dir, "no-fio")}
	for _, tc := range []struct {
		name   string
		req    storbench.DoctorRequest
		want   map[string]result.CheckStatus // check name -> status
		detail map[string]string             // check name -> part of its detail
		failed int
	}{
		{"all well", storbench.DoctorRequest{Fio: local, DB: filepath.Join(dir, "new", "sub", "r.db")},
			map[string]result.CheckStatus{"fio": result.CheckOK, "results database": result.CheckOK},
			map[string]string{"fio": "fio-", "results database": filepath.Join(dir, "new", "sub", "r.db")}, 0},
		{"no fio", storbench.DoctorRequest{Fio: missing, DB: filepath.Join(dir, "r.db")},
			map[string]result.CheckStatus{"fio": result.CheckFail, "results database": result.CheckOK},
			map[string]string{"fio": "not found"}, 1},
		{"database under a file", storbench.DoctorRequest{Fio: local, DB: filepath.Join(notDir, "r.db")},
			map[string]result.CheckStatus{"fio": result.CheckOK, "results database": result.CheckFail},
			map[string]string{"results database": "is not a directory"}, 1},
		{"no cluster", storbench.DoctorRequest{Fio: local, DB: filepath.Join(dir, "r.db"), K8s: true, Timeout: 10 * time.Second,
			Cluster: kubekit.ConnectOptions{Kubeconfig: filepath.Join(dir, "missing")}},
			map[string]result.CheckStatus{"fio": result.CheckOK, "kubeconfig": result.CheckFail}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks := storbench.Doctor(ctx, tc.req)
			got := map[string]result.Check{}
			for _, c := range checks {
				got[c.Name] = c
			}
			for name, status := range tc.want {
				if got[name].Status != status {
					t.Errorf("%s: %+v, want %s", name, got[name], status)
				}
				if status == result.CheckFail && got[name].Fix == "" {
					t.Errorf("%s failed without a fix", name)
				}
			}
			for name, part := range tc.detail {
				if !strings.Contains(got[name].Detail, part) {
					t.Errorf("%s detail %q lacks %q", name, got[name].Detail, part)
				}
			}
			if n := storbench.DoctorFailures(checks); n != tc.failed {
				t.Errorf("%d failures, want %d: %+v", n, tc.failed, checks)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("doctor left files behind: %v", entries)
	}
}
