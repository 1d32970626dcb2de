package deploycheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/storbench/storbench/tools/internal/toolenv"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"
)

func chartDir(t *testing.T) string {
	return filepath.Join(toolenv.Repo(t), "deploy", "chart", "storbench")
}

type object = map[string]any

// decode splits YAML documents into objects.
func decode(t *testing.T, where string, data []byte) []object {
	t.Helper()
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []object
	for {
		var o object
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

// renderChart renders the chart as helm install would, with vals over
// values.yaml.
func renderChart(t *testing.T, release, namespace string, vals map[string]any) []object {
	t.Helper()
	ch, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	values, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1},
		chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, values)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []object
	for _, n := range names {
		if strings.HasSuffix(n, ".yaml") {
			out = append(out, decode(t, n, []byte(files[n]))...)
		}
	}
	return out
}

// renderKustomization builds a kustomization folder (relative to deploy/)
// with kustomize's own library, as kubectl apply -k does.
func renderKustomization(t *testing.T, dir string) []object {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	y, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, dir, y)
}

// helmLabels are the labels and selector keys a chart adds for Helm's
// sake (which release owns an object), and the base for kustomize's.
var helmLabels = []string{"app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart", "app.kubernetes.io/part-of"}

// normalize removes what may differ between the chart and the base
// (object names, labels, and release keys in selectors) and keys objects
// by kind.
func normalize(t *testing.T, objs []object, rename func(string) string) map[string]any {
	t.Helper()
	out := map[string]any{}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			m := map[string]any{}
			for k, e := range x {
				if slices.Contains(helmLabels, k) || k == "labels" {
					continue
				}
				m[k] = walk(e)
			}
			return m
		case []any:
			var l []any
			for _, e := range x {
				l = append(l, walk(e))
			}
			return l
		case string:
			return rename(x)
		default:
			return v
		}
	}
	for _, o := range objs {
		// Through JSON: numbers and maps of one type on both sides.
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var n object
		if err := json.Unmarshal(b, &n); err != nil {
			t.Fatal(err)
		}
		meta := n["metadata"].(map[string]any)
		key := n["kind"].(string) + "/" + rename(meta["name"].(string))
		if _, dup := out[key]; dup {
			t.Fatalf("two objects %s", key)
		}
		out[key] = walk(n)
	}
	return out
}

func keys(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}

// differences lists every object that differs between a and b.
func differences(aName string, a map[string]any, bName string, b map[string]any) []string {
	var out []string
	if !slices.Equal(keys(a), keys(b)) {
		out = append(out, fmt.Sprintf("objects differ:\n%s: %v\n%s: %v", aName, keys(a), bName, keys(b)))
	}
	for _, k := range keys(a) {
		if bv, ok := b[k]; ok && !reflect.DeepEqual(a[k], bv) {
			ay, _ := sigsyaml.Marshal(a[k])
			by, _ := sigsyaml.Marshal(bv)
			out = append(out, fmt.Sprintf("%s differs:\n--- %s\n%s\n--- %s\n%s", k, aName, ay, bName, by))
		}
	}
	return out
}

// same fails the test for every difference between a and b.
func same(t *testing.T, aName string, a map[string]any, bName string, b map[string]any) {
	t.Helper()
	for _, d := range differences(aName, a, bName, b) {
		t.Error(d)
	}
}

func TestChartLints(t *testing.T) {
	for _, vals := range []map[string]any{nil, {"serviceMonitor": map[string]any{"enabled": true}, "createNamespace": true}} {
		lint := action.NewLint()
		lint.Strict = true
		lint.Namespace = "storbench"
		res := lint.Run([]string{chartDir(t)}, vals)
		for _, m := range res.Messages {
			t.Logf("helm lint: %s", m)
		}
		if len(res.Errors) > 0 {
			t.Errorf("helm lint --strict with %v: %v", vals, res.Errors)
		}
		if res.TotalChartsLinted != 1 {
			t.Errorf("helm lint linted %d charts", res.TotalChartsLinted)
		}
	}
}

// The chart with its defaults, installed as release "storbench" in
// namespace storbench, makes the base's objects; with another release
// name, the same objects under that name.
func TestChartEqualsBase(t *testing.T) {
	base := normalize(t, renderKustomization(t, filepath.Join(toolenv.Repo(t), "deploy", "base")), func(s string) string { return s })
	for _, release := range []string{"storbench", "lab"} {
		t.Run(release, func(t *testing.T) {
			prefix := release + "-storbench"
			rename := func(s string) string { return strings.ReplaceAll(s, prefix, "storbench") }
			if release == "storbench" {
				rename = func(s string) string { return s }
			}
			chart := normalize(t, renderChart(t, release, "storbench", map[string]any{"createNamespace": true}), rename)
			same(t, "deploy/base", base, "chart", chart)
		})
	}
	// The comparison sees a change in any value: a schedule, a class.
	t.Run("differences-seen", func(t *testing.T) {
		for _, vals := range []map[string]any{{"schedule": "0 1 * * *"}, {"classes": []any{"local-path"}}, {"securityContext": map[string]any{"runAsUser": 0}}} {
			vals["createNamespace"] = true
			chart := normalize(t, renderChart(t, "storbench", "storbench", vals), func(s string) string { return s })
			if d := differences("deploy/base", base, "chart", chart); len(d) == 0 {
				t.Errorf("chart with %v: no difference from the base seen", vals)
			}
		}
	})
	// The opt-in RBAC: the chart's values make what the base's overlay and
	// component add, and nothing of it by default.
	t.Run("class-node-changes", func(t *testing.T) {
		overlay := normalize(t, renderKustomization(t, filepath.Join(toolenv.Repo(t), "deploy", "overlays", "class-checks")), func(s string) string { return s })
		chart := normalize(t, renderChart(t, "storbench", "storbench", map[string]any{"createNamespace": true,
			"rbac": map[string]any{"classNodeChanges": true}}), func(s string) string { return s })
		same(t, "deploy/overlays/class-checks", overlay, "chart", chart)
		if _, ok := base["ClusterRole/storbench-class-node-changes"]; ok {
			t.Error("the base binds the class checks' node changes by default")
		}
	})
	t.Run("kubelet-stats", func(t *testing.T) {
		withStats := normalize(t, renderChart(t, "storbench", "storbench", map[string]any{"createNamespace": true,
			"rbac": map[string]any{"kubeletStats": true}}), func(s string) string { return s })
		component := normalize(t, decode(t, "kubelet-stats", readFile(t, filepath.Join(toolenv.Repo(t), "deploy", "components", "kubelet-stats", "rbac.yaml"))), func(s string) string { return s })
		for k, v := range component {
			if !reflect.DeepEqual(withStats[k], v) {
				t.Errorf("%s: chart with rbac.kubeletStats differs from deploy/components/kubelet-stats", k)
			}
		}
		if _, ok := base["ClusterRole/storbench-kubelet-stats"]; ok {
			t.Error("the base binds nodes/proxy by default")
		}
	})
	t.Run("servicemonitor", func(t *testing.T) {
		overlay := normalize(t, renderKustomization(t, filepath.Join(toolenv.Repo(t), "deploy", "overlays", "prometheus-operator")), func(s string) string { return s })
		chart := normalize(t, renderChart(t, "storbench", "storbench", map[string]any{"createNamespace": true,
			"serviceMonitor": map[string]any{"enabled": true}}), func(s string) string { return s })
		same(t, "deploy/overlays/prometheus-operator", overlay, "chart", chart)
	})
}

// images returns every container image of the objects, and the --image
// arguments of storbench run.
func images(objs []object) (imgs, fio []string) {
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if c, ok := x["containers"].([]any); ok {
				for _, e := range c {
					ctr := e.(map[string]any)
					imgs = append(imgs, ctr["image"].(string))
					args, _ := ctr["args"].([]any)
					for _, a := range args {
						if s, _ := a.(string); strings.HasPrefix(s, "--image=") {
							fio = append(fio, strings.TrimPrefix(s, "--image="))
						}
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, o := range objs {
		walk(o)
	}
	return imgs, fio
}

// One value names the registry of both images: the chart's image.registry
// (and the tag), the base's images: entry.
func TestRegistryInOnePlace(t *testing.T) {
	imgs, fio := images(renderChart(t, "storbench", "storbench", nil))
	if want := []string{"ghcr.io/storbench/storbench:v0.1.0", "ghcr.io/storbench/storbench:v0.1.0"}; !slices.Equal(imgs, want) || len(fio) != 0 {
		t.Errorf("chart defaults: images %v, --image %v; want %v and storbench's own fio default", imgs, fio, want)
	}
	imgs, fio = images(renderChart(t, "storbench", "storbench", map[string]any{"image": map[string]any{"registry": "registry.example.com/lab", "tag": "v9.9.9"}}))
	if want := []string{"registry.example.com/lab/storbench:v9.9.9", "registry.example.com/lab/storbench:v9.9.9"}; !slices.Equal(imgs, want) ||
		!slices.Equal(fio, []string{"registry.example.com/lab/storbench-fio:v9.9.9"}) {
		t.Errorf("chart with image.registry: images %v, --image %v", imgs, fio)
	}
	imgs, _ = images(renderKustomization(t, filepath.Join(toolenv.Repo(t), "deploy", "base")))
	if want := []string{"ghcr.io/storbench/storbench:v0.1.0", "ghcr.io/storbench/storbench:v0.1.0"}; !slices.Equal(imgs, want) {
		t.Errorf("base: images %v, want %v", imgs, want)
	}
	if ch, err := loader.Load(chartDir(t)); err != nil || ch.Metadata.AppVersion != "v0.1.0" {
		t.Errorf("the chart's appVersion %v (%v) is not the base's tag", ch.Metadata.AppVersion, err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
