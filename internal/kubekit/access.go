package kubekit

import (
	"context"
	"fmt"
	"strings"

	authv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Permission is one thing storbench asks the API server to do.
type Permission struct {
	Verb        string `json:"verb"`
	Group       string `json:"group,omitempty"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	// Namespaced permissions are checked in storbench's namespace.
	Namespaced bool `json:"namespaced"`
	// Required is false for what only improves reports (doctor's checks of
	// provisioner pods, snapshot classes, creating the namespace).
	Required bool   `json:"required"`
	Why      string `json:"why"`
}

// String reads as RBAC does: "delete persistentvolumeclaims".
func (p Permission) String() string {
	r := p.Resource
	if p.Subresource != "" {
		r += "/" + p.Subresource
	}
	if p.Group != "" {
		r += "." + p.Group
	}
	return p.Verb + " " + r
}

// AccessResult is one permission checked.
type AccessResult struct {
	Permission
	Namespace string `json:"namespace,omitempty"`
	Allowed   bool   `json:"allowed"`
	Reason    string `json:"reason,omitempty"`
}

// CheckAccess asks the API server, with SelfSubjectAccessReview, whether the
// current user may do each of perms, namespaced ones in ns. Cluster-wide
// checks of a namespaced resource (list pods) are made across namespaces.
func CheckAccess(ctx context.Context, client kubernetes.Interface, ns string, perms []Permission) ([]AccessResult, error) {
	var out []AccessResult
	for _, p := range perms {
		attrs := &authv1.ResourceAttributes{Verb: p.Verb, Group: p.Group, Resource: p.Resource, Subresource: p.Subresource}
		if p.Namespaced {
			attrs.Namespace = ns
		}
		rev, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{
			Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}, metav1.CreateOptions{})
		if err != nil {
			return out, fmt.Errorf("checking %s: %w", p, err)
		}
		out = append(out, AccessResult{Permission: p, Namespace: attrs.Namespace, Allowed: rev.Status.Allowed,
			Reason: strings.TrimSpace(rev.Status.Reason + " " + rev.Status.EvaluationError)})
	}
	return out, nil
}
