// Package classescmd implements "storbench classes": each StorageClass with
// what it gives (dynamic provisioning, failover, speed from stored results).
package classescmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	req     storbench.ClassesRequest
	measure storbench.MeasureClassRequest
	output  string
}

// NewCommand returns the classes command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "classes",
		Short: "List StorageClasses with dynamic provisioning, failover and measured performance",
		Long: `List the cluster's StorageClasses with what homelab storage choices trade
off: dynamic (volumes on demand), failover (does a volume survive losing its
node: Longhorn with replicas, Rook-Ceph, NFS, iSCSI yes; local-path, hostpath,
LVM/ZFS local PV no), measured (the stored figures, or the command that measures
them), plus access modes, expansion and snapshot support.

With --measure CLASS it measures instead of inferring: provisioning timed from
its own watches, persistence, snapshot and restore, clone, expansion and
graceful failover, data checked by sha256, all it made removed (Ctrl-C too), stored
as round "class". The plan printed first says what it changes: the failover
check CORDONS a node (--no-cordon skips it); --node-stop-command STOPS --node,
over SSH on its own host (on k3s 'sudo /usr/local/bin/k3s-killall.sh': 'systemctl
stop k3s-agent' leaves the containers running); --ceph-osd-failure HOLDS one
OSD of a Ceph class's pool DOWN (ceph osd add-noup, ceph osd down) under a
writer and lets it back (rm-noup), with the ceph CLI on this host or in
Rook's toolbox (--ceph-toolbox NAMESPACE).
docs/kubernetes.md.`,
		Example: `  storbench classes
  storbench classes --measure longhorn --no-cordon
  storbench classes --measure longhorn --inventory hosts.ini --node pi-3 --node-stop-command 'sudo /usr/local/bin/k3s-killall.sh' --out-of-service`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.req.Cluster.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fl.StringVar(&f.req.Cluster.Context, "context", "", "kubeconfig context")
	fl.DurationVar(&f.req.Timeout, "timeout", 30*time.Second, "bound on talking to the cluster")
	fl.StringVar(&f.measure.Class, "measure", "", "measure this StorageClass (provisioning, failover, snapshots, ...) and store the answers")
	fl.StringVar(&f.measure.Profile, "profile", "quick", "with --measure: quick or full")
	fl.IntVar(&f.measure.Claims, "claims", 0, "with --measure: claims provisioned at once (default 3 quick, 20 full)")
	fl.StringVar(&f.measure.Image, "image", "", "with --measure: the check pods' image (needs sh, dd, sha256sum, df, sync; fio for the node-failure check; alpine: docker.io/library/alpine)")
	fl.StringVar(&f.measure.PullPolicy, "image-pull-policy", "", "with --measure: the check pods' imagePullPolicy: Always, IfNotPresent or Never (as run's)")
	fl.StringVar(&f.measure.PullPolicy, "pull-policy", "", "")
	_ = fl.MarkDeprecated("pull-policy", "use --image-pull-policy (the same flag as run's)")
	fl.StringVar(&f.measure.PodOverrides, "pod-overrides", "", "with --measure: YAML/JSON strategic-merge patch for every check pod (imagePullSecrets, tolerations, resources...), as run's")
	fl.StringVar(&f.measure.SnapshotClass, "snapshot-class", "", "with --measure: the VolumeSnapshotClass to use (default: the driver's default class; never a backup class)")
	fl.BoolVar(&f.measure.NoCordon, "no-cordon", false, "with --measure: skip the graceful failover check, which cordons a node for about a minute")
	fl.StringVar(&f.measure.NodeFailure.Node, "node", "", "with --node-stop-command: the node to stop (required; the writer is placed there, the commands run on its own host)")
	fl.DurationVar(&f.measure.WaitTimeout, "wait-timeout", 2*time.Minute, "with --measure: bound on each wait (binding, a pod running, a snapshot ready)")
	fl.StringVarP(&f.req.Cluster.Namespace, "namespace", "n", "", "with --measure: namespace for the check objects (default storbench)")
	fl.StringVar(&f.measure.NodeFailure.StopCommand, "node-stop-command", "", "with --measure: also fail --node: this command stops it, containers and all ({node} is its name; on k3s: sudo /usr/local/bin/k3s-killall.sh), run over SSH on the node's own host of --inventory; docs/kubernetes.md")
	fl.StringVar(&f.measure.NodeFailure.StartCommand, "node-start-command", "", "with --node-stop-command: the command that brings the node back (default: you are told to)")
	fl.StringVar(&f.measure.NodeFailure.Inventory, "inventory", "", "with --node-stop-command: the fleet's Ansible inventory")
	fl.StringVar(&f.measure.NodeFailure.Host, "node-host", "", "with --node-stop-command: the inventory host the commands run on, which must be the node's own (default: the host named like the node)")
	fl.BoolVar(&f.measure.NodeFailure.OutOfService, "out-of-service", false, "with --node-stop-command: apply the node.kubernetes.io/out-of-service taint once the node is NotReady and its workloads are verified gone (removed again always)")
	fl.BoolVar(&f.measure.CephFailure.Enabled, "ceph-osd-failure", false, "with --measure on a class backed by Ceph: also hold one OSD of its pool DOWN (ceph osd add-noup, ceph osd down) under a writer, then let it back (rm-noup); the ceph CLI runs on this host; docs/ceph.md")
	fl.IntVar(&f.measure.CephFailure.OSD, "ceph-osd", -1, "with --ceph-osd-failure: the OSD to hold down (default: the highest-numbered acting for the class's pool)")
	fl.StringVar(&f.measure.CephFailure.Conf, "ceph-conf", "", "with --ceph-osd-failure: the ceph.conf of the cluster (default CEPH_CONF, /etc/ceph/ceph.conf)")
	fl.StringVar(&f.measure.CephFailure.Toolbox, "ceph-toolbox", "", "with --ceph-osd-failure: use the ceph CLI in Rook's toolbox in this namespace (pods app=rook-ceph-tools), not this host's")
	fl.DurationVar(&f.measure.CephFailure.Hold, "ceph-hold", 15*time.Second, "with --ceph-osd-failure: how long the OSD stays down")
	fl.StringVar(&f.measure.CephFailure.StopCommand, "ceph-osd-stop-command", "", "with --ceph-osd-failure: take the OSD out the harsher way with this command, run with sh -c on this host ({osd} is its number): kill or freeze its process, cut its link; Ceph must notice by itself")
	fl.StringVar(&f.measure.CephFailure.StartCommand, "ceph-osd-start-command", "", "with --ceph-osd-stop-command: the command that brings the OSD back (required)")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		st := d.LazyStore() // opened once the cluster answered
		defer st.Close()
		if f.measure.Class != "" {
			f.measure.Cluster = f.req.Cluster
			f.measure.Progress = func(m string) { fmt.Fprintln(d.ErrOut, m) }
			m, err := storbench.MeasureClass(cmd.Context(), st, f.measure)
			if err != nil {
				return cli.FromLibrary(err)
			}
			return render.Formatted(d.Out, f.output, storbench.ClassMeasurementDocument(m), render.ClassQualificationText)
		}
		classes, err := storbench.Classes(cmd.Context(), st, f.req)
		if err != nil {
			return cli.FromLibrary(err)
		}
		return render.Formatted(d.Out, f.output, render.ClassesDocument{Classes: classes}, render.ClassesText)
	}
	return cmd
}
