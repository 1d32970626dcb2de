package classcheck

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/storbench/storbench/internal/kubekit"
)

func testNode(name, ip string, labels, annotations map[string]string) *corev1.Node {
	l := map[string]string{corev1.LabelHostname: name}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: annotations},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}},
		}}
}

func testRun(t *testing.T, o Options, nodes ...*corev1.Node) *run {
	t.Helper()
	var objs []runtime.Object
	for _, n := range nodes {
		objs = append(objs, n)
	}
	client := fake.NewClientset(objs...)
	r := &run{c: kubekit.NewClusterForClient(client, nil, "storbench"), ns: "storbench", runID: o.RunID, o: o,
		claims: map[string]bool{}, snapshots: map[string]bool{}}
	if err := r.readNodes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// The node-failure check stops only the node the user names, and only
// with its commands on that node's own host: any other inventory host is
// refused before anything is created.
func TestCheckNodeFailureRefusesTheWrongHost(t *testing.T) {
	stop := func(context.Context, string) error { return nil }
	nodes := []*corev1.Node{testNode("pi-1", "192.168.1.11", map[string]string{"node-role.kubernetes.io/control-plane": "true"}, nil),
		testNode("pi-2", "192.168.1.12", nil, nil), testNode("pi-3", "192.168.1.13", nil, nil)}
	cases := []struct {
		name    string
		nf      NodeFailure
		wantErr string
	}{
		{"host named like the node", NodeFailure{Node: "pi-2", HostName: "pi-2", HostAddress: "pi-2"}, ""},
		{"host at the node's address", NodeFailure{Node: "pi-2", HostName: "agent-b", HostAddress: "192.168.1.12"}, ""},
		{"another machine", NodeFailure{Node: "pi-2", HostName: "pi-1", HostAddress: "192.168.1.11"}, "not node pi-2"},
		{"no node named", NodeFailure{HostName: "pi-2"}, "set NodeFailure.Node"},
		{"no such node", NodeFailure{Node: "pi-9", HostName: "pi-9"}, "NodeFailure.Node pi-9"},
		{"control plane, named", NodeFailure{Node: "pi-1", HostName: "pi-1"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nf := tc.nf
			nf.Stop, nf.StopCommand = stop, "sudo /usr/local/bin/k3s-killall.sh"
			r := testRun(t, Options{RunID: "20261128-011500-ab12", NodeFailure: &nf}, nodes...)
			err := r.checkNodeFailure(context.Background())
			var refused *RefusedError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (!errors.As(err, &refused) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got %v, want a refusal naming %q", err, tc.wantErr)
			}
		})
	}
	nf := NodeFailure{Node: "pi-1", Stop: stop, StopCommand: "sudo /usr/local/bin/k3s-killall.sh", OutOfService: true}
	plan := testRun(t, Options{RunID: "20261128-011500-ab12", NodeFailure: &nf, Class: "longhorn"}, nodes...).plan()
	for _, want := range []string{"STOPS node pi-1", "control-plane node: taken because you named it", "only once its workloads are verified gone"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan %q lacks %q", plan, want)
		}
	}
}

// The plan printed before the run says the default profile cordons a node,
// and --no-cordon takes that away; objects carry the whole run ID.
func TestPlanAndNames(t *testing.T) {
	nodes := []*corev1.Node{testNode("a", "10.0.0.1", nil, nil), testNode("b", "10.0.0.2", nil, nil)}
	r := testRun(t, Options{RunID: "20261128-011500-ab12", Class: "longhorn"}, nodes...)
	if p := r.plan(); !strings.Contains(p, "CORDONS") || !strings.Contains(p, kubekit.AnnotationCordonedBy+"=20261128-011500-ab12") || !strings.Contains(p, "--no-cordon") {
		t.Errorf("plan: %s", p)
	}
	noCordon := testRun(t, Options{RunID: "20261128-011500-ab12", Class: "longhorn", NoCordon: true}, nodes...)
	if p := noCordon.plan(); strings.Contains(p, "CORDONS") || !strings.Contains(p, "no node is cordoned") {
		t.Errorf("plan with --no-cordon: %s", p)
	}
	if ch := noCordon.failover(context.Background()); ch.Outcome != Skipped || !strings.Contains(ch.Reason, "--no-cordon") {
		t.Errorf("failover with --no-cordon: %+v", ch)
	}
	other := testRun(t, Options{RunID: "20261128-011500-cd34"}, nodes...)
	if a, b := r.name("pvc"), other.name("pvc"); a == b || !strings.Contains(a, "20261128-011500-ab12") {
		t.Errorf("two runs of one second name a claim %s and %s", a, b)
	}
}

// A starting run names the cordons and taints an earlier run left (killed
// outright), not its own.
func TestEarlierLeftoversNamed(t *testing.T) {
	left := testNode("a", "10.0.0.1", nil, map[string]string{kubekit.AnnotationCordonedBy: "20261127-230000-0001"})
	left.Spec.Unschedulable = true
	tainted := testNode("b", "10.0.0.2", nil, map[string]string{kubekit.AnnotationTaintedBy: "20261127-230000-0002"})
	var heard []string
	r := testRun(t, Options{RunID: "20261128-011500-ab12", Progress: func(m string) { heard = append(heard, m) }}, left, tainted, testNode("c", "10.0.0.3", nil, nil))
	notes := r.earlierLeftovers(context.Background())
	got := strings.Join(notes, "\n")
	for _, want := range []string{"node a: cordon by run 20261127-230000-0001", "node b: out-of-service taint by run 20261127-230000-0002", "storbench cleanup --k8s --run 20261127-230000-0001"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes %q lack %q", got, want)
		}
	}
	if len(heard) != len(notes) {
		t.Errorf("progress heard %d of %d notes", len(heard), len(notes))
	}
}
