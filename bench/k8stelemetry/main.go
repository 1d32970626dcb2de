// Command k8stelemetry measures what node telemetry costs on a Kubernetes
// target of test/cluster/cluster.sh's cluster (real nodes): storbench's own CPU
// time (this process: the engine runs in it, fio runs in the pod) and its
// requests to the API server, per node-second of workload, with telemetry
// off, on with host-network sampler pods, and on with the kubelet's
// Summary API (a namespace whose Pod Security level is baseline). One
// target: local-path on kreal-node-2 with kreal-node-3 named as its
// replica node, so two nodes are sampled. The modes alternate (ABCCBA...)
// so drift favours none. Run it through run.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
)

func main() {
	seconds := flag.Int("seconds", 20, "workload runtime")
	reps := flag.Int("reps", 2, "repetitions of each mode")
	image := flag.String("image", "localhost/kreal/fio:3.33", "fio image on the nodes")
	flag.Parse()
	if err := run(*seconds, *reps, *image); err != nil {
		fmt.Fprintln(os.Stderr, "bench/k8stelemetry:", err)
		os.Exit(1)
	}
}

// counter counts the API requests of the clients made from one
// configuration, by kind; each transport it wraps is its own counted.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

type counted struct {
	c  *counter
	rt http.RoundTripper
}

func (t counted) RoundTrip(r *http.Request) (*http.Response, error) {
	t.c.count(r)
	return t.rt.RoundTrip(r)
}

func (c *counter) count(r *http.Request) {
	kind := r.Method + " other"
	switch p := r.URL.Path; {
	case strings.Contains(p, "/proxy/stats/summary"):
		kind = "summary"
	case strings.HasSuffix(p, "/exec"):
		kind = "exec"
	case strings.Contains(p, "/pods"):
		kind = r.Method + " pods"
	}
	c.mu.Lock()
	c.n[kind]++
	c.mu.Unlock()
}

func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type mode struct {
	name      string
	telemetry bool
	ns        string
}

func run(seconds, reps int, image string) error {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	cnt := &counter{n: map[string]int{}}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return counted{cnt, rt} }
	base, err := kubekit.NewCluster(cfg, "default", "storbench")
	if err != nil {
		return err
	}
	psa := "storbench-bench-psa"
	if _, err := base.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: psa,
		Labels: map[string]string{kubekit.PodSecurityEnforce: "baseline"}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer base.Client.CoreV1().Namespaces().Delete(context.Background(), psa, metav1.DeleteOptions{})
	suite, err := spec.Parse([]byte(fmt.Sprintf(`name: telemetry-cost
workloads:
  - {name: randread, rw: randread, bs: 4KiB, size: 64MiB, runtime: %ds, time_based: true, ioengine: psync, direct: false}
`, seconds)), "bench")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-k8stelemetry-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "r.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	modes := []mode{{"off", false, "storbench"}, {"sampler", true, "storbench"}, {"summary", true, psa}}
	type total struct {
		cpu, wall time.Duration
		req       map[string]int
		nodeSec   float64
	}
	totals := map[string]*total{}
	for rep := 0; rep < reps; rep++ {
		order := modes
		if rep%2 == 1 {
			order = []mode{modes[2], modes[1], modes[0]}
		}
		for _, m := range order {
			c, err := kubekit.NewCluster(cfg, "default", m.ns)
			if err != nil {
				return err
			}
			opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: image, PullPolicy: corev1.PullNever}
			target := runner.Labelled(kube.NewTarget(c, "local-path", "kreal-node-2", 1, opts), map[string]string{
				string(result.LabelReplicaNodes): "kreal-node-3"})
			cnt.take()
			cpu0, t0 := cpuTime(), time.Now()
			run, err := (&engine.Engine{Store: st, Observer: engine.Silent{}}).Run(ctx, engine.Plan{Suite: suite,
				Targets: []runner.Target{target}, Repeat: 1, Rounds: []string{result.RoundIsolated}, Telemetry: m.telemetry})
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			cpu, wall, req := cpuTime()-cpu0, time.Since(t0), cnt.take()
			rs, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
			if err != nil || len(rs) != 1 {
				return fmt.Errorf("%s: results %d %v", m.name, len(rs), err)
			}
			nodes := 2.0
			if tel := rs[0].Telemetry; m.telemetry && tel != nil {
				fmt.Fprintf(os.Stderr, "%s: network from %s; other nodes %d\n", m.name, tel.Sources["network"], len(tel.Nodes))
			}
			tot := totals[m.name]
			if tot == nil {
				tot = &total{req: map[string]int{}}
				totals[m.name] = tot
			}
			tot.cpu += cpu
			tot.wall += wall
			tot.nodeSec += nodes * float64(seconds)
			for k, v := range req {
				tot.req[k] += v
			}
			fmt.Fprintf(os.Stderr, "%s rep %d: cpu %.2f s, wall %.1f s, requests %v\n", m.name, rep+1, cpu.Seconds(), wall.Seconds(), req)
		}
	}
	off := totals["off"]
	fmt.Printf("| mode | storbench CPU per run | over telemetry off, per node-second | API requests per run | over off, per node-second | of which |\n|---|---|---|---|---|---|\n")
	for _, m := range modes {
		t := totals[m.name]
		n := float64(reps)
		var reqs, offReqs int
		for _, v := range t.req {
			reqs += v
		}
		for _, v := range off.req {
			offReqs += v
		}
		keys := slices(t.req)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %.1f", k, float64(t.req[k])/n))
		}
		fmt.Printf("| %s | %.2f s | %.1f ms | %.1f | %.2f | %s |\n", m.name, t.cpu.Seconds()/n,
			float64((t.cpu-off.cpu).Milliseconds())/t.nodeSec, float64(reqs)/n, float64(reqs-offReqs)/t.nodeSec, strings.Join(parts, ", "))
	}
	return nil
}

func slices(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
