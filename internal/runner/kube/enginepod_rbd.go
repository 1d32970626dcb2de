package kube

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/rbd"
)

// The rbd engine target from pods: k8s:rbd:POOL[/IMAGE][?secret=[NS/]NAME][&rook=NS][&id=CLIENT].
const (
	rbdScheme = "rbd:"
	// DefaultRookNamespace is where Rook's own objects are read when no
	// Secret is named.
	DefaultRookNamespace = "rook-ceph"
	// RBDConfDir is where each pod has the run's Ceph configuration
	// (ceph.conf and keyring: the Ceph tools' default place).
	RBDConfDir = "/etc/ceph"
	// Rook's objects, as Rook's toolbox reads them.
	rookMonEndpoints = "rook-ceph-mon-endpoints"
	rookMonSecret    = "rook-ceph-mon"
	// annotationCephFSID holds, on the run's Secret, the fsid of the Ceph
	// its configuration reaches, when known: a cleanup checks another rbd
	// CLI against it (runImagesRBD).
	annotationCephFSID = "storbench.io/ceph-fsid"
)

// rbdEngine is an RBD pool through fio's rbd engine (librbd, userspace)
// in a pod on each node. The cluster's configuration comes from a Secret
// the user names (keys ceph.conf and, optionally, keyring) or else from
// Rook's objects (mon endpoints and admin key); storbench copies it into
// a Secret of the run's own, mounted at RBDConfDir in every pod, and
// deletes it after the run. Each node's pod makes its own image
// storbench-RUNID-NODE with the rbd CLI in it and removes it before the
// pod goes; an image named (rbd:POOL/IMAGE) is only read unless
// --destructive names it.
type rbdEngine struct {
	raw    string // rbd:POOL[/IMAGE][?...]
	pool   string
	image  string // "" : one of storbench's own per node
	secret string // [NS/]NAME of the user's Secret; "" : Rook's objects
	rookNS string
	id     string // the client ID asked for; "" : admin, or Rook's

	cluster  *kubekit.Cluster
	clientID string // the client ID of the run's configuration (setUp)
	monHost  string // its monitors (setUp), for errors
	fsid     string // its Ceph's fsid (setUp), when it names one
}

// parseRBDEngine parses rest = rbd:POOL[/IMAGE][?secret=..&rook=..&id=..].
func parseRBDEngine(rest string) (runner.Spec, bool, error) {
	bad := func(why string) (runner.Spec, bool, error) {
		return nil, true, runner.FieldErrorf("%s: %s%s: %s: write %srbd:POOL[/IMAGE][?secret=[NAMESPACE/]NAME | rook=NAMESPACE][&id=CLIENT] (choose nodes with %s or %s)",
			runner.Field("Targets"), TargetPrefix, rest, why, TargetPrefix, runner.Field("Kube.Nodes"), runner.Field("Kube.NodeSelector"))
	}
	e := &rbdEngine{raw: rest, rookNS: DefaultRookNamespace}
	path, query, _ := strings.Cut(strings.TrimPrefix(rest, rbdScheme), "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return bad(err.Error())
	}
	for k, v := range q {
		switch {
		case k != "secret" && k != "rook" && k != "id":
			return bad(fmt.Sprintf("unknown setting %q", k))
		case len(v) != 1 || v[0] == "":
			return bad(fmt.Sprintf("setting %q wants one value", k))
		}
	}
	e.secret, e.id = q.Get("secret"), q.Get("id")
	if ns := q.Get("rook"); ns != "" {
		e.rookNS = ns
	}
	e.pool, e.image, _ = strings.Cut(path, "/")
	switch {
	case e.pool == "":
		return bad("no pool")
	case strings.HasSuffix(path, "/") && e.image == "":
		return bad("an empty image name after the pool")
	case strings.ContainsAny(e.pool+e.image, "/@:"):
		return bad("pool and image names hold no '/', '@' or ':' (RBD namespaces and snapshots are not supported)")
	case e.secret != "" && q.Has("rook"):
		return bad("a Secret or Rook's objects, not both")
	case strings.Count(e.secret, "/") > 1:
		return bad("secret=NAME or secret=NAMESPACE/NAME")
	}
	return EngineSpec{engine: e}, true, nil
}

func (e *rbdEngine) String() string { return e.raw }

// source says where the configuration comes from.
func (e *rbdEngine) source() string {
	if e.secret != "" {
		return "the Secret " + e.secret
	}
	return "Rook's " + rookMonEndpoints + " and " + rookMonSecret + " in namespace " + e.rookNS
}

func (e *rbdEngine) Describe() string {
	what := fmt.Sprintf("a new RBD image %sRUNID-NODE per node in pool %s, made with the rbd CLI in the node's pod and removed after the run", rbd.Prefix, e.pool)
	if e.image != "" {
		what = fmt.Sprintf("the existing RBD image %s/%s: read only, written only when destructive names rbd:%s/%s", e.pool, e.image, e.pool, e.image)
	}
	return fmt.Sprintf("%s; fio's rbd engine (librbd) in each pod, with the Ceph configuration from %s copied into a Secret of the run's own mounted at %s",
		what, e.source(), RBDConfDir)
}

// bind is the engine of a run in cluster c.
func (e *rbdEngine) bind(c *kubekit.Cluster) podEngine {
	b := *e
	b.cluster = c
	return &b
}

// runSecret is the name of the run's own Secret.
func runSecret(runID string) string { return "storbench-" + strings.ToLower(runID) + "-ceph" }

// setUp copies the configuration into the run's Secret.
func (e *rbdEngine) setUp(ctx context.Context, runID string) (map[string]string, []string, error) {
	if e.cluster == nil {
		return nil, nil, fmt.Errorf("target %s: no cluster", e)
	}
	ns, err := e.cluster.EnsureNamespace(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("target %s: %w", e, err)
	}
	cfg, err := e.config(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("target %s: %w", e, err)
	}
	e.clientID, e.monHost, e.fsid = cfg.id, monHost(cfg.conf), cfg.fsid
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: runSecret(runID), Namespace: ns, Labels: map[string]string{
			kubekit.LabelManagedBy: kubekit.ManagedBy, kubekit.LabelName: "storbench", kubekit.LabelRunID: runID},
			Annotations: map[string]string{kubekit.AnnotationTarget: TargetPrefix + e.raw}},
		Data: map[string][]byte{"ceph.conf": podConf(cfg.conf, len(cfg.keyring) > 0)},
	}
	if len(cfg.keyring) > 0 {
		s.Data["keyring"] = cfg.keyring
	}
	if cfg.fsid != "" {
		s.Annotations[annotationCephFSID] = cfg.fsid
	}
	if _, err := e.cluster.Client.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return nil, nil, fmt.Errorf("target %s: creating Secret %s/%s: %w", e, ns, s.Name, err)
	}
	labels := map[string]string{}
	result.LabelCephPool.Set(labels, e.pool)
	return labels, []string{fmt.Sprintf("the pods reach Ceph as client.%s with the configuration from %s (Secret %s/%s for the run)", cfg.id, e.source(), ns, s.Name)}, nil
}

// tearDown deletes the run's Secret.
func (e *rbdEngine) tearDown(ctx context.Context, runID string) error {
	if e.cluster == nil {
		return nil
	}
	ns := e.cluster.Namespace()
	err := e.cluster.Client.CoreV1().Secrets(ns).Delete(ctx, runSecret(runID), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("target %s: deleting Secret %s/%s: %w", e, ns, runSecret(runID), err)
	}
	return nil
}

// podSpec mounts the run's Secret at RBDConfDir.
func (e *rbdEngine) podSpec(pod *corev1.Pod, runID string) {
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "ceph-config", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: runSecret(runID)}}})
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if c.Name != kubekit.ContainerName {
			continue
		}
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "ceph-config", MountPath: RBDConfDir, ReadOnly: true})
		c.Env = append(c.Env, corev1.EnvVar{Name: "CEPH_CONF", Value: RBDConfDir + "/ceph.conf"})
	}
}

// nodeImage is the image storbench makes for node in run runID.
func nodeImage(runID, node string) string { return rbd.Prefix + runID + "-" + node }

// podSetUp makes (or checks) the node's image with the rbd CLI in the
// pod, and reads the pool's facts.
func (e *rbdEngine) podSetUp(ctx context.Context, runID, node string, size int64, cmder *kubekit.PodCmder) (*podStage, error) {
	rem := rbd.NewRemote(cmder, RBDConfDir+"/ceph.conf", e.clientID)
	st := &podStage{undo: func(context.Context) error { return nil }, facts: rem.InUse()}
	image := e.image
	if image == "" {
		image = nodeImage(runID, node)
		notice, err := rem.MakeImage(ctx, e.pool, image, size)
		if err != nil {
			return nil, e.refused(cmder.Pod, err)
		}
		st.notices = append(st.notices, notice)
		st.owned = []string{"rbd:" + e.pool + "/" + image}
		st.undo = func(ctx context.Context) error {
			if err := rem.RemoveImage(ctx, e.pool, image); err != nil {
				return fmt.Errorf("target %s@%s: %w", e, node, err)
			}
			return nil
		}
	} else if n, err := rem.ImageBytes(ctx, e.pool, image); err != nil {
		return nil, fmt.Errorf("image %s/%s: %w", e.pool, image, e.refused(cmder.Pod, err))
	} else if n < size {
		return nil, fmt.Errorf("image %s/%s holds %d bytes, the suite spans %d", e.pool, image, n, size)
	}
	st.file = fio.File{Size: size, Engine: rem.EngineTarget(e.pool, image)}
	labels, where, err := e.poolLabels(ctx, cmder)
	if err != nil {
		st.notices = append(st.notices, fmt.Sprintf("pool %s's size and OSDs unknown: %v", e.pool, err))
		labels = map[string]string{}
		result.LabelCephPool.Set(labels, e.pool)
	} else {
		st.notices = append(st.notices, "pool "+e.pool+"'s size and OSDs read with "+where)
	}
	result.LabelCephImage.Set(labels, image)
	st.labels = labels
	return st, nil
}

// refused is the error of the pod's first use of Ceph (its image made or
// read): it names the client and where its key came from, and what to
// check when Ceph refused it or did not answer within
// CephMountTimeoutSeconds (a wrong key, a client Ceph does not know, a
// monitor the pod cannot reach).
func (e *rbdEngine) refused(pod string, err error) error {
	hint := "is the rbd CLI in the image?"
	msg := err.Error()
	for _, s := range []string{"Operation not permitted", "Permission denied", "timed out", "couldn't connect", "keyring"} {
		if strings.Contains(msg, s) {
			hint = fmt.Sprintf("does Ceph know this client and key, and can the pod reach the monitors %s? mounts give up after %d s", e.monHost, CephMountTimeoutSeconds)
			break
		}
	}
	return fmt.Errorf("in pod %s, as client.%s with the key from %s (%s): %w", pod, e.clientID, e.source(), hint, err)
}

// poolLabels are the pool's facts (ceph.Placement's labels) read with the
// first ceph CLI that reaches the run's Ceph, and which one it was: the
// pod's own when its image has one (with the run's configuration); this
// host's when it has a configuration (CEPH_CONF or /etc/ceph/ceph.conf);
// Rook's toolbox in Rook's namespace (kubekit.RookToolbox). The host's
// and the toolbox's are taken only for the Ceph the run's configuration
// names, when it names one (its fsid; Rook's Secret holds it).
func (e *rbdEngine) poolLabels(ctx context.Context, cmder *kubekit.PodCmder) (map[string]string, string, error) {
	if cmder.Command(ctx, "sh", "-c", "command -v ceph").Run() == nil {
		cl := ceph.Client{Cmder: cmder, Conf: RBDConfDir + "/ceph.conf", ID: e.clientID}
		pl, err := cl.PoolPlacement(ctx, e.pool)
		if err != nil {
			return nil, "", err
		}
		return pl.Labels(), "the ceph CLI in pod " + cmder.Pod + " as client." + e.clientID, nil
	}
	var pl ceph.Placement
	where, err := e.outsideCeph(ctx, func(cl ceph.Client) (err error) {
		pl, err = cl.PoolPlacement(ctx, e.pool)
		return err
	})
	if err == nil {
		return pl.Labels(), where, nil
	}
	labels, where, rerr := e.rookFacts(ctx)
	if rerr != nil {
		return nil, "", fmt.Errorf("the pod's image has no ceph CLI; %w; %w", err, rerr)
	}
	return labels, where + " (no ceph CLI reaches the Ceph: " + err.Error() + ")", nil
}

// rookFacts are the pool's facts from Rook's objects in Rook's namespace
// alone (kubekit.RookPoolLabels), for the run's Ceph only: the one whose
// objects gave the run its configuration, or, with a Secret named, the
// one whose fsid Rook's Secret holds when it is the run's.
func (e *rbdEngine) rookFacts(ctx context.Context) (map[string]string, string, error) {
	if e.cluster == nil {
		return nil, "", errors.New("Rook's objects: no cluster")
	}
	if e.secret != "" {
		s, err := e.cluster.Client.CoreV1().Secrets(e.rookNS).Get(ctx, rookMonSecret, metav1.GetOptions{})
		if err != nil {
			return nil, "", fmt.Errorf("Rook's objects: reading Secret %s/%s: %w", e.rookNS, rookMonSecret, err)
		}
		switch fsid := strings.TrimSpace(string(s.Data["fsid"])); {
		case fsid == "" || e.fsid == "":
			return nil, "", fmt.Errorf("Rook's objects in %s: cannot tell whether their Ceph is the run's (an fsid is missing in Rook's Secret %s or in %s)", e.rookNS, rookMonSecret, e.source())
		case fsid != e.fsid:
			return nil, "", fmt.Errorf("Rook's objects in %s are of Ceph %s, not the run's %s", e.rookNS, fsid, e.fsid)
		}
	}
	return kubekit.RookPoolLabels(ctx, e.cluster, e.rookNS, e.pool)
}

// outsideCeph calls use (when set) with the first ceph CLI outside the
// pods that reaches the run's Ceph (sameCeph) and for which use succeeds:
// this host's, then Rook's toolbox's. It returns where that CLI runs, or
// why each failed.
func (e *rbdEngine) outsideCeph(ctx context.Context, use func(ceph.Client) error) (string, error) {
	var tried []string
	for _, way := range []func() (ceph.Client, string, error){e.hostCeph, func() (ceph.Client, string, error) { return e.toolboxCeph(ctx) }} {
		cl, where, err := way()
		if err == nil {
			err = e.sameCeph(ctx, cl)
		}
		if err == nil && use != nil {
			err = use(cl)
		}
		if err == nil {
			return where, nil
		}
		tried = append(tried, err.Error())
	}
	return "", errors.New(strings.Join(tried, "; "))
}

// hostCeph is this host's ceph CLI with its own configuration.
func (e *rbdEngine) hostCeph() (ceph.Client, string, error) {
	conf := os.Getenv("CEPH_CONF")
	if conf == "" {
		conf = rbd.DefaultConf
	}
	if _, err := exec.LookPath("ceph"); err != nil {
		return ceph.Client{}, "", fmt.Errorf("this host has no ceph CLI: %w", err)
	}
	if _, err := os.Stat(conf); err != nil {
		return ceph.Client{}, "", fmt.Errorf("this host has no Ceph configuration: %w", err)
	}
	return ceph.Client{Cmder: execx.Local{}, Conf: conf}, "this host's ceph CLI and " + conf, nil
}

// toolboxCeph is the ceph CLI in Rook's toolbox in Rook's namespace.
func (e *rbdEngine) toolboxCeph(ctx context.Context) (ceph.Client, string, error) {
	if e.cluster == nil {
		return ceph.Client{}, "", fmt.Errorf("Rook's toolbox: no cluster")
	}
	cmder, err := kubekit.RookToolbox(ctx, e.cluster, e.rookNS)
	if err != nil {
		return ceph.Client{}, "", err
	}
	return ceph.Client{Cmder: cmder}, "the ceph CLI in Rook's toolbox pod " + cmder.Namespace + "/" + cmder.Pod, nil
}

// sameCeph refuses a ceph CLI that reaches another Ceph than the run's
// configuration names (its fsid), when it names one.
func (e *rbdEngine) sameCeph(ctx context.Context, cl ceph.Client) error {
	if e.fsid == "" {
		return nil
	}
	fsid, err := cl.FSID(ctx)
	if err != nil {
		return err
	}
	if fsid != e.fsid {
		return fmt.Errorf("%s reaches Ceph %s, not the run's %s", cephWhere(cl), fsid, e.fsid)
	}
	return nil
}

// cephWhere names where cl's ceph CLI runs, for errors.
func cephWhere(cl ceph.Client) string {
	if p, ok := cl.Cmder.(*kubekit.PodCmder); ok {
		return "the ceph CLI in pod " + p.Namespace + "/" + p.Pod
	}
	return "this host's ceph CLI (" + cl.Conf + ")"
}

// file and owned are the pod stage's (podSetUp): each node has its own.
func (e *rbdEngine) file(string, string, int64) fio.File { return fio.File{} }
func (e *rbdEngine) owned(string) []string               { return nil }

// doctor says what the pods would reach: the pool, the image, and the
// configuration, read (not copied) from where it comes from.
func (e *rbdEngine) doctor(ctx context.Context, _ runner.Options) []result.Check {
	c := result.Check{Area: "rbd", Name: TargetPrefix + e.raw, Status: result.CheckOK}
	if e.cluster == nil {
		c.Status, c.Detail = result.CheckInfo, e.Describe()
		return []result.Check{c}
	}
	cfg, err := e.config(ctx)
	if err != nil {
		c.Status, c.Detail, c.Fix = result.CheckFail, err.Error(), "name a Secret with ceph.conf (and keyring): ?secret=NAMESPACE/NAME, or grant storbench the rbd-pods RBAC block (docs/ceph.md)"
		return []result.Check{c}
	}
	c.Detail = fmt.Sprintf("the pods reach pool %s as client.%s, mon host %s, with the configuration from %s; %s",
		e.pool, cfg.id, monHost(cfg.conf), e.source(), e.Describe())
	return []result.Check{c, e.factsCheck(ctx, cfg)}
}

// factsCheck says where a run would read the pool's size, OSDs and
// hosts when the pods' image has no ceph CLI of its own (poolLabels):
// this host's ceph CLI or Rook's toolbox, each taken only when it
// reaches the Ceph of configuration cfg.
func (e *rbdEngine) factsCheck(ctx context.Context, cfg cephConfig) result.Check {
	c := result.Check{Area: "rbd", Name: "pool facts " + e.pool, Status: result.CheckOK}
	with := *e
	with.fsid = cfg.fsid
	where, err := with.outsideCeph(ctx, nil)
	if err != nil {
		_, rook, rerr := with.rookFacts(ctx)
		if rerr == nil {
			c.Detail = "the pool's size, OSDs and hosts are read from " + rook + ", the OSDs its rule may choose rather than those its placement groups act on (or with the fio image's own ceph CLI); no ceph CLI reaches the Ceph: " + err.Error()
			return c
		}
		err = fmt.Errorf("%w; %w", err, rerr)
		c.Status = result.CheckInfo
		c.Detail = "unless the fio image has a ceph CLI, results will not carry the pool's size, OSDs and hosts: " + err.Error()
		c.Fix = "give this host the cluster's ceph.conf (CEPH_CONF), or run Rook's toolbox in namespace " + e.rookNS + " (docs/ceph.md)"
		return c
	}
	c.Detail = "the pool's size, OSDs and hosts are read with " + where + " (or the fio image's own ceph CLI)"
	return c
}

// monHost is the mon host line of a ceph.conf, for reports.
func monHost(conf []byte) string {
	if v := confValue(conf, "mon host"); v != "" {
		return v
	}
	return "(not in ceph.conf)"
}

// confValue is the value of key in a ceph.conf (Ceph's spellings: spaces
// or underscores between words), "" when it has none.
func confValue(conf []byte, key string) string {
	for _, line := range strings.Split(string(conf), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if k = strings.ReplaceAll(strings.TrimSpace(k), "_", " "); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// CephMountTimeoutSeconds bounds how long the pods' Ceph clients (rbd,
// ceph, fio's rbd engine) wait for the monitors to let them in: Ceph's
// default is 300 s, and a client whose key the monitors refuse may retry
// until then.
const CephMountTimeoutSeconds = 30

// podConf is the ceph.conf the pods get: the one given, with the mount
// timeouts (CephMountTimeoutSeconds) unless it sets them, and, when a
// keyring comes with it, that keyring (RBDConfDir/keyring) named in
// [global] in place of any other path, which would name a file of the
// user's machine, not of the pod.
func podConf(conf []byte, keyring bool) []byte {
	var kept []string
	set := map[string]bool{}
	for _, line := range strings.Split(strings.TrimRight(string(conf), "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		k = strings.Join(strings.Fields(strings.ReplaceAll(strings.ToLower(k), "_", " ")), " ")
		if ok && k == "keyring" && keyring && strings.TrimSpace(v) != RBDConfDir+"/keyring" {
			continue
		}
		if ok {
			set[k] = true
		}
		kept = append(kept, line)
	}
	var add []string
	for _, k := range []string{"client mount timeout", "rados mount timeout"} {
		if !set[k] {
			add = append(add, fmt.Sprintf("%s = %d", k, CephMountTimeoutSeconds))
		}
	}
	if keyring && !set["keyring"] {
		add = append(add, "keyring = "+RBDConfDir+"/keyring")
	}
	at := slices.IndexFunc(kept, func(l string) bool { return strings.TrimSpace(l) == "[global]" })
	if at < 0 {
		kept = slices.Insert(kept, 0, "[global]")
		at = 0
	}
	kept = slices.Insert(kept, at+1, add...)
	return []byte(strings.Join(kept, "\n") + "\n")
}

// cephConfig is what the pods get: ceph.conf, the keyring (optional) and
// the client ID fio and rbd use.
type cephConfig struct {
	conf, keyring []byte
	id            string
	fsid          string // the Ceph's, when known ("" : any)
}

// config reads the configuration from the named Secret or Rook's objects.
func (e *rbdEngine) config(ctx context.Context) (cephConfig, error) {
	core := e.cluster.Client.CoreV1()
	if e.secret != "" {
		ns, name, ok := strings.Cut(e.secret, "/")
		if !ok {
			ns, name = e.cluster.Namespace(), e.secret
		}
		s, err := core.Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return cephConfig{}, fmt.Errorf("reading Secret %s/%s: %w", ns, name, err)
		}
		if len(s.Data["ceph.conf"]) == 0 {
			return cephConfig{}, fmt.Errorf("Secret %s/%s has no key ceph.conf", ns, name)
		}
		id := e.id
		if id == "" {
			id = "admin"
		}
		// Ceph's parser refuses a last line without its newline, which
		// kubectl create secret --from-literal="$(cat ceph.conf)" drops.
		conf := s.Data["ceph.conf"]
		if conf[len(conf)-1] != '\n' {
			conf = append(slices.Clone(conf), '\n')
		}
		return cephConfig{conf: conf, keyring: s.Data["keyring"], id: id, fsid: confValue(conf, "fsid")}, nil
	}
	cm, err := core.ConfigMaps(e.rookNS).Get(ctx, rookMonEndpoints, metav1.GetOptions{})
	if err != nil {
		return cephConfig{}, fmt.Errorf("reading Rook's ConfigMap %s/%s (or name a Secret: ?secret=NAMESPACE/NAME): %w", e.rookNS, rookMonEndpoints, err)
	}
	s, err := core.Secrets(e.rookNS).Get(ctx, rookMonSecret, metav1.GetOptions{})
	if err != nil {
		return cephConfig{}, fmt.Errorf("reading Rook's Secret %s/%s: %w", e.rookNS, rookMonSecret, err)
	}
	user, key := string(s.Data["ceph-username"]), string(s.Data["ceph-secret"])
	if key == "" { // Rook before 1.4: the admin's key only
		user, key = "client.admin", string(s.Data["admin-secret"])
	}
	cfg, err := rookConfig(cm.Data["data"], user, key)
	if err != nil {
		return cephConfig{}, fmt.Errorf("Rook's objects in %s: %w", e.rookNS, err)
	}
	cfg.fsid = strings.TrimSpace(string(s.Data["fsid"]))
	if e.id != "" && e.id != cfg.id {
		return cephConfig{}, fmt.Errorf("Rook's Secret %s/%s holds the key of client.%s, not client.%s (name a Secret for another client)", e.rookNS, rookMonSecret, cfg.id, e.id)
	}
	return cfg, nil
}

// rookMonName is a mon's name before its address in Rook's endpoints
// (a=10.0.0.1:6789,b=...), removed as Rook's toolbox does.
var rookMonName = regexp.MustCompile(`[a-z0-9_-]+=`)

// rookConfig is the configuration Rook's toolbox writes from the mon
// endpoints (ConfigMap rook-ceph-mon-endpoints, key data) and the
// client's name (client.admin or admin) and key (Secret rook-ceph-mon).
func rookConfig(endpoints, user, key string) (cephConfig, error) {
	mons := strings.TrimSpace(rookMonName.ReplaceAllString(endpoints, ""))
	id := strings.TrimPrefix(strings.TrimSpace(user), "client.")
	switch {
	case strings.Trim(mons, ",") == "":
		return cephConfig{}, fmt.Errorf("no mon endpoints in %q", endpoints)
	case key == "":
		return cephConfig{}, fmt.Errorf("no key for %s", user)
	case id == "":
		return cephConfig{}, fmt.Errorf("no client name")
	}
	conf := fmt.Sprintf("[global]\nmon host = %s\n\n[client.%s]\nkeyring = %s/keyring\n", mons, id, RBDConfDir)
	keyring := fmt.Sprintf("[client.%s]\nkey = %s\n", id, strings.TrimSpace(key))
	return cephConfig{conf: []byte(conf), keyring: []byte(keyring), id: id}, nil
}
