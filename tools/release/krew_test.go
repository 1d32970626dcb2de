package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/storbench/storbench/tools/internal/toolenv"
)

// krewTools builds krew and validate-krew-manifest from the pinned
// module in tools/krew into a temporary folder.
func krewTools(t *testing.T) (krew, validate string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", // go test puts its own toolchain first on PATH
		"build", "-o", dir+"/",
		"sigs.k8s.io/krew/cmd/krew", "sigs.k8s.io/krew/cmd/validate-krew-manifest")
	cmd.Dir = filepath.Join(toolenv.Repo(t), "tools", "krew")
	if out, err := cmd.CombinedOutput(); err != nil {
		toolenv.Missing(t, "krew", "building krew from tools/krew: "+err.Error()+"\n"+string(out))
	}
	return filepath.Join(dir, "krew"), filepath.Join(dir, "validate-krew-manifest")
}

// The manifest passes krew's own validation (validate-krew-manifest, as
// krew-index runs it) and names every archive with its checksum.
func TestKrewManifest(t *testing.T) {
	res, dir := archives(t)
	data, err := os.ReadFile(res.Krew)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec struct {
			Version   string
			Platforms []struct {
				Selector         struct{ MatchLabels map[string]string }
				URI, SHA256, Bin string
			}
		}
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	want := sums(t, dir)
	if m.Spec.Version != res.Version || len(m.Spec.Platforms) != len(want) {
		t.Errorf("manifest version %s with %d platforms; want %s and %d", m.Spec.Version, len(m.Spec.Platforms), res.Version, len(want))
	}
	for _, p := range m.Spec.Platforms {
		name := filepath.Base(p.URI)
		if want[name] == "" || p.SHA256 != want[name] || p.Bin != "kubectl-storbench" ||
			!strings.HasPrefix(p.URI, "https://github.com/storbench/storbench/releases/download/"+res.Version+"/") ||
			!strings.Contains(name, "-"+p.Selector.MatchLabels["os"]+"-"+p.Selector.MatchLabels["arch"]) {
			t.Errorf("platform %+v: SHA256SUMS has %q for %s", p, want[name], name)
		}
	}

	_, validate := krewTools(t)
	// krew wants the file named after the plugin.
	out, err := exec.Command(validate, "-manifest", res.Krew, "-skip-install").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "structural validation OK") {
		t.Errorf("validate-krew-manifest: %v\n%s", err, out)
	}
}

// krew installs the plugin from the manifest and this machine's archive
// (checking the archive's sha256 against the manifest), and kubectl then
// runs it: `kubectl storbench --version` through krew's bin folder.
func TestKrewInstall(t *testing.T) {
	res, _ := archives(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("installs the amd64 archive")
	}
	kubectl := toolenv.Kubectl(t)
	krew, _ := krewTools(t)
	bin := t.TempDir()
	if err := os.Symlink(krew, filepath.Join(bin, "kubectl-krew")); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	env := []string{"KREW_ROOT=" + root, "HOME=" + t.TempDir(), "PATH=" + filepath.Join(root, "bin") + ":" + bin + ":/usr/bin:/bin",
		"KUBECONFIG=" + filepath.Join(root, "none")}
	install := exec.Command(kubectl, "krew", "install", "--manifest="+res.Krew, "--archive="+res.Archives[0].Path)
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("kubectl krew install: %v\n%s", err, out)
	}
	run := exec.Command(kubectl, "storbench", "--version")
	run.Env = env
	out, err := run.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "storbench "+res.Version+"\n") {
		t.Errorf("kubectl storbench --version after krew install: %v\n%s", err, out)
	}

	// A tampered archive is refused: krew checks the manifest's sha256.
	bad := filepath.Join(t.TempDir(), filepath.Base(res.Archives[0].Path))
	data, err := os.ReadFile(res.Archives[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, append(data, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	env[0] = "KREW_ROOT=" + t.TempDir()
	reinstall := exec.Command(kubectl, "krew", "install", "--manifest="+res.Krew, "--archive="+bad)
	reinstall.Env = env
	if out, err := reinstall.CombinedOutput(); err == nil || !strings.Contains(string(out), "checksum does not match") {
		t.Errorf("krew installed an archive whose sha256 is not the manifest's: %v\n%s", err, out)
	}
}
