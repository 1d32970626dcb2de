package ssh

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
)

// OwnerFile is the file Prepare writes in every work directory it makes
// on a host: the run and the storbench process that made it. Only a
// directory holding it is ever removed as a leftover.
const OwnerFile = ".storbench-owner"

// directIOProbe is the file the direct I/O check briefly makes.
const directIOProbe = ".direct-io-probe"

//go:embed leftovers.sh
var leftoversScript string

//go:embed removeleftover.sh
var removeLeftoverScript string

// owner is the content of OwnerFile.
type owner struct {
	RunID   string         `json:"run_id"`
	Process result.Process `json:"process"`
}

// FindLeftovers lists the work directories under dir on the host
// (dir/storbench-RUNID) and judges each: it may be removed only when it
// holds storbench's ownership file for that run, the storbench process
// named there is gone from this machine (killed, or the machine rebooted),
// no process on the host works in it, and it holds only regular files
// storbench makes. Processes a storbench command started that still work
// in such a directory are stopping (their wrapper ends them once their
// connection is gone): FindLeftovers waits for them, up to lostBound,
// before it judges. It changes nothing.
func FindLeftovers(ctx context.Context, c *Client, dir string) ([]result.LeftoverDir, error) {
	deadline := time.Now().Add(lostBound)
	for {
		all, stopping, err := findLeftovers(ctx, c, dir)
		if err != nil || !stopping || !time.Now().Before(deadline) {
			return all, err
		}
		select {
		case <-ctx.Done():
			return all, nil
		case <-time.After(lostPoll):
		}
	}
}

// listing is what leftovers.sh said of one directory.
type listing struct {
	owner    string
	busy     []string // "PID COMM" of processes not storbench's
	stopping []string // "PID COMM" of storbench's commands' processes
}

// findLeftovers lists and judges once, and says whether a directory
// would be removed but for storbench's processes still stopping in it.
func findLeftovers(ctx context.Context, c *Client, dir string) ([]result.LeftoverDir, bool, error) {
	out, err := execx.Output(c.Command(ctx, "sh", "-c", leftoversScript, "sh", dir))
	if err != nil {
		return nil, false, fmt.Errorf("%s: listing storbench's work directories in %s: %w", c.Name(), dir, err)
	}
	var all []result.LeftoverDir
	var lists []listing
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		if k == "dir" {
			all = append(all, result.LeftoverDir{Host: c.Name(), Dir: path.Join(dir, v), RunID: strings.TrimPrefix(v, "storbench-"), Files: []string{}})
			lists = append(lists, listing{})
			continue
		}
		if len(all) == 0 {
			continue
		}
		l, li := &all[len(all)-1], &lists[len(all)-1]
		switch k {
		case "owner":
			li.owner = v
		case "busy":
			li.busy = append(li.busy, v)
		case "stopping":
			li.stopping = append(li.stopping, v)
		case "entry":
			t, name, _ := strings.Cut(v, " ")
			l.Files = append(l.Files, name)
			if why := foreign(t, name); why != "" && l.Kept == "" {
				l.Kept = why
			}
		}
	}
	waiting := false
	for i := range all {
		judge(&all[i], lists[i])
		if strings.HasPrefix(all[i].Kept, stoppingKept) {
			waiting = true
		}
	}
	return all, waiting, nil
}

// stoppingKept begins Kept for a directory kept only because storbench's
// commands still stop in it.
const stoppingKept = "storbench's commands still stop in it on the host"

// judge sets Why, or Kept when the directory must stay.
func judge(l *result.LeftoverDir, li listing) {
	var o owner
	switch {
	case li.owner == "":
		l.Kept = "no " + OwnerFile + " in it: not a work directory storbench made"
		return
	case json.Unmarshal([]byte(li.owner), &o) != nil || o.RunID != l.RunID:
		l.Kept = OwnerFile + " does not name run " + l.RunID
		return
	}
	live, why := proc.Reader{}.Check(&o.Process)
	switch live {
	case proc.Alive:
		l.Kept = fmt.Sprintf("run %s is still running (storbench process %d on %s)", l.RunID, o.Process.PID, o.Process.Host)
		return
	case proc.Unknown:
		l.Kept = why + ": clean up from there"
		return
	}
	l.Why = why
	switch {
	case l.Kept != "":
	case len(li.busy) > 0:
		l.Kept = "processes still work in it on the host: " + strings.Join(append(li.busy, li.stopping...), ", ")
	case len(li.stopping) > 0:
		l.Kept = fmt.Sprintf("%s after %s: %s", stoppingKept, lostBound, strings.Join(li.stopping, ", "))
	}
}

// foreign says why an entry of a work directory is not one storbench
// makes, or "": storbench's files are regular files named storbench-*
// (test file, noise file, job files, bandwidth logs) and its two dot
// files.
func foreign(kind, name string) string {
	if kind != "f" {
		return name + " is not a regular file"
	}
	if name == OwnerFile || name == directIOProbe || strings.HasPrefix(name, "storbench-") {
		return ""
	}
	return name + " is not a file storbench makes"
}

// RemoveLeftover removes the files FindLeftovers listed, then the
// directory; anything that appeared since makes it fail rather than be
// removed.
func RemoveLeftover(ctx context.Context, c *Client, l *result.LeftoverDir) error {
	if l.Kept != "" {
		return fmt.Errorf("%s: %s is kept: %s", c.Name(), l.Dir, l.Kept)
	}
	args := append([]string{"-c", removeLeftoverScript, "sh", path.Dir(l.Dir), path.Base(l.Dir)}, l.Files...)
	if _, err := execx.Output(c.Command(ctx, "sh", args...)); err != nil {
		return fmt.Errorf("%s: removing %s: %w", c.Name(), l.Dir, err)
	}
	l.Removed = true
	return nil
}

// writeOwner marks a work directory as the run's, made by this process.
func writeOwner(ctx context.Context, c *Client, work, runID string) error {
	p, err := proc.Reader{}.Self()
	if err != nil {
		return fmt.Errorf("reading this process for %s: %w", OwnerFile, err)
	}
	data, err := json.Marshal(owner{RunID: runID, Process: p})
	if err != nil {
		return err
	}
	return run(c.Command(ctx, "sh", "-c", `printf '%s\n' "$2" >"$1"`, "sh", path.Join(work, OwnerFile), string(data)))
}
