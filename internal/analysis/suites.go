package analysis

import (
	"time"

	"github.com/storbench/storbench/internal/spec"
)

// SuiteDocument is a suite as storbench suites shows it: the suite as it is
// defined (its JSON is the suite's own, plus the fields below), its
// estimated time, and for a shown suite the fio job it generates.
type SuiteDocument struct {
	*spec.Suite
	EstimatedSeconds float64 `json:"estimated_seconds"`
	// SizeBased counts the workloads that run until their size is
	// written, which the estimate leaves out.
	SizeBased int `json:"size_based_workloads"`
	// LargestFileBytes is the largest file a workload of the suite uses.
	LargestFileBytes int64    `json:"largest_file_bytes"`
	FioJob           string   `json:"fio_job,omitempty"`
	FioArgs          []string `json:"fio_args,omitempty"`
}

// NewSuiteDocument is s with its estimated time and largest file.
func NewSuiteDocument(s *spec.Suite) SuiteDocument {
	d := SuiteDocument{Suite: s, EstimatedSeconds: s.Duration().Seconds(), LargestFileBytes: s.MaxFileSize()}
	for _, w := range s.Workloads {
		if w.Runtime == 0 {
			d.SizeBased++
		}
	}
	return d
}

// Estimated is the estimated time the timed workloads take.
func (d SuiteDocument) Estimated() time.Duration {
	return time.Duration(d.EstimatedSeconds * float64(time.Second))
}
