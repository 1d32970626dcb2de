package classcheck

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/appfit"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
)

// CheckAppFit is the app-fitness check group: the filesystem semantics
// SQLite apps rely on between two pods (on two nodes when the class offers
// ReadWriteMany, else two processes in one pod) and a SQLite database's
// commits on the volume (internal/appfit), judged by analysis.SQLiteVerdict.
const CheckAppFit = "app-fit"

// podBinary is where the check puts storbench's binary in its pods: the
// fio image has no storbench, and the probe is storbench's own command.
const podBinary = "/tmp/storbench-appfit"

// appFit runs the app-fitness probe on a volume of the class. The answers
// and figures go to r.apps as results of round result.RoundApp; the check
// itself works unless the verdict fails (a warning, such as locks not
// shared between nodes, is in its reason).
func (r *run) appFit(ctx context.Context) Check {
	start := time.Now()
	vols, clients, err := r.appPods(ctx)
	defer func() { r.release(ctx, vols) }()
	if err != nil {
		return failed(start, err)
	}
	m := appfit.Measured{RunID: r.runID, Target: TargetName(r.o.Class), Kind: "kubernetes", Started: time.Now(), Labels: map[string]string{}}
	result.LabelStorageClass.Set(m.Labels, r.o.Class)
	id := r.prefix() + "app"
	first, second := clients[0], clients[len(clients)-1]
	r.progress("%s: %s: probing the filesystem from %s and %s", r.o.Class, CheckAppFit, first.Where, second.Where)
	if m.Semantic, err = appfit.Probe(ctx, appfit.ProbeOptions{First: first, Second: second, ID: id, Timeout: r.o.Timeout}); err != nil {
		return failed(start, err)
	}
	// The quick profile (the check asked for alone) measures SQLite's
	// verdict mode from one client briefly; the full one every mode, then
	// two clients at once.
	sq := appfit.SQLiteBenchOptions{Clients: clients[:1], ID: id, Duration: time.Second,
		Modes: []appfit.Mode{{Journal: appfit.JournalWAL, Synchronous: appfit.SyncFull}}}
	if r.o.Profile == Full {
		sq.Duration, sq.Modes = 3*time.Second, appfit.Modes
	}
	r.progress("%s: %s: SQLite in %d modes", r.o.Class, CheckAppFit, len(sq.Modes))
	one, err := appfit.BenchSQLite(ctx, sq)
	m.SQLite = append(m.SQLite, one...)
	if err == nil && len(clients) > 1 && r.o.Profile == Full {
		var two []appfit.SQLiteMeasurement
		two, err = appfit.BenchSQLite(ctx, appfit.SQLiteBenchOptions{Clients: clients, ID: id + "-2", Duration: sq.Duration,
			Modes: []appfit.Mode{{Journal: appfit.JournalWAL, Synchronous: appfit.SyncFull}}})
		m.SQLite = append(m.SQLite, two...)
	}
	r.apps = append(r.apps, m.Results()...)
	if err != nil {
		return failed(start, err)
	}
	v, err := analysis.SQLiteVerdict(r.apps)
	if err != nil {
		return failed(start, err)
	}
	c := Check{Outcome: Works, Reason: string(v.Status) + ": " + v.Summary, Took: time.Since(start)}
	if v.Status == analysis.Fail {
		c.Outcome = Failed
	}
	return c
}

// appPods starts the check's pods with storbench's binary in each: two on
// two nodes sharing a ReadWriteMany claim, or one on a ReadWriteOnce claim
// whose two clients are two processes in it.
func (r *run) appPods(ctx context.Context) ([]*volume, []appfit.Client, error) {
	var vols []*volume
	if len(r.nodes) >= 2 {
		a, err := r.startVolume(ctx, claimSpec{mode: corev1.ReadWriteMany}, podSpec{node: r.nodes[0]})
		vols = append(vols, a)
		if err == nil {
			b := &volume{claim: a.claim, pod: r.name("pod")}
			vols = append(vols, b)
			if _, err := r.createPod(ctx, podSpec{name: b.pod, claim: a.claim, node: r.nodes[1]}); err != nil {
				return vols, nil, err
			}
			if _, err := r.podRunning(ctx, b.pod, ""); err != nil {
				return vols, nil, r.explain(err, b.pod)
			}
			clients, err := r.appClients(ctx, []string{a.pod, b.pod}, r.nodes[:2])
			return vols, clients, err
		}
		r.progress("%s: %s: no ReadWriteMany volume (%v): two processes in one pod", r.o.Class, CheckAppFit, err)
		if _, derr := r.deleteVolumes(ctx, vols); derr != nil {
			return vols, nil, derr
		}
		vols = nil
	}
	a, err := r.startVolume(ctx, claimSpec{}, podSpec{})
	vols = append(vols, a)
	if err != nil {
		return vols, nil, err
	}
	node := "its node"
	if p, err := r.c.Client.CoreV1().Pods(r.ns).Get(ctx, a.pod, metav1.GetOptions{}); err == nil {
		node = p.Spec.NodeName
	}
	clients, err := r.appClients(ctx, []string{a.pod}, []string{node})
	return vols, clients, err
}

// appClients copies storbench's binary into each pod and returns a client
// per pod.
func (r *run) appClients(ctx context.Context, pods, nodes []string) ([]appfit.Client, error) {
	bin := r.o.AppBinary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding storbench's own binary: %w", err)
		}
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("reading storbench's binary for the pods: %w", err)
	}
	var out []appfit.Client
	for i, pod := range pods {
		// cp gives the file an executable's mode, cat then fills it: the
		// test cluster's fio image has no chmod.
		if _, err := r.exec(ctx, pod, data, "sh", "-c", "cp /bin/sh "+podBinary+" && cat > "+podBinary); err != nil {
			return nil, fmt.Errorf("copying storbench into pod %s: %w", pod, err)
		}
		out = append(out, appfit.Client{Cmder: &kubekit.PodCmder{Exec: r.c.Exec, Namespace: r.ns, Pod: pod, Container: kubekit.ContainerName},
			Binary: podBinary, Where: nodes[i], Dir: MountPath})
	}
	return out, nil
}
