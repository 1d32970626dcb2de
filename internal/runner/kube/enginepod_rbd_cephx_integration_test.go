package kube_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
)

// The test Ceph runs cephx (test/cluster/ceph.sh): client.admin's keyring
// and the restricted client.storbench's (rbd profile on pool rbd, mgr
// read) lie beside its ceph.conf.
const restrictedClient = "storbench"

// cephKeyring is the keyring file of client.id beside CEPH_CONF.
func cephKeyring(t *testing.T, id string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(os.Getenv("CEPH_CONF")), "ceph.client."+id+".keyring"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "[client."+id+"]") {
		t.Fatalf("keyring of client.%s: %s", id, b)
	}
	return b
}

// cephKey is the base64 key of a keyring's (key = ...).
func cephKey(t *testing.T, keyring []byte) string {
	t.Helper()
	for _, line := range strings.Split(string(keyring), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "key" {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no key in keyring %s", keyring)
	return ""
}

// confValue is a ceph.conf's value of key.
func confValue(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(os.Getenv("CEPH_CONF"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in %s", key, b)
	return ""
}

// rookObjectsPodRun: Rook's objects in a namespace of the test's own, as
// Rook writes them (ConfigMap rook-ceph-mon-endpoints with data "a=IP:6789",
// Secret rook-ceph-mon with ceph-username client.admin and its real key),
// and a short write and read of k8s:rbd:rbd?rook=THATNS from one node:
// complete, on the node's own image, with the pool's facts.
func rookObjectsPodRun(t *testing.T, ctx context.Context, c *kubekit.Cluster, kind kube.Kind) {
	t.Helper()
	ns := unique("rookcephx")
	core := c.Client.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := core.Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-mon-endpoints", Namespace: ns},
		Data: map[string]string{"data": "a=" + confValue(t, "mon host") + ":6789", "mapping": "{}", "maxMonId": "0"}}
	if _, err := core.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-mon", Namespace: ns}, Data: map[string][]byte{
		"ceph-username": []byte("client.admin"), "ceph-secret": []byte(cephKey(t, cephKeyring(t, "admin"))),
		"fsid": []byte(confValue(t, "fsid")), "cluster-name": []byte(ns)}}
	if _, err := core.Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	g := openKind(t, ctx, kind, kube.TargetPrefix+"rbd:rbd?rook="+ns)
	rs := runPlan(t, ctx, "name: rook\nworkloads:\n  - {name: seq-write, rw: write, bs: 1MiB, iodepth: 8, size: 16MiB, runtime: 1s}\n", engine.Plan{Targets: g.Targets})
	t.Logf("Rook's objects: a write from %s in %.1f s", kind.Nodes.Names[0], time.Since(t0).Seconds())
	if len(rs) != 1 {
		t.Fatalf("%d results from Rook's objects, want 1", len(rs))
	}
	r := rs[0]
	if r.Status != result.StatusComplete || result.LabelReplicas.Of(r.Labels) != "3" || result.LabelCephOSDs.Of(r.Labels) != "osd.0,osd.1,osd.2" {
		t.Errorf("with Rook's objects: %s %s, labels %v", r.Status, r.Error, r.Labels)
	}
	if img := result.LabelCephImage.Of(r.Labels); img != "storbench-"+r.RunID+"-"+kind.Nodes.Names[0] {
		t.Errorf("with Rook's objects: image %q", img)
	}
	rookObjectsPoolFacts(t, ctx, c, kind, ns) // rooktoolbox_integration_test.go
	toolboxPoolFacts(t, ctx, c, kind, ns)
}

// refusedInBoundedTime: the target's preparation on one node fails,
// within the pods' mount timeout, with an error that names the Secret and
// the client, and leaves nothing behind: for the restricted client's name
// with a key that is not its own (the monitor refuses it at once), and
// for a monitor address where none listens (the client gives up after
// the mount timeout: the Secret's 5 s here, storbench's 30 s otherwise).
func refusedInBoundedTime(t *testing.T, ctx context.Context, c *kubekit.Cluster, kind kube.Kind, ns string) {
	t.Helper()
	fsid, mon := confValue(t, "fsid"), confValue(t, "mon host")
	tests := []struct {
		name, conf string
		keyring    []byte
		want       string
	}{
		{name: "wrong key", conf: "[global]\nfsid = " + fsid + "\nmon host = " + mon + "\n",
			keyring: []byte("[client." + restrictedClient + "]\n\tkey = AQBAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n"), want: "handle_auth_bad_method"},
		{name: "no monitor", conf: "[global]\nfsid = " + fsid + "\nmon host = " + mon + ":1\n[client]\nclient mount timeout = 5\n",
			keyring: cephKeyring(t, restrictedClient), want: "connect"},
	}
	for i, tt := range tests {
		name := cephSecret(t, ctx, c, ns, tt.conf, tt.keyring)
		runID := fmt.Sprintf("refused-rbd-%d", i)
		g := openKind(t, ctx, kind, kube.TargetPrefix+"rbd:rbd?secret="+ns+"/"+name+"&id="+restrictedClient)
		t0 := time.Now()
		pctx, cancel := context.WithTimeout(ctx, time.Duration(kube.CephMountTimeoutSeconds)*time.Second+time.Minute)
		p, err := g.Targets[0].Prepare(pctx, runner.Need{RunID: runID, FileSize: 8 << 20})
		took, late := time.Since(t0), pctx.Err()
		cancel()
		if err == nil {
			if cerr := p.Cleanup(ctx); cerr != nil {
				t.Error(cerr)
			}
			t.Fatalf("%s: prepared", tt.name)
		}
		t.Logf("%s: refused in %.1f s: %v", tt.name, took.Seconds(), err)
		for _, want := range []string{"the Secret " + ns + "/" + name, "client." + restrictedClient, tt.want} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal does not name %q: %v", tt.name, want, err)
			}
		}
		if late != nil {
			t.Errorf("%s: the refusal came after the test's deadline (%.1f s): the mount timeout did not hold", tt.name, took.Seconds())
		}
		if left, err := kubekit.FindLeftovers(ctx, c.Client, "", runID); err != nil || len(left) > 0 {
			t.Errorf("%s: left in the cluster after the refusal: %v (%v)", tt.name, left, err)
		}
	}
}
