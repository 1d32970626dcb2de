// Package classescmd implements "storbench classes": each StorageClass with
// what it gives (dynamic provisioning, failover, speed from stored results).
package classescmd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/units"
)

type flags struct {
	kubeconfig string
	context    string
	timeout    time.Duration
	output     string
}

// NewCommand returns the classes command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "classes",
		Short: "List StorageClasses with dynamic provisioning, failover and measured performance",
		Long: `List the cluster's StorageClasses with the three properties homelab storage
choices trade off:

  dynamic   can it create volumes on demand (no for kubernetes.io/no-provisioner)
  failover  does a volume survive losing its node (replicated or network-backed
            storage such as Longhorn with more than one replica, Rook-Ceph, NFS,
            iSCSI: yes; node-local storage such as local-path, hostpath, LVM/ZFS
            local PV, TopoLVM: no)
  measured  the median figures of stored results for the class, per workload,
            or the command that measures it

plus access modes, volume expansion and snapshot support (a
VolumeSnapshotClass for the class's driver).`,
		Example: `  storbench classes
  storbench classes --output json`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fl.StringVar(&f.context, "context", "", "kubeconfig context")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "bound on talking to the cluster")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		return run(cmd.Context(), d, f)
	}
	return cmd
}

// Class is a StorageClass with its measured performance.
type Class struct {
	kube.ClassInfo
	Measured []Figure `json:"measured"`
	// Measure is the command to run when nothing is measured yet.
	Measure string `json:"measure,omitempty"`
}

// Figure is the median of a workload's stored results for a class.
type Figure struct {
	Workload    string        `json:"workload"`
	Results     int           `json:"results"`
	IOPS        float64       `json:"iops"`
	BytesPerSec float64       `json:"bytes_per_sec"`
	LatencyP99  time.Duration `json:"lat_p99_ns"`
	LastRun     string        `json:"last_run"`
}

func run(ctx context.Context, d cli.Deps, f *flags) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: f.kubeconfig, Context: f.context})
	if err != nil {
		return cli.Usage(err)
	}
	snaps, err := kube.SnapshotDrivers(ctx, c.Client)
	if err != nil {
		snaps = nil // unknown; shown as such
	}
	infos, err := kube.Classes(ctx, c.Client, snaps)
	if err != nil {
		return fmt.Errorf("classes on %s: %w", c.Host, err)
	}
	st, err := d.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	classes, err := withFigures(ctx, st, infos)
	if err != nil {
		return err
	}
	if f.output == "json" {
		if classes == nil {
			classes = []Class{}
		}
		return render.JSON(d.Out, struct {
			Classes []Class `json:"classes"`
		}{classes})
	}
	if len(classes) == 0 {
		_, err := fmt.Fprintln(d.Out, "No StorageClass in this cluster: install a provisioner (k3s ships local-path).")
		return err
	}
	return write(d.Out, classes)
}

// withFigures attaches stored results labelled with each class.
func withFigures(ctx context.Context, st store.Store, infos []kube.ClassInfo) ([]Class, error) {
	results, err := st.Results(ctx, store.ResultFilter{Status: result.StatusComplete})
	if err != nil {
		return nil, err
	}
	byClass := map[string]map[string][]result.Result{}
	for _, r := range results {
		cl := result.LabelStorageClass.Of(r.Labels)
		if cl == "" || r.Round != result.RoundIsolated {
			continue
		}
		if byClass[cl] == nil {
			byClass[cl] = map[string][]result.Result{}
		}
		byClass[cl][r.Workload] = append(byClass[cl][r.Workload], r)
	}
	var out []Class
	for _, ci := range infos {
		c := Class{ClassInfo: ci, Measured: []Figure{}}
		for w, rs := range byClass[ci.Name] {
			c.Measured = append(c.Measured, figure(w, rs))
		}
		sort.Slice(c.Measured, func(i, j int) bool { return c.Measured[i].Workload < c.Measured[j].Workload })
		if len(c.Measured) == 0 {
			c.Measure = "storbench run --suite quick --target k8s:" + ci.Name
		}
		out = append(out, c)
	}
	return out, nil
}

func figure(workload string, rs []result.Result) Figure {
	f := Figure{Workload: workload, Results: len(rs)}
	var iops, bw, p99 []float64
	for _, r := range rs {
		if v, ok := r.Metric(result.MetricIOPS); ok {
			iops = append(iops, v)
		}
		if v, ok := r.Metric(result.MetricBW); ok {
			bw = append(bw, v)
		}
		if v, ok := r.Metric(result.MetricLatP99); ok {
			p99 = append(p99, v)
		}
		if r.RunID > f.LastRun {
			f.LastRun = r.RunID
		}
	}
	f.IOPS, f.BytesPerSec, f.LatencyP99 = median(iops), median(bw), time.Duration(median(p99))
	return f
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func write(w io.Writer, classes []Class) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tPROVISIONER\tDYNAMIC\tFAILOVER\tACCESS\tEXPAND\tSNAPSHOTS\tBINDING\tRECLAIM")
	for _, c := range classes {
		name := c.Name
		if c.Default {
			name += " (default)"
		}
		access := strings.NewReplacer("ReadWriteOncePod", "RWOP", "ReadWriteOnce", "RWO", "ReadWriteMany", "RWX").Replace(strings.Join(c.AccessModes, ","))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, c.Provisioner, yesNo(c.Dynamic), c.Failover, access,
			yesNo(c.Expansion), c.Snapshots, c.BindingMode, c.Reclaim)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, c := range classes {
		fmt.Fprintf(w, "%s: failover %s (%s)\n", c.Name, c.Failover, c.FailoverWhy)
		if len(c.Measured) == 0 {
			fmt.Fprintf(w, "  performance: not measured: run %s\n", c.Measure)
			continue
		}
		for _, f := range c.Measured {
			fmt.Fprintf(w, "  %-22s %s IOPS  %s  p99 %s  (median of %d, last run %s)\n", f.Workload,
				units.IOPS(f.IOPS), units.MBps(f.BytesPerSec), units.Latency(f.LatencyP99), f.Results, f.LastRun)
		}
	}
	_, err := fmt.Fprintln(w, "\nMB/s = 10^6 bytes/s; medians of isolated-round results across nodes.")
	return err
}
