package deploytest

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/testenv"
)

const namespace = "storbench"

// The base's objects, by kind and name.
var baseObjects = []string{
	"Namespace/storbench", "ServiceAccount/storbench", "Role/storbench", "RoleBinding/storbench",
	"ClusterRole/storbench-read", "ClusterRoleBinding/storbench-read",
	"PersistentVolumeClaim/storbench-results", "CronJob/storbench", "Deployment/storbench-serve", "Service/storbench-serve",
	"ClusterRole/storbench-telemetry", "ClusterRoleBinding/storbench-telemetry", // optional: node network counters (issue 24)
	// classes --measure (issue 25)
	"Role/storbench-classes", "RoleBinding/storbench-classes", "ClusterRole/storbench-classes", "ClusterRoleBinding/storbench-classes",
}

func kindNames(objs rendered) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

// allows reports whether rules grant verb on resource (with subresource
// as "pods/exec") in group.
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if (slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) &&
			(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) &&
			(slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
			return true
		}
	}
	return false
}

// dbVolume returns the PVC claim behind the mount holding path in pod.
func dbVolume(t *testing.T, where string, pod corev1.PodSpec, c corev1.Container, path string) string {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	t.Errorf("%s: --db %s is on no PVC mount (mounts %+v)", where, path, c.VolumeMounts)
	return ""
}

func TestBase(t *testing.T) {
	objs := render(t, "base")
	if got, want := kindNames(objs), slices.Sorted(slices.Values(baseObjects)); !slices.Equal(got, want) {
		t.Errorf("objects:\n got %v\nwant %v", got, want)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace", "ClusterRole", "ClusterRoleBinding":
		default:
			if o.GetNamespace() != namespace {
				t.Errorf("%s/%s in namespace %q, want %s", o.GetKind(), o.GetName(), o.GetNamespace(), namespace)
			}
		}
	}

	t.Run("rbac", func(t *testing.T) { checkRBAC(t, objs) })
	var db, benchClaim string
	t.Run("cronjob", func(t *testing.T) { db, benchClaim = checkCronJob(t, objs) })
	t.Run("serve", func(t *testing.T) { checkServe(t, objs, db, benchClaim) })
}

// checkRBAC: every permission the Kubernetes runner requires, namespaced
// ones by the Role, the others by the ClusterRole, bound to the
// ServiceAccount the CronJob runs as.
func checkRBAC(t *testing.T, objs rendered) {
	role, cluster := objs.rules(t, "Role", "storbench"), objs.rules(t, "ClusterRole", "storbench-read")
	for _, p := range kube.Permissions {
		rules := cluster
		if p.Namespaced {
			rules = role
		}
		res := p.Resource
		if p.Subresource != "" {
			res += "/" + p.Subresource
		}
		if p.Required && !allows(rules, p.Group, res, p.Verb) {
			t.Errorf("RBAC does not grant %s (%s)", p, p.Why)
		}
	}
	for _, b := range []string{"RoleBinding/storbench", "ClusterRoleBinding/storbench-read"} {
		kind, name, _ := strings.Cut(b, "/")
		var rb rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
		objs.find(t, kind, name, &rb)
		want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "storbench", Namespace: namespace}}
		if !slices.Equal(rb.Subjects, want) {
			t.Errorf("%s binds %+v, want the storbench ServiceAccount", b, rb.Subjects)
		}
	}

}

// checkCronJob checks the benchmark's pod and returns the database it
// writes and the PVC holding it.
func checkCronJob(t *testing.T, objs rendered) (db, claim string) {
	cj := objs.cronJob(t)
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("CronJob concurrencyPolicy %q: two runs would measure the same disks at once", cj.Spec.ConcurrencyPolicy)
	}
	bench := cj.Spec.JobTemplate.Spec.Template.Spec
	if bench.ServiceAccountName != "storbench" {
		t.Errorf("CronJob runs as %q, want the storbench ServiceAccount", bench.ServiceAccountName)
	}
	run := checkArgs(t, "CronJob", append(bench.Containers[0].Command, bench.Containers[0].Args...))
	if run.Name() != "run" {
		t.Errorf("CronJob runs storbench %s, want run", run.Name())
	}
	db = run.Flags().Lookup("db").Value.String()
	return db, dbVolume(t, "CronJob", bench, bench.Containers[0], db)
}

// checkServe checks the dashboard's pod reads the database the CronJob
// writes, on the same PVC, and is reachable through the Service with a
// token.
func checkServe(t *testing.T, objs rendered, db, benchClaim string) {
	bench := objs.cronJob(t).Spec.JobTemplate.Spec.Template.Spec
	d := objs.deployment(t)
	pod := d.Spec.Template.Spec
	serve := checkArgs(t, "Deployment", append(pod.Containers[0].Command, pod.Containers[0].Args...))
	if serve.Name() != "serve" {
		t.Fatalf("Deployment runs storbench %s, want serve", serve.Name())
	}
	if got := serve.Flags().Lookup("db").Value.String(); got != db {
		t.Errorf("serve reads %s, the CronJob writes %s", got, db)
	}
	if claim := dbVolume(t, "Deployment", pod, pod.Containers[0], db); claim != benchClaim || claim != "storbench-results" {
		t.Errorf("the CronJob writes on PVC %q, serve reads PVC %q; want both storbench-results", benchClaim, claim)
	}
	if d.Spec.Strategy.Type != "Recreate" {
		t.Errorf("Deployment strategy %q: a rolling update would start a second pod on the ReadWriteOnce volume", d.Spec.Strategy.Type)
	}
	// The CronJob's pod prefers the dashboard's node (one RWO volume).
	aff := bench.Affinity
	if aff == nil || aff.PodAffinity == nil || len(aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		t.Fatal("CronJob pod has no pod affinity to the dashboard")
	}
	term := aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if !subset(term.LabelSelector.MatchLabels, d.Spec.Template.Labels) || term.TopologyKey != corev1.LabelHostname {
		t.Errorf("CronJob pod affinity %+v does not select the dashboard's pods (%v) by node", term, d.Spec.Template.Labels)
	}

	// serve listens where the Service sends, with the token of the Secret.
	listen := serve.Flags().Lookup("listen").Value.String()
	_, port, _ := strings.Cut(listen, ":")
	c := pod.Containers[0]
	if len(c.Ports) != 1 || strconv.Itoa(int(c.Ports[0].ContainerPort)) != port {
		t.Errorf("serve --listen %s, container ports %+v", listen, c.Ports)
	}
	svc := objs.service(t)
	if !subset(svc.Spec.Selector, d.Spec.Template.Labels) || svc.Spec.Ports[0].TargetPort.String() != c.Ports[0].Name {
		t.Errorf("Service %+v does not reach the serve pod (labels %v, port %+v)", svc.Spec, d.Spec.Template.Labels, c.Ports)
	}
	if tokenSecret(t, d) == "" {
		t.Error("serve listens beyond loopback without a token from a Secret")
	}
}

// tokenSecret returns the Secret serve's --token-file is mounted from,
// "" when it reads none.
func tokenSecret(t *testing.T, d *appsv1.Deployment) string {
	t.Helper()
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	serve := checkArgs(t, "Deployment", append(c.Command, c.Args...))
	file := serve.Flags().Lookup("token-file").Value.String()
	if file == "" {
		return ""
	}
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				return v.Secret.SecretName
			}
		}
	}
	t.Errorf("serve --token-file %s is on no Secret mount", file)
	return ""
}

func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// The overlay adds a ServiceMonitor that scrapes serve's /metrics with the
// token serve requires.
func TestPrometheusOperatorOverlay(t *testing.T) {
	objs := render(t, "overlays/prometheus-operator")
	want := slices.Sorted(slices.Values(append(slices.Clone(baseObjects), "ServiceMonitor/storbench")))
	if got := kindNames(objs); !slices.Equal(got, want) {
		t.Errorf("objects:\n got %v\nwant %v", got, want)
	}
	var sm *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ServiceMonitor" {
			sm = o
		}
	}
	if sm == nil {
		t.Fatal("no ServiceMonitor")
	}
	svc := objs.service(t)
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if !subset(sel, svc.Labels) || sm.GetNamespace() != namespace {
		t.Errorf("ServiceMonitor selects %v in %s; the Service has labels %v in %s", sel, sm.GetNamespace(), svc.Labels, svc.Namespace)
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("ServiceMonitor endpoints: %v", eps)
	}
	ep := eps[0].(map[string]any)
	secret, _, _ := unstructured.NestedString(ep, "authorization", "credentials", "name")
	if ep["port"] != svc.Spec.Ports[0].Name || ep["path"] != "/metrics" || secret != tokenSecret(t, objs.deployment(t)) {
		t.Errorf("ServiceMonitor endpoint %v: want port %s, path /metrics, the token Secret serve reads", ep, svc.Spec.Ports[0].Name)
	}
}

// The systemd units pass systemd-analyze verify (with a real storbench
// binary where they name /usr/local/bin/storbench) and run real commands.
func TestSystemdUnits(t *testing.T) {
	analyze := testenv.Tool(t, "systemd-analyze", "systemd")
	dir := filepath.Join(deployDir(t), "systemd")
	units, err := filepath.Glob(filepath.Join(dir, "storbench-*"))
	if err != nil || len(units) != 3 {
		t.Fatalf("units: %v, %v", units, err)
	}
	bin := buildStorbench(t)
	tmp := t.TempDir()
	var copies []string
	exec := regexp.MustCompile(`(?m)^(ExecStart|ExecStopPost)=/usr/local/bin/storbench (.*)$`)
	commands := 0
	for _, u := range units {
		data, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range exec.FindAllStringSubmatch(string(data), -1) {
			t.Run(filepath.Base(u)+"/"+m[1], func(t *testing.T) { checkArgs(t, filepath.Base(u)+" "+m[1], strings.Fields(m[2])) })
			commands++
		}
		cp := filepath.Join(tmp, filepath.Base(u))
		if err := os.WriteFile(cp, []byte(strings.ReplaceAll(string(data), "/usr/local/bin/storbench", bin)), 0o644); err != nil {
			t.Fatal(err)
		}
		copies = append(copies, cp)
	}
	if commands != 3 {
		t.Errorf("%d storbench commands in the units, want run, export and serve", commands)
	}
	out, err := runOut(analyze, append([]string{"verify", "--man=no"}, copies...)...)
	if err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func runOut(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// The Grafana dashboard queries only metrics storbench emits, and shows
// each figure family.
func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir(t), "grafana", "storbench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("storbench.json: %v", err)
	}
	var queries []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && (k == "expr" || k == "query" || k == "definition") {
					queries = append(queries, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(dash)
	if len(queries) < 8 {
		t.Fatalf("only %d queries found: %v", len(queries), queries)
	}
	known := metrics.Names()
	used := map[string]bool{}
	name := regexp.MustCompile(`\bstorbench_[a-z0-9_]+`)
	for _, q := range queries {
		for _, n := range name.FindAllString(q, -1) {
			if !slices.Contains(known, n) {
				t.Errorf("query %q names %s, which storbench does not emit (it emits %v)", q, n, known)
			}
			used[n] = true
		}
	}
	for _, n := range []string{metrics.NameIOPS, metrics.NameBandwidth, metrics.NameLatency, metrics.NameSyncP99, metrics.NameLastRun, metrics.NameVerdictStatus, metrics.NameRegression} {
		if !used[n] {
			t.Errorf("the dashboard does not show %s (it shows %v)", n, slices.Sorted(maps.Keys(used)))
		}
	}
}
