// Package ssh runs commands on other hosts over SSH, as an execx.Cmder:
// the same fio code that runs on this host runs there.
//
// Connections are set up as OpenSSH users expect: ~/.ssh/config (Host,
// HostName, User, Port, IdentityFile, UserKnownHostsFile), ssh-agent and
// key files, and known_hosts verification that is strict by default: an
// unknown host is refused with its key's fingerprint unless AcceptNew is
// set (then its key is recorded, like StrictHostKeyChecking=accept-new),
// and a changed key is always refused.
//
// A remote command dies with its connection: sshd sends no SIGHUP to a
// command without a pty, so every command runs under a small POSIX sh
// wrapper (wrapper.sh) that stops it when storbench's session is gone.
package ssh

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	sshconfig "github.com/kevinburke/ssh_config"

	"github.com/storbench/storbench/internal/inventory"
)

// ForHost returns the Options that reach an inventory host as Ansible
// would: ansible_host (through ~/.ssh/config like ssh does), ansible_port,
// ansible_user, ansible_ssh_private_key_file, ansible_become (through
// sudo only) with ansible_become_user, and the options of
// ansible_ssh_common_args and ansible_ssh_extra_args that storbench
// supports (see applySSHArgs), which win as they do on ssh's command
// line; messages use the inventory name. A value storbench cannot honour
// is an error naming the host.
func ForHost(h inventory.Host) (Options, error) {
	o := Options{Name: h.Name, Host: h.Address, User: h.User, Port: h.Port}
	if h.KeyFile != "" {
		o.KeyFiles = []string{h.KeyFile}
	}
	if h.Become {
		if m := h.BecomeMethod; m != "" && m != "sudo" {
			return Options{}, fmt.Errorf("host %s: ansible_become_method %s is not supported: storbench becomes another user through sudo only", h.Name, m)
		}
		o.Become, o.BecomeUser = true, h.BecomeUser
	}
	if h.SSHArgs != "" {
		if err := applySSHArgs(&o, h.SSHArgs); err != nil {
			return Options{}, fmt.Errorf("host %s: ansible_ssh_common_args/ansible_ssh_extra_args %q: %w", h.Name, h.SSHArgs, err)
		}
	}
	return o, nil
}

// AcceptNewFlag is the command-line flag that sets Options.AcceptNew; the
// refusal of an unknown host names it.
const AcceptNewFlag = "--ssh-accept-new-host-keys"

// Options say how to reach one host. Empty fields fall back to
// ~/.ssh/config and then to OpenSSH's defaults; set fields win over
// ~/.ssh/config, as ssh's -l, -p and -i do.
type Options struct {
	// Name is how messages name the host (an inventory name); Host when
	// empty.
	Name string
	// Host is the name to connect to: an alias of ~/.ssh/config, a host
	// name or an address.
	Host string
	// User is the remote user (ansible_user; ssh -l).
	User string
	// Port is the TCP port (ansible_port; ssh -p).
	Port int
	// KeyFiles are private keys tried after the agent's keys
	// (ansible_ssh_private_key_file; ssh -i), before those of the config.
	KeyFiles []string
	// ProxyJump overrides the config's ProxyJump: jump hosts, comma
	// separated, as [user@]host[:port]; "none" for none. Each jump host is
	// reached with its own settings from the config.
	ProxyJump string
	// ConfigFile is the ssh_config to read: ~/.ssh/config when empty,
	// none at all when "none" (ssh -F none).
	ConfigFile string
	// KnownHosts are the known_hosts files; new keys are added to the
	// first. Default: UserKnownHostsFile of the config, else
	// ~/.ssh/known_hosts, and /etc/ssh/ssh_known_hosts.
	KnownHosts []string
	// AcceptNew records the key of a host not yet known instead of
	// refusing it. A changed key is refused all the same.
	AcceptNew bool
	// AgentSocket is ssh-agent's socket: $SSH_AUTH_SOCK when empty, no
	// agent when "none".
	AgentSocket string
	// Timeout bounds the TCP connect and the SSH handshake (default 15s).
	Timeout time.Duration
	// KeepAlive is how often an idle connection is probed; a connection
	// that answers no probe for three intervals is closed, and the
	// commands on it fail (default 15s).
	KeepAlive time.Duration
	// Become runs every command through sudo -n on the host
	// (ansible_become), as BecomeUser (root when empty). sudo must not ask
	// for a password: storbench never types one.
	Become     bool
	BecomeUser string
}

// endpoint is where and as whom to connect, with Options and the config
// combined.
type endpoint struct {
	name       string // as the user named the host
	hostName   string
	port       int
	user       string
	keyFiles   []string
	knownHosts []string
	jumps      []jump
}

// jump is one host of ProxyJump.
type jump struct {
	user, host string
	port       int
}

func (j jump) String() string {
	s := j.host
	if j.user != "" {
		s = j.user + "@" + s
	}
	if j.port != 0 {
		s += ":" + strconv.Itoa(j.port)
	}
	return s
}

// parseJumps reads ProxyJump: [user@]host[:port] or
// ssh://[user@]host[:port], comma separated; "none" is no jump.
func parseJumps(v string) ([]jump, error) {
	if v == "" || strings.EqualFold(v, "none") {
		return nil, nil
	}
	var out []jump
	for _, part := range strings.Split(v, ",") {
		s := strings.TrimPrefix(strings.TrimSpace(part), "ssh://")
		var j jump
		if u, h, ok := strings.Cut(s, "@"); ok {
			j.user, s = u, h
		}
		host, port := s, ""
		if strings.HasPrefix(s, "[") {
			end := strings.Index(s, "]")
			if end < 0 {
				return nil, fmt.Errorf("ProxyJump %q: unbalanced brackets", part)
			}
			host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		} else if h, p, ok := strings.Cut(s, ":"); ok {
			host, port = h, p
		}
		if port != "" {
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("ProxyJump %q: %q is not a port number", part, port)
			}
			j.port = n
		}
		if host == "" {
			return nil, fmt.Errorf("ProxyJump %q names no host", part)
		}
		j.host = host
		out = append(out, j)
	}
	return out, nil
}

func (e endpoint) addr() string { return net.JoinHostPort(e.hostName, strconv.Itoa(e.port)) }

// resolve combines o with the ssh config.
func resolve(o Options) (endpoint, error) {
	if o.Host == "" {
		return endpoint{}, fmt.Errorf("no host to connect to")
	}
	home, _ := os.UserHomeDir()
	localUser := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		localUser = u.Username
	}
	cfg, err := loadConfig(o.ConfigFile, home)
	if err != nil {
		return endpoint{}, err
	}
	get := func(key string) string {
		if cfg == nil {
			return ""
		}
		v, _ := cfg.Get(o.Host, key)
		return v
	}
	e := endpoint{name: o.Name, hostName: o.Host, port: 22, user: localUser}
	if e.name == "" {
		e.name = o.Host
	}
	if v := get("HostName"); v != "" {
		e.hostName = strings.ReplaceAll(v, "%h", o.Host)
	}
	if v := get("Port"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 65535 {
			return endpoint{}, fmt.Errorf("%s: Port %q for host %s is not a port number", configName(o.ConfigFile), v, o.Host)
		}
		e.port = p
	}
	if v := get("User"); v != "" {
		e.user = v
	}
	if o.Port != 0 {
		e.port = o.Port
	}
	jumps := o.ProxyJump
	if jumps == "" {
		jumps = get("ProxyJump")
	}
	if e.jumps, err = parseJumps(jumps); err != nil {
		return endpoint{}, fmt.Errorf("%s: %w", e.name, err)
	}
	if pc := get("ProxyCommand"); pc != "" && !strings.EqualFold(pc, "none") && len(e.jumps) == 0 {
		return endpoint{}, fmt.Errorf("%s: ProxyCommand in %s is not supported; use ProxyJump", e.name, configName(o.ConfigFile))
	}
	if o.User != "" {
		e.user = o.User
	}
	expand := func(p string) string {
		p = strings.NewReplacer("%d", home, "%u", localUser, "%h", e.hostName, "%r", e.user, "%p", strconv.Itoa(e.port), "%%", "%").Replace(p)
		if p == "~" {
			return home
		}
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			return filepath.Join(home, rest)
		}
		return p
	}
	for _, k := range o.KeyFiles {
		e.keyFiles = append(e.keyFiles, expand(k))
	}
	var fromConfig []string
	if cfg != nil {
		fromConfig, _ = cfg.GetAll(o.Host, "IdentityFile")
	}
	for _, k := range fromConfig {
		e.keyFiles = append(e.keyFiles, expand(k))
	}
	if len(o.KeyFiles) == 0 && len(fromConfig) == 0 {
		for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			e.keyFiles = append(e.keyFiles, filepath.Join(home, ".ssh", n))
		}
	}
	if len(o.KnownHosts) > 0 {
		for _, k := range o.KnownHosts {
			e.knownHosts = append(e.knownHosts, expand(k))
		}
	} else {
		if v := get("UserKnownHostsFile"); v != "" {
			for _, k := range strings.Fields(v) {
				e.knownHosts = append(e.knownHosts, expand(k))
			}
		} else {
			e.knownHosts = append(e.knownHosts, filepath.Join(home, ".ssh", "known_hosts"))
		}
		e.knownHosts = append(e.knownHosts, "/etc/ssh/ssh_known_hosts")
	}
	return e, nil
}

func configName(file string) string {
	if file == "" {
		return "~/.ssh/config"
	}
	return file
}

// loadConfig reads the ssh config; a missing default file is no config.
func loadConfig(file, home string) (*sshconfig.Config, error) {
	if file == "none" {
		return nil, nil
	}
	path := file
	if path == "" {
		path = filepath.Join(home, ".ssh", "config")
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) && file == "" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ssh config: %w", err)
	}
	defer f.Close()
	cfg, err := sshconfig.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("reading ssh config %s: %w", path, err)
	}
	return cfg, nil
}
