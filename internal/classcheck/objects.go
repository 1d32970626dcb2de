package classcheck

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
)

// MountPath is where a filesystem volume appears in a check's pod.
const MountPath = "/data"

// claimSpec is one claim a check asks for.
type claimSpec struct {
	name   string
	size   int64
	mode   corev1.PersistentVolumeAccessMode
	block  bool
	source *corev1.TypedLocalObjectReference // a clone's PVC or a restore's VolumeSnapshot
}

// podSpec is one pod a check starts on a claim.
type podSpec struct {
	name, claim string
	// node pins the pod (by the hostname label, so the scheduler still
	// checks the volume's node affinity); "" lets the scheduler choose.
	node    string
	block   bool
	nonRoot bool
}

func (r *run) labels() map[string]string {
	return map[string]string{kubekit.LabelManagedBy: kubekit.ManagedBy, kubekit.LabelRunID: r.runID, kubekit.LabelName: "storbench-classcheck"}
}

// createClaim creates a claim and returns when the API server accepted it.
func (r *run) createClaim(ctx context.Context, s claimSpec) (time.Time, error) {
	mode := s.mode
	if mode == "" {
		mode = corev1.ReadWriteOnce
	}
	vm := corev1.PersistentVolumeFilesystem
	if s.block {
		vm = corev1.PersistentVolumeBlock
	}
	class := r.o.Class
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: r.ns, Labels: r.labels(),
			Annotations: map[string]string{kubekit.AnnotationTarget: "k8s:" + r.o.Class}},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{mode},
			VolumeMode:       &vm,
			DataSource:       s.source,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: *resource.NewQuantity(s.size, resource.BinarySI)}},
		},
	}
	r.mu.Lock()
	r.claims[s.name] = true
	r.mu.Unlock()
	start := time.Now()
	_, err := r.c.Client.CoreV1().PersistentVolumeClaims(r.ns).Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		return start, fmt.Errorf("creating claim %s: %w", s.name, err)
	}
	return start, nil
}

// createPod starts a pod that only sleeps, with the claim mounted at
// MountPath (or its device at kubekit.BlockDevicePath).
func (r *run) createPod(ctx context.Context, s podSpec) (time.Time, error) {
	grace := int64(1)
	no := false
	c := corev1.Container{
		Name: kubekit.ContainerName, Image: r.o.Image, ImagePullPolicy: r.o.PullPolicy,
		Command: []string{"sh", "-c", "trap 'exit 0' TERM; sleep 2147483647 & wait"},
	}
	switch {
	case s.claim == "": // a prober: no volume
	case s.block:
		c.VolumeDevices = []corev1.VolumeDevice{{Name: "data", DevicePath: kubekit.BlockDevicePath}}
	default:
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: MountPath}}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: r.ns, Labels: r.labels(),
			Annotations: map[string]string{kubekit.AnnotationTarget: "k8s:" + r.o.Class}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			Containers:                    []corev1.Container{c},
			// A check's pod must not be stopped by the node failing under it
			// before storbench says so: it tolerates nothing extra.
		},
	}
	if s.claim != "" {
		pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.claim}}}}
	}
	if s.node != "" {
		pod.Spec.NodeSelector = map[string]string{corev1.LabelHostname: r.hostname(s.node)}
	} else if len(r.nodes) > 0 {
		pod.Spec.Affinity = r.usableNodes()
	}
	if s.nonRoot {
		uid, gid := int64(1000), int64(1000)
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &uid, RunAsGroup: &gid, FSGroup: &gid, RunAsNonRoot: &[]bool{true}[0]}
	}
	pod, err := kubekit.ApplyPodOverrides(pod, r.o.PodOverrides)
	if err != nil {
		return time.Now(), err
	}
	start := time.Now()
	_, err = r.c.Client.CoreV1().Pods(r.ns).Create(ctx, pod, metav1.CreateOptions{})
	if level := kubekit.PodSecurityRefusal(err); level != "" {
		// The namespace's Pod Security refuses a root pod: the same pod
		// under the restricted profile, and the report says so once.
		if _, rerr := r.c.Client.CoreV1().Pods(r.ns).Create(ctx, kubekit.RestrictPod(pod), metav1.CreateOptions{}); rerr == nil {
			r.restrictedNote(level)
			return start, nil
		}
	}
	if err != nil {
		return start, fmt.Errorf("creating pod %s: %w", s.name, err)
	}
	return start, nil
}

// restrictedNote says, once, that the check pods run under Pod Security's
// restricted profile, and what that costs.
func (r *run) restrictedNote(level string) {
	note := fmt.Sprintf("Pod Security: namespace %s enforces %q, which refused the usual check pods (root): they ran under the restricted profile instead (user %d, seccomp RuntimeDefault, no privilege escalation, all capabilities dropped, fsGroup %d). "+
		"What that costs: a volume whose driver ignores fsGroup cannot be written, so the checks on it fail; a raw block device the node does not give to that group is not writable", r.ns, level, kubekit.RestrictedUID, kubekit.RestrictedUID)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.notes, note) {
		r.notes = append(r.notes, note)
	}
}

// usableNodes keeps a pod the scheduler places on the nodes a check may
// use (r.nodes): never on a fake node (kwok's, which run no container: an
// exec there runs on kwok's host, where the volume is not) nor on one
// readNodes left out for another reason.
func (r *run) usableNodes() *corev1.Affinity {
	hosts := make([]string, len(r.nodes))
	for i, n := range r.nodes {
		hosts[i] = r.hostname(n)
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: hosts}}}}}}}
}

// hostname is a node's kubernetes.io/hostname label (its name when absent).
func (r *run) hostname(node string) string {
	if h, ok := r.hostnames[node]; ok {
		return h
	}
	return node
}

// podRunning waits until the pod runs; a pod that stopped, a container
// that cannot start, or a refusal in the claim's events ends the wait.
// A pod the scheduler keeps aside though its claim is bound gets its
// claim touched (nudgeScheduler); a wait that times out says where each
// of the pod's claims stood.
func (r *run) podRunning(ctx context.Context, pod, claim string) (time.Time, error) {
	nudges := map[string]*kubekit.BindingNudge{}
	ts, err := r.tl.wait(ctx, waitSpec{key: key("pod", pod), milestone: msRunning, timeout: r.o.Timeout, recheck: 2 * time.Second,
		giveUp: func() error {
			r.nudgeScheduler(ctx, pod, nudges)
			return r.stuck(pod, claim)
		}})
	if err != nil && ctx.Err() == nil {
		err = r.claimsOf(err, pod, nudges)
	}
	return ts, err
}

// nudgeScheduler touches each claim of the pod, one this run created,
// that has been bound a while though the scheduler still sets the pod
// aside for an unbound claim (kubekit.BindingNudge says why and when).
func (r *run) nudgeScheduler(ctx context.Context, pod string, nudges map[string]*kubekit.BindingNudge) {
	p := r.tl.latestPod(pod)
	if !kubekit.SetAsideForUnboundClaim(p) {
		return
	}
	now := time.Now()
	for _, c := range podClaims(p) {
		bound, ok := r.tl.at(key("pvc", c), msBound)
		if !ok || !r.createdClaim(c) {
			continue
		}
		n := nudges[c]
		if n == nil {
			n = &kubekit.BindingNudge{}
			nudges[c] = n
		}
		if !n.Due(p, bound, now) {
			continue
		}
		if err := kubekit.TouchClaim(ctx, r.c.Client, r.ns, c, now); err != nil {
			r.progress("%s: %v", r.o.Class, err)
			continue
		}
		r.progress("%s: %s", r.o.Class, kubekit.NudgeMessage(r.ns, c, pod, now.Sub(bound)))
	}
}

// claimsOf adds to a pod's failed wait where each of its claims stood:
// bound (when, and how often storbench touched it) or not.
func (r *run) claimsOf(err error, pod string, nudges map[string]*kubekit.BindingNudge) error {
	p := r.tl.latestPod(pod)
	if p == nil {
		return err
	}
	var says []string
	for _, c := range podClaims(p) {
		bound, ok := r.tl.at(key("pvc", c), msBound)
		switch {
		case !ok:
			says = append(says, "claim "+c+" not bound")
		case nudges[c] != nil && nudges[c].Touches > 0:
			says = append(says, fmt.Sprintf("claim %s bound %s before, touched %d times so the scheduler would look again",
				c, time.Since(bound).Round(time.Second), nudges[c].Touches))
		default:
			says = append(says, fmt.Sprintf("claim %s bound %s before", c, time.Since(bound).Round(time.Second)))
		}
	}
	if len(says) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(says, "; "))
}

// podClaims lists the claims a pod's volumes name.
func podClaims(p *corev1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		}
	}
	return out
}

// stuck says why a pod will not run by itself: it stopped, its image cannot
// be had, or the claim's provisioning was refused as unsupported.
func (r *run) stuck(pod, claim string) error {
	if p := r.tl.latestPod(pod); p != nil {
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			return fmt.Errorf("pod %s stopped (%s %s)", pod, p.Status.Reason, p.Status.Message)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				switch w.Reason {
				case "ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff":
					return fmt.Errorf("pod %s: %w", pod, &kubekit.ImageError{Image: cs.Image, Node: p.Spec.NodeName, Reason: w.Reason, Message: w.Message})
				case "InvalidImageName", "CreateContainerConfigError":
					return fmt.Errorf("pod %s: container cannot start: %s: %s", pod, w.Reason, w.Message)
				}
			}
		}
	}
	if claim != "" {
		if e := refused(r.tl.eventsOf(claim)); e != "" {
			return &refusal{what: "claim " + claim, reason: e}
		}
	}
	return nil
}

// refusal is a provisioner or controller saying an operation is not
// supported, as opposed to failing at it.
type refusal struct{ what, reason string }

func (e *refusal) Error() string { return e.what + ": " + e.reason }

// refused returns the first event that says the operation is refused for
// good: the provisioner or resizer does not support it.
func refused(events []string) string {
	for _, e := range events {
		l := strings.ToLower(e)
		if (strings.HasPrefix(e, "ProvisioningFailed") || strings.HasPrefix(e, "VolumeResizeFailed") || strings.HasPrefix(e, "ExternalExpanding")) &&
			(strings.Contains(l, "not supported") || strings.Contains(l, "unimplemented") || strings.Contains(l, "does not support") ||
				strings.Contains(l, "unsupported") || strings.Contains(l, "only support") || strings.Contains(l, "invalidargument")) {
			return e
		}
	}
	return ""
}

// explain adds the events seen for the objects to an error.
func (r *run) explain(err error, names ...string) error {
	var ev []string
	for _, n := range names {
		for _, e := range r.tl.eventsOf(n) {
			ev = append(ev, n+": "+e)
		}
	}
	if len(ev) == 0 {
		return err
	}
	if len(ev) > 4 {
		ev = ev[len(ev)-4:]
	}
	return fmt.Errorf("%w; events: %s", err, strings.Join(ev, "; "))
}

// exec runs a command in a check's pod and returns its standard output.
//
// Each exec is bounded by the checks' Timeout: a kubelet has been seen to
// keep an exec's stream open after its command ended (with stdin still
// being sent), which would otherwise hold the check, and the run, forever.
func (r *run) exec(ctx context.Context, pod string, stdin []byte, argv ...string) (string, error) {
	var out, errb bytes.Buffer
	req := kubekit.ExecRequest{Namespace: r.ns, Pod: pod, Container: kubekit.ContainerName, Command: argv, Stdout: &out, Stderr: &errb}
	if stdin != nil {
		req.Stdin = bytes.NewReader(stdin)
	}
	ectx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	if err := r.c.Exec.Exec(ectx, req); err != nil {
		if ctx.Err() == nil && ectx.Err() != nil {
			err = fmt.Errorf("no end within %s (the exec's stream stayed open): %w", r.o.Timeout, err)
		}
		return out.String(), fmt.Errorf("%s in pod %s: %w: %s", strings.Join(argv, " "), pod, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// execStream runs a command in a check's pod with its standard output
// going to w as it comes.
func (r *run) execStream(ctx context.Context, pod string, w io.Writer, argv ...string) (string, error) {
	var errb bytes.Buffer
	err := r.c.Exec.Exec(ctx, kubekit.ExecRequest{Namespace: r.ns, Pod: pod, Container: kubekit.ContainerName, Command: argv, Stdout: w, Stderr: &errb})
	return errb.String(), err
}

// payload is data of known checksum to write.
type payload struct {
	data []byte
	sum  string
}

func newPayload(size int) (payload, error) {
	b := make([]byte, size)
	if _, err := rand.Read(b); err != nil {
		return payload{}, err
	}
	s := sha256.Sum256(b)
	return payload{data: b, sum: hex.EncodeToString(s[:])}, nil
}

// writeFile writes p to a file on the pod's volume, fsynced (sync FILE),
// and returns when the fsync returned. (dd reading exec's stdin was seen
// to stop short of the data on a v1.33 kubelet; cat does not.)
func (r *run) writeFile(ctx context.Context, pod, file string, p payload) error {
	return r.writeTo(ctx, pod, MountPath+"/"+file, p)
}

// writeTo writes p to a path in the pod (a file or a block device) and
// fsyncs it.
func (r *run) writeTo(ctx context.Context, pod, path string, p payload) error {
	_, err := r.exec(ctx, pod, p.data, "sh", "-c", `cat > "$1" && sync "$1"`, "sh", path)
	return err
}

// fileSum returns the sha256 of a file on the pod's volume, "" when the
// file does not exist.
func (r *run) fileSum(ctx context.Context, pod, file string) (string, error) {
	out, err := r.exec(ctx, pod, nil, "sh", "-c", "if [ -e "+MountPath+"/"+file+" ]; then sha256sum "+MountPath+"/"+file+"; fi")
	if err != nil {
		return "", err
	}
	f := strings.Fields(out)
	if len(f) == 0 {
		return "", nil
	}
	return f[0], nil
}

// verify checks that a file holds p.
func (r *run) verify(ctx context.Context, pod, file string, p payload) error {
	got, err := r.fileSum(ctx, pod, file)
	if err != nil {
		return err
	}
	switch got {
	case p.sum:
		return nil
	case "":
		return fmt.Errorf("%s is missing on pod %s's volume", file, pod)
	}
	return fmt.Errorf("%s on pod %s's volume has sha256 %s, written %s", file, pod, got[:12], p.sum[:12])
}

// filesystemBytes returns the size df reports for the pod's volume.
func (r *run) filesystemBytes(ctx context.Context, pod string) (int64, error) {
	out, err := r.exec(ctx, pod, nil, "df", "-k", MountPath)
	if err != nil {
		return 0, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) < 2 {
		return 0, fmt.Errorf("df: cannot read %q", out)
	}
	kb, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("df: cannot read %q", out)
	}
	return kb * 1024, nil
}

// deletePod deletes a pod and waits until it is gone.
func (r *run) deletePod(ctx context.Context, name string) (time.Time, error) {
	start := time.Now()
	err := r.c.Client.CoreV1().Pods(r.ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return start, fmt.Errorf("deleting pod %s: %w", name, err)
	}
	_, err = r.tl.wait(ctx, waitSpec{key: key("pod", name), milestone: msGone, timeout: r.o.Timeout})
	return start, err
}

// deleteClaim deletes a claim and waits until it, and with a Delete
// reclaim policy its PV, are gone.
func (r *run) deleteClaim(ctx context.Context, name string) (start, pvGone time.Time, err error) {
	start = time.Now()
	pv := r.tl.volumeOf(name)
	err = r.c.Client.CoreV1().PersistentVolumeClaims(r.ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return start, pvGone, fmt.Errorf("deleting claim %s: %w", name, err)
	}
	if _, err := r.tl.wait(ctx, waitSpec{key: key("pvc", name), milestone: msGone, timeout: r.o.Timeout}); err != nil {
		return start, pvGone, err
	}
	if pv == "" || r.decl.Reclaim != string(corev1.PersistentVolumeReclaimDelete) {
		return start, pvGone, nil
	}
	pvGone, err = r.tl.wait(ctx, waitSpec{key: key("pv", pv), milestone: msGone, timeout: r.o.Timeout})
	if err != nil {
		err = r.explain(err, pv)
	}
	return start, pvGone, err
}
