// Package netfs explains a network filesystem mounted on a host: from the
// mount (its type and source, and for a GlusterFS FUSE mount the client
// graph the mount itself exposes under .meta) it finds the servers behind
// it, the port each serves on, how the data is replicated and how many
// copies are kept; Probe measures the round trip to each server's port.
// It reads through a function, so the same code explains a mount on this
// host or on one reached over SSH.
package netfs

import (
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// Well-known service ports, used when the mount does not say.
const (
	PortNFS       = 2049
	PortSMB       = 445
	PortSSH       = 22
	PortGlusterd  = 24007
	PortCephMonV1 = 6789
)

// Server is one server behind a mount.
type Server struct {
	Host string
	// Port is the service's port the round trip is measured at.
	Port int
	// Brick is what the server holds of the volume (a Gluster brick's
	// path), "" when it serves the whole share.
	Brick string
}

// Addr is host:port.
func (s Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Mount is what a network filesystem mount is made of.
type Mount struct {
	// Protocol is nfs, smb, sshfs, glusterfs or cephfs.
	Protocol string
	// FSType, Source and Point are the mount's, as /proc/self/mountinfo
	// has them.
	FSType, Source, Point string
	// Servers are every server the client talks to, in the order the
	// mount names them.
	Servers []Server
	// Model is how the copies travel: result.ReplicationClient,
	// ReplicationPrimary or ReplicationServer.
	Model string
	// Replicas is the copies of each write the client can see being kept;
	// 0 when the mount does not tell (result.ReplicationPrimary: the pool's size).
	Replicas int
	// ReplicasSource says where Replicas was read.
	ReplicasSource string
	// Missing names what could not be read, and why.
	Missing []string
}

// ReadFunc reads a file where the mount is (this host, or one over SSH).
type ReadFunc func(path string) ([]byte, error)

// protocols maps mount types to protocol names.
var protocols = map[string]string{
	"nfs": "nfs", "nfs4": "nfs", "cifs": "smb", "smb3": "smb", "smbfs": "smb",
	"fuse.sshfs": "sshfs", "sshfs": "sshfs", "fuse.glusterfs": "glusterfs", "glusterfs": "glusterfs",
	"ceph": "cephfs", "fuse.ceph": "cephfs", "fuse.ceph-fuse": "cephfs", "fuse.cephfs": "cephfs",
}

// Describe explains the mount of type fsType from source at point; ok is
// false for a filesystem that is not one of the network filesystems it
// knows (nfs, smb/cifs, sshfs, GlusterFS, CephFS). read reaches the
// mount's own files (GlusterFS's .meta graph); nil reads nothing.
func Describe(fsType, source, point string, read ReadFunc) (Mount, bool) {
	proto, ok := protocols[fsType]
	if !ok {
		return Mount{}, false
	}
	m := Mount{Protocol: proto, FSType: fsType, Source: source, Point: point, Model: result.ReplicationServer, Replicas: 1,
		ReplicasSource: "one server: a " + proto + " mount's copies are the server's own business"}
	switch proto {
	case "nfs":
		m.Servers = hostsOf(nfsHost(source), PortNFS)
	case "smb":
		m.Servers = hostsOf(smbHost(source), PortSMB)
	case "sshfs":
		m.Servers = hostsOf(sshfsHost(source), PortSSH)
	case "glusterfs":
		m.describeGluster(read)
	case "cephfs":
		m.describeCeph()
	}
	if len(m.Servers) == 0 {
		m.Missing = append(m.Missing, fmt.Sprintf("servers: the mount source %q names none", source))
	}
	return m, true
}

func hostsOf(host string, port int) []Server {
	if host == "" {
		return nil
	}
	return []Server{{Host: host, Port: port}}
}

// nfsHost: "host:/export", "[fd00::1]:/export".
func nfsHost(source string) string {
	if strings.HasPrefix(source, "[") {
		if i := strings.Index(source, "]:"); i > 0 {
			return source[1:i]
		}
		return ""
	}
	h, _, ok := strings.Cut(source, ":")
	if !ok {
		return ""
	}
	return h
}

// smbHost: "//host/share" (or with backslashes).
func smbHost(source string) string {
	s := strings.ReplaceAll(source, `\`, "/")
	if !strings.HasPrefix(s, "//") {
		return ""
	}
	h, _, _ := strings.Cut(strings.TrimPrefix(s, "//"), "/")
	return h
}

// sshfsHost: "[user@]host:[path]".
func sshfsHost(source string) string {
	h := nfsHost(source)
	if at := strings.LastIndex(h, "@"); at >= 0 {
		h = h[at+1:]
	}
	return strings.Trim(h, "[]")
}

// describeCeph: the kernel client names its monitors in the source
// ("mon1,mon2:6789:/path", "10.0.0.1:6789,10.0.0.2:6789:/"); ceph-fuse's
// source is just "ceph-fuse".
func (m *Mount) describeCeph() {
	m.Model, m.Replicas = result.ReplicationPrimary, 0
	m.ReplicasSource = ""
	m.Missing = append(m.Missing, "replicas: the data pool's size is not visible from the mount (give --label replicas=N, or `ceph osd pool get POOL size`)")
	src := m.Source
	if i := strings.Index(src, ":/"); i >= 0 {
		src = src[:i]
	} else if strings.HasSuffix(src, ":") {
		src = strings.TrimSuffix(src, ":")
	} else {
		return
	}
	if at := strings.LastIndex(src, "@"); at >= 0 { // new syntax: user@fsid.fs=/path with mon_addr option
		src = src[at+1:]
	}
	for _, mon := range strings.Split(src, ",") {
		host, port := mon, PortCephMonV1
		if h, p, err := net.SplitHostPort(mon); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				host, port = h, n
			}
		}
		if host != "" {
			m.Servers = append(m.Servers, Server{Host: host, Port: port})
		}
	}
}

// SSHFSPort finds the port an sshfs mount at point connects to from its
// process's command line (-p N, -o port=N, -o directport=N); 0 when
// cmdlines hold no sshfs serving point. cmdlines are NUL-separated
// /proc/PID/cmdline contents.
func SSHFSPort(point string, cmdlines [][]byte) int {
	for _, c := range cmdlines {
		args := strings.Split(strings.TrimRight(string(c), "\x00"), "\x00")
		if len(args) == 0 || path.Base(args[0]) != "sshfs" || !hasArg(args, point) {
			continue
		}
		for i, a := range args {
			var opts string
			switch {
			case a == "-p" && i+1 < len(args):
				if n, err := strconv.Atoi(args[i+1]); err == nil {
					return n
				}
			case a == "-o" && i+1 < len(args):
				opts = args[i+1]
			case strings.HasPrefix(a, "-o"):
				opts = a[2:]
			}
			for _, o := range strings.Split(opts, ",") {
				k, v, _ := strings.Cut(o, "=")
				if k == "port" || k == "directport" {
					if n, err := strconv.Atoi(v); err == nil {
						return n
					}
				}
			}
		}
	}
	return 0
}

func hasArg(args []string, v string) bool {
	for _, a := range args[1:] {
		if strings.TrimRight(a, "/") == strings.TrimRight(v, "/") {
			return true
		}
	}
	return false
}
