// Package doctorcmd implements "storbench doctor": can storbench run here,
// and what is there? Local checks always; Kubernetes checks with --k8s.
package doctorcmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	req    storbench.DoctorRequest
	output string
}

// NewCommand returns the doctor command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "doctor [--k8s] [--target ssh://host/path | --inventory FILE]",
		Short: "Check that storbench can run here (and in Kubernetes with --k8s), with a fix for each problem",
		Long: `Check that storbench can run: fio on this host and the results database;
with --k8s also the cluster: API server and version, every permission storbench
needs (checked with SelfSubjectAccessReview, each missing one named), nodes
(Ready, architecture, taints, labels), StorageClasses (provisioner, default,
binding mode, expansion, reclaim policy) and known provisioners' health
(Longhorn managers, iSCSI initiator errors).

Exit code 1 when a check fails.`,
		Example: `  storbench doctor
  storbench doctor --k8s
  storbench doctor --k8s --context homelab -n benchmarks --output json
  storbench doctor --inventory hosts.ini --hosts pis --path /mnt/ssd`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.req.K8s, "k8s", false, "check the Kubernetes cluster too")
	fl.StringVar(&f.req.Cluster.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fl.StringVar(&f.req.Cluster.Context, "context", "", "kubeconfig context")
	fl.StringVarP(&f.req.Cluster.Namespace, "namespace", "n", "", "namespace storbench would use (default storbench)")
	fl.StringVar(&f.req.Image, "image", kubekit.DefaultImage, "fio image runs would use")
	fl.StringArrayVarP(&f.req.Targets, "target", "t", nil, "a target to check: ssh://[user@]host[:port]/path (connection, sudo, fio version, path, clock), or any other kind's (repeatable)")
	fl.StringVar(&f.req.SSH.Inventory, "inventory", "", "Ansible inventory whose hosts to check")
	fl.StringVar(&f.req.SSH.Hosts, "hosts", "", "--inventory: the hosts, an Ansible pattern (default all)")
	fl.StringVar(&f.req.SSH.Path, "path", "", "--inventory: the directory or device on every host without storbench_path")
	fl.BoolVar(&f.req.SSH.AcceptNewHostKeys, "ssh-accept-new-host-keys", false, "record the key of a host not yet in known_hosts (a changed key is always refused)")
	fl.BoolVar(&f.req.SSH.Become, "ssh-become", false, "ssh:// targets: run commands through sudo -n as root")
	fl.DurationVar(&f.req.Timeout, "timeout", 30*time.Second, "bound on the whole check")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		f.req.DB, f.req.Getenv = d.DBPath(), d.Getenv
		checks := storbench.Doctor(cmd.Context(), f.req)
		if err := render.Formatted(d.Out, f.output, render.DoctorDocument{Checks: checks}, render.DoctorText); err != nil {
			return err
		}
		if n := storbench.DoctorFailures(checks); n > 0 {
			return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("doctor: %d check(s) failed", n)}
		}
		return nil
	}
	return cmd
}
