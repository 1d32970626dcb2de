package kubetest

import (
	"strings"
	"testing"
)

func TestParseEnv(t *testing.T) {
	env, err := ParseEnv(strings.NewReader(`# written by test/cluster/cluster.sh up
KUBECONFIG=/k/run/kubeconfig
NODES="kreal-node kreal-node-2"
kreal_node_NETNS=
kreal_node_2_IP=10.98.0.12
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := env.Nodes(); len(got) != 2 || got[1] != "kreal-node-2" {
		t.Errorf("Nodes() = %q", got)
	}
	if got := env.Node("kreal-node-2", "IP"); got != "10.98.0.12" {
		t.Errorf("Node(kreal-node-2, IP) = %q", got)
	}
	if v, ok := env["kreal_node_NETNS"]; !ok || v != "" {
		t.Errorf("an empty value: %q %v", v, ok)
	}
	if env["KUBECONFIG"] != "/k/run/kubeconfig" {
		t.Errorf("KUBECONFIG = %q", env["KUBECONFIG"])
	}
}
