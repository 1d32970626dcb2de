package storbench_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
)

func TestMeasuredClassesFromStoredResults(t *testing.T) {
	ctx := context.Background()
	st := openDB(t)
	run := &result.Run{ID: "20261122-101500-abcd", Suite: "quick", Status: result.StatusComplete, Started: time.Now(), Source: "storbench"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	add := func(round, class string, status result.Status, iops float64) {
		labels := map[string]string{}
		result.LabelStorageClass.Set(labels, class)
		r := &result.Result{RunID: run.ID, Target: "k8s:" + class + "@n", Round: round, Repetition: 1, Workload: "rand-read-4k",
			Status: status, Started: time.Now(), Finished: time.Now(), Labels: labels,
			Read: &result.Direction{IOPS: iops, BytesPerSec: iops * 4096, TotalIOs: 100}}
		if err := st.AddResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	add(result.RoundIsolated, "fast", result.StatusComplete, 1000)
	add(result.RoundIsolated, "fast", result.StatusComplete, 3000)
	add(result.RoundIsolated, "fast", result.StatusComplete, 2000)
	add(result.RoundIsolated, "fast", result.StatusFailed, 1)    // a failed result measures nothing
	add(result.RoundParallel, "fast", result.StatusComplete, 10) // other rounds do not describe the class alone
	classes, err := storbench.MeasuredClasses(ctx, st, []result.StorageClass{{Name: "fast"}, {Name: "slow"}})
	if err != nil {
		t.Fatal(err)
	}
	fast, slow := classes[0], classes[1]
	if len(fast.Measured) != 1 || fast.Measured[0].IOPS != 2000 || fast.Measured[0].BytesPerSec != 2000*4096 ||
		fast.Measured[0].Results != 3 || fast.Measured[0].LastRun != run.ID || fast.Measure != "" {
		t.Errorf("fast: %+v", fast)
	}
	if slow.Measured == nil || len(slow.Measured) != 0 || slow.Measure != "storbench run --suite quick --target k8s:slow" {
		t.Errorf("slow: %+v", slow)
	}
	if none, err := storbench.MeasuredClasses(ctx, st, nil); err != nil || none == nil || len(none) != 0 {
		t.Errorf("no classes: %v %v", none, err)
	}
}

func TestClassesWithoutACluster(t *testing.T) {
	st := openDB(t)
	_, err := storbench.Classes(context.Background(), st, storbench.ClassesRequest{
		Cluster: kubekit.ConnectOptions{Kubeconfig: filepath.Join(t.TempDir(), "missing")}, Timeout: 10 * time.Second})
	var ie *storbench.RequestError
	if !errors.As(err, &ie) {
		t.Errorf("got %v (%T), want an RequestError", err, err)
	}
}
