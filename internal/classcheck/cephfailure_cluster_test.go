package classcheck_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/test/kubetest"
)

// TestClusterCephOSDFailure brings Ceph with CephFS up in the test
// cluster (class cephfs), runs the ceph-osd-failure check on it: osd.2 (5 s)
// held down under the writer, then let back; the report gives the
// mark-down, the stall, the throughput while degraded, the time back to
// active+clean, and every acknowledged write read back by sha256. Then
// Ceph is whole again (no noup, every OSD up and in, every PG
// active+clean, no record left) and nothing of the run is on the cluster.
// A run interrupted (Ctrl-C) while the OSD is down lets it back. A last
// part stands for a run killed while it held an OSD down: its
// record is found and undone by the cleanup. These two reach Ceph with
// the ceph CLI in (a stand-in for) Rook's toolbox.
func TestClusterCephOSDFailure(t *testing.T) {
	c, client := connect(t)
	start := time.Now()
	kubetest.CephUp(t)
	cc := ceph.Client{Cmder: execx.Local{}}
	ctx := context.Background()
	// Recovery at full speed: the harness's OSDs sit on a disk that reads
	// rotational, whose 0.1 s recovery sleep per object makes the
	// writes made while the OSD was down take minutes to recover.
	if _, err := cc.Run(ctx, "config", "set", "osd", "osd_recovery_sleep_hdd", "0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Run(context.Background(), "config", "rm", "osd", "osd_recovery_sleep_hdd") })

	t.Run("held-down", func(t *testing.T) {
		start := time.Now()
		runID := fmt.Sprintf("ceph%06x", time.Now().UnixNano()&0xffffff)
		o := classcheck.Options{Class: "cephfs", Image: realImage, PullPolicy: corev1.PullNever, Timeout: 90 * time.Second, RunID: runID,
			Only: []string{classcheck.CheckCephOSDFailure},
			// 20 s: the manager refreshes its PG figures every 5 s, so a
			// 5 s hold once saw no degraded PG at all; and the writer
			// stalls while the PGs peer without the OSD, 3.7-5.5 s on a
			// quiet machine but 13.2 s once under the cluster tier's load,
			// when a 10 s hold saw no write while down.
			CephFailure: &classcheck.CephFailure{Ceph: cc, Where: "on this host (CEPH_CONF)", OSD: -1, Hold: 20 * time.Second},
			Progress:    func(m string) { t.Log(m) }}
		var plan string
		o.Progress = func(m string) {
			if strings.HasPrefix(m, "plan for") {
				plan = m
			}
			t.Log(m)
		}
		rep, err := classcheck.Qualify(ctx, c, o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "HOLDS osd.2 DOWN") || !strings.Contains(plan, "ceph osd add-noup osd.2") {
			t.Errorf("plan does not say which OSD it holds down, how: %s", plan)
		}
		ch := rep.Check(classcheck.CheckCephOSDFailure)
		if ch == nil || ch.Outcome != classcheck.Works {
			t.Fatalf("check: %+v", ch)
		}
		for _, re := range []string{`marked down \d`, `longest stall \d`, `[1-9]\d* PGs degraded`, `[0-9.]+ MB/s while down`,
			`active\+clean [0-9hms.]+ after it was up`, `read back by sha256: [1-9]\d* written before, [1-9]\d* while down, [1-9]\d* after`} {
			if !regexp.MustCompile(re).MatchString(ch.Reason) {
				t.Errorf("reason lacks %q: %s", re, ch.Reason)
			}
		}
		if m := regexp.MustCompile(`([0-9.]+) MB/s while down`).FindStringSubmatch(ch.Reason); m == nil || m[1] == "0.0" {
			t.Errorf("no throughput while degraded: %s", ch.Reason)
		}
		cephWhole(t, cc)
		nothingLeft(t, client, runID)
		if len(rep.Leaks) > 0 {
			t.Errorf("leaks: %v", rep.Leaks)
		}
		t.Logf("check in %.1f s: %s", time.Since(start).Seconds(), ch.Reason)
	})

	// The last two parts reach Ceph through Rook's toolbox (a stand-in:
	// kubetest.RookToolbox), as on a Rook cluster storbench's host has no
	// ceph.conf: --ceph-toolbox NAMESPACE.
	tbNS := kubetest.Namespace(t, c, "rooktools")
	toolbox := tbNS + "/" + kubetest.RookToolbox(t, ctx, c, tbNS, kubetest.Env(t).Nodes()[0], realImage)

	t.Run("interrupted", func(t *testing.T) {
		start := time.Now()
		runID := fmt.Sprintf("cint%06x", time.Now().UnixNano()&0xffffff)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var plan string
		o := classcheck.Options{Class: "cephfs", Image: realImage, PullPolicy: corev1.PullNever, Timeout: 90 * time.Second, RunID: runID,
			Only:        []string{classcheck.CheckCephOSDFailure},
			CephFailure: storbench.CephFailure(storbench.CephFailureRequest{Enabled: true, Toolbox: tbNS, OSD: 0, Hold: time.Minute}),
			Progress: func(m string) { // Ctrl-C once the OSD is down
				t.Log(m)
				if strings.HasPrefix(m, "plan for") {
					plan = m
				}
				if strings.Contains(m, "marked down") {
					cancel()
				}
			}}
		rep, err := classcheck.Qualify(cctx, c, o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "in Rook's toolbox pod "+toolbox) {
			t.Errorf("plan does not say the ceph CLI is the toolbox's (%s): %s", toolbox, plan)
		}
		if ch := rep.Check(classcheck.CheckCephOSDFailure); ch == nil || ch.Outcome != classcheck.Skipped || ch.Reason != "interrupted" {
			t.Errorf("check: %+v, want skipped (interrupted)", ch)
		}
		if _, err := classcheck.WaitCephWhole(ctx, cc, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		cephWhole(t, cc)
		nothingLeft(t, client, runID)
		t.Logf("interrupted run let osd.0 back, Ceph whole in %.1f s", time.Since(start).Seconds())
	})

	// The harsher mode, on demand (it costs about 30 s more): the OSD's
	// process killed by the harness's command, Ceph noticing by itself.
	t.Run("stopped", func(t *testing.T) {
		if os.Getenv("STORBENCH_CEPH_OSD_STOP") != "1" {
			t.Skip("on demand: STORBENCH_CEPH_OSD_STOP=1")
		}
		start := time.Now()
		script, err := filepath.Abs("../../test/cluster/ceph.sh")
		if err != nil {
			t.Fatal(err)
		}
		cf := storbench.CephFailure(storbench.CephFailureRequest{Enabled: true, OSD: 1, Hold: 4 * time.Second,
			StopCommand: "bash " + script + " osd kill {osd}", StartCommand: "bash " + script + " osd start {osd}"})
		runID := fmt.Sprintf("cstp%06x", time.Now().UnixNano()&0xffffff)
		rep, err := classcheck.Qualify(ctx, c, classcheck.Options{Class: "cephfs", Image: realImage, PullPolicy: corev1.PullNever, Timeout: 90 * time.Second,
			RunID: runID, Only: []string{classcheck.CheckCephOSDFailure}, CephFailure: cf, Progress: func(m string) { t.Log(m) }})
		if err != nil {
			t.Fatal(err)
		}
		ch := rep.Check(classcheck.CheckCephOSDFailure)
		if ch == nil || ch.Outcome != classcheck.Works || !strings.Contains(ch.Reason, "stopped with") ||
			!regexp.MustCompile(`read back by sha256: [1-9]\d* written before, [1-9]\d* while down, [1-9]\d* after`).MatchString(ch.Reason) {
			t.Fatalf("check: %+v", ch)
		}
		cephWhole(t, cc)
		nothingLeft(t, client, runID)
		t.Logf("stopped mode in %.1f s: %s", time.Since(start).Seconds(), ch.Reason)
	})

	t.Run("killed-run-cleanup", func(t *testing.T) {
		start := time.Now()
		h := ceph.HeldDown{OSD: 1, RunID: fmt.Sprintf("kill%06x", time.Now().UnixNano()&0xffffff), Since: time.Now()}
		if _, err := cc.HoldDown(ctx, h); err != nil { // as the check records and holds, then killed
			t.Fatal(err)
		}
		m, err := cc.OSDMap(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if o := m.OSDs[1]; o.Up || !o.NoUp() {
			t.Fatalf("osd.1 after the hold: %+v, want down with noup", o)
		}
		// cleanup --k8s --ceph, as the user runs it after a killed run.
		rep, err := storbench.CleanupKube(ctx, storbench.KubeCleanupRequest{Cluster: kubekit.ConnectOptions{Kubeconfig: os.Getenv("KUBECONFIG")},
			RunID: h.RunID, Ceph: true, CephToolbox: tbNS})
		if err != nil {
			t.Fatal(err)
		}
		if want := "let back " + h.String(); !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) || len(rep.Failed) > 0 {
			t.Errorf("cleanup: notes %q, failed %v; want %q", rep.Notes, rep.Failed, want)
		}
		if _, err := classcheck.WaitCephWhole(ctx, cc, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		cephWhole(t, cc)
		t.Logf("killed run's hold undone, Ceph whole in %.1f s", time.Since(start).Seconds())
	})
	t.Logf("Ceph up and the three parts in %.1f s", time.Since(start).Seconds())
}

// cephWhole fails unless no OSD carries noup, every OSD is up and in,
// every PG active+clean, and storbench left no hold record.
func cephWhole(t *testing.T, cc ceph.Client) {
	t.Helper()
	ctx := context.Background()
	m, err := cc.OSDMap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range m.OSDs {
		if !o.Up || !o.In || o.NoUp() {
			t.Errorf("osd.%d after the check: up %t, in %t, state %v", o.ID, o.Up, o.In, o.State)
		}
	}
	if pgs, err := cc.PGStat(ctx); err != nil || !pgs.Clean() {
		t.Errorf("PGs after the check: %v %v", pgs, err)
	}
	if held, err := cc.FindHeldDown(ctx, ""); err != nil || len(held) > 0 {
		t.Errorf("hold records left: %v %v", held, err)
	}
}
