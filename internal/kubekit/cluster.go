// Package kubekit is storbench's Kubernetes toolkit: what any feature that
// works on a cluster needs, apart from what it does there. Connecting
// (Connect, Cluster, the working namespace), the labels and annotations
// every object storbench creates carries and finding or deleting what
// runs left (FindLeftovers, DeleteObjects), nodes (NodeReady,
// ControlPlane, ResolveNodes), exec into pods (Executor, PodCmder), node
// marks a test leaves and undoes (cordon, taint, stopped), volume
// snapshots, Pod Security (the level a namespace enforces, the restricted
// profile), the fio image defaults, a class's replication as Rook-Ceph,
// Longhorn and GlusterFS state it, RBAC checks (CheckAccess) and the
// permission blocks features declare (RBACFeature).
//
// The Kubernetes target kind (internal/runner/kube) and the class checks
// (internal/classcheck) both build on it; it imports neither, nor the
// engine or the library.
package kubekit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/go-logr/logr"
	"github.com/storbench/storbench/internal/version"
)

// Labels every object storbench creates carries.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "storbench"
	LabelRunID     = "storbench.io/run-id"
	LabelName      = "app.kubernetes.io/name"
	// AnnotationTarget holds the target's name ("k8s:CLASS@NODE").
	AnnotationTarget = "storbench.io/target"
)

// DefaultNamespace is the namespace storbench uses, creating it when allowed.
const DefaultNamespace = "storbench"

// FioImageRepository is the project's fio image: Debian's fio with libaio
// and busybox, for amd64, arm64 and arm/v7, built with every release
// (tools/images) and tagged with its version; its label
// io.storbench.fio.version holds the exact fio package version.
const FioImageRepository = "ghcr.io/storbench/storbench-fio"

// DefaultImage is the fio image of this storbench's own release: nothing
// is installed when a pod starts, so air-gapped clusters work once the
// image is in their registry (docs/install.md).
var DefaultImage = FioImageRepository + ":" + version.ImageTag()

// AlpineImage is the fallback a user chooses with --image alpine: a public
// multi-arch image that installs fio with apk when the pod starts (it
// needs Alpine's package mirror, and fio's version is whatever Alpine has).
const AlpineImage = "docker.io/library/alpine:3.20"

// ImageAlias turns the --image shorthand "alpine" into AlpineImage; other
// names are returned as they are.
func ImageAlias(image string) string {
	if image == "alpine" {
		return AlpineImage
	}
	return image
}

// DefaultTimeout bounds each waiting phase (binding, scheduling, starting,
// deletion).
const DefaultTimeout = 5 * time.Minute

// ConnectOptions say how to reach the cluster, as kubectl does.
type ConnectOptions struct {
	// Kubeconfig is an explicit kubeconfig file; "" follows $KUBECONFIG and
	// ~/.kube/config, then the in-cluster service account.
	Kubeconfig string
	Context    string
	// Namespace is the user's -n; "" means DefaultNamespace when it exists or
	// can be created, else the context's namespace.
	Namespace string
}

// Cluster is a connection to one Kubernetes cluster.
type Cluster struct {
	Client kubernetes.Interface
	// Dynamic reads custom resources (a Rook-Ceph pool's size); nil when
	// the caller gave only a typed client.
	Dynamic dynamic.Interface
	// Exec runs commands in pods.
	Exec Executor
	// Host is the API server's address, for messages.
	Host string

	namespace     string
	nsExplicit    bool
	fallbackNS    string
	nsOnce        sync.Mutex
	nsResolved    bool
	nsErr         error
	nsCreatedNote string
}

// Connect builds a client from kubeconfig or in-cluster configuration.
func Connect(o ConnectOptions) (*Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, errors.New("no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run inside a cluster")
		}
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ctxNS, _, err := cc.Namespace()
	if err != nil || ctxNS == "" {
		ctxNS = metav1.NamespaceDefault
	}
	return NewCluster(cfg, ctxNS, o.Namespace)
}

// NewCluster makes a Cluster from a REST config. contextNamespace is the
// fallback when storbench may not create its own namespace.
func NewCluster(cfg *rest.Config, contextNamespace, namespace string) (*Cluster, error) {
	quietClientGo()
	cfg = rest.CopyConfig(cfg)
	// Many targets poll and exec at once; client-go's default of 5 requests a
	// second would serialise them and skew parallel rounds.
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	c := &Cluster{Client: cs, Dynamic: dyn, Exec: &RemoteExecutor{Config: cfg, Client: cs}, Host: cfg.Host}
	c.setNamespace(contextNamespace, namespace)
	return c, nil
}

// NewClusterForClient wraps an existing client and executor (tests, and
// callers that already hold a client).
func NewClusterForClient(client kubernetes.Interface, exec Executor, namespace string) *Cluster {
	c := &Cluster{Client: client, Exec: exec, Host: "(client)"}
	c.setNamespace(metav1.NamespaceDefault, namespace)
	return c
}

func (c *Cluster) setNamespace(contextNS, explicit string) {
	c.fallbackNS = contextNS
	if explicit != "" {
		c.namespace, c.nsExplicit = explicit, true
		return
	}
	c.namespace = DefaultNamespace
}

// Namespace returns the namespace storbench works in, before EnsureNamespace
// has decided on a fallback.
func (c *Cluster) Namespace() string {
	c.nsOnce.Lock()
	defer c.nsOnce.Unlock()
	return c.namespace
}

// EnsureNamespace makes sure the working namespace exists. Without an
// explicit -n it creates "storbench" when allowed, else falls back to the
// context's namespace. The answer is computed once.
func (c *Cluster) EnsureNamespace(ctx context.Context) (string, error) {
	c.nsOnce.Lock()
	defer c.nsOnce.Unlock()
	if c.nsResolved {
		return c.namespace, c.nsErr
	}
	ns, err := c.ensureNamespace(ctx)
	if err != nil && ctx.Err() != nil {
		return "", err // not cached: a later, live context may succeed
	}
	c.namespace, c.nsErr, c.nsResolved = ns, err, true
	return ns, err
}

func (c *Cluster) ensureNamespace(ctx context.Context) (string, error) {
	_, err := c.Client.CoreV1().Namespaces().Get(ctx, c.namespace, metav1.GetOptions{})
	switch {
	case err == nil:
		return c.namespace, nil
	case apierrors.IsForbidden(err):
		// May not read namespaces: assume it exists; pod creation will say if not.
		if c.nsExplicit || c.namespace == DefaultNamespace {
			return c.namespace, nil
		}
	case !apierrors.IsNotFound(err):
		return "", fmt.Errorf("namespace %s: %w", c.namespace, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.namespace, Labels: map[string]string{LabelManagedBy: ManagedBy}}}
	_, err = c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	switch {
	case err == nil:
		c.nsCreatedNote = fmt.Sprintf("created namespace %s (kept for later runs; storbench cleanup --k8s --delete-namespace removes it)", c.namespace)
		return c.namespace, nil
	case apierrors.IsAlreadyExists(err):
		return c.namespace, nil
	case apierrors.IsForbidden(err) && !c.nsExplicit:
		return c.fallbackNS, nil
	}
	return "", fmt.Errorf("creating namespace %s: %w", c.namespace, err)
}

// NamespaceNotice says whether EnsureNamespace created the namespace; "" if not.
func (c *Cluster) NamespaceNotice() string {
	c.nsOnce.Lock()
	defer c.nsOnce.Unlock()
	n := c.nsCreatedNote
	c.nsCreatedNote = ""
	return n
}

var quiet sync.Once

// quietClientGo stops client-go's own log lines (klog: "E1127 ...
// websocket.go:500] Websocket Ping failed") from reaching the user's
// terminal: what matters of them comes back as errors storbench reports.
func quietClientGo() {
	quiet.Do(func() { klog.SetLogger(logr.Discard()) })
}
