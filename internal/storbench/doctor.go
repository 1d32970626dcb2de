package storbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
)

// DoctorRequest says where to check that storbench can run.
type DoctorRequest struct {
	// Fio runs fio where storbench would run it; its zero value runs
	// fio on this host.
	Fio fio.Runner
	// DB is the results database's path; its directory must accept files.
	DB string
	// K8s checks the cluster Cluster names too, with the fio image Image.
	K8s     bool
	Cluster kubekit.ConnectOptions
	Image   string
	// Targets are checked too, and SSH's inventory hosts, each by its
	// kind (runner.KindDoctor: ssh://host/path as hosts).
	Targets []string
	SSH     SSHRequest
	// Kinds recognise Targets; nil is Kinds().
	Kinds *runner.Registry
	// Getenv is the environment kinds read (CEPH_CONF...); nil is none.
	Getenv func(string) string
	// Timeout bounds the whole check; 0 is no bound.
	Timeout time.Duration
}

// Doctor checks fio and the results database, and with K8s the cluster:
// API server, permissions, nodes, StorageClasses and provisioners' health.
// Every problem is a check with a fix, never an error.
func Doctor(ctx context.Context, req DoctorRequest) []result.Check {
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	if req.Fio.Cmder == nil {
		req.Fio.Cmder = execx.Local{}
	}
	checks := localChecks(ctx, req)
	checks = append(checks, cephCLICheck(ctx, req)...) // doctor_ceph.go
	checks = append(checks, kindDoctorChecks(ctx, req, req.Targets)...)
	if !req.K8s {
		return checks
	}
	c, err := kubekit.Connect(req.Cluster)
	if err != nil {
		return append(checks, result.Check{Area: "api", Name: "kubeconfig", Status: result.CheckFail, Detail: err.Error(),
			Fix: "pass --kubeconfig or --context, or set KUBECONFIG"})
	}
	return append(checks, kube.Doctor(ctx, c, kube.DoctorOptions{Image: req.Image, RBAC: classcheck.RBAC})...)
}

// DoctorFailures counts the checks that failed.
func DoctorFailures(checks []result.Check) int {
	n := 0
	for _, c := range checks {
		if c.Status == result.CheckFail {
			n++
		}
	}
	return n
}

// withTimeout bounds ctx by d, unless d is 0.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// localChecks look at fio and the database.
func localChecks(ctx context.Context, req DoctorRequest) []result.Check {
	var out []result.Check
	v, err := req.Fio.Version(ctx)
	if err != nil {
		out = append(out, result.Check{Area: "local", Name: "fio", Status: result.CheckFail, Detail: err.Error(),
			Fix: "install fio (Debian/Ubuntu: apt-get install fio); Kubernetes targets bring their own"})
	} else {
		out = append(out, result.Check{Area: "local", Name: "fio", Status: result.CheckOK, Detail: v})
		if ok, err := req.Fio.HasEngine(ctx, "libaio"); err == nil && !ok {
			out = append(out, result.Check{Area: "local", Name: "fio libaio engine", Status: result.CheckWarn,
				Detail: "missing: suites fall back to psync and queue depths above 1 are not honoured",
				Fix:    "install a fio built with libaio (Debian/Ubuntu's fio has it)"})
		}
	}
	if err := writableDir(filepath.Dir(req.DB)); err != nil {
		out = append(out, result.Check{Area: "local", Name: "results database", Status: result.CheckFail, Detail: err.Error(),
			Fix: "pass --db PATH in a writable directory"})
	} else {
		out = append(out, result.Check{Area: "local", Name: "results database", Status: result.CheckOK, Detail: req.DB})
	}
	return out
}

// writableDir checks the nearest existing parent of dir accepts new files.
func writableDir(dir string) error {
	for {
		if fi, err := os.Stat(dir); err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			f, err := os.CreateTemp(dir, ".storbench-doctor-*")
			if err != nil {
				return fmt.Errorf("cannot write in %s: %w", dir, err)
			}
			name := f.Name()
			if err := f.Close(); err != nil {
				return err
			}
			return os.Remove(name)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("no existing parent directory")
		}
		dir = parent
	}
}
