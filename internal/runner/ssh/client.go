package ssh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// Client is one SSH connection to a host, and the Cmder of that host.
// It is safe for concurrent use: each command is a session of its own.
type Client struct {
	name string // the host as the user named it
	addr string
	user string
	conn *xssh.Client
	hops []*xssh.Client // jump hosts, first to last
	// become is what runs commands as another user: shell words ending
	// in "--" (sudo -n -u 'root' --), or none.
	become     []string
	becomeUser string

	// opts reach the host again after the connection is lost, to see
	// what its commands left (lost.go); id marks those commands there.
	opts Options
	id   string

	closeOnce sync.Once
	done      chan struct{}
	closeErr  error
	// closed says Close was called: sessions ending then are not a loss.
	closed atomic.Bool

	lostMu     sync.Mutex
	lostCause  error
	settleOnce sync.Once
	settled    *LostError
}

// Name is the host as the user named it (for messages).
func (c *Client) Name() string { return c.name }

// Addr is the address connected to, host:port.
func (c *Client) Addr() string { return c.addr }

// User is the remote user logged in as.
func (c *Client) User() string { return c.user }

// Dial connects and authenticates to the host o names, through the jump
// hosts of ProxyJump when there are any.
func Dial(ctx context.Context, o Options) (*Client, error) {
	ep, err := resolve(o)
	if err != nil {
		return nil, err
	}
	var hops []*xssh.Client
	closeHops := func() {
		for i := len(hops) - 1; i >= 0; i-- {
			hops[i].Close()
		}
	}
	var via *xssh.Client
	for _, j := range ep.jumps {
		// A jump host is reached with its own settings from the config (as
		// ssh -J does: -i and -l are the target's), and without a jump of
		// its own.
		jo := Options{Host: j.host, User: j.user, Port: j.port, ProxyJump: "none", ConfigFile: o.ConfigFile,
			KnownHosts: o.KnownHosts, AcceptNew: o.AcceptNew, AgentSocket: o.AgentSocket, Timeout: o.Timeout}
		jep, err := resolve(jo)
		if err != nil {
			closeHops()
			return nil, fmt.Errorf("%s: jump host %s: %w", ep.name, j, err)
		}
		hop, err := handshake(ctx, jep, jo, via)
		if err != nil {
			closeHops()
			return nil, fmt.Errorf("%s: through jump host %s: %w", ep.name, j, err)
		}
		hops = append(hops, hop)
		via = hop
	}
	conn, err := handshake(ctx, ep, o, via)
	if err != nil {
		closeHops()
		return nil, err
	}
	id, err := newConnID()
	if err != nil {
		conn.Close()
		closeHops()
		return nil, err
	}
	c := &Client{name: ep.name, addr: ep.addr(), user: ep.user, conn: conn, hops: hops, done: make(chan struct{}), opts: o, id: id}
	keepAlive := o.KeepAlive
	if keepAlive <= 0 {
		keepAlive = 15 * time.Second
	}
	go c.keepAlive(keepAlive)
	if o.Become {
		if err := c.setBecome(ctx, o.BecomeUser); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// handshake connects to ep, directly or through via, checks its host key
// and authenticates.
func handshake(ctx context.Context, ep endpoint, o Options, via *xssh.Client) (*xssh.Client, error) {
	hk, err := newHostKeys(ep, o.AcceptNew)
	if err != nil {
		return nil, err
	}
	auth, err := newAuth(ep, o.AgentSocket)
	if err != nil {
		return nil, err
	}
	defer auth.close()
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	cfg := &xssh.ClientConfig{
		User:              ep.user,
		Auth:              []xssh.AuthMethod{xssh.PublicKeysCallback(auth.signers)},
		HostKeyCallback:   hk.callback,
		HostKeyAlgorithms: hk.algorithms,
		Timeout:           timeout,
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var conn net.Conn
	if via != nil {
		conn, err = via.DialContext(dctx, "tcp", ep.addr())
	} else {
		var d net.Dialer
		conn, err = d.DialContext(dctx, "tcp", ep.addr())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: connecting to %s: %w", ep.name, ep.addr(), err)
	}
	// The handshake obeys the connect's deadline and ctx: closing the
	// connection ends it (a tunnelled one has no deadlines).
	stop := context.AfterFunc(dctx, func() { conn.Close() })
	sc, chans, reqs, err := xssh.NewClientConn(conn, ep.addr(), cfg)
	if !stop() {
		if err == nil {
			sc.Close()
		}
		return nil, fmt.Errorf("%s: SSH handshake with %s: %w", ep.name, ep.addr(), dctx.Err())
	}
	if err != nil {
		conn.Close()
		return nil, handshakeError(ep, auth, err)
	}
	return xssh.NewClient(sc, chans, reqs), nil
}

// handshakeError says what failed: the host key (its own error), or
// authentication, with what was tried.
func handshakeError(ep endpoint, a *auth, err error) error {
	var unknown *UnknownHostError
	var changed *ChangedHostKeyError
	if errors.As(err, &unknown) {
		return unknown
	}
	if errors.As(err, &changed) {
		return changed
	}
	if strings.Contains(err.Error(), "unable to authenticate") {
		return fmt.Errorf("%s: authentication as %q refused (tried %s); check the user (ansible_user, or User in ~/.ssh/config) "+
			"and that one of these keys is in ~%s/.ssh/authorized_keys on the host: %w", ep.name, ep.user, a.describe(), ep.user, err)
	}
	return fmt.Errorf("%s: SSH handshake with %s: %w", ep.name, ep.addr(), err)
}

// keepAlive probes the connection; one that stays silent for three
// intervals is closed, so commands on it fail instead of hanging.
func (c *Client) keepAlive(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		reply := make(chan error, 1)
		go func() {
			_, _, err := c.conn.SendRequest("keepalive@openssh.com", true, nil)
			reply <- err
		}()
		select {
		case <-c.done:
			return
		case err := <-reply:
			if err != nil {
				c.lose(fmt.Errorf("keepalive: %w", err))
				return
			}
		case <-time.After(3 * every):
			c.lose(fmt.Errorf("the host answered no keepalive for %s", 3*every))
			return
		}
	}
}

// Close closes the connection; commands still running on it stop (their
// wrapper sees its lifeline break).
func (c *Client) Close() error {
	c.closed.Store(true)
	return c.shut()
}

// shut closes the connection without marking it closed by its user.
func (c *Client) shut() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.closeErr = c.conn.Close()
		for i := len(c.hops) - 1; i >= 0; i-- {
			c.hops[i].Close()
		}
	})
	return c.closeErr
}

// auth offers the agent's keys first, then the key files, as ssh does.
type auth struct {
	agentConn net.Conn
	agentKeys []xssh.Signer
	fileKeys  []xssh.Signer
	files     []string // loaded
	skipped   []string // present but unusable, with why
}

func newAuth(ep endpoint, socket string) (*auth, error) {
	a := &auth{}
	if socket == "" {
		socket = os.Getenv("SSH_AUTH_SOCK")
	}
	if socket != "" && socket != "none" {
		conn, err := net.Dial("unix", socket)
		if err == nil {
			a.agentConn = conn
			keys, err := agent.NewClient(conn).Signers()
			if err != nil {
				a.skipped = append(a.skipped, fmt.Sprintf("ssh-agent at %s (%v)", socket, err))
			}
			a.agentKeys = keys
		} else {
			a.skipped = append(a.skipped, fmt.Sprintf("ssh-agent at %s (%v)", socket, err))
		}
	}
	for _, f := range ep.keyFiles {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			a.skipped = append(a.skipped, fmt.Sprintf("%s (%v)", f, err))
			continue
		}
		s, err := xssh.ParsePrivateKey(data)
		var pm *xssh.PassphraseMissingError
		if errors.As(err, &pm) {
			a.skipped = append(a.skipped, f+" (encrypted: add it to ssh-agent with ssh-add)")
			continue
		}
		if err != nil {
			a.skipped = append(a.skipped, fmt.Sprintf("%s (%v)", f, err))
			continue
		}
		a.fileKeys = append(a.fileKeys, s)
		a.files = append(a.files, f)
	}
	if len(a.agentKeys) == 0 && len(a.fileKeys) == 0 {
		a.close()
		return nil, fmt.Errorf("%s: no SSH key to log in with: %s", ep.name, a.describe())
	}
	return a, nil
}

func (a *auth) signers() ([]xssh.Signer, error) {
	return append(append([]xssh.Signer(nil), a.agentKeys...), a.fileKeys...), nil
}

func (a *auth) describe() string {
	var parts []string
	if a.agentConn != nil {
		parts = append(parts, fmt.Sprintf("%d key(s) of ssh-agent", len(a.agentKeys)))
	} else {
		parts = append(parts, "no ssh-agent (SSH_AUTH_SOCK unset)")
	}
	if len(a.files) > 0 {
		parts = append(parts, "key files "+strings.Join(a.files, ", "))
	} else {
		parts = append(parts, "no key file (give one with ansible_ssh_private_key_file or IdentityFile)")
	}
	if len(a.skipped) > 0 {
		parts = append(parts, "skipped "+strings.Join(a.skipped, ", "))
	}
	return strings.Join(parts, "; ")
}

func (a *auth) close() {
	if a.agentConn != nil {
		a.agentConn.Close()
	}
}

// newConnID is a connection's id on its host: random, so no two
// connections' commands are ever taken for each other's.
func newConnID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making a connection id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
