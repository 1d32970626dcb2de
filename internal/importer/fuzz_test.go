package importer

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// seed adds every sample in testdata as seed corpus, so plain "go test"
// runs each fuzz target over all real outputs and "go test -fuzz" starts
// from them.
func seed(f *testing.F) {
	files, err := filepath.Glob("testdata/*.*")
	if err != nil || len(files) == 0 {
		f.Fatalf("no samples in testdata: %v", err)
	}
	published, err := filepath.Glob("testdata/corpus/*")
	if err != nil {
		f.Fatal(err)
	}
	files = append(files, published...)
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// fuzzFormat checks that a reader never panics, and that what it accepts
// is well formed and what it refuses is a ParseError.
func fuzzFormat(f *testing.F, format Format) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz", data, Options{Format: format})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a ParseError: %v", err)
			}
			if pe.Line < 0 || pe.Column < 0 || pe.Msg == "" {
				t.Fatalf("bad ParseError %+v", pe)
			}
			return
		}
		if len(file.Results) == 0 && len(file.Health) == 0 {
			t.Fatal("accepted input with nothing in it")
		}
		for _, r := range file.Results {
			if r.Workload == "" || r.Target == "" || r.Repetition < 1 || r.Round == "" {
				t.Fatalf("incomplete result %q on %q rep %d round %q", r.Workload, r.Target, r.Repetition, r.Round)
			}
			if why := plausible(&r); why != "" {
				t.Fatalf("stored an implausible result: %s", why)
			}
			for _, d := range r.Directions() {
				for _, v := range []float64{d.IOPS, d.BytesPerSec} {
					if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
						t.Fatalf("bad figure %v in %s", v, r.Workload)
					}
				}
			}
		}
		for _, h := range file.Health {
			if h.Target == "" || h.Flags == nil {
				t.Fatalf("incomplete health record %+v", h)
			}
		}
	})
}

func FuzzDetectAndParse(f *testing.F) { fuzzFormat(f, "") }
func FuzzFioJSON(f *testing.F)        { fuzzFormat(f, FioJSON) }
func FuzzFioText(f *testing.F)        { fuzzFormat(f, FioText) }
func FuzzFioTerse(f *testing.F)       { fuzzFormat(f, FioTerse) }
func FuzzIozone(f *testing.F)         { fuzzFormat(f, Iozone) }
func FuzzDD(f *testing.F)             { fuzzFormat(f, DD) }
func FuzzHdparm(f *testing.F)         { fuzzFormat(f, Hdparm) }
func FuzzCeph(f *testing.F)           { fuzzFormat(f, CephBench) }
func FuzzSmartctl(f *testing.F)       { fuzzFormat(f, Smartctl) }
func FuzzSmartctlJSON(f *testing.F)   { fuzzFormat(f, SmartctlJSON) }
func FuzzCSV(f *testing.F)            { fuzzFormat(f, CSV) }
func FuzzJSON(f *testing.F)           { fuzzFormat(f, JSON) }
