package importer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/importer/corpus"
)

// corpusFiles lists testdata/corpus from its SOURCES.tsv, checking that
// every file there has its source and every source its file.
func corpusFiles(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("testdata/corpus/SOURCES.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	var names []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		cols := strings.Split(sc.Text(), "\t")
		if n == 1 {
			continue
		}
		if len(cols) != 5 || cols[1] == "" || cols[2] == "" || len(cols[3]) != 40 || cols[4] == "" {
			t.Fatalf("SOURCES.tsv:%d: want file, repository, path, 40-digit commit and license, found %q", n, sc.Text())
		}
		listed[cols[0]] = true
		names = append(names, cols[0])
	}
	entries, _ := os.ReadDir("testdata/corpus")
	for _, e := range entries {
		if e.Name() != "SOURCES.tsv" && !listed[e.Name()] {
			t.Errorf("testdata/corpus/%s has no line in SOURCES.tsv", e.Name())
		}
	}
	for name := range listed {
		if _, err := os.Stat(filepath.Join("testdata/corpus", name)); err != nil {
			t.Errorf("SOURCES.tsv lists %s: %v", name, err)
		}
	}
	return names
}

// TestCorpus imports every published output of testdata/corpus and checks
// the stored figures against the figures the file states, read by package
// corpus with code of its own; then a copy cut at half its length, which
// must give only figures of the full file and say that it was cut.
func TestCorpus(t *testing.T) {
	names := corpusFiles(t)
	if len(names) < 60 {
		t.Errorf("corpus holds %d files, want at least 60", len(names))
	}
	kinds := map[string]bool{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/corpus", name))
			if err != nil {
				t.Fatal(err)
			}
			exp, err := corpus.Expect(name, data)
			if err != nil {
				t.Fatal(err)
			}
			kinds[exp.Kind] = true
			f, err := Parse(name, data, Options{})
			if exp.Refuse != "" {
				if err == nil || !strings.Contains(err.Error(), exp.Refuse) {
					t.Fatalf("want a refusal saying %q, got %v", exp.Refuse, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if f.Cut() || f.Refused() > 0 {
				t.Errorf("whole file reported cut or refused: %v", f.Problems)
			}
			for _, m := range corpus.Compare(exp, f.Results, f.Health) {
				t.Error(m)
			}

			half := data[:len(data)/2]
			cf, err := Parse(name, half, Options{})
			if err != nil {
				if !strings.Contains(err.Error(), "cut") {
					t.Errorf("cut copy refused without saying it is cut: %v", err)
				}
				return
			}
			if !cf.Cut() {
				t.Errorf("cut copy imported without a cut problem (%d results)", len(cf.Results))
			}
			for _, m := range corpus.CutFigures(f.Results, cf.Results) {
				t.Error(m)
			}
			// A figure of a cut record is the full file's or not reported.
			for i, h := range cf.Health {
				if i >= len(f.Health) || h.PowerOnHours != 0 && h.PowerOnHours != f.Health[i].PowerOnHours ||
					h.TemperatureC != 0 && h.TemperatureC != f.Health[i].TemperatureC {
					t.Errorf("cut copy: health record %d: %d h, %d °C; the full file's: %d h, %d °C", i, h.PowerOnHours, h.TemperatureC, f.Health[i].PowerOnHours, f.Health[i].TemperatureC)
				}
			}
		})
	}
	t.Logf("format families in the corpus: %s", strings.Join(corpus.Kinds(kinds), ", "))
	// Every fio major format is in the corpus.
	for _, k := range []string{"fio JSON 2.x", "fio JSON 3.0-3.19", "fio JSON 3.20+", "fio JSON json+",
		"fio JSON client/server", "fio terse", "fio text 2.x", "fio text 3.x"} {
		if !kinds[k] {
			t.Errorf("the corpus holds no %s file", k)
		}
	}
}

// TestCorpusJSONPlusBins reads the published json+ files without fio's
// own percentile lists: the percentiles the importer computes from the
// latency bins must be the ones fio computed from the same bins.
func TestCorpusJSONPlusBins(t *testing.T) {
	n := 0
	for _, name := range corpusFiles(t) {
		data, err := os.ReadFile(filepath.Join("testdata/corpus", name))
		if err != nil {
			t.Fatal(err)
		}
		exp, err := corpus.Expect(name, data)
		if err != nil || exp.Kind != "fio JSON json+" {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			var doc any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if dropped := dropPercentiles(doc); dropped == 0 {
				t.Fatal("no latency object with bins and percentiles")
			}
			stripped, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(name, stripped, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range corpus.Compare(exp, f.Results, f.Health) {
				t.Error(m)
			}
		})
	}
	if n < 2 {
		t.Errorf("the corpus holds %d json+ files, want at least 2", n)
	}
}

// dropPercentiles removes "percentile" from every object that also has
// "bins", and says how many it removed.
func dropPercentiles(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["bins"]; ok {
			if _, ok := x["percentile"]; ok {
				delete(x, "percentile")
				n++
			}
		}
		for _, e := range x {
			n += dropPercentiles(e)
		}
	case []any:
		for _, e := range x {
			n += dropPercentiles(e)
		}
	}
	return n
}
