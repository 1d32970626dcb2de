package storbench

import (
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/spec"
)

// Suites lists the built-in suites with their estimated time.
func Suites() ([]render.SuiteDocument, error) {
	out := make([]render.SuiteDocument, 0, len(spec.BuiltinNames))
	for _, n := range spec.BuiltinNames {
		s, err := spec.Builtin(n)
		if err != nil {
			return nil, err
		}
		out = append(out, render.SuiteDocument{Suite: s, EstimatedSeconds: s.Duration().Seconds()})
	}
	return out, nil
}

// Suite resolves a built-in suite's name or a suite file and gives it with
// the fio job it generates, its file placed in a TARGET and RUNID shown as
// such. A suite that does not resolve is an *RequestError.
func Suite(nameOrFile string) (render.SuiteDocument, error) {
	s, err := spec.Resolve(nameOrFile)
	if err != nil {
		return render.SuiteDocument{}, &RequestError{err}
	}
	job := fio.FromSuite(s, fio.File{Name: "TARGET/storbench-RUNID/storbench-test.dat"}, "")
	return render.SuiteDocument{Suite: s, EstimatedSeconds: s.Duration().Seconds(), FioJob: job.String(), FioArgs: job.Args()}, nil
}
