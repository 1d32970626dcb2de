// Command ssh measures what storbench's SSH transport costs per host,
// against N real OpenSSH servers on 127.0.0.1 (internal/runner/ssh/sshtest),
// each with host keys of its own:
//
//   - connection setup: TCP connect, key exchange, host key check against
//     known_hosts and public-key authentication, all hosts at once (as a
//     run connects to its fleet) and one after another;
//   - the first command (`true`) on a fresh connection, a session with the
//     wrapper that makes it die with the connection;
//   - closing the connection;
//   - the start skew of a gated command released on every host at once,
//     the shape of a parallel round's start line (a line on stdin, then the
//     remote clock is read), measured on the hosts' own clock;
//   - with -round, a parallel round of storbench run across the hosts
//     (ssh:// targets): the start skew the engine measures, and the whole
//     run's time (round.go);
//   - with -cleanup, cleanup per host: a prepared directory target's
//     Cleanup, a killed run's leftover found and removed on one host, and
//     storbench.CleanupSSH across all hosts at once (fleetops.go);
//   - with -sampling DURATION, storbench's own CPU while it samples
//     telemetry over SSH from all hosts at 1 Hz (fleetops.go);
//   - with -fidelity, the same fio workload (direct 4 KiB random reads) on
//     the same file run alternately on this host and through SSH to
//     127.0.0.1: the IOPS ratio over SSH to local.
//
// Needs openssh-server and openssh-client; run as root or as the user the
// servers should let in.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner/ssh"
	"github.com/storbench/storbench/internal/runner/ssh/sshtest"
	"github.com/storbench/storbench/internal/spec"
)

func main() {
	hosts := flag.Int("hosts", 10, "sshd servers (one host each)")
	reps := flag.Int("reps", 5, "repetitions of each measurement")
	fidelity := flag.Bool("fidelity", false, "measure IOPS over SSH against local instead")
	dir := flag.String("dir", "/var/tmp", "where -fidelity puts its file (a filesystem with direct I/O)")
	round := flag.Bool("round", false, "measure a parallel round of storbench run across the hosts instead")
	cleanup := flag.Bool("cleanup", false, "measure cleanup per host instead: a prepared target's, and a killed run's leftovers")
	sampling := flag.Duration("sampling", 0, "measure storbench's CPU while sampling telemetry from the hosts for this long instead")
	flag.Parse()
	var err error
	switch {
	case *cleanup:
		err = runCleanup(*hosts, *reps)
	case *sampling > 0:
		err = runSampling(*hosts, *sampling)
	case *round:
		err = runRound(*hosts, *reps)
	case *fidelity:
		err = runFidelity(*dir, *reps)
	default:
		err = run(*hosts, *reps)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/ssh:", err)
		os.Exit(1)
	}
}

// fleet starts n sshd hosts with their files in dir, all accepting one
// key and all in one known_hosts file, and returns the options that reach
// them and the function that stops them.
func fleet(dir string, n int) ([]ssh.Options, func(), error) {
	var servers []*sshtest.Server
	stop := func() {
		for _, s := range servers {
			s.Stop()
		}
	}
	key, pub, err := sshtest.NewKey(dir, "id_ed25519")
	if err != nil {
		return nil, stop, err
	}
	u, err := user.Current()
	if err != nil {
		return nil, stop, err
	}
	known := filepath.Join(dir, "known_hosts")
	var lines []string
	var opts []ssh.Options
	for i := range n {
		hd := filepath.Join(dir, "host"+strconv.Itoa(i))
		if err := os.Mkdir(hd, 0o700); err != nil {
			return nil, stop, err
		}
		s, err := sshtest.New(hd)
		if err != nil {
			return nil, stop, err
		}
		servers = append(servers, s)
		if err := s.AddAuthorizedKey(pub); err != nil {
			return nil, stop, err
		}
		lines = append(lines, s.KnownHostsLine())
		opts = append(opts, ssh.Options{Name: "host" + strconv.Itoa(i), Host: s.Host, Port: s.Port, User: u.Username,
			KeyFiles: []string{key}, KnownHosts: []string{known}, ConfigFile: "none", AgentSocket: "none"})
	}
	if err := os.WriteFile(known, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return nil, stop, err
	}
	return opts, stop, nil
}

func run(n, reps int) error {
	dir, err := os.MkdirTemp("", "bench-ssh")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts, stop, err := fleet(dir, n)
	defer stop()
	if err != nil {
		return err
	}
	fmt.Printf("%d sshd hosts on 127.0.0.1 (OpenSSH, ed25519 host and user keys), %d repetitions\n\n", n, reps)

	var seqDial, parDial, first, closing, skews []time.Duration
	ctx := context.Background()
	for range reps {
		// One after another.
		for _, o := range opts {
			start := time.Now()
			c, err := ssh.Dial(ctx, o)
			if err != nil {
				return err
			}
			seqDial = append(seqDial, time.Since(start))
			start = time.Now()
			if err := c.Command(ctx, "true").Run(); err != nil {
				return err
			}
			first = append(first, time.Since(start))
			start = time.Now()
			c.Close()
			closing = append(closing, time.Since(start))
		}
		// All at once, then a gated start on all.
		clients := make([]*ssh.Client, n)
		durs := make([]time.Duration, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, o := range opts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				clients[i], errs[i] = ssh.Dial(ctx, o)
				durs[i] = time.Since(start)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		parDial = append(parDial, durs...)
		skew, err := gatedSkew(ctx, clients)
		if err != nil {
			return err
		}
		skews = append(skews, skew)
		for _, c := range clients {
			c.Close()
		}
	}
	row := func(what string, d []time.Duration) {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		q := func(p float64) string {
			return fmt.Sprintf("%7.1f", float64(d[int(p*float64(len(d)-1))].Microseconds())/1000)
		}
		fmt.Printf("%-44s %5d %s %s %s\n", what, len(d), q(0.5), q(0.95), q(1))
	}
	fmt.Printf("%-44s %5s %7s %7s %7s\n", "ms", "n", "median", "p95", "max")
	row("connect+handshake+auth, one host at a time", seqDial)
	row(fmt.Sprintf("connect+handshake+auth, %d hosts at once", n), parDial)
	row("first command (true) on a new connection", first)
	row("close", closing)
	row(fmt.Sprintf("gated start skew across %d hosts", n), skews)
	return nil
}

const fidelityYAML = `name: bench-ssh-fidelity
workloads:
  - {name: randread-4k, rw: randread, bs: 4KiB, size: 256MiB, runtime: 5s, ioengine: psync, iodepth: 1}
`

// runFidelity runs one workload on one file alternately through the local
// Cmder and through SSH to 127.0.0.1, and compares the IOPS.
func runFidelity(parent string, reps int) error {
	dir, err := os.MkdirTemp(parent, "bench-ssh-fidelity")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts, stop, err := fleet(dir, 1)
	defer stop()
	if err != nil {
		return err
	}
	ctx := context.Background()
	c, err := ssh.Dial(ctx, opts[0])
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := spec.Parse([]byte(fidelityYAML), "fidelity")
	if err != nil {
		return err
	}
	job := fio.FromWorkload(s.Workloads[0], fio.File{Name: "fidelity.dat"}, "")
	iops := func(cmder execx.Cmder) (float64, error) {
		out, err := fio.Runner{Cmder: cmder, Dir: dir}.Run(ctx, job, nil)
		if err != nil {
			return 0, err
		}
		var sum float64
		for _, j := range out.Final.AllJobs() {
			if rd := fio.ToResult(j).Read; rd != nil {
				sum += rd.IOPS
			}
		}
		return sum, nil
	}
	// A first run lays the file out; it is not counted.
	if _, err := iops(execx.Local{}); err != nil {
		return err
	}
	var local, remote []float64
	for range reps {
		l, err := iops(execx.Local{})
		if err != nil {
			return err
		}
		r, err := iops(c)
		if err != nil {
			return err
		}
		local, remote = append(local, l), append(remote, r)
		fmt.Printf("local %8.0f IOPS   over SSH %8.0f IOPS   ratio %.3f\n", l, r, r/l)
	}
	sort.Float64s(local)
	sort.Float64s(remote)
	ml, mr := local[len(local)/2], remote[len(remote)/2]
	fmt.Printf("\nmedian: local %.0f IOPS, over SSH %.0f IOPS, ratio %.3f (%s, direct 4 KiB random reads, psync, 5 s, %d pairs)\n", ml, mr, mr/ml, dir, reps)
	return nil
}

// gatedSkew starts `read; date +%s%N` on every client, waits until each
// has its session up, releases all with one line each, and returns the
// spread of the remote clocks.
func gatedSkew(ctx context.Context, clients []*ssh.Client) (time.Duration, error) {
	n := len(clients)
	writers := make([]*io.PipeWriter, n)
	outs := make([]strings.Builder, n)
	ready := make(chan struct{}, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range clients {
		r, w := io.Pipe()
		writers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := c.Command(ctx, "sh", "-c", `echo ready >&2; read -r _ || exit 125; date +%s%N`).
				SetStdin(r).SetStdout(&outs[i]).SetStderr(readyWriter(ready))
			errs[i] = cmd.Run()
		}()
	}
	for range n {
		select {
		case <-ready:
		case <-time.After(30 * time.Second):
			return 0, fmt.Errorf("gated commands not ready within 30s")
		}
	}
	for _, w := range writers {
		w.Write([]byte("\n"))
	}
	for _, w := range writers {
		w.Close()
	}
	wg.Wait()
	var lo, hi int64
	for i := range clients {
		if errs[i] != nil {
			return 0, errs[i]
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(outs[i].String()), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("remote clock %q: %w", outs[i].String(), err)
		}
		if i == 0 || ns < lo {
			lo = ns
		}
		if ns > hi {
			hi = ns
		}
	}
	return time.Duration(hi - lo), nil
}

// readyWriter signals once when the remote side says it is ready.
func readyWriter(ready chan<- struct{}) io.Writer {
	var once sync.Once
	return writerFunc(func(p []byte) (int, error) {
		if strings.Contains(string(p), "ready") {
			once.Do(func() { ready <- struct{}{} })
		}
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
