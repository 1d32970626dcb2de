// Package doctorcmd implements "storbench doctor": can storbench run here,
// and what is there? Local checks always; Kubernetes checks with --k8s.
package doctorcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/runner/kube"
)

type flags struct {
	k8s        bool
	kubeconfig string
	context    string
	namespace  string
	image      string
	timeout    time.Duration
	output     string
}

// NewCommand returns the doctor command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "doctor [--k8s]",
		Short: "Check that storbench can run here (and in Kubernetes with --k8s), with a fix for each problem",
		Long: `Check that storbench can run: fio on this host and the results database;
with --k8s also the cluster: API server and version, every permission storbench
needs (checked with SelfSubjectAccessReview, each missing one named), nodes
(Ready, architecture, taints, labels), StorageClasses (provisioner, default,
binding mode, expansion, reclaim policy) and known provisioners' health
(Longhorn managers, iSCSI initiator errors).

Exit code 1 when a check fails.`,
		Example: `  storbench doctor
  storbench doctor --k8s
  storbench doctor --k8s --context homelab -n benchmarks --output json`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.k8s, "k8s", false, "check the Kubernetes cluster too")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fl.StringVar(&f.context, "context", "", "kubeconfig context")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "namespace storbench would use (default storbench)")
	fl.StringVar(&f.image, "image", kube.DefaultImage, "fio image runs would use")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "bound on the whole check")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		return run(cmd.Context(), d, f)
	}
	return cmd
}

func run(ctx context.Context, d cli.Deps, f *flags) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	checks := localChecks(ctx, d)
	if f.k8s {
		c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: f.kubeconfig, Context: f.context, Namespace: f.namespace})
		if err != nil {
			checks = append(checks, kube.Check{Area: "api", Name: "kubeconfig", Status: kube.StatusFail, Detail: err.Error(),
				Fix: "pass --kubeconfig or --context, or set KUBECONFIG"})
		} else {
			checks = append(checks, kube.Doctor(ctx, c, kube.DoctorOptions{Image: f.image})...)
		}
	}
	if f.output == "json" {
		if err := render.JSON(d.Out, struct {
			Checks []kube.Check `json:"checks"`
		}{checks}); err != nil {
			return err
		}
	} else if err := write(d.Out, checks); err != nil {
		return err
	}
	failed := 0
	for _, c := range checks {
		if c.Status == kube.StatusFail {
			failed++
		}
	}
	if failed > 0 {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("doctor: %d check(s) failed", failed)}
	}
	return nil
}

// localChecks look at fio and the database on this host.
func localChecks(ctx context.Context, d cli.Deps) []kube.Check {
	var out []kube.Check
	fr := fio.Runner{Cmder: execx.Local{}}
	v, err := fr.Version(ctx)
	if err != nil {
		out = append(out, kube.Check{Area: "local", Name: "fio", Status: kube.StatusFail, Detail: err.Error(),
			Fix: "install fio (Debian/Ubuntu: apt-get install fio); Kubernetes targets bring their own"})
	} else {
		out = append(out, kube.Check{Area: "local", Name: "fio", Status: kube.StatusOK, Detail: v})
		if ok, err := fr.HasEngine(ctx, "libaio"); err == nil && !ok {
			out = append(out, kube.Check{Area: "local", Name: "fio libaio engine", Status: kube.StatusWarn,
				Detail: "missing: suites fall back to psync and queue depths above 1 are not honoured",
				Fix:    "install a fio built with libaio (Debian/Ubuntu's fio has it)"})
		}
	}
	db := d.Globals.DB
	if db == "" {
		db = cli.DefaultDBPath(d.Getenv)
	}
	if err := writableDir(filepath.Dir(db)); err != nil {
		out = append(out, kube.Check{Area: "local", Name: "results database", Status: kube.StatusFail, Detail: err.Error(),
			Fix: "pass --db PATH in a writable directory"})
	} else {
		out = append(out, kube.Check{Area: "local", Name: "results database", Status: kube.StatusOK, Detail: db})
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

func write(w io.Writer, checks []kube.Check) error {
	area := ""
	for _, c := range checks {
		if c.Area != area {
			area = c.Area
			if _, err := fmt.Fprintf(w, "\n%s\n", strings.ToUpper(area)); err != nil {
				return err
			}
		}
		mark := map[kube.Status]string{kube.StatusOK: "[ok]  ", kube.StatusWarn: "[warn]", kube.StatusFail: "[FAIL]", kube.StatusInfo: "[info]"}[c.Status]
		line := fmt.Sprintf("  %s %s", mark, c.Name)
		if c.Detail != "" {
			line += ": " + c.Detail
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
		if c.Fix != "" {
			if _, err := fmt.Fprintf(w, "         fix: %s\n", c.Fix); err != nil {
				return err
			}
		}
	}
	return nil
}
