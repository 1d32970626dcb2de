package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/storbench/storbench/tools/internal/toolenv"
)

var shared toolenv.Once[*Result]

// archives builds the release archives once for the package's tests.
func archives(t *testing.T) (*Result, string) {
	t.Helper()
	toolenv.Need(t, "git")
	return shared.Get(t, func(dir string) (*Result, error) {
		return Build(Options{Repo: toolenv.Repo(t), Out: dir, Archives: true})
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Remove()
	os.Exit(code)
}

// readArchive returns the files of a .tar.gz, checking the properties
// that make it reproducible and krew-installable.
func readArchive(t *testing.T, path string, mtime int64) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("%s: gzip header names %q, time %v", path, zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	var last string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.ModTime.Unix() != mtime {
			t.Errorf("%s: entry %s: type %c, owner %d:%d (%q:%q), time %v", path, h.Name, h.Typeflag, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		if h.Name <= last {
			t.Errorf("%s: %s after %s: entries not sorted", path, h.Name, last)
		}
		last = h.Name
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = b
	}
	return files
}

// Two builds of the same commit give the same archives: every platform's
// under STORBENCH_RELEASE_PROOF=1, linux/amd64's by default (the first
// build makes all three for the other tests).
func TestArchivesReproducible(t *testing.T) {
	first, firstDir := archives(t)
	dir := t.TempDir()
	again := toolenv.ProofPlatforms()
	second, err := Build(Options{Repo: toolenv.Repo(t), Out: dir, Archives: true, Platforms: again})
	if err != nil {
		t.Fatal(err)
	}
	want := len(Platforms)
	if again != nil {
		want = len(again)
	}
	if len(first.Archives) != len(Platforms) || len(second.Archives) != want {
		t.Fatalf("archives: %d and %d, want %d and %d", len(first.Archives), len(second.Archives), len(Platforms), want)
	}
	byName := map[string]Archive{}
	for _, a := range first.Archives {
		byName[filepath.Base(a.Path)] = a
	}
	for _, b := range second.Archives {
		a, ok := byName[filepath.Base(b.Path)]
		if !ok || a.SHA256 != b.SHA256 {
			t.Errorf("%s sha256 %s, then %s", filepath.Base(b.Path), a.SHA256, b.SHA256)
		}
	}
	s1, s2 := sums(t, firstDir), sums(t, dir)
	if len(s2) != want {
		t.Errorf("second SHA256SUMS names %d archives, want %d: %v", len(s2), want, s2)
	}
	for name, sum := range s2 {
		if s1[name] != sum {
			t.Errorf("SHA256SUMS: %s %s, then %s", name, s1[name], sum)
		}
	}
}

// SHA256SUMS checks out with sha256sum, and every archive holds storbench,
// kubectl-storbench (the same bytes) and the README, for its platform.
func TestArchivesContents(t *testing.T) {
	res, dir := archives(t)
	toolenv.Need(t, "sha256sum")
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = dir
	if out, err := check.CombinedOutput(); err != nil || strings.Count(string(out), ": OK") != len(Platforms) {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
	}
	wantELF := map[string]struct {
		machine elf.Machine
		class   elf.Class
		goarm   string
	}{
		"linux-amd64": {elf.EM_X86_64, elf.ELFCLASS64, ""},
		"linux-arm64": {elf.EM_AARCH64, elf.ELFCLASS64, ""},
		"linux-armv7": {elf.EM_ARM, elf.ELFCLASS32, "7"},
	}
	for _, a := range res.Archives {
		want, ok := wantELF[a.Platform.Name()]
		if !ok {
			t.Errorf("unexpected platform %s", a.Platform.Name())
			continue
		}
		if got := filepath.Base(a.Path); got != "storbench-"+res.Version+"-"+a.Platform.Name()+".tar.gz" {
			t.Errorf("archive named %s", got)
		}
		files := readArchive(t, a.Path, res.CommitDate.Unix())
		if len(files) != 3 || files["storbench"] == nil || !bytes.Equal(files["storbench"], files["kubectl-storbench"]) || files["README.md"] == nil {
			t.Errorf("%s holds %d files; want storbench, kubectl-storbench (the same binary) and README.md", a.Path, len(files))
			continue
		}
		bin := filepath.Join(t.TempDir(), "storbench")
		if err := os.WriteFile(bin, files["storbench"], 0o755); err != nil {
			t.Fatal(err)
		}
		ef, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		if ef.Machine != want.machine || ef.Class != want.class || ef.Type != elf.ET_EXEC {
			t.Errorf("%s: ELF %v %v %v, want %v %v executable", a.Platform.Name(), ef.Machine, ef.Class, ef.Type, want.machine, want.class)
		}
		if interp := ef.Section(".interp"); interp != nil {
			t.Errorf("%s: dynamically linked (has .interp)", a.Platform.Name())
		}
		ef.Close()
		bi, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" || settings["GOARM"] != want.goarm || settings["vcs.revision"] != "" {
			t.Errorf("%s: build settings %v", a.Platform.Name(), settings)
		}
	}
}

// The archive for this machine unpacks to a binary that runs and says the
// release's version, commit and date.
func TestArchiveBinaryRuns(t *testing.T) {
	res, _ := archives(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the test machine's archive is checked on amd64")
	}
	dir := t.TempDir()
	files := readArchive(t, res.Archives[0].Path, res.CommitDate.Unix())
	bin := filepath.Join(dir, "storbench")
	if err := os.WriteFile(bin, files["storbench"], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "storbench " + res.Version + "\ncommit: " + res.Commit + "\ncommit date: " + res.CommitDate.Format("2006-01-02T15:04:05Z07:00") + "\ngo: " + runtime.Version() + " linux/amd64\n"
	if string(out) != want {
		t.Errorf("storbench --version:\n%s\nwant\n%s", out, want)
	}
}

// kubectl finds kubectl-storbench on PATH as a plugin: `kubectl storbench
// --version` runs it, and its help speaks of `kubectl storbench`.
func TestKubectlPlugin(t *testing.T) {
	res, _ := archives(t)
	kubectl := toolenv.Kubectl(t)
	dir := t.TempDir()
	files := readArchive(t, res.Archives[0].Path, res.CommitDate.Unix())
	if err := os.WriteFile(filepath.Join(dir, "kubectl-storbench"), files["kubectl-storbench"], 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + dir, "HOME=" + t.TempDir(), "KUBECONFIG=" + filepath.Join(dir, "none")}
	run := func(args ...string) string {
		cmd := exec.Command(kubectl, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("storbench", "--version"); !strings.HasPrefix(out, "storbench "+res.Version+"\ncommit: "+res.Commit+"\n") {
		t.Errorf("kubectl storbench --version:\n%s", out)
	}
	if out := run("storbench", "--help"); !strings.Contains(out, "Usage:\n  kubectl storbench [command]") {
		t.Errorf("kubectl storbench --help:\n%s", out)
	}
	if out := run("plugin", "list"); !strings.Contains(out, filepath.Join(dir, "kubectl-storbench")) {
		t.Errorf("kubectl plugin list:\n%s", out)
	}
}

// sums reads SHA256SUMS.
func sums(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		out[name] = sum
	}
	return out
}
