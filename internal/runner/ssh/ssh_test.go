package ssh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/inventory"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/runner/ssh/sshtest"
	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/internal/testenv"
)

// host is one test sshd with a client key it accepts and a known_hosts
// file that trusts it.
type host struct {
	srv   *sshtest.Server
	key   string // private key file
	pub   string
	known string
}

func newHost(t *testing.T, sshdConfig ...string) host {
	t.Helper()
	srv := sshtest.Start(t, sshdConfig...)
	dir := t.TempDir()
	key, pub := sshtest.Key(t, dir, "id_ed25519")
	srv.Authorize(t, pub)
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return host{srv: srv, key: key, pub: pub, known: known}
}

// options reach h with its key file only: no ~/.ssh/config, no agent.
func (h host) options(t *testing.T) Options {
	return Options{
		Host: h.srv.Host, Port: h.srv.Port, User: sshtest.User(t),
		KeyFiles: []string{h.key}, KnownHosts: []string{h.known},
		ConfigFile: "none", AgentSocket: "none",
	}
}

func dial(t *testing.T, o Options) *Client {
	t.Helper()
	c, err := Dial(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func output(t *testing.T, c execx.Cmder, name string, args ...string) string {
	t.Helper()
	out, err := execx.Output(c.Command(context.Background(), name, args...))
	if err != nil {
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return string(out)
}

func TestConformance(t *testing.T) {
	testenv.Fio(t)
	h := newHost(t)
	runnertest.Conformance(t, func(t *testing.T) runnertest.Env {
		return runnertest.Env{Cmder: dial(t, h.options(t)), Dir: t.TempDir(), ExitCodeKnown: true}
	})
}

func TestSeveralHosts(t *testing.T) {
	var hosts []host
	for range 3 {
		hosts = append(hosts, newHost(t))
	}
	// One known_hosts file for the fleet, as a user has.
	known := filepath.Join(t.TempDir(), "known_hosts")
	var lines []string
	for _, h := range hosts {
		lines = append(lines, h.srv.KnownHostsLine())
	}
	if err := os.WriteFile(known, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]string, len(hosts))
	errs := make([]error, len(hosts))
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := h.options(t)
			o.KnownHosts = []string{known}
			c, err := Dial(context.Background(), o)
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close()
			out, err := execx.Output(c.Command(context.Background(), "sh", "-c", `echo "$SSH_CONNECTION"`))
			outs[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()
	for i, h := range hosts {
		if errs[i] != nil {
			t.Fatalf("host %d: %v", i, errs[i])
		}
		// SSH_CONNECTION is "client-ip client-port server-ip server-port".
		if f := strings.Fields(outs[i]); len(f) != 4 || f[3] != strconv.Itoa(h.srv.Port) {
			t.Errorf("host %d: SSH_CONNECTION %q is not the server on port %d", i, outs[i], h.srv.Port)
		}
	}
}

func TestAgentAuth(t *testing.T) {
	h := newHost(t)
	sock := sshtest.Agent(t, h.key)
	o := h.options(t)
	o.KeyFiles = []string{filepath.Join(t.TempDir(), "no-such-key")}
	o.AgentSocket = sock
	c := dial(t, o)
	if got := strings.TrimSpace(output(t, c, "id", "-un")); got != sshtest.User(t) {
		t.Errorf("logged in as %q, want %q", got, sshtest.User(t))
	}
	// Without the agent there is no key left to try.
	o.AgentSocket = "none"
	_, err := Dial(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "no SSH key to log in with") {
		t.Errorf("dial without agent and key: %v", err)
	}
}

func TestAgentFromEnvironment(t *testing.T) {
	h := newHost(t)
	t.Setenv("SSH_AUTH_SOCK", sshtest.Agent(t, h.key))
	o := h.options(t)
	o.KeyFiles, o.AgentSocket = nil, ""
	o.ConfigFile = filepath.Join(t.TempDir(), "empty_config")
	os.WriteFile(o.ConfigFile, nil, 0o600)
	t.Setenv("HOME", t.TempDir()) // no default key files either
	dial(t, o)
}

func TestSSHConfig(t *testing.T) {
	h := newHost(t)
	cfg := filepath.Join(t.TempDir(), "config")
	conf := fmt.Sprintf(`# a Pi known by its alias
Host pi-alias
    HostName %s
    Port %d
    User %s
    IdentityFile %s

Host *
    User nobody-by-default
`, h.srv.Host, h.srv.Port, sshtest.User(t), h.key)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	c := dial(t, Options{Host: "pi-alias", ConfigFile: cfg, KnownHosts: []string{h.known}, AgentSocket: "none"})
	if c.Name() != "pi-alias" || c.Addr() != h.srv.Addr() || c.User() != sshtest.User(t) {
		t.Errorf("resolved %s %s %s, want pi-alias %s %s", c.Name(), c.Addr(), c.User(), h.srv.Addr(), sshtest.User(t))
	}
	output(t, c, "true")
	// Options win over the config, as ssh's -l does.
	_, err := Dial(context.Background(), Options{Host: "pi-alias", User: "storbench-no-such-user", ConfigFile: cfg, KnownHosts: []string{h.known}, AgentSocket: "none"})
	if err == nil || !strings.Contains(err.Error(), `"storbench-no-such-user"`) {
		t.Errorf("user option did not override the config: %v", err)
	}
}

func TestProxyJump(t *testing.T) {
	bastion, target := newHost(t), newHost(t)
	dir := t.TempDir()
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(bastion.srv.KnownHostsLine()+"\n"+target.srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config")
	conf := fmt.Sprintf("Host bastion\n  HostName %s\n  Port %d\n  User %s\n  IdentityFile %s\n\nHost pi-behind\n  HostName %s\n  Port %d\n  ProxyJump bastion\n",
		bastion.srv.Host, bastion.srv.Port, sshtest.User(t), bastion.key, target.srv.Host, target.srv.Port)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{Host: "pi-behind", User: sshtest.User(t), KeyFiles: []string{target.key}, ConfigFile: cfg, KnownHosts: []string{known}, AgentSocket: "none"}
	if n := len(bastion.srv.ConnectionProcesses(t)); n != 0 {
		t.Fatalf("bastion has %d connections before the test", n)
	}
	c, err := Dial(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	output(t, c, "true")
	if len(bastion.srv.ConnectionProcesses(t)) == 0 {
		t.Error("the connection to the target does not go through the jump host")
	}
	c.Close()
	waitFor(t, "jump connection closed with the client", 10*time.Second, func() bool { return len(bastion.srv.ConnectionProcesses(t)) == 0 })

	// The jump host's key is checked as strictly as the target's.
	os.WriteFile(known, []byte(target.srv.KnownHostsLine()+"\n"), 0o600)
	_, err = Dial(context.Background(), o)
	var unknown *UnknownHostError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "through jump host bastion") {
		t.Errorf("unknown jump host: %v", err)
	}
	// Options override the config's ProxyJump; "none" goes direct.
	os.WriteFile(known, []byte(target.srv.KnownHostsLine()+"\n"), 0o600)
	o.ProxyJump = "none"
	dial(t, o)
}

func TestParseJumps(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"none", "", ""},
		{"bastion", "bastion", ""},
		{"pi@bastion:2222,ssh://root@[fe80::1]:22", "pi@bastion:2222 root@fe80::1:22", ""},
		{"bastion:ssh", "", "not a port number"},
		{"pi@", "", "names no host"},
	} {
		js, err := parseJumps(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseJumps(%q) = %v, %v; want error %q", tc.in, js, err, tc.err)
			}
			continue
		}
		var got []string
		for _, j := range js {
			got = append(got, j.String())
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("parseJumps(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// fingerprint asks OpenSSH itself for a public key's SHA256 fingerprint.
func fingerprint(t *testing.T, pubLine string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "key.pub")
	if err := os.WriteFile(f, []byte(pubLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(safetytest.Run(t, "ssh-keygen", "-l", "-E", "sha256", "-f", f))
	if len(fields) < 2 || !strings.HasPrefix(fields[1], "SHA256:") {
		t.Fatalf("ssh-keygen -l printed %q", fields)
	}
	return fields[1]
}

func TestUnknownHostRefused(t *testing.T) {
	h := newHost(t)
	o := h.options(t)
	o.KnownHosts = []string{filepath.Join(t.TempDir(), "known_hosts")}
	_, err := Dial(context.Background(), o)
	var unknown *UnknownHostError
	if !errors.As(err, &unknown) {
		t.Fatalf("dial to an unknown host: want *UnknownHostError, got %T %v", err, err)
	}
	fp := fingerprint(t, h.srv.HostKey)
	for _, want := range []string{fp, AcceptNewFlag, "ssh-ed25519", "accept-new", o.KnownHosts[0]} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q: %v", want, err)
		}
	}
	if _, serr := os.Stat(o.KnownHosts[0]); !os.IsNotExist(serr) {
		t.Errorf("refusing a host wrote %s", o.KnownHosts[0])
	}
}

func TestAcceptNewRecordsKey(t *testing.T) {
	h := newHost(t)
	o := h.options(t)
	o.KnownHosts = []string{filepath.Join(t.TempDir(), "ssh", "known_hosts")}
	o.AcceptNew = true
	dial(t, o)
	// OpenSSH finds the recorded key for the host.
	found := safetytest.Run(t, "ssh-keygen", "-F", fmt.Sprintf("[%s]:%d", h.srv.Host, h.srv.Port), "-f", o.KnownHosts[0])
	if !strings.Contains(found, strings.Fields(h.srv.HostKey)[1]) {
		t.Errorf("ssh-keygen -F does not find the host key in the recorded file:\n%s", found)
	}
	// Now known: strict checking lets it in, and nothing more is added.
	before, _ := os.ReadFile(o.KnownHosts[0])
	o.AcceptNew = false
	dial(t, o)
	after, _ := os.ReadFile(o.KnownHosts[0])
	if string(before) != string(after) || strings.Count(string(after), "\n") != 1 {
		t.Errorf("known_hosts changed on a second connection:\n%s\n->\n%s", before, after)
	}
}

// A known_hosts file hashed by ssh-keygen -H (Debian's ssh hashes the
// names it adds) is read as well; a key accepted into a file whose last
// line has no newline lands on a line of its own.
func TestHashedKnownHostsAndAppend(t *testing.T) {
	h, other := newHost(t), newHost(t)
	safetytest.Run(t, "ssh-keygen", "-H", "-f", h.known)
	if b, _ := os.ReadFile(h.known); !strings.HasPrefix(string(b), "|1|") {
		t.Fatalf("ssh-keygen -H did not hash %s:\n%s", h.known, b)
	}
	dial(t, h.options(t))
	b, _ := os.ReadFile(h.known)
	if err := os.WriteFile(h.known, []byte(strings.TrimSuffix(string(b), "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	o := other.options(t)
	o.KnownHosts, o.AcceptNew = []string{h.known}, true
	dial(t, o)
	o.AcceptNew = false
	dial(t, o)
	dial(t, h.options(t))
}

func TestForHost(t *testing.T) {
	h := newHost(t)
	o, err := ForHost(inventory.Host{Name: "pi-07", Address: h.srv.Host, Port: h.srv.Port, User: sshtest.User(t), KeyFile: h.key})
	if err != nil {
		t.Fatal(err)
	}
	o.KnownHosts, o.ConfigFile, o.AgentSocket = []string{filepath.Join(t.TempDir(), "known_hosts")}, "none", "none"
	_, err = Dial(context.Background(), o)
	if err == nil || !strings.HasPrefix(err.Error(), "pi-07: host key not known") {
		t.Errorf("messages do not name the inventory host: %v", err)
	}
	o.KnownHosts = []string{h.known}
	if c := dial(t, o); c.Name() != "pi-07" || c.Addr() != h.srv.Addr() {
		t.Errorf("client %s at %s", c.Name(), c.Addr())
	}
}

func TestChangedHostKeyRefused(t *testing.T) {
	a, b := newHost(t), newHost(t)
	// known_hosts says b's address has a's key: b's real key is "changed".
	known := filepath.Join(t.TempDir(), "known_hosts")
	forged := fmt.Sprintf("[%s]:%d %s\n", b.srv.Host, b.srv.Port, a.srv.HostKey)
	if err := os.WriteFile(known, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	o := b.options(t)
	o.KnownHosts = []string{known}
	o.AcceptNew = true // never accepts a changed key
	_, err := Dial(context.Background(), o)
	var changed *ChangedHostKeyError
	if !errors.As(err, &changed) {
		t.Fatalf("want *ChangedHostKeyError, got %T %v", err, err)
	}
	for _, want := range []string{"HOST KEY CHANGED", fingerprint(t, b.srv.HostKey), fingerprint(t, a.srv.HostKey), known + ":1", "ssh-keygen -R"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q: %v", want, err)
		}
	}
	if got, _ := os.ReadFile(known); string(got) != forged {
		t.Errorf("known_hosts changed:\n%s", got)
	}
}

func TestWrongUserOrKeyRefused(t *testing.T) {
	h := newHost(t)
	o := h.options(t)
	o.User = "storbench-no-such-user"
	_, err := Dial(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), `authentication as "storbench-no-such-user" refused`) || !strings.Contains(err.Error(), h.key) {
		t.Errorf("wrong user: %v", err)
	}
	other, _ := sshtest.Key(t, t.TempDir(), "not_authorized")
	o = h.options(t)
	o.KeyFiles = []string{other}
	if _, err := Dial(context.Background(), o); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("unauthorized key: %v", err)
	}
}

func TestHostileArguments(t *testing.T) {
	h := newHost(t)
	c := dial(t, h.options(t))
	args := []string{
		"plain", "with space", "", "it's", `"double"`, "$(touch /tmp/storbench-pwned)", "`touch /tmp/storbench-pwned`",
		"$HOME", "a\nnew line", "tab\there", "semi;colon", "&& false", "*", "-n", `back\slash`, "'", `'\''`, "ünï©ødé",
	}
	out, err := execx.Output(c.Command(context.Background(), "printf", append([]string{`%s\0`}, args...)...))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(args, "|") {
		t.Errorf("arguments changed on the way:\n got %q\nwant %q", got, args)
	}
	if _, err := os.Stat("/tmp/storbench-pwned"); err == nil {
		t.Error("an argument was run as a command")
	}
	// The same for the directory and the environment.
	dir := filepath.Join(t.TempDir(), "it's a $(dir)")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err = execx.Output(c.Command(context.Background(), "sh", "-c", `pwd; printf '%s' "$STORBENCH_X"`).SetDir(dir).SetEnv("STORBENCH_X=a'b $(c)\nd"))
	if err != nil {
		t.Fatal(err)
	}
	if want := dir + "\na'b $(c)\nd"; string(out) != want {
		t.Errorf("dir and env:\n got %q\nwant %q", out, want)
	}
	if err := c.Command(context.Background(), "true").SetEnv("1BAD=x").Run(); err == nil {
		t.Error("an environment entry that is no NAME=VALUE was accepted")
	}
}

func TestSessionRefused(t *testing.T) {
	h := newHost(t, "MaxSessions 1")
	c := dial(t, h.options(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	up := make(chan struct{})
	var once sync.Once
	go func() {
		done <- c.Command(ctx, "sh", "-c", "echo up; exec sleep 60").SetStdout(writerFunc(func(p []byte) (int, error) {
			once.Do(func() { close(up) })
			return len(p), nil
		})).Run()
	}()
	<-up
	err := c.Command(context.Background(), "true").Run()
	if err == nil || !strings.Contains(err.Error(), "refused a new session") || errors.Is(err, ErrConnectionLost) {
		t.Errorf("second session over MaxSessions 1: %v", err)
	}
	cancel()
	<-done
}

func TestStdin(t *testing.T) {
	h := newHost(t)
	c := dial(t, h.options(t))
	out, err := execx.Output(c.Command(context.Background(), "cat").SetStdin(strings.NewReader("through\nstdin\n")))
	if err != nil || string(out) != "through\nstdin\n" {
		t.Fatalf("cat: %q %v", out, err)
	}
	// The start line of a parallel round: the command waits for a line,
	// and the end of stdin afterwards does not stop it.
	r, w := io.Pipe()
	done := make(chan error, 1)
	var buf strings.Builder
	go func() {
		done <- c.Command(context.Background(), "sh", "-c", "read -r _ || exit 125; sleep 1; echo ran").SetStdin(r).SetStdout(&buf).Run()
	}()
	w.Write([]byte("\n"))
	w.Close()
	if err := <-done; err != nil || buf.String() != "ran\n" {
		t.Fatalf("gated command: %q %v", buf.String(), err)
	}
}

// marker returns a number no other process has on its command line, and a
// function listing the processes that have it.
func marker(t *testing.T) (string, func() []string) {
	m := strconv.Itoa(800000 + rand.IntN(100000))
	return m, func() []string {
		entries, _ := os.ReadDir("/proc")
		var out []string
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == strconv.Itoa(os.Getpid()) {
				continue
			}
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil {
				continue
			}
			cl := strings.ReplaceAll(string(b), "\x00", " ")
			if strings.Contains(cl, m) && !strings.Contains(cl, "storbench-ssh") {
				out = append(out, e.Name()+": "+cl)
			}
		}
		return out
	}
}

func waitFor(t *testing.T, what string, limit time.Duration, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// fioArgs is a long fio workload whose files live in dir (a job process
// per file, each in a session of its own, as fio runs them).
func fioArgs(dir, name string) []string {
	return []string{"--name=" + name, "--directory=" + dir, "--rw=randwrite", "--bs=4k", "--size=8m", "--numjobs=2",
		"--ioengine=psync", "--time_based", "--runtime=300", "--output-format=json"}
}

// treeCase is a remote command that leaves a tree of processes running:
// real fio, or a shell script whose {M} is replaced by a unique marker.
type treeCase struct {
	name    string
	fio     bool
	script  string
	stdin   bool          // the command owns stdin: the wrapper watches sshd instead
	minTook time.Duration // a tree that ignores TERM waits out the grace
}

// start runs tc on a fresh host until its tree is up, and returns the
// host, its client, the pending result and a lister of the tree.
func (tc treeCase) start(t *testing.T, ctx context.Context) (host, *Client, <-chan error, func() []string) {
	t.Helper()
	if tc.fio {
		testenv.Fio(t)
	}
	h := newHost(t)
	c := dial(t, h.options(t))
	m, procs := marker(t)
	var cmd execx.Cmd
	if tc.fio {
		dir := filepath.Join(t.TempDir(), m)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd = c.Command(ctx, "fio", fioArgs(dir, "tree")...)
	} else {
		cmd = c.Command(ctx, "sh", "-c", strings.ReplaceAll(tc.script, "{M}", m))
	}
	if tc.stdin {
		pr, _ := io.Pipe()
		cmd.SetStdin(pr)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	waitFor(t, "remote command running", 20*time.Second, func() bool { return len(procs()) >= 2 })
	return h, c, done, procs
}

func TestConnectionDroppedStopsCommand(t *testing.T) {
	for _, tc := range []treeCase{
		{name: "fio", fio: true},
		{name: "shell tree with stdin", stdin: true, script: "sleep {M} & sleep {M} & wait"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, done, procs := tc.start(t, context.Background())
			if n := h.srv.DropConnections(t); n == 0 {
				t.Fatal("no sshd connection process to kill")
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(lostNudge + lostBound + 10*time.Second):
				t.Fatal("Run did not return after the connection was dropped")
			}
			if err == nil || !strings.Contains(err.Error(), h.srv.Host) || !errors.Is(err, ErrConnectionLost) {
				t.Errorf("error does not say the connection to the host was lost: %v", err)
			}
			// Run returns once the host shows nothing of the command.
			if left := procs(); len(left) > 0 {
				t.Errorf("Run returned with the remote command still running: %q (%v)", left, err)
			}
			var lost *LostError
			if !errors.As(err, &lost) || !lost.Checked || len(lost.Stopping) > 0 {
				t.Errorf("want a LostError saying the host was checked and nothing stops there, got %v", err)
			}
		})
	}
}

// A host that falls silent (its sshd stopped, as on a network partition)
// is given up after three keepalive intervals: its side of the connection
// stays open, so the wrapper sees nothing; storbench connects again, tells
// the wrapper to stop, and the command's Run fails naming the host only
// once the command is gone there.
func TestSilentHostGivenUp(t *testing.T) {
	testenv.Measures(t)
	h := newHost(t)
	o := h.options(t)
	o.KeepAlive = 200 * time.Millisecond
	c := dial(t, o)
	m, procs := marker(t)
	done := make(chan error, 1)
	go func() { done <- c.Command(context.Background(), "sh", "-c", "sleep "+m+" & sleep "+m+" & wait").Run() }()
	waitFor(t, "remote command running", 20*time.Second, func() bool { return len(procs()) >= 2 })
	resume := h.srv.PauseConnections(t)
	start := time.Now()
	var err error
	select {
	case err = <-done:
	case <-time.After(lostNudge + lostBound + 10*time.Second):
		t.Fatal("Run did not return while the host was silent")
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("gave up after %s, before three keepalive intervals", took)
	}
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), h.srv.Host) {
		t.Errorf("error does not say the connection to the host was lost: %v", err)
	}
	t.Logf("Run returned %s after the host fell silent", time.Since(start).Round(10*time.Millisecond))
	if left := procs(); len(left) > 0 {
		t.Errorf("Run returned with the command still running on the silent host: %q (%v)", left, err)
	}
	resume()
	// No new command starts on a lost connection.
	if _, err := execx.Output(c.Command(context.Background(), "true")); !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "no new command") {
		t.Errorf("a command after the loss: want it refused, got %v", err)
	}
}

// TestHelperRunRemote is not a test: TestKilledClientStopsRemote runs
// the test binary as a storbench stand-in that runs one remote command.
func TestHelperRunRemote(t *testing.T) {
	spec := os.Getenv("STORBENCH_SSH_HELPER")
	if spec == "" {
		t.Skip("the remote-command process of TestKilledClientStopsRemote")
	}
	var job struct {
		Options Options
		Argv    []string
	}
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	c, err := Dial(context.Background(), job.Options)
	if err != nil {
		t.Fatal(err)
	}
	t.Fatal(c.Command(context.Background(), job.Argv[0], job.Argv[1:]...).Run())
}

// storbench killed outright (SIGKILL): the kernel closes its connections,
// and on the host the command stops.
func TestKilledClientStopsRemote(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	h := newHost(t)
	m, procs := marker(t)
	dir := filepath.Join(t.TempDir(), m)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(map[string]any{"Options": h.options(t), "Argv": append([]string{"fio"}, fioArgs(dir, "killed")...)})
	if err != nil {
		t.Fatal(err)
	}
	client := exec.Command(os.Args[0], "-test.run=^TestHelperRunRemote$")
	client.Env = append(os.Environ(), "STORBENCH_SSH_HELPER="+string(spec))
	var out strings.Builder
	client.Stdout, client.Stderr = &out, &out
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "remote fio running", 20*time.Second, func() bool { return len(procs()) >= 2 })
	client.Process.Kill()
	client.Wait()
	took := waitFor(t, "remote fio gone after its client was killed", execx.StopGrace+5*time.Second, func() bool { return len(procs()) == 0 })
	t.Logf("remote fio gone %s after its client was killed", took.Round(time.Millisecond))
}

func TestCancelKillsRemoteTree(t *testing.T) {
	for _, tc := range []treeCase{
		{name: "fio", fio: true},
		{name: "shell tree", script: "sleep {M} & sleep {M} & wait"},
		{name: "shell tree with stdin", stdin: true, script: "sleep {M} & sleep {M} & wait"},
		{name: "ignores TERM in its own session", script: `trap "" TERM; setsid sleep {M} & sleep {M} & wait`, minTook: execx.StopGrace - time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// each case has its own sshd, connection and marked processes;
			// the grace is a lower bound, which load cannot shorten
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h, c, done, procs := tc.start(t, ctx)
			start := time.Now()
			cancel()
			var err error
			select {
			case err = <-done:
			case <-time.After(stopBackstop + 5*time.Second):
				t.Fatal("Run did not return after cancel")
			}
			took := time.Since(start)
			var re *execx.RunError
			if !errors.As(err, &re) || re.ExitCode != -1 || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), h.srv.Host) || errors.Is(err, ErrConnectionLost) {
				t.Errorf("cancelled command: want a RunError with exit code -1 naming the host and the cancel, got %v", err)
			}
			// As locally, Run returns once the command is gone.
			if left := procs(); len(left) > 0 {
				t.Errorf("Run returned with the remote tree still running: %q", left)
			}
			if took < tc.minTook {
				t.Errorf("tree gone after %s, before the grace of %s", took, execx.StopGrace)
			}
			t.Logf("remote tree gone %s after cancel", took.Round(time.Millisecond))
			// The connection stays usable.
			output(t, c, "true")
		})
	}
}

func TestPidWriter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		pid    int
		passed string
	}{
		{"first line", []string{"storbench-ssh: pid 42\nfio: oops\n"}, 42, "fio: oops\n"},
		{"split writes", []string{"storbench-ssh: p", "id 7", "\nrest"}, 7, "rest"},
		{"after a login banner", []string{"welcome to the pi\n", "storbench-ssh: pid 9\n", "x\n"}, 9, "welcome to the pi\nx\n"},
		{"no pid line", []string{"just\nstderr\n"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			w := &pidWriter{next: &out, known: make(chan struct{})}
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if w.pid != tc.pid {
				t.Errorf("pid = %d, want %d", w.pid, tc.pid)
			}
			want := tc.passed
			if tc.pid == 0 {
				want = strings.Join(tc.writes, "")
			}
			if out.String() != want {
				t.Errorf("passed on %q, want %q", out.String(), want)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":      "''",
		"a b":   "'a b'",
		"it's":  `'it'\''s'`,
		"$(x)":  "'$(x)'",
		"a\nb":  "'a\nb'",
		`\`:     `'\'`,
		"'":     `''\'''`,
		"\"q\"": `'"q"'`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}
