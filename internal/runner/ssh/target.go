package ssh

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ParseTarget reads a target written ssh://[user@]host[:port]/path: the
// Options that reach the host (the rest from ~/.ssh/config) and the path
// there, a directory or a device, always absolute. host may be an alias
// of ~/.ssh/config, a name or an address ([fe80::1] for IPv6).
func ParseTarget(s string) (Options, string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Options{}, "", fmt.Errorf("target %q: %w", s, err)
	}
	if u.Scheme != "ssh" {
		return Options{}, "", fmt.Errorf("target %q is not an ssh:// target", s)
	}
	if u.Opaque != "" || u.Host == "" {
		return Options{}, "", fmt.Errorf("target %q: write ssh://[user@]host[:port]/path", s)
	}
	if _, has := u.User.Password(); has {
		return Options{}, "", fmt.Errorf("target %q: passwords are not accepted; log in with a key (ssh-agent or a key file)", redact(u))
	}
	if u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return Options{}, "", fmt.Errorf("target %q: unexpected ?query or #fragment", s)
	}
	o := Options{Host: u.Hostname(), User: u.User.Username()}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Options{}, "", fmt.Errorf("target %q: %q is not a port number", s, p)
		}
		o.Port = n
	}
	if o.Host == "" {
		return Options{}, "", fmt.Errorf("target %q names no host", s)
	}
	if u.Path == "" || u.Path == "/" {
		return Options{}, "", fmt.Errorf("target %q names no path on the host: write ssh://%s/path/to/dir or ssh://%s/dev/DEVICE", s, u.Host, u.Host)
	}
	return o, u.Path, nil
}

func redact(u *url.URL) string {
	c := *u
	c.User = url.User(u.User.Username())
	return c.String()
}
