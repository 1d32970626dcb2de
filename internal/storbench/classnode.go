package storbench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/inventory"
	"github.com/storbench/storbench/internal/runner/ssh"
)

// NodeFailureRequest asks classes --measure for the failover after a node
// failure: the node is stopped by the user's command, run over SSH on a
// host of the fleet's inventory.
type NodeFailureRequest struct {
	// Node is the node to stop, the user's choice; required.
	Node string
	// Inventory is the fleet's Ansible inventory.
	Inventory string
	// Host is the inventory host the commands run on; "" is the host
	// named like the node (an inventory of the cluster's nodes). It must
	// be the node's own host (its name, hostname label or an address).
	Host string
	// StopCommand stops the node, containers and all (on k3s:
	// /usr/local/bin/k3s-killall.sh; systemctl stop k3s-agent leaves the
	// containers running and is refused by the check's verification);
	// StartCommand brings it back ("": the user does, and is told). In
	// both, {node} is replaced by the node's name.
	StopCommand, StartCommand string
	// OutOfService applies node.kubernetes.io/out-of-service once the node
	// is NotReady (and always removes it).
	OutOfService bool
	// AcceptNewHostKeys records the key of a host not yet known.
	AcceptNewHostKeys bool
	// Wait bounds the wait for the writer to run elsewhere; 0: see
	// classcheck.NodeFailure.
	Wait time.Duration
	// StateDir keeps the start command on this machine before the stop,
	// for cleanup --k8s after a killed run; "" is DefaultStateDir().
	StateDir string
}

// NodeFailure turns the request into the check's commands, reading the
// inventory now so that a bad one is refused before anything starts.
func NodeFailure(req NodeFailureRequest) (*classcheck.NodeFailure, error) {
	if req.StopCommand == "" {
		return nil, badRequest("the node-failure check needs the command that stops a node (%s)", FieldNodeStop)
	}
	if req.Node == "" {
		return nil, badRequest("the node-failure check stops the node you choose: set %s (its commands run on that node's own host)", FieldNodeName)
	}
	if req.Inventory == "" {
		return nil, badRequest("the node-failure check runs its commands on a host of an inventory: set %s", FieldNodeInventory)
	}
	inv, err := inventory.Load(req.Inventory)
	if err != nil {
		return nil, refuse(err)
	}
	host := req.Host
	if host == "" {
		host = req.Node
	}
	if _, err := hostOf(inv, host, req); err != nil {
		return nil, err
	}
	hosts, _ := inv.Select(host) // one host: hostOf checked
	run := func(command string) func(ctx context.Context, node string) error {
		return func(ctx context.Context, node string) error {
			o, err := hostOf(inv, req.Host, req, node)
			if err != nil {
				return err
			}
			return runOverSSH(ctx, o, strings.ReplaceAll(command, "{node}", node))
		}
	}
	nf := &classcheck.NodeFailure{Node: req.Node, Stop: run(req.StopCommand), StopCommand: req.StopCommand,
		OutOfService: req.OutOfService, Wait: req.Wait, HostName: hosts[0].Name, HostAddress: hosts[0].Address}
	if req.StartCommand != "" {
		nf.Start = run(req.StartCommand)
		nf.StartRecord = startRecord(req) // cleanup_kube_stopped.go
		dir := stateDir(req.StateDir)
		nf.RecordStop = func(runID, node string) error { return saveStopRecord(dir, runID, node, nf.StartRecord) }
		nf.ForgetStop = func(runID, node string) { dropStopRecord(dir, runID, node) }
	} else {
		nf.StartHint = "start it again yourself (on k3s: sudo systemctl start k3s-agent, or k3s for a server, on the node; after a power-off, power it on), or give --node-start-command"
	}
	return nf, nil
}

// hostOf returns how to reach the inventory host the commands run on:
// host when given, else the host named like node.
func hostOf(inv *inventory.Inventory, host string, req NodeFailureRequest, node ...string) (ssh.Options, error) {
	name := host
	if name == "" && len(node) > 0 {
		name = node[0]
	}
	hosts, err := inv.Select(name)
	if err != nil || len(hosts) != 1 {
		if err == nil {
			err = fmt.Errorf("selects %d hosts, not one", len(hosts))
		}
		return ssh.Options{}, refusef("inventory %s: host %q for the node-failure commands (%s): %w", req.Inventory, name, FieldNodeHost, err)
	}
	o, err := ssh.ForHost(hosts[0])
	if err != nil {
		return ssh.Options{}, refuse(err)
	}
	o.AcceptNew = req.AcceptNewHostKeys
	return o, nil
}

// runOverSSH runs a shell command on the host and waits for it.
func runOverSSH(ctx context.Context, o ssh.Options, command string) error {
	c, err := ssh.Dial(ctx, o)
	if err != nil {
		return err
	}
	defer c.Close()
	var out bytes.Buffer
	if err := c.Command(ctx, "sh", "-c", command).SetStdout(&out).SetStderr(&out).Run(); err != nil {
		return fmt.Errorf("%s on %s: %w: %s", command, c.Name(), err, strings.TrimSpace(out.String()))
	}
	return nil
}
