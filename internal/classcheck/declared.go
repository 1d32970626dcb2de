package classcheck

import (
	"context"
	"fmt"
	"sort"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/kubekit"
)

// ReadDeclared reads what the StorageClass, its CSIDriver, the CSINodes and
// the VolumeSnapshotClasses declare. A class that does not exist is an error.
func ReadDeclared(ctx context.Context, client kubernetes.Interface, class string) (Declared, error) {
	sc, err := client.StorageV1().StorageClasses().Get(ctx, class, metav1.GetOptions{})
	if err != nil {
		return Declared{}, fmt.Errorf("StorageClass %s: %w", class, err)
	}
	d := Declared{Class: class, Provisioner: sc.Provisioner,
		BindingMode: string(storagev1.VolumeBindingImmediate), Reclaim: "Delete",
		Expansion: sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion}
	if sc.VolumeBindingMode != nil {
		d.BindingMode = string(*sc.VolumeBindingMode)
	}
	if sc.ReclaimPolicy != nil {
		d.Reclaim = string(*sc.ReclaimPolicy)
	}
	// A CSI driver's name has no '/' (in-tree and external provisioners such
	// as kubernetes.io/no-provisioner or rancher.io/local-path do).
	drv, err := &storagev1.CSIDriver{}, apierrors.NewNotFound(storagev1.Resource("csidrivers"), sc.Provisioner)
	if !strings.Contains(sc.Provisioner, "/") {
		drv, err = client.StorageV1().CSIDrivers().Get(ctx, sc.Provisioner, metav1.GetOptions{})
	}
	switch {
	case err == nil:
		f := &DriverFacts{AttachRequired: true, FSGroupPolicy: string(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)}
		if drv.Spec.AttachRequired != nil {
			f.AttachRequired = *drv.Spec.AttachRequired
		}
		if drv.Spec.FSGroupPolicy != nil {
			f.FSGroupPolicy = string(*drv.Spec.FSGroupPolicy)
		}
		f.PodInfoOnMount = drv.Spec.PodInfoOnMount != nil && *drv.Spec.PodInfoOnMount
		f.StorageCapacity = drv.Spec.StorageCapacity != nil && *drv.Spec.StorageCapacity
		for _, m := range drv.Spec.VolumeLifecycleModes {
			f.LifecycleModes = append(f.LifecycleModes, string(m))
		}
		d.CSIDriver = f
	case !apierrors.IsNotFound(err):
		return d, fmt.Errorf("CSIDriver %s: %w", sc.Provisioner, err)
	}
	if d.CSIDriver != nil {
		nodes, err := client.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return d, fmt.Errorf("CSINodes: %w", err)
		}
		for _, n := range nodes.Items {
			nf := NodeFacts{Node: n.Name}
			for _, dr := range n.Spec.Drivers {
				if dr.Name != sc.Provisioner {
					continue
				}
				nf.Driver = true
				nf.TopologyKeys = dr.TopologyKeys
				if dr.Allocatable != nil && dr.Allocatable.Count != nil {
					nf.VolumeLimit = *dr.Allocatable.Count
				}
			}
			d.Nodes = append(d.Nodes, nf)
		}
		sort.Slice(d.Nodes, func(i, j int) bool { return d.Nodes[i].Node < d.Nodes[j].Node })
	}
	snaps, err := kubekit.SnapshotDrivers(ctx, client)
	if err != nil {
		return d, err
	}
	d.SnapshotAPI = hasSnapshotAPI(client)
	d.SnapshotClasses = snaps[sc.Provisioner]
	return d, nil
}

func hasSnapshotAPI(client kubernetes.Interface) bool {
	_, err := client.Discovery().ServerResourcesForGroupVersion("snapshot.storage.k8s.io/v1")
	return err == nil
}
