package kubekit

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/result"
)

// PodSecurityEnforce is the namespace label Pod Security admission
// enforces: "privileged" (or no label, where the cluster's default is
// privileged) allows a host-network pod, "baseline" and "restricted"
// forbid it.
const PodSecurityEnforce = "pod-security.kubernetes.io/enforce"

// PodSecurity is the Pod Security level a namespace enforces, as the API
// server applies it, and where storbench read it.
type PodSecurity struct {
	// Level is privileged, baseline or restricted; "" when it could not be
	// read.
	Level string
	// Source says how it was read: the namespace's label, or the API
	// server's answer to a dry-run pod (which applies the cluster's
	// default from its admission configuration to an unlabelled
	// namespace: Talos, hardened k3s and RKE2 default to baseline or
	// restricted), or why it could not be.
	Source string
}

func (p PodSecurity) String() string {
	if p.Level == "" {
		return "unknown (" + p.Source + ")"
	}
	return p.Level + " (" + p.Source + ")"
}

// podSecurityViolation is the admission's refusal: `violates PodSecurity
// "baseline:latest": host namespaces (hostNetwork=true)`.
var podSecurityViolation = regexp.MustCompile(`violates PodSecurity "([a-z]+):`)

// EffectivePodSecurity reads the level namespace ns enforces. A label
// says it; without one, a server-side dry run of a pod that every level
// but privileged forbids (host network, root, no seccomp profile) makes
// the API server say which level it enforces, the cluster default
// included. Nothing is created. A dry run storbench may not make (RBAC)
// leaves the level unknown, and Source says so.
func EffectivePodSecurity(ctx context.Context, c *Cluster, ns string) PodSecurity {
	n, err := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err == nil && n.Labels[PodSecurityEnforce] != "" {
		return PodSecurity{Level: n.Labels[PodSecurityEnforce], Source: "namespace label " + PodSecurityEnforce}
	}
	if apierrors.IsNotFound(err) {
		return PodSecurity{Source: "namespace " + ns + " does not exist yet: the cluster's default level will apply"}
	}
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "storbench-podsecurity-", Namespace: ns},
		Spec: corev1.PodSpec{HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "probe", Image: "registry.invalid/storbench-podsecurity-probe"}}},
	}
	_, err = c.Client.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil:
		return PodSecurity{Level: "privileged", Source: "the API server admitted a host-network pod (dry run): no label, the cluster's default"}
	case apierrors.IsForbidden(err):
		if m := podSecurityViolation.FindStringSubmatch(APIMessage(err)); m != nil {
			return PodSecurity{Level: m[1], Source: "the API server's answer to a dry-run pod: no label, the cluster's default (its admission configuration)"}
		}
		return PodSecurity{Source: "may not create pods to ask the API server (" + APIMessage(err) + ")"}
	}
	return PodSecurity{Source: fmt.Sprintf("the dry-run pod failed: %v", err)}
}

// PodSecurityForbids reports whether the level forbids a host-network pod.
func PodSecurityForbids(level string) bool {
	return level == "baseline" || level == "restricted"
}

// PodSecurityCheck is doctor's line on Pod Security: the level the
// namespace enforces and what it means for storbench's pods (the fio pod
// runs as the image's root user without a seccomp profile: restricted
// refuses it, and the run makes it under the restricted profile instead,
// podsecurity_restricted.go; the sampler pods need hostNetwork: baseline
// refuses them, and runs then read the kubelet's counters or none).
func PodSecurityCheck(ctx context.Context, c *Cluster) result.Check {
	ns := c.Namespace()
	ps := EffectivePodSecurity(ctx, c, ns)
	ch := result.Check{Area: "pod-security", Name: "Pod Security of namespace " + ns, Status: result.CheckOK, Detail: ps.String()}
	switch ps.Level {
	case "restricted":
		ch.Status = result.CheckWarn
		ch.Detail += fmt.Sprintf(": storbench's usual fio pod (root, no seccomp profile) is refused, so it runs under the restricted profile instead (user %d, fsGroup %d): the image must have fio, the volume's driver must apply fsGroup, and there are no host-network sampler pods", RestrictedUID, RestrictedUID)
		ch.Fix = fmt.Sprintf("to run as usual: kubectl label namespace %s %s=baseline --overwrite", ns, PodSecurityEnforce)
	case "baseline":
		ch.Status = result.CheckInfo
		ch.Detail += ": fio pods run; the host-network sampler pods are refused, so runs read node network counters from the kubelet if allowed, else not at all"
	case "":
		ch.Status = result.CheckInfo
		ch.Detail += ": a pod the level refuses fails at creation with the API server's reason"
	}
	return ch
}

// APIMessage is an API error's message without the client's prefix.
func APIMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return se.Status().Message
	}
	return err.Error()
}
