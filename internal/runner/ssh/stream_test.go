package ssh

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

// routedInterface returns an interface of this machine that a route other
// than loopback reaches, and an address that route covers.
func routedInterface(t *testing.T) (iface string, ip net.IP) {
	t.Helper()
	f, err := os.Open("/proc/net/route")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 8 || fl[0] == "Iface" || fl[0] == "lo" {
			continue
		}
		b, err := hex.DecodeString(fl[1])
		if err != nil || len(b) != 4 {
			continue
		}
		dest := binary.LittleEndian.Uint32(b)
		addr := binary.BigEndian.AppendUint32(nil, dest|0x07) // a host inside the route
		if dest == 0 {
			addr = net.ParseIP("198.51.100.7").To4() // the default route carries it
		}
		return fl[0], net.IP(addr)
	}
	testenv.Missing(t, "a network route other than loopback", "this machine has no network interface to carry network storage")
	return "", nil
}

// A target on network storage of a host is sampled on the interface that
// carries it on that host: the routes and the interface's counters come
// through the same stream as /proc/stat.
func TestStreamedNetworkInterface(t *testing.T) {
	h := newHost(t)
	c := dial(t, h.options(t))
	iface, ip := routedInterface(t)
	labels := map[string]string{}
	result.LabelFSType.Set(labels, "nfs4")
	result.LabelMountSource.Set(labels, ip.String()+":/export/bench")
	start, stop := samplerFor(c, labels)
	defer stop()
	s, err := start()
	if err != nil || s == nil {
		t.Fatalf("no sampler: %v", err)
	}
	rec := s.Start()
	time.Sleep(2500 * time.Millisecond)
	tel := rec.Stop()
	if tel == nil {
		t.Fatal("nothing recorded")
	}
	if tel.Interface != iface {
		t.Errorf("interface %q, want %q (the route to %s)", tel.Interface, iface, ip)
	}
	for _, m := range tel.Missing {
		if strings.Contains(m, "network: interface") {
			t.Errorf("the interface's counters did not come through: %s", m)
		}
	}
}

// On a Raspberry Pi whose kernel has no get_throttled file, the stream
// asks vcgencmd once a second and frames its answer as that file, which
// the sampler reads as it reads the file.
func TestStreamAsksVcgencmd(t *testing.T) {
	const throttled = "/sys/devices/platform/soc/soc:firmware/get_throttled"
	want := "== " + throttled + "\nthrottled=0x50005"
	if _, err := os.Stat(throttled); err == nil {
		want = "== " + throttled + "\n" // a Pi's own file wins: no vcgencmd process a second
	}
	bin := t.TempDir()
	// vcgencmd as the Raspberry Pi firmware answers: under-voltage and
	// throttled now, both seen since boot.
	if err := os.WriteFile(filepath.Join(bin, "vcgencmd"), []byte("#!/bin/sh\n[ \"$1\" = get_throttled ] && echo throttled=0x50005\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", streamScript, "sh", "1")
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	sc := bufio.NewScanner(out)
	var frame []string
	for sc.Scan() && sc.Text() != "==" {
		frame = append(frame, sc.Text())
	}
	text := strings.Join(frame, "\n")
	if !strings.Contains(text, want) {
		t.Errorf("the first frame does not carry vcgencmd's answer:\n%s", text)
	}
	if !strings.Contains(text, "== /proc/net/route\n") {
		t.Error("the first frame has no routes")
	}
	for _, l := range frame {
		if strings.HasPrefix(l, "== /sys/class/net/lo/") {
			t.Errorf("loopback streamed: %s", l)
		}
	}
}
