// Package classescmd implements "storbench classes": each StorageClass with
// what it gives (dynamic provisioning, failover, speed from stored results).
package classescmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	req    storbench.ClassesRequest
	output string
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
	fl.StringVar(&f.req.Cluster.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fl.StringVar(&f.req.Cluster.Context, "context", "", "kubeconfig context")
	fl.DurationVar(&f.req.Timeout, "timeout", 30*time.Second, "bound on talking to the cluster")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		st := d.LazyStore() // opened once the cluster answered
		defer st.Close()
		classes, err := storbench.Classes(cmd.Context(), st, f.req)
		if err != nil {
			return cli.FromLibrary(err)
		}
		return render.Formatted(d.Out, f.output, render.ClassesDocument{Classes: classes}, render.ClassesText)
	}
	return cmd
}
