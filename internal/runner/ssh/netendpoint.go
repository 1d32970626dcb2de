package ssh

import (
	"net"

	"github.com/storbench/storbench/internal/runner"
)

// netEndpoint is the host as a node of the network round: the other hosts
// reach its fio at the address storbench itself connected to. A host
// reached only through a jump host may not be reachable from the others
// at that address; its measurements then fail and say so.
func (t *Target) netEndpoint() *runner.NetEndpoint {
	host, _, err := net.SplitHostPort(t.client.Addr())
	if err != nil {
		host = t.client.Addr()
	}
	return &runner.NetEndpoint{Node: t.client.Name(), Address: host, Network: "host", Cmder: t.client}
}
