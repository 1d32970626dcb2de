package architecture

import (
	"go/ast"
	"go/token"
	"testing"
)

// engineMayName are the store types the engine may name: it records runs
// and results and reads nothing back, so it holds store.Recorder, not the
// whole database (rule 4).
var engineMayName = map[string]bool{"Recorder": true}

// Rule 4, its second half: the engine holds the narrow recorder interface it uses.
func TestEngineHoldsRecorder(t *testing.T) {
	named := 0
	sources(t, func(pkg string, fset *token.FileSet, file *ast.File) {
		if pkg != "internal/engine" {
			return
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "store" {
				named++
				if !engineMayName[sel.Sel.Name] {
					t.Errorf("rule 4: %s names store.%s: the engine holds store.Recorder only", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	})
	if named == 0 {
		t.Fatal("the engine names no store type: the rule checks nothing")
	}
}
