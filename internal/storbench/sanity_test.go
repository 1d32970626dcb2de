package storbench_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/storbench"
)

// The fio-versions sanity rule on a real case: two outputs published by
// fio-plot, one from fio 2.18 on a local SSD and one from fio 3.6 on a Ceph
// RBD volume, imported as two runs and compared. compare must say the
// figures come from different fio versions, naming both and their targets.
func TestFioVersionsSideBySideOnPublishedOutputs(t *testing.T) {
	st := sqliteStore(t)
	ctx := context.Background()
	corpus := filepath.Join("..", "importer", "testdata", "corpus")
	var ids []string
	for _, in := range []struct{ file, target string }{
		{"fioplot-fio218-randread-01.json", "ssd"},
		{"fioplot-fio36-ceph-hdd-goed_randread-1-4.json", "ceph-rbd"},
	} {
		rep, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{filepath.Join(corpus, in.file)}, Target: in.target})
		if err != nil {
			t.Fatalf("import %s: %v", in.file, err)
		}
		if rep.RunID == "" {
			t.Fatalf("import %s stored no run", in.file)
		}
		ids = append(ids, rep.RunID)
	}
	c, err := storbench.Compare(ctx, st, storbench.CompareRequest{RunIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, s := range c.View.Comparison.Sanity {
		if s.Rule == analysis.RuleFioVersions {
			found = append(found, s.Text)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s finding, got %d: %+v", analysis.RuleFioVersions, len(found), c.View.Comparison.Sanity)
	}
	for _, want := range []string{"fio-2.18-59-g618e: ssd", "fio-3.6-31-g4386: ceph-rbd"} {
		if !strings.Contains(found[0], want) {
			t.Errorf("the finding does not name %q: %s", want, found[0])
		}
	}

	// One version alone raises nothing.
	c, err = storbench.Compare(ctx, st, storbench.CompareRequest{RunIDs: ids[:1]})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.View.Comparison.Sanity {
		if s.Rule == analysis.RuleFioVersions {
			t.Errorf("one fio version called out: %s", s.Text)
		}
	}
}
