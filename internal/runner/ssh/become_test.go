package ssh

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/inventory"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/runner/ssh/sshtest"
	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/internal/testenv"
)

// userHost is a test sshd that an unprivileged user of this machine,
// made for the test, logs in to with a key of its own.
type userHost struct {
	host
	user string
}

func newUserHost(t *testing.T) userHost {
	t.Helper()
	testenv.Tool(t, "sudo", "sudo")
	// Users' own authorized_keys: sshd reads it as the user, who cannot
	// reach the test's temporary directories.
	h := newHost(t, "AuthorizedKeysFile .ssh/authorized_keys")
	return userHost{host: h, user: sshtest.NewUser(t, h.pub)}
}

func (h userHost) options(t *testing.T, become bool) Options {
	o := h.host.options(t)
	o.User, o.Become = h.user, become
	return o
}

func TestBecome(t *testing.T) {
	h := newUserHost(t)
	t.Run("passwordless sudo", func(t *testing.T) {
		sshtest.Sudoers(t, h.user+" ALL=(ALL) NOPASSWD: ALL")
		c := dial(t, h.options(t, true))
		if got := strings.TrimSpace(output(t, c, "id", "-un")); got != "root" || c.Become() != "root" {
			t.Errorf("with become: commands run as %q (Become %q), want root", got, c.Become())
		}
		plain := dial(t, h.options(t, false))
		if got := strings.TrimSpace(output(t, plain, "id", "-un")); got != h.user || plain.Become() != "" {
			t.Errorf("without become: commands run as %q (Become %q), want %s", got, plain.Become(), h.user)
		}
	})
	t.Run("become_user", func(t *testing.T) {
		sshtest.Sudoers(t, h.user+" ALL=(nobody) NOPASSWD: ALL")
		o := h.options(t, true)
		o.BecomeUser = "nobody"
		if got := strings.TrimSpace(output(t, dial(t, o), "id", "-un")); got != "nobody" {
			t.Errorf("commands run as %q, want nobody", got)
		}
	})
	for _, tc := range []struct {
		name    string
		sudoers []string
		reason  string
		want    string
	}{
		{"sudo asks for a password", []string{h.user + " ALL=(ALL) ALL"}, "password", "NOPASSWD: ALL"},
		{"not in sudoers", nil, "", "sudo"},
		{"other user only", []string{h.user + " ALL=(nobody) NOPASSWD: ALL"}, "", "as root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.sudoers) > 0 {
				sshtest.Sudoers(t, tc.sudoers...)
			}
			o := h.options(t, true)
			o.Name = "pi-03"
			_, err := Dial(context.Background(), o)
			var be *BecomeError
			if !errors.As(err, &be) || (tc.reason != "" && be.Reason != tc.reason) {
				t.Fatalf("want a BecomeError (%s), got %v", tc.reason, err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "pi-03: ansible_become") || !strings.Contains(msg, tc.want) || !strings.Contains(msg, h.user) {
				t.Errorf("the refusal does not name the host, the user and %q: %v", tc.want, err)
			}
		})
	}
}

// TestBecomeDeviceTarget: a device only root may open, reached by an
// unprivileged user with become: judged and measured through sudo.
func TestBecomeDeviceTarget(t *testing.T) {
	testenv.Fio(t)
	testenv.Loop(t)
	h := newUserHost(t)
	sshtest.Sudoers(t, h.user+" ALL=(ALL) NOPASSWD: ALL")
	subject := func(t *testing.T, dev string, become, named bool) runnertest.Subject {
		c := dial(t, h.options(t, become))
		name := TargetName("pi-03", dev)
		var opts TargetOptions
		if named {
			opts.Destructive = []string{name}
		}
		return runnertest.Subject{Target: NewTarget(name, c, dev, opts), Need: writeNeed("become"),
			Leftovers: func() []string { return nil }, State: func() string { return safetytest.Sum(t, dev) }}
	}
	var ext4 func(t testing.TB) string
	for _, c := range safetytest.Cases() {
		if c.Name == "ext4" {
			ext4 = c.Device
		}
	}
	runnertest.TargetConformance(t, runnertest.TargetSuite{
		Safe: func(t *testing.T) runnertest.Subject {
			return subject(t, testenv.LoopDevice(t, 32<<20), true, true)
		},
		Unsafe: []runnertest.Unsafe{
			{Name: "ext4 named, with become", Want: "refusing to write", Make: func(t *testing.T) runnertest.Subject {
				return subject(t, ext4(t), true, true)
			}},
			{Name: "blank named, without become", Want: "Permission denied", Make: func(t *testing.T) runnertest.Subject {
				return subject(t, testenv.LoopDevice(t, 16<<20), false, true)
			}},
		},
	})
}

// TestBecomeStopsRootCommands: fio running as root through sudo stops
// when the connection drops, and when a command that owns stdin is
// cancelled (TERM sent through sudo).
func TestBecomeStopsRootCommands(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	h := newUserHost(t)
	sshtest.Sudoers(t, h.user+" ALL=(ALL) NOPASSWD: ALL")
	start := func(t *testing.T, ctx context.Context, stdin bool) (<-chan error, func() []string) {
		c := dial(t, h.options(t, true))
		m, procs := marker(t)
		dir := filepath.Join(t.TempDir(), m)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := c.Command(ctx, "fio", fioArgs(dir, "root")...)
		if stdin {
			pr, _ := io.Pipe()
			cmd.SetStdin(pr)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Run() }()
		waitFor(t, "remote fio running as root", 20*time.Second, func() bool { return len(procs()) >= 2 })
		return done, procs
	}
	for _, stdin := range []bool{false, true} {
		t.Run("connection dropped/stdin="+map[bool]string{true: "owned", false: "lifeline"}[stdin], func(t *testing.T) {
			done, procs := start(t, context.Background(), stdin)
			if h.srv.DropConnections(t) == 0 {
				t.Fatal("no sshd connection process to kill")
			}
			select {
			case err := <-done:
				if !errors.Is(err, ErrConnectionLost) {
					t.Errorf("want the connection lost, got %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("Run did not return after the connection was dropped")
			}
			waitFor(t, "root fio gone", execx.StopGrace+5*time.Second, func() bool { return len(procs()) == 0 })
		})
	}
	t.Run("cancelled, stdin owned", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done, procs := start(t, ctx, true)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("want the cancel, got %v", err)
			}
		case <-time.After(stopBackstop + 5*time.Second):
			t.Fatal("Run did not return after cancel")
		}
		if left := procs(); len(left) > 0 {
			t.Errorf("Run returned with root fio still running: %q", left)
		}
	})
}

func TestForHostOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		host inventory.Host
		want Options
		err  string
	}{
		{"plain", inventory.Host{Name: "pi", Address: "10.0.0.2", Port: 2222, User: "pi", KeyFile: "~/.ssh/k"},
			Options{Name: "pi", Host: "10.0.0.2", Port: 2222, User: "pi", KeyFiles: []string{"~/.ssh/k"}}, ""},
		{"become", inventory.Host{Name: "pi", Address: "pi", Become: true, BecomeUser: "storage", BecomeMethod: "sudo"},
			Options{Name: "pi", Host: "pi", Become: true, BecomeUser: "storage"}, ""},
		{"become_user without become", inventory.Host{Name: "pi", Address: "pi", BecomeUser: "storage"},
			Options{Name: "pi", Host: "pi"}, ""},
		{"become su", inventory.Host{Name: "pi", Address: "pi", Become: true, BecomeMethod: "su"}, Options{}, "host pi: ansible_become_method su is not supported"},
		{"ssh args", inventory.Host{Name: "pi", Address: "pi", Port: 22, SSHArgs: `-o ConnectTimeout=5 -o "ServerAliveInterval 7" -p2201 -l admin -i '/k s/id' -J jump@bastion:2200 -C -o ControlMaster=auto -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile=/kh`},
			Options{Name: "pi", Host: "pi", Port: 2201, User: "admin", KeyFiles: []string{"/k s/id"}, ProxyJump: "jump@bastion:2200",
				Timeout: 5 * time.Second, KeepAlive: 7 * time.Second, AcceptNew: true, KnownHosts: []string{"/kh"}}, ""},
		{"host keys ignored", inventory.Host{Name: "pi", Address: "pi", SSHArgs: "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"}, Options{},
			"host pi: ansible_ssh_common_args/ansible_ssh_extra_args \"-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null\": -o StrictHostKeyChecking=no: storbench never ignores host keys"},
		{"proxy command", inventory.Host{Name: "pi", Address: "pi", SSHArgs: `-o ProxyCommand="ssh -W %h:%p bastion"`}, Options{}, "ProxyCommand is not supported: use ProxyJump (-J)"},
		{"unknown flag", inventory.Host{Name: "pi", Address: "pi", SSHArgs: "-A"}, Options{}, "option -A is not supported"},
		{"unknown -o", inventory.Host{Name: "pi", Address: "pi", SSHArgs: "-o ForwardAgent=yes"}, Options{}, "option ForwardAgent is not supported"},
		{"missing value", inventory.Host{Name: "pi", Address: "pi", SSHArgs: "-p"}, Options{}, "option -p needs a value"},
		{"bad port", inventory.Host{Name: "pi", Address: "pi", SSHArgs: "-p x"}, Options{}, `-p x: "x" is not a port number`},
		{"unbalanced quote", inventory.Host{Name: "pi", Address: "pi", SSHArgs: "-o 'User=x"}, Options{}, "unbalanced single quote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ForHost(tc.host)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want an error saying %q, got %v (%+v)", tc.err, err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("options:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
