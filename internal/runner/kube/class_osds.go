package kube

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/ceph/osdtelemetry"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// The class target's options (k8s:CLASS?ceph-conf=PATH&ceph-pool=POOL):
// where the ceph CLI on storbench's host finds the Ceph behind the class,
// and the pool when the class names none.
const (
	OptionCephConf = "ceph-conf"
	OptionCephPool = "ceph-pool"
)

// CephAccess is how a class run reaches the Ceph behind its class, to
// record the pool's OSDs beside the nodes' telemetry (osdtelemetry).
type CephAccess struct {
	// Conf is the ceph.conf of the ceph CLI on storbench's host; empty:
	// the CLI's default (CEPH_CONF, /etc/ceph/ceph.conf).
	Conf string
	// Pool is the pool to record when the class's parameters and
	// annotations name none (kubekit.CephClassPool).
	Pool string
}

// parseClassOptions reads a class target's options (the part after "?").
func parseClassOptions(target, query string) (CephAccess, error) {
	v, err := url.ParseQuery(query)
	if err != nil {
		return CephAccess{}, runner.FieldErrorf("%s: %s: options: %v", runner.Field("Targets"), target, err)
	}
	var a CephAccess
	for k, vs := range v {
		if len(vs) != 1 || vs[0] == "" {
			return CephAccess{}, runner.FieldErrorf("%s: %s: option %s needs one value", runner.Field("Targets"), target, k)
		}
		switch k {
		case OptionCephConf:
			a.Conf = vs[0]
		case OptionCephPool:
			a.Pool = vs[0]
		default:
			return CephAccess{}, runner.FieldErrorf("%s: %s: unknown option %q (a class takes %s and %s)",
				runner.Field("Targets"), target, k, OptionCephConf, OptionCephPool)
		}
	}
	return a, nil
}

// Class is the StorageClass the spec names, without its options.
func (s ClassSpec) Class() string {
	class, _, _ := strings.Cut(string(s), "?")
	return class
}

// Ceph is the spec's Ceph options; Parse has checked them.
func (s ClassSpec) Ceph() CephAccess {
	_, query, ok := strings.Cut(string(s), "?")
	if !ok {
		return CephAccess{}
	}
	a, _ := parseClassOptions(s.String(), query)
	return a
}

// classOSDs gives a prepared class target the OSDs of the Ceph pool
// behind its class (osdtelemetry: their bench, commit latency, device
// waits, round trip, down), beside the nodes' telemetry, when the ceph CLI
// on storbench's host reaches that Ceph. The pool is the one the class's
// parameters or annotations name (kubekit.CephClassPool), else the
// target's ceph-pool option; Sources["osds"] says which and why. A class
// that names no pool and has no option is not Ceph's: nothing is said. A
// Ceph that cannot be reached is a notice, not an error.
func (t *Target) classOSDs(ctx context.Context, sc *storagev1.StorageClass, p *runner.Prepared) {
	if sc == nil || p.Telemetry == nil {
		return
	}
	cl := ceph.Client{Cmder: execx.Local{}, Conf: t.opts.Ceph.Conf}
	rctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancel()
	pool, why, err := classPool(rctx, sc, cl, t.opts.Ceph.Pool)
	if err == nil && pool == "" {
		return
	}
	var pl ceph.Placement
	if err == nil {
		pl, err = cl.PoolPlacement(rctx, pool)
	}
	if err != nil {
		p.Notices = append(p.Notices, fmt.Sprintf("no OSD figures for class %s: the ceph CLI on this host (%s) did not reach its Ceph: %v; name the cluster's ceph.conf with %s%s?%s=PATH",
			sc.Name, cephConfWhere(cl.Conf), err, TargetPrefix, sc.Name, OptionCephConf))
		return
	}
	if result.LabelCephPool.Of(p.Labels) == "" {
		for k, v := range pl.Labels() {
			p.Labels[k] = v
		}
	}
	source := fmt.Sprintf("pool %s (%s), read with the ceph CLI on storbench's host (%s)", pool, why, cephConfWhere(cl.Conf))
	nodes := p.Telemetry
	p.Telemetry = func() (runner.Sampler, error) {
		host, err := nodes()
		if err != nil {
			return nil, err
		}
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.opts.Timeout)
		defer cancel()
		osds, err := t.opts.OSDBenches.bench(bctx, cl, pool)
		if err != nil {
			return nil, err
		}
		return osds.Sampler(host, source), nil
	}
}

// OSDBenches are the Ceph pools' OSDs benched during a run, shared by its
// class targets so that each pool's OSDs are benched once, not once per
// node: Kind.Open gives its targets one. Its zero value is ready; a nil
// one benches for every target.
type OSDBenches struct {
	mu    sync.Mutex
	pools map[CephAccess]*osdtelemetry.Pool
}

// bench is pool's OSDs, benched now the first time; a failure is not kept.
func (b *OSDBenches) bench(ctx context.Context, cl ceph.Client, pool string) (*osdtelemetry.Pool, error) {
	if b == nil {
		return osdtelemetry.Bench(ctx, cl, pool)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := CephAccess{Conf: cl.Conf, Pool: pool}
	if p, ok := b.pools[k]; ok {
		return p, nil
	}
	p, err := osdtelemetry.Bench(ctx, cl, pool)
	if err != nil {
		return nil, err
	}
	if b.pools == nil {
		b.pools = map[CephAccess]*osdtelemetry.Pool{}
	}
	b.pools[k] = p
	return p, nil
}

// classPool is the Ceph pool behind sc's volumes and why it is that one:
// the class's parameters or annotations (kubekit.CephClassPool), else
// option; "" for a class that names none.
func classPool(ctx context.Context, sc *storagev1.StorageClass, cl ceph.Client, option string) (pool, why string, err error) {
	pool, err = kubekit.CephClassPool(ctx, sc, cl.FSDataPool)
	if err != nil || pool == "" {
		if option != "" {
			return option, "the target's " + OptionCephPool + " option", nil
		}
		return "", "", err
	}
	return pool, classPoolWhy(sc), nil
}

// classPoolWhy says which of sc's parameters or annotations named its
// pool (kubekit.CephClassPool's order).
func classPoolWhy(sc *storagev1.StorageClass) string {
	p, a := sc.Parameters, sc.Annotations
	switch {
	case p["dataPool"] != "" && strings.HasSuffix(sc.Provisioner, "rbd.csi.ceph.com"):
		return "class parameter dataPool"
	case p["pool"] != "" && strings.Contains(sc.Provisioner, "csi.ceph.com"):
		return "class parameter pool"
	case p["fsName"] != "" && strings.Contains(sc.Provisioner, "csi.ceph.com"):
		return "the first data pool of CephFS " + p["fsName"] + " (class parameter fsName)"
	case a[kubekit.AnnotationCephPool] != "":
		return "class annotation " + kubekit.AnnotationCephPool
	default:
		return "the first data pool of CephFS " + a[kubekit.AnnotationCephFS] + " (class annotation " + kubekit.AnnotationCephFS + ")"
	}
}

// cephConfWhere names the ceph.conf the CLI reads.
func cephConfWhere(conf string) string {
	if conf != "" {
		return "--conf " + conf
	}
	return "CEPH_CONF, else /etc/ceph/ceph.conf"
}

// classOf is the StorageClass a class spec names, without its options.
func classOf(s runner.Spec) string {
	if c, ok := s.(ClassSpec); ok {
		return c.Class()
	}
	return strings.TrimPrefix(s.String(), TargetPrefix)
}

// withCeph is opts with the Ceph options of a class spec.
func withCeph(opts TargetOptions, s runner.Spec) TargetOptions {
	if c, ok := s.(ClassSpec); ok {
		opts.Ceph = c.Ceph()
	}
	return opts
}
