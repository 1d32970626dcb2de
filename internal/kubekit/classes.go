package kubekit

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/storbench/storbench/internal/result"
	"sort"
	"strconv"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NoProvisioner is the provisioner of classes with static PVs only.
const NoProvisioner = "kubernetes.io/no-provisioner"

// Classes describes every StorageClass. snapshotDrivers maps a CSI driver to
// its VolumeSnapshotClasses; nil means snapshot support is unknown.
func Classes(ctx context.Context, client kubernetes.Interface, snapshotDrivers map[string][]string) ([]result.StorageClass, error) {
	list, err := client.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing StorageClasses: %w", err)
	}
	var out []result.StorageClass
	for _, sc := range list.Items {
		out = append(out, describeClass(sc, snapshotDrivers))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func describeClass(sc storagev1.StorageClass, snapshotDrivers map[string][]string) result.StorageClass {
	ci := result.StorageClass{
		Name: sc.Name, Provisioner: sc.Provisioner, Parameters: sc.Parameters,
		Default:     sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true",
		Dynamic:     sc.Provisioner != NoProvisioner,
		BindingMode: string(storagev1.VolumeBindingImmediate),
		Reclaim:     "Delete",
		Expansion:   sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion,
	}
	if sc.VolumeBindingMode != nil {
		ci.BindingMode = string(*sc.VolumeBindingMode)
	}
	if sc.ReclaimPolicy != nil {
		ci.Reclaim = string(*sc.ReclaimPolicy)
	}
	ci.Failover, ci.FailoverWhy = Failover(sc.Provisioner, sc.Parameters)
	ci.AccessModes = accessModes(sc.Provisioner)
	switch {
	case snapshotDrivers == nil:
		ci.Snapshots = "unknown"
	case len(snapshotDrivers[sc.Provisioner]) > 0:
		ci.Snapshots = "yes: " + strings.Join(snapshotDrivers[sc.Provisioner], ", ")
	default:
		ci.Snapshots = "no"
	}
	return ci
}

// Failover says whether a volume of this provisioner survives the loss of
// the node it is used on: replicated or network-backed storage does,
// node-local storage does not.
func Failover(provisioner string, params map[string]string) (answer, why string) {
	p := strings.ToLower(provisioner)
	replicas := func(key string, def int) (string, string) {
		n := def
		if v, ok := params[key]; ok {
			if i, err := strconv.Atoi(v); err == nil {
				n = i
			}
		}
		if n > 1 {
			return "yes", fmt.Sprintf("replicated: %s=%d", key, n)
		}
		return "no", fmt.Sprintf("a single replica (%s=%d) lives on one node", key, n)
	}
	switch {
	case p == "driver.longhorn.io" || p == "rancher.io/longhorn":
		return replicas("numberOfReplicas", 3)
	case strings.Contains(p, "rbd.csi.ceph.com") || strings.Contains(p, "cephfs.csi.ceph.com") || p == "kubernetes.io/rbd" || strings.HasPrefix(p, "ceph.rook.io"):
		return "yes", "Ceph: replicated across OSDs"
	case p == "linstor.csi.linbit.com":
		for _, k := range []string{"placementCount", "autoPlace", "linstor.csi.linbit.com/placementCount", "linstor.csi.linbit.com/autoPlace"} {
			if _, ok := params[k]; ok {
				return replicas(k, 1)
			}
		}
		return "no", "LINSTOR places one replica unless placementCount/autoPlace says more"
	case p == "io.openebs.csi-mayastor":
		return replicas("repl", 1)
	case p == "cstor.csi.openebs.io" || p == "jiva.csi.openebs.io":
		return "yes", "OpenEBS replicated engine"
	case strings.Contains(p, "nfs") || p == "smb.csi.k8s.io" || strings.Contains(p, "iscsi") || strings.Contains(p, "democratic-csi"):
		return "yes", "network-backed: any node can mount it (the server itself is not replicated by Kubernetes)"
	case p == NoProvisioner:
		return "no", "static local PVs are bound to one node"
	case p == "rancher.io/local-path" || strings.Contains(p, "hostpath") || p == "openebs.io/local" ||
		p == "local.csi.openebs.io" || p == "zfs.csi.openebs.io" || strings.Contains(p, "topolvm") ||
		strings.Contains(p, "lvm") || p == "k3s.io/local-path":
		return "no", "node-local: the volume lives on one node's disk"
	}
	return "unknown", "provisioner not known to storbench"
}

func accessModes(provisioner string) []string {
	p := strings.ToLower(provisioner)
	switch {
	case strings.Contains(p, "nfs") || strings.Contains(p, "cephfs") || p == "smb.csi.k8s.io" || p == "driver.longhorn.io":
		return []string{"ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"}
	}
	return []string{"ReadWriteOnce", "ReadWriteOncePod"}
}

// SnapshotDrivers lists VolumeSnapshotClasses by CSI driver. It returns
// an empty map when the snapshot API is not installed, and nil with an error
// when it cannot tell.
func SnapshotDrivers(ctx context.Context, client kubernetes.Interface) (map[string][]string, error) {
	rc := client.Discovery().RESTClient()
	if rc == nil {
		return nil, fmt.Errorf("no REST client for the snapshot API")
	}
	if _, err := client.Discovery().ServerResourcesForGroupVersion("snapshot.storage.k8s.io/v1"); err != nil {
		return map[string][]string{}, nil // the snapshot CRDs are not installed
	}
	raw, err := rc.Get().AbsPath("/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing VolumeSnapshotClasses: %w", err)
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Driver string `json:"driver"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("VolumeSnapshotClasses: %w", err)
	}
	out := map[string][]string{}
	for _, it := range list.Items {
		out[it.Driver] = append(out[it.Driver], it.Metadata.Name)
	}
	return out, nil
}

// DefaultClass is the class name that stands for the cluster's default
// StorageClass (k8s:default), so that a manifest need not know the
// cluster's classes.
const DefaultClass = "default"

// ResolveClass turns DefaultClass into the cluster's default StorageClass
// (the one annotated is-default-class; the newest when several are, as
// the API server's admission picks); a class really named "default" is
// itself. Other names are returned as they are. note says what
// DefaultClass became, for the user.
func ResolveClass(ctx context.Context, client kubernetes.Interface, class string) (name, note string, err error) {
	if class != DefaultClass {
		return class, "", nil
	}
	list, err := client.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", "", fmt.Errorf("k8s:%s: finding the cluster's default StorageClass: %w", DefaultClass, err)
	}
	var def *storagev1.StorageClass
	for i, sc := range list.Items {
		if sc.Name == DefaultClass {
			return DefaultClass, "", nil
		}
		isDefault := sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
			sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true"
		if isDefault && (def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time)) {
			def = &list.Items[i]
		}
	}
	if def == nil {
		return "", "", fmt.Errorf("k8s:%s: the cluster has no default StorageClass: name one (storbench classes lists them), or mark one default: "+
			"kubectl patch storageclass NAME -p '{\"metadata\":{\"annotations\":{\"storageclass.kubernetes.io/is-default-class\":\"true\"}}}'", DefaultClass)
	}
	return def.Name, fmt.Sprintf("k8s:%s is StorageClass %s, the cluster's default", DefaultClass, def.Name), nil
}
