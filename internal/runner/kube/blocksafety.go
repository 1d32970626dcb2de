package kube

import (
	"context"
	"fmt"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/safety"
)

// checkBlockVolume asks the safety owner, through the pod, whether the
// suite's writers may write to a Block-mode volume. storbench created the
// PVC, so no --destructive is needed, but a volume that carries data (a
// retained or pre-provisioned PersistentVolume bound to the new claim) is
// refused.
func checkBlockVolume(ctx context.Context, cmder *kubekit.PodCmder, need runner.Need) error {
	if len(need.Writers) == 0 {
		return nil
	}
	if err := safety.CheckFresh(ctx, safety.CmderFacts{Cmder: cmder}, kubekit.BlockDevicePath, need.Writers); err != nil {
		return fmt.Errorf("pod %s/%s: %w", cmder.Namespace, cmder.Pod, err)
	}
	return nil
}
