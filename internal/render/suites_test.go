package render

import (
	"bytes"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/spec"
)

func TestSuitesText(t *testing.T) {
	var suites []analysis.SuiteDocument
	for _, name := range spec.BuiltinNames {
		s, err := spec.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		suites = append(suites, analysis.NewSuiteDocument(s))
	}
	var out bytes.Buffer
	if err := Formatted(&out, "table", suites, SuitesText); err != nil {
		t.Fatal(err)
	}
	golden(t, "suites.txt", out.Bytes())

	for _, name := range []string{"quick", "etcd"} {
		s, err := spec.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		job := fio.FromSuite(s, fio.File{Name: "TARGET/storbench-RUNID/storbench-test.dat"}, "")
		doc := analysis.NewSuiteDocument(s)
		doc.FioJob = job.String()
		out.Reset()
		if err := SuiteText(&out, doc); err != nil {
			t.Fatal(err)
		}
		golden(t, "suite-"+name+".txt", out.Bytes())
	}
}
