package kube

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

func TestParseRBDEngine(t *testing.T) {
	tests := []struct {
		target                          string
		pool, image, secret, rookNS, id string
		wantErr                         string
	}{
		{target: "k8s:rbd:bench", pool: "bench", rookNS: DefaultRookNamespace},
		{target: "k8s:rbd:bench/vm-1?secret=ceph/client-conf&id=bench", pool: "bench", image: "vm-1", secret: "ceph/client-conf", rookNS: DefaultRookNamespace, id: "bench"},
		{target: "k8s:rbd:replicapool?rook=storage", pool: "replicapool", rookNS: "storage"},
		{target: "k8s:rbd:bench?secret=conf", pool: "bench", secret: "conf", rookNS: DefaultRookNamespace},
		{target: "k8s:rbd:", wantErr: "no pool"},
		{target: "k8s:rbd:bench/", wantErr: "an empty image name"},
		{target: "k8s:rbd:bench/ns/img", wantErr: "hold no '/'"},
		{target: "k8s:rbd:bench?conf=/etc/ceph/ceph.conf", wantErr: `unknown setting "conf"`},
		{target: "k8s:rbd:bench?secret=a&rook=b", wantErr: "not both"},
		{target: "k8s:rbd:bench?secret=", wantErr: "wants one value"},
		{target: "k8s:rbd:bench?secret=a/b/c", wantErr: "secret=NAMESPACE/NAME"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			sp, ok, err := Kind{}.Parse(tt.target)
			if !ok {
				t.Fatal("not recognised")
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "k8s:rbd:POOL") {
					t.Fatalf("err %v, want %q and the syntax", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e := sp.(EngineSpec).engine.(*rbdEngine)
			if e.pool != tt.pool || e.image != tt.image || e.secret != tt.secret || e.rookNS != tt.rookNS || e.id != tt.id {
				t.Errorf("engine %+v", e)
			}
			if sp.String() != tt.target {
				t.Errorf("String() = %s", sp.String())
			}
			want := "a new RBD image storbench-RUNID-NODE per node"
			if tt.image != "" {
				want = "read only, written only when destructive names rbd:" + tt.pool + "/" + tt.image
			}
			if !strings.Contains(sp.Describe(), want) {
				t.Errorf("Describe() = %q lacks %q", sp.Describe(), want)
			}
		})
	}
}

// TestRookConfig: Rook's mon endpoints and key become the ceph.conf and
// keyring Rook's toolbox writes.
func TestRookConfig(t *testing.T) {
	tests := []struct {
		endpoints, user, key string
		mons, id, wantErr    string
	}{
		{endpoints: "a=10.0.0.1:6789,b=10.0.0.2:6789,c=10.0.0.3:6789", user: "client.admin", key: "AQB==", mons: "10.0.0.1:6789,10.0.0.2:6789,10.0.0.3:6789", id: "admin"},
		{endpoints: "a=[v2:10.0.0.1:3300,v1:10.0.0.1:6789]", user: "admin", key: "K", mons: "[v2:10.0.0.1:3300,v1:10.0.0.1:6789]", id: "admin"},
		{endpoints: "mon-x=10.1.1.1:6789", user: "client.rook-bench", key: "K", mons: "10.1.1.1:6789", id: "rook-bench"},
		{endpoints: "", user: "client.admin", key: "K", wantErr: "no mon endpoints"},
		{endpoints: "a=10.0.0.1:6789", user: "client.admin", key: "", wantErr: "no key"},
	}
	for _, tt := range tests {
		cfg, err := rookConfig(tt.endpoints, tt.user, tt.key)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err %v, want %q", tt.endpoints, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		wantConf := "[global]\nmon host = " + tt.mons + "\n\n[client." + tt.id + "]\nkeyring = /etc/ceph/keyring\n"
		if string(cfg.conf) != wantConf || string(cfg.keyring) != "[client."+tt.id+"]\nkey = "+tt.key+"\n" || cfg.id != tt.id {
			t.Errorf("%q: conf %q keyring %q id %q", tt.endpoints, cfg.conf, cfg.keyring, cfg.id)
		}
		if monHost(cfg.conf) != tt.mons {
			t.Errorf("monHost = %q", monHost(cfg.conf))
		}
	}
}

func rookObjects(ns string) []runtime.Object {
	return []runtime.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: rookMonEndpoints, Namespace: ns}, Data: map[string]string{"data": "a=10.0.0.1:6789"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: rookMonSecret, Namespace: ns},
			Data: map[string][]byte{"ceph-username": []byte("client.admin"), "ceph-secret": []byte("AQBkey==")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "conf", Namespace: "bench"},
			Data: map[string][]byte{"ceph.conf": []byte("[global]\nmon_host = 10.9.9.9")}}, // no last newline
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "conf-fsid", Namespace: "bench"},
			Data: map[string][]byte{"ceph.conf": []byte("[global]\nfsid = f-9\nmon_host = 10.9.9.9\n")}},
	}
}

// TestRBDEngineSecret: the run's Secret holds the configuration read from
// Rook's objects or the named Secret, the pods mount it, and it goes with
// the run; what cannot be read is said with where it was looked for.
func TestRBDEngineSecret(t *testing.T) {
	tests := []struct {
		target, wantConf, wantKeyring, wantErr string
	}{
		{target: "k8s:rbd:replicapool", wantConf: "mon host = 10.0.0.1:6789", wantKeyring: "key = AQBkey=="},
		{target: "k8s:rbd:replicapool?rook=storage", wantErr: "Rook's ConfigMap storage/rook-ceph-mon-endpoints"},
		{target: "k8s:rbd:bench?secret=conf", wantConf: "mon_host = 10.9.9.9"},
		{target: "k8s:rbd:bench?secret=bench/conf&id=x", wantConf: "mon_host = 10.9.9.9"},
		{target: "k8s:rbd:bench?secret=conf-fsid", wantConf: "fsid = f-9"},
		{target: "k8s:rbd:bench?secret=other/conf", wantErr: "reading Secret other/conf"},
		{target: "k8s:rbd:replicapool?id=bench", wantErr: "holds the key of client.admin, not client.bench"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			f := kubekittest.NewFake(t, rookObjects(DefaultRookNamespace)...)
			sp, _, err := Kind{}.Parse(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			e := bindEngine(sp.(EngineSpec).engine, f.Cluster())
			ctx := context.Background()
			labels, notices, err := e.setUp(ctx, "R1")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := f.Client.CoreV1().Secrets("bench").Get(ctx, "storbench-r1-ceph", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(s.Data["ceph.conf"]), tt.wantConf) || !strings.HasSuffix(string(s.Data["ceph.conf"]), "\n") || !strings.Contains(string(s.Data["keyring"]), tt.wantKeyring) ||
				s.Labels[kubekit.LabelRunID] != "R1" || s.Annotations[annotationCephFSID] != confValue(s.Data["ceph.conf"], "fsid") {
				t.Errorf("the run's Secret: %v %q", s.Labels, s.Data)
			}
			if result.LabelCephPool.Of(labels) == "" || len(notices) != 1 || !strings.Contains(notices[0], "Secret bench/storbench-r1-ceph") {
				t.Errorf("labels %v, notices %q", labels, notices)
			}
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: kubekit.ContainerName}}}}
			e.(podEngineSetup).podSpec(pod, "R1")
			c := pod.Spec.Containers[0]
			if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].Secret.SecretName != "storbench-r1-ceph" ||
				len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != RBDConfDir || !c.VolumeMounts[0].ReadOnly {
				t.Errorf("pod: volumes %+v, mounts %+v", pod.Spec.Volumes, c.VolumeMounts)
			}
			if err := e.tearDown(ctx, "R1"); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Client.CoreV1().Secrets("bench").Get(ctx, "storbench-r1-ceph", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the run's Secret after tearDown: %v", err)
			}
		})
	}
}

// TestRBDPodRBAC: the block names every verb the engine uses on Secrets
// and ConfigMaps, none required (class runs need none of them).
func TestRBDPodRBAC(t *testing.T) {
	want := map[string]bool{"create secrets": true, "delete secrets": true, "get secrets": true, "get configmaps": true, "list secrets": true}
	for _, p := range RBDPodRBAC.Permissions {
		if !want[p.String()] || p.Required || !p.Namespaced || p.Why == "" {
			t.Errorf("unexpected permission %+v", p)
		}
		delete(want, p.String())
	}
	for p := range want {
		t.Errorf("missing %s", p)
	}
	for _, p := range Permissions {
		if p.Resource == "secrets" || p.Resource == "configmaps" {
			t.Errorf("a class run's permissions name %s", p)
		}
	}
}

func TestKeyringClient(t *testing.T) {
	for _, tt := range []struct{ keyring, want string }{
		{"[client.bench]\nkey = K\n", "bench"},
		{"  [client.admin]\n\tkey = K", "admin"},
		{"[mon.]\nkey = K\n", "def"},
		{"", "def"},
	} {
		if got := keyringClient(tt.keyring, "def"); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.keyring, got, tt.want)
		}
	}
}

// TestCleanRBDDryRun: the kind's cleanup lists the Secret a killed
// k8s:rbd run left (and only storbench's k8s:rbd Secrets of that run),
// and a dry run deletes nothing.
func TestCleanRBDDryRun(t *testing.T) {
	secret := func(name, runID, target string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench",
			Labels:      map[string]string{kubekit.LabelManagedBy: kubekit.ManagedBy, kubekit.LabelRunID: runID},
			Annotations: map[string]string{kubekit.AnnotationTarget: target}}}
	}
	f := kubekittest.NewFake(t,
		secret("storbench-r1-ceph", "R1", "k8s:rbd:bench"),
		secret("storbench-r2-ceph", "R2", "k8s:rbd:bench"),
		secret("other", "R1", "k8s:rbd:bench"),
		secret("storbench-r1-x-ceph", "R1-x", "k8s:fast"))
	rep := &result.KubeCleanup{}
	Kind{}.cleanRBD(context.Background(), f.Cluster(), "bench", CleanOptions{RunID: "R1", DryRun: true}, rep)
	if len(rep.Found) != 1 || rep.Found[0].Name != "storbench-r1-ceph" || rep.Found[0].Kind != "secret" || len(rep.Deleted) != 0 {
		t.Fatalf("found %+v, deleted %+v", rep.Found, rep.Deleted)
	}
	if _, err := f.Client.CoreV1().Secrets("bench").Get(context.Background(), "storbench-r1-ceph", metav1.GetOptions{}); err != nil {
		t.Errorf("a dry run deleted it: %v", err)
	}
}

// TestRBDEngineDoctor: the doctor says what the pods would reach (pool,
// client, monitors, where the configuration comes from), or why not.
func TestRBDEngineDoctor(t *testing.T) {
	t.Setenv("CEPH_CONF", filepath.Join(t.TempDir(), "absent.conf"))
	tests := []struct {
		target string
		status result.CheckStatus
		want   []string
	}{
		{"k8s:rbd:replicapool", result.CheckOK, []string{"pool replicapool", "client.admin", "mon host 10.0.0.1:6789", "Rook's rook-ceph-mon-endpoints"}},
		{"k8s:rbd:bench/vm-1?secret=conf&id=bench", result.CheckOK, []string{"pool bench", "client.bench", "mon host 10.9.9.9", "the Secret conf", "existing RBD image bench/vm-1"}},
		{"k8s:rbd:bench?rook=storage", result.CheckFail, []string{"storage/rook-ceph-mon-endpoints"}},
	}
	for _, tt := range tests {
		f := kubekittest.NewFake(t, rookObjects(DefaultRookNamespace)...)
		sp, _, err := Kind{}.Parse(tt.target)
		if err != nil {
			t.Fatal(err)
		}
		checks := bindEngine(sp.(EngineSpec).engine, f.Cluster()).doctor(context.Background(), runner.Options{})
		if len(checks) == 0 || checks[0].Status != tt.status || (tt.status == result.CheckOK) != (len(checks) == 2) {
			t.Fatalf("%s: %+v", tt.target, checks)
		}
		for _, w := range tt.want {
			if !strings.Contains(checks[0].Detail, w) {
				t.Errorf("%s: %q lacks %q", tt.target, checks[0].Detail, w)
			}
		}
	}
}

// TestPodConf: the pods' ceph.conf gets the mount timeouts unless the
// user set them, and the keyring copied beside it in place of a path of
// the user's machine.
func TestPodConf(t *testing.T) {
	tests := []struct {
		name, conf string
		keyring    bool
		want       string
	}{
		{name: "conf only", conf: "[global]\nmon host = 10.0.0.1\n",
			want: "[global]\nclient mount timeout = 30\nrados mount timeout = 30\nmon host = 10.0.0.1\n"},
		{name: "no global section", conf: "mon_host = 10.0.0.1", keyring: true,
			want: "[global]\nclient mount timeout = 30\nrados mount timeout = 30\nkeyring = /etc/ceph/keyring\nmon_host = 10.0.0.1\n"},
		{name: "the user's timeouts kept, their keyring path replaced", keyring: true,
			conf: "[global]\nfsid = f\nkeyring = /home/me/ceph.client.me.keyring\n[client]\nclient_mount_timeout = 5\nrados  mount timeout = 7\n",
			want: "[global]\nkeyring = /etc/ceph/keyring\nfsid = f\n[client]\nclient_mount_timeout = 5\nrados  mount timeout = 7\n"},
		{name: "without a keyring a keyring path stays", conf: "[global]\nkeyring = /etc/ceph/ceph.keyring\n",
			want: "[global]\nclient mount timeout = 30\nrados mount timeout = 30\nkeyring = /etc/ceph/ceph.keyring\n"},
		{name: "Rook's", keyring: true, conf: "[global]\nmon host = 10.0.0.1:6789\n\n[client.admin]\nkeyring = /etc/ceph/keyring\n",
			want: "[global]\nclient mount timeout = 30\nrados mount timeout = 30\nmon host = 10.0.0.1:6789\n\n[client.admin]\nkeyring = /etc/ceph/keyring\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(podConf([]byte(tt.conf), tt.keyring)); got != tt.want {
				t.Errorf("podConf:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestRBDPoolFacts: the pool's facts come from the pod's own ceph CLI
// when its image has one, else (no configuration on this host) from Rook's
// toolbox, but only when the toolbox reaches the Ceph the run's
// configuration names (its fsid); otherwise the error says each way tried.
// The ceph CLI answers with a real Ceph's outputs (recordedCeph).
func TestRBDPoolFacts(t *testing.T) {
	t.Setenv("CEPH_CONF", filepath.Join(t.TempDir(), "absent.conf"))
	const recorded = "a4c1df0b-9e06-4db1-90bb-8b4f25895231" // internal/ceph/testdata/fsid.json's
	for _, tc := range []struct {
		name       string
		podHasCeph bool
		toolbox    bool
		fsid       string
		where      string
		err        []string
	}{
		{name: "the pod's own", podHasCeph: true, toolbox: true, fsid: "other", where: "the ceph CLI in pod fio-pod as client.admin"},
		{name: "Rook's toolbox", toolbox: true, fsid: recorded, where: "the ceph CLI in Rook's toolbox pod rook-ceph/rook-ceph-tools-a"},
		{name: "Rook's toolbox, the run's fsid unknown", toolbox: true, where: "the ceph CLI in Rook's toolbox pod rook-ceph/rook-ceph-tools-a"},
		{name: "Rook's toolbox reaches another Ceph", toolbox: true, fsid: "0b7c1c5e-0000-4000-8000-000000000000",
			err: []string{"this host has no Ceph configuration", "the ceph CLI in pod rook-ceph/rook-ceph-tools-a reaches Ceph " + recorded + ", not the run's 0b7c1c5e-0000-4000-8000-000000000000"}},
		{name: "no toolbox", fsid: recorded, err: []string{"the pod's image has no ceph CLI", "no pod labelled app=rook-ceph-tools in namespace rook-ceph"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.toolbox {
				objs = append(objs, toolboxPod("rook-ceph-tools-a", corev1.PodRunning))
			}
			x := &toolboxExec{rec: &recordedCeph{benches: map[string]int{}}, podHasCeph: tc.podHasCeph}
			e := &rbdEngine{pool: "rbd", rookNS: DefaultRookNamespace, clientID: "admin", fsid: tc.fsid,
				cluster: kubekit.NewClusterForClient(fake.NewClientset(objs...), x, "storbench")}
			labels, where, err := e.poolLabels(context.Background(), &kubekit.PodCmder{Exec: x, Namespace: "storbench", Pod: "fio-pod", Container: kubekit.ContainerName})
			if !wantErrors(t, err, tc.err) {
				return
			}
			if where != tc.where || labels["replicas"] != "3" || labels["ceph_osds"] != "osd.0,osd.1,osd.2" {
				t.Errorf("read with %q: labels %v; want %q, size 3, osd.0-2", where, labels, tc.where)
			}
		})
	}
}

// TestRBDDoctorPoolFacts: the doctor says where a run would read the
// pool's facts (Rook's toolbox here, this host having no configuration),
// or, with no way, why not and what to do, as information: a run does
// not need them.
func TestRBDDoctorPoolFacts(t *testing.T) {
	t.Setenv("CEPH_CONF", filepath.Join(t.TempDir(), "absent.conf"))
	for _, tc := range []struct {
		name    string
		toolbox bool
		status  result.CheckStatus
		want    []string
	}{
		{name: "toolbox", toolbox: true, status: result.CheckOK, want: []string{"read with the ceph CLI in Rook's toolbox pod rook-ceph/rook-ceph-tools-a"}},
		{name: "none", status: result.CheckInfo, want: []string{"will not carry the pool's size", "this host has no Ceph configuration", "no pod labelled app=rook-ceph-tools in namespace rook-ceph"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := rookObjects(DefaultRookNamespace)
			if tc.toolbox {
				objs = append(objs, toolboxPod("rook-ceph-tools-a", corev1.PodRunning))
			}
			x := &toolboxExec{rec: &recordedCeph{benches: map[string]int{}}}
			sp, _, err := Kind{}.Parse("k8s:rbd:rbd")
			if err != nil {
				t.Fatal(err)
			}
			checks := bindEngine(sp.(EngineSpec).engine, kubekit.NewClusterForClient(fake.NewClientset(objs...), x, "storbench")).doctor(context.Background(), runner.Options{})
			if len(checks) != 2 || checks[1].Status != tc.status {
				t.Fatalf("checks %+v: want the pool facts' second, %s", checks, tc.status)
			}
			for _, w := range tc.want {
				if !strings.Contains(checks[1].Detail, w) {
					t.Errorf("%q lacks %q", checks[1].Detail, w)
				}
			}
		})
	}
}

// TestRBDPoolFactsFromRookObjects: with no ceph CLI in the pod, none on
// this host and no toolbox, the pool's facts come from Rook's objects
// (a CephBlockPool and Rook's OSD pods), for the run's Ceph only: the
// one whose objects configured the run, or, with a Secret named, the one
// whose fsid Rook's Secret holds when it is the run's.
func TestRBDPoolFactsFromRookObjects(t *testing.T) {
	t.Setenv("CEPH_CONF", filepath.Join(t.TempDir(), "absent.conf"))
	const fsid = "a4c1df0b-9e06-4db1-90bb-8b4f25895231"
	pool := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ceph.rook.io/v1", "kind": "CephBlockPool",
		"metadata": map[string]any{"name": "rbd", "namespace": DefaultRookNamespace},
		"spec":     map[string]any{"failureDomain": "host", "replicated": map[string]any{"size": int64(3)}}}}
	osd := func(id, host string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-osd-" + id, Namespace: DefaultRookNamespace,
			Labels: map[string]string{"app": "rook-ceph-osd", "ceph-osd-id": id, "topology-location-host": host}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	for _, tc := range []struct {
		name, secret, runFSID, rookFSID string
		err                             []string
	}{
		{name: "Rook's objects configured the run"},
		{name: "a Secret of the same Ceph", secret: "bench/conf", runFSID: fsid, rookFSID: fsid},
		{name: "a Secret of another Ceph", secret: "bench/conf", runFSID: "0b7c1c5e-0000-4000-8000-000000000000", rookFSID: fsid,
			err: []string{"the pod's image has no ceph CLI", "no pod labelled app=rook-ceph-tools", "Rook's objects in rook-ceph are of Ceph " + fsid + ", not the run's 0b7c1c5e"}},
		{name: "a Secret, Rook's fsid unknown", secret: "bench/conf", runFSID: fsid,
			err: []string{"cannot tell whether their Ceph is the run's"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rook := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: rookMonSecret, Namespace: DefaultRookNamespace},
				Data: map[string][]byte{"fsid": []byte(tc.rookFSID)}}
			x := &toolboxExec{rec: &recordedCeph{benches: map[string]int{}}}
			c := kubekit.NewClusterForClient(fake.NewClientset(rook, osd("1", "pi-2"), osd("0", "pi-1"), osd("2", "pi-3")), x, "storbench")
			c.Dynamic = dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
				kubekit.CephBlockPools: "CephBlockPoolList"}, pool)
			e := &rbdEngine{pool: "rbd", rookNS: DefaultRookNamespace, secret: tc.secret, clientID: "admin", fsid: tc.runFSID, cluster: c}
			labels, where, err := e.poolLabels(context.Background(), &kubekit.PodCmder{Exec: x, Namespace: "storbench", Pod: "fio-pod", Container: kubekit.ContainerName})
			if !wantErrors(t, err, tc.err) {
				return
			}
			if !strings.HasPrefix(where, "Rook's CephBlockPool rook-ceph/rbd and Rook's running OSD pods in rook-ceph (app=rook-ceph-osd) (no ceph CLI reaches the Ceph: this host has no") ||
				labels["replicas"] != "3" || labels["ceph_osds"] != "osd.0,osd.1,osd.2" || labels["replica_nodes"] != "pi-1,pi-2,pi-3" {
				t.Errorf("read with %q: labels %v", where, labels)
			}
			check := e.factsCheck(context.Background(), cephConfig{fsid: tc.runFSID})
			if check.Status != result.CheckOK || !strings.Contains(check.Detail, "read from Rook's CephBlockPool rook-ceph/rbd") {
				t.Errorf("the doctor's check: %+v", check)
			}
		})
	}
}

// TestRunImagesRBDWithoutFSID: a cleanup pod whose image has no rbd CLI
// takes no other rbd CLI when the run's Secret names no fsid to check it
// against, and says what to do; the fsid is the Secret's annotation,
// else its ceph.conf's.
func TestRunImagesRBDWithoutFSID(t *testing.T) {
	x := &toolboxExec{rec: &recordedCeph{benches: map[string]int{}}}
	e := &rbdEngine{pool: "rbd", rookNS: DefaultRookNamespace, cluster: kubekit.NewClusterForClient(fake.NewClientset(), x, "storbench")}
	_, _, err := e.runImagesRBD(context.Background(), &kubekit.PodCmder{Exec: x, Namespace: "storbench", Pod: "storbench-clean-r1", Container: kubekit.ContainerName}, "r1")
	wantErrors(t, err, []string{"pod storbench/storbench-clean-r1's image has no rbd CLI, and the run's Secret names no Ceph fsid", "remove images storbench-r1-* of pool rbd by hand"})
	for _, tc := range []struct {
		s    corev1.Secret
		want string
	}{
		{corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annotationCephFSID: "f-1"}}, Data: map[string][]byte{"ceph.conf": []byte("[global]\nfsid = f-2\n")}}, "f-1"},
		{corev1.Secret{Data: map[string][]byte{"ceph.conf": []byte("[global]\nfsid = f-2\n")}}, "f-2"},
		{corev1.Secret{Data: map[string][]byte{"ceph.conf": []byte("[global]\nmon host = 10.0.0.1\n")}}, ""},
	} {
		if got := secretFSID(&tc.s); got != tc.want {
			t.Errorf("secretFSID(%v) = %q, want %q", tc.s.Data, got, tc.want)
		}
	}
}
