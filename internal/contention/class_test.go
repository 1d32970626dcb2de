package contention

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// TestReportsClassOSDs: a contention round on a Kubernetes class backed
// by Ceph (recorded: k8s:cephfs on the test cluster from kreal-node-2,
// every OSD's disk throttled to 10 MB/s, storbench run --round
// contention --output json) carries the pool's OSD figures in both
// halves, so its report says what the probe and the copy share. Here the
// OSDs' device waits rose from about 60 ns to 1.7-4.1 ms per transaction,
// under the 10 ms that counts as a disk shared, the round trips stayed in
// line and the CPUs were as busy alone: nothing named, and the report
// says so rather than leaving Shared out.
func TestReportsClassOSDs(t *testing.T) {
	raw, err := os.ReadFile("testdata/k8s-cephfs-osds-10MBps.json")
	if err != nil {
		t.Fatal(err)
	}
	var rs []result.Result
	if err := json.Unmarshal(raw, &rs); err != nil {
		t.Fatal(err)
	}
	reps := Reports(rs)
	if len(reps) != 1 {
		t.Fatalf("%d reports, want 1", len(reps))
	}
	rep := reps[0]
	if rep.Target != "k8s:cephfs@kreal-node-2" || rep.Shared == nil {
		t.Fatalf("report %+v: want the class target's, with what they share", rep)
	}
	if rep.Shared.Kind != "" || !strings.Contains(rep.Verdict, "neither the servers' disks, the round trips to them nor the sampled CPUs rose") {
		t.Errorf("shared %+v, verdict %q: want nothing named", rep.Shared, rep.Verdict)
	}
	for _, r := range rs[:2] {
		if len(r.Telemetry.OSDs) != 3 || r.Telemetry.OSDs[1].Host != "kreal-node-2" {
			t.Errorf("%s: OSD figures %+v: want the pool's three, on the nodes", r.Workload, r.Telemetry.OSDs)
		}
	}
}
