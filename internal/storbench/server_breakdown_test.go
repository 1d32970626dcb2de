package storbench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/ssh/sshtest"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// A NAS outside the cluster, as homelabs have one: host "nas" (a network
// namespace with its own sshd, its port shaped to 100 Mbit/s) exports a
// directory over sshfs, mounted through host "a"'s network; a run on that
// mount from a, with the NAS itself as one more ssh:// target and the
// network round, explains the mount's write by the path to the server as
// the round measured it, and names the NAS's own storage beside it.
func TestRunServerOutsideMeasured(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	sshfs := testenv.Tool(t, "sshfs", "sshfs")
	net := sshtest.NewNetwork(t, 2)
	a, nas := net.Nodes[0], net.Nodes[1]

	home := t.TempDir()
	dot := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dot, 0o700); err != nil {
		t.Fatal(err)
	}
	key, pub := sshtest.Key(t, dot, "id_ed25519")
	var known []string
	var servers []*sshtest.Server
	for _, nd := range net.Nodes {
		s := sshtest.StartIn(t, nd, "Subsystem sftp internal-sftp") // sshfs speaks sftp
		s.Authorize(t, pub)
		servers = append(servers, s)
		// the bracketed line for storbench's client, the bare one for
		// OpenSSH's (sshfs), which looks port 22 up without brackets
		known = append(known, s.KnownHostsLine(), nd.Addr+" "+s.HostKey)
	}
	knownFile := filepath.Join(dot, "known_hosts")
	if err := os.WriteFile(knownFile, []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")

	// The NAS's export and its own storage beside it; a's mount of the
	// export, its traffic leaving through a's namespace.
	export, nasDisk, mnt := t.TempDir(), t.TempDir(), t.TempDir()
	mount := exec.Command("nsenter", "--net=/run/netns/"+a.Name, sshfs, sshtest.User(t)+"@"+nas.Addr+":"+export, mnt,
		"-o", "IdentityFile="+key+",UserKnownHostsFile="+knownFile+",StrictHostKeyChecking=yes,BatchMode=yes")
	if out, err := mount.CombinedOutput(); err != nil {
		t.Fatalf("sshfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("fusermount3", "-u", mnt).CombinedOutput(); err != nil {
			exec.Command("umount", "-l", mnt).Run()
			t.Logf("fusermount3 -u %s: %v: %s", mnt, err, out)
		}
	})
	nas.Shape(t, "100mbit", 100e6/8)

	suite := filepath.Join(t.TempDir(), "nas.yaml")
	if err := os.WriteFile(suite, []byte(`name: nas
workloads:
  - {name: seq-write, rw: write, bs: 1MiB, size: 256MiB, runtime: 6s, time_based: true, ioengine: psync, direct: false, end_fsync: true}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	req := DefaultRunRequest()
	req.Suite = suite
	onMount := "ssh://" + sshtest.User(t) + "@" + servers[0].Addr() + mnt
	req.Targets = []string{onMount, "ssh://" + sshtest.User(t) + "@" + servers[1].Addr() + nasDisk}
	req.Rounds = []string{result.RoundNetwork, result.RoundIsolated}
	req.Telemetry = false
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	ctx := context.Background()
	run, err := Run(ctx, st, req, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	detail, err := Show(ctx, st, ShowRequest{RunID: run.ID})
	if err != nil {
		t.Fatal(err)
	}
	var b *analysis.Breakdown
	for i := range detail.Breakdowns {
		if detail.Breakdowns[i].Target == onMount {
			b = &detail.Breakdowns[i]
		}
	}
	if b == nil {
		for _, r := range detail.Results {
			t.Logf("%s %s %s: %v", r.Round, r.Target, r.Workload, r.Labels)
		}
		t.Fatalf("no breakdown of the write on the NAS's mount among %d", len(detail.Breakdowns))
	}
	t.Log(b.Summary)
	var path, disk float64
	for _, p := range b.Parts {
		switch p.Name {
		case analysis.PartServerLink:
			path = p.CeilingBPS
		case analysis.PartServerDisk:
			disk = p.CeilingBPS
		}
	}
	if b.Remote[0] != nas.Addr || path < 0.8*12.5e6 || path > 1.03*12.5e6 {
		t.Errorf("server %v, path to it %.1f MB/s: want %s at about 12.5 MB/s (100 Mbit/s), measured by the round", b.Remote, path/1e6, nas.Addr)
	}
	if disk < 3*path {
		t.Errorf("the NAS's own storage %.1f MB/s: want it measured, well above its link", disk/1e6)
	}
	if b.LimitedBy != analysis.BoundServerLink || b.Percent < 60 || b.Percent > 105 {
		t.Errorf("limited by %q at %.0f%% of the ceiling: want the server's link", b.LimitedBy, b.Percent)
	}
}
