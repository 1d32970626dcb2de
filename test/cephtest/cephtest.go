// Package cephtest brings up a real Ceph (test/cluster/ceph.sh's standalone
// mode) for host-level tests: a monitor and manager on its own bridge, one
// BlueStore OSD per node in the node's network namespace behind its own veth,
// a client namespace without an OSD, and the faults the script injects (a
// throttled OSD disk, a shaped or cut link, a stopped or frozen OSD). One
// standalone Ceph runs on the machine at a time: Start waits for the lock.
package cephtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"
)

// LockPath serializes standalone Ceph clusters: they share the subnet
// 10.97.1.0/24 (docs SEAMS: the ceph helper's), and two would not fit the
// machine's memory anyway.
const LockPath = "/tmp/storbench-ceph-standalone.lock"

// Node is one OSD host of the cluster (or the client namespace, OSD -1).
type Node struct {
	Name  string
	NetNS string // network namespace under /run/netns
	IP    string
	Link  string // the host side of the node's veth: its "switch port"
	OSD   int
}

// Cluster is a running standalone Ceph.
type Cluster struct {
	Dir    string // state: conf, logs, OSD data
	Conf   string // CEPH_CONF for clients
	Pool   string // the size-3 RBD pool
	Nodes  []Node
	Client Node
	// BringUp is how long ceph.sh took from nothing to every PG active+clean.
	BringUp time.Duration
	script  string
}

// Options shape the cluster.
type Options struct {
	Nodes  int  // OSD nodes, default 3
	CephFS bool // also CephFS with an MDS
}

// Start brings a standalone Ceph up for t and tears it down in t.Cleanup.
// It skips (fails under STORBENCH_REQUIRE) without root or Ceph's packages,
// and always skips under -short.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("a real Ceph: not under -short")
	}
	testenv.Root(t)
	for _, tool := range []string{"ceph-mon", "ceph-osd", "ceph-mgr", "ceph", "rbd"} {
		testenv.Tool(t, tool, "ceph-mon ceph-osd ceph-mgr ceph-common", "ceph")
	}
	if o.CephFS {
		testenv.Tool(t, "ceph-mds", "ceph-mds", "ceph")
		testenv.Tool(t, "ceph-fuse", "ceph-fuse", "ceph")
	}
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	script, err := Script()
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := lock()
	if err != nil {
		t.Fatal(err)
	}
	tag := strconv.Itoa(os.Getpid() % 100000)
	dir := filepath.Join("/var/tmp", "storbench-ceph-"+tag)
	c := &Cluster{Dir: dir, script: script}
	env := []string{"CEPH_DIR=" + dir, "CEPH_TAG=" + tag}
	if o.CephFS {
		env = append(env, "CEPH_FS=1")
	}
	// Ctrl-C runs no t.Cleanup: the daemons, namespaces and links would
	// stay.
	interrupted := testenv.OnInterrupt("the standalone Ceph in "+dir, func() { c.run(context.Background(), nil, "standalone", "down") })
	start := time.Now()
	out, err := c.run(context.Background(), env, "standalone", "up", strconv.Itoa(o.Nodes))
	c.BringUp = time.Since(start)
	t.Cleanup(func() {
		defer unlock()
		defer interrupted()
		if out, err := c.run(context.Background(), nil, "standalone", "down"); err != nil {
			t.Errorf("ceph.sh standalone down: %v\n%s", err, out)
		}
		if out, err := c.run(context.Background(), nil, "check-clean"); err != nil {
			t.Errorf("ceph.sh check-clean after down: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("ceph.sh standalone up: %v\n%s", err, out)
	}
	if err := c.load(); err != nil {
		t.Fatal(err)
	}
	t.Logf("standalone Ceph up in %s (%d OSD nodes) in %s", c.BringUp.Round(100*time.Millisecond), len(c.Nodes), dir)
	return c
}

// Script is test/cluster/ceph.sh's path in this module.
func Script() (string, error) {
	top, err := testenv.SourceTree()
	if err != nil {
		return "", fmt.Errorf("ceph.sh: %w", err)
	}
	return filepath.Join(top, "test", "cluster", "ceph.sh"), nil
}

func lock() (unlock func(), err error) {
	f, err := os.OpenFile(LockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", LockPath, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", LockPath, err)
	}
	return func() { f.Close() }, nil
}

func (c *Cluster) run(ctx context.Context, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{c.script}, args...)...)
	cmd.Env = append(append(os.Environ(), "CEPH_DIR="+c.Dir), env...)
	return cmd.CombinedOutput()
}

// Script runs ceph.sh with args against this cluster (osd slow 2 20971520,
// link shape sbceph-node-3 200mbit...).
func (c *Cluster) Script(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		t.Fatalf("ceph.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Command is name with args in node's network namespace (the host's when
// node has none), with CEPH_CONF set: ceph, rbd, fio's rbd engine.
func (c *Cluster) Command(ctx context.Context, node Node, name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if node.NetNS == "" {
		cmd = exec.CommandContext(ctx, name, args...)
	} else {
		cmd = exec.CommandContext(ctx, "nsenter", append([]string{"--net=/run/netns/" + node.NetNS, name}, args...)...)
	}
	cmd.Env = append(os.Environ(), "CEPH_CONF="+c.Conf)
	return cmd
}

// Ceph runs the ceph CLI from the host and returns its standard output.
func (c *Cluster) Ceph(ctx context.Context, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := c.Command(ctx, Node{}, "ceph", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("ceph %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// LinkBytes reads a node's link counters from the host side of its veth:
// rx there is what the node sent, tx what it received.
func (c *Cluster) LinkBytes(node Node) (nodeTx, nodeRx uint64, err error) {
	read := func(f string) (uint64, error) {
		b, err := os.ReadFile(filepath.Join("/sys/class/net", node.Link, "statistics", f))
		if err != nil {
			return 0, fmt.Errorf("link %s of %s: %w", node.Link, node.Name, err)
		}
		return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	if nodeTx, err = read("rx_bytes"); err != nil {
		return 0, 0, err
	}
	nodeRx, err = read("tx_bytes")
	return nodeTx, nodeRx, err
}

// Node returns the OSD node named name.
func (c *Cluster) Node(name string) (Node, bool) {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

func (c *Cluster) load() error {
	env, err := readEnv(filepath.Join(c.Dir, "ceph.env"))
	if err != nil {
		return err
	}
	c.Conf, c.Pool = env["CEPH_CONF"], env["POOL"]
	c.Client = Node{Name: "client", NetNS: env["CLIENT_NETNS"], IP: env["CLIENT_IP"], Link: env["CLIENT_LINK"], OSD: -1}
	for _, name := range strings.Fields(env["NODES"]) {
		v := strings.ReplaceAll(name, "-", "_")
		osd, err := strconv.Atoi(env[v+"_OSD"])
		if err != nil {
			return fmt.Errorf("ceph.env: node %s: OSD %q: %w", name, env[v+"_OSD"], err)
		}
		c.Nodes = append(c.Nodes, Node{Name: name, NetNS: env[v+"_NETNS"], IP: env[v+"_IP"], Link: env[v+"_LINK"], OSD: osd})
	}
	if c.Conf == "" || len(c.Nodes) == 0 {
		return fmt.Errorf("ceph.env in %s: no CEPH_CONF or no NODES", c.Dir)
	}
	return nil
}

// readEnv reads the KEY=VALUE lines ceph.sh writes (values unquoted or in
// double quotes).
func readEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ceph.env: %w", err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		env[k] = strings.Trim(v, `"`)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ceph.env %s: %w", path, err)
	}
	return env, nil
}
