package classescmd_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/app"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/clitest"
)

// The Ceph OSD failure check's flags reach the request, and what they ask
// that cannot be done is refused as a usage error (exit 2) naming the
// flags, before any cluster is contacted (the kubeconfig named does not
// exist, so reaching for the cluster would fail otherwise).
func TestClassesCephFailureFlags(t *testing.T) {
	dir := t.TempDir()
	kubeconfig, db := filepath.Join(dir, "no-kubeconfig"), filepath.Join(dir, "results.db")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"conf and toolbox", []string{"--ceph-osd-failure", "--ceph-conf", "/etc/ceph/ceph.conf", "--ceph-toolbox", "rook-ceph"},
			"the ceph CLI on this host (--ceph-conf) or Rook's toolbox's (--ceph-toolbox), not both"},
		{"toolbox without the check", []string{"--ceph-toolbox", "rook-ceph"},
			"--ceph-toolbox applies to the Ceph OSD failure check: set --ceph-osd-failure too"},
		{"conf without the check", []string{"--ceph-conf", "/etc/ceph/ceph.conf"},
			"--ceph-conf applies to the Ceph OSD failure check: set --ceph-osd-failure too"},
		{"stop command without the check", []string{"--ceph-osd-stop-command", "kill {osd}", "--ceph-osd-start-command", "start {osd}"},
			"--ceph-osd-stop-command applies to the Ceph OSD failure check"},
		{"stop command without start", []string{"--ceph-osd-failure", "--ceph-osd-stop-command", "kill {osd}"},
			"--ceph-osd-stop-command takes the OSD out with your command, and needs one that starts it again: set --ceph-osd-start-command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := clitest.Run(t, app.Run, db, append([]string{"classes", "--kubeconfig", kubeconfig, "--measure", "rook-ceph-block"}, tc.args...)...)
			if inv.Code != cli.ExitUsage || !strings.Contains(inv.Stderr, tc.want) {
				t.Errorf("want exit %d saying %q, got %d: %s", cli.ExitUsage, tc.want, inv.Code, inv.Stderr)
			}
		})
	}
	// The toolbox alone, with the check, passes the flags' checks and
	// stops only at the cluster: the kubeconfig named.
	inv := clitest.Run(t, app.Run, db, "classes", "--kubeconfig", kubeconfig, "--measure", "rook-ceph-block", "--ceph-osd-failure", "--ceph-toolbox", "rook-ceph")
	if inv.Code == cli.ExitOK || !strings.Contains(inv.Stderr, kubeconfig) {
		t.Errorf("the toolbox with the check: want an error about the kubeconfig %s, got %d: %s", kubeconfig, inv.Code, inv.Stderr)
	}
}
