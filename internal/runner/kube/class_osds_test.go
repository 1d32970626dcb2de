package kube

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/execx"
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
	for _, a := range args {
		if a == "-f" {
			break
		}
		words = append(words, a)
	}
	file := map[string]string{
		"osd tree": "osd-tree.json", "osd metadata": "osd-metadata.json",
		"osd pool ls detail": "osd-pool-ls-detail.json", "pg ls-by-pool rbd": "pg-ls-by-pool-rbd.json",
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
				p, err := tc.benches.bench(context.Background(), cl, "rbd")
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
