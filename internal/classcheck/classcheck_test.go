package classcheck

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
)

func TestCheckRecords(t *testing.T) {
	recs := func(n int, tail string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString("rec ")
			b.WriteString(strconv.Itoa(i))
			b.WriteString(" storbench\n")
		}
		return b.String() + tail
	}
	cases := []struct {
		name    string
		content string
		acked   int
		wantErr string
	}{
		{"all acknowledged", recs(5, ""), 5, ""},
		{"more than acknowledged, torn tail", recs(7, "rec 8 stor"), 5, ""},
		{"one lost", recs(4, ""), 5, "only 4 of 5"},
		{"damaged", strings.Replace(recs(5, ""), "rec 3 storbench", "rec 3 xtorbench", 1), 5, "record 3"},
		{"gap", strings.Replace(recs(5, ""), "rec 2 storbench\n", "", 1), 5, "record 2"},
		{"empty file", "", 1, "only 0 of 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkRecords(c.content, c.acked)
			if c.wantErr == "" && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

func TestAckCounterSplitWrites(t *testing.T) {
	var a ackCounter
	for _, chunk := range []string{"1\n2", "\n3\n", "4"} {
		a.Write([]byte(chunk))
	}
	if a.value() != 3 {
		t.Fatalf("acked %d, want 3 (the unterminated 4 is not acknowledged)", a.value())
	}
}

func TestStagePercentiles(t *testing.T) {
	var s Stage
	for i := 1; i <= 19; i++ {
		s.Samples = append(s.Samples, time.Duration(i)*time.Second)
	}
	if p, ok := s.Percentile(0.5); !ok || p != 10*time.Second {
		t.Fatalf("p50 %v %v", p, ok)
	}
	if _, ok := s.Percentile(0.95); ok {
		t.Fatal("a p95 of 19 samples was given")
	}
	s.Samples = append(s.Samples, 20*time.Second)
	if p, ok := s.Percentile(0.95); !ok || p != 19*time.Second {
		t.Fatalf("p95 %v %v", p, ok)
	}
}

func TestRefused(t *testing.T) {
	for _, c := range []struct {
		events []string
		want   bool
	}{
		{[]string{"ProvisioningFailed: rpc error: code = Unimplemented desc = clone not supported"}, true},
		{[]string{"ProvisioningFailed: rpc error: code = ResourceExhausted desc = no space"}, false},
		{[]string{"ExternalProvisioning: waiting for a volume to be created"}, false},
		{[]string{"VolumeResizeFailed: resize volume: does not support online expansion"}, true},
	} {
		if got := refused(c.events) != ""; got != c.want {
			t.Errorf("refused(%q) = %v, want %v", c.events, got, c.want)
		}
	}
}

func TestUnsupportedOrFailed(t *testing.T) {
	start := time.Now()
	ref := &refusal{what: "claim x", reason: "ProvisioningFailed: not supported"}
	if c := unsupportedOrFailed(start, ref, false); c.Outcome != NotSupportedMeasured {
		t.Fatalf("undeclared refusal: %s", c.Outcome)
	}
	if c := unsupportedOrFailed(start, ref, true); c.Outcome != Failed {
		t.Fatalf("declared refusal: %s, want failed (a declared capability that does not work)", c.Outcome)
	}
	if c := unsupportedOrFailed(start, errors.New("timeout"), false); c.Outcome != Failed {
		t.Fatalf("plain error: %s", c.Outcome)
	}
}

// The stored results read back into the view the classes command shows.
func TestResultsRoundTrip(t *testing.T) {
	now := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	var samples []time.Duration
	for i := 1; i <= 20; i++ {
		samples = append(samples, time.Duration(i)*100*time.Millisecond)
	}
	rep := &Report{RunID: "20261125-020000-0001", Class: "fast", Profile: Full, Started: now, Finished: now.Add(time.Minute),
		Declared: Declared{Class: "fast", Provisioner: "x.csi", BindingMode: "WaitForFirstConsumer", Reclaim: "Delete", SnapshotAPI: true},
		Checks: []Check{
			{Name: CheckProvisioning, Outcome: Works, Took: time.Second, Stages: []Stage{{Name: StageWritten, Samples: samples}}},
			{Name: CheckSnapshot, Outcome: NotSupportedDeclared, Reason: "no VolumeSnapshotClass for x.csi"},
			{Name: CheckFailover, Outcome: NotSupportedMeasured, Reason: "node-pinned: the scheduler: FailedScheduling: volume node affinity conflict", Took: 2 * time.Second},
			{Name: CheckExpansionOnline, Outcome: Failed, Reason: "controller resize: not capacity", Took: 3 * time.Second},
			{Name: CheckCleanup, Outcome: Failed, Reason: "1 objects left behind", Took: time.Second},
		},
		Leaks: []string{"PersistentVolume pv-1 (Released)"},
	}
	res := rep.Results()
	for _, r := range res {
		if r.Round != result.RoundClass || result.LabelStorageClass.Of(r.Labels) != "fast" {
			t.Fatalf("result %s: round %q class %q", r.Workload, r.Round, result.LabelStorageClass.Of(r.Labels))
		}
	}
	q := analysis.ClassQualifications(res)["fast"]
	if q == nil || len(q.Checks) != 5 {
		t.Fatalf("view %+v", q)
	}
	prov := q.Check(CheckProvisioning)
	if len(prov.Stages) != 1 || !prov.Stages[0].HasP95 || prov.Stages[0].P95 != 1900*time.Millisecond || prov.Stages[0].P50 != time.Second {
		t.Fatalf("provisioning stages %+v", prov.Stages)
	}
	if got := q.Check(CheckCleanup).Reason; !strings.Contains(got, "pv-1") {
		t.Fatalf("cleanup reason %q does not name the leak", got)
	}
	if got := q.Check(CheckSnapshot).Answer(); got != "not supported (declared: no VolumeSnapshotClass for x.csi)" {
		t.Fatalf("answer %q", got)
	}
	line := analysis.PickTwo(q, nil)
	if !strings.Contains(line, "p95 1.9s") || !strings.Contains(line, "failover: node-pinned") {
		t.Fatalf("pick two %q", line)
	}
}

func TestPinnedEvent(t *testing.T) {
	for e, want := range map[string]bool{
		"FailedScheduling: 0/4 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn't match PersistentVolume's node affinity.": true,
		"FailedScheduling: 0/3 nodes are available: 3 node(s) had volume node affinity conflict.":                                           true,
		"FailedScheduling: 0/3 nodes are available: 3 Insufficient cpu.":                                                                    false,
	} {
		if pinnedEvent(e) != want {
			t.Errorf("pinnedEvent(%q) = %v", e, !want)
		}
	}
}

// The growth rule on figures read from real filesystems: xfs made at
// 300 MiB (df 236 MiB: its 64 MiB log is left out) and grown to 600 MiB
// shows 536 MiB; one not grown still shows 236 MiB.
func TestGrownEnough(t *testing.T) {
	const mib = 1 << 20
	if err := grownEnough(300*mib, 236*mib, 600*mib, 536*mib); err != nil {
		t.Errorf("xfs grown from 300 to 600 MiB: %v", err)
	}
	if err := grownEnough(300*mib, 236*mib, 600*mib, 236*mib); err == nil {
		t.Error("a filesystem that was not grown passed")
	}
	if err := grownEnough(300*mib, 236*mib, 600*mib, 490*mib); err == nil {
		t.Error("a filesystem grown by 254 of 300 MiB passed")
	}
}
