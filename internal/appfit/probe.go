package appfit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/execx"
)

// ProbeCommand is storbench's hidden command that runs one client.
const ProbeCommand = "appfit-probe"

// Client is where one client runs: storbench's binary at Binary, run
// through Cmder (this host, a pod, a host over SSH).
type Client struct {
	Cmder  execx.Cmder
	Binary string
	// Where says where it runs, in the user's words ("node-a").
	Where string
	// Dir is the directory probed, as this client sees it (two mounts of
	// one export have two paths); the probe works in a directory of its
	// own inside it, removed at the end.
	Dir string
}

// workDir is the client's path of the work directory named id.
func (c Client) workDir(id string) string { return filepath.Join(c.Dir, WorkDirPrefix+id) }

// ProbeOptions say what to probe and with which two clients.
type ProbeOptions struct {
	First, Second Client
	// ID makes the work directory's name unique; required.
	ID string
	// Timeout bounds each wait of one client for the other; 0: 1 minute.
	Timeout time.Duration
}

func (o *ProbeOptions) defaults() error {
	if err := checkID(o.ID); err != nil {
		return err
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	return nil
}

// Probe runs the two clients of the semantics probe at once and merges
// their answers. The work directory is removed whatever happens, with a
// context of its own when ctx was cancelled; an error is for a probe that
// could not run (a client that failed to start or answer).
func Probe(ctx context.Context, o ProbeOptions) (rep *Report, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, removeWith(ctx, o.First, o.First.workDir(o.ID))) }()
	args := func(c Client, role Role) []string {
		return []string{ProbeCommand, "--role", string(role), "--dir", c.workDir(o.ID), "--timeout", o.Timeout.String()}
	}
	var answers [2][]Answer
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, c := range []Client{o.First, o.Second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = runJSON(ctx, c, &answers[i], args(c, []Role{First, Second}[i])...)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	clients := "two processes on " + o.First.Where
	if o.First.Where != o.Second.Where {
		clients = "one client on " + o.First.Where + ", one on " + o.Second.Where
	}
	return &Report{Dir: o.First.Dir, Clients: clients, Answers: Merge(answers[0], answers[1])}, nil
}

func checkID(id string) error {
	if id == "" || strings.ContainsAny(id, "/ ") {
		return fmt.Errorf("appfit: probe ID %q: required, without slashes or spaces", id)
	}
	return nil
}

// runJSON runs storbench with args through c and decodes its standard
// output into v.
func runJSON(ctx context.Context, c Client, v any, args ...string) error {
	var out, errb bytes.Buffer
	if err := c.Cmder.Command(ctx, c.Binary, args...).SetStdout(&out).SetStderr(&errb).Run(); err != nil {
		return fmt.Errorf("appfit: %s on %s: %w", strings.Join(args[:3], " "), c.Where, err)
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		return fmt.Errorf("appfit: %s on %s printed no answer (%w): %s", strings.Join(args[:3], " "), c.Where, err, strings.TrimSpace(errb.String()))
	}
	return nil
}

// removeWith removes the work directory through the client's own binary,
// where it runs, even after ctx was cancelled.
func removeWith(ctx context.Context, c Client, work string) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var removed bool
	return runJSON(rctx, c, &removed, ProbeCommand, "--role", RoleRemove, "--dir", work)
}

// RoleRemove and the SQLite roles are the probe command's other jobs.
const (
	RoleRemove      = "remove"
	RoleSQLite      = "sqlite"
	RoleSQLiteCheck = "sqlite-check"
)

// Job is one run of the probe command, as its flags give it.
type Job struct {
	Role        string
	Dir         string
	Timeout     time.Duration
	Journal     string
	Synchronous string
	Duration    time.Duration
	MaxCommits  int
	Client      int
}

// Do runs one probe command's job and returns its answer, for the
// command to print as JSON.
func Do(ctx context.Context, j Job) (any, error) {
	switch j.Role {
	case string(First), string(Second):
		return RunClient(ctx, ClientOptions{Dir: j.Dir, Role: Role(j.Role), Timeout: j.Timeout})
	case RoleSQLite:
		return MeasureSQLite(ctx, SQLiteOptions{Dir: j.Dir, Journal: j.Journal, Synchronous: j.Synchronous,
			Duration: j.Duration, MaxCommits: j.MaxCommits, Client: j.Client})
	case RoleSQLiteCheck:
		return CheckSQLite(ctx, j.Dir)
	case RoleRemove:
		return true, Remove(j.Dir)
	}
	return nil, fmt.Errorf("appfit: role %q: want first, second, %s, %s or %s", j.Role, RoleSQLite, RoleSQLiteCheck, RoleRemove)
}

// Remove deletes a work directory; it refuses any directory not named
// like one.
func Remove(dir string) error {
	if !strings.HasPrefix(filepath.Base(dir), WorkDirPrefix) {
		return fmt.Errorf("appfit: refusing to remove %s: not a probe's work directory (%s...)", dir, WorkDirPrefix)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("appfit: removing %s: %w", dir, err)
	}
	return nil
}

// mkdirShared creates a work directory any client's user can write in.
func mkdirShared(dir string) error {
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("appfit: creating the work directory: %w", err)
	}
	return nil
}
