package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/units"
)

// ClassesDocument is what storbench classes --output json prints.
type ClassesDocument struct {
	Classes []analysis.Class `json:"classes"`
}

// ClassesText writes a table of StorageClasses and their properties, then
// each class's failover reason and measured figures (or the command that
// measures it).
func ClassesText(w io.Writer, doc ClassesDocument) error {
	classes := doc.Classes
	if len(classes) == 0 {
		_, err := fmt.Fprintln(w, "No StorageClass in this cluster: install a provisioner (k3s ships local-path).")
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tPROVISIONER\tDYNAMIC\tFAILOVER\tACCESS\tEXPAND\tSNAPSHOTS\tBINDING\tRECLAIM"+appHeads())
	for _, c := range classes {
		name := c.Name
		if c.Default {
			name += " (default)"
		}
		access := strings.NewReplacer("ReadWriteOncePod", "RWOP", "ReadWriteOnce", "RWO", "ReadWriteMany", "RWX").Replace(strings.Join(c.AccessModes, ","))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", name, c.Provisioner, yesNo(c.Dynamic), c.Failover, access,
			yesNo(c.Expansion), c.Snapshots, c.BindingMode, c.Reclaim, appCells(c.Qualification))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, c := range classes {
		if q := c.Qualification; q != nil {
			fmt.Fprintf(w, "%s: measured %s (run %s)\n", c.Name, q.When.Format("2006-01-02 15:04"), q.RunID)
			for _, ch := range q.Checks {
				fmt.Fprintf(w, "  %-18s %s\n", ch.Name, ch.Answer())
			}
		} else {
			fmt.Fprintf(w, "%s: failover %s (inferred: %s; measure with storbench classes --measure %s)\n", c.Name, c.Failover, c.FailoverWhy, c.Name)
		}
		if len(c.Measured) == 0 {
			fmt.Fprintf(w, "  performance: not measured: run %s\n", c.Measure)
		}
		for _, f := range c.Measured {
			fmt.Fprintf(w, "  %-22s %s IOPS  %s  p99 %s  (median of %d, last run %s)\n", f.Workload,
				units.IOPS(f.IOPS), units.MBps(f.BytesPerSec), units.Latency(f.LatencyP99), f.Results, f.LastRun)
		}
		if c.PickTwo != "" {
			fmt.Fprintf(w, "  pick two: %s\n", c.PickTwo)
		}
	}
	_, err := fmt.Fprintln(w, "\nMB/s = 10^6 bytes/s; medians of isolated-round results across nodes.")
	return err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
