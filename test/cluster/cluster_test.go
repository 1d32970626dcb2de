package clustertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/test/kubetest"
)

// The cluster's real nodes as test/cluster/cluster.sh names them: the host's
// own, and two in network namespaces; the last one serves the network
// filesystem.
const (
	hostNode = "kreal-node"
	node2    = "kreal-node-2"
	node3    = "kreal-node-3"
)

type harness struct {
	c       kubernetes.Interface
	kc      string
	env     kubetest.ClusterEnv
	ns      string
	kubectl string
}

func setup(t *testing.T) *harness {
	t.Helper()
	c, kc := kubetest.Cluster(t)
	env := kubetest.Env(t)
	if n := len(env.Nodes()); n < 3 {
		t.Fatalf("the cluster has %d real nodes; these tests need 3 (CLUSTER_NODES=3, the default)", n)
	}
	h := &harness{c: c, kc: kc, env: env, ns: fmt.Sprintf("sb-cluster-%x", time.Now().UnixNano()&0xffffff),
		kubectl: filepath.Join(env["KAPI_ROOT"], "bin", "kubectl")}
	ctx := context.Background()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: h.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.CoreV1().Namespaces().Delete(context.Background(), h.ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", h.ns, err)
		}
	})
	return h
}

// podSpec is what the tests vary in a pod.
type podSpec struct {
	name, node, image string
	hostNetwork       bool
	cmd               []string
	pvc               string // mounted at /data
	schedule          bool   // through the scheduler (nodeSelector), not nodeName
}

func (h *harness) pod(t *testing.T, s podSpec) {
	t.Helper()
	zero := int64(0)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: h.ns},
		Spec: corev1.PodSpec{
			HostNetwork: s.hostNetwork, RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{Name: "main", Image: s.image, ImagePullPolicy: corev1.PullNever, Command: s.cmd}},
		}}
	if s.schedule {
		p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: s.node}
	} else {
		p.Spec.NodeName = s.node
	}
	if s.pvc != "" {
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.pvc}}}}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	}
	if _, err := h.c.CoreV1().Pods(h.ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) deletePod(t *testing.T, name string) {
	t.Helper()
	zero := int64(0)
	ctx := context.Background()
	if err := h.c.CoreV1().Pods(h.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if _, err := h.c.CoreV1().Pods(h.ns).Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return
		}
	}
	t.Fatalf("pod %s still there a minute after its deletion", name)
}

// wait polls the pod until ok says so, failing after timeout with its last state.
func (h *harness) wait(t *testing.T, name string, timeout time.Duration, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		p, err := h.c.CoreV1().Pods(h.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if last = p; ok(p) {
			return p
		}
		if p.Status.Phase == corev1.PodFailed {
			t.Fatalf("pod %s failed: %s", name, h.logs(t, name))
		}
	}
	t.Fatalf("pod %s: condition not met within %s; phase %s, events: %s", name, timeout, last.Status.Phase, h.events(t, name))
	return nil
}

func running(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Ready
}
func succeeded(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded }

func (h *harness) logs(t *testing.T, name string) string {
	t.Helper()
	b, err := h.c.CoreV1().Pods(h.ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	return string(b)
}

func (h *harness) events(t *testing.T, name string) string {
	t.Helper()
	ev, err := h.c.CoreV1().Events(h.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, e := range ev.Items {
		msgs = append(msgs, e.Reason+": "+e.Message)
	}
	return strings.Join(msgs, "; ")
}

// exec runs cmd in the pod (through the API server and the node's kubelet).
func (h *harness) exec(t *testing.T, pod string, timeout time.Duration, cmd ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"--kubeconfig", h.kc, "-n", h.ns, "exec", pod, "--"}, cmd...)
	var out, errOut bytes.Buffer
	c := exec.CommandContext(ctx, h.kubectl, args...)
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w: %s", strings.Join(cmd, " "), err, errOut.String())
	}
	return out.String(), nil
}

// clusterSh runs test/cluster/cluster.sh with args (node stop, shape...).
func clusterSh(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", append([]string{"cluster.sh"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (h *harness) nodeReady(t *testing.T, name string) bool {
	t.Helper()
	n, err := h.c.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return kubekit.NodeReady(*n)
}

// iperf3 returns the bits per second iperf3 in pod measured to server.
func (h *harness) iperf3(t *testing.T, pod, server string, seconds int) float64 {
	t.Helper()
	var out string
	var err error
	for try := 0; try < 10; try++ { // the server pod may still be starting to listen
		out, err = h.exec(t, pod, time.Duration(seconds+30)*time.Second, "iperf3", "-c", server, "-t", fmt.Sprint(seconds), "-J")
		if err == nil {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil {
		t.Fatalf("iperf3 to %s: %v\n%s", server, err, out)
	}
	var r struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.End.SumReceived.BitsPerSecond <= 0 {
		t.Fatalf("iperf3 to %s: no result (%v): %s", server, err, out)
	}
	return r.End.SumReceived.BitsPerSecond
}

// fioNet returns the bits per second fio's TCP engine wrote to a listening
// fio on server (the writer's figure: the reader miscounts short reads).
func (h *harness) fioNet(t *testing.T, pod, server string, seconds int) float64 {
	t.Helper()
	var out string
	var err error
	for try := 0; try < 10; try++ {
		out, err = h.exec(t, pod, time.Duration(seconds+30)*time.Second, "fio", "--name=tx", "--ioengine=net", "--protocol=tcp",
			"--hostname="+server, "--port=8765", "--rw=write", "--bs=1m", "--size=100g", "--time_based",
			fmt.Sprintf("--runtime=%ds", seconds), "--output-format=json")
		if err == nil {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil {
		t.Fatalf("fio to %s: %v\n%s", server, err, out)
	}
	var r struct {
		Jobs []struct {
			Write struct {
				BwBytes float64 `json:"bw_bytes"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if i := strings.Index(out, "{"); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Jobs) != 1 || r.Jobs[0].Write.BwBytes <= 0 {
		t.Fatalf("fio to %s: no result (%v): %s", server, err, out)
	}
	return r.Jobs[0].Write.BwBytes * 8
}

func rateBits(t *testing.T, rate string) float64 {
	t.Helper()
	var n float64
	var unit string
	if _, err := fmt.Sscanf(rate, "%g%s", &n, &unit); err != nil {
		t.Fatalf("link rate %q: %v", rate, err)
	}
	mult := map[string]float64{"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[strings.ToLower(unit)]
	if mult == 0 {
		t.Fatalf("link rate %q: unknown unit", rate)
	}
	return n * mult
}

// Two hostNetwork pods on two namespaced nodes: TCP between them crosses
// both nodes' shaped ports at about the shaped rate, fio's TCP engine
// agrees with iperf3 on the same link, and without the shaping the link
// is clearly faster.
func TestClusterShapedLink(t *testing.T) {
	h := setup(t)
	rate := rateBits(t, h.env["RATE"])
	ip3 := h.env.Node(node3, "IP")
	h.pod(t, podSpec{name: "iperf3-server", node: node3, image: h.env["TOOLS_IMAGE"], hostNetwork: true, cmd: []string{"iperf3", "-s", "-B", ip3}})
	h.pod(t, podSpec{name: "fio-server", node: node3, image: h.env["REAL_IMAGE"], hostNetwork: true,
		cmd: []string{"sh", "-c", "while :; do fio --name=rx --ioengine=net --protocol=tcp --listen --port=8765 --rw=read --bs=4k --size=100g >/dev/null 2>&1 || sleep 0.2; done"}})
	h.pod(t, podSpec{name: "iperf3-client", node: node2, image: h.env["TOOLS_IMAGE"], hostNetwork: true})
	h.pod(t, podSpec{name: "fio-client", node: node2, image: h.env["REAL_IMAGE"], hostNetwork: true})
	for _, p := range []string{"iperf3-server", "fio-server", "iperf3-client", "fio-client"} {
		h.wait(t, p, 2*time.Minute, running)
	}
	// The cluster's rate on both ports, whatever a test before this one left.
	clusterSh(t, "node", "shape", node2, h.env["RATE"])
	clusterSh(t, "node", "shape", node3, h.env["RATE"])
	shaped := h.iperf3(t, "iperf3-client", ip3, 5)
	fio := h.fioNet(t, "fio-client", ip3, 5)
	t.Logf("link %s: iperf3 %.0f Mbit/s, fio net %.0f Mbit/s (fio/iperf3 %.3f)", h.env["RATE"], shaped/1e6, fio/1e6, fio/shaped)
	if shaped < 0.75*rate || shaped > 1.05*rate {
		t.Errorf("iperf3 across the %s link: %.0f Mbit/s, not about the shaped rate", h.env["RATE"], shaped/1e6)
	}
	if r := fio / shaped; r < 0.85 || r > 1.15 {
		t.Errorf("fio's TCP engine %.0f Mbit/s vs iperf3 %.0f Mbit/s on the same link: ratio %.3f, beyond 15%%", fio/1e6, shaped/1e6, r)
	}

	t.Cleanup(func() {
		clusterSh(t, "node", "shape", node2, h.env["RATE"])
		clusterSh(t, "node", "shape", node3, h.env["RATE"])
	})
	clusterSh(t, "node", "unshape", node2)
	clusterSh(t, "node", "unshape", node3)
	free := h.iperf3(t, "iperf3-client", ip3, 3)
	t.Logf("unshaped: iperf3 %.0f Mbit/s", free/1e6)
	if free < 1.5*shaped {
		t.Errorf("unshaped link %.0f Mbit/s is not clearly faster than shaped %.0f Mbit/s", free/1e6, shaped/1e6)
	}

	// A rate of the test's choosing, on one port only: that port is the bottleneck.
	clusterSh(t, "node", "shape", node2, "200mbit")
	slow := h.iperf3(t, "iperf3-client", ip3, 3)
	t.Logf("%s shaped to 200mbit: iperf3 %.0f Mbit/s", node2, slow/1e6)
	if slow < 0.75*200e6 || slow > 1.05*200e6 {
		t.Errorf("a 200mbit port gave %.0f Mbit/s", slow/1e6)
	}
}

// waitNode waits until the node's Ready condition is ready, returning how long it took.
func (h *harness) waitNode(t *testing.T, name string, ready bool, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for h.nodeReady(t, name) != ready {
		if time.Since(start) > limit {
			t.Fatalf("%s: Ready still %v after %s", name, !ready, limit)
		}
		time.Sleep(500 * time.Millisecond)
	}
	return time.Since(start)
}

// A node whose link is cut goes NotReady within the short grace (its
// kubelet cannot renew its lease) and Ready again once the link is back.
func TestClusterLinkCutRestore(t *testing.T) {
	h := setup(t)
	grace, err := time.ParseDuration(h.env["NODE_GRACE"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clusterSh(t, "node", "restore", node3) })
	clusterSh(t, "node", "cut", node3)
	d := h.waitNode(t, node3, false, grace+15*time.Second)
	t.Logf("%s NotReady %.1f s after its link was cut (grace %s)", node3, d.Seconds(), grace)
	clusterSh(t, "node", "restore", node3)
	d = h.waitNode(t, node3, true, time.Minute)
	t.Logf("%s Ready %.1f s after its link came back", node3, d.Seconds())
}

// A node's sshd answers on the node's own address, as an inventory host
// would, and a command there sees the node's network namespace.
func TestClusterSSHIntoNode(t *testing.T) {
	kubetest.Shared(t) // an sshd of its own in a node: shares the cluster
	h := setup(t)
	for _, tool := range []string{"ssh", "ssh-keygen", "sshd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s: %v (cluster.sh install installs openssh)", tool, err)
		}
	}
	key := filepath.Join(t.TempDir(), "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	clusterSh(t, "sshd", node2, key+".pub")
	t.Cleanup(func() { clusterSh(t, "sshd", node2, "stop") })
	ip := h.env.Node(node2, "IP")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ssh", "-i", key, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "root@"+ip, "ip -4 -o addr show dev eth0").CombinedOutput()
	if err != nil {
		t.Fatalf("ssh root@%s: %v %s", ip, err, out)
	}
	if !strings.Contains(string(out), " "+ip+"/") {
		t.Fatalf("ssh root@%s: eth0 there is %q, not the node's address", ip, out)
	}
}

// A pod's IP on another node is reachable from pods on the bridge
// networks of the two other nodes (routes between the nodes' pod subnets).
func TestClusterPodIPAcrossNodes(t *testing.T) {
	kubetest.Shared(t) // iperf3 must answer, at any rate: shares the cluster
	h := setup(t)
	h.pod(t, podSpec{name: "server", node: node3, image: h.env["TOOLS_IMAGE"], cmd: []string{"iperf3", "-s"}})
	h.pod(t, podSpec{name: "client-2", node: node2, image: h.env["TOOLS_IMAGE"]})
	h.pod(t, podSpec{name: "client-1", node: hostNode, image: h.env["TOOLS_IMAGE"]})
	srv := h.wait(t, "server", 2*time.Minute, running)
	if !strings.HasPrefix(srv.Status.PodIP, strings.TrimSuffix(h.env.Node(node3, "POD_CIDR"), "0/24")) {
		t.Fatalf("pod IP %s is not in %s's pod subnet %s", srv.Status.PodIP, node3, h.env.Node(node3, "POD_CIDR"))
	}
	for _, c := range []string{"client-2", "client-1"} {
		h.wait(t, c, 2*time.Minute, running)
		bps := h.iperf3(t, c, srv.Status.PodIP, 1)
		t.Logf("%s -> pod %s on %s: %.0f Mbit/s", c, srv.Status.PodIP, node3, bps/1e6)
	}
}

// cgroupProcs lists the processes left anywhere in a node's cgroup tree.
func cgroupProcs(t *testing.T, cgroup string) []string {
	t.Helper()
	var procs []string
	root := filepath.Join("/sys/fs/cgroup/pids", cgroup)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		procs = append(procs, strings.Fields(string(b))...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return procs
}

// nodeProcs lists the processes on this machine that belong to a real node
// by their command line: any naming the node's state directory (its
// containerd, shims, kubelet, the CSI node plugin's sockets under the
// kubelet's root) or the node by name as kubelet and the CSI node plugin do.
// It finds them wherever they run, in the node's cgroup or not.
func nodeProcs(t *testing.T, env kubetest.ClusterEnv, name string) map[string]string {
	t.Helper()
	state := filepath.Dir(filepath.Dir(env.Node(name, "KUBELET_ROOT"))) // <state>/kubelet/root
	if state == "." || state == "/" {
		t.Fatalf("cluster.env has no KUBELET_ROOT for %s", name)
	}
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	procs := map[string]string{}
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 { // gone meanwhile, or a zombie
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		for _, a := range args {
			if strings.Contains(a, state+"/") || a == "--node-id="+name || a == "--hostname-override="+name {
				procs[filepath.Base(filepath.Dir(f))] = strings.Join(args, " ")
				break
			}
		}
	}
	return procs
}

// csiNodePlugin is the pid of the test CSI driver's node plugin of a node, or "".
func csiNodePlugin(procs map[string]string, name string) string {
	for pid, cmd := range procs {
		if strings.Contains(cmd, "testcsi --role=node") && strings.Contains(cmd, "--node-id="+name+" ") {
			return pid
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A real node stopped as a dead machine goes NotReady within the
// controller's short grace, nothing of it keeps running (kubelet,
// containerd, its containers and its CSI node plugin, in its cgroup or
// not), and it comes back Ready with its CSI node plugin serving again.
func TestClusterNodeStopStart(t *testing.T) {
	h := setup(t)
	grace, err := time.ParseDuration(h.env["NODE_GRACE"])
	if err != nil {
		t.Fatal(err)
	}
	h.pod(t, podSpec{name: "victim", node: node2, image: h.env["TOOLS_IMAGE"]})
	h.wait(t, "victim", 2*time.Minute, running)
	cg := h.env.Node(node2, "CGROUP")
	if len(cgroupProcs(t, cg)) == 0 {
		t.Fatalf("no process in %s's cgroup %s before the stop", node2, cg)
	}
	plugin := csiNodePlugin(nodeProcs(t, h.env, node2), node2)
	if plugin == "" {
		t.Fatalf("no CSI node plugin of %s before the stop", node2)
	}
	if !contains(cgroupProcs(t, cg), plugin) {
		t.Errorf("the CSI node plugin of %s (pid %s) is not in the node's cgroup %s", node2, plugin, cg)
	}
	t.Cleanup(func() {
		if !h.nodeReady(t, node2) {
			clusterSh(t, "node", "start", node2)
		}
	})
	start := time.Now()
	clusterSh(t, "node", "stop", node2)
	if left := cgroupProcs(t, cg); len(left) > 0 {
		t.Errorf("processes of the stopped node still alive: %v", left)
	}
	sock := h.env.Node(node2, "CONTAINERD_SOCK")
	if out, _ := exec.Command("pgrep", "-f", sock).Output(); len(out) > 0 {
		t.Errorf("processes naming the stopped node's containerd socket: %s", out)
	}
	if left := nodeProcs(t, h.env, node2); len(left) > 0 {
		t.Errorf("processes of the stopped node still alive (kubelet, containerd, shims, CSI node plugin): %v", left)
	}
	limit := grace + 15*time.Second // the monitor period and the last lease renewal
	for !func() bool { return !h.nodeReady(t, node2) }() {
		if time.Since(start) > limit {
			t.Fatalf("%s still Ready %s after its stop (grace %s)", node2, time.Since(start).Round(time.Second), grace)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("%s NotReady %.1f s after the stop (grace %s)", node2, time.Since(start).Seconds(), grace)

	back := time.Now()
	clusterSh(t, "node", "start", node2)
	for !h.nodeReady(t, node2) {
		if time.Since(back) > 2*time.Minute {
			t.Fatalf("%s not Ready 2 minutes after its start", node2)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("%s Ready %.1f s after its start", node2, time.Since(back).Seconds())
	plugin = csiNodePlugin(nodeProcs(t, h.env, node2), node2)
	if plugin == "" || !contains(cgroupProcs(t, cg), plugin) {
		t.Errorf("no CSI node plugin of %s in its cgroup after its start (pid %q)", node2, plugin)
	}
	// The plugin is registered with the new kubelet and serves it: a
	// node-local volume of the test driver is made, staged and mounted there.
	h.pvcSized(t, "after-start", "testcsi-local", "300Mi")
	h.pod(t, podSpec{name: "mounter", node: node2, image: h.env["TOOLS_IMAGE"], pvc: "after-start", schedule: true,
		cmd: []string{"sh", "-c", "echo written-after-start > /data/f && cat /data/f"}})
	h.wait(t, "mounter", 3*time.Minute, succeeded)
	if got := strings.TrimSpace(h.logs(t, "mounter")); got != "written-after-start" {
		t.Errorf("the pod on the restarted node's CSI volume printed %q", got)
	}
	h.deletePod(t, "mounter")
	if m := h.env.Node(node2, "NETFS"); m != "" {
		if _, err := os.ReadDir(m); err != nil {
			t.Errorf("the node's network filesystem mount after its start: %v", err)
		}
	}
	h.deletePod(t, "victim")
}

// linkBytes is a counter ("rx" or "tx") of a host-side veth.
func linkBytes(t *testing.T, link, dir string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/class/net", link, "statistics", dir+"_bytes"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if _, err := fmt.Sscan(string(b), &n); err != nil {
		t.Fatalf("%s %s_bytes: %v", link, dir, err)
	}
	return n
}

func (h *harness) pvc(t *testing.T, name, class string) {
	t.Helper()
	h.pvcSized(t, name, class, "64Mi")
}

func (h *harness) pvcSized(t *testing.T, name, class, size string) {
	t.Helper()
	_, err := h.c.CoreV1().PersistentVolumeClaims(h.ns).Create(context.Background(), &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // before the namespace goes, so that the provisioner removes the volume
		if err := h.c.CoreV1().PersistentVolumeClaims(h.ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting PVC %s: %v", name, err)
		}
	})
}

func (h *harness) boundPV(t *testing.T, pvc string) *corev1.PersistentVolume {
	t.Helper()
	ctx := context.Background()
	c, err := h.c.CoreV1().PersistentVolumeClaims(h.ns).Get(ctx, pvc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.VolumeName == "" {
		t.Fatalf("PVC %s not bound", pvc)
	}
	pv, err := h.c.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pv
}

// A local-path volume is made on the node its first pod runs on and pinned
// there: a pod on another node is refused by the scheduler for the
// volume's node affinity.
func TestClusterLocalPathPinned(t *testing.T) {
	kubetest.Shared(t) // its own namespace and claim: shares the cluster
	h := setup(t)
	h.pvc(t, "local", h.env["LOCAL_PATH_CLASS"])
	h.pod(t, podSpec{name: "writer", node: node2, image: h.env["TOOLS_IMAGE"], pvc: "local", schedule: true,
		cmd: []string{"sh", "-c", "echo written on " + node2 + " > /data/f && cat /data/f"}})
	h.wait(t, "writer", 3*time.Minute, succeeded)
	pv := h.boundPV(t, "local")
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil ||
		!strings.Contains(fmt.Sprint(pv.Spec.NodeAffinity.Required.NodeSelectorTerms), node2) {
		t.Fatalf("local-path PV %s is not pinned to %s: %+v", pv.Name, node2, pv.Spec.NodeAffinity)
	}
	h.deletePod(t, "writer")
	h.pod(t, podSpec{name: "elsewhere", node: node3, image: h.env["TOOLS_IMAGE"], pvc: "local", schedule: true,
		cmd: []string{"cat", "/data/f"}})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		ev := h.events(t, "elsewhere")
		// v1.33's wording; older schedulers said "had volume node affinity conflict"
		if strings.Contains(ev, "FailedScheduling") && (strings.Contains(ev, "didn't match PersistentVolume's node affinity") ||
			strings.Contains(ev, "volume node affinity conflict")) {
			t.Logf("refused: %s", ev)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no FailedScheduling with the volume node affinity reason for a pod on %s; events: %s", node3, ev)
		}
	}
	if p, err := h.c.CoreV1().Pods(h.ns).Get(context.Background(), "elsewhere", metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodPending {
		t.Fatalf("the pod on the other node: %v %v, want Pending", p.Status.Phase, err)
	}
}

// A netfs volume is provisioned on demand, written through the network
// filesystem on one node, lands on the serving node's export, and is read
// back with the same sha256 on another node.
func TestClusterNetfsMoves(t *testing.T) {
	kubetest.Shared(t) // a lower bound on the links' bytes, which others only raise: shares the cluster
	h := setup(t)
	// The class's mount is kreal-node-2's: its bytes cross kreal-node-2's port and the
	// serving node's, seen from the bridge as received on one and sent on the other.
	toServer := linkBytes(t, h.env.Node(node2, "LINK"), "rx") + linkBytes(t, h.env.Node(node3, "LINK"), "tx")
	h.pvc(t, "shared", h.env["NETFS_CLASS"])
	h.pod(t, podSpec{name: "writer", node: node2, image: h.env["TOOLS_IMAGE"], pvc: "shared", schedule: true,
		cmd: []string{"sh", "-c", "dd if=/dev/urandom of=/data/blob bs=1M count=8 2>/dev/null && sha256sum /data/blob"}})
	h.wait(t, "writer", 3*time.Minute, succeeded)
	written := strings.Fields(h.logs(t, "writer"))
	if len(written) == 0 {
		t.Fatal("the writer printed no sha256")
	}
	if moved := linkBytes(t, h.env.Node(node2, "LINK"), "rx") + linkBytes(t, h.env.Node(node3, "LINK"), "tx") - toServer; moved < 2*8<<20 {
		t.Errorf("8 MiB written on netfs, but only %d bytes crossed the two ports to the server", moved)
	}
	h.deletePod(t, "writer")
	h.pod(t, podSpec{name: "reader", node: hostNode, image: h.env["TOOLS_IMAGE"], pvc: "shared", schedule: true,
		cmd: []string{"sha256sum", "/data/blob"}})
	h.wait(t, "reader", 3*time.Minute, succeeded)
	read := strings.Fields(h.logs(t, "reader"))
	if len(read) == 0 || read[0] != written[0] {
		t.Fatalf("read %v on %s, written %v on %s", read, hostNode, written, node2)
	}
	pv := h.boundPV(t, "shared")
	if pv.Spec.HostPath == nil {
		t.Fatalf("netfs PV %s: not a hostPath volume: %+v", pv.Name, pv.Spec.PersistentVolumeSource)
	}
	f, err := os.Open(filepath.Join(h.env["NETFS_EXPORT"], filepath.Base(pv.Spec.HostPath.Path), "blob"))
	if err != nil {
		t.Fatalf("the volume's file on the serving node's export: %v", err)
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != written[0] {
		t.Fatalf("the export holds sha256 %s, the writer wrote %s", got, written[0])
	}
}
