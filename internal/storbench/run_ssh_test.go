package storbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/ssh"
	"github.com/storbench/storbench/internal/runner/ssh/sshtest"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// sshFleet starts n real sshd on 127.0.0.1 and makes a home whose ~/.ssh
// holds the key they accept and, when known, their host keys, as a user's
// has: Run then reaches them as ssh would, with no option of its own.
func sshFleet(t *testing.T, n int, known bool) []*sshtest.Server {
	t.Helper()
	home := t.TempDir()
	dot := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dot, 0o700); err != nil {
		t.Fatal(err)
	}
	_, pub := sshtest.Key(t, dot, "id_ed25519")
	var servers []*sshtest.Server
	var lines []string
	for range n {
		s := sshtest.Start(t)
		s.Authorize(t, pub)
		servers = append(servers, s)
		lines = append(lines, s.KnownHostsLine())
	}
	if known {
		if err := os.WriteFile(filepath.Join(dot, "known_hosts"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	return servers
}

// sshURL is dir on s as a target.
func sshURL(t *testing.T, s *sshtest.Server, dir string) string {
	return "ssh://" + sshtest.User(t) + "@" + s.Addr() + dir
}

// Two hosts and a local directory, both rounds: every workload stored for
// each target in each round with its host's telemetry, the parallel round's start skew
// measured, nothing left behind.
func TestRunSSHHostsRounds(t *testing.T) {
	testenv.Fio(t)
	servers := sshFleet(t, 2, true)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	req := DefaultRunRequest()
	req.Suite = "testdata/run-tiny.yaml"
	// Mixed with a directory of this host, as the issue asks.
	req.Targets = []string{sshURL(t, servers[0], dirs[0]), dirs[2], sshURL(t, servers[1], dirs[1])}
	req.Rounds = []string{result.RoundIsolated, result.RoundParallel}
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	r, err := Run(context.Background(), st, req, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := LoadRunOutcome(context.Background(), st, r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, res := range o.Results {
		if res.Status != result.StatusComplete {
			t.Errorf("%s %s %s: %s %s", res.Target, res.Round, res.Workload, res.Status, res.Error)
		}
		got = append(got, res.Round+" "+res.Target+" "+res.Workload)
		if res.Round == result.RoundParallel && result.LabelStartSkew.Of(res.Labels) == "" {
			t.Errorf("%s %s: no %s label in the parallel round", res.Target, res.Workload, result.LabelStartSkew)
		}
		if res.Telemetry == nil || res.Telemetry.Totals.CPUBusy <= 0 {
			t.Errorf("%s %s %s: no telemetry of the host: %+v", res.Round, res.Target, res.Workload, res.Telemetry)
		}
		if result.LabelHostname.Of(res.Labels) == "" || result.LabelFioVersion.Of(res.Labels) == "" || result.LabelFSType.Of(res.Labels) == "" {
			t.Errorf("%s %s: host labels missing: %v", res.Target, res.Workload, res.Labels)
		}
	}
	slices.Sort(got)
	var want []string
	for _, round := range req.Rounds {
		for _, target := range req.Targets {
			for _, w := range []string{"rr", "sw"} {
				want = append(want, round+" "+target+" "+w)
			}
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("stored\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, d := range dirs {
		if left := entries(t, d); len(left) > 0 {
			t.Errorf("the run left %v in %s", left, d)
		}
	}
}

// A host whose key is not in known_hosts is refused before anything is
// stored, with the key's fingerprint and the flag that accepts it.
func TestRunSSHUnknownHostRefused(t *testing.T) {
	servers := sshFleet(t, 1, false)
	req := DefaultRunRequest()
	req.Suite, req.Telemetry = "testdata/run-tiny.yaml", false
	req.Targets = []string{sshURL(t, servers[0], t.TempDir())}
	db := filepath.Join(t.TempDir(), "r.db")
	st := store.NewLazy(db)
	defer st.Close()
	_, err := Run(context.Background(), st, req, nil)
	var rerr *RequestError
	var unknown *ssh.UnknownHostError
	if !errors.As(err, &rerr) || !errors.As(err, &unknown) {
		t.Fatalf("want a RequestError for an unknown host, got %T %v", err, err)
	}
	t.Log(err)
	for _, want := range []string{unknown.Fingerprint, ssh.AcceptNewFlag, req.Targets[0]} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q: %v", want, err)
		}
	}
	if _, serr := os.Stat(db); !os.IsNotExist(serr) {
		t.Errorf("a refused run created %s", db)
	}
}

// A user the host does not know is refused at connection, naming the
// target and the user, and nothing is stored.
func TestRunSSHWrongUserRefused(t *testing.T) {
	servers := sshFleet(t, 1, true)
	req := DefaultRunRequest()
	req.Suite, req.Telemetry = "testdata/run-tiny.yaml", false
	req.Targets = []string{"ssh://storbench-no-such-user@" + servers[0].Addr() + t.TempDir()}
	db := filepath.Join(t.TempDir(), "r.db")
	st := store.NewLazy(db)
	defer st.Close()
	_, err := Run(context.Background(), st, req, nil)
	if err == nil || !strings.Contains(err.Error(), req.Targets[0]) || !strings.Contains(err.Error(), `authentication as "storbench-no-such-user" refused`) {
		t.Fatalf("want the target and the refused user named, got %v", err)
	}
	if _, serr := os.Stat(db); !os.IsNotExist(serr) {
		t.Errorf("a refused run created %s", db)
	}
}

// A host that cannot be reached is named, and nothing runs.
func TestRunSSHHostDown(t *testing.T) {
	servers := sshFleet(t, 2, true)
	servers[1].Stop()
	req := DefaultRunRequest()
	req.Suite, req.Telemetry = "testdata/run-tiny.yaml", false
	req.Targets = []string{sshURL(t, servers[0], t.TempDir()), sshURL(t, servers[1], t.TempDir())}
	db := filepath.Join(t.TempDir(), "r.db")
	st := store.NewLazy(db)
	defer st.Close()
	_, err := Run(context.Background(), st, req, nil)
	if err == nil || !strings.Contains(err.Error(), servers[1].Addr()) || !strings.Contains(err.Error(), req.Targets[1]) {
		t.Fatalf("want an error naming %s, got %v", req.Targets[1], err)
	}
	t.Log(err)
	var rerr *RequestError
	if errors.As(err, &rerr) {
		t.Errorf("a host down is not the request's fault: %v", err)
	}
	if _, serr := os.Stat(db); !os.IsNotExist(serr) {
		t.Errorf("a run that could not start created %s", db)
	}
}

// Hosts of an Ansible inventory become targets: the pattern chooses them,
// a host's storbench_path wins over --path, and results name them by their
// inventory names.
func TestRunSSHInventory(t *testing.T) {
	testenv.Fio(t)
	servers := sshFleet(t, 2, true)
	own, shared, here := t.TempDir(), t.TempDir(), t.TempDir()
	inv := filepath.Join(t.TempDir(), "hosts.ini")
	user := sshtest.User(t)
	ini := "[pis]\n" +
		"pi01 ansible_host=127.0.0.1 ansible_port=" + strconv.Itoa(servers[0].Port) + " ansible_user=" + user + " storbench_path=" + own + "\n" +
		// ssh's own options win over ansible_port, as on ssh's command line.
		"pi02 ansible_host=127.0.0.1 ansible_port=1 ansible_user=" + user +
		" ansible_ssh_common_args='-o ConnectTimeout=5 -o ControlMaster=auto' ansible_ssh_extra_args='-p " + strconv.Itoa(servers[1].Port) + "'\n" +
		"[nas]\nnas01 ansible_host=192.0.2.1\n" +
		"[controller]\nlocalhost ansible_connection=local storbench_path=" + here + "\n"
	if err := os.WriteFile(inv, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	req := DefaultRunRequest()
	req.Suite, req.Telemetry, req.Workloads = "testdata/run-tiny.yaml", false, []string{"rr"}
	req.SSH = SSHRequest{Inventory: inv, Hosts: "all:!nas", Path: shared}
	o := runStored(t, req)
	var got []string
	for _, res := range o.Results {
		got = append(got, res.Target+" "+res.Workload+" "+string(res.Status))
	}
	// localhost runs here, through the local runner, named by its path.
	want := []string{"ssh://pi01" + own + " rr complete", "ssh://pi02" + shared + " rr complete", here + " rr complete"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	for _, d := range []string{own, shared, here} {
		if left := entries(t, d); len(left) > 0 {
			t.Errorf("the run left %v in %s", left, d)
		}
	}
}

// An ssh option storbench does not support, in an inventory, refuses the
// run before anything is stored, naming the host and the option.
func TestRunSSHInventoryUnsupportedOption(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "hosts.ini")
	if err := os.WriteFile(inv, []byte("pi01 ansible_ssh_extra_args='-o ForwardAgent=yes' storbench_path=/srv\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	req := DefaultRunRequest()
	req.Suite = "testdata/run-tiny.yaml"
	req.SSH = SSHRequest{Inventory: inv}
	db := filepath.Join(t.TempDir(), "r.db")
	st := store.NewLazy(db)
	defer st.Close()
	_, err := Run(context.Background(), st, req, nil)
	var rerr *RequestError
	if !errors.As(err, &rerr) || !strings.Contains(err.Error(), "host pi01") || !strings.Contains(err.Error(), "option ForwardAgent is not supported") {
		t.Errorf("want a RequestError naming the host and the option, got %v", err)
	}
	if _, serr := os.Stat(db); !os.IsNotExist(serr) {
		t.Errorf("a refused run created %s", db)
	}
}

// dropper drops a host's connections half a second into the first
// workload that starts on it.
type dropper struct {
	recorder
	target string
	drop   func()
	once   sync.Once
}

func (d *dropper) WorkloadStarted(s engine.Step) {
	if s.Target == d.target {
		d.once.Do(func() { time.AfterFunc(500*time.Millisecond, d.drop) })
	}
}

// One host lost in the middle of a parallel round: the other host's
// results are kept, the lost host's workload is stored as failed naming
// the host, and the run says it failed.
func TestRunSSHHostLostInParallelRound(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	servers := sshFleet(t, 2, true)
	dirs := []string{t.TempDir(), t.TempDir()}
	req := DefaultRunRequest()
	req.Suite, req.Telemetry, req.Workloads = "testdata/run-tiny.yaml", false, []string{"rr"}
	req.Targets = []string{sshURL(t, servers[0], dirs[0]), sshURL(t, servers[1], dirs[1])}
	req.Rounds = []string{result.RoundParallel}
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	obs := &dropper{target: req.Targets[1], drop: func() { servers[1].DropConnections(t) }}
	r, err := Run(context.Background(), st, req, obs)
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), req.Targets[1]) || !errors.Is(err, engine.ErrWorkloadFailed) {
		t.Errorf("want an error naming the lost host, got %v", err)
	}
	if r == nil {
		t.Fatal("the run was not stored")
	}
	o, lerr := LoadRunOutcome(context.Background(), st, r)
	if lerr != nil {
		t.Fatal(lerr)
	}
	status := map[string]result.Status{}
	for _, res := range o.Results {
		status[res.Target] = res.Status
		t.Logf("%s %s %s %s", res.Target, res.Workload, res.Status, res.Error)
	}
	if status[req.Targets[0]] != result.StatusComplete {
		t.Errorf("the host still up: %q, want its result kept complete", status[req.Targets[0]])
	}
	if s := status[req.Targets[1]]; s == result.StatusComplete {
		t.Errorf("the lost host's workload is stored as %q", s)
	}
	if left := entries(t, dirs[0]); len(left) > 0 {
		t.Errorf("the run left %v on the host still up", left)
	}
}

// A host without fio: the run is refused before anything is stored,
// naming the host and saying how to install fio, and leaves nothing there. The host's sshd gives sessions a
// PATH holding every program of this machine but fio.
func TestRunSSHFioMissing(t *testing.T) {
	bin := t.TempDir()
	for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			if e.Name() != "fio" {
				os.Symlink(filepath.Join(d, e.Name()), filepath.Join(bin, e.Name())) // the first of a name wins, as in a PATH
			}
		}
	}
	home := t.TempDir()
	dot := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dot, 0o700); err != nil {
		t.Fatal(err)
	}
	_, pub := sshtest.Key(t, dot, "id_ed25519")
	srv := sshtest.Start(t, "SetEnv PATH="+bin)
	srv.Authorize(t, pub)
	if err := os.WriteFile(filepath.Join(dot, "known_hosts"), []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	dir := t.TempDir()
	req := DefaultRunRequest()
	req.Suite, req.Telemetry = "testdata/run-tiny.yaml", false
	req.Targets = []string{sshURL(t, srv, dir)}
	db := filepath.Join(t.TempDir(), "r.db")
	st := store.NewLazy(db)
	defer st.Close()
	_, err := Run(context.Background(), st, req, nil)
	t.Log(err)
	var rerr *RequestError
	if errors.As(err, &rerr) {
		t.Errorf("fio missing on a host is not the request's fault: %v", err)
	}
	if _, serr := os.Stat(db); !os.IsNotExist(serr) {
		t.Errorf("a run refused before it started created %s", db)
	}
	var missing *fio.MissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "apt-get install fio") || !strings.Contains(err.Error(), req.Targets[0]) {
		t.Errorf("want fio missing on %s, with how to install it, got %v", req.Targets[0], err)
	}
	if left := entries(t, dir); len(left) > 0 {
		t.Errorf("the run left %v on the host", left)
	}
}

// Ctrl-C in the middle of a parallel round on two hosts: the run stops as
// interrupted, no fio keeps running on either host, and nothing is left
// in either directory.
func TestRunSSHInterrupted(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	servers := sshFleet(t, 2, true)
	dirs := []string{t.TempDir(), t.TempDir()}
	req := DefaultRunRequest()
	req.Suite, req.Telemetry = "testdata/run-long.yaml", false
	req.Targets = []string{sshURL(t, servers[0], dirs[0]), sshURL(t, servers[1], dirs[1])}
	req.Rounds = []string{result.RoundParallel}
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := &dropper{target: req.Targets[1], drop: cancel}
	began := time.Now()
	_, err := Run(ctx, st, req, obs)
	if !errors.Is(err, engine.ErrInterrupted) {
		t.Errorf("want the run interrupted, got %v", err)
	}
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("the interrupted run took %s", took)
	}
	for _, d := range dirs {
		if left := entries(t, d); len(left) > 0 {
			t.Errorf("the run left %v in %s", left, d)
		}
		if n := fioIn(d); n > 0 {
			t.Errorf("%d fio processes still run in %s", n, d)
		}
	}
}

// fioIn counts the fio processes whose working directory is under dir.
func fioIn(dir string) int {
	n := 0
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		if b, err := os.ReadFile(c); err != nil || strings.TrimSpace(string(b)) != "fio" {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join(filepath.Dir(c), "cwd")); err == nil && strings.HasPrefix(cwd, dir) {
			n++
		}
	}
	return n
}

// A host whose key changed is refused, with or without
// --ssh-accept-new-host-keys, before anything is stored.
func TestRunSSHChangedHostKeyRefused(t *testing.T) {
	servers := sshFleet(t, 2, false)
	// known_hosts records the second server's key for the first's address.
	addr, _, _ := strings.Cut(servers[0].KnownHostsLine(), " ")
	_, key, _ := strings.Cut(servers[1].KnownHostsLine(), " ")
	if err := os.WriteFile(filepath.Join(os.Getenv("HOME"), ".ssh", "known_hosts"), []byte(addr+" "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, accept := range []bool{false, true} {
		req := DefaultRunRequest()
		req.Suite, req.Telemetry = "testdata/run-tiny.yaml", false
		req.Targets = []string{sshURL(t, servers[0], t.TempDir())}
		req.SSH.AcceptNewHostKeys = accept
		db := filepath.Join(t.TempDir(), "r.db")
		st := store.NewLazy(db)
		_, err := Run(context.Background(), st, req, nil)
		st.Close()
		var rerr *RequestError
		var changed *ssh.ChangedHostKeyError
		if !errors.As(err, &rerr) || !errors.As(err, &changed) || !strings.Contains(err.Error(), "ssh-keygen -R") {
			t.Errorf("accept new %v: want a RequestError for a changed key with the ssh-keygen -R fix, got %v", accept, err)
		}
		if _, serr := os.Stat(db); !os.IsNotExist(serr) {
			t.Errorf("a refused run created %s", db)
		}
	}
}
