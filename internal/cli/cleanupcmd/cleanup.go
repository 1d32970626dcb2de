// Package cleanupcmd implements "storbench cleanup": remove what killed
// runs left behind: test files on local directory targets, and with --k8s
// the pods and PVCs found by storbench's labels.
package cleanupcmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	k8s    bool
	ssh    bool
	hosts  storbench.SSHCleanupRequest  // --ssh: the hosts; RunID and DryRun come from kube
	kube   storbench.KubeCleanupRequest // a local cleanup takes its RunID and DryRun
	output string
}

// NewCommand returns the cleanup command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "cleanup [--k8s | --ssh]",
		Short: "Remove what killed runs left behind: test files here or on SSH hosts, or Kubernetes pods and PVCs",
		Long: `Without --k8s: find the runs stored as running whose storbench process is gone
(killed with SIGKILL, or the host rebooted: the pid, its start time and the
boot ID no longer match), remove the work directory each left on its local
directory targets (TARGET/storbench-RUNID, only when it holds nothing but
storbench's files), and record the run as abandoned. Its finished workloads
stay stored. A run recorded on another host is left alone.

With --k8s: find every pod, PVC and VolumeSnapshot labelled
app.kubernetes.io/managed-by=storbench (in all namespaces, or -n NAMESPACE),
delete them, start a node a killed classes --measure run stopped (marked
storbench.io/stopped-by; with the start command that run kept on this
machine before the stop, under $XDG_STATE_HOME/storbench, never the copy in
the node's start-with annotation), lift the cordons and out-of-service taints that storbench's
annotations (storbench.io/cordoned-by, tainted-by) mark on nodes, wait for the
objects to go, and report what could not be deleted. PersistentVolumes that a Retain class kept after
storbench's claims went are listed with the command that removes them.

Runs clean up after themselves, also on failure, timeout and Ctrl-C; this is
for runs that were killed outright. Objects of a run still in progress carry
the same labels: use --older-than or --run to leave a live run alone.`,
		Example: `  storbench cleanup --dry-run
  storbench cleanup
  storbench cleanup --ssh --inventory hosts.ini --hosts pis --path /mnt/ssd --dry-run
  storbench cleanup --k8s --dry-run
  storbench cleanup --k8s
  storbench cleanup --k8s --run 20261122-142305-3fa9
  storbench cleanup --k8s --older-than 1h --delete-namespace`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.k8s, "k8s", false, "clean up Kubernetes objects instead of local test files")
	fl.BoolVar(&f.ssh, "ssh", false, "remove what killed runs left on hosts over SSH (work directories marked as theirs, docs/ssh.md)")
	fl.StringArrayVarP(&f.hosts.Targets, "target", "t", nil, "ssh://[user@]host[:port]/path to clean (with --ssh), or another kind's target: what runs left there (repeatable)")
	fl.StringVar(&f.hosts.SSH.Inventory, "inventory", "", "--ssh: Ansible inventory whose hosts to clean")
	fl.StringVar(&f.hosts.SSH.Hosts, "hosts", "", "--ssh --inventory: the hosts, an Ansible pattern (default all)")
	fl.StringVar(&f.hosts.SSH.Path, "path", "", "--ssh --inventory: the directory on every host without storbench_path")
	kubeFlags(fl, &f.kube)
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		if !f.ssh && !f.k8s && len(f.hosts.Targets) > 0 && f.hosts.SSH == (storbench.SSHRequest{}) && !storbench.IsSSHTarget(f.hosts.Targets[0]) {
			// Another kind's targets (an RBD pool, a Gluster volume).
			rep, err := storbench.CleanupKinds(cmd.Context(), storbench.KindCleanupRequest{Targets: f.hosts.Targets, Getenv: d.Getenv, RunID: f.kube.RunID, DryRun: f.kube.DryRun})
			if rep == nil {
				return cli.FromLibrary(err)
			}
			return finish(render.Formatted(d.Out, f.output, rep, render.KindCleanupText), err)
		}
		ssh := f.ssh || len(f.hosts.Targets) > 0 || f.hosts.SSH != (storbench.SSHRequest{})
		if ssh && f.k8s {
			return cli.Usagef("cleanup: --ssh (or --target, --inventory, --hosts, --path) and --k8s are exclusive")
		}
		if f.k8s {
			rep, err := storbench.CleanupKube(cmd.Context(), f.kube)
			if err != nil {
				return cli.FromLibrary(err)
			}
			if err := render.Formatted(d.Out, f.output, rep, render.KubeCleanupText); err != nil {
				return err
			}
			if len(rep.Failed) > 0 {
				return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("cleanup: %d object(s) could not be deleted", len(rep.Failed))}
			}
			return nil
		}
		for _, name := range []string{"kubeconfig", "context", "namespace", "older-than", "delete-namespace", "timeout", "ceph", "ceph-conf"} {
			if cmd.Flags().Changed(name) {
				return cli.Usagef("cleanup: --%s applies to --k8s only", name)
			}
		}
		if ssh {
			f.hosts.RunID, f.hosts.DryRun = f.kube.RunID, f.kube.DryRun
			rep, err := storbench.CleanupSSH(cmd.Context(), f.hosts)
			if rep == nil {
				return cli.FromLibrary(err)
			}
			return finish(render.Formatted(d.Out, f.output, rep, render.SSHCleanupText), err)
		}
		st, err := d.OpenStore(cmd.Context())
		if err != nil {
			return err
		}
		defer st.Close()
		rep, cleanErr := storbench.CleanupLocal(cmd.Context(), st, storbench.CleanupRequest{RunID: f.kube.RunID, DryRun: f.kube.DryRun})
		if rep == nil {
			return cli.FromLibrary(cleanErr)
		}
		return finish(render.Formatted(d.Out, f.output, rep, render.LocalCleanupText), cleanErr)
	}
	return cmd
}

// finish is a cleanup's end: the report's own error, else exit 1 when
// removing failed part way.
func finish(renderErr, cleanErr error) error {
	if renderErr != nil || cleanErr == nil {
		return renderErr
	}
	return &cli.ExitError{Code: cli.ExitFailed, Err: cleanErr}
}

// kubeFlags are --k8s's flags (a local cleanup takes --run and --dry-run
// from them too).
func kubeFlags(fl *pflag.FlagSet, kube *storbench.KubeCleanupRequest) {
	fl.StringVar(&kube.Cluster.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fl.StringVar(&kube.Cluster.Context, "context", "", "kubeconfig context")
	fl.StringVarP(&kube.Cluster.Namespace, "namespace", "n", "", "only this namespace (default: all namespaces, or storbench where listing them all is not allowed)")
	fl.StringVar(&kube.RunID, "run", "", "only what this run left")
	fl.DurationVar(&kube.OlderThan, "older-than", 0, "only objects created at least this long ago, e.g. 1h")
	fl.BoolVar(&kube.DryRun, "dry-run", false, "list what would be removed, remove nothing")
	fl.BoolVar(&kube.DeleteNamespace, "delete-namespace", false, "also delete namespaces storbench created, once empty of other objects")
	fl.DurationVar(&kube.Timeout, "timeout", kubekit.DefaultTimeout, "bound on waiting for the objects to go")
	fl.BoolVar(&kube.Ceph, "ceph", false, "--k8s: also let back the Ceph OSDs killed runs held down (classes --measure --ceph-osd-failure), with the ceph CLI on this host")
	fl.StringVar(&kube.CephConf, "ceph-conf", "", "--k8s --ceph: the cluster's ceph.conf (default CEPH_CONF, /etc/ceph/ceph.conf)")
	fl.StringVar(&kube.CephToolbox, "ceph-toolbox", "", "--k8s --ceph: use the ceph CLI in Rook's toolbox in this namespace (pods app=rook-ceph-tools) instead of this host's")
}
