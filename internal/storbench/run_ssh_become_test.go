package storbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/ssh"
	"github.com/storbench/storbench/internal/runner/ssh/sshtest"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// becomeHost is an sshd an unprivileged user of this machine logs in to,
// and an inventory naming it pi01 with ansible_become set; ~/.ssh holds
// the user's key and the host's key.
func becomeHost(t *testing.T, path string) (user, inv string) {
	t.Helper()
	testenv.Tool(t, "sudo", "sudo")
	home := t.TempDir()
	dot := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dot, 0o700); err != nil {
		t.Fatal(err)
	}
	_, pub := sshtest.Key(t, dot, "id_ed25519")
	s := sshtest.Start(t, "AuthorizedKeysFile .ssh/authorized_keys")
	user = sshtest.NewUser(t, pub)
	if err := os.WriteFile(filepath.Join(dot, "known_hosts"), []byte(s.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	inv = filepath.Join(t.TempDir(), "hosts.ini")
	ini := "[pis]\npi01 ansible_host=127.0.0.1 ansible_port=" + strconv.Itoa(s.Port) + " ansible_user=" + user +
		" storbench_path=" + path + "\n[pis:vars]\nansible_become=true\n"
	if err := os.WriteFile(inv, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	return user, inv
}

// An unprivileged user with passwordless sudo measures a device only root
// may open, through ansible_become; a sudo that asks for a password stops
// the run before anything is stored, naming the host and the fix.
func TestRunSSHBecomeDevice(t *testing.T) {
	testenv.Fio(t)
	testenv.Loop(t)
	dev := testenv.LoopDevice(t, 64<<20)
	user, inv := becomeHost(t, dev)
	req := DefaultRunRequest()
	req.Suite, req.Telemetry, req.Workloads = "testdata/run-tiny.yaml", false, []string{"rr"}
	req.SSH = SSHRequest{Inventory: inv}
	req.Destructive = []string{ssh.TargetName("pi01", dev)}

	t.Run("sudo asks for a password", func(t *testing.T) {
		sshtest.Sudoers(t, user+" ALL=(ALL) ALL")
		db := filepath.Join(t.TempDir(), "r.db")
		st := store.NewLazy(db)
		defer st.Close()
		_, err := Run(context.Background(), st, req, nil)
		var be *ssh.BecomeError
		if !errors.As(err, &be) || !strings.Contains(err.Error(), "ssh://pi01"+dev) || !strings.Contains(err.Error(), "NOPASSWD") {
			t.Fatalf("want a BecomeError naming the target and the fix, got %v", err)
		}
		if _, serr := os.Stat(db); !os.IsNotExist(serr) {
			t.Errorf("a refused run created %s", db)
		}
		// doctor says the same, as a failed sudo check with its fix.
		checks := Doctor(context.Background(), DoctorRequest{Fio: fio.Runner{Cmder: execx.Local{}}, DB: db, SSH: SSHRequest{Inventory: inv}})
		var sudo *result.Check
		for i := range checks {
			if checks[i].Name == "sudo" {
				sudo = &checks[i]
			}
		}
		if sudo == nil || sudo.Status != result.CheckFail || !strings.Contains(sudo.Fix, user+" ALL=(root) NOPASSWD: ALL") {
			t.Errorf("doctor's sudo check: %+v", sudo)
		}
	})
	t.Run("passwordless sudo", func(t *testing.T) {
		sshtest.Sudoers(t, user+" ALL=(ALL) NOPASSWD: ALL")
		o := runStored(t, req)
		if len(o.Results) != 1 || o.Results[0].Status != result.StatusComplete || o.Results[0].Target != "ssh://pi01"+dev {
			t.Fatalf("results: %+v", o.Results)
		}
		if rd := o.Results[0].Read; rd == nil || rd.IOPS <= 0 {
			t.Errorf("no IOPS measured on the device: %+v", rd)
		}
	})
}
