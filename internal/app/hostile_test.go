package app

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testenv"
)

// hostileDir holds fio jobs and suites that try to reach data storbench did
// not create. Files carry placeholders the test fills in: @DEV@ (a loop
// device carrying ext4), @DEVNAME@ (its name under /dev), @DEVREL@ (a
// relative path climbing to it), @UP@ (a relative path climbing to /). The first line says what the refusal must
// mention ("want=...") and whether the device is the target ("target=dev").
const hostileDir = "../safety/testdata/hostile"

type hostileCase struct {
	name, path string
	suite      bool
	onDevice   bool
	want       string
}

// TestHostileCorpusIsRefused runs every hostile job and suite through the
// real CLI against a real loop device carrying ext4, without and with
// --destructive naming it: each must be refused, with the reason it names,
// and the device must be unchanged, with nothing left in the target.
func TestHostileCorpusIsRefused(t *testing.T) {
	testenv.Root(t)
	testenv.Fio(t)
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs")
	// Every hostile job asks for 1m at most, and the device is summed
	// twice per case: 16 MiB keeps room for ext4 and the sums short.
	dev := testenv.LoopDevice(t, 16<<20)
	sh(t, "mkfs.ext4", "-q", dev)
	up := strings.Repeat("../", 12)
	subst := strings.NewReplacer("@DEV@", dev, "@DEVNAME@", filepath.Base(dev), "@DEVREL@", up+strings.TrimPrefix(dev, "/"), "@UP@", up)
	corpus := copyCorpus(t, subst)
	t.Setenv("HOSTILE_DEV", dev)
	t.Setenv("HOSTILE_KEY", "filename")
	cases := hostileCases(t, corpus, subst)
	if len(cases) < 40 {
		t.Fatalf("hostile corpus holds %d cases, want at least 40", len(cases))
	}
	before := sha(t, dev)
	outside := []string{"/tmp/storbench-hostile-iolog", "/tmp/storbench-hostile-bw_bw.1.log", "/tmp/storbench-hostile-created",
		"/tmp/storbench-hostile-dir", "/tmp/storbench-hostile-mem", "/tmp/storbench-hostile-pwn", "/tmp/storbench-hostile-suite-iolog"}
	db := filepath.Join(t.TempDir(), "r.db")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, destructive := range []bool{false, true} {
				target := t.TempDir()
				if c.onDevice {
					target = dev
				}
				args := []string{"run", "--target", target, "--telemetry=false"}
				if c.suite {
					args = append(args, "--suite", c.path)
				} else {
					args = append(args, "--fio-job", c.path)
				}
				if destructive {
					args = append(args, "--destructive", dev)
				}
				inv := storbench(t, db, args...)
				if inv.code == 0 {
					t.Fatalf("%v was not refused:\n%s\n%s", args, inv.stdout, inv.stderr)
				}
				if !strings.Contains(inv.stderr, c.want) {
					t.Errorf("%v refused without naming %q:\n%s", args, c.want, inv.stderr)
				}
				if got := sha(t, dev); got != before {
					t.Fatalf("%v changed the device", args)
				}
				if !c.onDevice {
					if left := entries(t, target); len(left) > 0 {
						t.Errorf("%v left %v in the target", args, left)
					}
				}
				for _, p := range outside {
					if _, err := os.Lstat(p); err == nil {
						os.Remove(p)
						t.Errorf("%v created %s", args, p)
					}
				}
			}
		})
	}
	// The same device and harness do run what is safe: reading the device
	// is allowed, so the refusals above are the rules at work, not a
	// harness that fails everything.
	t.Run("control-read-device", func(t *testing.T) {
		job := filepath.Join(corpus, "control.fio")
		if err := os.WriteFile(job, []byte("[j]\nfilename="+dev+"\nrw=randread\nsize=1m\nruntime=1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		target := t.TempDir()
		inv := storbench(t, db, "run", "--fio-job", job, "--target", target, "--telemetry=false")
		if inv.code != 0 {
			t.Fatalf("reading the device was refused (exit %d):\n%s", inv.code, inv.stderr)
		}
		if got := sha(t, dev); got != before {
			t.Fatal("reading changed the device")
		}
		if left := entries(t, target); len(left) > 0 {
			t.Errorf("left %v in the target", left)
		}
	})
}

// copyCorpus copies the hostile corpus into a temporary directory with the
// placeholders filled in.
func copyCorpus(t *testing.T, subst *strings.Replacer) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(hostileDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(hostileDir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), []byte(subst.Replace(string(data))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func hostileCases(t *testing.T, dir string, subst *strings.Replacer) []hostileCase {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cases []hostileCase
	for _, e := range ents {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".fio" && ext != ".yaml") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		_, hdr, ok := strings.Cut(first, "hostile:")
		if !ok {
			t.Fatalf("%s: first line lacks \"hostile: ... want=...\"", e.Name())
		}
		hdr, want, ok := strings.Cut(hdr, "want=")
		if !ok || strings.TrimSpace(want) == "" {
			t.Fatalf("%s: header names no want=", e.Name())
		}
		cases = append(cases, hostileCase{
			name: strings.TrimSuffix(e.Name(), ext), path: p, suite: ext == ".yaml",
			onDevice: strings.Contains(hdr, "target=dev"), want: subst.Replace(strings.TrimSpace(want)),
		})
	}
	return cases
}

func sha(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
