package storbench

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

// doctor on real hosts: a good directory, a device holding ext4 and a
// blank one, an unknown host key, a host that is down; each check says
// what it found and failures carry a fix.
func TestDoctorSSH(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	testenv.Loop(t)
	servers := sshFleet(t, 2, true)
	ext4 := corpusDevice(t, "ext4")
	dir, blank, used := t.TempDir(), testenv.LoopDevice(t, 64<<20), ext4(t)
	down := sshURL(t, servers[1], "/srv")
	servers[1].Stop()
	req := DoctorRequest{
		Fio: fio.Runner{Cmder: execx.Local{}}, DB: filepath.Join(t.TempDir(), "r.db"), Timeout: time.Minute,
		Targets: []string{sshURL(t, servers[0], dir), sshURL(t, servers[0], blank), sshURL(t, servers[0], used), down},
	}
	checks := Doctor(context.Background(), req)
	got := map[string]result.Check{}
	for _, c := range checks {
		got[c.Area+" | "+c.Name] = c
		t.Logf("%s | %s: %s %s (fix: %s)", c.Area, c.Name, c.Status, c.Detail, c.Fix)
	}
	for _, w := range []struct {
		key, detail string
		status      result.CheckStatus
	}{
		{"ssh " + req.Targets[0] + " | connection", "host key known", result.CheckOK},
		{"ssh " + req.Targets[0] + " | fio", "fio-", result.CheckOK},
		{"ssh " + req.Targets[0] + " | target " + dir, "writable", result.CheckOK},
		{"ssh " + req.Targets[0] + " | clock", "ms from this machine's", result.CheckOK},
		{"ssh " + req.Targets[1] + " | target " + blank, "blank and unused", result.CheckOK},
		{"ssh " + req.Targets[2] + " | target " + used, "ext2/3/4 superblock", result.CheckFail},
		{"ssh " + down + " | connection", "connection refused", result.CheckFail},
	} {
		c, ok := got[w.key]
		if !ok {
			t.Errorf("no check %q", w.key)
			continue
		}
		if c.Status != w.status || !strings.Contains(c.Detail, w.detail) || (c.Status == result.CheckFail && c.Fix == "") {
			t.Errorf("%s: %s %q (fix %q), want %s saying %q", w.key, c.Status, c.Detail, c.Fix, w.status, w.detail)
		}
	}
	// Same clock on loopback: the skew is the estimate's error.
	clock := got["ssh "+req.Targets[0]+" | clock"].Detail
	if ms, err := strconv.Atoi(strings.Fields(clock + " x")[0]); err != nil || ms < -20 || ms > 20 {
		t.Errorf("clock of a host on this machine: %q, want within 20 ms", clock)
	}
	if _, ok := got["ssh | fio versions"]; ok {
		t.Error("one fio on every host, yet versions called out")
	}
	if n := DoctorFailures(checks); n != 2 {
		t.Errorf("%d failures, want 2", n)
	}
}
