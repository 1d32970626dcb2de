// Command classcheck measures `storbench classes --measure` on a cluster:
// the quick profile's wall time per class, and the provisioning stage
// times storbench reports against those this program records from its own,
// independent watches of the same claims and pods (a separate client and
// plain watch streams, not storbench's informers).
//
// Usage (KUBECONFIG set, the test cluster up):
//
//	go run ./bench/classcheck -classes testcsi-shared,local-path -claims 5 -image localhost/kreal/fio:3.33
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/kubekit"
)

func main() {
	classes := flag.String("classes", "testcsi-shared", "comma-separated StorageClasses")
	claims := flag.Int("claims", 5, "claims in the stage comparison")
	image := flag.String("image", "localhost/kreal/fio:3.33", "check pods' image (pull policy Never)")
	wall := flag.Bool("wall", true, "also time the whole quick profile per class")
	flag.Parse()
	kc := os.Getenv("KUBECONFIG")
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		log.Fatal(err)
	}
	if !strings.Contains(cfg.Host, "127.0.0.1") {
		log.Fatalf("refusing %s: this benchmark runs on the loopback test cluster only", cfg.Host)
	}
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: kc})
	if err != nil {
		log.Fatal(err)
	}
	independent, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	ns, err := c.EnsureNamespace(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, class := range strings.Split(*classes, ",") {
		compareStages(ctx, c, independent, ns, class, *claims, *image)
		if *wall {
			start := time.Now()
			rep, err := classcheck.Qualify(ctx, c, classcheck.Options{Class: class, Image: *image, PullPolicy: corev1.PullNever,
				RunID: fmt.Sprintf("bw%06x", time.Now().UnixNano()&0xffffff)})
			if err != nil {
				log.Fatal(err)
			}
			var outs []string
			for _, ch := range rep.Checks {
				outs = append(outs, ch.Name+"="+string(ch.Outcome))
			}
			fmt.Printf("%s quick profile: %.1f s wall; %s; leaks %d\n", class, time.Since(start).Seconds(), strings.Join(outs, ", "), len(rep.Leaks))
		}
	}
}

// compareStages runs provisioning alone while watching the run's claims
// and pods independently, and prints per stage the largest difference
// between storbench's sorted samples and the watcher's.
func compareStages(ctx context.Context, c *kubekit.Cluster, client kubernetes.Interface, ns, class string, claims int, image string) {
	runID := fmt.Sprintf("bs%06x", time.Now().UnixNano()&0xffffff)
	sel := metav1.ListOptions{LabelSelector: kubekit.Selector(runID)}
	w := &watcher{first: map[string]time.Time{}}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	pw, err := client.CoreV1().Pods(ns).Watch(wctx, sel)
	if err != nil {
		log.Fatal(err)
	}
	cw, err := client.CoreV1().PersistentVolumeClaims(ns).Watch(wctx, sel)
	if err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.consume(pw) }()
	go func() { defer wg.Done(); w.consume(cw) }()
	rep, err := classcheck.Qualify(ctx, c, classcheck.Options{Class: class, Claims: claims, Image: image, PullPolicy: corev1.PullNever,
		RunID: runID, Only: []string{classcheck.CheckProvisioning}})
	if err != nil {
		log.Fatal(err)
	}
	stop()
	pw.Stop()
	cw.Stop()
	wg.Wait()
	prov := rep.Check(classcheck.CheckProvisioning)
	if prov.Outcome != classcheck.Works {
		log.Fatalf("%s: provisioning %s: %s", class, prov.Outcome, prov.Reason)
	}
	indep := w.stages()
	for _, s := range prov.Stages {
		ind, ok := indep[s.Name]
		if !ok {
			continue
		}
		ours := append([]time.Duration(nil), s.Samples...)
		sort.Slice(ours, func(i, j int) bool { return ours[i] < ours[j] })
		sort.Slice(ind, func(i, j int) bool { return ind[i] < ind[j] })
		var worst time.Duration
		for i := 0; i < len(ours) && i < len(ind); i++ {
			worst = max(worst, time.Duration(math.Abs(float64(ours[i]-ind[i]))))
		}
		fmt.Printf("%s %-12s storbench p50 %7.3f s, independent watch p50 %7.3f s, largest difference %4d ms (%d claims)\n",
			class, s.Name, med(ours).Seconds(), med(ind).Seconds(), worst.Milliseconds(), len(ours))
	}
}

func med(s []time.Duration) time.Duration { return s[(len(s)-1)/2] }

// watcher stamps, from plain watch streams, the first time each claim was
// added and bound and each pod was mounted and running.
type watcher struct {
	mu    sync.Mutex
	first map[string]time.Time
	pods  []string // pod -> claim via the pod's volume
	claim map[string]string
}

func (w *watcher) mark(k string, now time.Time) {
	if _, ok := w.first[k]; !ok {
		w.first[k] = now
	}
}

func (w *watcher) consume(wi watch.Interface) {
	for ev := range wi.ResultChan() {
		now := time.Now()
		w.mu.Lock()
		switch o := ev.Object.(type) {
		case *corev1.PersistentVolumeClaim:
			w.mark("pvc/"+o.Name+"|added", now)
			if o.Status.Phase == corev1.ClaimBound {
				w.mark("pvc/"+o.Name+"|bound", now)
			}
		case *corev1.Pod:
			if w.claim == nil {
				w.claim = map[string]string{}
			}
			if len(o.Spec.Volumes) > 0 && o.Spec.Volumes[0].PersistentVolumeClaim != nil {
				if _, ok := w.claim[o.Name]; !ok {
					w.pods = append(w.pods, o.Name)
				}
				w.claim[o.Name] = o.Spec.Volumes[0].PersistentVolumeClaim.ClaimName
			}
			for _, cnd := range o.Status.Conditions {
				if cnd.Type == corev1.PodReadyToStartContainers && cnd.Status == corev1.ConditionTrue {
					w.mark("pod/"+o.Name+"|mounted", now)
				}
			}
			if o.Status.Phase == corev1.PodRunning {
				w.mark("pod/"+o.Name+"|running", now)
			}
		}
		w.mu.Unlock()
	}
}

// stages gives the watcher's samples, from each claim's ADDED event.
func (w *watcher) stages() map[string][]time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]time.Duration{}
	for _, pod := range w.pods {
		cl := w.claim[pod]
		added, ok := w.first["pvc/"+cl+"|added"]
		if !ok {
			continue
		}
		for stage, k := range map[string]string{classcheck.StageBound: "pvc/" + cl + "|bound",
			classcheck.StageMounted: "pod/" + pod + "|mounted", classcheck.StageRunning: "pod/" + pod + "|running"} {
			if t, ok := w.first[k]; ok {
				out[stage] = append(out[stage], t.Sub(added))
			}
		}
	}
	return out
}
