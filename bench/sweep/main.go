// Command sweep measures issue 34's figure: the saturation sweep's
// aggregate at each step (storbench run --clients, through the library)
// against the same clients run by fio's own client/server mode on the same
// directory: N fio servers on 127.0.0.1, one fio --client per server, each
// running the same job (storbench's own job writer) on a file of its own;
// fio's aggregate is the sum of its clients' IOPS. The two methods
// alternate step by step, in turn first, so a drift of the disk spreads
// over both.
//
// On a shared machine a disk's own figures drift by tens of percent from
// one run to the next; -loop makes the storage deterministic instead: a
// filesystem on a loop device whose reads the bench's control group (cgroup
// v1 blkio, joined by this process, so every fio it starts) caps at
// -cap-iops, each client asking -rate-iops. Both methods must then find
// the same aggregate below the cap (N x rate) and at it.
//
// Usage (from the repository root; -loop as root):
//
//	go run ./bench/sweep -dir /path/on/disk [-clients 1,2,4,8] [-runtime 10s] [-rounds 2] [-size 256MiB]
//	go run ./bench/sweep -loop [-rate-iops 1500] [-cap-iops 4000] [-clients 1,2,4,8]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/cliff/throttle"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/units"
)

func main() {
	if err := bench(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// bench runs the comparison; with -loop it undoes the loop device, the
// mount and the control group whether or not the comparison failed.
func bench() (err error) {
	dir := flag.String("dir", "", "directory on the disk to measure")
	clients := flag.String("clients", "1,2,4,8", "the steps")
	runtime := flag.Duration("runtime", 10*time.Second, "each step's runtime")
	rounds := flag.Int("rounds", 2, "how many times to measure each step with each method")
	size := flag.String("size", "256MiB", "each client's file")
	loop := flag.Bool("loop", false, "measure on a throttled loop device instead of -dir (root)")
	rate := flag.Int("rate-iops", 1500, "-loop: each client's own rate")
	capIOPS := flag.Int("cap-iops", 4000, "-loop: the control group's read limit")
	flag.Parse()
	var extra map[string]string
	if *loop {
		d, done, lerr := throttledLoop(*capIOPS)
		if lerr != nil {
			return lerr
		}
		defer func() { err = errors.Join(err, done()) }()
		*dir, extra = d, map[string]string{"rate_iops": strconv.Itoa(*rate)}
		if *size == "256MiB" {
			*size = "32MiB"
		}
	}
	return run(*dir, *clients, *runtime, *rounds, *size, extra)
}

func run(dir, clients string, runtime time.Duration, rounds int, sizeText string, extra map[string]string) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	size, err := units.ParseSize(sizeText)
	if err != nil {
		return err
	}
	w, err := workload(runtime, size)
	if err != nil {
		return err
	}
	w.Extra = extra
	db := filepath.Join(os.TempDir(), fmt.Sprintf("sweep-bench-%d.db", os.Getpid()))
	defer os.Remove(db)
	st := store.NewLazy(db)
	defer st.Close()
	fmt.Printf("%-8s %-6s %14s %14s %8s %12s\n", "CLIENTS", "ROUND", "STORBENCH IOPS", "FIO C/S IOPS", "DIFF", "START SPREAD")
	for _, f := range strings.Split(clients, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("-clients %s: %w", clients, err)
		}
		var sb, cs []float64
		for r := range rounds {
			var a, b float64
			var spread string
			first := func() error { var e error; a, spread, e = viaStorbench(st, dir, w, n); return e }
			second := func() error { var e error; b, e = viaClientServer(dir, w, n, size); return e }
			if r%2 == 1 {
				first, second = second, first
			}
			if err := first(); err != nil {
				return err
			}
			if err := second(); err != nil {
				return err
			}
			sb, cs = append(sb, a), append(cs, b)
			fmt.Printf("%-8d %-6d %14.0f %14.0f %+7.1f%% %9s ms\n", n, r+1, a, b, (a/b-1)*100, spread)
		}
		ma, mb := mean(sb), mean(cs)
		fmt.Printf("%-8d %-6s %14.0f %14.0f %+7.1f%%\n", n, "mean", ma, mb, (ma/mb-1)*100)
	}
	return nil
}

// workload is the swept workload: 4 KiB random reads at QD1, direct, time
// based.
func workload(runtime time.Duration, size int64) (spec.Workload, error) {
	y := fmt.Sprintf("name: b\nworkloads:\n  - {name: rand-read-4k-qd1, rw: randread, bs: 4KiB, iodepth: 1, size: %d, runtime: %dms}\n", size, runtime.Milliseconds())
	s, err := spec.Parse([]byte(y), "bench.yaml")
	if err != nil {
		return spec.Workload{}, err
	}
	return s.Workloads[0], nil
}

// viaStorbench runs one sweep step through the library and returns its
// aggregate IOPS and its start spread.
func viaStorbench(st store.Store, dir string, w spec.Workload, n int) (float64, string, error) {
	req := storbench.DefaultRunRequest()
	req.SuiteSpec = &spec.Suite{Name: "bench", Workloads: []spec.Workload{w}}
	req.Targets, req.Telemetry = []string{dir}, false
	req.Sweep.Clients = strconv.Itoa(n)
	r, err := storbench.Run(context.Background(), st, req, nil)
	if err != nil {
		return 0, "", err
	}
	o, err := storbench.LoadRunOutcome(context.Background(), st, r)
	if err != nil {
		return 0, "", err
	}
	for _, x := range o.Results {
		if x.Round == result.SweepRound(n) {
			iops, _ := x.Metric(result.MetricIOPS)
			return iops, result.LabelSweepStartSpread.Of(x.Labels), nil
		}
	}
	return 0, "", fmt.Errorf("run %s: no result of %d clients", r.ID, n)
}

// viaClientServer runs the same job on n fio servers through one fio
// client and returns the sum of the clients' IOPS.
func viaClientServer(dir string, w spec.Workload, n int, size int64) (_ float64, err error) {
	work, err := os.MkdirTemp(dir, "fio-cs-")
	if err != nil {
		return 0, err
	}
	args := []string{"--output-format=json"}
	var servers []*exec.Cmd
	defer func() {
		for _, s := range servers {
			s.Process.Kill()
			s.Wait()
		}
		// Each server's backend, forked per connection, outlives it for
		// a moment, in the directory and the control group.
		_, serr := proc.Reader{}.StopWorkingIn(work, "fio", 5*time.Second)
		err = errors.Join(err, serr, os.RemoveAll(work))
	}()
	for i := range n {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		srv := exec.Command("fio", fmt.Sprintf("--server=ip:127.0.0.1,%d", port))
		srv.Dir = work
		if err := srv.Start(); err != nil {
			return 0, err
		}
		servers = append(servers, srv)
		if err := listening(port); err != nil {
			return 0, err
		}
		job := filepath.Join(work, fmt.Sprintf("client-%d.fio", i+1))
		text := fio.FromWorkload(w, fio.File{Name: filepath.Join(work, fmt.Sprintf("cs-%d.dat", i+1)), Size: size}, "").String()
		if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
			return 0, err
		}
		args = append(args, fmt.Sprintf("--client=ip:127.0.0.1,%d", port), job)
	}
	var stderr strings.Builder
	cl := exec.Command("fio", args...)
	cl.Stderr = &stderr
	out, err := cl.Output()
	if err != nil {
		return 0, fmt.Errorf("fio client: %w: %s%s", err, stderr.String(), out)
	}
	docs, _, _, err := fio.ParseOutputs(strings.NewReader(string(out)))
	if err != nil || len(docs) == 0 {
		return 0, fmt.Errorf("fio client output: %v", err)
	}
	var sum float64
	jobs := docs[len(docs)-1].AllJobs()
	for _, j := range jobs {
		r := fio.ToResult(j)
		iops, _ := r.Metric(result.MetricIOPS)
		sum += iops
	}
	if len(jobs) != n {
		return 0, fmt.Errorf("fio client reported %d of %d clients", len(jobs), n)
	}
	return sum, nil
}

// listening waits until a fio server accepts connections on port.
func listening(port int) error {
	for range 100 {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			return c.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no fio server listening on port %d after 5 s", port)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	return s / float64(len(xs))
}

// throttledLoop mounts a fresh filesystem on a loop device, caps its reads
// at capIOPS for this process's new control group and moves this process
// into it; done undoes all of it.
func throttledLoop(capIOPS int) (dir string, done func() error, err error) {
	var undo []func() error
	done = func() error {
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			errs = append(errs, undo[i]())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, done())
		}
	}()
	command := func(name string, args ...string) func() error {
		return func() error {
			if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("%s %s: %w %s", name, strings.Join(args, " "), err, out)
			}
			return nil
		}
	}
	img := filepath.Join(os.TempDir(), fmt.Sprintf("sbswp-bench-%d.img", os.Getpid()))
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		return "", nil, err
	}
	undo = append(undo, func() error { return os.Remove(img) })
	if err := os.Truncate(img, 2<<30); err != nil {
		return "", nil, err
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		return "", nil, fmt.Errorf("losetup: %w", err)
	}
	dev := strings.TrimSpace(string(out))
	undo = append(undo, command("losetup", "--detach", dev))
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("mkfs.ext4: %w %s", err, out)
	}
	if dir, err = os.MkdirTemp("", "sbswp-bench-"); err != nil {
		return "", nil, err
	}
	undo = append(undo, func() error { return os.Remove(dir) })
	if out, err := exec.Command("mount", dev, dir).CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("mount: %w %s", err, out)
	}
	undo = append(undo, command("umount", dir))
	major, minor, err := throttle.DeviceNumber(dev)
	if err != nil {
		return "", nil, err
	}
	const root = "/sys/fs/cgroup/blkio"
	cg := filepath.Join(root, fmt.Sprintf("sbswp-bench-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		return "", nil, fmt.Errorf("cgroup v1 blkio: %w", err)
	}
	undo = append(undo, func() error { return os.Remove(cg) })
	limit := fmt.Sprintf("%d:%d %d", major, minor, capIOPS)
	if err := os.WriteFile(filepath.Join(cg, "blkio.throttle.read_iops_device"), []byte(limit), 0o644); err != nil {
		return "", nil, err
	}
	self := []byte(strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), self, 0o644); err != nil {
		return "", nil, err
	}
	undo = append(undo, func() error { return os.WriteFile(filepath.Join(root, "cgroup.procs"), self, 0o644) })
	return dir, done, nil
}
