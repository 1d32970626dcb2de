package kubekit

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/field"
)

// SnapshotAPI is the path of the VolumeSnapshot API (a CRD, read through
// the REST client: no typed client is needed for a few fields).
const SnapshotAPI = "/apis/snapshot.storage.k8s.io/v1"

// AnnotationDefaultSnapshotClass is the annotation that marks the default
// VolumeSnapshotClass of a driver.
const AnnotationDefaultSnapshotClass = "snapshot.storage.kubernetes.io/is-default-class"

// SnapshotClass is one VolumeSnapshotClass.
type SnapshotClass struct {
	Name       string
	Driver     string
	Default    bool
	Parameters map[string]string
}

// Backup says why the class's parameters make a snapshot a backup (Longhorn's
// type: bak pushes a copy to the backup target), or "".
func (s SnapshotClass) Backup() string {
	keys := make([]string, 0, len(s.Parameters))
	for k := range s.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := s.Parameters[k]
		lk, lv := strings.ToLower(k), strings.ToLower(v)
		if strings.Contains(lk, "backup") || strings.Contains(lv, "backup") || (lk == "type" && lv == "bak") {
			return fmt.Sprintf("parameter %s: %s", k, v)
		}
	}
	return ""
}

// HasSnapshotAPI reports whether the snapshot CRDs are installed.
func HasSnapshotAPI(client kubernetes.Interface) bool {
	_, err := client.Discovery().ServerResourcesForGroupVersion("snapshot.storage.k8s.io/v1")
	return err == nil
}

// SnapshotClasses lists the VolumeSnapshotClasses, by name; none when the
// snapshot API is not installed.
func SnapshotClasses(ctx context.Context, client kubernetes.Interface) ([]SnapshotClass, error) {
	rc := client.Discovery().RESTClient()
	if rc == nil {
		return nil, fmt.Errorf("no REST client for the snapshot API")
	}
	if !HasSnapshotAPI(client) {
		return nil, nil
	}
	raw, err := rc.Get().AbsPath(SnapshotAPI, "volumesnapshotclasses").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing VolumeSnapshotClasses: %w", err)
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Driver     string            `json:"driver"`
			Parameters map[string]string `json:"parameters"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("VolumeSnapshotClasses: %w", err)
	}
	var out []SnapshotClass
	for _, it := range list.Items {
		out = append(out, SnapshotClass{Name: it.Metadata.Name, Driver: it.Driver, Parameters: it.Parameters,
			Default: it.Metadata.Annotations[AnnotationDefaultSnapshotClass] == "true"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ChooseSnapshotClass picks the VolumeSnapshotClass for a driver's
// snapshots: the one named (which must be the driver's), else the one
// marked default for the driver, else the driver's only class. A class
// whose parameters make a backup is never used. why says which and why,
// for the report; an error says why none can be.
func ChooseSnapshotClass(classes []SnapshotClass, driver, named string) (name, why string, err error) {
	var mine, defaults []SnapshotClass
	for _, c := range classes {
		if c.Driver == driver {
			mine = append(mine, c)
		}
	}
	if named != "" {
		for _, c := range classes {
			if c.Name != named {
				continue
			}
			if c.Driver != driver {
				return "", "", field.Errorf("%s %s is for driver %s, not %s", FieldSnapshotClass, named, c.Driver, driver)
			}
			if b := c.Backup(); b != "" {
				return "", "", field.Errorf("%s %s makes backups (%s): storbench does not push backups to your backup target", FieldSnapshotClass, named, b)
			}
			return named, fmt.Sprintf("VolumeSnapshotClass %s (the one named)", named), nil
		}
		return "", "", field.Errorf("%s %s: no such VolumeSnapshotClass", FieldSnapshotClass, named)
	}
	var usable, backups []string
	for _, c := range mine {
		if b := c.Backup(); b != "" {
			backups = append(backups, c.Name+" ("+b+")")
			continue
		}
		usable = append(usable, c.Name)
		if c.Default {
			defaults = append(defaults, c)
		}
	}
	skipped := ""
	if len(backups) > 0 {
		skipped = "; not " + strings.Join(backups, ", ") + ": a backup class"
	}
	switch {
	case len(defaults) == 1:
		return defaults[0].Name, fmt.Sprintf("VolumeSnapshotClass %s (the default for %s%s)", defaults[0].Name, driver, skipped), nil
	case len(defaults) == 0 && len(usable) == 1:
		return usable[0], fmt.Sprintf("VolumeSnapshotClass %s (the only one for %s that is not a backup class%s)", usable[0], driver, skipped), nil
	case len(usable) == 0 && len(backups) > 0:
		return "", "", field.Errorf("every VolumeSnapshotClass for %s makes backups (%s): name another with %s", driver, strings.Join(backups, ", "), FieldSnapshotClass)
	case len(usable) == 0:
		return "", "", fmt.Errorf("no VolumeSnapshotClass for %s", driver)
	}
	return "", "", field.Errorf("several VolumeSnapshotClasses for %s (%s) and not one default: name one with %s", driver, strings.Join(usable, ", "), FieldSnapshotClass)
}

// Snapshot is a VolumeSnapshot storbench created, found by its labels.
type Snapshot struct {
	Namespace, Name string
	RunID           string
	// Content is the VolumeSnapshotContent bound to it, "" before one is.
	Content string
}

func (s Snapshot) String() string { return "VolumeSnapshot " + s.Namespace + "/" + s.Name }

// FindSnapshots lists the VolumeSnapshots storbench's labels mark, in ns
// ("" for all namespaces), of one run or all; none when the snapshot API
// is not installed.
func FindSnapshots(ctx context.Context, client kubernetes.Interface, ns, runID string) ([]Snapshot, error) {
	if !HasSnapshotAPI(client) {
		return nil, nil
	}
	path := []string{SnapshotAPI, "volumesnapshots"}
	if ns != "" {
		path = []string{SnapshotAPI, "namespaces", ns, "volumesnapshots"}
	}
	raw, err := client.Discovery().RESTClient().Get().AbsPath(path...).Param("labelSelector", Selector(runID)).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing VolumeSnapshots: %w", err)
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name      string            `json:"name"`
				Namespace string            `json:"namespace"`
				Labels    map[string]string `json:"labels"`
			} `json:"metadata"`
			Status *struct {
				Content string `json:"boundVolumeSnapshotContentName"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("VolumeSnapshots: %w", err)
	}
	var out []Snapshot
	for _, it := range list.Items {
		s := Snapshot{Namespace: it.Metadata.Namespace, Name: it.Metadata.Name, RunID: it.Metadata.Labels[LabelRunID]}
		if it.Status != nil {
			s.Content = it.Status.Content
		}
		out = append(out, s)
	}
	return out, nil
}

// DeleteSnapshot deletes a VolumeSnapshot; the snapshot controller
// then removes its content as the class's deletionPolicy says (Delete:
// the content and the stored snapshot go; Retain: both stay, as the
// class's owner chose).
func DeleteSnapshot(ctx context.Context, client kubernetes.Interface, s Snapshot) error {
	err := client.Discovery().RESTClient().Delete().AbsPath(SnapshotAPI, "namespaces", s.Namespace, "volumesnapshots", s.Name).Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s: %w", s, err)
	}
	return nil
}
