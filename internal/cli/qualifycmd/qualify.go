// Package qualifycmd implements "storbench qualify": a verdict on whether
// storage is fit for etcd, a Ceph OSD, a Raspberry Pi (the PiBenchmarks
// score) or general placement, from stored runs or after running the suite
// the verdict needs. Its exit code lets scripts gate on the answer.
package qualifycmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	req    storbench.QualifyRequest
	labels []string
	output string
}

// NewCommand returns the qualify command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "qualify --for etcd|ceph-osd|pi-score|general|sqlite (RUN-ID... | --target PATH)",
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
  sqlite    file locks, fsync, rename between two clients and SQLite's commits
            (WAL/rollback x FULL/NORMAL) for SQLite apps. Its own probe; a
            --target may also be ssh://[user@]host[:port]/dir (storbench's
            binary is copied there for the probe, and removed).

Every verdict states its threshold and where it comes from. Exit codes: 0
pass, 3 warn, 4 fail, 2 bad usage or missing data, 1 a workload failed.`,
		Example: `  storbench qualify --for etcd --target /var/lib/etcd-test
  storbench qualify --for etcd 20261122-1423
  storbench qualify --for ceph-osd --target /dev/sdb --destructive /dev/sdb
  storbench qualify --for pi-score --target /mnt/usb --output json
  storbench qualify --for sqlite --target ssh://pi@nas.lan/volume1/apps
  storbench qualify --for general RUN1 RUN2 --group-by storage`,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.req.For, "for", "", "the verdict: "+strings.Join(analysis.Kinds, ", "))
	fl.StringArrayVarP(&f.req.Targets, "target", "t", nil, "run the verdict's suite on this directory or device first (repeatable)")
	fl.StringArrayVarP(&f.labels, "label", "l", nil, "with --target: label the run, key=value (repeatable)")
	fl.IntVar(&f.req.Repeat, "repeat", 1, "with --target: run the suite this many times on each target")
	fl.StringArrayVar(&f.req.Destructive, "destructive", nil, "with --target: allow write workloads on this block device, destroying its contents (repeatable)")
	fl.StringVar(&f.req.Suite, "suite", "", "with --target: run this suite instead of the verdict's own (a file with the same workload names)")
	fl.StringVar(&f.req.GroupBy, "group-by", "", "general: judge groups of targets sharing this label")
	fl.StringVar(&f.req.Baseline, "baseline", "", "general: show efficiency against KEY=VALUE or a target")
	fl.StringVar(&f.req.DeviceSize, "device-size", "", "ceph-osd: size of the data device for block.db sizing (e.g. 4TB, 960GiB); default: read from the host when it is this one")
	check := cli.OutputFlag(cmd, &f.output, "table", "json", "markdown")
	cmd.PreRunE = func(*cobra.Command, []string) error { return check() }
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		labels, err := cli.ParseLabels(f.labels)
		if err != nil {
			return err
		}
		st := d.LazyStore() // a refused request creates no database
		defer st.Close()
		f.req.RunIDs, f.req.Labels, f.req.Observer = args, labels, &progress{w: d.ErrOut}
		q, err := storbench.Qualify(cmd.Context(), st, f.req)
		if q != nil && q.Measured != "" {
			fmt.Fprintf(d.ErrOut, "stored as run %s\n", q.Measured)
		}
		if err != nil {
			return cli.FromLibrary(err)
		}
		code, exit := cli.VerdictExit(q.Verdict, q.Failed)
		if err := render.Verdict(d.Out, f.output, q.Verdict, q.Runs, code, d.Color(d.Out)); err != nil {
			return err
		}
		return exit
	}
	return cmd
}

// progress reports each workload on stderr as it finishes, so stdout holds
// only the verdict (valid JSON with --output json).
type progress struct {
	storbench.Silent
	w io.Writer
}

func (p *progress) RunStarted(r *result.Run) {
	fmt.Fprintf(p.w, "running suite %s (%d workloads) on %s\n", r.Suite, len(r.Workloads), strings.Join(r.Targets, ", "))
}
func (p *progress) Notice(target, msg string) { fmt.Fprintf(p.w, "notice: %s: %s\n", target, msg) }
func (p *progress) WorkloadFinished(s engine.Step, r *result.Result) {
	status := string(r.Status)
	if r.Status == result.StatusFailed && r.Error != "" {
		status += ": " + r.Error
	}
	fmt.Fprintf(p.w, "  %s %d/%d %s: %s\n", s.Target, s.Index, s.Count, s.Workload, status)
}
