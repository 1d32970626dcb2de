package storbench

import (
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/inventory"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/ssh"
)

// SSHTargetPrefix marks a target on a host reached over SSH:
// ssh://[user@]host[:port]/path (docs/ssh.md; the ssh kind's).
const SSHTargetPrefix = ssh.TargetPrefix

// SSHRequest says how hosts are reached over SSH, and which hosts of an
// Ansible inventory to add as targets.
type SSHRequest struct {
	// AcceptNewHostKeys records the key of a host not yet in known_hosts
	// instead of refusing it (StrictHostKeyChecking=accept-new). A changed
	// key is refused all the same.
	AcceptNewHostKeys bool
	// Become runs the commands of ssh:// targets through sudo -n as root,
	// as ansible_become does for inventory hosts (which follow their own
	// inventory variables).
	Become bool
	// Inventory is an Ansible inventory (INI or YAML); its hosts that Hosts
	// selects become targets, each at its storbench_path or else Path.
	Inventory string
	Hosts     string // an Ansible host pattern; "" is all
	Path      string
}

// inventoryHosts reads the hosts of the request's inventory that SSH.Hosts
// selects: the specs of those reached over SSH (ssh.HostSpec) and the
// paths of those with ansible_connection local (this host), refusing a
// target named twice.
func inventoryHosts(req *RunRequest, seen map[string]bool) (hosts []runner.Spec, local []string, err error) {
	s := req.SSH
	if s.Inventory == "" {
		if s.Hosts != "" || s.Path != "" {
			return nil, nil, refusef("%s and %s choose hosts of an inventory: set %s", FieldSSHHosts, FieldSSHPath, FieldSSHInventory)
		}
		return nil, nil, nil
	}
	inv, err := inventory.Load(s.Inventory)
	if err != nil {
		return nil, nil, refuse(err)
	}
	pattern := s.Hosts
	if pattern == "" {
		pattern = "all"
	}
	selected, err := inv.Select(pattern)
	if err != nil {
		return nil, nil, refusef("%s: %w", FieldSSHHosts, err)
	}
	if len(selected) == 0 {
		return nil, nil, refusef("%s %s selects no host of %s", FieldSSHHosts, pattern, s.Inventory)
	}
	for _, h := range selected {
		path := h.Path
		if path == "" {
			path = s.Path
		}
		if path == "" {
			return nil, nil, refusef("host %s of %s has no storbench_path: set it in the inventory or give %s", h.Name, s.Inventory, FieldSSHPath)
		}
		if !strings.HasPrefix(path, "/") {
			return nil, nil, refusef("host %s: path %q is not absolute", h.Name, path)
		}
		switch h.Connection {
		case "", "ssh", "smart", "paramiko", "paramiko_ssh":
		case "local":
			// This host itself: a local target, named by its path as
			// local targets are.
			if seen[path] {
				return nil, nil, refusef("target %s is given twice (%s and host %s of %s)", path, FieldTargets, h.Name, FieldSSHInventory)
			}
			seen[path] = true
			local = append(local, path)
			continue
		default:
			return nil, nil, refusef("host %s of %s has ansible_connection %s: storbench reaches inventory hosts over SSH, or runs on this host for local", h.Name, s.Inventory, h.Connection)
		}
		name := ssh.TargetName(h.Name, path)
		if seen[name] {
			return nil, nil, refusef("target %s is given twice (%s and %s)", name, FieldTargets, FieldSSHInventory)
		}
		seen[name] = true
		o, err := ssh.ForHost(h)
		if err != nil {
			return nil, nil, refuse(fmt.Errorf("%s: %w", s.Inventory, err))
		}
		hosts = append(hosts, ssh.HostSpec{Name: name, Options: o, Path: path})
	}
	return hosts, local, nil
}
