package ssh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/runner"
)

// TargetPrefix marks a target on a host reached over SSH:
// ssh://[user@]host[:port]/path (docs/ssh.md).
const TargetPrefix = "ssh://"

// Kind is the kind of directories and block devices on hosts reached over
// SSH. Its targets are a group (runner.KindGroup): one connection per
// host, however many of its paths are targets, shared by every round of
// the run. Its fields are the request's SSH settings.
type Kind struct {
	// AcceptNew records the key of a host not yet in known_hosts instead
	// of refusing it (StrictHostKeyChecking=accept-new).
	AcceptNew bool
	// Become runs the commands of ssh:// targets through sudo -n as root
	// (inventory hosts follow their own variables: HostSpec).
	Become bool
}

var (
	_ runner.KindGroup  = Kind{}
	_ runner.KindDoctor = Kind{}
)

// Name implements runner.Kind.
func (Kind) Name() string { return "ssh" }

// Parse implements runner.Kind: ssh://[user@]host[:port]/path.
func (k Kind) Parse(target string) (runner.Spec, bool, error) {
	if !strings.HasPrefix(target, TargetPrefix) {
		return nil, false, nil
	}
	o, path, err := ParseTarget(target)
	if err != nil {
		return nil, true, err
	}
	o.Become = k.Become
	return HostSpec{Name: target, Options: o, Path: path}, true, nil
}

// HostSpec is one path on one host: an ssh:// target, or an inventory
// host's path.
type HostSpec struct {
	// Name is how results name the target (ssh://host/path).
	Name    string
	Options Options
	Path    string
}

// String implements runner.Spec.
func (s HostSpec) String() string { return s.Name }

// Describe implements runner.Spec.
func (s HostSpec) Describe() string {
	what := "a directory"
	if strings.HasPrefix(s.Path, "/dev/") {
		what = "a block device"
	}
	return fmt.Sprintf("%s on host %s over SSH, where the host's fio runs: fio's files go in a new work directory there (a device is held exclusively, and written only when destructive names it); one connection per host", what, s.Options.Host)
}

// Target implements runner.Spec: SSH targets are opened with their group.
func (HostSpec) Target(runner.Options) (runner.Target, error) { return nil, runner.ErrGrouped }

// Open implements runner.KindGroup: it connects to every host at once,
// one connection per host however many of its paths are specs, and makes
// their targets; Close ends the connections. A host key storbench may
// not trust is a *runner.RefusedError naming the fingerprint; a host that
// cannot be reached is named in the error. On error every connection
// made is closed.
func (k Kind) Open(ctx context.Context, specs []runner.Spec, o runner.GroupOptions) (*runner.Group, error) {
	hosts, err := hostSpecs(specs)
	if err != nil {
		return nil, err
	}
	clients, errs, closeAll := k.dial(ctx, hosts)
	g := &runner.Group{Close: closeAll}
	read := map[*Client]bool{}
	for i, h := range hosts {
		if errs[i] != nil {
			closeAll()
			return nil, HostError(h.Name, errs[i])
		}
		g.Targets = append(g.Targets, NewTarget(h.Name, clients[i], h.Path, TargetOptions{Destructive: o.Destructive}))
		if o.ReadMemory && !read[clients[i]] {
			read[clients[i]] = true
			g.Memory = append(g.Memory, hostMemory(ctx, clients[i]))
		}
	}
	return g, nil
}

// hostSpecs are specs as this kind's.
func hostSpecs(specs []runner.Spec) ([]HostSpec, error) {
	out := make([]HostSpec, len(specs))
	for i, s := range specs {
		h, ok := s.(HostSpec)
		if !ok {
			return nil, fmt.Errorf("ssh: %s is not an ssh target (%T)", s, s)
		}
		out[i] = h
	}
	return out, nil
}

// HostError names the target a connection failed for; a host key
// storbench may not trust is the request's fault, a *runner.RefusedError.
func HostError(target string, err error) error {
	var unknown *UnknownHostError
	var changed *ChangedHostKeyError
	err = fmt.Errorf("target %s: %w", target, err)
	if errors.As(err, &unknown) || errors.As(err, &changed) {
		return &runner.RefusedError{Err: err}
	}
	return err
}

// hostMemory reads a host's memory (MemTotal) through its connection.
func hostMemory(ctx context.Context, c *Client) runner.Memory {
	m := runner.Memory{Whose: c.Name() + "'s memory"}
	data, err := execx.Output(c.Command(ctx, "cat", "/proc/meminfo"))
	if err != nil {
		m.Err = fmt.Errorf("reading the memory of %s: %w", c.Name(), err)
	} else if m.Bytes = runner.MemTotal(data); m.Bytes <= 0 {
		m.Err = fmt.Errorf("the memory of %s: its /proc/meminfo has no MemTotal", c.Name())
	}
	return m
}

// dial connects to every host at once, one connection per host however
// many of its paths are listed: the client or the error of each host, in
// order, and a close that ends every connection made.
func (k Kind) dial(ctx context.Context, hosts []HostSpec) ([]*Client, []error, func() error) {
	type conn struct {
		opts   Options
		client *Client
		err    error
	}
	conns := map[string]*conn{}
	var keys []string
	connOf := func(h HostSpec) (string, Options) {
		o := h.Options
		o.AcceptNew = o.AcceptNew || k.AcceptNew
		return fmt.Sprintf("%+v", o), o
	}
	for _, h := range hosts {
		if key, o := connOf(h); conns[key] == nil {
			conns[key] = &conn{opts: o}
			keys = append(keys, key)
		}
	}
	var wg sync.WaitGroup
	for _, key := range keys {
		c := conns[key]
		wg.Go(func() { c.client, c.err = Dial(ctx, c.opts) })
	}
	wg.Wait()
	closeAll := func() error {
		var errs []error
		for _, key := range keys {
			if c := conns[key]; c.client != nil {
				errs = append(errs, c.client.Close())
			}
		}
		return errors.Join(errs...)
	}
	clients := make([]*Client, len(hosts))
	errs := make([]error, len(hosts))
	for i, h := range hosts {
		key, _ := connOf(h)
		clients[i], errs[i] = conns[key].client, conns[key].err
	}
	return clients, errs, closeAll
}
