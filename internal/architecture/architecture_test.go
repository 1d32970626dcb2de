package architecture

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testenv"
)

const module = "github.com/storbench/storbench"

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

func loadPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = root(t)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 30 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rel(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }

var cmdPkg = regexp.MustCompile(`^internal/cli/[a-z]+cmd$`)

// below reports whether a package is part of the library or under it: not
// a caller of it (commands, app, main) and not a bench program.
func below(p string) bool {
	return strings.HasPrefix(p, "internal/") && !strings.HasPrefix(p, "internal/cli") && p != "internal/app"
}

// renderMayImport are the packages of this module internal/render may
// import: the data it formats and the units it formats it in. Each
// exception says why.
var renderMayImport = map[string]string{
	"internal/result":   "",
	"internal/analysis": "",
	"internal/units":    "",
	"internal/trend": "its Assessment, Point and Verdict are plain data (trend imports only the standard " +
		"library), formatted as trend defines them; a copy in analysis would be a second model of one judgement",
}

func TestImportRules(t *testing.T) {
	for _, p := range loadPackages(t) {
		name := rel(p.ImportPath)
		for _, imp := range p.Imports {
			in := rel(imp)
			switch {
			case cmdPkg.MatchString(name) && cmdPkg.MatchString(in):
				t.Errorf("rule 1: %s imports %s: commands share only internal/cli", name, in)
			case imp == "text/tabwriter" && name != "internal/render":
				t.Errorf("rule 2: %s imports text/tabwriter: tables are built in internal/render", name)
			case below(name) && (imp == "github.com/spf13/cobra" || in == "internal/cli" || strings.HasPrefix(in, "internal/cli/") || in == "internal/app"):
				t.Errorf("rule 3: %s imports %s: the library knows nothing of the command line", name, imp)
			case name == "internal/render" && (in == "internal/store" || in == "internal/engine"):
				t.Errorf("rule 8: internal/render imports %s: it formats what it is given", in)
			case name == "internal/render" && strings.HasPrefix(imp, module+"/") && !hasKey(renderMayImport, in):
				t.Errorf("rule 9: internal/render imports %s: it may import only result, analysis and units (and the exceptions listed), the types it formats; compute in the library or analysis", in)
			case name == "internal/storbench" && in == "internal/render":
				t.Errorf("rule 10: internal/storbench imports internal/render: the library answers in result and analysis types, and callers render them")
			case name == "internal/classcheck" && in == "internal/runner/kube":
				t.Errorf("rule 11: internal/classcheck imports internal/runner/kube: class checks reach the cluster through internal/kubekit, not through the Kubernetes target kind")
			case isKubekit(name) && kubekitMayNotImport[in]:
				t.Errorf("rule 12: %s imports %s: the Kubernetes toolkit is beneath the features that use it", name, in)
			}
		}
	}
}

// kubekitMayNotImport are the packages that build on the Kubernetes
// toolkit, which it therefore may not import (rule 12).
var kubekitMayNotImport = map[string]bool{
	"internal/runner/kube": true,
	"internal/engine":      true,
	"internal/storbench":   true,
	"internal/classcheck":  true,
}

func isKubekit(p string) bool {
	return p == "internal/kubekit" || strings.HasPrefix(p, "internal/kubekit/")
}

func hasKey[V any](m map[string]V, k string) bool { _, ok := m[k]; return ok }

// Every package is on the page's map, and every package on the map exists.
func TestPackageMapIsTrue(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| `((?:internal|cmd|test)/[a-z0-9/]+)` \\|")
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		listed[m[1]] = true
	}
	exists := map[string]bool{}
	for _, p := range loadPackages(t) {
		name := rel(p.ImportPath)
		if strings.HasPrefix(name, "bench/") {
			continue
		}
		exists[name] = true
		if !listed[name] {
			t.Errorf("%s is not on the package map of docs/architecture.md", name)
		}
	}
	for name := range listed {
		if !exists[name] {
			t.Errorf("docs/architecture.md lists %s, which does not exist", name)
		}
	}
}

// sources calls f with every non-test Go file of the module's packages.
func sources(t *testing.T, f func(pkg string, fset *token.FileSet, file *ast.File)) {
	t.Helper()
	for _, p := range loadPackages(t) {
		for _, name := range p.GoFiles {
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			f(rel(p.ImportPath), fset, file)
		}
	}
}

// labelKeys reads the label key values declared in internal/result.
func labelKeys(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), "internal", "result", "labels.go"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, m := range regexp.MustCompile(`LabelKey = "([a-z0-9_]+)"`).FindAllStringSubmatch(string(data), -1) {
		keys[m[1]] = true
	}
	if len(keys) < 40 {
		t.Fatalf("read only %d label keys", len(keys))
	}
	return keys
}

var labelMap = regexp.MustCompile(`(?i)^(labels?|l|lbl|run\.labels|r\.labels|p\.labels|e\.labels|f\.labels|res\.labels)$`)

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	}
	return ""
}

func TestSourceRules(t *testing.T) {
	keys := labelKeys(t)
	sources(t, func(pkg string, fset *token.FileSet, file *ast.File) {
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "store" && x.Sel.Name == "SQLite" && pkg != "internal/store" {
					t.Errorf("rule 4: %s names store.SQLite: hold a store interface", fset.Position(x.Pos()))
				}
			case *ast.TypeAssertExpr:
				if sel, ok := x.Type.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "execx" && sel.Sel.Name != "FileWriter" {
						t.Errorf("rule 5: %s asserts a Cmder's type (execx.%s)", fset.Position(x.Pos()), sel.Sel.Name)
					}
				}
			case *ast.CaseClause:
				for _, e := range x.List {
					if sel, ok := e.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "execx" && sel.Sel.Name == "Local" {
							t.Errorf("rule 5: %s switches on a Cmder's type", fset.Position(e.Pos()))
						}
					}
				}
			case *ast.IndexExpr:
				if pkg == "internal/result" {
					break
				}
				lit, ok := x.Index.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					break
				}
				v, _ := strconv.Unquote(lit.Value)
				if keys[v] && labelMap.MatchString(exprString(x.X)) {
					t.Errorf("rule 6: %s writes the label key %q as a string: use result.LabelKey", fset.Position(x.Pos()), v)
				}
			}
			return true
		})
	})
}

// commandMayImport are the packages of this module a command package
// (internal/cli/*cmd) may import: the library, what it answers in and the
// types its requests hold, and how answers are shown. A command reaches
// the machinery (runners, fio, safety, suites, execx) only through the
// library, so it holds flags and wiring, not logic, however many flags it
// has. Each entry says why.
var commandMayImport = map[string]string{
	"internal/cli":       "the flags, dependencies and exit codes commands share",
	"internal/storbench": "the library: one call per command",
	"internal/render":    "how the library's answer is shown",
	"internal/result":    "the plain data the library answers in",
	"internal/analysis":  "the plain data the library answers in (reports, verdicts)",
	"internal/trend":     "the plain data trend assessments are",
	"internal/units":     "the sizes and durations flags are written in",
	"internal/store":     "the store role interfaces a command opens and hands the library",
	"internal/engine":    "engine.Observer and engine.Step: the run's progress callbacks the library's Run takes",
	"internal/importer":  "the import formats a request names (ImportRequest.Format)",
	"internal/kubekit": "the cluster connection options and defaults the Kubernetes requests hold " +
		"(KubeCleanupRequest.Cluster, the default fio image and timeout)",
	"internal/web": "serve runs the dashboard",
}

// Rule 7: a command package imports, of this module, only what
// commandMayImport lists.
func TestCommandImports(t *testing.T) {
	for _, p := range loadPackages(t) {
		name := rel(p.ImportPath)
		if !cmdPkg.MatchString(name) {
			continue
		}
		for _, imp := range p.Imports {
			in := rel(imp)
			if strings.HasPrefix(imp, module+"/") && !cmdPkg.MatchString(in) && !hasKey(commandMayImport, in) {
				t.Errorf("rule 7: %s imports %s: a command reaches it through the library (internal/storbench)", name, in)
			}
		}
	}
}

// No program binary is tracked: `go build ./bench/x` at the top writes one
// beside go.mod, and one committed by mistake weighs tens of megabytes in
// every clone for good.
func TestNoBinariesTracked(t *testing.T) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(root(t), ".git")); statErr != nil {
			testenv.Missing(t, "git-checkout", "not a git checkout: nothing is tracked")
		}
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files listed only %d files", len(files))
	}
	for _, name := range files {
		f, err := os.Open(filepath.Join(root(t), name))
		if err != nil {
			continue // deleted in the work tree
		}
		head := make([]byte, 4)
		n, _ := io.ReadFull(f, head)
		f.Close()
		if n == 4 && string(head) == "\x7fELF" {
			t.Errorf("%s is a compiled program: remove it from git (git rm --cached %s)", name, name)
		}
	}
}
