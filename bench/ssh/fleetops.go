package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/ssh"
	"github.com/storbench/storbench/internal/storbench"
)

// benchHosts starts n hosts and connects to all of them, with a directory
// of its own for each under a temporary directory; done stops everything.
func benchHosts(n int) (clients []*ssh.Client, dirs []string, opts []ssh.Options, done func(), err error) {
	home, err := os.MkdirTemp("", "storbench-bench-ssh-")
	if err != nil {
		return nil, nil, nil, func() {}, err
	}
	dot := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dot, 0o700); err != nil {
		return nil, nil, nil, func() {}, err
	}
	opts, stop, err := fleet(dot, n)
	done = func() {
		for _, c := range clients {
			c.Close()
		}
		stop()
		os.RemoveAll(home)
	}
	if err != nil {
		return nil, nil, nil, done, err
	}
	// ssh:// targets reach the hosts through this ~/.ssh, as ssh would.
	os.Setenv("HOME", home)
	os.Setenv("SSH_AUTH_SOCK", "")
	for i, o := range opts {
		c, err := ssh.Dial(context.Background(), o)
		if err != nil {
			return nil, nil, nil, done, err
		}
		clients = append(clients, c)
		d := filepath.Join(home, "target"+strconv.Itoa(i))
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, nil, nil, done, err
		}
		dirs = append(dirs, d)
	}
	return clients, dirs, opts, done, nil
}

// runCleanup measures, per host: a prepared directory target's Cleanup
// (the telemetry stream ended, the work directory with an 8 MiB test
// file removed), and storbench cleanup --ssh removing what a killed run
// left (one work directory with its owner file and an 8 MiB test file),
// one host at a time and all n at once.
func runCleanup(n, reps int) error {
	clients, dirs, opts, done, err := benchHosts(n)
	defer done()
	if err != nil {
		return err
	}
	fmt.Printf("%d sshd hosts on 127.0.0.1, one directory target each, %d repetitions\n\n", n, reps)
	ctx := context.Background()
	var prepared, leftover, fleetWide []float64
	for r := range reps {
		for i, c := range clients {
			id := "bench-" + strconv.Itoa(r) + "-" + strconv.Itoa(i)
			t := ssh.NewTarget(ssh.TargetName(opts[i].Name, dirs[i]), c, dirs[i], ssh.TargetOptions{})
			p, err := t.Prepare(ctx, runner.Need{RunID: id, FileSize: 64 << 20, Writers: []string{"w"}})
			if err != nil {
				return err
			}
			if p.Telemetry != nil {
				p.Telemetry()
			}
			if err := os.WriteFile(filepath.Join(dirs[i], "storbench-"+id, ssh.TestFileName), make([]byte, 8<<20), 0o644); err != nil {
				return err
			}
			start := time.Now()
			if err := p.Cleanup(ctx); err != nil {
				return err
			}
			prepared = append(prepared, ms(time.Since(start)))
		}
		for i, c := range clients {
			if err := deadRunLeft(dirs[i], "dead-"+strconv.Itoa(r)+"-"+strconv.Itoa(i)); err != nil {
				return err
			}
			start := time.Now()
			found, err := ssh.FindLeftovers(ctx, c, dirs[i])
			if err != nil {
				return err
			}
			for j := range found {
				if err := ssh.RemoveLeftover(ctx, c, &found[j]); err != nil {
					return err
				}
			}
			leftover = append(leftover, ms(time.Since(start)))
			if len(found) != 1 {
				return fmt.Errorf("host %d: found %d leftovers, want 1", i, len(found))
			}
		}
		req := storbench.SSHCleanupRequest{}
		for i, d := range dirs {
			if err := deadRunLeft(d, "fleet-"+strconv.Itoa(r)+"-"+strconv.Itoa(i)); err != nil {
				return err
			}
			req.Targets = append(req.Targets, "ssh://"+opts[i].User+"@127.0.0.1:"+strconv.Itoa(opts[i].Port)+d)
		}
		start := time.Now()
		rep, err := storbench.CleanupSSH(ctx, req)
		took := time.Since(start)
		if err != nil {
			return err
		}
		for _, t := range rep.Targets {
			if len(t.Dirs) != 1 || !t.Dirs[0].Removed {
				return fmt.Errorf("%s: %+v", t.Target, t.Dirs)
			}
		}
		fleetWide = append(fleetWide, ms(took))
	}
	fmt.Printf("%-62s %4s %8s %8s\n", "ms", "n", "median", "max")
	row := func(what string, v []float64) {
		slices.Sort(v)
		fmt.Printf("%-62s %4d %8.1f %8.1f\n", what, len(v), v[len(v)/2], v[len(v)-1])
	}
	row("prepared target's Cleanup (stream stopped, work dir removed)", prepared)
	row("a killed run's leftover found and removed, one host", leftover)
	row(fmt.Sprintf("storbench.CleanupSSH, %d hosts at once (connect included)", n), fleetWide)
	return nil
}

// deadRunLeft makes, in dir, what a storbench killed mid-run leaves: its
// work directory, marked with an owner file naming a process that is
// gone (this pid with another start time), and an 8 MiB test file.
func deadRunLeft(dir, id string) error {
	self, err := proc.Reader{}.Self()
	if err != nil {
		return err
	}
	self.StartTicks++
	work := filepath.Join(dir, "storbench-"+id)
	if err := os.Mkdir(work, 0o755); err != nil {
		return err
	}
	owner, err := json.Marshal(map[string]any{"run_id": id, "process": self})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, ssh.OwnerFile), owner, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(work, ssh.TestFileName), make([]byte, 8<<20), 0o644)
}

// runSampling measures storbench's own CPU while it samples telemetry over
// SSH from n hosts at 1 Hz (one streaming session per host, the copy
// sampled as a root), as a run does while fio works: prepared directory
// targets, a recording started on each, this process's user+system CPU
// time over the window divided by the wall time.
func runSampling(n int, window time.Duration) error {
	clients, dirs, opts, done, err := benchHosts(n)
	defer done()
	if err != nil {
		return err
	}
	ctx := context.Background()
	var prepared []*runner.Prepared
	defer func() {
		for _, p := range prepared {
			p.Cleanup(ctx)
		}
	}()
	var recs []runner.Recording
	for i, c := range clients {
		t := ssh.NewTarget(ssh.TargetName(opts[i].Name, dirs[i]), c, dirs[i], ssh.TargetOptions{})
		p, err := t.Prepare(ctx, runner.Need{RunID: "sampling", FileSize: 64 << 20})
		if err != nil {
			return err
		}
		prepared = append(prepared, p)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range prepared {
		wg.Go(func() {
			if s, err := p.Telemetry(); err == nil && s != nil {
				r := s.Start()
				mu.Lock()
				recs = append(recs, r)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(recs) != n {
		return fmt.Errorf("%d of %d hosts streamed their counters", len(recs), n)
	}
	time.Sleep(2 * time.Second) // past the first frames
	before, began := cpuTime(), time.Now()
	time.Sleep(window)
	used, wall := cpuTime()-before, time.Since(began)
	samples := 0
	for _, r := range recs {
		if tel := r.Stop(); tel != nil && tel.Series != nil {
			samples += len(tel.Series.OffsetsMS)
		}
	}
	fmt.Printf("%d hosts sampled at 1 Hz over SSH for %s: storbench's CPU %.2f%% of one core (%.1f ms CPU per second; %.2f ms per host-second); %d samples recorded\n",
		n, wall.Round(time.Second), 100*used.Seconds()/wall.Seconds(), ms(used)/wall.Seconds(), ms(used)/wall.Seconds()/float64(n), samples)
	return nil
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
