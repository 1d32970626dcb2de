package classcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

const snapshotAPI = "/apis/snapshot.storage.k8s.io/v1"

// createSnapshot creates a VolumeSnapshot of a claim through the REST
// client (the snapshot API is a CRD; no typed client is needed for three
// fields).
func (r *run) createSnapshot(ctx context.Context, name, class, claim string) error {
	obj := map[string]any{
		"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot",
		"metadata": map[string]any{"name": name, "namespace": r.ns, "labels": r.labels()},
		"spec": map[string]any{"volumeSnapshotClassName": class,
			"source": map[string]any{"persistentVolumeClaimName": claim}},
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.snapshots[name] = true
	r.mu.Unlock()
	err = r.c.Client.Discovery().RESTClient().Post().AbsPath(snapshotAPI, "namespaces", r.ns, "volumesnapshots").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("creating VolumeSnapshot %s: %w", name, err)
	}
	return nil
}

type snapshotStatus struct {
	Status *struct {
		ReadyToUse                     *bool  `json:"readyToUse"`
		BoundVolumeSnapshotContentName string `json:"boundVolumeSnapshotContentName"`
		Error                          *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"status"`
}

// snapshotReady waits until the snapshot is readyToUse and returns when
// that was first seen. The snapshot API has no typed informer here, so it
// is read every 100 ms: its stamp is within 100 ms of the truth.
func (r *run) snapshotReady(ctx context.Context, name string) (time.Time, error) {
	deadline := time.Now().Add(r.o.Timeout)
	var last string
	for {
		raw, err := r.c.Client.Discovery().RESTClient().Get().AbsPath(snapshotAPI, "namespaces", r.ns, "volumesnapshots", name).DoRaw(ctx)
		now := time.Now()
		if err == nil {
			var s snapshotStatus
			if json.Unmarshal(raw, &s) == nil && s.Status != nil {
				if s.Status.ReadyToUse != nil && *s.Status.ReadyToUse {
					return now, nil
				}
				if s.Status.Error != nil {
					last = s.Status.Error.Message
				}
			}
		}
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		if now.After(deadline) {
			msg := fmt.Sprintf("VolumeSnapshot %s not ready within %s", name, r.o.Timeout)
			if last != "" {
				msg += ": " + last
			}
			return time.Time{}, r.explain(fmt.Errorf("%s", msg), name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
