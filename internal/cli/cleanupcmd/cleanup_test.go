package cleanupcmd

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/cli"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	d := cli.Deps{Streams: cli.Streams{Out: &out, ErrOut: &out}, Globals: &cli.Globals{DB: filepath.Join(t.TempDir(), "r.db")},
		Getenv: func(string) string { return "" }}
	cmd := NewCommand(d)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// The --ssh flags' refusals, each a usage error (exit 2) saying what was
// wrong, before any host is contacted.
func TestCleanupSSHFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no host", []string{"--ssh"}, "name the hosts: --target ssh://host/path or --inventory"},
		{"local target", []string{"--ssh", "-t", "/srv"}, "/srv is not an ssh:// target"},
		{"with --k8s", []string{"--ssh", "--k8s"}, "and --k8s are exclusive"},
		{"target with --k8s", []string{"-t", "ssh://h/srv", "--k8s"}, "and --k8s are exclusive"},
		{"k8s flag", []string{"--ssh", "-t", "ssh://h/srv", "--namespace", "x"}, "--namespace applies to --k8s only"},
		{"hosts alone", []string{"--hosts", "pis"}, "--hosts and --path choose hosts of an inventory"},
		{"hosts without inventory", []string{"--ssh", "-t", "ssh://h/srv", "--hosts", "pis"}, "--hosts and --path choose hosts of an inventory"},
		{"target without path", []string{"--ssh", "-t", "ssh://h"}, "names no path on the host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.args...)
			var ee *cli.ExitError
			if !errors.As(err, &ee) || ee.Code != cli.ExitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want exit %d saying %q, got %v", cli.ExitUsage, tc.want, err)
			}
		})
	}
}

// --ceph's flags: how to reach Ceph is named one way, and only with
// --ceph; refused as usage errors before any cluster is contacted.
func TestCleanupCephFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "no-kubeconfig")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"conf and toolbox", []string{"--ceph", "--ceph-conf", "/etc/ceph/ceph.conf", "--ceph-toolbox", "rook-ceph"},
			"the ceph CLI on this host (--ceph-conf) or Rook's toolbox's (--ceph-toolbox), not both"},
		{"toolbox without --ceph", []string{"--ceph-toolbox", "rook-ceph"}, "--ceph-toolbox says how to reach the Ceph"},
		{"conf without --ceph", []string{"--ceph-conf", "/etc/ceph/ceph.conf"}, "--ceph-conf says how to reach the Ceph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, append([]string{"--k8s", "--kubeconfig", kubeconfig}, tc.args...)...)
			var ee *cli.ExitError
			if !errors.As(err, &ee) || ee.Code != cli.ExitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want exit %d saying %q, got %v", cli.ExitUsage, tc.want, err)
			}
		})
	}
	_, err := run(t, "--k8s", "--kubeconfig", kubeconfig, "--ceph", "--ceph-toolbox", "rook-ceph")
	if err == nil || !strings.Contains(err.Error(), kubeconfig) {
		t.Errorf("--ceph --ceph-toolbox: want an error about the kubeconfig %s, got %v", kubeconfig, err)
	}
}
