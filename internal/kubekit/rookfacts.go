package kubekit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/result"
)

// The labels Rook puts on each OSD's Deployment and pod.
const (
	RookOSDSelector = "app=rook-ceph-osd"
	rookOSDID       = "ceph-osd-id"
	rookOSDHost     = "topology-location-host" // the OSD's crush host
	rookOSDClass    = "device-class"
)

// RookPoolLabels are a pool's facts (ceph.Placement's labels) read from
// Rook's objects in namespace ns alone, for when no ceph CLI reaches the
// Ceph: the pool's size from its CephBlockPool (spec.replicated.size),
// and the OSDs that may hold its data, with their crush hosts, from
// Rook's running OSD pods (app=rook-ceph-osd; of the pool's
// spec.deviceClass when it names one). Ceph's placement groups are not
// read, so the OSDs are those the pool's rule can choose, not those its
// PGs act on; the source labels say so. where names what was read. It
// needs get (and list, for a pool named apart from its object) on
// cephblockpools.ceph.rook.io and list on pods in ns.
func RookPoolLabels(ctx context.Context, c *Cluster, ns, pool string) (labels map[string]string, where string, err error) {
	if c == nil || c.Dynamic == nil {
		return nil, "", errors.New("Rook's objects: no client for custom resources")
	}
	obj, err := cephPool(ctx, c.Dynamic, ns, pool)
	if err != nil {
		return nil, "", err
	}
	pl := ceph.Placement{Pool: ceph.Pool{Name: pool}}
	sizeSource := fmt.Sprintf("CephBlockPool %s/%s spec.replicated.size", ns, obj.GetName())
	if _, ec, _ := unstructured.NestedMap(obj.Object, "spec", "erasureCoded"); ec {
		pl.Pool.Erasure = true
	} else if pl.Pool.Size, err = replicatedSize(obj.Object, "spec"); err != nil {
		return nil, "", fmt.Errorf("CephBlockPool %s/%s: %w", ns, obj.GetName(), err)
	}
	class, _, _ := unstructured.NestedString(obj.Object, "spec", "deviceClass")
	osds, down, err := rookOSDs(ctx, c, ns, class)
	if err != nil {
		return nil, "", err
	}
	hosts := map[string]bool{}
	for _, o := range osds {
		pl.OSDs = append(pl.OSDs, o.ID)
		if !hosts[o.Host] {
			hosts[o.Host] = true
			pl.Hosts = append(pl.Hosts, o.Host)
		}
	}
	slices.Sort(pl.OSDs)
	slices.Sort(pl.Hosts)
	labels = pl.Labels()
	of := "Rook's running OSD pods in " + ns + " (" + RookOSDSelector
	if class != "" {
		of += ", device class " + class
	}
	of += ")"
	nodes := "the crush hosts of " + of + ": the OSDs pool " + pool + "'s rule may choose (Ceph's placement groups not read)"
	if len(down) > 0 {
		nodes += "; not running: " + strings.Join(down, ", ")
	}
	result.LabelReplicaNodesSource.Set(labels, nodes)
	if !pl.Pool.Erasure {
		result.LabelReplicasSource.Set(labels, sizeSource)
	}
	return labels, fmt.Sprintf("Rook's CephBlockPool %s/%s and %s", ns, obj.GetName(), of), nil
}

// rookOSDs are Rook's running OSD pods in ns (of device class class
// when it is not empty) as OSDs with their crush hosts (the pod's
// topology-location-host, else its node), by id, and the OSDs whose pods
// are not running.
func rookOSDs(ctx context.Context, c *Cluster, ns, class string) (osds []ceph.OSD, down []string, err error) {
	list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: RookOSDSelector})
	if err != nil {
		return nil, nil, fmt.Errorf("Rook's OSD pods in namespace %s: listing pods %s: %w", ns, RookOSDSelector, err)
	}
	seen := map[int]bool{}
	var other []string
	for _, p := range list.Items {
		id, err := strconv.Atoi(p.Labels[rookOSDID])
		if err != nil || id < 0 {
			return nil, nil, fmt.Errorf("Rook's OSD pod %s/%s: label %s=%q is not an OSD id", ns, p.Name, rookOSDID, p.Labels[rookOSDID])
		}
		if class != "" && p.Labels[rookOSDClass] != class {
			other = append(other, fmt.Sprintf("osd.%d (%s)", id, p.Labels[rookOSDClass]))
			continue
		}
		host := p.Labels[rookOSDHost]
		if host == "" {
			host = p.Spec.NodeName
		}
		switch {
		case p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || host == "":
			down = append(down, fmt.Sprintf("osd.%d (pod %s, %s)", id, p.Name, p.Status.Phase))
		case !seen[id]:
			seen[id] = true
			osds = append(osds, ceph.OSD{ID: id, Host: host})
		}
	}
	if len(osds) == 0 {
		why := "no running pod labelled " + RookOSDSelector
		if class != "" {
			why += " of device class " + class
		}
		if len(other) > 0 {
			why += " (other classes: " + strings.Join(other, ", ") + ")"
		}
		return nil, nil, fmt.Errorf("Rook's OSD pods in namespace %s: %s", ns, why)
	}
	slices.SortFunc(osds, func(a, b ceph.OSD) int { return a.ID - b.ID })
	slices.Sort(down)
	return osds, down, nil
}
