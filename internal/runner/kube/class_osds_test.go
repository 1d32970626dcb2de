package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/runner"
)

// TestClassOptions: a class target's ceph-conf and ceph-pool options are
// read into its CephAccess, the class name kept apart; an unknown,
// repeated or empty option is refused, naming the target.
func TestClassOptions(t *testing.T) {
	for _, tc := range []struct {
		target, class string
		want          CephAccess
		refused       string
	}{
		{target: "k8s:cephfs", class: "cephfs"},
		{target: "k8s:cephfs?ceph-conf=/etc/ceph/x.conf", class: "cephfs", want: CephAccess{Conf: "/etc/ceph/x.conf"}},
		{target: "k8s:rook-rbd?ceph-conf=/a/c.conf&ceph-pool=replicapool", class: "rook-rbd", want: CephAccess{Conf: "/a/c.conf", Pool: "replicapool"}},
		{target: "k8s:rook-rbd?ceph-toolbox=rook-ceph", class: "rook-rbd", want: CephAccess{Toolbox: "rook-ceph"}},
		{target: "k8s:rook-rbd?ceph-toolbox=rook-ceph&ceph-conf=/a/c.conf", refused: "options ceph-conf and ceph-toolbox"},
		{target: "k8s:cephfs?ceph-cnf=/x", refused: `unknown option "ceph-cnf"`},
		{target: "k8s:cephfs?ceph-pool=a&ceph-pool=b", refused: "option ceph-pool needs one value"},
		{target: "k8s:cephfs?ceph-pool=", refused: "option ceph-pool needs one value"},
		{target: "k8s:?ceph-pool=a", refused: "write k8s:STORAGECLASS"},
		{target: "k8s:a/b?ceph-pool=a", refused: "write k8s:STORAGECLASS"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			s, ok, err := Kind{}.Parse(tc.target)
			if !ok {
				t.Fatal("not the k8s kind's")
			}
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("error %v, want one saying %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := s.(ClassSpec)
			if c.Class() != tc.class || c.Ceph() != tc.want || classOf(s) != tc.class || withCeph(TargetOptions{}, s).Ceph != tc.want {
				t.Errorf("class %q, options %+v: want %q, %+v", c.Class(), c.Ceph(), tc.class, tc.want)
			}
		})
	}
}

// TestClassPool: the pool behind a class and why: ceph-csi's parameters
// (dataPool before pool), the annotations of a class that is not
// ceph-csi's, else the target's option; a class naming none and no
// option is not Ceph's.
func TestClassPool(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sc          storagev1.StorageClass
		option      string
		pool, where string
	}{
		{name: "ceph-csi rbd", sc: storagev1.StorageClass{Provisioner: "rook-ceph.rbd.csi.ceph.com", Parameters: map[string]string{"pool": "replicapool"}},
			pool: "replicapool", where: "class parameter pool"},
		{name: "ceph-csi rbd data pool", sc: storagev1.StorageClass{Provisioner: "rbd.csi.ceph.com", Parameters: map[string]string{"pool": "meta", "dataPool": "ec-data"}},
			pool: "ec-data", where: "class parameter dataPool"},
		{name: "ceph-csi cephfs pool", sc: storagev1.StorageClass{Provisioner: "cephfs.csi.ceph.com", Parameters: map[string]string{"fsName": "fs", "pool": "fs-data1"}},
			pool: "fs-data1", where: "class parameter pool"},
		{name: "annotation", sc: storagev1.StorageClass{Provisioner: "rancher.io/local-path", ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"storbench.io/ceph-pool": "rbd"}}},
			option: "other", pool: "rbd", where: "class annotation storbench.io/ceph-pool"},
		{name: "option", sc: storagev1.StorageClass{Provisioner: "rook-ceph.rbd.csi.ceph.com"}, option: "replicapool",
			pool: "replicapool", where: "the target's ceph-pool option"},
		{name: "not Ceph's", sc: storagev1.StorageClass{Provisioner: "rancher.io/local-path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, why, err := classPool(context.Background(), &tc.sc, noCeph(t), tc.option)
			if err != nil || pool != tc.pool || why != tc.where {
				t.Errorf("pool %q (%s), %v: want %q (%s)", pool, why, err, tc.pool, tc.where)
			}
		})
	}
}

// TestClassOSDsUnreachable: a Ceph class whose Ceph the ceph CLI here
// cannot reach (a ceph.conf that does not exist; or no ceph CLI at all)
// keeps its telemetry as it was, with a notice naming the option; no
// error.
func TestClassOSDsUnreachable(t *testing.T) {
	tgt := NewTarget(nil, "rook-rbd", "n1", 1, TargetOptions{Timeout: 20 * time.Second,
		Ceph: CephAccess{Conf: t.TempDir() + "/absent.conf"}})
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "rook-rbd"}, Provisioner: "rook-ceph.rbd.csi.ceph.com", Parameters: map[string]string{"pool": "replicapool"}}
	nodes := func() (runner.Sampler, error) { return nil, nil }
	p := &runner.Prepared{Labels: map[string]string{}, Telemetry: nodes}
	tgt.classOSDs(context.Background(), sc, p)
	if len(p.Notices) != 1 || !strings.Contains(p.Notices[0], "no OSD figures for class rook-rbd") || !strings.Contains(p.Notices[0], "k8s:rook-rbd?ceph-conf=PATH") {
		t.Errorf("notices %q: want one naming the class and the ceph-conf option", p.Notices)
	}
	if s, err := p.Telemetry(); s != nil || err != nil {
		t.Errorf("telemetry changed: %v, %v", s, err)
	}
}

// noCeph is a ceph CLI the test does not expect to be run.
func noCeph(t *testing.T) ceph.Client {
	return ceph.Client{Cmder: unexpected{t}}
}

type unexpected struct{ t *testing.T }

func (u unexpected) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	u.t.Errorf("ran %s %v", name, args)
	return execx.Local{}.Command(ctx, "false")
}

// recordedCeph answers the ceph CLI with real Ceph's outputs
// (internal/ceph/testdata: a standalone Ceph of three OSDs on
// sbceph-node-1..3, pool rbd), counting each OSD's benches.
type recordedCeph struct {
	mu      sync.Mutex
	benches map[string]int
}

func (r *recordedCeph) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	r.mu.Lock()
	defer r.mu.Unlock()
	var words []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--conf" || args[i] == "--id" { // the client's, not the command's
			i++
			continue
		}
		if args[i] == "-f" {
			break
		}
		words = append(words, args[i])
	}
	file := map[string]string{
		"osd tree": "osd-tree.json", "osd metadata": "osd-metadata.json",
		"osd pool ls detail": "osd-pool-ls-detail.json", "pg ls-by-pool rbd": "pg-ls-by-pool-rbd.json", "fsid": "fsid.json",
	}[strings.Join(words, " ")]
	if len(words) > 2 && words[0] == "tell" && words[2] == "bench" {
		r.benches[words[1]]++
		file = "osd-bench-" + strings.TrimPrefix(words[1], "osd.") + ".json"
	}
	if file == "" {
		return execx.Local{}.Command(ctx, "false")
	}
	return execx.Local{}.Command(ctx, "cat", filepath.Join("..", "..", "ceph", "testdata", file))
}

// TestOSDBenches: the targets of a run that share OSDBenches bench each
// pool's OSDs once, all of them getting the pool's three OSDs on their
// hosts with their benches; without one each target benches again.
func TestOSDBenches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		benches *OSDBenches
		each    int
	}{{"shared", &OSDBenches{}, 1}, {"none", nil, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordedCeph{benches: map[string]int{}}
			cl := ceph.Client{Cmder: rec}
			for range 3 {
				p, err := tc.benches.bench(context.Background(), CephAccess{Pool: "rbd"}, cl)
				if err != nil {
					t.Fatal(err)
				}
				var hosts []string
				for _, o := range p.OSDs() {
					hosts = append(hosts, o.Host)
					if o.BenchBytesPerSec < 1e8 || !o.Up {
						t.Errorf("osd.%d: %+v: want up and benched", o.ID, o)
					}
				}
				if strings.Join(hosts, ",") != "sbceph-node-1,sbceph-node-2,sbceph-node-3" {
					t.Errorf("OSD hosts %v, want sbceph-node-1..3", hosts)
				}
			}
			for _, osd := range []string{"osd.0", "osd.1", "osd.2"} {
				if rec.benches[osd] != tc.each {
					t.Errorf("benches %v: want %d of each OSD", rec.benches, tc.each)
				}
			}
		})
	}
}

// toolboxExec answers the ceph CLI in Rook's toolbox pod (the last words
// of each exec's command, after "ceph") from recordedCeph, and records
// the pod and container of every exec.
// Outside the toolbox (a fio pod), "command -v ceph" succeeds when
// podHasCeph, and the pod's ceph answers as the toolbox's.
type toolboxExec struct {
	rec        *recordedCeph
	podHasCeph bool
	mu         sync.Mutex
	pods       []string
}

func (x *toolboxExec) Exec(ctx context.Context, req kubekit.ExecRequest) error {
	if !strings.HasPrefix(req.Pod, "rook-ceph-tools") && slices.Contains(req.Command, "command -v ceph") {
		if x.podHasCeph {
			return nil
		}
		return errors.New("exit status 1")
	}
	x.mu.Lock()
	x.pods = append(x.pods, req.Namespace+"/"+req.Pod+"/"+req.Container)
	x.mu.Unlock()
	i := -1 // the program after the exec wrapper's arguments (its comm is "ceph" too)
	for j, w := range req.Command {
		if w == "ceph" {
			i = j
		}
	}
	if i < 0 {
		return fmt.Errorf("not the ceph CLI: %q", req.Command)
	}
	var out bytes.Buffer
	if err := x.rec.Command(ctx, "ceph", req.Command[i+1:]...).SetStdout(&out).Run(); err != nil {
		return err
	}
	_, err := io.Copy(req.Stdout, &out)
	return err
}

// toolboxPod is a pod of Rook's toolbox in namespace rook-ceph: running
// and ready unless phase says otherwise.
func toolboxPod(name string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "rook-ceph", Labels: map[string]string{"app": "rook-ceph-tools"}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "rook-ceph-tools"}}},
		Status: corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
}

// TestClassCephToolbox: a class target reaches the Ceph behind its class
// with the ceph CLI in Rook's toolbox (recorded outputs of a real Ceph):
// when the target names the toolbox's namespace (the host's CLI is then
// not tried), and, for a Rook class (clusterID) whose Ceph the host's CLI
// does not reach, by itself in the class's namespace. Without a running
// toolbox the error says what was tried.
func TestClassCephToolbox(t *testing.T) {
	rbdClass := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "rook-rbd"}, Provisioner: "rook-ceph.rbd.csi.ceph.com",
		Parameters: map[string]string{"pool": "rbd", "clusterID": "rook-ceph"}}
	absent := t.TempDir() + "/absent.conf"
	for _, tc := range []struct {
		name   string
		access CephAccess
		pods   []runtime.Object
		where  string
		err    []string
	}{
		{name: "named", access: CephAccess{Toolbox: "rook-ceph"}, pods: []runtime.Object{toolboxPod("rook-ceph-tools-b", corev1.PodRunning), toolboxPod("rook-ceph-tools-a", corev1.PodPending)},
			where: "the ceph CLI in Rook's toolbox pod rook-ceph/rook-ceph-tools-b"},
		{name: "the host's first, then the class's namespace", access: CephAccess{Conf: absent}, pods: []runtime.Object{toolboxPod("rook-ceph-tools-a", corev1.PodRunning)},
			where: "the ceph CLI in Rook's toolbox pod rook-ceph/rook-ceph-tools-a"},
		{name: "no toolbox running", access: CephAccess{Conf: absent}, pods: []runtime.Object{toolboxPod("rook-ceph-tools-a", corev1.PodPending)},
			err: []string{"the ceph CLI on storbench's host (--conf " + absent + ") did not reach its Ceph", "no running, ready pod of Rook's toolbox in namespace rook-ceph: rook-ceph-tools-a (Pending, not ready)"}},
		{name: "none", access: CephAccess{Toolbox: "rook-ceph"},
			err: []string{"no pod labelled app=rook-ceph-tools in namespace rook-ceph"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &toolboxExec{rec: &recordedCeph{benches: map[string]int{}}}
			c := kubekit.NewClusterForClient(fake.NewClientset(tc.pods...), x, "storbench")
			tgt := NewTarget(c, "rook-rbd", "n1", 1, TargetOptions{Timeout: 20 * time.Second, Ceph: tc.access})
			r, err := tgt.classCeph(context.Background(), rbdClass)
			if !wantErrors(t, err, tc.err) {
				return
			}
			if r.where != tc.where || r.pool != "rbd" || r.key != (CephAccess{Toolbox: "rook-ceph", Pool: "rbd"}) {
				t.Errorf("reached with %q, pool %q, key %+v: want %q, rbd", r.where, r.pool, r.key, tc.where)
			}
			if l := r.placement.Labels(); l["replicas"] != "3" || l["replica_nodes"] != "sbceph-node-1,sbceph-node-2,sbceph-node-3" {
				t.Errorf("placement labels %v: want size 3 on sbceph-node-1..3", l)
			}
			for _, p := range x.pods {
				if !strings.HasSuffix(p, "/rook-ceph-tools") || !strings.HasPrefix(p, "rook-ceph/") {
					t.Errorf("exec in %s: want the toolbox's container", p)
				}
			}
		})
	}
}

// wantErrors checks err against wants: an error saying each of them, or
// (wants empty) none, fatal otherwise. It returns whether the test goes on
// (no error wanted and none came).
func wantErrors(t *testing.T, err error, wants []string) bool {
	t.Helper()
	if len(wants) == 0 {
		if err != nil {
			t.Fatal(err)
		}
		return true
	}
	for _, want := range wants {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v: want one saying %q", err, want)
		}
	}
	return false
}
