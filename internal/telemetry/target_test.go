package telemetry

import "testing"

func TestRemoteMount(t *testing.T) {
	tests := []struct {
		fsType, source string
		remote         bool
		host           string
	}{
		{"ext4", "/dev/sda1", false, ""},
		{"nfs4", "nas.lan:/export/k8s", true, "nas.lan"},
		{"nfs", "[fd00::5]:/export", true, "fd00::5"},
		{"cifs", "//192.168.1.20/backup", true, "192.168.1.20"},
		{"fuse.sshfs", "pi@10.0.0.7:/srv", true, "10.0.0.7"},
		{"ceph", "10.0.0.1,10.0.0.2:/volumes", true, "10.0.0.1"},
		{"glusterfs", "gluster1:vol0", true, ""},
		{"tmpfs", "tmpfs", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.fsType+" "+tt.source, func(t *testing.T) {
			remote, host := remoteMount(tt.fsType, tt.source)
			if remote != tt.remote || host != tt.host {
				t.Errorf("got %v %q, want %v %q", remote, host, tt.remote, tt.host)
			}
		})
	}
}

func TestInterfaceFor(t *testing.T) {
	root := "testdata/network/t0"
	for host, want := range map[string]string{"192.0.2.10": "eth0", "10.9.9.9": "eth0", "127.0.0.1": "lo", "": "eth0"} {
		if got := interfaceFor(root, host); got != want {
			t.Errorf("%q: got %q, want %q", host, got, want)
		}
	}
	if got := interfaceFor("testdata/unclear/t0", "192.0.2.10"); got != "" {
		t.Errorf("without a route table: got %q", got)
	}
}

func TestParseThrottled(t *testing.T) {
	for in, want := range map[string]uint32{"throttled=0x50005\n": 0x50005, "0\n": 0, "60006": 0x60006} {
		if got, err := parseThrottled(in); err != nil || got != want {
			t.Errorf("%q: got %x, %v", in, got, err)
		}
	}
	if _, err := parseThrottled("throttled=oops"); err == nil {
		t.Error("accepted a bad value")
	}
}
