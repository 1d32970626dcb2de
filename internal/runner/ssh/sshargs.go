package ssh

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// applySSHArgs reads ssh command-line options as Ansible passes them
// (ansible_ssh_common_args, ansible_ssh_extra_args) into o: -p, -l, -i,
// -J, -F and -o Key=Value for the keys storbench honours. Options that
// only tune OpenSSH's own connection (-C, -o ControlMaster, ControlPath,
// ControlPersist, Compression, ServerAliveCountMax) change nothing
// storbench does and are accepted; anything else is refused, so a host is
// never reached other than the inventory says.
func applySSHArgs(o *Options, args string) error {
	words, err := shellWords(args)
	if err != nil {
		return err
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		value := func() (string, error) {
			if len(w) > 2 {
				return w[2:], nil // -p2222
			}
			if i+1 >= len(words) {
				return "", fmt.Errorf("option %s needs a value", w)
			}
			i++
			return words[i], nil
		}
		if !strings.HasPrefix(w, "-") || len(w) < 2 {
			return fmt.Errorf("%q is not an ssh option", w)
		}
		switch w[1] {
		case 'C':
			if w != "-C" {
				return fmt.Errorf("option %s is not supported", w)
			}
		case 'p', 'l', 'i', 'J', 'F', 'o':
			v, err := value()
			if err != nil {
				return err
			}
			if w[1] == 'o' {
				if err := applyOption(o, v); err != nil {
					return err
				}
				continue
			}
			if err := setOption(o, map[byte]string{'p': "Port", 'l': "User", 'i': "IdentityFile", 'J': "ProxyJump", 'F': "F"}[w[1]], v); err != nil {
				return fmt.Errorf("%s %s: %w", w[:2], v, err)
			}
		default:
			return fmt.Errorf("option %s is not supported (storbench reads -p, -l, -i, -J, -F, -C and -o Key=Value)", w)
		}
	}
	return nil
}

// applyOption reads one -o: "Key=Value" or "Key Value".
func applyOption(o *Options, kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		k, v, ok = strings.Cut(strings.TrimSpace(kv), " ")
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" {
		return fmt.Errorf("-o %q: write -o Key=Value", kv)
	}
	if err := setOption(o, k, v); err != nil {
		return fmt.Errorf("-o %s=%s: %w", k, v, err)
	}
	return nil
}

func setOption(o *Options, key, v string) error {
	switch strings.ToLower(key) {
	case "port":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q is not a port number", v)
		}
		o.Port = n
	case "user":
		o.User = v
	case "identityfile":
		o.KeyFiles = append(o.KeyFiles, v)
	case "proxyjump":
		if _, err := parseJumps(v); err != nil {
			return err
		}
		o.ProxyJump = v
	case "f":
		o.ConfigFile = v
	case "userknownhostsfile":
		o.KnownHosts = strings.Fields(v)
	case "stricthostkeychecking":
		switch strings.ToLower(v) {
		case "accept-new":
			o.AcceptNew = true
		case "yes", "ask":
		default:
			return fmt.Errorf("storbench never ignores host keys: use accept-new (or %s) to record new ones", AcceptNewFlag)
		}
	case "connecttimeout":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("%q is not a number of seconds", v)
		}
		o.Timeout = time.Duration(n) * time.Second
	case "serveraliveinterval":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a number of seconds", v)
		}
		if n > 0 {
			o.KeepAlive = time.Duration(n) * time.Second
		}
	case "controlmaster", "controlpath", "controlpersist", "compression", "serveralivecountmax":
		// OpenSSH's connection tuning: storbench keeps one connection
		// per host of its own and counts three missed keepalives.
	case "proxycommand":
		return fmt.Errorf("ProxyCommand is not supported: use ProxyJump (-J)")
	default:
		return fmt.Errorf("option %s is not supported by storbench", key)
	}
	return nil
}

// shellWords splits s as a POSIX shell would split words (Ansible passes
// these variables through shlex): single quotes, double quotes with
// backslash escapes, backslash outside quotes. No expansion.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unbalanced single quote in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unbalanced double quote in %q", s)
			}
			inWord = true
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
