package sshtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testenv"
)

// Network is a Linux bridge on this host with network namespaces on it,
// each joined by a veth pair whose two ends can be shaped with tc tbf (a
// host's "switch port"), for tests of links between hosts. Addresses are
// in a 10.97.X.0/24 of its own; nothing is routed off the machine. It
// needs root, ip and tc; the test's end removes it all.
type Network struct {
	Bridge string
	Nodes  []*Node
}

// Node is one namespace on a Network.
type Node struct {
	Name string // the namespace, under /run/netns
	Addr string // its address on the bridge
	link string // the host's end of its veth
}

// NewNetwork makes a bridge with n namespaces on it.
func NewNetwork(t testing.TB, n int) *Network {
	t.Helper()
	testenv.HostTier(t, "netns")
	testenv.Root(t)
	testenv.Tool(t, "ip", "iproute2")
	testenv.Tool(t, "tc", "iproute2")
	id := rand.IntN(200) + 20
	net := &Network{Bridge: fmt.Sprintf("sbt%d", id)}
	t.Cleanup(func() { net.remove(t) })
	sh(t, "ip", "link", "add", net.Bridge, "type", "bridge")
	sh(t, "ip", "addr", "add", fmt.Sprintf("10.97.%d.1/24", id), "dev", net.Bridge)
	sh(t, "ip", "link", "set", net.Bridge, "up")
	for i := 1; i <= n; i++ {
		nd := &Node{Name: fmt.Sprintf("sbt%d-%d", id, i), Addr: fmt.Sprintf("10.97.%d.%d", id, 10+i), link: fmt.Sprintf("sbt%dv%d", id, i)}
		net.Nodes = append(net.Nodes, nd)
		sh(t, "ip", "netns", "add", nd.Name)
		sh(t, "ip", "link", "add", nd.link, "type", "veth", "peer", "name", "eth0", "netns", nd.Name)
		sh(t, "ip", "link", "set", nd.link, "master", net.Bridge, "up")
		nd.in(t, "ip", "addr", "add", nd.Addr+"/24", "dev", "eth0")
		nd.in(t, "ip", "link", "set", "eth0", "up")
		nd.in(t, "ip", "link", "set", "lo", "up")
		nd.in(t, "ip", "route", "add", "default", "via", fmt.Sprintf("10.97.%d.1", id))
	}
	return net
}

func (n *Network) remove(t testing.TB) {
	for _, nd := range n.Nodes {
		// Processes still in the namespace (an sshd's sessions) keep it;
		// their tests' own cleanups stop them.
		if err := exec.Command("ip", "netns", "del", nd.Name).Run(); err != nil {
			t.Errorf("removing namespace %s: %v", nd.Name, err)
		}
		exec.Command("ip", "link", "del", nd.link).Run() // gone with its peer's namespace already, usually
	}
	if out, err := exec.Command("ip", "link", "del", n.Bridge).CombinedOutput(); err != nil {
		t.Errorf("removing bridge %s: %v: %s", n.Bridge, err, out)
	}
}

// Enter is the command prefix that runs a program in the namespace.
func (nd *Node) Enter() []string { return []string{"nsenter", "--net=/run/netns/" + nd.Name} }

func (nd *Node) in(t testing.TB, args ...string) { sh(t, append(nd.Enter(), args...)...) }

// Shape limits both ends of the node's veth to rate ("1gbit") with tc
// tbf, as test/cluster shapes a node's port: a burst of 4 ms at the
// rate (at least 64 KiB) and up to 25 ms queued.
func (nd *Node) Shape(t testing.TB, rate string, bytesPerSec int) {
	t.Helper()
	burst := max(bytesPerSec/250, 65536)
	args := []string{"root", "tbf", "rate", rate, "burst", fmt.Sprint(burst), "latency", "25ms"}
	sh(t, append([]string{"tc", "qdisc", "replace", "dev", nd.link}, args...)...)
	nd.in(t, append([]string{"tc", "qdisc", "replace", "dev", "eth0"}, args...)...)
}

// Unshape removes the shaping.
func (nd *Node) Unshape(t testing.TB) {
	t.Helper()
	sh(t, "tc", "qdisc", "del", "dev", nd.link, "root")
	nd.in(t, "tc", "qdisc", "del", "dev", "eth0", "root")
}

// StartIn starts an sshd in the node's namespace on port 22 of its
// address, as Start does on 127.0.0.1.
func StartIn(t testing.TB, nd *Node, extra ...string) *Server {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		testenv.Tool(t, "sshd", "openssh-server", "sshd")
	}
	testenv.Tool(t, "nsenter", "util-linux")
	s, err := newServer(t.TempDir(), listen{host: nd.Addr, port: 22, netns: nd.Enter()}, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("sshd %s log:\n%s", s.Addr(), s.log.String())
		}
	})
	return s
}

func sh(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}
