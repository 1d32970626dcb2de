package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/units"
)

// Paths inside the pod.
const (
	// WorkDir is the container's working directory: the volume's mount (or
	// an emptyDir beside a raw block device). fio gets paths relative to it.
	WorkDir = "/storbench"
	// TestFileName is the file fio uses on a filesystem volume.
	TestFileName = "storbench-test.dat"
)

// TargetOptions configure the PVC and pod of every target.
type TargetOptions struct {
	Image      string
	PullPolicy corev1.PullPolicy
	// Size is the PVC's requested size in bytes; 0 fits the suite.
	Size       int64
	VolumeMode corev1.PersistentVolumeMode
	AccessMode corev1.PersistentVolumeAccessMode
	// PodOverrides is a strategic-merge patch (JSON) applied to the pod.
	PodOverrides []byte
	// Timeout bounds each waiting phase; 0 means DefaultTimeout.
	Timeout time.Duration
	// Report hears things the user should know that are not failures, such
	// as a Released volume left by a Retain class. May be nil.
	Report func(target, message string)
	// Ceph reaches the Ceph behind the class, for its OSDs' figures
	// (class_osds.go); the target's options set it.
	Ceph CephAccess
	// OSDBenches, shared by a run's targets, benches each Ceph pool's
	// OSDs once (class_osds.go); nil benches them for every target.
	OSDBenches *OSDBenches
}

// Target is one StorageClass on one node.
type Target struct {
	cluster *kubekit.Cluster
	class   string
	node    string
	index   int
	opts    TargetOptions
	sweep   sweepClients // clients.go
}

var (
	_ runner.Target  = (*Target)(nil)
	_ runner.Checker = (*Target)(nil)
)

// NewTarget returns the target for class on node. index makes object names
// unique within a run.
func NewTarget(c *kubekit.Cluster, class, node string, index int, opts TargetOptions) *Target {
	if opts.Timeout <= 0 {
		opts.Timeout = kubekit.DefaultTimeout
	}
	if opts.Image == "" {
		opts.Image = kubekit.DefaultImage
	}
	opts.Image = kubekit.ImageAlias(opts.Image)
	if opts.VolumeMode == "" {
		opts.VolumeMode = corev1.PersistentVolumeFilesystem
	}
	if opts.AccessMode == "" {
		opts.AccessMode = corev1.ReadWriteOnce
	}
	if opts.PullPolicy == "" {
		opts.PullPolicy = corev1.PullIfNotPresent
	}
	return &Target{cluster: c, class: class, node: node, index: index, opts: opts}
}

// TargetName is how results name a class on a node.
func TargetName(class, node string) string { return "k8s:" + class + "@" + node }

// Name implements runner.Target.
func (t *Target) Name() string { return TargetName(t.class, t.node) }

// Class is the target's StorageClass.
func (t *Target) Class() string { return t.class }

// Node is the target's node.
func (t *Target) Node() string { return t.node }

// FitSize is the PVC size storbench asks for when --size is not given: the
// largest test file plus a quarter and 64 MiB for filesystem overhead, in
// whole GiB, at least 1 GiB.
func FitSize(fileSize int64) int64 {
	const gib = 1 << 30
	want := fileSize + fileSize/4 + 64<<20
	n := (want + gib - 1) / gib
	return max(n, 1) * gib
}

// usable is how much of a PVC of this size a test file may fill.
func (t *Target) usable(size int64) int64 {
	if t.opts.VolumeMode == corev1.PersistentVolumeBlock {
		return size
	}
	return size / 10 * 9 // filesystem metadata and reserved blocks
}

func (t *Target) pvcSize(need runner.Need) int64 {
	if t.opts.Size > 0 {
		return t.opts.Size
	}
	return FitSize(need.FileSize)
}

// Check implements runner.Checker: the suite fits the PVC, the class and the
// node exist, and the pod overrides apply. Nothing is created.
func (t *Target) Check(ctx context.Context, need runner.Need) error {
	if size := t.pvcSize(need); need.FileSize > t.usable(size) {
		return fmt.Errorf("target %s: the suite needs a %s test file but a %s PVC holds at most %s of it: pass --size %s or more",
			t.Name(), units.Bytes(need.FileSize), units.Bytes(size), units.Bytes(t.usable(size)), quantity(FitSize(need.FileSize)))
	}
	if _, err := t.cluster.Client.StorageV1().StorageClasses().Get(ctx, t.class, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("target %s: StorageClass %q does not exist (storbench classes lists them)", t.Name(), t.class)
		}
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("target %s: %w", t.Name(), err)
		}
	}
	if _, err := t.cluster.Client.CoreV1().Nodes().Get(ctx, t.node, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("target %s: node %q does not exist", t.Name(), t.node)
		}
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("target %s: %w", t.Name(), err)
		}
	}
	if _, err := t.podSpec("check", t.cluster.Namespace(), "check", map[string]string{"kubernetes.io/hostname": t.node}); err != nil {
		return err
	}
	return nil
}

func quantity(bytes int64) string {
	return resource.NewQuantity(bytes, resource.BinarySI).String()
}

// objectName is the name of the target's PVC and pod.
func objectName(runID string, index int) string {
	return fmt.Sprintf("storbench-%s-%d", strings.ToLower(runID), index)
}

func (t *Target) labels(runID string) map[string]string {
	return map[string]string{kubekit.LabelManagedBy: kubekit.ManagedBy, kubekit.LabelName: "storbench", kubekit.LabelRunID: runID}
}

// Prepare implements runner.Target: it creates the PVC and the pod, waits
// for the pod to run, and returns a Cmder that execs into it.
func (t *Target) Prepare(ctx context.Context, need runner.Need) (_ *runner.Prepared, err error) {
	env, err := t.lookUp(ctx)
	if err != nil {
		return nil, err
	}
	name := objectName(need.RunID, t.index)
	o := &objects{cluster: t.cluster, ns: env.ns, name: name, target: t.Name(), report: t.opts.Report, timeout: t.opts.Timeout}
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.opts.Timeout)
			defer cancel()
			if cerr := o.delete(cctx, false); cerr != nil {
				err = errors.Join(err, fmt.Errorf("and cleaning up: %w", cerr))
			}
		}
	}()
	size, err := t.create(ctx, o, env, need)
	if err != nil {
		return nil, err
	}
	running, err := o.waitRunning(ctx)
	if err != nil {
		return nil, t.accessModeHint(fmt.Errorf("target %s: %w", t.Name(), err)) // clients.go
	}
	labels := t.podLabels(env, running, size)
	if env.restricted {
		result.LabelPodSecurity.Set(labels, "restricted")
		cmder := &kubekit.PodCmder{Exec: t.cluster.Exec, Namespace: o.ns, Pod: o.name, Container: kubekit.ContainerName}
		if err := kubekit.Writable(ctx, cmder); err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Name(), err)
		}
	}
	if n := kubekit.CephLabels(ctx, t.cluster.Dynamic, env.sc, labels); n != "" {
		env.notices = append(env.notices, n)
	}
	env.notices = append(env.notices, kubekit.ClassReplication(env.sc, labels)...)
	if err := o.volumeLabels(ctx, labels); err != nil {
		env.notices = append(env.notices, err.Error())
	}
	if n := kubekit.LonghornLabels(ctx, t.cluster.Dynamic, labels); n != "" {
		env.notices = append(env.notices, n)
	}
	p, err := t.prepared(ctx, o, running, labels, env.notices, need)
	if err != nil {
		return nil, err
	}
	t.classOSDs(ctx, env.sc, p) // class_osds.go
	return p, nil
}

// targetEnv is what Prepare reads before creating anything: the namespace,
// the class and the node (each nil where RBAC forbids reading it).
type targetEnv struct {
	ns      string
	notices []string
	sc      *storagev1.StorageClass
	node    *corev1.Node
	hostSel map[string]string
	// restricted is a fio pod made to Pod Security's restricted profile
	// after its usual form was refused.
	restricted bool
}

func (t *Target) lookUp(ctx context.Context) (*targetEnv, error) {
	ns, err := t.cluster.EnsureNamespace(ctx)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name(), err)
	}
	env := &targetEnv{ns: ns}
	if n := t.cluster.NamespaceNotice(); n != "" {
		env.notices = append(env.notices, n)
	}
	env.sc, err = t.cluster.Client.StorageV1().StorageClasses().Get(ctx, t.class, metav1.GetOptions{})
	if apierrors.IsForbidden(err) {
		env.sc = nil
	} else if err != nil {
		return nil, fmt.Errorf("target %s: StorageClass: %w", t.Name(), err)
	}
	env.node, err = t.cluster.Client.CoreV1().Nodes().Get(ctx, t.node, metav1.GetOptions{})
	if apierrors.IsForbidden(err) {
		env.node = nil
	} else if err != nil {
		return nil, fmt.Errorf("target %s: node: %w", t.Name(), err)
	}
	env.hostSel = map[string]string{"kubernetes.io/hostname": t.node}
	if env.node != nil && env.node.Labels["kubernetes.io/hostname"] != "" {
		env.hostSel["kubernetes.io/hostname"] = env.node.Labels["kubernetes.io/hostname"]
	}
	return env, nil
}

// create creates the PVC and the pod pinned to the node, and returns the
// PVC's size.
func (t *Target) create(ctx context.Context, o *objects, env *targetEnv, need runner.Need) (int64, error) {
	pod, err := t.podSpec(o.name, env.ns, need.RunID, env.hostSel)
	if err != nil {
		return 0, err
	}
	size := t.pvcSize(need)
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: env.ns, Labels: t.labels(need.RunID),
			Annotations: map[string]string{kubekit.AnnotationTarget: t.Name()}},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &t.class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{t.opts.AccessMode},
			VolumeMode:       &t.opts.VolumeMode,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: *resource.NewQuantity(size, resource.BinarySI)}},
		},
	}
	if _, err := t.cluster.Client.CoreV1().PersistentVolumeClaims(env.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("target %s: creating PVC %s/%s: %w", t.Name(), env.ns, o.name, err)
	}
	o.pvcCreated = true
	restricted, err := kubekit.CreatePod(ctx, t.cluster.Client, pod)
	if err != nil {
		return 0, fmt.Errorf("target %s: creating pod %s/%s: %w", t.Name(), env.ns, o.name, err)
	}
	o.podCreated = true
	if restricted != "" {
		env.restricted = true
		env.notices = append(env.notices, restricted)
	}
	return size, nil
}

// podLabels describe the pod, its volume's class and the node it runs on.
func (t *Target) podLabels(env *targetEnv, running *corev1.Pod, size int64) map[string]string {
	labels := map[string]string{}
	for k, v := range map[result.LabelKey]string{
		result.LabelK8sNamespace: env.ns, result.LabelK8sPod: running.Name, result.LabelK8sPVC: running.Name,
		result.LabelStorageClass: t.class, result.LabelVolumeMode: string(t.opts.VolumeMode), result.LabelAccessMode: string(t.opts.AccessMode),
		result.LabelPVCSize: quantity(size), result.LabelImage: t.opts.Image,
	} {
		k.Set(labels, v)
	}
	nodeName := running.Spec.NodeName
	result.LabelNode.Set(labels, nodeName)
	if node := env.node; node != nil {
		for k, v := range node.Labels {
			labels[k] = v
		}
		result.LabelNode.Set(labels, nodeName)
		if a := node.Status.NodeInfo.Architecture; a != "" {
			result.LabelArch.Set(labels, a)
		}
		if k := node.Status.NodeInfo.KernelVersion; k != "" {
			result.LabelKernel.Set(labels, k)
		}
		if v := node.Status.NodeInfo.KubeletVersion; v != "" {
			result.LabelKubeletVersion.Set(labels, v)
		}
		// The memory that can cache the volume, for storbench's cache check.
		if m := node.Status.Capacity.Memory(); m != nil && m.Value() > 0 {
			result.LabelMemBytes.Set(labels, fmt.Sprint(m.Value()))
		}
	}
	if sc := env.sc; sc != nil {
		result.LabelProvisioner.Set(labels, sc.Provisioner)
		for k, v := range sc.Parameters {
			result.ClassParameter(k).Set(labels, v)
		}
		if sc.ReclaimPolicy != nil {
			result.LabelReclaimPolicy.Set(labels, string(*sc.ReclaimPolicy))
		}
	}
	return labels
}

// prepared is the running pod as a prepared target: its exec, the links
// under its volume, its node's telemetry and its network endpoint.
func (t *Target) prepared(ctx context.Context, o *objects, running *corev1.Pod, labels map[string]string, notices []string, need runner.Need) (*runner.Prepared, error) {
	cmder := &kubekit.PodCmder{Exec: t.cluster.Exec, Namespace: o.ns, Pod: o.name, Container: kubekit.ContainerName}
	linkFacts(ctx, cmder, labels) // telemetry.go
	pods := &samplerPods{t: t, ns: o.ns, base: o.name, runID: need.RunID}
	sample, stopSampling := t.podTelemetry(cmder, o, pods, running.Spec.NodeName, labels)
	p := &runner.Prepared{
		Name:      t.Name(),
		Kind:      "kubernetes",
		MemoryOf:  "node " + running.Spec.NodeName,
		Cmder:     cmder,
		Labels:    labels,
		Notices:   notices,
		File:      fio.File{Name: TestFileName},
		Telemetry: sample,
	}
	if ip := running.Status.PodIP; ip != "" {
		p.Net = &runner.NetEndpoint{Node: running.Spec.NodeName, Address: ip, Network: "pod", Cmder: cmder}
		p.NetPeers = t.netPeers(pods, running.Spec.NodeName, labels) // nodesampler.go
	}
	if t.opts.VolumeMode == corev1.PersistentVolumeBlock {
		p.File = fio.File{Name: kubekit.BlockDevicePath}
		if err := checkBlockVolume(ctx, cmder, need); err != nil {
			return nil, errors.Join(fmt.Errorf("target %s: %w", t.Name(), err), stopSampling(), pods.delete(ctx))
		}
	}
	p.Cleanup = func(ctx context.Context) error {
		return errors.Join(stopSampling(), pods.delete(ctx), o.delete(ctx, true))
	}
	return p, nil
}

// containerScript keeps the container alive for exec, installing fio first
// on images that lack it but have apk (the default Alpine image).
const containerScript = `if ! command -v fio >/dev/null 2>&1; then
  if command -v apk >/dev/null 2>&1; then apk add --no-cache fio >&2 || exit 1
  else echo "storbench: this image has no fio and no apk to install it: pass --image with fio in it" >&2; exit 1; fi
fi
echo "storbench: $(fio --version) ready"
trap 'exit 0' TERM INT
while :; do sleep 3600 & wait $!; done`

// podSpec builds the pod and applies the user's overrides.
func (t *Target) podSpec(name, ns, runID string, nodeSelector map[string]string) (*corev1.Pod, error) {
	grace := int64(5)
	no := false
	c := corev1.Container{
		Name:            kubekit.ContainerName,
		Image:           t.opts.Image,
		ImagePullPolicy: t.opts.PullPolicy,
		Command:         []string{"sh", "-c", containerScript},
		WorkingDir:      WorkDir,
		// A container that exits (no fio, apk failing) explains itself.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "command -v fio >/dev/null"}}},
			PeriodSeconds: 1, FailureThreshold: 1,
		},
	}
	vols := []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}}
	if t.opts.VolumeMode == corev1.PersistentVolumeBlock {
		c.VolumeDevices = []corev1.VolumeDevice{{Name: "data", DevicePath: kubekit.BlockDevicePath}}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: WorkDir}}
		vols = append(vols, corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	} else {
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: WorkDir}}
	}
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: t.labels(runID),
			Annotations: map[string]string{kubekit.AnnotationTarget: t.Name()}},
		Spec: corev1.PodSpec{
			NodeSelector:                  nodeSelector,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			Containers:                    []corev1.Container{c},
			Volumes:                       vols,
		},
	}
	return kubekit.ApplyPodOverrides(pod, t.opts.PodOverrides)
}

// objects are one target's PVC and pod.
type objects struct {
	cluster    *kubekit.Cluster
	ns, name   string
	target     string
	report     func(target, message string)
	timeout    time.Duration
	pvcCreated bool
	podCreated bool
	pvName     string
}

const pollInterval = 200 * time.Millisecond

// schedulerNudge is each wait's kubekit.BindingNudge as it starts: the
// defaults (tests shorten them).
var schedulerNudge kubekit.BindingNudge

// waitRunning waits, in two bounded phases, for the pod to be scheduled with
// its volume bound, then for it to run with fio ready.
func (o *objects) waitRunning(ctx context.Context) (*corev1.Pod, error) {
	pods := o.cluster.Client.CoreV1().Pods(o.ns)
	pvcs := o.cluster.Client.CoreV1().PersistentVolumeClaims(o.ns)

	var pod *corev1.Pod
	phase := func(what string, done func() (bool, error)) error {
		pctx, cancel := context.WithTimeout(ctx, o.timeout)
		defer cancel()
		tick := time.NewTicker(pollInterval)
		defer tick.Stop()
		var lastErr error
		for {
			p, err := pods.Get(pctx, o.name, metav1.GetOptions{})
			if err == nil {
				pod = p
				if err := podFailed(p); err != nil {
					return o.explain(ctx, err)
				}
				ok, err := done()
				if err != nil {
					return o.explain(ctx, err)
				}
				if ok {
					return nil
				}
			} else if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
				return fmt.Errorf("reading pod %s/%s: %w", o.ns, o.name, err)
			} else {
				lastErr = err // transient (network, rate limiter): keep polling
			}
			select {
			case <-pctx.Done():
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if pod == nil && lastErr != nil {
					return fmt.Errorf("%s within %s: reading pod %s/%s: %w", what, o.timeout, o.ns, o.name, lastErr)
				}
				return o.explain(ctx, fmt.Errorf("%s within %s", what, o.timeout))
			case <-tick.C:
			}
		}
	}
	var lastEvents, boundAt time.Time
	nudge := schedulerNudge
	err := phase("PVC "+o.name+" not bound and pod not scheduled", func() (bool, error) {
		pvc, err := pvcs.Get(ctx, o.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("PVC %s/%s was deleted while storbench waited for it", o.ns, o.name)
		}
		if err != nil {
			return false, nil // transient: the phase's deadline bounds it
		}
		if pvc.Status.Phase == corev1.ClaimBound {
			if boundAt.IsZero() {
				boundAt = time.Now()
			}
			o.nudgeScheduler(ctx, pod, boundAt, &nudge)
			return pod.Spec.NodeName != "", nil
		}
		if time.Since(lastEvents) >= time.Second {
			lastEvents = time.Now()
			if msg := o.provisioningFailed(ctx); msg != "" {
				return false, fmt.Errorf("PVC %s/%s not bound: its provisioner failed: %s", o.ns, o.name, msg)
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	err = phase("pod "+o.name+" not running with fio ready", func() (bool, error) {
		if err := containerStuck(pod); err != nil {
			return false, err
		}
		return pod.Status.Phase == corev1.PodRunning && podReady(pod), nil
	})
	return pod, err
}

// nudgeScheduler touches the target's claim, one this run created, bound
// since boundAt, when the scheduler still sets its pod aside for an
// unbound claim (kubekit.BindingNudge says why and when); a touch it may
// not make is reported, and the wait goes on.
func (o *objects) nudgeScheduler(ctx context.Context, pod *corev1.Pod, boundAt time.Time, n *kubekit.BindingNudge) {
	now := time.Now()
	if !o.pvcCreated || !n.Due(pod, boundAt, now) {
		return
	}
	msg := kubekit.NudgeMessage(o.ns, o.name, o.name, now.Sub(boundAt))
	if err := kubekit.TouchClaim(ctx, o.cluster.Client, o.ns, o.name, now); err != nil {
		msg = err.Error()
	}
	if o.report != nil {
		o.report(o.target, msg)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podFailed reports a pod that stopped: its container exited (no fio, no
// way to install it) or the node evicted it.
func podFailed(p *corev1.Pod) error {
	if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
		return nil
	}
	msg := fmt.Sprintf("pod %s stopped (%s)", p.Name, p.Status.Phase)
	if p.Status.Reason != "" || p.Status.Message != "" {
		msg += ": " + strings.TrimSpace(p.Status.Reason+" "+p.Status.Message)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			msg += fmt.Sprintf("; container %s exited with code %d", cs.Name, t.ExitCode)
			if t.Message != "" {
				msg += ": " + t.Message
			}
		}
	}
	return errors.New(msg)
}

// containerStuck reports waiting reasons that never resolve by themselves:
// an image the node cannot have (a failed pull is retried with a growing
// back-off for as long as the pod lives, so the first failure ends the
// wait, with the ways out) or a container that cannot be configured.
func containerStuck(p *corev1.Pod) error {
	for _, cs := range p.Status.ContainerStatuses {
		w := cs.State.Waiting
		if w == nil {
			continue
		}
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull":
			return &kubekit.ImageError{Image: cs.Image, Node: p.Spec.NodeName, Reason: w.Reason, Message: w.Message}
		case "InvalidImageName", "CreateContainerConfigError":
			return fmt.Errorf("container %s cannot start: %s: %s", cs.Name, w.Reason, w.Message)
		}
	}
	return nil
}

// provisioningFailed returns the provisioner's last failure for the claim
// ("ProvisioningFailed" warning events), "" when it reported none.
func (o *objects) provisioningFailed(ctx context.Context) string {
	list, err := o.cluster.Client.CoreV1().Events(o.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + o.name})
	if err != nil {
		return ""
	}
	var last *corev1.Event
	for i, e := range list.Items {
		if e.InvolvedObject.Kind == "PersistentVolumeClaim" && e.Reason == "ProvisioningFailed" && e.Type == corev1.EventTypeWarning &&
			(last == nil || eventTime(e).After(eventTime(*last))) {
			last = &list.Items[i]
		}
	}
	if last == nil {
		return ""
	}
	return strings.TrimSpace(last.Message)
}

// explain adds what the cluster says about the PVC and pod: the scheduler's
// condition, container waiting reasons and the objects' recent events.
func (o *objects) explain(ctx context.Context, cause error) error {
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var why []string
	// add keeps each reason once: pods of a Job repeat the same events.
	add := func(reason string) {
		if !slices.Contains(why, reason) {
			why = append(why, reason)
		}
	}
	if p, err := o.cluster.Client.CoreV1().Pods(o.ns).Get(ectx, o.name, metav1.GetOptions{}); err == nil {
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue && c.Message != "" {
				add(fmt.Sprintf("pod %s: %s", c.Type, c.Message))
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason != "" {
				add(fmt.Sprintf("container %s waiting: %s %s", cs.Name, w.Reason, w.Message))
			}
		}
	}
	if pvc, err := o.cluster.Client.CoreV1().PersistentVolumeClaims(o.ns).Get(ectx, o.name, metav1.GetOptions{}); err == nil && pvc.Status.Phase != corev1.ClaimBound {
		add(fmt.Sprintf("PVC %s is %s", o.name, pvc.Status.Phase))
	}
	evs, err := Events(ectx, o.cluster.Client, o.ns, o.name)
	if err != nil {
		add("events unavailable: " + err.Error())
	}
	for _, e := range evs {
		add(e)
	}
	if len(why) == 0 {
		return cause
	}
	return fmt.Errorf("%w: %s", cause, strings.Join(why, "; "))
}

// Events returns the recent warning events about objects named name in ns,
// oldest first, as "Kind Reason: message".
func Events(ctx context.Context, client kubernetes.Interface, ns, name string) ([]string, error) {
	list, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return nil, err
	}
	items := list.Items
	sort.SliceStable(items, func(i, j int) bool { return eventTime(items[i]).Before(eventTime(items[j])) })
	var out []string
	for _, e := range items {
		if e.InvolvedObject.Name != name || e.Type == corev1.EventTypeNormal {
			continue // progress reports, not explanations
		}
		msg := fmt.Sprintf("%s %s: %s", e.InvolvedObject.Kind, e.Reason, strings.TrimSpace(e.Message))
		if e.Count > 1 {
			msg += fmt.Sprintf(" (x%d)", e.Count)
		}
		out = append(out, msg)
	}
	if len(out) > 8 {
		out = out[len(out)-8:]
	}
	return out, nil
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// volumeLabels records the bound PV and, for node-bound volumes, the node
// that holds it.
func (o *objects) volumeLabels(ctx context.Context, labels map[string]string) error {
	pvc, err := o.cluster.Client.CoreV1().PersistentVolumeClaims(o.ns).Get(ctx, o.name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading PVC %s: %w", o.name, err)
	}
	o.pvName = pvc.Spec.VolumeName
	if o.pvName == "" {
		return nil
	}
	result.LabelPV.Set(labels, o.pvName)
	pv, err := o.cluster.Client.CoreV1().PersistentVolumes().Get(ctx, o.pvName, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return nil
		}
		return fmt.Errorf("reading PV %s: %w", o.pvName, err)
	}
	if q, ok := pv.Spec.Capacity[corev1.ResourceStorage]; ok {
		result.LabelPVCapacity.Set(labels, q.String())
	}
	if n := volumeNode(pv); n != "" {
		result.LabelVolumeNode.Set(labels, n)
	}
	if pv.Spec.CSI != nil {
		result.LabelCSIDriver.Set(labels, pv.Spec.CSI.Driver)
	}
	if addr := kubekit.VolumeServer(pv); addr != "" {
		result.LabelVolumeServer.Set(labels, addr)
		kubekit.ServerNodeLabels(ctx, o.cluster.Client, addr, labels)
	}
	return nil
}

// volumeNode is the single node a PV's node affinity pins it to, if any.
func volumeNode(pv *corev1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	var nodes []string
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Key == "kubernetes.io/hostname" && e.Operator == corev1.NodeSelectorOpIn {
				nodes = append(nodes, e.Values...)
			}
		}
	}
	if len(nodes) == 1 {
		return nodes[0]
	}
	return ""
}

// delete removes the pod and PVC and waits for both to go. With wipe, it
// first removes fio's files from the volume, so a Retain class does not
// keep them.
func (o *objects) delete(ctx context.Context, wipe bool) error {
	var errs []error
	if wipe && o.podCreated {
		if err := o.wipe(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if o.pvName == "" && o.pvcCreated {
		if pvc, err := o.cluster.Client.CoreV1().PersistentVolumeClaims(o.ns).Get(ctx, o.name, metav1.GetOptions{}); err == nil {
			o.pvName = pvc.Spec.VolumeName
		}
	}
	var made []result.KubeObject
	if o.podCreated {
		made = append(made, result.KubeObject{Kind: "pod", Namespace: o.ns, Name: o.name})
	}
	if o.pvcCreated {
		made = append(made, result.KubeObject{Kind: "pvc", Namespace: o.ns, Name: o.name})
	}
	res := kubekit.DeleteObjects(ctx, o.cluster.Client, made, o.timeout)
	errs = append(errs, res.Err())
	if o.pvName != "" && res.Err() == nil {
		if msg := releasedVolume(ctx, o.cluster.Client, o.pvName); msg != "" && o.report != nil {
			o.report(o.target, msg)
		}
	}
	return errors.Join(errs...)
}

// wipe stops what storbench still runs in the pod and removes fio's test
// file, so a Retain class does not keep it.
func (o *objects) wipe(ctx context.Context) error {
	return WipePod(ctx, o.cluster, o.ns, o.name)
}

// wipeScript stops commands the exec wrapper recorded (a run killed
// outright leaves them running where deleting the pod does not stop them)
// and removes storbench's files from the working directory.
const wipeScript = kubekit.SignalTree + `for f in .storbench-exec-*.pid; do [ -s "$f" ] && sigtree TERM "$(cat "$f")"; done
i=0; while [ "$i" -lt 30 ]; do alive=0
  for f in .storbench-exec-*.pid; do [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1; done
  [ "$alive" = 0 ] && break; sleep 0.1; i=$((i+1)); done
for f in .storbench-exec-*.pid; do [ -s "$f" ] && sigtree KILL "$(cat "$f")"; done
rm -f ` + TestFileName + ` .storbench-exec-*.pid`

// WipePod runs wipeScript in a running storbench pod; a pod that is not
// running has nothing to wipe with, and the volume's reclaim policy decides.
func WipePod(ctx context.Context, c *kubekit.Cluster, ns, name string) error {
	p, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil || p.Status.Phase != corev1.PodRunning {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, kubekit.StopTimeout)
	defer cancel()
	var errb strings.Builder
	err = c.Exec.Exec(wctx, kubekit.ExecRequest{Namespace: ns, Pod: name, Container: kubekit.ContainerName,
		Command: []string{"sh", "-c", wipeScript}, Stdout: io.Discard, Stderr: &errb})
	if err != nil {
		return fmt.Errorf("removing the test file in pod %s/%s: %w %s", ns, name, err, strings.TrimSpace(errb.String()))
	}
	return nil
}

// releasedVolume describes a PV its reclaim policy kept after storbench's
// PVC went, with the command that removes it.
func releasedVolume(ctx context.Context, client kubernetes.Interface, name string) string {
	pv, err := client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		return ""
	}
	if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
		// The PV controller may not have noticed the PVC's deletion yet.
		if pv.Spec.ClaimRef == nil {
			return ""
		}
	}
	return fmt.Sprintf("PV %s (reclaim policy Retain) is left %s by storbench's claim and still holds the volume; remove it with: kubectl delete pv %s",
		name, phaseOr(pv.Status.Phase, "Released"), name)
}

func phaseOr(p corev1.PersistentVolumePhase, def string) string {
	if p == corev1.VolumeBound || p == "" {
		return def
	}
	return string(p)
}
