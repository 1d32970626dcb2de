package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/ceph"
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
		removed, where, err := k.removeRunImages(ctx, c, &s)
		if len(removed) > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("removed the RBD images run %s left, with %s: %s", runID, where, strings.Join(removed, ", ")))
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

// removeRunImages starts a pod with the run's Secret s mounted, removes
// the run's images in the target's pool with an rbd CLI (runImagesRBD),
// and deletes the pod again. where names the rbd CLI used.
func (k Kind) removeRunImages(ctx context.Context, c *kubekit.Cluster, s *corev1.Secret) (removed []string, where string, err error) {
	ns, runID, target := s.Namespace, s.Labels[kubekit.LabelRunID], s.Annotations[kubekit.AnnotationTarget]
	sp, _, err := parseRBDEngine(strings.TrimPrefix(target, TargetPrefix))
	if err != nil {
		return nil, "", fmt.Errorf("the run's target %q: %w", target, err)
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
		return nil, "", err
	}
	cmder := &kubekit.PodCmder{Exec: c.Exec, Namespace: ns, Pod: o.name, Container: kubekit.ContainerName}
	eng.cluster, eng.fsid = c, secretFSID(s)
	rem, where, err := eng.runImagesRBD(ctx, cmder, runID)
	if err != nil {
		return nil, "", err
	}
	names, err := rem.Images(ctx, eng.pool)
	if err != nil {
		return nil, where, err
	}
	for _, n := range names {
		if !strings.HasPrefix(n, rbd.Prefix+runID+"-") {
			continue
		}
		if err := rem.RemoveImage(ctx, eng.pool, n); err != nil {
			return removed, where, err
		}
		removed = append(removed, eng.pool+"/"+n)
	}
	return removed, where, nil
}

// runImagesRBD is the rbd CLI that removes a killed run's images: the
// one in the cleanup's pod (cmder), with the run's configuration, when
// the pod's image has one; else, for an image without it (an older
// release's, a fio image of the user's), this host's or the one in
// Rook's toolbox (outsideCeph), each only when it reaches the run's Ceph
// (its fsid, which the run's Secret must name) and lists the pool.
func (e *rbdEngine) runImagesRBD(ctx context.Context, cmder *kubekit.PodCmder, runID string) (rbd.Remote, string, error) {
	if cmder.Command(ctx, "sh", "-c", "command -v rbd").Run() == nil {
		id := e.id
		if id == "" {
			id = "admin"
			var b bytes.Buffer
			if cmder.Command(ctx, "cat", RBDConfDir+"/keyring").SetStdout(&b).Run() == nil {
				id = keyringClient(b.String(), id)
			}
		}
		return rbd.NewRemote(cmder, RBDConfDir+"/ceph.conf", id), "the rbd CLI in pod " + cmder.Namespace + "/" + cmder.Pod, nil
	}
	if e.fsid == "" {
		return rbd.Remote{}, "", fmt.Errorf("pod %s/%s's image has no rbd CLI, and the run's Secret names no Ceph fsid to check this host's or Rook's toolbox's against: remove images %s%s-* of pool %s by hand, or run the cleanup with an image that has the rbd CLI",
			cmder.Namespace, cmder.Pod, rbd.Prefix, runID, e.pool)
	}
	var rem rbd.Remote
	where, err := e.outsideCeph(ctx, func(cl ceph.Client) error {
		rem = rbd.NewRemote(cl.Cmder, cl.Conf, cl.ID)
		_, err := rem.Images(ctx, e.pool)
		return err
	})
	if err != nil {
		return rbd.Remote{}, "", fmt.Errorf("pod %s/%s's image has no rbd CLI; %w", cmder.Namespace, cmder.Pod, err)
	}
	return rem, "the rbd CLI beside " + where + " (pod " + cmder.Namespace + "/" + cmder.Pod + "'s image has none)", nil
}

// secretFSID is the fsid of the Ceph a run's Secret configures: its
// annotation (setUp), else its ceph.conf's fsid; "" when neither names
// one.
func secretFSID(s *corev1.Secret) string {
	if f := s.Annotations[annotationCephFSID]; f != "" {
		return f
	}
	return confValue(s.Data["ceph.conf"], "fsid")
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
