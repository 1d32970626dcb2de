package deploytest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
	"github.com/storbench/storbench/test/kubetest"
)

// On the test cluster of test/cluster/cluster.sh (scripts/k8s-integration.sh).
const (
	realNode = "kreal-node"
	// testNamespace stands for storbench's namespace, so these tests do
	// not meet the Kubernetes runner's tests, which use storbench's own.
	testNamespace = "storbench-deploytest"
	// dryRunNamespace is the dry run's, apart so that testNamespace
	// being deleted does not get in the way.
	dryRunNamespace = "storbench-deploytest-dry"
)

// cluster returns a client of the loopback cluster and its kubeconfig.
func cluster(t *testing.T) (kubernetes.Interface, string) { return kubetest.Cluster(t) }

// testOverlay writes a kustomization that puts the base in namespace ns
// and returns its folder.
func testOverlay(t *testing.T, ns string) string {
	t.Helper()
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(deployDir(t), "base")) // kustomize refuses absolute paths
	if err != nil {
		t.Fatal(err)
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n  - %s\n", ns, base)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// createNamespace creates namespace name (waiting for an earlier one of
// that name to be deleted) and deletes it, with everything in it, when the
// test ends.
func createNamespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		_, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsAlreadyExists(err) || time.Now().After(deadline) {
			t.Fatalf("creating namespace %s: %v", name, err)
		}
	}
	t.Cleanup(func() {
		fg := metav1.DeletePropagationForeground
		if err := c.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
}

// The API server accepts every object of the base (server-side dry run:
// admission, validation and defaulting, nothing stored).
func TestClusterBaseServerDryRun(t *testing.T) {
	kubetest.Shared(t) // a server-side dry run stores nothing: shares the cluster
	c, kc := cluster(t)
	kubectl := testenv.Tool(t, "kubectl", "kubernetes-client", "k8s")
	createNamespace(t, c, dryRunNamespace)
	cmd := exec.Command(kubectl, "apply", "--dry-run=server", "-k", testOverlay(t, dryRunNamespace))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=server -k deploy/base: %v\n%s", err, out)
	}
	for _, want := range []string{"cronjob.batch/storbench", "deployment.apps/storbench-serve", "service/storbench-serve",
		"persistentvolumeclaim/storbench-results", "role.rbac.authorization.k8s.io/storbench", "clusterrole.rbac.authorization.k8s.io/storbench-read"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("dry run did not apply %s:\n%s", want, out)
		}
	}
}

// waitJobIn waits for the Job's pod in ns to succeed or fail and returns it.
func waitJobIn(t *testing.T, c kubernetes.Interface, testNamespace, job string, timeout time.Duration) (string, corev1.PodPhase) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	var last corev1.PodPhase
	var name string
	for time.Now().Before(deadline) {
		pods, err := c.CoreV1().Pods(testNamespace).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			name, last = p.Name, p.Status.Phase
			if last == corev1.PodSucceeded || last == corev1.PodFailed {
				return name, last
			}
		}
		time.Sleep(2 * time.Second)
	}
	events, _ := c.CoreV1().Events(testNamespace).List(ctx, metav1.ListOptions{})
	var msgs []string
	for _, e := range events.Items {
		msgs = append(msgs, e.InvolvedObject.Name+": "+e.Reason+": "+e.Message)
	}
	t.Fatalf("the Job's pod %q still %s after %s; events:\n%s", name, last, timeout, strings.Join(msgs, "\n"))
	return "", ""
}

// The base as a cluster user deploys it, from the images a release build
// makes: the storbench and storbench-fio images (built by tools/, for this
// machine's platform, tagged with the base's tag) imported into the real
// node's containerd, the base applied for real (namespace, RBAC, PVC,
// CronJob, dashboard), then a Job from the CronJob runs storbench run
// inside the cluster from the storbench image, with the base's security
// context, in-cluster configuration and ServiceAccount, on a
// StorageClass whose volume is a folder on the real node; its fio pod runs
// the storbench-fio image storbench picks by default. The dashboard then
// starts from the same image over the database the Job wrote and answers
// /healthz and /metrics. Patched for the loopback cluster only: host
// networking with the API server's loopback address (a pod there cannot
// reach the Service IP) and a free port for the dashboard, the test's
// class, node, namespace and a short suite.
func TestClusterCronJobKubeTargets(t *testing.T) {
	kubetest.Shared(t) // its own namespace, class, PVs and roles (-dt): shares the cluster
	c, kc := cluster(t)
	kubectl := testenv.Tool(t, "kubectl", "kubernetes-client", "k8s")
	ctx := context.Background()
	const ns, suffix, class = "storbench-deploytest-k8s", "-dt", "sb-deploytest"

	cj0 := render(t, "base").cronJob(t)
	imgs := releaseImages(t, cj0.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image)

	dataDir, volDir := t.TempDir(), t.TempDir()
	for _, d := range []string{dataDir, volDir} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	nodeAffinity := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{realNode}}},
	}}}}
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc}
	if _, err := c.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.StorageV1().StorageClasses().Delete(context.Background(), class, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting StorageClass %s: %v", class, err)
		}
	})
	pvs := []*corev1.PersistentVolume{
		// The benchmark's volume, for the PVC storbench makes.
		{ObjectMeta: metav1.ObjectMeta{Name: class + "-pv"}, Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Gi")}, StorageClassName: class,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: volDir}}, NodeAffinity: nodeAffinity}},
		// The results database's volume, bound to the base's PVC.
		{ObjectMeta: metav1.ObjectMeta{Name: ns + "-results"}, Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:               &corev1.ObjectReference{Namespace: ns, Name: "storbench-results" + suffix},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dataDir}}, NodeAffinity: nodeAffinity}},
	}
	for _, pv := range pvs {
		if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := c.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting PV %s: %v", pv.Name, err)
			}
		})
	}

	// The base, applied for real in its own namespace with its own names;
	// the dashboard waits (no replicas) for the database.
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(deployDir(t), "base"))
	if err != nil {
		t.Fatal(err)
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nnameSuffix: %s\nresources:\n  - %s\nreplicas:\n  - {name: storbench-serve, count: 0}\n", ns, suffix, base)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	apply := exec.Command(kubectl, "apply", "-k", dir)
	apply.Env = append(os.Environ(), "KUBECONFIG="+kc)
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply -k: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		del := exec.Command(kubectl, "delete", "-k", dir, "--ignore-not-found", "--wait=true", "--timeout=2m")
		del.Env = append(os.Environ(), "KUBECONFIG="+kc)
		if out, err := del.CombinedOutput(); err != nil {
			t.Errorf("kubectl delete -k: %v\n%s", err, out)
		}
	})

	cj, err := c.BatchV1().CronJobs(ns).Get(ctx, "storbench"+suffix, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "storbench-now", Namespace: ns}, Spec: *cj.Spec.JobTemplate.Spec.DeepCopy()}
	pod := &job.Spec.Template.Spec
	pod.HostNetwork, pod.DNSPolicy = true, corev1.DNSClusterFirstWithHostNet
	ctr := &pod.Containers[0]
	if ctr.Image != imgs.storbench || len(ctr.Command) != 0 {
		t.Fatalf("the CronJob runs %s %v; the release built %s", ctr.Image, ctr.Command, imgs.storbench)
	}
	var args []string
	for _, a := range ctr.Args {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--target", "--nodes", "--namespace", "--suite":
			continue
		}
		args = append(args, a)
	}
	// No --image: storbench's default is the storbench-fio image of its own
	// version, the one imported.
	ctr.Args = append(args, "--suite=quick", "--workloads=rand-read-4k-qd32", "--target=k8s:"+class, "--nodes="+realNode,
		"--namespace="+ns, "--timeout=2m")
	checkArgs(t, "Job", ctr.Args)
	apiHost, apiPort := apiAddress(t, kc)
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: apiHost}, corev1.EnvVar{Name: "KUBERNETES_SERVICE_PORT", Value: apiPort})
	if _, err := c.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	podName, phase := waitJobIn(t, c, ns, job.Name, 5*time.Minute)
	logs, _ := c.CoreV1().Pods(ns).GetLogs(podName, &corev1.PodLogOptions{}).DoRaw(ctx)
	if phase != corev1.PodSucceeded {
		t.Fatalf("the Job's pod %s ended %s:\n%s", podName, phase, logs)
	}
	if p, err := c.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if sc := p.Spec.SecurityContext; p.Spec.NodeName != realNode || sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 65532 ||
		p.Spec.Containers[0].SecurityContext == nil || !*p.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("the Job's pod ran on %q with security context %+v / %+v; want the base's on %s", p.Spec.NodeName, sc, p.Spec.Containers[0].SecurityContext, realNode)
	}

	st, err := store.Open(ctx, filepath.Join(dataDir, "results.db"))
	if err != nil {
		t.Fatalf("the pod left no database: %v\npod output:\n%s", err, logs)
	}
	defer st.Close()
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil || len(runs) != 1 || runs[0].Status != result.StatusComplete || runs[0].Labels["schedule"] != "weekly" {
		t.Fatalf("runs: %+v, %v\npod output:\n%s", runs, err, logs)
	}
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{runs[0].ID}})
	if err != nil || len(results) == 0 {
		t.Fatalf("results: %d, %v", len(results), err)
	}
	for _, r := range results {
		iops, ok := r.Metric(result.MetricIOPS)
		if r.Status != result.StatusComplete || !ok || iops <= 0 || result.LabelNode.Of(r.Labels) != realNode || result.LabelStorageClass.Of(r.Labels) != class ||
			result.LabelImage.Of(r.Labels) != imgs.fio || !strings.HasPrefix(result.LabelFioVersion.Of(r.Labels), "fio-") {
			t.Errorf("result %s %s on %s: %s, IOPS %v, labels %v; want image %s and its fio version", r.Round, r.Workload, r.Target, r.Status, iops, r.Labels, imgs.fio)
		}
	}
	// storbench removed its PVC and pod.
	if pvcs, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=storbench"}); err != nil || len(pvcs.Items) != 0 {
		t.Errorf("storbench's PVCs left: %v, %v", pvcs, err)
	}

	t.Run("dashboard", func(t *testing.T) { checkDashboard(t, c, ns, suffix, imgs.storbench, apiHost) })
}

// apiAddress is the API server's host and port from the kubeconfig.
func apiAddress(t *testing.T, kubeconfig string) (string, string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(strings.TrimPrefix(cfg.Host, "https://"), "http://")
	apiHost, apiPort, _ := strings.Cut(host, ":")
	return apiHost, apiPort
}

// checkDashboard starts the base's dashboard (scaled to one, the token
// Secret made as the base's comment says) from the storbench image over
// the database the Job wrote, on a free port of the node's (host)
// network, and asks it for /healthz and, with the token, /metrics.
func checkDashboard(t *testing.T, c kubernetes.Interface, ns, suffix, image, host string) {
	ctx := context.Background()
	token := "deploytest-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	d, err := c.AppsV1().Deployments(ns).Get(ctx, "storbench-serve"+suffix, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secretName := d.Spec.Template.Spec.Volumes[1].Secret.SecretName
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns}, StringData: map[string]string{"token": token}}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	pod := &d.Spec.Template.Spec
	pod.HostNetwork = true
	ctr := &pod.Containers[0]
	if ctr.Image != image {
		t.Fatalf("the dashboard runs %s; the release built %s", ctr.Image, image)
	}
	for i, a := range ctr.Args {
		if strings.HasPrefix(a, "--listen=") {
			ctr.Args[i] = fmt.Sprintf("--listen=%s:%d", host, port)
		}
	}
	ctr.Ports[0].ContainerPort = int32(port)
	one := int32(1)
	d.Spec.Replicas = &one
	if _, err := c.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		cur, err := c.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err == nil && cur.Status.ReadyReplicas == 1 {
			break
		}
		if time.Now().After(deadline) {
			events, _ := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			var msgs []string
			for _, e := range events.Items {
				msgs = append(msgs, e.InvolvedObject.Name+": "+e.Reason+": "+e.Message)
			}
			t.Fatalf("the dashboard is not Ready after 3 minutes (%v); events:\n%s", err, strings.Join(msgs, "\n"))
		}
		time.Sleep(2 * time.Second)
	}
	base := fmt.Sprintf("http://%s:%d", host, port)
	get := func(path, bearer string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/healthz", ""); code != http.StatusOK {
		t.Errorf("/healthz: %d %s", code, body)
	}
	if code, _ := get("/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	code, body := get("/metrics", token)
	if code != http.StatusOK || !strings.Contains(body, "\n"+metrics.NameIOPS+"{") {
		t.Errorf("/metrics with the token: %d, no %s series:\n%s", code, metrics.NameIOPS, body)
	}
}
