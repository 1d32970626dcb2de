package result

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// Every label key constant is declared once, with a value no other key
// has: two names for one stored key would split readers from writers.
func TestLabelKeysAreDistinct(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "labels.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "LabelKey" {
				t.Errorf("%s: a label constant must be typed LabelKey", vs.Names[0].Name)
				continue
			}
			v, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			if prev, dup := seen[v]; dup {
				t.Errorf("%s and %s both name the label %q", prev, vs.Names[0].Name, v)
			}
			seen[v] = vs.Names[0].Name
			n++
		}
	}
	if n < 40 {
		t.Fatalf("read only %d label keys from labels.go", n)
	}
}

func TestLabelKeyAccessors(t *testing.T) {
	l := map[string]string{"fs_type": "ext4"}
	if got := LabelFSType.Of(l); got != "ext4" {
		t.Errorf("Of: %q", got)
	}
	if _, ok := LabelDevice.In(l); ok {
		t.Error("In: an absent label reported present")
	}
	LabelDevice.Set(l, "sda1")
	if v, ok := LabelDevice.In(l); !ok || v != "sda1" || l["device"] != "sda1" {
		t.Errorf("Set: %v", l)
	}
}

// ResultLabel and Automatic sort keys into what describes one result, what
// storbench sets by itself, and what the user gave.
func TestLabelClasses(t *testing.T) {
	for _, tc := range []struct {
		key               string
		result, automatic bool
	}{
		{"steady_state", true, false},
		{"cache_risk", true, false},
		{"hostname", false, true},
		{"storbench_version", false, true},
		{"fs_type", false, false},
		{"rack", false, false},
	} {
		if got := ResultLabel(tc.key); got != tc.result {
			t.Errorf("ResultLabel(%q) = %v", tc.key, got)
		}
		if got := Automatic(tc.key); got != tc.automatic {
			t.Errorf("Automatic(%q) = %v", tc.key, got)
		}
	}
}

func TestCheckUserLabel(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"storage", "usb-ssd", ""},
		{"example.com/node", "pi4-1", ""},
		{"my key", "v", "label key \"my key\""},
		{strings.Repeat("k", 64), "v", "63 characters"},
		{"storage", strings.Repeat("v", 64), "more than the 63"},
		{"", "v", "label key"},
	} {
		err := CheckUserLabel(tc.key, tc.value)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckUserLabel(%.20q, %.20q) = %v, want %q", tc.key, tc.value, err, tc.want)
		}
	}
}
