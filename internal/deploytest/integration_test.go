package deploytest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	"github.com/storbench/storbench/internal/runner/kube/kubetest"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// On the test cluster of scripts/cluster.sh (scripts/k8s-integration.sh).
const (
	realNode  = "kreal-node"
	realImage = "localhost/kreal/fio:3.33"
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
func TestBaseServerDryRun(t *testing.T) {
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

// benchArgs is the CronJob's storbench command line for the loopback
// cluster: its Kubernetes targets (and their options) replaced by a
// directory on the results volume, the quick suite instead of a long one.
// Everything else (--db, --label) is kept.
func benchArgs(t *testing.T, args []string) []string {
	t.Helper()
	var out []string
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--target", "--nodes", "--rounds", "--namespace", "--suite":
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 || out[0] != "run" {
		t.Fatalf("the CronJob runs %v, not storbench run", args)
	}
	return append(out, "--suite=quick", "--target=/data/scratch")
}

// The CronJob's pod template runs for real on the real node: a Job made
// from it (in the test namespace, its results PVC bound to a hostPath
// volume on the node, a freshly built static storbench mounted into the
// fio image) runs storbench run as the template says (user, security
// context, --db on the PVC, labels) and leaves its database on the volume.
func TestCronJobPodRuns(t *testing.T) {
	c, _ := cluster(t)
	ctx := context.Background()
	cj := render(t, "base").cronJob(t)
	createNamespace(t, c, testNamespace)

	// The node is this machine: its hostPath folders are ours to read.
	binDir := filepath.Dir(buildStorbench(t))
	dataDir := t.TempDir()
	for _, d := range []string{binDir, dataDir} {
		if err := os.Chmod(d, 0o777); err != nil { // the pod runs as the template's non-root user
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dataDir, "scratch"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dataDir, "scratch"), 0o777); err != nil {
		t.Fatal(err)
	}

	pvName := testNamespace + "-results"
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dataDir}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{realNode}}},
			}}}},
		}}
	if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting PV %s: %v", pvName, err)
		}
	})
	// The base's PVC and ServiceAccount, in the test namespace; the PVC
	// is bound to the node's folder.
	var pvc corev1.PersistentVolumeClaim
	render(t, "base").find(t, "PersistentVolumeClaim", "storbench-results", &pvc)
	manual := ""
	pvc.Namespace, pvc.Spec.VolumeName, pvc.Spec.StorageClassName = testNamespace, pvName, &manual
	if _, err := c.CoreV1().PersistentVolumeClaims(testNamespace).Create(ctx, &pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName, Namespace: testNamespace}}
	if _, err := c.CoreV1().ServiceAccounts(testNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "storbench-now", Namespace: testNamespace}, Spec: *cj.Spec.JobTemplate.Spec.DeepCopy()}
	pod := &job.Spec.Template.Spec
	ctr := &pod.Containers[0]
	ctr.Image, ctr.ImagePullPolicy = realImage, corev1.PullNever
	ctr.Command = []string{"/opt/storbench/storbench"}
	ctr.Args = benchArgs(t, ctr.Args)
	ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: "storbench-binary", MountPath: "/opt/storbench", ReadOnly: true})
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "storbench-binary",
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: binDir}}})
	checkArgs(t, "Job", ctr.Args)
	if _, err := c.BatchV1().Jobs(testNamespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	podName, phase := waitJob(t, c, job.Name, 5*time.Minute)
	logs, err := c.CoreV1().Pods(testNamespace).GetLogs(podName, &corev1.PodLogOptions{}).DoRaw(ctx)
	if phase != corev1.PodSucceeded {
		t.Fatalf("the Job's pod %s ended %s: %v\n%s", podName, phase, err, logs)
	}
	var p *corev1.Pod
	if p, err = c.CoreV1().Pods(testNamespace).Get(ctx, podName, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != realNode {
		t.Errorf("the pod ran on %q, want %s", p.Spec.NodeName, realNode)
	}

	// The database the pod wrote, read here.
	st, err := store.Open(ctx, filepath.Join(dataDir, "results.db"))
	if err != nil {
		t.Fatalf("the pod left no database: %v\npod output:\n%s", err, logs)
	}
	defer st.Close()
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	run := runs[0]
	if run.Status != result.StatusComplete || run.Labels["schedule"] != "weekly" || run.Suite != "quick" {
		t.Errorf("run %+v: want a complete quick run labelled schedule=weekly (the template's --label)", run)
	}
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil || len(results) == 0 {
		t.Fatalf("results: %d, %v", len(results), err)
	}
	for _, r := range results {
		if iops, ok := r.Metric(result.MetricIOPS); r.Status != result.StatusComplete || !ok || iops <= 0 || r.Target != "/data/scratch" {
			t.Errorf("result %s on %s: %s, IOPS %v", r.Workload, r.Target, r.Status, iops)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(dataDir, "scratch")); len(left) != 0 {
		t.Errorf("storbench left %v in its target", left)
	}
	var exp bytes.Buffer
	if err := metrics.Export(ctx, st, &exp, metrics.Options{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(exp.String(), "\n"+metrics.NameIOPS+"{"); n != len(uniqueWorkloads(results)) {
		t.Errorf("%d %s series for %d workloads:\n%s", n, metrics.NameIOPS, len(uniqueWorkloads(results)), exp.String())
	}
}

func uniqueWorkloads(rs []result.Result) []string {
	var out []string
	for _, r := range rs {
		if !slices.Contains(out, r.Workload) {
			out = append(out, r.Workload)
		}
	}
	return out
}

// waitJob waits for the Job's pod in testNamespace to succeed or fail and
// returns it.
func waitJob(t *testing.T, c kubernetes.Interface, job string, timeout time.Duration) (string, corev1.PodPhase) {
	t.Helper()
	return waitJobIn(t, c, testNamespace, job, timeout)
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

// The CronJob's pod as the base deploys it, Kubernetes targets included:
// the base applied for real (namespace, RBAC, PVC, CronJob; serve scaled to
// none), then a Job from the CronJob runs storbench run inside the cluster
// with in-cluster configuration and the base's ServiceAccount, on a
// StorageClass whose volume is a folder on the real node. Patched for the
// loopback cluster only: the fio image with a static storbench mounted,
// host networking and the API server's loopback address (a pod there
// cannot reach the Service IP), the test's class, node, namespace and a
// short suite.
func TestCronJobKubeTargets(t *testing.T) {
	c, kc := cluster(t)
	kubectl := testenv.Tool(t, "kubectl", "kubernetes-client", "k8s")
	ctx := context.Background()
	const ns, suffix, class = "storbench-deploytest-k8s", "-dt", "sb-deploytest"

	binDir := filepath.Dir(buildStorbench(t))
	dataDir, volDir := t.TempDir(), t.TempDir()
	for _, d := range []string{binDir, dataDir, volDir} {
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

	// The base, applied for real in its own namespace with its own names.
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
	ctr.Image, ctr.ImagePullPolicy = realImage, corev1.PullNever
	ctr.Command = []string{"/opt/storbench/storbench"}
	var args []string
	for _, a := range ctr.Args {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--target", "--nodes", "--namespace", "--suite":
			continue
		}
		args = append(args, a)
	}
	ctr.Args = append(args, "--suite=quick", "--workloads=rand-read-4k-qd32", "--target=k8s:"+class, "--nodes="+realNode,
		"--namespace="+ns, "--image="+realImage, "--image-pull-policy=Never", "--timeout=2m")
	checkArgs(t, "Job", ctr.Args)
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(strings.TrimPrefix(cfg.Host, "https://"), "http://")
	apiHost, apiPort, _ := strings.Cut(host, ":")
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: apiHost}, corev1.EnvVar{Name: "KUBERNETES_SERVICE_PORT", Value: apiPort})
	ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: "storbench-binary", MountPath: "/opt/storbench", ReadOnly: true})
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "storbench-binary",
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: binDir}}})
	if _, err := c.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	podName, phase := waitJobIn(t, c, ns, job.Name, 5*time.Minute)
	logs, _ := c.CoreV1().Pods(ns).GetLogs(podName, &corev1.PodLogOptions{}).DoRaw(ctx)
	if phase != corev1.PodSucceeded {
		t.Fatalf("the Job's pod %s ended %s:\n%s", podName, phase, logs)
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
		if r.Status != result.StatusComplete || !ok || iops <= 0 || result.LabelNode.Of(r.Labels) != realNode || result.LabelStorageClass.Of(r.Labels) != class {
			t.Errorf("result %s %s on %s: %s, IOPS %v, labels %v", r.Round, r.Workload, r.Target, r.Status, iops, r.Labels)
		}
	}
	// storbench removed its PVC and pod.
	if pvcs, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=storbench"}); err != nil || len(pvcs.Items) != 0 {
		t.Errorf("storbench's PVCs left: %v, %v", pvcs, err)
	}
}
