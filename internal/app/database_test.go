package app

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/testenv"
)

// A run refused before it starts creates nothing: no database, no folder
// for it, nothing on the target.
func TestRefusedRunCreatesNothing(t *testing.T) {
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "not", "yet", "r.db")
	target := t.TempDir()
	file := writeFile(t, dir, "plain-file", "x")
	bad := writeFile(t, dir, "bad.yaml", "name: bad\nworkloads:\n  - {name: a, rw: read, bs: 4KiB, qd: 4}\n")
	cases := map[string][]string{
		"missing target":   {"run", "--suite", "quick", "--target", filepath.Join(dir, "no-such-dir")},
		"target is a file": {"run", "--suite", "quick", "--target", file},
		"bad suite":        {"run", "--suite", bad, "--target", target},
		"unknown suite":    {"run", "--suite", "nonesuch", "--target", target},
		"missing fio job":  {"run", "--fio-job", filepath.Join(dir, "none.fio"), "--target", target},
	}
	if os.Geteuid() == 0 {
		dev := testenv.LoopDevice(t, 64<<20)
		if out, err := exec.Command("mkfs.ext4", "-q", dev).CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4: %v %s", err, out)
		}
		cases["device with a filesystem"] = []string{"run", "--suite", "quick", "--target", dev}
		cases["device with a filesystem, --destructive"] = []string{"run", "--suite", "quick", "--target", dev, "--destructive", dev}
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			inv := storbench(t, db, args...)
			if inv.code != cli.ExitUsage {
				t.Errorf("exit %d, want 2: %s", inv.code, inv.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "not")); err == nil {
				t.Errorf("the refused run created the database's folder")
			}
			assertEmptyDir(t, target)
		})
	}
}

// quickDB makes a database holding one real run of two one-second
// workloads and returns its path and the run's ID.
func quickDB(t *testing.T, dir string) (db, id string) {
	t.Helper()
	db = filepath.Join(dir, "results.db")
	suite := writeFile(t, t.TempDir(), "tiny.yaml", `name: tiny
defaults: {size: 16MiB, runtime: 1s}
workloads:
  - {name: rand-read-4k-qd32, rw: randread, bs: 4KiB, iodepth: 32}
  - {name: seq-read, rw: read, bs: 1MiB, iodepth: 8}
`)
	if inv := storbench(t, db, "run", "--suite", suite, "--target", t.TempDir(), "--label", "storage=ssd"); inv.code != 0 {
		t.Fatalf("run: %d %s", inv.code, inv.stderr)
	}
	runs := runsJSON(t, db)
	return db, runs[0].ID
}

// assertReadOnlyServes runs every read command on a database storbench may
// not write, and the write commands, which must say "read-only: PATH";
// nothing in the database's folder changes.
func assertReadOnlyServes(t *testing.T, db, id string) {
	t.Helper()
	before := folder(t, filepath.Dir(db))
	out := t.TempDir()
	for _, args := range [][]string{
		{"runs"},
		{"runs", "--output", "json"},
		{"runs", "--status", "abandoned"},
		{"show", id},
		{"show", id, "--output", "json"},
		{"compare", id},
		{"report", id, "-o", filepath.Join(out, "r.md")},
		{"report", id, "-o", filepath.Join(out, "r.html")},
		{"qualify", "--for", "general", id},
		{"health"},
		{"cleanup", "--dry-run"},
		{"cleanup"},
	} {
		inv := storbench(t, db, args...)
		if inv.code != 0 && inv.code != cli.ExitWarn && inv.code != cli.ExitVerdictFail {
			t.Errorf("%v on a read-only database: exit %d: %s", args, inv.code, inv.stderr)
		}
		if strings.Contains(inv.stderr, "read-only") || strings.Contains(inv.stderr, "readonly") {
			t.Errorf("%v: %s", args, inv.stderr)
		}
	}
	target := t.TempDir()
	imp := writeFile(t, t.TempDir(), "dd.log", "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.5 s, 429 MB/s\n")
	for _, args := range [][]string{
		{"run", "--suite", "quick", "--target", target},
		{"import", imp},
	} {
		inv := storbench(t, db, args...)
		if inv.code == 0 || !strings.Contains(inv.stderr, "read-only: "+db) {
			t.Errorf("%v on a read-only database: exit %d: %s", args, inv.code, inv.stderr)
		}
	}
	assertEmptyDir(t, target)
	after := folder(t, filepath.Dir(db))
	for name, b := range after {
		if !bytes.Equal(before[name], b) {
			t.Errorf("%s changed or appeared", name)
		}
	}
	if len(after) != len(before) {
		t.Errorf("files before %d, after %d", len(before), len(after))
	}
}

func folder(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func TestReadOnlyDatabaseFileMode(t *testing.T) {
	needFio(t)
	db, id := quickDB(t, t.TempDir())
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	assertReadOnlyServes(t, db, id)
}

func TestReadOnlyDatabaseMount(t *testing.T) {
	needFio(t)
	testenv.Root(t)
	src := t.TempDir()
	_, id := quickDB(t, src)
	mnt := t.TempDir()
	for _, args := range [][]string{{"--bind", src, mnt}, {"-o", "remount,bind,ro", mnt}} {
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			t.Fatalf("mount %v: %v: %s", args, err, out)
		}
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	assertReadOnlyServes(t, filepath.Join(mnt, "results.db"), id)
}
