package appfit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	defer func() { err = errors.Join(err, removeFrom(ctx, o.ID, o.First, o.Second)) }()
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
// output into v. Pod exec can lose a command's output although the command
// succeeded (kubernetes/kubernetes#124571; a CI run saw the SQLite role's
// answer lost so): the answer is then read again, at most three times,
// from the file the job kept beside its work directory (RoleAnswer), or,
// for a job that only removes, by running it again.
func runJSON(ctx context.Context, c Client, v any, args ...string) error {
	var out, errb bytes.Buffer
	if err := c.Cmder.Command(ctx, c.Binary, args...).SetStdout(&out).SetStderr(&errb).Run(); err != nil {
		return fmt.Errorf("appfit: %s on %s: %w", strings.Join(args[:3], " "), c.Where, err)
	}
	err := json.Unmarshal(out.Bytes(), v)
	if err == nil {
		return nil
	}
	if again := answerArgs(args); again != nil {
		for range 3 {
			out.Reset()
			if c.Cmder.Command(ctx, c.Binary, again...).SetStdout(&out).Run() == nil && json.Unmarshal(out.Bytes(), v) == nil {
				return nil
			}
		}
	}
	return fmt.Errorf("appfit: %s on %s printed no answer (%w): %s", strings.Join(args[:3], " "), c.Where, err, strings.TrimSpace(errb.String()))
}

// answerArgs gives the command that prints again the answer of the probe
// command args: the answer role for a job that keeps its answer, the same
// command for one that only reads or removes; nil without a role.
func answerArgs(args []string) []string {
	flag := func(name, def string) string {
		if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return def
	}
	switch role := flag("--role", ""); role {
	case "":
		return nil
	case RoleRemove, RoleAnswer:
		return args
	default:
		return []string{ProbeCommand, "--role", RoleAnswer, "--dir", flag("--dir", ""), "--of", role, "--client", flag("--client", "0")}
	}
}

// removeFrom removes the work directory id, and the answers kept beside
// it, through the first of clients, then through each other client whose
// directory is its own (another node's mount): the first's listing may
// not show an answer file another client just kept (sshfs caches listings
// for 20 s), and the first, which creates the directory, keeps a view of
// it that is up to date.
func removeFrom(ctx context.Context, id string, clients ...Client) error {
	var errs []error
	for i, c := range clients {
		if i > 0 && c.Where == clients[0].Where && c.Dir == clients[0].Dir {
			continue
		}
		errs = append(errs, removeWith(ctx, c, c.workDir(id)))
	}
	return errors.Join(errs...)
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
// RoleAnswer prints again the answer another job kept beside its work
// directory (runJSON).
const (
	RoleRemove      = "remove"
	RoleSQLite      = "sqlite"
	RoleSQLiteCheck = "sqlite-check"
	RoleAnswer      = "answer"
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
	// Of is the job whose answer RoleAnswer prints.
	Of string
}

// Do runs one probe command's job and returns its answer, for the
// command to print as JSON. A job with a work directory also keeps its
// answer beside it (answerFile), for RoleAnswer to print again; Remove
// removes it with the directory.
func Do(ctx context.Context, j Job) (any, error) {
	switch j.Role {
	case RoleAnswer:
		return readAnswer(j)
	case RoleRemove:
		return true, Remove(j.Dir)
	}
	v, err := do(ctx, j)
	if err != nil || !strings.HasPrefix(filepath.Base(j.Dir), WorkDirPrefix) {
		return v, err // only beside a probe's work directory, which Remove finds
	}
	return v, keepAnswer(answerFile(j.Dir, j.Role, j.Client), v)
}

func do(ctx context.Context, j Job) (any, error) {
	switch j.Role {
	case string(First), string(Second):
		return RunClient(ctx, ClientOptions{Dir: j.Dir, Role: Role(j.Role), Timeout: j.Timeout})
	case RoleSQLite:
		return MeasureSQLite(ctx, SQLiteOptions{Dir: j.Dir, Journal: j.Journal, Synchronous: j.Synchronous,
			Duration: j.Duration, MaxCommits: j.MaxCommits, Client: j.Client})
	case RoleSQLiteCheck:
		return CheckSQLite(ctx, j.Dir)
	}
	return nil, fmt.Errorf("appfit: role %q: want first, second, %s, %s, %s or %s", j.Role, RoleSQLite, RoleSQLiteCheck, RoleRemove, RoleAnswer)
}

// answerFile is where a job keeps its answer: beside its work directory
// (not in it, where the other client may be listing), named after it.
func answerFile(dir, role string, client int) string {
	return fmt.Sprintf("%s.answer-%s-%d.json", filepath.Clean(dir), role, client)
}

func keepAnswer(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return fmt.Errorf("appfit: keeping the answer: %w", err)
	}
	return os.Rename(path+".tmp", path)
}

func readAnswer(j Job) (any, error) {
	if !strings.HasPrefix(filepath.Base(j.Dir), WorkDirPrefix) || !slices.Contains([]string{string(First), string(Second), RoleSQLite, RoleSQLiteCheck}, j.Of) {
		return nil, fmt.Errorf("appfit: answer of %q in %s: want a job's answer beside a probe's work directory (%s...)", j.Of, j.Dir, WorkDirPrefix)
	}
	b, err := os.ReadFile(answerFile(j.Dir, j.Of, j.Client))
	if err != nil {
		return nil, fmt.Errorf("appfit: %w", err)
	}
	return json.RawMessage(b), nil
}

// Remove deletes a work directory and the answers kept beside it; it
// refuses any directory not named like one.
func Remove(dir string) error {
	if !strings.HasPrefix(filepath.Base(dir), WorkDirPrefix) {
		return fmt.Errorf("appfit: refusing to remove %s: not a probe's work directory (%s...)", dir, WorkDirPrefix)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("appfit: removing %s: %w", dir, err)
	}
	parent, base := filepath.Split(filepath.Clean(dir))
	entries, err := os.ReadDir(filepath.Clean(parent))
	if errors.Is(err, os.ErrNotExist) {
		return nil // nor any answer beside it
	} else if err != nil {
		return fmt.Errorf("appfit: the answers beside %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base+".answer-") {
			if err := os.Remove(filepath.Join(parent, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("appfit: removing %s: %w", e.Name(), err)
			}
		}
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
