// Package qualifycmd implements "storbench qualify": a verdict on whether
// storage is fit for etcd, a Ceph OSD, a Raspberry Pi (the PiBenchmarks
// score) or general placement, from stored runs or after running the suite
// the verdict needs. Its exit code lets scripts gate on the answer.
package qualifycmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
)

type flags struct {
	kind        string
	targets     []string
	labels      []string
	repeat      int
	destructive []string
	suite       string
	groupBy     string
	baseline    string
	deviceSize  string
	output      string
}

// NewCommand returns the qualify command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "qualify --for etcd|ceph-osd|pi-score|general (RUN-ID... | --target PATH)",
		Short: "Judge storage for etcd, a Ceph OSD, a Raspberry Pi or general use; exit 0 pass, 3 warn, 4 fail",
		Long: `Judge whether storage is fit for a purpose, from stored runs or, with
--target, after running the suite the verdict needs (and storing it).

  etcd      p99 fdatasync latency: pass <= 10 ms (etcd documentation), warn
            <= 20 ms (tolerance band), fail above; synced writes per second
            against etcd's 50 (typical) and 500 (heavy load) IOPS. Suite: etcd.
  ceph-osd  4 KiB sync QD1 write IOPS and 4 MiB write throughput classed as
            HDD, consumer SSD without power-loss protection or datacentre SSD,
            plus BlueStore block.db sizing from the device size. Suite: ceph-osd.
  pi-score  the PiBenchmarks score from fio equivalents of its tests. Suite: pi.
  general   placement advice per target or group (read-heavy services,
            databases, CI caches, log aggregation, etcd). Suite: standard.

Every verdict states its threshold and where it comes from. Exit codes: 0
pass, 3 warn, 4 fail, 2 bad usage or missing data, 1 a workload failed.`,
		Example: `  storbench qualify --for etcd --target /var/lib/etcd-test
  storbench qualify --for etcd 20261122-1423
  storbench qualify --for ceph-osd --target /dev/sdb --destructive /dev/sdb
  storbench qualify --for pi-score --target /mnt/usb --output json
  storbench qualify --for general RUN1 RUN2 --group-by storage`,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kind, "for", "", "the verdict: "+strings.Join(analysis.Kinds, ", "))
	fl.StringArrayVarP(&f.targets, "target", "t", nil, "run the verdict's suite on this directory or device first (repeatable)")
	fl.StringArrayVarP(&f.labels, "label", "l", nil, "with --target: label the run, key=value (repeatable)")
	fl.IntVar(&f.repeat, "repeat", 1, "with --target: run the suite this many times on each target")
	fl.StringArrayVar(&f.destructive, "destructive", nil, "with --target: allow write workloads on this block device, destroying its contents (repeatable)")
	fl.StringVar(&f.suite, "suite", "", "with --target: run this suite instead of the verdict's own (a file with the same workload names)")
	fl.StringVar(&f.groupBy, "group-by", "", "general: judge groups of targets sharing this label")
	fl.StringVar(&f.baseline, "baseline", "", "general: show efficiency against KEY=VALUE or a target")
	fl.StringVar(&f.deviceSize, "device-size", "", "ceph-osd: size of the data device for block.db sizing (e.g. 4TB, 960GiB); default: read from the host when it is this one")
	check := cli.OutputFlag(cmd, &f.output, "table", "json", "markdown")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		if err := validate(f, args); err != nil {
			return err
		}
		return run(cmd.Context(), d, f, args)
	}
	return cmd
}

func validate(f *flags, args []string) error {
	if f.kind == "" {
		return cli.Usagef("--for is required: choose one of %s", strings.Join(analysis.Kinds, ", "))
	}
	known := false
	for _, k := range analysis.Kinds {
		known = known || k == f.kind
	}
	if !known {
		return cli.Usagef("--for %q: choose one of %s", f.kind, strings.Join(analysis.Kinds, ", "))
	}
	switch {
	case len(args) == 0 && len(f.targets) == 0:
		return cli.Usagef("name stored runs (storbench qualify --for %s RUN-ID) or a --target to measure", f.kind)
	case len(args) > 0 && len(f.targets) > 0:
		return cli.Usagef("give run IDs or --target, not both")
	case len(f.targets) == 0 && (len(f.labels) > 0 || len(f.destructive) > 0 || f.suite != "" || f.repeat != 1):
		return cli.Usagef("--label, --repeat, --destructive and --suite apply to --target runs only")
	case f.repeat < 1:
		return cli.Usagef("--repeat %d: must be at least 1", f.repeat)
	}
	return nil
}

func run(ctx context.Context, d cli.Deps, f *flags, ids []string) error {
	var sizeFlag int64
	if f.deviceSize != "" {
		sz, err := spec.ParseSize(f.deviceSize)
		if err != nil && strings.Contains(err.Error(), "too large") {
			return cli.Usagef("--device-size: %w", err)
		}
		if err != nil || sz <= 0 {
			return cli.Usagef("--device-size %q: give a size such as 4TB or 960GiB", f.deviceSize)
		}
		sizeFlag = int64(sz)
	}
	st, err := d.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()

	var runErr error
	if len(f.targets) > 0 {
		id, err := measure(ctx, d, st, f)
		if id == "" {
			return err
		}
		ids, runErr = []string{id}, err
		if errors.Is(runErr, engine.ErrInterrupted) {
			return &cli.ExitError{Code: cli.ExitInterrupted, Err: runErr}
		}
	}
	cmp, err := cli.LoadComparison(ctx, st, ids, analysis.Options{GroupBy: f.groupBy, Baseline: f.baseline})
	if err != nil {
		return errors.Join(runErr, err)
	}
	v, err := analysis.Judge(f.kind, cmp.Comparison, analysis.VerdictOptions{DeviceBytes: deviceSizes(cmp.Comparison, sizeFlag)})
	if err != nil {
		var missing *analysis.MissingError
		if errors.As(err, &missing) && runErr == nil {
			return cli.Usage(err)
		}
		return &cli.ExitError{Code: cli.ExitFailed, Err: errors.Join(runErr, err)}
	}
	if err := writeVerdict(d, f.output, cmp, v); err != nil {
		return err
	}
	if runErr != nil {
		// The verdict stands on what finished; a failed workload still fails.
		return &cli.ExitError{Code: cli.ExitFailed, Err: runErr}
	}
	switch v.Status {
	case analysis.Warn:
		return &cli.ExitError{Code: cli.ExitWarn, Err: fmt.Errorf("%s verdict: warn", v.For)}
	case analysis.Fail:
		return &cli.ExitError{Code: cli.ExitVerdictFail, Err: fmt.Errorf("%s verdict: fail", v.For)}
	}
	return nil
}

// Output is qualify's JSON document.
type Output struct {
	Verdict *analysis.Verdict `json:"verdict"`
	Runs    []string          `json:"runs"`
	// ExitCode is the code storbench exits with for this verdict.
	ExitCode int `json:"exit_code"`
}

func writeVerdict(d cli.Deps, output string, cmp *cli.Compared, v *analysis.Verdict) error {
	if output == "json" {
		out := Output{Verdict: v, Runs: []string{}, ExitCode: exitCode(v.Status)}
		for _, r := range cmp.Runs {
			out.Runs = append(out.Runs, r.ID)
		}
		return render.JSON(d.Out, out)
	}
	if output == "markdown" {
		return render.VerdictMarkdown(d.Out, v)
	}
	return render.VerdictText(d.Out, v, d.Color(d.Out))
}

func exitCode(s analysis.Status) int {
	switch s {
	case analysis.Warn:
		return cli.ExitWarn
	case analysis.Fail:
		return cli.ExitVerdictFail
	}
	return cli.ExitOK
}

// measure runs the verdict's suite on the targets and returns the run ID.
func measure(ctx context.Context, d cli.Deps, st store.Store, f *flags) (string, error) {
	name := f.suite
	if name == "" {
		name = analysis.Suite(f.kind)
	}
	s, err := spec.Resolve(name)
	if err != nil {
		return "", cli.Usage(err)
	}
	labels, err := cli.ParseLabels(f.labels)
	if err != nil {
		return "", err
	}
	plan := engine.Plan{Suite: s, Repeat: f.repeat, Labels: labels, Round: result.RoundIsolated}
	seen := map[string]bool{}
	for _, t := range f.targets {
		if seen[t] {
			return "", cli.Usagef("--target %s is given twice", t)
		}
		seen[t] = true
		plan.Targets = append(plan.Targets, runner.Target(local.NewTarget(t, local.Options{Destructive: f.destructive})))
	}
	eng := &engine.Engine{Store: st, Observer: &progress{w: d.ErrOut}}
	r, err := eng.Run(ctx, plan)
	var refused *engine.RefusedError
	switch {
	case errors.As(err, &refused):
		return "", cli.Usage(err)
	case r == nil:
		return "", err
	}
	fmt.Fprintf(d.ErrOut, "stored as run %s\n", r.ID)
	return r.ID, err
}

// progress reports each workload on stderr, so stdout holds only the
// verdict (and stays valid JSON with --output json).
type progress struct{ w io.Writer }

var _ engine.Observer = (*progress)(nil)

func (p *progress) RunStarted(r *result.Run) {
	fmt.Fprintf(p.w, "running suite %s (%d workloads) on %s\n", r.Suite, len(r.Workloads), strings.Join(r.Targets, ", "))
}
func (p *progress) Notice(target, msg string)                  { fmt.Fprintf(p.w, "notice: %s: %s\n", target, msg) }
func (p *progress) WorkloadStarted(s engine.Step)              {}
func (p *progress) WorkloadProgress(engine.Step, fio.Progress) {}
func (p *progress) WorkloadFinished(s engine.Step, r *result.Result) {
	status := string(r.Status)
	if r.Status == result.StatusFailed && r.Error != "" {
		status += ": " + r.Error
	}
	fmt.Fprintf(p.w, "  %s %d/%d %s: %s\n", s.Target, s.Index, s.Count, s.Workload, status)
}

// deviceSizes finds each target's device size for block.db advice: the
// --device-size flag, or the disk named in the target's labels when the
// results come from this host.
func deviceSizes(c *analysis.Comparison, flag int64) map[string]int64 {
	out := map[string]int64{}
	host, _ := os.Hostname()
	for _, e := range c.Environments {
		if flag > 0 {
			out[e.Target] = flag
			continue
		}
		disk := result.LabelDisk.Of(e.Labels)
		if disk == "" {
			disk = result.LabelDevice.Of(e.Labels)
		}
		if disk == "" || result.LabelHostname.Of(e.Labels) != host || strings.ContainsAny(disk, "/.") {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/sys/class/block", disk, "size"))
		if err != nil {
			continue
		}
		sectors, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err == nil && sectors > 0 {
			out[e.Target] = sectors * 512 // sysfs counts 512-byte sectors whatever the device's own
		}
	}
	return out
}
