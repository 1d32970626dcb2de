package storbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/inventory"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/ssh"
)

// SSHTargetPrefix marks a target on a host reached over SSH:
// ssh://[user@]host[:port]/path (docs/ssh.md).
const SSHTargetPrefix = "ssh://"

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

// sshHost is one SSH target to connect: its name in results, how to reach
// the host, and the path there.
type sshHost struct {
	name string
	opts ssh.Options
	path string
	// local is an inventory host with ansible_connection local: this
	// host, measured by the local runner.
	local bool
}

// remoteHosts are the hosts to reach over SSH, without the local ones.
func remoteHosts(hosts []sshHost) []sshHost {
	var out []sshHost
	for _, h := range hosts {
		if !h.local {
			out = append(out, h)
		}
	}
	return out
}

func isSSHTarget(t string) bool { return strings.HasPrefix(t, SSHTargetPrefix) }

// sshHosts reads the request's ssh:// targets and inventory hosts, in that
// order, refusing a target named twice.
func sshHosts(req *RunRequest, seen map[string]bool) ([]sshHost, error) {
	var hosts []sshHost
	for _, t := range req.Targets {
		if !isSSHTarget(t) {
			continue
		}
		o, path, err := ssh.ParseTarget(t)
		if err != nil {
			return nil, refuse(err)
		}
		o.Become = req.SSH.Become
		hosts = append(hosts, sshHost{name: t, opts: o, path: path})
	}
	s := req.SSH
	if s.Inventory == "" {
		if s.Hosts != "" || s.Path != "" {
			return nil, refusef("%s and %s choose hosts of an inventory: set %s", FieldSSHHosts, FieldSSHPath, FieldSSHInventory)
		}
		return hosts, nil
	}
	inv, err := inventory.Load(s.Inventory)
	if err != nil {
		return nil, refuse(err)
	}
	pattern := s.Hosts
	if pattern == "" {
		pattern = "all"
	}
	selected, err := inv.Select(pattern)
	if err != nil {
		return nil, refusef("%s: %w", FieldSSHHosts, err)
	}
	if len(selected) == 0 {
		return nil, refusef("%s %s selects no host of %s", FieldSSHHosts, pattern, s.Inventory)
	}
	for _, h := range selected {
		path := h.Path
		if path == "" {
			path = s.Path
		}
		if path == "" {
			return nil, refusef("host %s of %s has no storbench_path: set it in the inventory or give %s", h.Name, s.Inventory, FieldSSHPath)
		}
		if !strings.HasPrefix(path, "/") {
			return nil, refusef("host %s: path %q is not absolute", h.Name, path)
		}
		switch h.Connection {
		case "", "ssh", "smart", "paramiko", "paramiko_ssh":
		case "local":
			// This host itself: a local target, named by its path as
			// local targets are.
			if seen[path] {
				return nil, refusef("target %s is given twice (%s and host %s of %s)", path, FieldTargets, h.Name, FieldSSHInventory)
			}
			seen[path] = true
			hosts = append(hosts, sshHost{name: path, path: path, local: true})
			continue
		default:
			return nil, refusef("host %s of %s has ansible_connection %s: storbench reaches inventory hosts over SSH, or runs on this host for local", h.Name, s.Inventory, h.Connection)
		}
		name := ssh.TargetName(h.Name, path)
		if seen[name] {
			return nil, refusef("target %s is given twice (%s and %s)", name, FieldTargets, FieldSSHInventory)
		}
		seen[name] = true
		o, err := ssh.ForHost(h)
		if err != nil {
			return nil, refuse(fmt.Errorf("%s: %w", s.Inventory, err))
		}
		hosts = append(hosts, sshHost{name: name, opts: o, path: path})
	}
	return hosts, nil
}

// sshTargets connects to every host at once, one connection per host
// however many of its paths are targets, and returns the targets and a
// close that ends the connections. A host key storbench may not trust is
// the request's fault (*RequestError), naming the fingerprint and the flag;
// a host that cannot be reached is named in the error. On error every
// connection made is closed.
func sshTargets(ctx context.Context, req *RunRequest, hosts []sshHost, readMem bool) ([]runner.Target, []cacheMemory, func() error, error) {
	clients, errs, closeAll := dialHosts(ctx, req.SSH.AcceptNewHostKeys, hosts)
	var targets []runner.Target
	var mems []cacheMemory
	read := map[*ssh.Client]bool{}
	for i, h := range hosts {
		if errs[i] != nil {
			closeAll()
			return nil, nil, nil, hostError(h, errs[i])
		}
		targets = append(targets, wrap(req, ssh.NewTarget(h.name, clients[i], h.path, ssh.TargetOptions{Destructive: req.Destructive})))
		if readMem && !read[clients[i]] {
			read[clients[i]] = true
			mems = append(mems, hostMemory(ctx, clients[i]))
		}
	}
	return targets, mems, closeAll, nil
}

// hostMemory reads a host's memory (MemTotal) through its connection.
func hostMemory(ctx context.Context, c *ssh.Client) cacheMemory {
	m := cacheMemory{whose: c.Name() + "'s memory"}
	data, err := execx.Output(c.Command(ctx, "cat", "/proc/meminfo"))
	if err != nil {
		m.err = fmt.Errorf("reading the memory of %s: %w", c.Name(), err)
	} else if m.bytes = engine.MemTotal(data); m.bytes <= 0 {
		m.err = fmt.Errorf("the memory of %s: its /proc/meminfo has no MemTotal", c.Name())
	}
	return m
}

// hostError names the target a connection failed for; a host key
// storbench may not trust is a *RequestError.
func hostError(h sshHost, err error) error {
	var unknown *ssh.UnknownHostError
	var changed *ssh.ChangedHostKeyError
	if errors.As(err, &unknown) || errors.As(err, &changed) {
		return refuse(fmt.Errorf("target %s: %w", h.name, err))
	}
	return fmt.Errorf("target %s: %w", h.name, err)
}

// dialHosts connects to every host at once, one connection per host
// however many of its paths are listed: the client or the error of each
// host, in order, and a close that ends every connection made.
func dialHosts(ctx context.Context, acceptNew bool, hosts []sshHost) ([]*ssh.Client, []error, func() error) {
	type conn struct {
		opts   ssh.Options
		client *ssh.Client
		err    error
	}
	conns := map[string]*conn{}
	var keys []string
	connOf := func(h sshHost) (string, ssh.Options) {
		o := h.opts
		o.AcceptNew = o.AcceptNew || acceptNew
		return fmt.Sprintf("%+v", o), o
	}
	for _, h := range hosts {
		if key, o := connOf(h); conns[key] == nil {
			conns[key] = &conn{opts: o}
			keys = append(keys, key)
		}
	}
	var wg sync.WaitGroup
	for _, k := range keys {
		c := conns[k]
		wg.Go(func() { c.client, c.err = ssh.Dial(ctx, c.opts) })
	}
	wg.Wait()
	closeAll := func() error {
		var errs []error
		for _, k := range keys {
			if c := conns[k]; c.client != nil {
				errs = append(errs, c.client.Close())
			}
		}
		return errors.Join(errs...)
	}
	clients := make([]*ssh.Client, len(hosts))
	errs := make([]error, len(hosts))
	for i, h := range hosts {
		key, _ := connOf(h)
		clients[i], errs[i] = conns[key].client, conns[key].err
	}
	return clients, errs, closeAll
}
