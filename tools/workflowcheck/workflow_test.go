package workflowcheck

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

	"github.com/storbench/storbench/tools/internal/toolenv"
)

func workflows(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(toolenv.Repo(t), ".github", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflow in .github/workflows (%v)", err)
	}
	return files
}

func lint(t *testing.T, path string) []*actionlint.Error {
	t.Helper()
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

// Every workflow passes actionlint.
func TestActionlint(t *testing.T) {
	for _, f := range workflows(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			for _, e := range lint(t, f) {
				t.Error(e)
			}
		})
	}
}

// The linter finds what it is there to find: each mistake of
// testdata/broken.yml.
func TestActionlintCatches(t *testing.T) {
	var got []string
	for _, e := range lint(t, filepath.Join("testdata", "broken.yml")) {
		got = append(got, e.Message)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{`"fetch-dept" is not defined`, `"nope"`, `"missing"`} {
		if !strings.Contains(all, want) {
			t.Errorf("actionlint missed %s; it said:\n%s", want, all)
		}
	}
}

type step struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]any    `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

type workflow struct {
	On struct {
		Push struct {
			Tags     []string `yaml:"tags"`
			Branches []string `yaml:"branches"`
		} `yaml:"push"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]struct {
		Steps []step `yaml:"steps"`
	} `yaml:"jobs"`
}

func load(t *testing.T, path string) workflow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return w
}

// Every run: script parses as bash (the runner's shell), with its
// expressions as they would be substituted: plain words.
func TestRunScriptsParse(t *testing.T) {
	bash := toolenv.Need(t, "bash")
	expr := regexp.MustCompile(`\$\{\{[^}]*\}\}`)
	for _, f := range workflows(t) {
		for job, j := range load(t, f).Jobs {
			for i, s := range j.Steps {
				if s.Run == "" {
					continue
				}
				cmd := exec.Command(bash, "-n", "-e", "-o", "pipefail")
				cmd.Stdin = strings.NewReader(expr.ReplaceAllString(s.Run, "x"))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: job %s step %d (%s): bash -n: %v\n%s", filepath.Base(f), job, i, s.Name, err, out)
				}
			}
		}
	}
}

// The release workflow runs on a version tag, refuses a tag
// internal/version/RELEASE does not name, builds everything with
// scripts/release.sh at that version and pushes the images, and attaches
// the archives, their checksums and the krew manifest to the release.
func TestReleaseWorkflow(t *testing.T) {
	w := load(t, filepath.Join(toolenv.Repo(t), ".github", "workflows", "release.yml"))
	if !slices.Equal(w.On.Push.Tags, []string{"v[0-9]+.[0-9]+.[0-9]+"}) || len(w.On.Push.Branches) > 0 {
		t.Errorf("runs on tags %q, branches %q; want version tags only", w.On.Push.Tags, w.On.Push.Branches)
	}
	if w.Permissions["contents"] != "write" || w.Permissions["packages"] != "write" {
		t.Errorf("permissions %v: the release needs contents: write (the GitHub release) and packages: write (ghcr.io)", w.Permissions)
	}
	var runs []string
	var logins []step
	for _, j := range w.Jobs {
		for _, s := range j.Steps {
			runs = append(runs, s.Run)
			if strings.HasPrefix(s.Uses, "docker/login-action@") {
				logins = append(logins, s)
			}
		}
	}
	order := func(what string, match func(string) bool) int {
		i := slices.IndexFunc(runs, match)
		if i < 0 {
			t.Errorf("no step %s", what)
		}
		return i
	}
	check := order("compares the tag with internal/version/RELEASE", func(r string) bool {
		return strings.Contains(r, "internal/version/RELEASE") && strings.Contains(r, "$GITHUB_REF_NAME") && strings.Contains(r, "exit 1")
	})
	build := order("runs scripts/release.sh at the tag's version and pushes", func(r string) bool {
		return strings.Contains(r, "scripts/release.sh") && strings.Contains(r, `-version "$GITHUB_REF_NAME"`) && strings.Contains(r, " -push")
	})
	publish := order("publishes the release with archives, SHA256SUMS and the krew manifest", func(r string) bool {
		return strings.Contains(r, "gh release create") && strings.Contains(r, "dist/SHA256SUMS") &&
			strings.Contains(r, "dist/plugins/storbench.yaml") && strings.Contains(r, "-linux-*.tar.gz")
	})
	if !(check < build && build < publish) {
		t.Errorf("steps in order check %d, build %d, publish %d: want the check first and the release last", check, build, publish)
	}
	if len(logins) != 1 || logins[0].With["registry"] != "ghcr.io" || !strings.HasPrefix(w.Env["REGISTRY"], "ghcr.io/") {
		t.Errorf("want one login to ghcr.io and REGISTRY under it, got %+v, REGISTRY %q", logins, w.Env["REGISTRY"])
	}
}
