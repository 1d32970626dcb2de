package storbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The node-failure request is refused before anything starts when it
// lacks its stop command or inventory, or names a host the inventory does
// not have; a node with no host of its name fails when its command runs.
func TestNodeFailureRequest(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "hosts.ini")
	if err := os.WriteFile(inv, []byte("[nodes]\nnode-a ansible_host=127.0.0.1 ansible_port=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var reqErr *RequestError
	for _, c := range []struct {
		req  NodeFailureRequest
		want string
	}{
		{NodeFailureRequest{Inventory: inv, Node: "node-a"}, "--node-stop-command"},
		{NodeFailureRequest{StopCommand: "true", Inventory: inv}, "--node NODE"},
		{NodeFailureRequest{StopCommand: "true", Node: "node-a"}, "--inventory"},
		{NodeFailureRequest{StopCommand: "true", Inventory: inv, Node: "node-a", Host: "node-b"}, "node-b"},
		{NodeFailureRequest{StopCommand: "true", Inventory: inv, Node: "node-c"}, "node-c"},
	} {
		_, err := NodeFailure(c.req)
		if !errors.As(err, &reqErr) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a refusal naming %s", c.req, err, c.want)
		}
	}
	nf, err := NodeFailure(NodeFailureRequest{StopCommand: "/usr/local/bin/k3s-killall.sh", Inventory: inv, Node: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	if nf.HostName != "node-a" || nf.HostAddress != "127.0.0.1" {
		t.Errorf("the host the commands run on, for the check against the node: %q %q", nf.HostName, nf.HostAddress)
	}
	if nf.Start != nil || !strings.Contains(nf.StartHint, "k3s-agent") {
		t.Errorf("without a start command the user is told how: %+v", nf)
	}
	if err := nf.Stop(context.Background(), "node-z"); err == nil || !strings.Contains(err.Error(), "node-z") {
		t.Errorf("stop on a node with no inventory host: %v", err)
	}
}
