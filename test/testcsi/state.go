package testcsi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// volume is one volume's metadata, kept beside its image file.
type volume struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Mode      Mode      `json:"mode"`
	SizeBytes int64     `json:"sizeBytes"`
	Block     bool      `json:"block"`
	FsType    string    `json:"fsType,omitempty"`    // xfs or ext4; empty for block
	Node      string    `json:"node,omitempty"`      // the pinned node of a local volume
	Published []string  `json:"published,omitempty"` // nodes it is attached to (ControllerPublish)
	Source    string    `json:"source,omitempty"`    // "snapshot/ID" or "volume/ID"
	Created   time.Time `json:"created"`
	// Server and Share locate a netfs volume's directory (ServerParameter,
	// ShareParameter): Share/ID.
	Server string `json:"server,omitempty"`
	Share  string `json:"share,omitempty"`
	// CephConf and CephPath are a cephfs volume's ceph.conf and the CephFS
	// directory of Share (CephConfParameter, CephPathParameter).
	CephConf string `json:"cephConf,omitempty"`
	CephPath string `json:"cephPath,omitempty"`
	// Static marks a static PV's netfs volume (staticNetfs), never recorded.
	Static bool `json:"-"`
}

// snapshot is one snapshot's metadata, kept beside its image copy.
type snapshot struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	SourceVolume string    `json:"sourceVolume"`
	SizeBytes    int64     `json:"sizeBytes"`
	Block        bool      `json:"block"`
	FsType       string    `json:"fsType,omitempty"`
	Created      time.Time `json:"created"`
}

// staging records which loop device a node attached for a volume.
type staging struct {
	VolumeID string `json:"volumeID"`
	Node     string `json:"node"`
	Device   string `json:"device"`
	Path     string `json:"path"`
}

// state is the driver's directory on the shared filesystem:
//
//	volumes/ID.json, volumes/ID.img
//	snapshots/ID.json, snapshots/ID.img
//	nodes/NODE/VOLUME.json   (staging records)
type state struct{ dir string }

var unsafeID = regexp.MustCompile(`[^a-z0-9.-]+`)

// idFor turns a CO-chosen name into an ID safe for a file name.
func idFor(name string) string {
	id := unsafeID.ReplaceAllString(strings.ToLower(name), "-")
	return strings.Trim(id, "-.")
}

func (s state) volumeImage(id string) string   { return filepath.Join(s.dir, "volumes", id+".img") }
func (s state) snapshotImage(id string) string { return filepath.Join(s.dir, "snapshots", id+".img") }
func (s state) stagingFile(node, id string) string {
	return filepath.Join(s.dir, "nodes", node, id+".json")
}

func (s state) init() error {
	for _, d := range []string{"volumes", "snapshots", "nodes"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// writeJSON replaces path atomically, so a reader in another process never
// sees half a record.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readJSON reads path into v; a missing file is fs.ErrNotExist.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// existingVolume reads volume id for a call that succeeds on a volume
// already gone (delete, detach are idempotent): ok is false when it is
// gone, err a gRPC status when it cannot be read.
func (s state) existingVolume(id string) (v volume, ok bool, err error) {
	v, err = s.volume(id)
	if errors.Is(err, fs.ErrNotExist) {
		return v, false, nil
	}
	if err != nil {
		return v, false, errStatus(err, "read volume")
	}
	return v, true, nil
}

func (s state) volume(id string) (volume, error) {
	var v volume
	if id == "" || idFor(id) != id {
		return v, fs.ErrNotExist
	}
	err := readJSON(filepath.Join(s.dir, "volumes", id+".json"), &v)
	return v, err
}

func (s state) putVolume(v volume) error {
	return writeJSON(filepath.Join(s.dir, "volumes", v.ID+".json"), v)
}

func (s state) removeVolume(id string) error {
	for _, p := range []string{s.volumeImage(id), filepath.Join(s.dir, "volumes", id+".json")} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (s state) volumes() ([]volume, error) {
	var out []volume
	err := s.each("volumes", func(path string) error {
		var v volume
		if err := readJSON(path, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

func (s state) snapshot(id string) (snapshot, error) {
	var sn snapshot
	if id == "" || idFor(id) != id {
		return sn, fs.ErrNotExist
	}
	err := readJSON(filepath.Join(s.dir, "snapshots", id+".json"), &sn)
	return sn, err
}

func (s state) putSnapshot(sn snapshot) error {
	return writeJSON(filepath.Join(s.dir, "snapshots", sn.ID+".json"), sn)
}

func (s state) removeSnapshot(id string) error {
	for _, p := range []string{s.snapshotImage(id), filepath.Join(s.dir, "snapshots", id+".json")} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (s state) snapshots() ([]snapshot, error) {
	var out []snapshot
	err := s.each("snapshots", func(path string) error {
		var sn snapshot
		if err := readJSON(path, &sn); err != nil {
			return err
		}
		out = append(out, sn)
		return nil
	})
	return out, err
}

// stagings lists the staging records of volume id on every node.
func (s state) stagings(id string) ([]staging, error) {
	nodes, err := os.ReadDir(filepath.Join(s.dir, "nodes"))
	if err != nil {
		return nil, err
	}
	var out []staging
	for _, n := range nodes {
		var st staging
		err := readJSON(s.stagingFile(n.Name(), id), &st)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// nodeStagings lists the staging records of one node.
func (s state) nodeStagings(node string) ([]staging, error) {
	var out []staging
	err := s.each(filepath.Join("nodes", node), func(path string) error {
		var st staging
		if err := readJSON(path, &st); err != nil {
			return err
		}
		out = append(out, st)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

func (s state) each(sub string, f func(path string) error) error {
	paths, err := filepath.Glob(filepath.Join(s.dir, sub, "*.json"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(s.dir, sub)); err != nil {
		return err
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := f(p); err != nil {
			return err
		}
	}
	return nil
}
