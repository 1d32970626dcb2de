// Package proc reads what storbench needs to know about processes from
// Linux's /proc: who a process is (pid, start time, boot), whether the
// process that ran a run is still alive, and which processes descend from
// one (fio forks a process per job, each in a session of its own).
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Root is where /proc is mounted; tests may point it elsewhere through
// Reader.
const Root = "/proc"

// Reader reads one /proc tree.
type Reader struct {
	// Root is the /proc directory, "/proc" when empty.
	Root string
}

func (r Reader) root() string {
	if r.Root == "" {
		return Root
	}
	return r.Root
}

// Stat is the part of /proc/PID/stat storbench uses.
type Stat struct {
	PID  int
	PPID int
	// StartTicks is the process's start time in clock ticks after boot
	// (field 22): with the boot ID it names a process even after its pid
	// has been reused.
	StartTicks uint64
	// State is the one-letter state; "Z" is a zombie, dead but not reaped.
	State string
	// Comm is the program's name as the kernel keeps it (15 bytes at most).
	Comm string
}

// ErrNoProcess says no process has this pid.
var ErrNoProcess = errors.New("no such process")

// Stat reads /proc/PID/stat.
func (r Reader) Stat(pid int) (Stat, error) {
	b, err := os.ReadFile(filepath.Join(r.root(), strconv.Itoa(pid), "stat"))
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return Stat{}, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	}
	if err != nil {
		return Stat{}, err
	}
	return parseStat(b)
}

// parseStat reads "pid (comm) S ppid ... starttime ...". comm may hold
// spaces and parentheses, so the fields are counted after its last ')'.
func parseStat(b []byte) (Stat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return Stat{}, fmt.Errorf("malformed /proc stat line %q", b)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return Stat{}, fmt.Errorf("malformed /proc stat line %q: %w", b, err)
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("malformed /proc stat line %q: %d fields", b, len(f)+2)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Stat{}, fmt.Errorf("malformed ppid in /proc stat line %q: %w", b, err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("malformed start time in /proc stat line %q: %w", b, err)
	}
	return Stat{PID: pid, PPID: ppid, StartTicks: start, State: f[0], Comm: string(b[open+1 : end])}, nil
}

// BootID is this boot's random ID (/proc/sys/kernel/random/boot_id).
func (r Reader) BootID() (string, error) {
	b, err := os.ReadFile(filepath.Join(r.root(), "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return "", fmt.Errorf("reading the boot ID: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Self identifies the calling process.
func (r Reader) Self() (result.Process, error) {
	pid := os.Getpid()
	st, err := r.Stat(pid)
	if err != nil {
		return result.Process{}, err
	}
	boot, err := r.BootID()
	if err != nil {
		return result.Process{}, err
	}
	host, err := os.Hostname()
	if err != nil {
		return result.Process{}, fmt.Errorf("reading the host name: %w", err)
	}
	return result.Process{PID: pid, StartTicks: st.StartTicks, BootID: boot, Host: host}, nil
}

// Liveness is what can be said about the process that ran a run.
type Liveness int

const (
	// Alive: the very process (same boot, pid and start time) still runs.
	Alive Liveness = iota
	// Gone: the process no longer exists: its pid is free or held by
	// another process, or the host rebooted since.
	Gone
	// Unknown: the run was made on another host, or recorded no process,
	// so nothing here can tell.
	Unknown
)

func (l Liveness) String() string {
	return [...]string{"alive", "gone", "unknown"}[l]
}

// Check says whether p still runs on this host, and why not.
func (r Reader) Check(p *result.Process) (Liveness, string) {
	if p == nil || p.PID <= 0 || p.BootID == "" {
		return Unknown, "the run recorded no process"
	}
	if host, err := os.Hostname(); err != nil || host != p.Host {
		return Unknown, fmt.Sprintf("the run was made on host %s", p.Host)
	}
	boot, err := r.BootID()
	if err != nil {
		return Unknown, err.Error()
	}
	if boot != p.BootID {
		return Gone, "the host rebooted since"
	}
	st, err := r.Stat(p.PID)
	switch {
	case errors.Is(err, ErrNoProcess):
		return Gone, fmt.Sprintf("process %d is gone", p.PID)
	case err != nil:
		return Unknown, err.Error()
	case st.StartTicks != p.StartTicks:
		return Gone, fmt.Sprintf("process %d is gone (its pid now belongs to another process)", p.PID)
	case st.State == "Z":
		return Gone, fmt.Sprintf("process %d has exited", p.PID)
	}
	return Alive, ""
}

// Descendants lists the processes below pid (children, their children...),
// found by their parent pids. fio's job processes start sessions of their
// own, so a process group does not hold them; their parent does.
func (r Reader) Descendants(pid int) ([]Stat, error) {
	entries, err := os.ReadDir(r.root())
	if err != nil {
		return nil, err
	}
	children := map[int][]Stat{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := r.Stat(n)
		if err != nil {
			continue // exited meanwhile
		}
		children[st.PPID] = append(children[st.PPID], st)
	}
	var out []Stat
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c.PID)
		}
	}
	return out, nil
}

// Abandon shows a run as abandoned when it is stored as running and the
// process that ran it is gone; the note says why. It reports whether it
// did. A run whose process cannot be judged (another host, none recorded)
// stays running.
func (r Reader) Abandon(run *result.Run) bool {
	if run.Status != result.StatusRunning {
		return false
	}
	live, why := r.Check(run.Process)
	if live != Gone {
		return false
	}
	run.Status = result.StatusAbandoned
	if run.Note == "" {
		run.Note = "abandoned: " + why
	}
	return true
}

// WorkingIn lists the processes working in dir: their working directory is
// dir or below it (removed since, too), or their command line names it. fio
// runs in storbench's work directory, so this finds every fio process of a
// run, orphans too, even once the directory is gone.
func (r Reader) WorkingIn(dir string) ([]Stat, error) {
	return r.find(func(cwd string, cmdline []byte) bool {
		return cwd == dir || strings.HasPrefix(cwd, dir+"/") || bytes.Contains(cmdline, []byte(dir))
	})
}

// deleted is what the kernel appends to a working directory removed since.
const deleted = " (deleted)"

// find lists the live processes (zombies left out) whose working directory
// and command line (NUL-separated arguments) match.
func (r Reader) find(match func(cwd string, cmdline []byte) bool) ([]Stat, error) {
	entries, err := os.ReadDir(r.root())
	if err != nil {
		return nil, err
	}
	var out []Stat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		base := filepath.Join(r.root(), e.Name())
		cwd, _ := os.Readlink(filepath.Join(base, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join(base, "cmdline"))
		if match(strings.TrimSuffix(cwd, deleted), cmdline) {
			if st, err := r.Stat(pid); err == nil && st.State != "Z" {
				out = append(out, st)
			}
		}
	}
	return out, nil
}

// Command is what identifies the processes a command forks without
// executing anything new (fio's job processes): they share its command
// line and working directory and start no earlier.
type Command struct {
	Stat
	Args []string
	Dir  string
}

// Forks lists the live processes other than c itself with c's command line
// and working directory that started no earlier than c: the processes c
// forked, still there after c died (fio's jobs, each in a session of its
// own, are orphaned rather than killed with their parent).
func (r Reader) Forks(c Command) ([]Stat, error) {
	want := []byte(strings.Join(c.Args, "\x00") + "\x00")
	all, err := r.find(func(cwd string, cmdline []byte) bool { return cwd == c.Dir && bytes.Equal(cmdline, want) })
	var out []Stat
	for _, st := range all {
		if st.PID != c.PID && st.StartTicks >= c.StartTicks {
			out = append(out, st)
		}
	}
	return out, err
}

// Kill sends SIGKILL to each process (unless its pid now names another
// one) and waits up to wait for all to be gone; the error names those
// still there. SIGKILL because a fio job whose main process died no longer
// heeds SIGTERM: it sleeps on a futex its parent was to wake.
func (r Reader) Kill(ps []Stat, wait time.Duration) error {
	for _, p := range ps {
		if r.same(p) {
			_ = syscall.Kill(p.PID, syscall.SIGKILL) // gone meanwhile is fine
		}
	}
	deadline := time.Now().Add(wait)
	for {
		var left []string
		for _, p := range ps {
			if r.same(p) {
				left = append(left, strconv.Itoa(p.PID))
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %s still there %s after SIGKILL", strings.Join(left, ", "), wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// same reports whether p still runs as the very process it was (a zombie
// has ended: only its parent's wait is missing).
func (r Reader) same(p Stat) bool {
	st, err := r.Stat(p.PID)
	return err == nil && st.StartTicks == p.StartTicks && st.State != "Z"
}

// StopWorkingIn kills every process but the caller working in dir (see
// WorkingIn) whose program is named comm (every one when comm is "") and
// waits up to wait for them to go; it returns those it found. Naming the
// program spares what else may be there: a user's shell in the directory.
func (r Reader) StopWorkingIn(dir, comm string, wait time.Duration) ([]Stat, error) {
	all, err := r.WorkingIn(dir)
	if err != nil {
		return nil, err
	}
	ps := slices.DeleteFunc(all, func(p Stat) bool { return p.PID == os.Getpid() || comm != "" && p.Comm != comm })
	return ps, r.Kill(ps, wait)
}
