package rbd

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/runner"
)

// The kind's full conformance (leftovers, doctor, a real image) runs on a
// real Ceph in test/cephtest (TestLive/rbd).

func TestParse(t *testing.T) {
	tests := []struct {
		target           string
		ok               bool
		pool, image, id  string
		conf, wantErr    string
		describeContains string
	}{
		{target: "rbd:bench", ok: true, pool: "bench", id: "admin", describeContains: "a new RBD image storbench-RUNID"},
		{target: "rbd:bench/vm-100-disk-0", ok: true, pool: "bench", image: "vm-100-disk-0", id: "admin", describeContains: "read only"},
		{target: "rbd:bench?conf=/etc/pve/ceph.conf&id=storbench", ok: true, pool: "bench", id: "storbench", conf: "/etc/pve/ceph.conf"},
		{target: "rbd:", ok: true, wantErr: "targets: rbd:: no pool"},
		{target: "rbd:bench/", ok: true, wantErr: "an empty image name"},
		{target: "rbd:bench/ns/img", ok: true, wantErr: "an image name has no /"},
		{target: "rbd:bench?keyring=/x", ok: true, wantErr: `unknown setting "keyring"`},
		{target: "/dev/rbd0", ok: false},
		{target: "gluster:vol", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			sp, ok, err := Kind{}.Parse(tt.target)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !ok {
				if ok {
					t.Fatal(err)
				}
				return
			}
			s := sp.(*Spec)
			if s.Pool != tt.pool || s.Image != tt.image || s.ID != tt.id || s.Conf != tt.conf || s.String() != tt.target {
				t.Errorf("spec %+v", s)
			}
			if !strings.Contains(s.Describe(), tt.describeContains) {
				t.Errorf("describe %q lacks %q", s.Describe(), tt.describeContains)
			}
		})
	}
}

func TestConfFromEnvironment(t *testing.T) {
	sp, _, _ := Kind{}.Parse("rbd:bench")
	tests := []struct {
		env  map[string]string
		want string
	}{
		{nil, DefaultConf},
		{map[string]string{"CEPH_CONF": "/srv/ceph.conf"}, "/srv/ceph.conf"},
	}
	for _, tt := range tests {
		tg, err := sp.Target(runner.Options{Getenv: func(k string) string { return tt.env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.(*Target).conf; got != tt.want {
			t.Errorf("env %v: conf %s, want %s", tt.env, got, tt.want)
		}
	}
}
