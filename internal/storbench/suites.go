package storbench

import (
	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/spec"
)

// Suites lists the built-in suites with their estimated time.
func Suites() ([]analysis.SuiteDocument, error) {
	out := make([]analysis.SuiteDocument, 0, len(spec.BuiltinNames))
	for _, n := range spec.BuiltinNames {
		s, err := spec.Builtin(n)
		if err != nil {
			return nil, err
		}
		out = append(out, analysis.NewSuiteDocument(s))
	}
	return out, nil
}

// Suite resolves a built-in suite's name or a suite file and gives it with
// the fio job it generates, its file placed in a TARGET and RUNID shown as
// such. A suite that does not resolve is an *RequestError.
func Suite(nameOrFile string) (analysis.SuiteDocument, error) {
	s, err := spec.Resolve(nameOrFile)
	if err != nil {
		return analysis.SuiteDocument{}, &RequestError{err}
	}
	job := fio.FromSuite(s, fio.File{Name: "TARGET/storbench-RUNID/storbench-test.dat"}, "")
	doc := analysis.NewSuiteDocument(s)
	doc.FioJob, doc.FioArgs = job.String(), job.Args()
	return doc, nil
}
