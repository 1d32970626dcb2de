// Package glustertest brings up a real GlusterFS for host-level tests, with
// no Kubernetes: test/cluster/gluster.sh's standalone mode (Debian's
// glusterfs-server 10.3). Each node is a network namespace on a bridge of
// the test's own in 10.97.2.0/24 with one glusterd and one brick; the
// volume is replicated across all of them and mounted through the GlusterFS
// FUSE client from a client namespace of its own, so every copy crosses a
// veth that can be shaped, cut, or have its brick killed or frozen. The
// test's end removes it all.
package glustertest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

// Volume is a running replicated volume and the namespaces behind it.
type Volume struct {
	// Dir holds the harness's state and the mount point.
	Dir string
	// Name is the Gluster volume's name; Mount where the FUSE client
	// mounted it in the host's mount namespace.
	Name, Mount string
	// Nodes are the servers, one brick each, in brick order.
	Nodes []Node
	// Client is the namespace the FUSE client's traffic leaves from.
	Client Node
	// ClientPID is the FUSE client process.
	ClientPID int
	// BringUp is how long the harness took to start.
	BringUp time.Duration
	id      string
}

// Node is one namespace of the harness.
type Node struct {
	// NetNS is its network namespace (under /run/netns), Addr its address,
	// Link the host's end of its veth.
	NetNS, Addr, Link string
	// Brick is the brick directory (servers only); GlusterdPID its glusterd.
	Brick       string
	GlusterdPID int
}

// Options shape the harness.
type Options struct {
	// Nodes is the replica count, one server each; 0 means 3.
	Nodes int
	// VolumeOptions are gluster volume options ("network.ping-timeout=4")
	// set before the volume starts and is mounted: the client takes some
	// only when it connects.
	VolumeOptions []string
}

// Script is the harness's path in the source tree.
func Script() string {
	top, err := testenv.SourceTree()
	if err != nil {
		return "test/cluster/gluster.sh" // bash says it is not there
	}
	return filepath.Join(top, "test", "cluster", "gluster.sh")
}

// Start brings a volume up, or skips (fails under STORBENCH_REQUIRE) when
// root, iproute2 or GlusterFS is missing; it skips under -short.
func Start(t testing.TB, opts Options) *Volume {
	t.Helper()
	testenv.HostTier(t, "gluster")
	testenv.Root(t)
	testenv.Tool(t, "ip", "iproute2")
	testenv.Tool(t, "tc", "iproute2")
	testenv.Tool(t, "glusterd", "glusterfs-server", "gluster")
	testenv.Tool(t, "glusterfs", "glusterfs-client", "gluster")
	n := opts.Nodes
	if n == 0 {
		n = 3
	}
	dir, err := os.MkdirTemp("", "sbglus")
	if err != nil {
		t.Fatal(err)
	}
	// Ctrl-C runs no t.Cleanup: the daemons, mounts, namespaces and links
	// would stay.
	interrupted := testenv.OnInterrupt("the standalone GlusterFS in "+dir, func() {
		harness("standalone-down", dir).Run()
		os.RemoveAll(dir)
	})
	t.Cleanup(func() {
		defer interrupted()
		if out, err := harness("standalone-down", dir).CombinedOutput(); err != nil {
			t.Errorf("gluster.sh standalone-down: %v\n%s", err, out)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing the harness's directory: %v", err)
		}
	})
	t0 := time.Now()
	cmd := harness("standalone-up", dir, strconv.Itoa(n))
	id := strconv.Itoa(os.Getpid() % 10_000_000)
	cmd.Env = append(os.Environ(), "GLUSTER_ID="+id, "GLUSTER_VOLUME_OPTS="+strings.Join(opts.VolumeOptions, " "))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gluster.sh standalone-up: %v\n%s", err, out)
	}
	v, err := load(filepath.Join(dir, "gluster.env"), n)
	if err != nil {
		t.Fatal(err)
	}
	v.BringUp, v.id = time.Since(t0), id
	return v
}

func harness(args ...string) *exec.Cmd {
	return exec.Command("bash", append([]string{Script()}, args...)...)
}

// load reads the harness's description of itself.
func load(path string, n int) (*Volume, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the harness's environment: %w", err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, val, ok := strings.Cut(sc.Text(), "=")
		if ok && !strings.HasPrefix(k, "#") {
			env[k] = strings.Trim(val, `"`)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	v := &Volume{Dir: env["GLUSTER_DIR"], Name: env["GLUSTER_VOLUME"], Mount: env["GLUSTER_MOUNT"],
		Client: Node{NetNS: env["GLUSTER_CLIENT_NETNS"], Addr: env["GLUSTER_CLIENT_IP"], Link: env["GLUSTER_CLIENT_LINK"]}}
	v.ClientPID, _ = strconv.Atoi(env["GLUSTER_CLIENT_PID"])
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("GLUSTER_N%d_", i)
		nd := Node{NetNS: env[p+"NETNS"], Addr: env[p+"IP"], Link: env[p+"LINK"], Brick: env[p+"BRICK"]}
		nd.GlusterdPID, _ = strconv.Atoi(env[p+"GLUSTERD_PID"])
		if nd.Addr == "" || nd.Brick == "" {
			return nil, fmt.Errorf("%s: node %d not described", path, i)
		}
		v.Nodes = append(v.Nodes, nd)
	}
	return v, nil
}

// Servers are the nodes' addresses, in brick order.
func (v *Volume) Servers() []string {
	var s []string
	for _, n := range v.Nodes {
		s = append(s, n.Addr)
	}
	return s
}

// Brick acts on node i's brick process (0-based): "kill" (SIGKILL),
// "freeze" (SIGSTOP), "thaw" (SIGCONT), "start" (volume start force).
func (v *Volume) Brick(t testing.TB, op string, i int) {
	t.Helper()
	v.run(t, "brick", v.Dir, op, strconv.Itoa(i+1))
}

// BrickLimit limits node i's brick process (0-based): "cpu" to amount
// percent of one core, "slow" to amount bytes per second on the disk
// under it (direct I/O only: start the volume with DirectIO); "uncpu"
// and "unslow" (amount "") lift it.
func (v *Volume) BrickLimit(t testing.TB, op string, i int, amount string) {
	t.Helper()
	args := []string{"brick", v.Dir, op, strconv.Itoa(i + 1)}
	if amount != "" {
		args = append(args, amount)
	}
	v.run(t, args...)
}

// DirectIO are the volume options under which a brick opens files with
// O_DIRECT when its client does (fio's direct=1): what a blkio throttle
// on the brick needs, and the options of a volume holding VM images.
var DirectIO = []string{"performance.strict-o-direct=on", "network.remote-dio=disable"}

// LinkOp acts on node i's veth (0-based; -1 is the client's): "cut",
// "restore", "shape" (tc tbf at rate, e.g. "200mbit"), "unshape".
func (v *Volume) LinkOp(t testing.TB, op string, i int, rate string) {
	t.Helper()
	node := strconv.Itoa(i + 1)
	if i < 0 {
		node = "c"
	}
	args := []string{"link", v.Dir, op, node}
	if rate != "" {
		args = append(args, rate)
	}
	v.run(t, args...)
}

// CLI runs the gluster CLI inside node i (0-based) and returns its output.
func (v *Volume) CLI(t testing.TB, i int, args ...string) string {
	t.Helper()
	return v.run(t, append([]string{"cli", v.Dir, strconv.Itoa(i + 1)}, args...)...)
}

// InClient runs a command in the client's network namespace (the host's
// mount namespace: the volume's mount is visible).
func (v *Volume) InClient(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command("nsenter", append([]string{"--net=/run/netns/" + v.Client.NetNS, name}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), v.Client.NetNS, err, out)
	}
	return string(out)
}

func (v *Volume) run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := harness(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("gluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// CheckClean fails the test when anything of v is left on the host (its
// namespaces, links, processes, mounts): call it once v's test, whose
// cleanup removes v, has ended.
func CheckClean(t testing.TB, v *Volume) {
	t.Helper()
	if out, err := harness("check-clean", v.id, v.Dir).CombinedOutput(); err != nil {
		t.Errorf("gluster.sh check-clean: %v\n%s", err, out)
	}
}

// CheckExplained fails the test unless labels explain v as storbench
// should from its mount or client graph: every server at glusterd's port,
// in brick order, and replicas = the node count, written by the client.
func (v *Volume) CheckExplained(t testing.TB, labels map[string]string) {
	t.Helper()
	var want []string
	for _, s := range v.Servers() {
		want = append(want, s+":24007")
	}
	if got := result.LabelVolumeServers.Of(labels); got != strings.Join(want, ",") ||
		result.LabelReplicas.Of(labels) != strconv.Itoa(len(v.Nodes)) || result.LabelReplicationModel.Of(labels) != result.ReplicationClient {
		t.Errorf("labels %v: want servers %s, replicas %d, model %s", labels, strings.Join(want, ","), len(v.Nodes), result.ReplicationClient)
	}
}
