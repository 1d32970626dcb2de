package kubetest

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ClusterEnv is test/cluster/cluster.sh's description of the running cluster
// (the file $KAPI_ROOT/run/cluster.env): KUBECONFIG, API_BRIDGE_URL,
// NODES, SHARED_DIR, and per real node (its name with '-' as '_', for
// example kreal_node_2_IP) NETNS, IP, LINK, KUBELET_ROOT, CONTAINERD_SOCK,
// KUBECONFIG, POD_CIDR, CGROUP.
type ClusterEnv map[string]string

// Env reads the running cluster's description (CLUSTER_ENV, or
// $KAPI_ROOT/run/cluster.env); it skips as Cluster does outside
// scripts/k8s-integration.sh and fails when the file is missing there.
func Env(t *testing.T) ClusterEnv {
	t.Helper()
	ClusterTier(t, "CLUSTER_ENV")
	path := os.Getenv("CLUSTER_ENV")
	if path == "" {
		root := os.Getenv("KAPI_ROOT")
		if root == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatal(err)
			}
			root = filepath.Join(home, ".cache", "storbench-kapi")
		}
		path = filepath.Join(root, "run", "cluster.env")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the cluster's description: %v (is test/cluster/cluster.sh up?)", err)
	}
	defer f.Close()
	env, err := ParseEnv(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return env
}

// ParseEnv reads KEY=VALUE lines as cluster.sh writes them (a value may
// be double-quoted; # starts a comment line).
func ParseEnv(r io.Reader) (ClusterEnv, error) {
	env := ClusterEnv{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		env[k] = strings.Trim(v, `"`)
	}
	return env, sc.Err()
}

// Nodes are the cluster's real nodes, the host's own (kreal-node) first.
func (e ClusterEnv) Nodes() []string { return strings.Fields(e["NODES"]) }

// Node is one of a real node's values, key being for example "IP".
func (e ClusterEnv) Node(name, key string) string {
	return e[strings.ReplaceAll(name, "-", "_")+"_"+key]
}
