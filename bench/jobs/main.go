// Command jobs prints the corpus table of issue 15: for every fio example
// (internal/fio/testdata/corpus/fio-examples) that names no device, shortened
// the same way for both (fio.Shorten), whether fio itself runs it here,
// whether it runs identically through storbench (fio.Differences on the two
// JSON documents) or is refused and why, and the wall time under each.
//
// Usage: go run ./bench/jobs [-corpus DIR] [-work DIR] [-runtime 300ms]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

func main() {
	corpus := flag.String("corpus", "internal/fio/testdata/corpus/fio-examples", "fio examples")
	work := flag.String("work", "", "directory on disk to run in (default: a new temporary one)")
	runtime := flag.String("runtime", "300ms", "per-job runtime cap, the same on both sides")
	flag.Parse()
	if err := run(*corpus, *work, *runtime); err != nil {
		fmt.Fprintln(os.Stderr, "jobs:", err)
		os.Exit(1)
	}
}

func run(corpus, work, runtime string) error {
	if work == "" {
		d, err := os.MkdirTemp("", "storbench-jobs-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	}
	files, err := filepath.Glob(filepath.Join(corpus, "*.fio"))
	if err != nil {
		return err
	}
	fmt.Printf("| example | fio here | storbench | fio s | storbench s |\n|---|---|---|---:|---:|\n")
	var runnable, identical, refused, devices int
	for _, f := range files {
		name := filepath.Base(f)
		text, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if namesDevice(f) {
			devices++
			continue
		}
		short := filepath.Join(work, name)
		if err := os.WriteFile(short, fio.Shorten(text, runtime, "16m"), 0o644); err != nil {
			return err
		}
		// Both sides start in a new directory and end with it removed, as
		// storbench removes its work directory.
		t0 := time.Now()
		own, ok := runFio(short, work)
		fioSecs := time.Since(t0).Seconds()
		if !ok {
			continue
		}
		runnable++
		t1 := time.Now()
		got, err := runStorbench(short, work)
		sbSecs := time.Since(t1).Seconds()
		verdict := "identical"
		switch {
		case err != nil:
			verdict = "refused: " + oneLine(err.Error())
			refused++
		default:
			if d := fio.Differences(own, got); len(d) > 0 {
				verdict = "DIFFERENT: " + strings.Join(d, "; ")
			} else {
				identical++
			}
		}
		fmt.Printf("| %s | runs | %s | %.2f | %.2f |\n", name, verdict, fioSecs, sbSecs)
	}
	fmt.Printf("\n%d examples; %d name devices (see TestFioExamplesOnDevicesRefused); of the others fio runs %d here: %d identical under storbench, %d refused.\n",
		len(files), devices, runnable, identical, refused)
	return nil
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if i := strings.Index(s, ": storbench runs only"); i > 0 {
		s = s[:i]
	}
	if len(s) > 140 {
		s = s[:140] + "..."
	}
	return strings.ReplaceAll(s, "|", "/")
}

func namesDevice(path string) bool {
	jf, err := fio.ReadJobFile(path, fio.ReadOptions{Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		data, _ := os.ReadFile(path)
		return strings.Contains(string(data), "/dev/")
	}
	return jf.Mentions("/dev/")
}

// runFio runs fio itself in a new directory, removed afterwards; false when
// fio cannot run the example here within 40 s.
func runFio(path, work string) (*fio.Output, bool) {
	dir, err := os.MkdirTemp(work, "fio-")
	if err != nil {
		return nil, false
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	out, err := fio.RunBare(ctx, dir, path)
	return out, err == nil
}

// runStorbench runs the file as "storbench run --fio-job" does (judged
// first, then run) on a new directory target and returns fio's JSON as
// storbench stored it.
func runStorbench(path, work string) (*fio.Output, error) {
	dir, err := os.MkdirTemp(work, "sb-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "r.db"))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil {
		return nil, err
	}
	req := storbench.DefaultRunRequest()
	req.FioJob, req.Targets, req.Telemetry = path, []string{target}, false
	r, err := storbench.Run(ctx, st, req, nil)
	if err != nil {
		return nil, err
	}
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{r.ID}})
	if err != nil || len(results) == 0 {
		return nil, fmt.Errorf("no results: %v", err)
	}
	raw, err := st.RawFioJSON(ctx, results[0].ID)
	if err != nil {
		return nil, err
	}
	var out fio.Output
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
