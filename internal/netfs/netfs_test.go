package netfs

import (
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

func readTestdata(name string) ReadFunc {
	return func(string) ([]byte, error) { return os.ReadFile("testdata/" + name) }
}

func TestDescribe(t *testing.T) {
	noRead := func(string) ([]byte, error) { return nil, errors.New("permission denied") }
	tests := []struct {
		name, fsType, source string
		read                 ReadFunc
		wantOK               bool
		servers              []Server
		model                string
		replicas             int
		missing              int
	}{
		{"nfs", "nfs4", "nas.lan:/export/data", nil, true, []Server{{Host: "nas.lan", Port: 2049}}, result.ReplicationServer, 1, 0},
		{"nfs over IPv6", "nfs", "[fd00::5]:/srv", nil, true, []Server{{Host: "fd00::5", Port: 2049}}, result.ReplicationServer, 1, 0},
		{"smb", "cifs", "//nas/share", nil, true, []Server{{Host: "nas", Port: 445}}, result.ReplicationServer, 1, 0},
		{"sshfs", "fuse.sshfs", "me@box.lan:/home/me", nil, true, []Server{{Host: "box.lan", Port: 22}}, result.ReplicationServer, 1, 0},
		{"cephfs kernel", "ceph", "10.0.0.1:6789,10.0.0.2:3300:/vol", nil, true,
			[]Server{{Host: "10.0.0.1", Port: 6789}, {Host: "10.0.0.2", Port: 3300}}, result.ReplicationPrimary, 0, 1},
		{"glusterfs graph", "fuse.glusterfs", "10.97.2.2:sbvol", readTestdata("replica3.vol"), true, []Server{
			{Host: "10.97.2.2", Port: 24007, Brick: "/tmp/glt1/n1/brick"},
			{Host: "10.97.2.3", Port: 24007, Brick: "/tmp/glt1/n2/brick"},
			{Host: "10.97.2.4", Port: 24007, Brick: "/tmp/glt1/n3/brick"}}, result.ReplicationClient, 3, 0},
		{"glusterfs without its graph", "fuse.glusterfs", "gl1:vol", noRead, true, []Server{{Host: "gl1", Port: 24007}}, result.ReplicationClient, 0, 1},
		{"local disk", "ext4", "/dev/sda1", nil, false, nil, "", 0, 0},
		{"nfs without a host", "nfs", "weird", nil, true, nil, result.ReplicationServer, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := Describe(tt.fsType, tt.source, "/mnt/x", tt.read)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if !reflect.DeepEqual(m.Servers, tt.servers) {
				t.Errorf("servers = %+v, want %+v", m.Servers, tt.servers)
			}
			if m.Model != tt.model || m.Replicas != tt.replicas || len(m.Missing) != tt.missing {
				t.Errorf("model %q replicas %d missing %q; want %q, %d, %d missing", m.Model, m.Replicas, m.Missing, tt.model, tt.replicas, tt.missing)
			}
		})
	}
}

func TestSSHFSPort(t *testing.T) {
	tests := []struct {
		name string
		cmd  string
		want int
	}{
		{"directport", "sshfs\x00-f\x00-o\x00directport=2022,allow_other\x0010.98.0.13:/x\x00/mnt/x\x00", 2022},
		{"-p", "/usr/bin/sshfs\x00-p\x002222\x00h:/\x00/mnt/x/\x00", 2222},
		{"-oport", "sshfs\x00-oport=23\x00h:/\x00/mnt/x\x00", 23},
		{"another mount", "sshfs\x00-p\x002222\x00h:/\x00/mnt/y\x00", 0},
		{"not sshfs", "ssh\x00-p\x002222\x00/mnt/x\x00", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SSHFSPort("/mnt/x", [][]byte{[]byte(tt.cmd)}); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestParseVolfileErrors(t *testing.T) {
	for _, bad := range []string{"type x\n", "volume a\n type t\n", "volume a\n bogus 1\nend-volume\n"} {
		if _, err := ParseVolfile([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestLabels(t *testing.T) {
	m, _ := Describe("fuse.glusterfs", "10.97.2.2:sbvol", "/mnt/x", readTestdata("replica3.vol"))
	l := m.Labels([]RoundTrip{{Server: m.Servers[0], RTT: 210_000}, {Server: m.Servers[1], Err: errors.New("refused")}})
	for k, want := range map[result.LabelKey]string{
		result.LabelReplicationModel: "client",
		result.LabelReplicas:         "3",
		result.LabelVolumeServer:     "10.97.2.2",
		result.LabelVolumeServers:    "10.97.2.2:24007,10.97.2.3:24007,10.97.2.4:24007",
		result.LabelServerRTT:        "10.97.2.2:24007 0.21 ms, 10.97.2.3:24007 unreachable (refused)",
	} {
		if got := k.Of(l); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}
