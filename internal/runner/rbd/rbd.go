// Package rbd is the target kind of a Ceph RBD image driven by fio's own
// rbd engine (librbd, in userspace: no kernel module, no volume in
// between), from a host that has the cluster's configuration (/etc/ceph,
// or a conf path given). "rbd:POOL" makes an image of the run's size
// (storbench-RUNID) and removes it afterwards (success, failure, a
// cancelled run; leftovers of a killed run are found and removed);
// "rbd:POOL/IMAGE" uses an image that exists, which jobs only read unless
// destructive names it exactly. Results carry the pool, its size, and the
// OSDs and hosts behind it.
package rbd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner"
)

// Prefix starts every image storbench makes: storbench-RUNID.
const Prefix = "storbench-"

// DefaultConf is where the ceph tools and librbd look without CEPH_CONF.
const DefaultConf = "/etc/ceph/ceph.conf"

// Kind is the rbd target kind.
type Kind struct{}

var (
	_ runner.Kind          = Kind{}
	_ runner.KindDoctor    = Kind{}
	_ runner.KindLeftovers = Kind{}
)

// Name implements runner.Kind.
func (Kind) Name() string { return "rbd" }

// Spec is one rbd target: rbd:POOL[/IMAGE][?conf=PATH&id=CLIENT].
type Spec struct {
	raw   string
	Pool  string
	Image string // "" : storbench makes its own
	Conf  string // "" : CEPH_CONF, else DefaultConf
	ID    string // the cephx client id (client.ID), default admin
}

// Parse implements runner.Kind.
func (Kind) Parse(target string) (runner.Spec, bool, error) {
	rest, ok := strings.CutPrefix(target, "rbd:")
	if !ok {
		return nil, false, nil
	}
	s := &Spec{raw: target, ID: "admin"}
	path, query, _ := strings.Cut(rest, "?")
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, true, fmt.Errorf("targets: %s: %w", target, err)
		}
		for k := range q {
			if k != "conf" && k != "id" {
				return nil, true, fmt.Errorf("targets: %s: unknown setting %q (conf=PATH, id=CLIENT)", target, k)
			}
		}
		s.Conf = q.Get("conf")
		if id := q.Get("id"); id != "" {
			s.ID = id
		}
	}
	s.Pool, s.Image, _ = strings.Cut(path, "/")
	switch {
	case s.Pool == "":
		return nil, true, fmt.Errorf("targets: %s: no pool (rbd:POOL for an image of storbench's own, rbd:POOL/IMAGE for one that exists)", target)
	case strings.Contains(s.Image, "/"):
		return nil, true, fmt.Errorf("targets: %s: an image name has no /: rbd:POOL/IMAGE (RBD namespaces are not supported)", target)
	case strings.HasSuffix(path, "/") && s.Image == "":
		return nil, true, fmt.Errorf("targets: %s: an empty image name after the pool", target)
	}
	return s, true, nil
}

// String implements runner.Spec.
func (s *Spec) String() string { return s.raw }

// Describe implements runner.Spec.
func (s *Spec) Describe() string {
	if s.Image == "" {
		return fmt.Sprintf("a new RBD image %sRUNID of the run's size in pool %s, removed after the run; fio's rbd engine from this host as client.%s", Prefix, s.Pool, s.ID)
	}
	return fmt.Sprintf("the existing RBD image %s/%s: read only, written only when destructive names rbd:%s/%s; fio's rbd engine from this host as client.%s", s.Pool, s.Image, s.Pool, s.Image, s.ID)
}

// Target implements runner.Spec.
func (s *Spec) Target(o runner.Options) (runner.Target, error) {
	conf := s.Conf
	if conf == "" {
		conf = o.Env("CEPH_CONF")
	}
	if conf == "" {
		conf = DefaultConf
	}
	return &Target{spec: *s, conf: conf, cmder: execx.Local{}}, nil
}

// tools runs ceph and rbd with one configuration and client.
type tools struct {
	cmder execx.Cmder
	conf  string
	id    string
}

func (t tools) ceph() ceph.Client {
	return ceph.Client{Cmder: t.cmder, Conf: t.conf}
}

// rbd runs `rbd ARGS --format json` (when asked) and returns its output.
func (t tools) rbd(ctx context.Context, args ...string) ([]byte, error) {
	var full []string // an empty conf or id: the CLI's own default
	if t.conf != "" {
		full = append(full, "--conf", t.conf)
	}
	if t.id != "" {
		full = append(full, "--id", t.id)
	}
	full = append(full, args...)
	var out, stderr bytes.Buffer
	if err := t.cmder.Command(ctx, "rbd", full...).SetStdout(&out).SetStderr(&stderr).Run(); err != nil {
		return nil, fmt.Errorf("rbd %s: %w", strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}

// imageBytes is an image's size (`rbd info --format json`).
func (t tools) imageBytes(ctx context.Context, pool, image string) (int64, error) {
	b, err := t.rbd(ctx, "info", pool+"/"+image, "--format", "json")
	if err != nil {
		return 0, err
	}
	var info struct {
		Size int64 `json:"size"`
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return 0, fmt.Errorf("rbd info %s/%s: %w", pool, image, err)
	}
	return info.Size, nil
}

// images lists a pool's images.
func (t tools) images(ctx context.Context, pool string) ([]string, error) {
	b, err := t.rbd(ctx, "ls", pool, "--format", "json")
	if err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("rbd ls %s: %w", pool, err)
	}
	return names, nil
}

// watchers are the clients that have the image open (`rbd status`).
func (t tools) watchers(ctx context.Context, pool, image string) ([]string, error) {
	b, err := t.rbd(ctx, "status", pool+"/"+image, "--format", "json")
	if err != nil {
		return nil, err
	}
	var st struct {
		Watchers []struct {
			Address string `json:"address"`
			Client  int64  `json:"client"`
		} `json:"watchers"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("rbd status %s/%s: %w", pool, image, err)
	}
	var out []string
	for _, w := range st.Watchers {
		out = append(out, fmt.Sprintf("RBD image %s/%s is open by client.%d at %s", pool, image, w.Client, w.Address))
	}
	return out, nil
}

// poolFacts are the labels of a pool: its size, the OSDs holding its PGs
// and their hosts.
func (t tools) poolFacts(ctx context.Context, pool string) (map[string]string, error) {
	pl, err := t.ceph().PoolPlacement(ctx, pool)
	if err != nil {
		return nil, err
	}
	return pl.Labels(), nil
}

// engineTarget is fio's rbd engine on pool/image.
func (t tools) engineTarget(pool, image string) *fio.EngineTarget {
	return &fio.EngineTarget{IOEngine: "rbd",
		Options: []fio.Option{{Key: "clientname", Value: t.id}, {Key: "pool", Value: pool}, {Key: "rbdname", Value: image}},
		Env:     []string{"CEPH_CONF=" + t.conf}}
}
