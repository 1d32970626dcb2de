// Package runcmd implements "storbench run": a suite (or a raw fio job) on
// one or more targets, stored as it goes.
package runcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/contention"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
)

type flags struct {
	suite       string
	fioJob      string
	targets     []string
	labels      []string
	repeat      int
	destructive []string
	failFast    bool
	dryRun      bool
	// getenv expands ${VAR} in a --fio-job file; nil means the process
	// environment.
	getenv    func(string) string
	workloads []string
	output    string
	// Telemetry and the contention round (contention.go).
	round       string
	probe       string
	noiseTarget string
	telemetry   bool
	// Steady state, repeat auto, cache and preconditioning (validity.go).
	measure measureFlags
	// Kubernetes targets and rounds (kube.go).
	kube    kubeFlags
	changed func(name string) bool
}

// NewCommand returns the run command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "run --target PATH [--suite NAME|FILE] [flags]",
		Short: "Run a benchmark suite on one or more targets and store the results",
		Long: `Run a suite of fio workloads on each target in turn and store every result
as soon as it is measured.

A target is a directory (storbench creates its own test file there and removes
it afterwards) or a block device. Writing to a device destroys its contents:
storbench only does it when --destructive names that exact device, and refuses
even then while the device is mounted, partitioned, held, or carries a
filesystem or partition-table signature.

A target k8s:STORAGECLASS benchmarks a Kubernetes StorageClass on each chosen
node (--nodes, --node-selector): one PVC and one fio pod per node, fio run
through exec, everything deleted afterwards (see docs/kubernetes.md).`,
		Example: `  storbench run --suite quick --target /tmp
  storbench run --suite standard --target /mnt/ssd --label storage=usb-ssd
  storbench run --suite etcd --target /var/lib/etcd-test --repeat 3
  storbench run --suite ./mine.yaml --target /mnt/a --target /mnt/b
  storbench run --fio-job ./job.fio --target /mnt/ssd
  storbench run --fio-job ./job.fio --target /dev/sdb --dry-run
  storbench run --suite standard --target /dev/sdb --destructive /dev/sdb
  storbench run --suite standard --target k8s:longhorn --target k8s:local-path --nodes all --rounds isolated,parallel
  storbench run --suite quick --target k8s:local-path --node-selector storage=nvme --size 5Gi`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.suite, "suite", "standard", "built-in suite name or a suite YAML file (see: storbench suites)")
	fl.StringVar(&f.fioJob, "fio-job", "", "run this fio job file as fio runs it (include, ${VAR}, inline comments), judged on fio's own reading, instead of a suite (docs/fio-jobs.md)")
	fl.StringArrayVarP(&f.targets, "target", "t", nil, "directory or block device to benchmark (repeatable)")
	fl.StringArrayVarP(&f.labels, "label", "l", nil, "label the run, key=value (repeatable), e.g. storage=usb-ssd")
	addMeasureFlags(fl, f) // validity.go: --repeat N|auto, --until-stable, --defeat-cache, --precondition
	fl.StringArrayVar(&f.destructive, "destructive", nil, "allow write workloads on this block device, destroying its contents (repeatable)")
	fl.BoolVar(&f.failFast, "fail-fast", false, "stop at the first failed workload")
	fl.BoolVar(&f.dryRun, "dry-run", false, "with --fio-job: print the job fio would run, the files and devices it touches, the safety verdict and the estimated time; run and store nothing")
	fl.StringSliceVar(&f.workloads, "workloads", nil, "run only these workloads of the suite (comma-separated)")
	fl.StringVar(&f.round, "round", result.RoundIsolated, "isolated: the suite on each target; contention: a latency probe alone, then beside a bulk writer")
	fl.StringVar(&f.probe, "probe", "", "contention round: the latency probe workload (default etcd-fdatasync; any built-in workload name, or a workload of --suite)")
	fl.StringVar(&f.noiseTarget, "noise-target", "", "contention round: run the bulk writer on this directory or device instead of the probe's target")
	fl.BoolVar(&f.telemetry, "telemetry", true, "sample CPU, disk, pressure, temperature and network once a second while each workload runs")
	addKubeFlags(fl, &f.kube)
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		f.changed = cmd.Flags().Changed
		return run(cmd.Context(), d, f, cmd.Flags().Changed("suite"))
	}
	return cmd
}

func run(ctx context.Context, d cli.Deps, f *flags, suiteSet bool) error {
	f.getenv = d.Getenv
	plan, err := buildPlan(f, suiteSet)
	if err != nil {
		return err
	}
	if plan.RawJob != nil {
		// Refuse before anything runs or is stored, in fio's words where fio
		// refuses (rawjob.go); the engine judges again on the prepared target.
		targets, err := localRawTargets(f.targets)
		if err != nil {
			return cli.Usage(err)
		}
		for _, t := range targets {
			j, err := judgeRawJob(ctx, plan.RawJob, t, plan.Policy)
			if err != nil {
				var missing *fio.MissingError
				if errors.As(err, &missing) {
					return &cli.ExitError{Code: cli.ExitFailed, Err: err}
				}
				return cli.Usage(err)
			}
			if f.dryRun {
				printDryRun(d.Out, t, j)
			}
		}
		if f.dryRun {
			fmt.Fprintln(d.Out, "\nDry run: nothing ran and nothing was stored.")
			return nil
		}
	}
	kt, notices, err := kubeTargets(ctx, &f.kube, f.changedFlag, lockedNotices(d.ErrOut))
	if err != nil {
		return err
	}
	plan.Targets = append(plan.Targets, kt...)
	for _, n := range notices {
		fmt.Fprintf(d.ErrOut, "notice: %s\n", n)
	}
	// Opened at the first write, after every target's check: a refused
	// run creates nothing.
	st := d.LazyStore()
	defer st.Close()

	obs := newProgress(d, f.output == "json")
	plan.LiveProgress = obs.live
	eng := &engine.Engine{Store: st, Observer: obs}
	r, runErr := eng.Run(ctx, *plan)
	obs.finish()

	var refused *engine.RefusedError
	switch {
	case errors.As(runErr, &refused):
		return cli.Usage(runErr)
	case r == nil:
		return runErr
	}
	if err := report(context.WithoutCancel(ctx), d, st, r, f.output); err != nil {
		return errors.Join(runErr, err)
	}
	switch {
	case errors.Is(runErr, engine.ErrInterrupted):
		fmt.Fprintf(d.ErrOut, "interrupted: run %s is stored as interrupted with the workloads that finished; test files removed\n", r.ID)
		return &cli.ExitError{Code: cli.ExitInterrupted, Err: runErr}
	case errors.Is(runErr, engine.ErrWorkloadFailed):
		return &cli.ExitError{Code: cli.ExitFailed, Err: runErr}
	}
	var missing *fio.MissingError
	if errors.As(runErr, &missing) {
		return &cli.ExitError{Code: cli.ExitFailed, Err: runErr}
	}
	return runErr
}

func buildPlan(f *flags, suiteSet bool) (*engine.Plan, error) {
	if len(f.targets) == 0 {
		return nil, cli.Usagef("no target: pass --target DIR or --target /dev/DEVICE")
	}
	if f.repeat < 1 {
		return nil, cli.Usagef("--repeat %d: must be at least 1", f.repeat)
	}
	labels, err := cli.ParseLabels(f.labels)
	if err != nil {
		return nil, err
	}
	plan := &engine.Plan{Repeat: f.repeat, Labels: labels, FailFast: f.failFast, Round: result.RoundIsolated,
		Policy: safety.Policy{Destructive: f.destructive}}
	if f.dryRun && f.fioJob == "" {
		return nil, cli.Usagef("--dry-run applies to --fio-job")
	}
	switch {
	case f.fioJob != "" && suiteSet:
		return nil, cli.Usagef("--suite and --fio-job are alternatives: pass one")
	case f.fioJob != "":
		if len(f.workloads) > 0 {
			return nil, cli.Usagef("--workloads selects suite workloads; it does not apply to --fio-job")
		}
		var opts fio.ReadOptions
		if f.getenv != nil {
			opts.Getenv = func(k string) (string, bool) { v := f.getenv(k); return v, v != "" }
		}
		jf, err := fio.ReadJobFile(f.fioJob, opts)
		if err != nil {
			return nil, cli.Usage(err)
		}
		plan.RawJob = &engine.RawJob{Path: f.fioJob, File: jf}
	default:
		s, err := spec.Resolve(f.suite)
		if err != nil {
			return nil, cli.Usage(err)
		}
		if err := s.Select(f.workloads); err != nil {
			return nil, cli.Usage(err)
		}
		plan.Suite = s
	}
	seen := map[string]bool{}
	for _, t := range f.targets {
		if seen[t] {
			return nil, cli.Usagef("--target %s is given twice", t)
		}
		seen[t] = true
		if class, ok, err := splitKubeTarget(t); ok {
			if err != nil {
				return nil, err
			}
			f.kube.classes = append(f.kube.classes, class)
			continue
		}
		plan.Targets = append(plan.Targets, targetFor(t, f))
	}
	if err := applyMeasurement(plan, f); err != nil {
		return nil, err
	}
	if err := applyRound(plan, f, suiteSet); err != nil {
		return nil, err
	}
	if err := checkRounds(plan, &f.kube); err != nil {
		return nil, err
	}
	return plan, nil
}

func targetFor(t string, f *flags) runner.Target {
	return local.NewTarget(t, local.Options{Destructive: f.destructive})
}

type runOutput struct {
	Run     *result.Run     `json:"run"`
	Results []result.Result `json:"results"`
	// Contention pairs the probe alone and under load (--round contention).
	Contention []contention.Report `json:"contention,omitempty"`
}

func report(ctx context.Context, d cli.Deps, st store.Store, r *result.Run, output string) error {
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{r.ID}})
	if err != nil {
		return err
	}
	if output == "json" {
		if results == nil {
			results = []result.Result{}
		}
		return render.JSON(d.Out, runOutput{Run: r, Results: results, Contention: contention.Reports(results)})
	}
	fmt.Fprintln(d.Out)
	if err := render.RunHeader(d.Out, r); err != nil {
		return err
	}
	if len(results) == 0 {
		_, err := fmt.Fprintln(d.Out, "No workload finished.")
		return err
	}
	if err := render.ResultsTable(d.Out, results); err != nil {
		return err
	}
	if err := render.ContentionSection(d.Out, results); err != nil {
		return err
	}
	_, err = fmt.Fprintf(d.Out, "\nStored in %s as run %s (storbench show %s).\n", dbPath(st), r.ID, r.ID)
	return err
}

func dbPath(st store.Store) string {
	if p, ok := st.(interface{ Path() string }); ok {
		return p.Path()
	}
	return "the database"
}
