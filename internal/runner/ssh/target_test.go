package ssh

import (
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in         string
		user, host string
		port       int
		path, err  string
	}{
		{in: "ssh://pi01/mnt/ssd", host: "pi01", path: "/mnt/ssd"},
		{in: "ssh://pi@pi01:2222/var/tmp/bench", user: "pi", host: "pi01", port: 2222, path: "/var/tmp/bench"},
		{in: "ssh://root@192.168.1.30/dev/sda", user: "root", host: "192.168.1.30", path: "/dev/sda"},
		{in: "ssh://[fe80::1]:22/dev/nvme0n1", host: "fe80::1", port: 22, path: "/dev/nvme0n1"},
		{in: "ssh://nas/srv/my%20pool", host: "nas", path: "/srv/my pool"},
		{in: "ssh://pi01", err: "names no path"},
		{in: "ssh://pi01/", err: "names no path"},
		{in: "ssh://pi:secret@pi01/x", err: "passwords are not accepted"},
		{in: "ssh://pi01:ssh/x", err: "invalid port"},
		{in: "ssh://pi01:70000/x", err: "not a port number"},
		{in: "ssh:pi01/x", err: "write ssh://"},
		{in: "ssh:///x", err: "write ssh://"},
		{in: "k8s:fast", err: "not an ssh:// target"},
		{in: "ssh://pi01/x?y=1", err: "unexpected ?query"},
	} {
		o, path, err := ParseTarget(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTarget(%q) = %+v %q %v; want error %q", tc.in, o, path, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseTarget(%q) error shows the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil || o.User != tc.user || o.Host != tc.host || o.Port != tc.port || path != tc.path {
			t.Errorf("ParseTarget(%q) = %+v %q %v; want %s@%s:%d %q", tc.in, o, path, err, tc.user, tc.host, tc.port, tc.path)
		}
	}
}
