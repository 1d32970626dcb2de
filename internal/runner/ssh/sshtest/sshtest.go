// Package sshtest starts real OpenSSH servers on 127.0.0.1 for tests, each
// with host keys of its own, standing in for the hosts of an inventory,
// and real ssh-agents. It needs Debian's openssh-server and
// openssh-client; tests skip (or fail under STORBENCH_REQUIRE) without
// them, and always skip in the unit tier (go test -short): sshd is the
// host tier's.
package sshtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/testenv"
)

// Server is a running sshd.
type Server struct {
	Host string // 127.0.0.1
	Port int
	// HostKey is the server's public host key line ("ssh-ed25519 AAAA...").
	HostKey string
	// AuthorizedKeys is the file the server reads every user's keys from.
	AuthorizedKeys string

	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *testenv.Buffer
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// KnownHostsLine is the known_hosts line that trusts this server.
func (s *Server) KnownHostsLine() string {
	return fmt.Sprintf("[%s]:%d %s", s.Host, s.Port, s.HostKey)
}

// User is the user the tests log in as: the one running them (sshd as
// root lets any user in; as another user it lets in only that one).
func User(t testing.TB) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// Start starts an sshd that accepts the keys in its AuthorizedKeys file,
// and stops it (with every process it started) when the test ends. Extra
// sshd_config lines come first, so they win over the defaults.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	testenv.HostTier(t, "sshd")
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		testenv.Tool(t, "sshd", "openssh-server", "sshd")
	}
	testenv.Tool(t, "ssh-keygen", "openssh-client", "sshd")
	s, err := New(t.TempDir(), extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("sshd %s log:\n%s", s.Addr(), s.log.String())
		}
	})
	return s
}

// New starts an sshd with its files in dir (for programs other than
// tests, such as bench/ssh); Stop ends it.
func New(dir string, extra ...string) (*Server, error) {
	return newServer(dir, listen{host: "127.0.0.1"}, extra...)
}

// listen is where a server listens: 127.0.0.1 on a free port, or (netns.go)
// a fixed port on an address in a network namespace.
type listen struct {
	host  string
	port  int      // 0: a free port of this host
	netns []string // a command prefix entering the namespace
}

func newServer(dir string, at listen, extra ...string) (*Server, error) {
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd" // not on a user's PATH on Debian
	}
	if os.Geteuid() == 0 {
		// Debian's privilege separation directory, made by its service.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			return nil, err
		}
	}
	hostKey := filepath.Join(dir, "ssh_host_ed25519_key")
	if err := run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sshtest-host", "-f", hostKey); err != nil {
		return nil, err
	}
	pub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		return nil, err
	}
	s := &Server{Host: at.host, HostKey: strings.TrimSpace(string(pub)), AuthorizedKeys: filepath.Join(dir, "authorized_keys"), dir: dir}
	if err := os.WriteFile(s.AuthorizedKeys, nil, 0o600); err != nil {
		return nil, err
	}
	// A free port can be taken between probing and sshd's bind: retry.
	for attempt := 0; ; attempt++ {
		if s.Port = at.port; s.Port == 0 {
			if s.Port, err = freePort(); err != nil {
				return nil, err
			}
		}
		cfg := filepath.Join(dir, "sshd_config")
		conf := strings.Join(append(append([]string(nil), extra...),
			"Port "+strconv.Itoa(s.Port),
			"ListenAddress "+at.host,
			"HostKey "+hostKey,
			"AuthorizedKeysFile "+s.AuthorizedKeys,
			"StrictModes no",
			"UsePAM no",
			"PidFile none",
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PubkeyAuthentication yes",
			"PermitRootLogin prohibit-password",
			"UseDNS no",
			"MaxSessions 64",
			"MaxStartups 64",
			"LogLevel VERBOSE",
			"",
		), "\n")
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			return nil, err
		}
		s.log = &testenv.Buffer{}
		argv := append(append([]string(nil), at.netns...), sshd, "-D", "-e", "-f", cfg)
		s.cmd = exec.Command(argv[0], argv[1:]...)
		s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
		if err := s.cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting sshd: %w", err)
		}
		s.exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}) {
			cmd.Wait()
			close(exited)
		}(s.cmd, s.exited)
		if waitListening(s.Addr(), s.exited, 10*time.Second) {
			s.waitProbeGone(10 * time.Second)
			return s, nil
		}
		s.cmd.Process.Kill()
		<-s.exited
		if attempt == 3 {
			return nil, fmt.Errorf("sshd did not start listening on %s:\n%s", s.Addr(), s.log.String())
		}
	}
}

// Authorize lets the key (an authorized_keys line) log in.
func (s *Server) Authorize(t testing.TB, pubLine string) {
	t.Helper()
	if err := s.AddAuthorizedKey(pubLine); err != nil {
		t.Fatal(err)
	}
}

// AddAuthorizedKey lets the key (an authorized_keys line) log in.
func (s *Server) AddAuthorizedKey(pubLine string) error {
	f, err := os.OpenFile(s.AuthorizedKeys, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(strings.TrimSpace(pubLine) + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Log is what sshd has logged so far.
func (s *Server) Log() string { return s.log.String() }

// ConnectionProcesses are the sshd processes serving connections (the
// per-connection monitor and its session child), not the commands they
// run.
func (s *Server) ConnectionProcesses(t testing.TB) []int {
	t.Helper()
	out, err := s.connectionProcesses()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (s *Server) connectionProcesses() ([]int, error) {
	below, err := proc.Reader{}.Descendants(s.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range below {
		if comm(p.PID) == "sshd" {
			out = append(out, p.PID)
		}
	}
	return out, nil
}

// waitProbeGone waits, at most limit, until the connection that found the
// server listening is served no more: sshd forks a process for it, which
// ends once it reads the probe's close, later on a loaded machine. A test
// that counts the server's connections then starts from none.
func (s *Server) waitProbeGone(limit time.Duration) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ps, err := s.connectionProcesses(); err != nil || len(ps) == 0 {
			return
		}
	}
}

// Processes are every process below this server (its connections and
// the commands they run), so a test counts only what its own server runs,
// not what other tests' servers run beside it.
func (s *Server) Processes(t testing.TB) []int {
	t.Helper()
	below, err := proc.Reader{}.Descendants(s.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, 0, len(below))
	for _, p := range below {
		out = append(out, p.PID)
	}
	return out
}

// DropConnections kills (SIGKILL) every sshd process serving a
// connection, as a crash or a lost host would end it; the listener stays.
// It returns how many it killed.
func (s *Server) DropConnections(t testing.TB) int {
	t.Helper()
	procs := s.ConnectionProcesses(t)
	for _, p := range procs {
		syscall.Kill(p, syscall.SIGKILL)
	}
	return len(procs)
}

// PauseConnections stops (SIGSTOP) every sshd process serving a
// connection, as a host that vanished from the network would fall
// silent; the returned function resumes them.
func (s *Server) PauseConnections(t testing.TB) (resume func()) {
	t.Helper()
	procs := s.ConnectionProcesses(t)
	if len(procs) == 0 {
		t.Fatal("no sshd connection process to pause")
	}
	for _, p := range procs {
		syscall.Kill(p, syscall.SIGSTOP)
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			for _, p := range procs {
				syscall.Kill(p, syscall.SIGCONT)
			}
		})
	}
	t.Cleanup(resume)
	return resume
}

// Stop ends the server and every process it started.
func (s *Server) Stop() {
	below, _ := proc.Reader{}.Descendants(s.cmd.Process.Pid)
	s.cmd.Process.Kill()
	for _, p := range below {
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
	<-s.exited
}

func comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Key makes a new passphrase-less ed25519 key pair in dir and returns the
// private key's path and the public key line.
func Key(t testing.TB, dir, name string) (path, pubLine string) {
	t.Helper()
	testenv.Tool(t, "ssh-keygen", "openssh-client", "sshd")
	path, pubLine, err := NewKey(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return path, pubLine
}

// NewKey is Key for programs other than tests.
func NewKey(dir, name string) (path, pubLine string, err error) {
	path = filepath.Join(dir, name)
	if err := run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sshtest-"+name, "-f", path); err != nil {
		return "", "", err
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		return "", "", err
	}
	return path, strings.TrimSpace(string(pub)), nil
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// Agent starts a real ssh-agent holding the given private keys and
// returns its socket; it is stopped when the test ends.
func Agent(t testing.TB, keys ...string) string {
	t.Helper()
	testenv.HostTier(t, "sshd")
	agentBin := testenv.Tool(t, "ssh-agent", "openssh-client", "sshd")
	testenv.Tool(t, "ssh-add", "openssh-client", "sshd")
	sock := filepath.Join(shortTempDir(t), "agent.sock")
	cmd := exec.Command(agentBin, "-D", "-a", sock)
	var log testenv.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting ssh-agent: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ssh-agent did not open %s: %s", sock, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, k := range keys {
		add := exec.Command("ssh-add", k)
		add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("ssh-add %s: %v: %s", k, err, out)
		}
	}
	return sock
}

// shortTempDir is a temporary directory with a path short enough for a
// unix socket (108 bytes), which t.TempDir's may not be.
func shortTempDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "sshtest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(addr string, exited <-chan struct{}, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// NewUser adds an unprivileged user to this machine for the test (login
// shell /bin/sh, a home of its own holding .ssh/authorized_keys with
// pubLine) and removes it, home and all, when the test ends. A server
// started with AuthorizedKeysFile .ssh/authorized_keys lets it in with
// that key. It needs root.
func NewUser(t testing.TB, pubLine string) string {
	t.Helper()
	testenv.Root(t)
	testenv.Tool(t, "useradd", "passwd", "useradd")
	name := fmt.Sprintf("sbtest%d", time.Now().UnixNano()%1000000)
	// "*" is no password, not a locked account: sshd without PAM refuses
	// locked accounts even for keys.
	if err := run("useradd", "-m", "-s", "/bin/sh", "-p", "*", name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The user's processes end with their sshd; then the user goes.
		if err := run("userdel", "-r", "-f", name); err != nil {
			t.Errorf("removing test user: %v", err)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	ssh := filepath.Join(u.HomeDir, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ssh, "authorized_keys"), []byte(pubLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run("chown", "-R", name+":", ssh); err != nil {
		t.Fatal(err)
	}
	return name
}

// Sudoers adds a sudoers drop-in with these lines to /etc/sudoers.d for
// the test, checked by visudo, and removes it when the test ends.
func Sudoers(t testing.TB, lines ...string) {
	t.Helper()
	testenv.Root(t)
	testenv.Tool(t, "sudo", "sudo")
	testenv.Tool(t, "visudo", "sudo", "sudo")
	// A drop-in's name has no dot, or sudo skips it.
	f := filepath.Join("/etc/sudoers.d", fmt.Sprintf("storbench-test-%d", time.Now().UnixNano()))
	tmp := filepath.Join(t.TempDir(), "sudoers")
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o440); err != nil {
		t.Fatal(err)
	}
	if err := run("visudo", "-c", "-q", "-f", tmp); err != nil {
		t.Fatal(err)
	}
	if err := run("install", "-m", "0440", tmp, f); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Remove(f); err != nil {
			t.Errorf("removing the sudoers drop-in: %v", err)
		}
	})
}
