package telemetry

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// ConfigFor derives what to sample from a target's labels (see
// internal/runner/local, which samples its targets this way), with /proc
// and /sys under root: its block device, or for a network-backed target
// the interface that carries it.
func ConfigFor(labels map[string]string, root string) Config {
	cfg := Config{Root: root, Host: result.LabelHostname.Of(labels), Device: result.LabelDevice.Of(labels)}
	fsType, source := result.LabelFSType.Of(labels), result.LabelMountSource.Of(labels)
	remote, host := remoteMount(fsType, source)
	if !remote && cfg.Device != "" {
		remote, host = remoteBlockDevice(root, cfg.Device)
	}
	if remote {
		if cfg.Device == "" {
			cfg.NoDevice = fmt.Sprintf("the target is on a network filesystem (%s from %s), with no local block device", fsType, source)
		}
		cfg.Interface = interfaceFor(root, host)
	}
	return cfg
}

var networkFS = map[string]bool{
	"nfs": true, "nfs4": true, "cifs": true, "smb3": true, "smbfs": true, "ceph": true,
	"glusterfs": true, "fuse.glusterfs": true, "fuse.sshfs": true, "sshfs": true, "9p": true,
	"afs": true, "lustre": true, "beegfs": true, "fuse.s3fs": true, "fuse.rclone": true,
	"fuse.juicefs": true, "fuse.seaweedfs": true, "davfs": true, "fuse.davfs2": true,
}

// remoteMount reports whether a mount is network-backed and which host
// serves it ("" when unknown).
func remoteMount(fsType, source string) (bool, string) {
	host := ""
	switch {
	case strings.HasPrefix(source, "//"): // cifs: //server/share
		host, _, _ = strings.Cut(strings.TrimPrefix(source, "//"), "/")
	case strings.HasPrefix(source, "["): // nfs over IPv6: [fd00::1]:/export
		if i := strings.Index(source, "]:"); i > 0 {
			host = source[1:i]
		}
	case strings.Contains(source, ":/") || strings.HasSuffix(source, ":"): // nfs, ceph, sshfs: host:/path
		host, _, _ = strings.Cut(source, ":")
		if at := strings.LastIndex(host, "@"); at >= 0 { // sshfs user@host
			host = host[at+1:]
		}
		host, _, _ = strings.Cut(host, ",") // ceph lists monitors
	}
	return networkFS[fsType] || host != "", host
}

// remoteBlockDevice recognises block devices that travel over the
// network: iSCSI, NBD and Ceph RBD. host is the iSCSI portal when known.
func remoteBlockDevice(root, dev string) (bool, string) {
	disk := dev
	if target, err := filepath.EvalSymlinks(filepath.Join(root, "sys/class/block", dev)); err == nil {
		if _, err := os.Stat(filepath.Join(target, "partition")); err == nil {
			disk = filepath.Base(filepath.Dir(target))
		}
	}
	if strings.HasPrefix(disk, "nbd") || strings.HasPrefix(disk, "rbd") {
		return true, ""
	}
	target, err := filepath.EvalSymlinks(filepath.Join(root, "sys/class/block", disk, "device"))
	if err != nil {
		return false, ""
	}
	for _, part := range strings.Split(target, "/") {
		if n, ok := strings.CutPrefix(part, "session"); ok && n != "" {
			addrs, _ := filepath.Glob(filepath.Join(root, "sys/class/iscsi_connection/connection"+n+":*/persistent_address"))
			for _, a := range addrs {
				if b, err := os.ReadFile(a); err == nil {
					return true, strings.TrimSpace(string(b))
				}
			}
			return true, ""
		}
	}
	return false, ""
}

// interfaceFor finds the interface the kernel routes host through: the
// longest matching IPv4 route of /proc/net/route, else the default route.
func interfaceFor(root, host string) string {
	var ip net.IP
	if host != "" {
		if ip = net.ParseIP(host); ip == nil && root == "/" {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			addrs, err := net.DefaultResolver.LookupIP(ctx, "ip4", host)
			cancel()
			if err == nil && len(addrs) > 0 {
				ip = addrs[0]
			}
		}
	}
	if ip != nil && ip.IsLoopback() {
		return "lo"
	}
	f, err := os.Open(filepath.Join(root, "proc/net/route"))
	if err != nil {
		return ""
	}
	defer f.Close()
	best, bestOnes := "", -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 8 || fl[0] == "Iface" {
			continue
		}
		dest, err1 := leHex(fl[1])
		mask, err2 := leHex(fl[7])
		if err1 != nil || err2 != nil {
			continue
		}
		var match bool
		if ip4 := ip.To4(); ip4 != nil {
			match = binary.BigEndian.Uint32(ip4)&mask == dest
		} else {
			match = dest == 0 && mask == 0 // unknown or IPv6 server: the default route
		}
		if ones, _ := net.IPMask(binary.BigEndian.AppendUint32(nil, mask)).Size(); match && ones > bestOnes {
			best, bestOnes = fl[0], ones
		}
	}
	return best
}

// leHex reads /proc/net/route's little-endian hex addresses.
func leHex(s string) (uint32, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 4 {
		return 0, fmt.Errorf("bad route field %q", s)
	}
	return binary.BigEndian.Uint32([]byte{b[3], b[2], b[1], b[0]}), nil
}

// InterfaceTo is the interface root's routing table (/proc/net/route)
// sends traffic for host through, an IPv4 address; "" or a name root
// cannot resolve gives the default route's. "" when root has no routes.
func InterfaceTo(root, host string) string { return interfaceFor(root, host) }
