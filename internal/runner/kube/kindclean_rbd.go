package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/rbd"
)

// cleanRBD removes what killed k8s:rbd runs left in namespace ns (every
// namespace when ""): each run's Secret (its Ceph configuration, named
// storbench-RUNID-ceph, its target in the annotation) and, through a pod
// that mounts it (the kind's image, with the rbd CLI), the run's images
// storbench-RUNID-* in the target's pool. A dry run only lists the
// Secrets. What fails is in the report.
func (k Kind) cleanRBD(ctx context.Context, c *kubekit.Cluster, ns string, req CleanOptions, rep *result.KubeCleanup) {
	list, err := c.Client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: kubekit.Selector(req.RunID)})
	if err != nil {
		rep.Notes = append(rep.Notes, "could not look for the Ceph configurations k8s:rbd runs left: "+err.Error())
		return
	}
	for _, s := range list.Items {
		runID := s.Labels[kubekit.LabelRunID]
		target := s.Annotations[kubekit.AnnotationTarget]
		if s.Name != runSecret(runID) || !strings.HasPrefix(target, TargetPrefix+rbdScheme) ||
			(req.OlderThan > 0 && time.Since(s.CreationTimestamp.Time) < req.OlderThan) {
			continue
		}
		obj := result.KubeObject{Kind: "secret", Namespace: s.Namespace, Name: s.Name, RunID: runID, Target: target, Created: s.CreationTimestamp.Time}
		rep.Found = append(rep.Found, obj)
		if req.DryRun {
			continue
		}
		removed, err := k.removeRunImages(ctx, c, s.Namespace, runID, target)
		if len(removed) > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("removed the RBD images run %s left: %s", runID, strings.Join(removed, ", ")))
		}
		if err == nil {
			err = c.Client.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})
		}
		if err != nil {
			rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: obj, Error: err.Error()})
			continue
		}
		rep.Deleted = append(rep.Deleted, obj)
	}
}

// removeRunImages starts a pod with the run's Secret mounted, removes the
// run's images in the target's pool with the rbd CLI there, and deletes
// the pod again.
func (k Kind) removeRunImages(ctx context.Context, c *kubekit.Cluster, ns, runID, target string) (removed []string, err error) {
	sp, _, err := parseRBDEngine(strings.TrimPrefix(target, TargetPrefix))
	if err != nil {
		return nil, fmt.Errorf("the run's target %q: %w", target, err)
	}
	eng := sp.(EngineSpec).engine.(*rbdEngine)
	t := newEngineTarget(c, &engineRun{engine: eng}, "", 0, k.Target)
	o := &objects{cluster: c, ns: ns, name: "storbench-clean-" + strings.ToLower(runID), target: target, timeout: t.base.opts.Timeout}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.timeout)
		defer cancel()
		err = errors.Join(err, o.delete(dctx, false))
	}()
	if _, err := t.startPod(ctx, o, &targetEnv{ns: ns}, runID); err != nil {
		return nil, err
	}
	cmder := &kubekit.PodCmder{Exec: c.Exec, Namespace: ns, Pod: o.name, Container: kubekit.ContainerName}
	id := eng.id
	if id == "" {
		id = "admin"
		var b bytes.Buffer
		if cmder.Command(ctx, "cat", RBDConfDir+"/keyring").SetStdout(&b).Run() == nil {
			id = keyringClient(b.String(), id)
		}
	}
	rem := rbd.NewRemote(cmder, RBDConfDir+"/ceph.conf", id)
	names, err := rem.Images(ctx, eng.pool)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if !strings.HasPrefix(n, rbd.Prefix+runID+"-") {
			continue
		}
		if err := rem.RemoveImage(ctx, eng.pool, n); err != nil {
			return removed, err
		}
		removed = append(removed, eng.pool+"/"+n)
	}
	return removed, nil
}

// keyringClient is the client a keyring holds ([client.ID]), else def.
func keyringClient(keyring, def string) string {
	for _, line := range strings.Split(keyring, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "[client."); ok && strings.HasSuffix(id, "]") {
			return strings.TrimSuffix(id, "]")
		}
	}
	return def
}
