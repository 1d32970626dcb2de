package kubekit

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/field"
)

// RestrictedUID is the user (and group, and fsGroup) a pod storbench
// builds for Pod Security's restricted level runs as.
const RestrictedUID = 1000

// PodSecurityRefusal returns the level named when err is the API
// server's Pod Security refusal of a pod, and "" for any other error.
func PodSecurityRefusal(err error) string {
	if err == nil {
		return ""
	}
	if m := podSecurityViolation.FindStringSubmatch(APIMessage(err)); m != nil {
		return m[1]
	}
	return ""
}

// RestrictPod makes a pod meet Pod Security's restricted level: it runs as
// RestrictedUID (runAsNonRoot with a numeric user, as the level requires
// of an image whose user is root), with the RuntimeDefault seccomp
// profile, no privilege escalation and every capability dropped, and the
// volumes' group set to RestrictedUID by fsGroup so that fio may write
// where the volume's driver applies it. Settings the pod already has
// (from the user's overrides) are kept where the level allows them.
func RestrictPod(pod *corev1.Pod) *corev1.Pod {
	out := pod.DeepCopy()
	id, yes, no := int64(RestrictedUID), true, false
	sc := out.Spec.SecurityContext
	if sc == nil {
		sc = &corev1.PodSecurityContext{}
		out.Spec.SecurityContext = sc
	}
	if sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		sc.RunAsUser = &id
	}
	if sc.RunAsGroup == nil {
		sc.RunAsGroup = &id
	}
	if sc.FSGroup == nil {
		sc.FSGroup = &id
	}
	sc.RunAsNonRoot = &yes
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	for _, cs := range [][]corev1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			if c.SecurityContext == nil {
				c.SecurityContext = &corev1.SecurityContext{}
			}
			c.SecurityContext.AllowPrivilegeEscalation = &no
			c.SecurityContext.Privileged = nil
			c.SecurityContext.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
			if c.SecurityContext.RunAsUser != nil && *c.SecurityContext.RunAsUser == 0 {
				c.SecurityContext.RunAsUser = &id
			}
			if c.SecurityContext.RunAsNonRoot != nil {
				c.SecurityContext.RunAsNonRoot = &yes
			}
		}
	}
	return out
}

// restrictedNotice says what running the fio pod under the restricted
// profile means for the run.
func restrictedNotice(ns, level string) string {
	return fmt.Sprintf("Pod Security: namespace %s enforces %q, which refused storbench's usual fio pod (root, no seccomp profile); "+
		"the fio pod ran under the restricted profile instead (user %d, not root; seccomp RuntimeDefault; no privilege escalation; all capabilities dropped; fsGroup %d on the volume). "+
		"What that costs: the image must have fio (a non-root pod cannot install it); the volume must honour fsGroup, or fio cannot write to it; "+
		"no host-network sampler pods (the level forbids hostNetwork), so node network counters come from the kubelet if allowed, else not at all",
		ns, level, RestrictedUID, RestrictedUID)
}

// CreatePod creates a pod (storbench's fio pod); when Pod Security refuses it, it creates
// the same pod under the restricted profile (RestrictPod) and returns the
// notice saying so. The refusal is returned when the restricted pod is
// refused too.
func CreatePod(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod) (restricted string, err error) {
	pods := client.CoreV1().Pods(pod.Namespace)
	_, err = pods.Create(ctx, pod, metav1.CreateOptions{})
	level := PodSecurityRefusal(err)
	if level == "" {
		return "", err
	}
	if _, rerr := pods.Create(ctx, RestrictPod(pod), metav1.CreateOptions{}); rerr != nil {
		return "", field.Errorf("namespace %s's Pod Security level %q refuses the fio pod (%s), and the same pod under the restricted profile too (%s): label the namespace %s=baseline, "+
			"or give the pod a securityContext that level allows with %s (docs/kubernetes.md): %w", pod.Namespace, level, APIMessage(err), APIMessage(rerr), PodSecurityEnforce, FieldPodOverrides, err)
	}
	return restrictedNotice(pod.Namespace, level), nil
}

// Writable checks, in a pod running under the restricted profile, that
// its user may write the volume: a driver that ignores fsGroup (hostPath,
// local-path) leaves it root's.
func Writable(ctx context.Context, cmder *PodCmder) error {
	if err := cmder.Command(ctx, "sh", "-c", "test -w .").Run(); err != nil {
		return fmt.Errorf("under Pod Security's restricted profile fio runs as user %d, which cannot write to the volume (its driver does not apply fsGroup %d): "+
			"run in a namespace that allows root pods (label it %s=baseline), or use a class whose driver applies fsGroup: %w", RestrictedUID, RestrictedUID, PodSecurityEnforce, err)
	}
	return nil
}
