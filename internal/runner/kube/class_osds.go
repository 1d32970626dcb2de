package kube

import (
	"context"
	"errors"
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

// The class target's options (k8s:CLASS?ceph-conf=PATH&ceph-pool=POOL, or
// ?ceph-toolbox=NAMESPACE): where storbench reaches the Ceph behind the
// class (the ceph CLI on storbench's host with that ceph.conf, or the one
// in Rook's toolbox in that namespace), and the pool when the class names
// none.
const (
	OptionCephConf    = "ceph-conf"
	OptionCephPool    = "ceph-pool"
	OptionCephToolbox = "ceph-toolbox"
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
	// Toolbox is the namespace of Rook's toolbox whose ceph CLI reaches
	// the Ceph (kubekit.RookToolbox), in place of the host's; empty: the
	// host's, and for a Rook class (parameter clusterID) whose Ceph the
	// host does not reach, the toolbox in the class's namespace.
	Toolbox string
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
		case OptionCephToolbox:
			a.Toolbox = vs[0]
		default:
			return CephAccess{}, runner.FieldErrorf("%s: %s: unknown option %q (a class takes %s, %s and %s)",
				runner.Field("Targets"), target, k, OptionCephConf, OptionCephPool, OptionCephToolbox)
		}
	}
	if a.Conf != "" && a.Toolbox != "" {
		return CephAccess{}, runner.FieldErrorf("%s: %s: options %s and %s: the ceph CLI on this host or Rook's toolbox's, not both",
			runner.Field("Targets"), target, OptionCephConf, OptionCephToolbox)
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
// waits, round trip, down), beside the nodes' telemetry, when storbench
// reaches that Ceph (classCeph). The pool is the one the class's
// parameters or annotations name (kubekit.CephClassPool), else the
// target's ceph-pool option; Sources["osds"] says which and why, and with
// which ceph CLI. A class that names no pool and has no option is not
// Ceph's: nothing is said. A Ceph that cannot be reached is a notice, not
// an error.
func (t *Target) classOSDs(ctx context.Context, sc *storagev1.StorageClass, p *runner.Prepared) {
	if sc == nil || p.Telemetry == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	defer cancel()
	r, err := t.classCeph(rctx, sc)
	if err != nil {
		p.Notices = append(p.Notices, fmt.Sprintf("no OSD figures for class %s: %v; name the cluster's ceph.conf with %s%s?%s=PATH, or Rook's toolbox with ?%s=NAMESPACE",
			sc.Name, err, TargetPrefix, sc.Name, OptionCephConf, OptionCephToolbox))
		return
	}
	if r.pool == "" {
		return
	}
	if result.LabelCephPool.Of(p.Labels) == "" {
		for k, v := range r.placement.Labels() {
			p.Labels[k] = v
		}
	}
	source := fmt.Sprintf("pool %s (%s), read with %s", r.pool, r.why, r.where)
	nodes := p.Telemetry
	p.Telemetry = func() (runner.Sampler, error) {
		host, err := nodes()
		if err != nil {
			return nil, err
		}
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.opts.Timeout)
		defer cancel()
		osds, err := t.opts.OSDBenches.bench(bctx, r.key, r.client)
		if err != nil {
			return nil, err
		}
		return osds.Sampler(host, source), nil
	}
}

// cephReach is the Ceph behind a class, reached: the ceph CLI that
// reaches it and where it runs, the pool and why that one, its placement,
// and the key its OSD benches are shared under.
type cephReach struct {
	client    ceph.Client
	where     string
	pool, why string
	placement ceph.Placement
	key       CephAccess
}

// classCeph reaches the Ceph behind sc with the ceph CLI in Rook's
// toolbox when the target names its namespace; else with the CLI on
// storbench's host, and, when that fails for a Rook class (its parameter
// clusterID names the Ceph cluster's namespace), with Rook's toolbox
// there. A class that names no pool (and no ceph-pool option) gives a
// zero cephReach: it is not Ceph's.
func (t *Target) classCeph(ctx context.Context, sc *storagev1.StorageClass) (cephReach, error) {
	ways := []string{t.opts.Ceph.Toolbox}
	if t.opts.Ceph.Toolbox == "" {
		ways = []string{""}
		if ns := sc.Parameters["clusterID"]; ns != "" && strings.Contains(sc.Provisioner, "csi.ceph.com") && t.cluster != nil {
			ways = append(ways, ns)
		}
	}
	var errs []string
	for _, toolbox := range ways {
		r := cephReach{client: ceph.Client{Cmder: execx.Local{}, Conf: t.opts.Ceph.Conf},
			where: "the ceph CLI on storbench's host (" + cephConfWhere(t.opts.Ceph.Conf) + ")",
			key:   CephAccess{Conf: t.opts.Ceph.Conf}}
		if toolbox != "" {
			if t.cluster == nil {
				return cephReach{}, fmt.Errorf("Rook's toolbox in namespace %s: no cluster", toolbox)
			}
			cmder, err := kubekit.RookToolbox(ctx, t.cluster, toolbox)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			r.client = ceph.Client{Cmder: cmder}
			r.where = "the ceph CLI in Rook's toolbox pod " + cmder.Namespace + "/" + cmder.Pod
			r.key = CephAccess{Toolbox: toolbox}
		}
		var err error
		r.pool, r.why, err = classPool(ctx, sc, r.client, t.opts.Ceph.Pool)
		if err == nil && r.pool == "" {
			return cephReach{}, nil
		}
		if err == nil {
			r.placement, err = r.client.PoolPlacement(ctx, r.pool)
		}
		if err == nil {
			r.key.Pool = r.pool
			return r, nil
		}
		errs = append(errs, r.where+" did not reach its Ceph: "+err.Error())
	}
	return cephReach{}, errors.New(strings.Join(errs, "; "))
}

// OSDBenches are the Ceph pools' OSDs benched during a run, shared by its
// class targets so that each pool's OSDs are benched once, not once per
// node: Kind.Open gives its targets one. Its zero value is ready; a nil
// one benches for every target.
type OSDBenches struct {
	mu    sync.Mutex
	pools map[CephAccess]*osdtelemetry.Pool
}

// bench is the OSDs of pool k.Pool reached as k says (with cl), benched
// now the first time; a failure is not kept.
func (b *OSDBenches) bench(ctx context.Context, k CephAccess, cl ceph.Client) (*osdtelemetry.Pool, error) {
	if b == nil {
		return osdtelemetry.Bench(ctx, cl, k.Pool)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.pools[k]; ok {
		return p, nil
	}
	p, err := osdtelemetry.Bench(ctx, cl, k.Pool)
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
