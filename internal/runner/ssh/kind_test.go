package ssh

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/runner/ssh/sshtest"
)

// kindSuite is the ssh kind's entry into the kind conformance suite.
// Doctor reaches the Valid hosts, which here answer nothing (port 1): a
// failed connection check with its fix each.
func kindSuite(valid ...string) runnertest.KindSuite {
	return runnertest.KindSuite{
		Kind:  Kind{},
		Valid: valid,
		Malformed: []runnertest.Malformed{
			{Target: "ssh:///srv", Want: "write ssh://[user@]host[:port]/path"},
			{Target: "ssh://pi01", Want: "names no path on the host"},
			{Target: "ssh://pi:secret@pi01/srv", Want: "passwords are not accepted"},
			{Target: "ssh://pi01:99999/srv", Want: "is not a port number"},
		},
		Foreign: []string{"/srv/bench", "rbd:bench", "gluster://server/vol", "k8s:longhorn"},
	}
}

// ownHome is a home of the test's own: no ~/.ssh/config, no agent.
func ownHome(t *testing.T) string {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	return home
}

func TestKindConformance(t *testing.T) {
	ownHome(t)
	runnertest.KindConformance(t, kindSuite("ssh://127.0.0.1:1/srv/bench", "ssh://pi@127.0.0.1:1/dev/sdb"))
}

// Two paths on one host and one on another: one connection per host,
// each target named as the user named it, the hosts' memory read once
// each.
func TestKindGroupOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sshd: not in the unit tier (-short)")
	}
	home := ownHome(t)
	_, pub := sshtest.Key(t, filepath.Join(home, ".ssh"), "id_ed25519")
	var known []byte
	var urls []string
	for _, dirs := range [][]string{{t.TempDir(), t.TempDir()}, {t.TempDir()}} {
		s := sshtest.Start(t)
		s.Authorize(t, pub)
		known = append(known, s.KnownHostsLine()+"\n"...)
		for _, d := range dirs {
			urls = append(urls, TargetPrefix+sshtest.User(t)+"@"+s.Addr()+d)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), known, 0o600); err != nil {
		t.Fatal(err)
	}
	s := kindSuite(urls...)
	s.Open = true
	runnertest.KindConformance(t, s)

	var specs []runner.Spec
	for _, u := range urls {
		spec, _, err := Kind{}.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	g, err := Kind{}.Open(t.Context(), specs, runner.GroupOptions{ReadMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	}()
	if len(g.Memory) != 2 {
		t.Errorf("memory read %d times for 2 hosts: %+v", len(g.Memory), g.Memory)
	}
	for i, tg := range g.Targets {
		if tg.Name() != urls[i] {
			t.Errorf("target %d named %s, want %s", i, tg.Name(), urls[i])
		}
	}
	if a, b := g.Targets[0].(*Target).client, g.Targets[1].(*Target).client; a != b {
		t.Error("two paths on one host: two connections")
	}
}

func TestFioVersionsCheck(t *testing.T) {
	hosts := []HostSpec{{Name: "ssh://pi01/srv"}, {Name: "ssh://pi02/srv"}, {Name: "ssh://pi03/srv"}}
	if c := fioVersionsCheck(hosts, []string{"fio-3.33", "", "fio-3.33"}); len(c) != 0 {
		t.Errorf("one version: %+v", c)
	}
	c := fioVersionsCheck(hosts, []string{"fio-3.33", "fio-3.28", "fio-3.33"})
	if len(c) != 1 || c[0].Status != result.CheckWarn || c[0].Detail != "fio-3.28 on ssh://pi02/srv; fio-3.33 on ssh://pi01/srv, ssh://pi03/srv" || c[0].Fix == "" {
		t.Errorf("two versions: %+v", c)
	}
}
