package clustertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"
	"github.com/storbench/storbench/test/kubetest"
)

// sh runs a command on the host; failures fail the test.
func sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// clusterShOut runs cluster.sh with args and returns what it said and
// how it ended.
func clusterShOut(args ...string) (string, error) {
	return clusterShOutEnv(nil, args...)
}

// clusterShOutEnv is clusterShOut with env added to the environment.
func clusterShOutEnv(env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{"cluster.sh"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The cluster shares the machine: a CNI network namespace, a 10.244.*
// route and KUBE-* chains of someone else's, made before `up`, are all
// still there, as they were, after `down`, and check-clean does not
// count them as its own leftovers; a route that would collide with the
// cluster's pod subnets makes `up` refuse, naming it, having made nothing.
// It takes the running cluster down and brings it up again (about a
// minute), unless it runs after every other cluster test
// (CLUSTER_DOWN_LAST=1, set by scripts/k8s-integration.sh for the tests
// named TestClusterDown...): then it leaves the cluster down, and the
// tier's own teardown has nothing left to do.
func TestClusterDownHostThingsNotOursSurvive(t *testing.T) {
	root := kubetest.Env(t)["KAPI_ROOT"] // read now: down removes the file
	id := os.Getpid() % 1000000
	netns := fmt.Sprintf("cni-sbops%d", id)
	link := fmt.Sprintf("sbops%d", id)
	route := fmt.Sprintf("10.244.%d.0/24", 200+id%50) // beside the cluster's 10.244.1-3.0/24
	chain := fmt.Sprintf("KUBE-SBOPS%d", id)
	rule := []string{"-m", "comment", "--comment", "sbops " + link, "-j", "RETURN"}
	clusterSh(t, "down")
	defer func() {
		// The foreign things go before the cluster comes back for the
		// tests after this one (its snapshot would count them as the
		// host's, which they are not).
		exec.Command("ip", "netns", "del", netns).Run()
		exec.Command("ip", "link", "del", link).Run()
		exec.Command("iptables", "-t", "mangle", "-F", "KUBE-KUBELET-CANARY").Run()
		exec.Command("iptables", "-t", "mangle", "-X", "KUBE-KUBELET-CANARY").Run()
		exec.Command("iptables", "-F", chain).Run()
		exec.Command("iptables", "-X", chain).Run()
		if os.Getenv("CLUSTER_DOWN_LAST") == "1" {
			t.Log("the last cluster test: the cluster stays down")
			return
		}
		if out, err := clusterShOut("up"); err != nil {
			t.Errorf("bringing the cluster back up: %v\n%s", err, out)
		}
	}()
	if out, err := exec.Command("iptables", "-t", "mangle", "-S", "KUBE-KUBELET-CANARY").CombinedOutput(); err == nil {
		t.Fatalf("mangle KUBE-KUBELET-CANARY exists with the cluster down: %s", out)
	}
	sh(t, "ip", "netns", "add", netns)
	sh(t, "ip", "link", "add", link, "type", "bridge")
	sh(t, "ip", "link", "set", link, "up")
	sh(t, "ip", "route", "add", route, "dev", link)
	// The shape the kubelet's own chains have: a canary chain the host
	// node's kubelet also uses, and one of another name.
	sh(t, "iptables", "-t", "mangle", "-N", "KUBE-KUBELET-CANARY")
	sh(t, "iptables", append([]string{"-t", "mangle", "-A", "KUBE-KUBELET-CANARY"}, rule...)...)
	sh(t, "iptables", "-N", chain)
	sh(t, "iptables", append([]string{"-A", chain}, rule...)...)

	mnt := foreignSSHFS(t)

	// A route over the cluster's pod subnet of node 2: refused, nothing made.
	sh(t, "ip", "route", "add", "10.244.2.0/24", "dev", link)
	out, err := clusterShOut("up")
	if err == nil || !strings.Contains(out, "refusing to start") || !strings.Contains(out, "10.244.2.0/24") {
		t.Errorf("up with a route over a pod subnet: want a refusal naming it, got %v:\n%s", err, out)
	}
	if _, err := os.Stat(root + "/run/nodes.count"); root == "" || err == nil {
		t.Errorf("the refused up made %s/run (or cluster.env names no KAPI_ROOT)", root)
	}
	sh(t, "ip", "route", "del", "10.244.2.0/24", "dev", link)

	if out, err := clusterShOut("up"); err != nil {
		t.Fatalf("up beside things not its own: %v\n%s", err, out)
	}
	if out, err := clusterShOut("down"); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	if _, err := os.Stat("/run/netns/" + netns); err != nil {
		t.Errorf("network namespace %s is gone after down: %v", netns, err)
	}
	if got := sh(t, "ip", "-4", "route", "show", route); !strings.Contains(got, "dev "+link) {
		t.Errorf("route %s dev %s is gone after down (ip route: %q)", route, link, got)
	}
	for _, c := range [][]string{{"-t", "mangle", "-S", "KUBE-KUBELET-CANARY"}, {"-S", chain}} {
		out, err := exec.Command("iptables", c...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "sbops "+link) || strings.Count(string(out), "\n-A ") != 1 {
			t.Errorf("iptables %s after down: %v, want the chain with its one rule:\n%s", strings.Join(c, " "), err, out)
		}
	}
	if err := exec.Command("mountpoint", "-q", mnt).Run(); err != nil {
		t.Errorf("the sshfs mount %s is gone after down: %v", mnt, err)
	}
	if out, err := clusterShOut("check-clean"); err != nil {
		t.Errorf("check-clean counts things not the cluster's: %v\n%s", err, out)
	}

	// An up that fails half-way (here after the host node's kubelet made
	// its chains, sysctls and paths, before any route) tears down all it
	// made. CI once saw a node that never registered leave the bridge,
	// the kubelet's chains and sysctls behind: the teardown stopped at a
	// routes file with no route in it.
	out, err = clusterShOutEnv([]string{"CLUSTER_FAIL_AT=node-1"}, "up")
	if err == nil || !strings.Contains(out, "up failed: tearing down") {
		t.Errorf("up with CLUSTER_FAIL_AT=node-1: want it to fail and tear down, got %v:\n%s", err, out)
	}
	if out, err := clusterShOut("check-clean"); err != nil {
		t.Errorf("a failed up left things behind: %v\n%s", err, out)
	}
}

// foreignSSHFS mounts a directory of the test's over sshfs (sshfs -f, as
// the cluster's netfs mounts run, on a port of its own through socat and
// sftp-server), outside the cluster's root, as a host test beside the
// cluster tier does: the cluster's down and check-clean must leave it be.
// It returns the mount point; cleanup unmounts it.
func foreignSSHFS(t *testing.T) string {
	t.Helper()
	sshfs := testenv.Tool(t, "sshfs", "sshfs")
	socat := testenv.Tool(t, "socat", "socat")
	dir := t.TempDir()
	export, mnt := filepath.Join(dir, "export"), filepath.Join(dir, "mnt")
	for _, d := range []string{export, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	port := strconv.Itoa(testenv.FreePort(t))
	srv := exec.Command(socat, "TCP-LISTEN:"+port+",bind=127.0.0.1,reuseaddr,fork", "EXEC:/usr/lib/openssh/sftp-server -e")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	waitFor(t, "socat listening on 127.0.0.1:"+port, func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	cli := exec.Command(sshfs, "-f", "-o", "directport="+port, "127.0.0.1:"+export, mnt)
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("umount", "-l", mnt).Run()
		cli.Process.Kill()
		cli.Wait()
	})
	waitFor(t, "sshfs "+mnt+" on 127.0.0.1:"+port+" mounted", func() bool { return exec.Command("mountpoint", "-q", mnt).Run() == nil })
	return mnt
}

// waitFor polls ok every 100 ms for up to 30 s, then fails the test.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30 s", what)
		}
	}
}
