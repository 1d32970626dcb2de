package render

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
)

func TestClassesText(t *testing.T) {
	classes := []analysis.Class{
		{StorageClass: result.StorageClass{Name: "local-path", Provisioner: "rancher.io/local-path", Default: true, Dynamic: true, Failover: "no",
			FailoverWhy: "node-local storage: a volume lives on one node's disk", BindingMode: "WaitForFirstConsumer", Reclaim: "Delete",
			AccessModes: []string{"ReadWriteOnce"}, Snapshots: "no"},
			Measured: []analysis.ClassFigure{
				{Workload: "rand-read-4k-qd32", Results: 3, IOPS: 18230, BytesPerSec: 74.67e6, LatencyP99: 2100 * time.Microsecond, LastRun: "20261122-101500-abcd"},
				{Workload: "seq-write", Results: 1, IOPS: 112, BytesPerSec: 117.4e6, LatencyP99: 95 * time.Millisecond, LastRun: "20261121-090000-0001"},
			}},
		{StorageClass: result.StorageClass{Name: "longhorn", Provisioner: "driver.longhorn.io", Dynamic: true, Failover: "yes",
			FailoverWhy: "numberOfReplicas 3", BindingMode: "Immediate", Reclaim: "Retain", Expansion: true,
			AccessModes: []string{"ReadWriteOncePod", "ReadWriteMany"}, Snapshots: "yes: longhorn-snap"},
			Measured: []analysis.ClassFigure{}, Measure: "storbench run --suite quick --target k8s:longhorn"},
		{StorageClass: result.StorageClass{Name: "manual", Provisioner: "kubernetes.io/no-provisioner", Failover: "unknown",
			FailoverWhy: "static volumes", BindingMode: "WaitForFirstConsumer", Reclaim: "Retain", Snapshots: "unknown"},
			Measured: []analysis.ClassFigure{}, Measure: "storbench run --suite quick --target k8s:manual"},
	}
	var out bytes.Buffer
	if err := Formatted(&out, "table", ClassesDocument{Classes: classes}, ClassesText); err != nil {
		t.Fatal(err)
	}
	golden(t, "classes.txt", out.Bytes())

	out.Reset()
	if err := Formatted(&out, "json", ClassesDocument{Classes: classes}, ClassesText); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Classes []map[string]any `json:"classes"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Classes) != 3 || doc.Classes[0]["name"] != "local-path" || doc.Classes[1]["measure"] == nil ||
		len(doc.Classes[1]["measured"].([]any)) != 0 || doc.Classes[0]["measured"].([]any)[0].(map[string]any)["lat_p99_ns"] != 2.1e6 {
		t.Errorf("json: %s", out.String())
	}

	out.Reset()
	if err := ClassesText(&out, ClassesDocument{}); err != nil || out.String() != "No StorageClass in this cluster: install a provisioner (k3s ships local-path).\n" {
		t.Errorf("no classes: %q %v", out.String(), err)
	}
}
