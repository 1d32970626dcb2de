// Command corpus imports every published output of the importer's corpus
// (internal/importer/testdata/corpus) and prints, per format family, how
// many files were imported exactly (every figure within 0.5% of the file's
// own, read by package corpus), wrong, or refused with a reason, and how
// the copies cut at half their length fared.
//
// Usage: go run ./bench/import/corpus [-dir internal/importer/testdata/corpus] [-v]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/importer"
	"github.com/storbench/storbench/internal/importer/corpus"
	"github.com/storbench/storbench/internal/render"
)

type row struct {
	files, exact, wrong, refused   int
	cutFlagged, cutRefused, cutBad int
	reasons                        map[string]int
}

func main() {
	dir := flag.String("dir", "internal/importer/testdata/corpus", "corpus folder")
	verbose := flag.Bool("v", false, "print every mismatch")
	flag.Parse()
	entries, err := os.ReadDir(*dir)
	if err != nil {
		log.Fatal(err)
	}
	rows := map[string]*row{}
	total := &row{reasons: map[string]int{}}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "SOURCES.tsv" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(*dir, e.Name()))
		if err != nil {
			log.Fatal(err)
		}
		exp, err := corpus.Expect(e.Name(), data)
		if err != nil {
			log.Fatal(err)
		}
		r := rows[exp.Kind]
		if r == nil {
			r = &row{reasons: map[string]int{}}
			rows[exp.Kind] = r
		}
		r.files++
		f, err := importer.Parse(e.Name(), data, importer.Options{})
		switch {
		case err != nil && exp.Refuse != "" && strings.Contains(err.Error(), exp.Refuse):
			r.refused++
			r.reasons[reason(err.Error())]++
			continue
		case err != nil:
			r.wrong++
			if *verbose {
				fmt.Printf("%s: refused, but the file holds figures: %v\n", e.Name(), err)
			}
			continue
		case exp.Refuse != "":
			r.wrong++
			if *verbose {
				fmt.Printf("%s: imported, but the file holds nothing storable (%s)\n", e.Name(), exp.Refuse)
			}
			continue
		}
		if diffs := corpus.Compare(exp, f.Results, f.Health); len(diffs) > 0 || f.Cut() {
			r.wrong++
			if *verbose {
				fmt.Printf("%s: %s\n", e.Name(), strings.Join(diffs, "; "))
			}
		} else {
			r.exact++
		}
		cf, err := importer.Parse(e.Name(), data[:len(data)/2], importer.Options{})
		switch {
		case err != nil && strings.Contains(err.Error(), "cut"):
			r.cutRefused++
		case err != nil || !cf.Cut() || len(corpus.CutFigures(f.Results, cf.Results)) > 0:
			r.cutBad++
			if *verbose {
				fmt.Printf("%s: cut copy: err %v\n", e.Name(), err)
			}
		default:
			r.cutFlagged++
		}
	}
	kinds := make([]string, 0, len(rows))
	for k := range rows {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	d := strconv.Itoa
	var table [][]string
	for _, k := range kinds {
		r := rows[k]
		table = append(table, []string{k, d(r.files), d(r.exact), d(r.wrong), d(r.refused), d(r.cutFlagged), d(r.cutRefused), d(r.cutBad)})
		total.files += r.files
		total.exact += r.exact
		total.wrong += r.wrong
		total.refused += r.refused
		total.cutFlagged += r.cutFlagged
		total.cutRefused += r.cutRefused
		total.cutBad += r.cutBad
	}
	table = append(table, []string{"total", d(total.files), d(total.exact), d(total.wrong), d(total.refused), d(total.cutFlagged), d(total.cutRefused), d(total.cutBad)})
	header := []string{"FORMAT", "FILES", "EXACT", "WRONG", "REFUSED", "CUT COPY: FLAGGED, PARTIAL", "CUT COPY: REFUSED AS CUT", "CUT COPY: BAD"}
	if err := render.Columns(os.Stdout, 1, header, table); err != nil {
		log.Fatal(err)
	}
	for _, k := range kinds {
		if why := refusals(rows[k]); why != "" {
			fmt.Printf("refused, %s: %s\n", k, why)
		}
	}
	if total.wrong > 0 || total.cutBad > 0 {
		os.Exit(1)
	}
}

func refusals(r *row) string {
	if r.refused == 0 {
		return ""
	}
	var parts []string
	for why, n := range r.reasons {
		parts = append(parts, fmt.Sprintf("%d: %s", n, why))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// reason shortens an error to what it says, without the file and line.
func reason(s string) string {
	if i := strings.Index(s, "found "); i >= 0 {
		s = s[i+len("found "):]
	}
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}
