// Package cleanupcmd implements "storbench cleanup": remove what killed
// runs left behind: test files on local directory targets (local.go), and
// with --k8s the pods and PVCs found by storbench's labels.
package cleanupcmd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/runner/kube"
)

type flags struct {
	k8s             bool
	kubeconfig      string
	context         string
	namespace       string
	runID           string
	olderThan       time.Duration
	dryRun          bool
	deleteNamespace bool
	timeout         time.Duration
	output          string
}

// NewCommand returns the cleanup command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "cleanup [--k8s]",
		Short: "Remove what killed runs left behind: test files, or Kubernetes pods and PVCs",
		Long: `Without --k8s: find the runs stored as running whose storbench process is gone
(killed with SIGKILL, or the host rebooted: the pid, its start time and the
boot ID no longer match), remove the work directory each left on its local
directory targets (TARGET/storbench-RUNID, only when it holds nothing but
storbench's files), and record the run as abandoned. Its finished workloads
stay stored. A run recorded on another host is left alone.

With --k8s: find every pod and PVC labelled app.kubernetes.io/managed-by=storbench (in all
namespaces, or -n NAMESPACE), delete them, wait for them to go, and report what
could not be deleted. PersistentVolumes that a Retain class kept after
storbench's claims went are listed with the command that removes them.

Runs clean up after themselves, also on failure, timeout and Ctrl-C; this is
for runs that were killed outright. Objects of a run still in progress carry
the same labels: use --older-than or --run to leave a live run alone.`,
		Example: `  storbench cleanup --dry-run
  storbench cleanup
  storbench cleanup --k8s --dry-run
  storbench cleanup --k8s
  storbench cleanup --k8s --run 20261122-142305-3fa9
  storbench cleanup --k8s --older-than 1h --delete-namespace`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.k8s, "k8s", false, "clean up Kubernetes objects instead of local test files")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fl.StringVar(&f.context, "context", "", "kubeconfig context")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "only this namespace (default: all namespaces, or storbench where listing them all is not allowed)")
	fl.StringVar(&f.runID, "run", "", "only what this run left")
	fl.DurationVar(&f.olderThan, "older-than", 0, "only objects created at least this long ago, e.g. 1h")
	fl.BoolVar(&f.dryRun, "dry-run", false, "list what would be removed, remove nothing")
	fl.BoolVar(&f.deleteNamespace, "delete-namespace", false, "also delete namespaces storbench created, once empty of other objects")
	fl.DurationVar(&f.timeout, "timeout", kube.DefaultTimeout, "bound on waiting for the objects to go")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		if !f.k8s {
			for _, name := range []string{"kubeconfig", "context", "namespace", "older-than", "delete-namespace", "timeout"} {
				if cmd.Flags().Changed(name) {
					return cli.Usagef("cleanup: --%s applies to --k8s only", name)
				}
			}
			return runLocal(cmd.Context(), d, f)
		}
		return run(cmd.Context(), d, f)
	}
	return cmd
}

// Report is what cleanup did.
type Report struct {
	DryRun     bool                  `json:"dry_run"`
	Namespace  string                `json:"namespace"` // "" for all
	Found      []kube.Object         `json:"found"`
	Deleted    []kube.Object         `json:"deleted"`
	Failed     []Failure             `json:"failed"`
	Volumes    []kube.ReleasedVolume `json:"released_volumes"`
	Namespaces []string              `json:"deleted_namespaces,omitempty"`
	// Notes are problems that did not stop the cleanup.
	Notes []string `json:"notes,omitempty"`
}

// Failure is an object that could not be deleted.
type Failure struct {
	kube.Object
	Error string `json:"error"`
}

func run(ctx context.Context, d cli.Deps, f *flags) error {
	c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: f.kubeconfig, Context: f.context, Namespace: f.namespace})
	if err != nil {
		return cli.Usage(err)
	}
	// Deleting must finish even after Ctrl-C: leftovers are what this
	// command exists to remove.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.timeout+30*time.Second)
	defer cancel()

	rep := Report{DryRun: f.dryRun, Namespace: f.namespace, Found: []kube.Object{}, Deleted: []kube.Object{}, Failed: []Failure{}, Volumes: []kube.ReleasedVolume{}}
	objs, err := kube.FindLeftovers(wctx, c.Client, f.namespace, f.runID)
	if apierrors.IsForbidden(err) && f.namespace == "" {
		rep.Namespace = c.Namespace()
		objs, err = kube.FindLeftovers(wctx, c.Client, rep.Namespace, f.runID)
	}
	if err != nil {
		return fmt.Errorf("cleanup on %s: %w", c.Host, err)
	}
	for _, o := range objs {
		if f.olderThan > 0 && time.Since(o.Created) < f.olderThan {
			continue
		}
		rep.Found = append(rep.Found, o)
	}
	if !f.dryRun && len(rep.Found) > 0 {
		for _, o := range rep.Found {
			if o.Kind != "pod" {
				continue
			}
			// A killed run's fio may still run; a Retain volume would keep the file.
			if err := kube.WipePod(wctx, c, o.Namespace, o.Name); err != nil {
				rep.Notes = append(rep.Notes, err.Error())
			}
		}
		res := kube.DeleteObjects(wctx, c.Client, rep.Found, f.timeout)
		rep.Deleted = append(rep.Deleted, res.Deleted...)
		for o, e := range res.Failed {
			rep.Failed = append(rep.Failed, Failure{Object: o, Error: e.Error()})
		}
		sort.Slice(rep.Failed, func(i, j int) bool { return rep.Failed[i].String() < rep.Failed[j].String() })
	}
	if vols, err := kube.FindReleasedVolumes(wctx, c.Client); err == nil {
		rep.Volumes = append(rep.Volumes, vols...)
	} else if !apierrors.IsForbidden(err) {
		return err
	}
	if f.deleteNamespace && !f.dryRun && len(rep.Failed) == 0 {
		names, err := deleteNamespaces(wctx, c, f.namespace)
		if err != nil {
			return err
		}
		rep.Namespaces = names
	}

	if f.output == "json" {
		if err := render.JSON(d.Out, rep); err != nil {
			return err
		}
	} else if err := write(d.Out, rep); err != nil {
		return err
	}
	if len(rep.Failed) > 0 {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("cleanup: %d object(s) could not be deleted", len(rep.Failed))}
	}
	return nil
}

// deleteNamespaces removes namespaces storbench created (labelled) that hold
// no pods or PVCs any more.
func deleteNamespaces(ctx context.Context, c *kube.Cluster, only string) ([]string, error) {
	list, err := c.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kube.Selector("")})
	if err != nil {
		return nil, fmt.Errorf("listing storbench's namespaces: %w", err)
	}
	var out []string
	for _, ns := range list.Items {
		if only != "" && ns.Name != only {
			continue
		}
		pods, err := c.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return out, err
		}
		pvcs, err := c.Client.CoreV1().PersistentVolumeClaims(ns.Name).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return out, err
		}
		if len(pods.Items) > 0 || len(pvcs.Items) > 0 {
			continue // someone else uses it
		}
		if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return out, fmt.Errorf("deleting namespace %s: %w", ns.Name, err)
		}
		out = append(out, ns.Name)
	}
	return out, nil
}

func write(w io.Writer, rep Report) error {
	where := "all namespaces"
	if rep.Namespace != "" {
		where = "namespace " + rep.Namespace
	}
	if len(rep.Found) == 0 {
		fmt.Fprintf(w, "No storbench pods or PVCs in %s.\n", where)
	}
	verb := "deleted"
	if rep.DryRun {
		verb = "would delete"
	}
	failed := map[string]string{}
	for _, f := range rep.Failed {
		failed[f.String()] = f.Error
	}
	for _, o := range rep.Found {
		line := fmt.Sprintf("%s %s", verb, o)
		if o.RunID != "" {
			line += " (run " + o.RunID
			if o.Target != "" {
				line += ", " + o.Target
			}
			line += ")"
		}
		if e, bad := failed[o.String()]; bad {
			line = fmt.Sprintf("NOT deleted %s: %s", o, e)
		}
		fmt.Fprintln(w, line)
	}
	for _, ns := range rep.Namespaces {
		fmt.Fprintf(w, "deleted namespace %s\n", ns)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, v := range rep.Volumes {
		fmt.Fprintf(w, "PV %s (class %s) is %s after storbench's claim %s: remove it with: %s\n", v.Name, v.Class, v.Phase, v.Claim, v.Command)
	}
	return nil
}
