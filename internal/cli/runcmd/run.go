// Package runcmd implements "storbench run": a suite (or a raw fio job) on
// one or more targets, stored as it goes. It is flags, one call into
// internal/storbench, and a render.
package runcmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

// flags are the run request the flags fill, and what only the command
// needs.
type flags struct {
	req storbench.RunRequest
	// kube is the k8s options; req.Kube points to it once one is given.
	kube   storbench.KubeRequest
	labels []string
	dryRun bool
	output string
	report string // --report FILE
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
through exec, everything deleted afterwards (see docs/kubernetes.md).

A target ssh://[user@]host[:port]/path is a directory or device on a host
reached over SSH as ssh reaches it (~/.ssh/config, ssh-agent, key files, strict
known_hosts); --inventory FILE adds the hosts of an Ansible inventory that
--hosts selects, each at its storbench_path or --path (see docs/ssh.md).`,
		Example: `  storbench run --suite quick --target /tmp
  storbench run --suite standard --target /mnt/ssd --label storage=usb-ssd
  storbench run --suite etcd --target /var/lib/etcd-test --repeat 3
  storbench run --suite ./mine.yaml --target /mnt/a --target /mnt/b
  storbench run --fio-job ./job.fio --target /mnt/ssd
  storbench run --fio-job ./job.fio --target /dev/sdb --dry-run
  storbench run --suite standard --target /dev/sdb --destructive /dev/sdb
  storbench run --suite standard --target k8s:longhorn --target k8s:local-path --nodes all --rounds isolated,parallel
  storbench run --suite quick --target k8s:local-path --node-selector storage=nvme --size 5Gi
  storbench run --suite quick --target ssh://pi@pi01/mnt/ssd --target ssh://pi02/mnt/ssd --rounds isolated,parallel
  storbench run --suite quick --inventory hosts.ini --hosts pis --path /mnt/ssd`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	r, def := &f.req, storbench.DefaultRunRequest()
	*r = def
	fl.StringVar(&r.Suite, "suite", "", "built-in suite name or a suite YAML file (default "+storbench.DefaultSuite+"; see: storbench suites)")
	fl.StringVar(&r.FioJob, "fio-job", "", "run this fio job file as fio runs it (include, ${VAR}, inline comments), judged on fio's own reading, instead of a suite (docs/fio-jobs.md)")
	fl.StringArrayVarP(&r.Targets, "target", "t", nil, "directory, block device, k8s:STORAGECLASS or ssh://[user@]host[:port]/path to benchmark (repeatable)")
	fl.StringArrayVarP(&f.labels, "label", "l", nil, "label the run, key=value (repeatable), e.g. storage=usb-ssd")
	addMeasureFlags(fl, r)
	fl.StringArrayVar(&r.Destructive, "destructive", nil, "allow write workloads on this block device, destroying its contents (repeatable)")
	fl.BoolVar(&r.FailFast, "fail-fast", false, "stop at the first failed workload")
	fl.BoolVar(&f.dryRun, "dry-run", false, "with --fio-job: print the job fio would run, the files and devices it touches, the safety verdict and the estimated time; run and store nothing")
	fl.StringSliceVar(&r.Workloads, "workloads", nil, "run only these workloads of the suite (comma-separated)")
	fl.StringVar(&r.Round, "round", def.Round, "isolated: the suite on each target; contention: a latency probe alone, then beside a bulk writer")
	fl.StringVar(&r.Probe, "probe", "", "contention round: the latency probe workload (default etcd-fdatasync; any built-in workload name, or a workload of --suite)")
	fl.StringVar(&r.NoiseTarget, "noise-target", "", "contention round: run the bulk writer on this directory or device (a local path or an ssh:// target) instead of the probe's target")
	fl.StringVar(&r.NoiseSize, "noise-size", "", "contention round: the bulk writer's file, e.g. 256MiB (default 1GiB: large enough to keep streaming)")
	fl.BoolVar(&r.Telemetry, "telemetry", def.Telemetry, "sample CPU, disk, pressure, temperature and network once a second while each workload runs")
	fl.StringSliceVar(&r.Rounds, "rounds", def.Rounds, "isolated (each target alone), parallel (each workload on all targets at once), network (the links between the targets' nodes), in the order given: network,isolated,parallel")
	fl.StringVar(&r.Sweep.Clients, "clients", "", "the saturation sweep: run one workload (--workloads; default "+storbench.DefaultSweepWorkload+") on this many clients at once, 1,2,4,8, or auto: doubling until the knee is known (docs/sweep.md)")
	fl.StringVar(&r.Sweep.MaxSize, "max-size", "", "--clients: cap each client's file, e.g. 1GiB (the free space, shared by the most clients, may cap it further)")
	fl.BoolVar(&r.NetworkAllPairs, "network-all-pairs", false, "the network round measures every pair of the run's nodes (replica and server nodes among themselves too), not only each fio node against the others")
	kube := addKubeFlags(fl, &f.kube)
	fl.BoolVar(&r.SSH.AcceptNewHostKeys, "ssh-accept-new-host-keys", false, "ssh targets: record the key of a host not yet in known_hosts instead of refusing it (a changed key is always refused)")
	fl.BoolVar(&r.SSH.Become, "ssh-become", false, "ssh:// targets: run storbench's commands on the host through sudo -n as root (passwordless sudo; inventory hosts use ansible_become)")
	fl.StringVar(&r.SSH.Inventory, "inventory", "", "Ansible inventory (INI or YAML) whose hosts become ssh targets")
	fl.StringVar(&r.SSH.Hosts, "hosts", "", "--inventory: the hosts to run on, an Ansible pattern (default all)")
	fl.StringVar(&r.SSH.Path, "path", "", "--inventory: the directory or device on every host without storbench_path")
	fl.StringVar(&f.report, "report", "", "when the run ends, write its report to this file; the extension chooses the format (.html, .md, .json, .csv, .txt)")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		kube.VisitAll(func(k *pflag.Flag) {
			if k.Changed {
				f.req.Kube = &f.kube
			}
		})
		return run(cmd.Context(), d, f)
	}
	return cmd
}

func addMeasureFlags(fl *pflag.FlagSet, r *storbench.RunRequest) {
	m := &r.Measure
	fl.Var(&repeatValue{n: &r.Repeat, auto: &m.RepeatAuto}, "repeat", "run the suite this many times on each target, or auto: repeat each workload until its IOPS are known to --precision")
	fl.BoolVar(&m.UntilStable, "until-stable", false, "run each workload until fio sees its IOPS settle (steady state), up to --stable-max")
	fl.Var(&optionalValue[time.Duration]{&m.StableMax, storbench.DefaultStableMax, time.ParseDuration, "duration"}, "stable-max", "--until-stable: the longest a workload may run without settling")
	fl.Var(&optionalValue[time.Duration]{&m.StableInterval, storbench.DefaultStableInterval, time.ParseDuration, "duration"}, "stable-interval", "--until-stable: how often fio samples (longer for slow devices; other than 1s needs fio 3.34 or later)")
	fl.Var(&optionalValue[float64]{&m.Precision, storbench.DefaultPrecision, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }, "float"}, "precision", "--repeat auto: the 95% confidence interval of the mean IOPS to reach, in ± percent")
	fl.Var(&optionalValue[int]{&m.RepeatMin, storbench.DefaultRepeatMin, strconv.Atoi, "int"}, "repeat-min", "--repeat auto: the fewest runs of each workload")
	fl.Var(&optionalValue[int]{&m.RepeatMax, storbench.DefaultRepeatMax, strconv.Atoi, "int"}, "repeat-max", "--repeat auto: the most runs of each workload")
	fl.BoolVar(&m.DefeatCache, "defeat-cache", false, "size read and buffered workloads beyond the memory that can cache them (bounded by free space) and drop the page cache before each (as root)")
	fl.BoolVar(&m.Precondition, "precondition", false, "write a --destructive device sequentially twice before its random-write workloads (SNIA PTS)")
}

// addKubeFlags binds the k8s options to k and returns them as a set of
// their own, to tell whether any was given.
func addKubeFlags(fl *pflag.FlagSet, k *storbench.KubeRequest) *pflag.FlagSet {
	*k = storbench.DefaultKubeRequest()
	dk, kf := *k, pflag.NewFlagSet("kube", pflag.ContinueOnError)
	kf.StringSliceVar(&k.Nodes, "nodes", dk.Nodes, "k8s targets: all, or node names (comma-separated) to run on")
	kf.StringVar(&k.NodeSelector, "node-selector", "", "k8s targets: only nodes with these labels, e.g. storage=nvme")
	kf.StringVar(&k.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or the in-cluster service account)")
	kf.StringVar(&k.Context, "context", "", "kubeconfig context to use")
	kf.StringVarP(&k.Namespace, "namespace", "n", "", "namespace for storbench's PVCs and pods (default: storbench, created if allowed, else the context's)")
	kf.StringVar(&k.Size, "size", "", "k8s targets: PVC size, e.g. 10Gi (default: the suite's largest file plus 25% and 64 MiB, in whole GiB)")
	kf.StringVar(&k.VolumeMode, "volume-mode", dk.VolumeMode, "k8s targets: Filesystem, or Block to give fio the PVC's raw device")
	kf.StringVar(&k.AccessMode, "access-mode", dk.AccessMode, "k8s targets: PVC access mode: ReadWriteOnce, ReadWriteOncePod, ReadWriteMany")
	kf.StringVar(&k.Image, "image", dk.Image, "k8s targets: container image with sh and fio (the release's storbench-fio by default; alpine: Alpine, installing fio at start)")
	kf.StringVar(&k.PullPolicy, "image-pull-policy", dk.PullPolicy, "k8s targets: Always, IfNotPresent or Never")
	kf.StringVar(&k.PodOverrides, "pod-overrides", "", "k8s targets: YAML/JSON strategic-merge patch for every pod storbench makes, fio and sampler pods (imagePullSecrets, tolerations, resources...); classes --measure takes the same")
	kf.DurationVar(&k.Timeout, "timeout", dk.Timeout, "k8s targets: bound on each wait (binding, scheduling, start, deletion)")
	fl.AddFlagSet(kf)
	return kf
}

// optionalValue is a flag whose request field is a pointer: nil until the
// flag is given, so the request says whether it was.
type optionalValue[T any] struct {
	p     **T
	def   T
	parse func(string) (T, error)
	typ   string // the value's kind in --help
}

func (o *optionalValue[T]) Set(s string) error {
	v, err := o.parse(s)
	if err != nil {
		return err
	}
	*o.p = &v
	return nil
}

func (o *optionalValue[T]) String() string {
	if *o.p != nil {
		return fmt.Sprint(**o.p)
	}
	return fmt.Sprint(o.def)
}

func (o *optionalValue[T]) Type() string { return o.typ }

// repeatValue is --repeat: a count or "auto".
type repeatValue struct {
	n    *int
	auto *bool
}

func (r *repeatValue) String() string {
	if r.auto != nil && *r.auto {
		return "auto"
	}
	if r.n == nil {
		return "1"
	}
	return strconv.Itoa(*r.n)
}

func (r *repeatValue) Set(s string) error {
	if s == "auto" {
		*r.auto, *r.n = true, 1
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is neither a count nor auto", s)
	}
	*r.n, *r.auto = n, false
	return nil
}

func (r *repeatValue) Type() string { return "N|auto" }

func run(ctx context.Context, d cli.Deps, f *flags) error {
	req := f.req
	req.Getenv = d.Getenv
	labels, err := cli.ParseLabels(f.labels)
	if err != nil {
		return err
	}
	req.Labels = labels
	format, reportPath, err := render.ReportFormat(f.report, "")
	if f.report != "" && (err != nil || reportPath == "") {
		return cli.Usagef("--report %s: give a file ending in .html, .md, .json, .csv or .txt", f.report)
	}
	if f.dryRun {
		judged, err := storbench.DryRun(ctx, req)
		for _, j := range judged {
			render.DryRun(d.Out, j)
		}
		if err != nil {
			return cli.FromLibrary(err)
		}
		fmt.Fprintln(d.Out, "\nDry run: nothing ran and nothing was stored.")
		return nil
	}
	// Opened at the first write, after every target's check: a refused
	// run creates nothing.
	st := d.LazyStore()
	defer st.Close()
	p := render.NewProgress(d.Out, d.ErrOut, render.ProgressOptions{JSON: f.output == "json", Live: cli.IsTerminal(d.Out)})
	req.LiveProgress = p.Live()
	r, runErr := storbench.Run(ctx, st, req, observer{p})
	p.Finish()
	var refused *storbench.RequestError
	if r == nil || errors.As(runErr, &refused) {
		return cli.FromLibrary(runErr)
	}
	if err := report(context.WithoutCancel(ctx), d, st, r, f.output); err != nil {
		return errors.Join(runErr, err)
	}
	if reportPath != "" {
		if err := cli.ReportRuns(context.WithoutCancel(ctx), d, st, []string{r.ID}, format, reportPath); err != nil {
			return errors.Join(runErr, fmt.Errorf("--report %s: %w", reportPath, err))
		}
	}
	if errors.Is(runErr, engine.ErrInterrupted) {
		fmt.Fprintf(d.ErrOut, "interrupted: run %s is stored as interrupted with the workloads that finished; test files removed\n", r.ID)
		return &cli.ExitError{Code: cli.ExitInterrupted, Err: runErr}
	}
	return cli.FromLibrary(runErr)
}

// observer hands what the engine reports to the progress printer.
type observer struct{ *render.Progress }

var _ engine.Observer = observer{}

func (o observer) WorkloadStarted(s engine.Step) { o.Progress.WorkloadStarted(workloadStep(s)) }
func (o observer) WorkloadProgress(s engine.Step, p result.Progress) {
	o.Progress.WorkloadProgress(workloadStep(s), p)
}
func (o observer) WorkloadFinished(s engine.Step, r *result.Result) {
	o.Progress.WorkloadFinished(workloadStep(s), r)
}

func workloadStep(s engine.Step) render.WorkloadStep {
	return render.WorkloadStep{Workload: s.Workload, Index: s.Index, Count: s.Count, Repetition: s.Repetition,
		Repetitions: s.Repetitions, Expected: s.Expected}
}

func report(ctx context.Context, d cli.Deps, st store.Store, r *result.Run, output string) error {
	o, err := storbench.LoadRunOutcome(ctx, st, r)
	if err != nil {
		return err
	}
	if output == "json" {
		return render.JSON(d.Out, o)
	}
	fmt.Fprintln(d.Out)
	if err := render.RunHeader(d.Out, r); err != nil {
		return err
	}
	if len(o.Results) == 0 {
		_, err := fmt.Fprintln(d.Out, "No workload finished.")
		return err
	}
	if err := errors.Join(render.ResultsTable(d.Out, o.Results), render.ContentionSection(d.Out, o.Contention), render.SweepSection(d.Out, o.Sweeps)); err != nil {
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
