package classescmd

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/store"
)

func TestMeasuredFromStoredResults(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &result.Run{ID: "20261122-101500-abcd", Suite: "quick", Status: result.StatusComplete, Started: time.Now(), Source: "storbench"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	add := func(round, class string, iops float64) {
		r := &result.Result{RunID: run.ID, Target: "k8s:" + class + "@n", Round: round, Repetition: 1, Workload: "rand-read-4k",
			Status: result.StatusComplete, Started: time.Now(), Finished: time.Now(), Labels: map[string]string{"storage_class": class},
			Read: &result.Direction{IOPS: iops, BytesPerSec: iops * 4096, TotalIOs: 100}}
		if err := st.AddResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	add(result.RoundIsolated, "fast", 1000)
	add(result.RoundIsolated, "fast", 3000)
	add(result.RoundIsolated, "fast", 2000)
	add(result.RoundParallel, "fast", 10) // other rounds do not describe the class alone
	classes, err := withFigures(ctx, st, []kube.ClassInfo{{Name: "fast"}, {Name: "slow"}})
	if err != nil {
		t.Fatal(err)
	}
	fast, slow := classes[0], classes[1]
	if len(fast.Measured) != 1 || fast.Measured[0].IOPS != 2000 || fast.Measured[0].Results != 3 || fast.Measure != "" {
		t.Errorf("fast: %+v", fast)
	}
	if len(slow.Measured) != 0 || slow.Measure != "storbench run --suite quick --target k8s:slow" {
		t.Errorf("slow: %+v", slow)
	}
	var out bytes.Buffer
	if err := write(&out, classes); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2000 IOPS", "median of 3", "not measured: run storbench run --suite quick --target k8s:slow"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
