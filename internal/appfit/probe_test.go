package appfit

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/testenv"
)

func probe(t *testing.T, a, b Client) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Probe(ctx, ProbeOptions{First: a, Second: b, ID: "t" + strconv.Itoa(os.Getpid()), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, an := range rep.Answers {
		t.Logf("%s: %s: %s %q", an.Name, an.Outcome, an.Seen, an.Evidence)
	}
	for _, c := range []Client{a, b} {
		leftovers(t, c.Dir)
	}
	return rep
}

// leftovers fails the test when the probe left anything in dir.
func leftovers(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), WorkDirPrefix) {
			t.Errorf("left behind: %s", filepath.Join(dir, e.Name()))
		}
	}
}

func want(t *testing.T, rep *Report, name string, o Outcome, seen string) {
	t.Helper()
	a := rep.Answer(name)
	switch {
	case a == nil:
		t.Errorf("%s: no answer", name)
	case a.Outcome != o:
		t.Errorf("%s: %s (%s), want %s", name, a.Outcome, a.Seen, o)
	case !strings.Contains(a.Seen, seen):
		t.Errorf("%s: seen %q, want it to say %q", name, a.Seen, seen)
	}
}

// On a disk filesystem every semantic works, and fsync's write is counted
// on the loop device under it.
func TestProbeExt4(t *testing.T) {
	if testing.Short() {
		t.Skip("loop device, mounts and two storbench processes")
	}
	dir := ext4(t)
	rep := probe(t, localClient(t, dir), localClient(t, dir))
	for _, n := range Semantics {
		want(t, rep, n, Works, "")
	}
	if f := rep.Answer(FsyncReadBack); f != nil && !strings.Contains(strings.Join(f.Evidence, " "), "disk loop") {
		t.Errorf("fsync's evidence does not name the loop device: %q", f.Evidence)
	}
}

// An overlay mounted volatile drops fsync: the disk under it wrote nothing
// while fsync returned.
func TestProbeDroppedFsync(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("loop device, mounts and two storbench processes")
	}
	dir := mountVolatileOverlay(t, ext4(t))
	rep := probe(t, localClient(t, dir), localClient(t, dir))
	want(t, rep, FsyncReadBack, Broken, "fsync returned after")
	want(t, rep, FcntlLock, Works, "")
}

// Two sshfs mounts of one export, as the netfs class is mounted on each
// node: each FUSE mount keeps its own locks, so neither client sees the
// other's.
func TestProbeTwoMounts(t *testing.T) {
	if testing.Short() {
		t.Skip("sshfs mounts and two storbench processes")
	}
	export := t.TempDir()
	a, b := sshfsPair(t, export)
	rep := probe(t, localClient(t, a), localClient(t, b))
	want(t, rep, FcntlLock, Broken, "both clients held the same write lock")
	want(t, rep, Flock, Broken, "both clients held the same write lock")
	want(t, rep, FsyncReadBack, Works, "cannot be counted")
	// and through one mount the kernel sees both clients' locks
	one := probe(t, localClient(t, a), localClient(t, a))
	want(t, one, FcntlLock, Works, "refused to the second client")
	// each client's answer, kept beside the work directory, is gone with it
	leftovers(t, export)
}

// The work directory is removed when a client fails and when the probe
// is cancelled.
func TestProbeCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("two storbench processes")
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir")
	_, err := Probe(context.Background(), ProbeOptions{First: localClient(t, dir), Second: localClient(t, missing), ID: "fail", Timeout: 2 * time.Second})
	if err == nil {
		t.Error("a second client that never saw the work directory gave no error")
	}
	leftovers(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err = Probe(ctx, ProbeOptions{First: localClient(t, dir), Second: localClient(t, missing), ID: "cancel", Timeout: time.Minute})
	if err == nil {
		t.Error("a cancelled probe gave no error")
	}
	leftovers(t, dir)
}

// Where no disk can be counted (the upper directory on tmpfs here, out of
// a container's sight on a cluster), a volatile overlay is known by its
// mount options.
func TestProbeVolatileOverlayWithoutDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts and two storbench processes")
	}
	dir := mountVolatileOverlay(t, tmpfs(t))
	rep := probe(t, localClient(t, dir), localClient(t, dir))
	want(t, rep, FsyncReadBack, Broken, "overlay mounted volatile")
}

// losesOutput stands for pod exec losing what a command printed although
// the command succeeded: the first run of each probe command (but the
// answer role's) prints into nothing.
type losesOutput struct {
	execx.Cmder
	mu   sync.Mutex
	seen map[string]bool
	lost int
	all  bool // the answer role's output too, every time
}

func (l *losesOutput) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	cmd := l.Cmder.Command(ctx, name, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	key := strings.Join(args, " ")
	if l.all || (!strings.Contains(key, "--role "+RoleAnswer) && !l.seen[key]) {
		if l.seen == nil {
			l.seen = map[string]bool{}
		}
		l.seen[key] = true
		l.lost++
		return lostStdout{cmd}
	}
	return cmd
}

type lostStdout struct{ execx.Cmd }

func (c lostStdout) SetStdout(io.Writer) execx.Cmd { c.Cmd.SetStdout(io.Discard); return c }

// With each probe command's output lost once, the probe and a SQLite
// measurement still get every answer (read again from the file each job
// kept beside its work directory; a removal run again), and nothing is
// left; with every answer lost, the error says so.
func TestLostAnswerReadAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("storbench processes")
	}
	dir := t.TempDir()
	lossy := func(l *losesOutput) Client {
		c := localClient(t, dir)
		l.Cmder = c.Cmder
		c.Cmder = l
		return c
	}
	var a, b losesOutput
	rep := probe(t, lossy(&a), lossy(&b))
	if len(rep.Answers) != len(Semantics) || a.lost < 2 || b.lost < 1 {
		t.Errorf("%d answers (want %d), outputs lost %d and %d", len(rep.Answers), len(Semantics), a.lost, b.lost)
	}
	leftovers(t, dir)

	var s losesOutput
	ms, err := BenchSQLite(context.Background(), SQLiteBenchOptions{Clients: []Client{lossy(&s)}, ID: "lost", Modes: Modes[:1], Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || len(ms[0].Clients) != 1 || ms[0].Clients[0].Commits == 0 || ms[0].Check == nil || s.lost < 4 {
		t.Errorf("SQLite with its outputs lost (%d): %+v", s.lost, ms)
	}
	leftovers(t, dir)
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("left in %s: %v", dir, left)
	}

	all := losesOutput{all: true}
	_, err = BenchSQLite(context.Background(), SQLiteBenchOptions{Clients: []Client{lossy(&all)}, ID: "all", Modes: Modes[:1], Duration: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "printed no answer") {
		t.Errorf("every output lost: %v, want printed no answer", err)
	}
}

// The answer role prints only a job's answer kept beside a probe's work
// directory, and says what it wants otherwise; Remove takes the kept
// answers with the directory and leaves the rest of its parent.
func TestAnswerKeptBesideTheWorkDirectory(t *testing.T) {
	parent := t.TempDir()
	work := filepath.Join(parent, WorkDirPrefix+"k")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := keepAnswer(answerFile(work, RoleSQLiteCheck, 0), map[string]int{"rows": 3}); err != nil {
		t.Fatal(err)
	}
	got, err := Do(context.Background(), Job{Role: RoleAnswer, Dir: work, Of: RoleSQLiteCheck})
	if raw, ok := got.(json.RawMessage); err != nil || !ok || string(raw) != `{"rows":3}` {
		t.Errorf("answer: %v %v", got, err)
	}
	for _, j := range []Job{
		{Role: RoleAnswer, Dir: filepath.Join(parent, "other"), Of: RoleSQLite},
		{Role: RoleAnswer, Dir: work, Of: RoleRemove},
		{Role: RoleAnswer, Dir: work, Of: RoleSQLite, Client: 1}, // never kept
	} {
		if _, err := Do(context.Background(), j); err == nil {
			t.Errorf("%+v: no error", j)
		}
	}
	theirs := filepath.Join(parent, "theirs.answer-sqlite-0.json")
	if err := os.WriteFile(theirs, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Remove(work); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(parent); len(left) != 1 || left[0].Name() != filepath.Base(theirs) {
		t.Errorf("after Remove: %v, want only %s", left, filepath.Base(theirs))
	}
}
