package ssh

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// UnknownHostError refuses a host whose key is in no known_hosts file.
type UnknownHostError struct {
	Host        string // as the user named it
	Addr        string // host:port connected to
	KeyType     string
	Fingerprint string // SHA256:...
	KnownHosts  string // the file AcceptNew would add the key to
}

func (e *UnknownHostError) Error() string {
	return fmt.Sprintf("%s: host key not known: %s offers %s key %s, which is not in %s; "+
		"check it against the host's own key (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on %s), then accept it with %s "+
		"(like ssh -o StrictHostKeyChecking=accept-new) or add it with ssh-keyscan",
		e.Host, e.Addr, e.KeyType, e.Fingerprint, e.KnownHosts, e.Host, AcceptNewFlag)
}

// ChangedHostKeyError refuses a host whose key differs from the one on
// record. It is never accepted automatically.
type ChangedHostKeyError struct {
	Host        string
	Addr        string
	KeyType     string
	Fingerprint string
	Known       []knownhosts.KnownKey
}

func (e *ChangedHostKeyError) Error() string {
	var where []string
	for _, k := range e.Known {
		where = append(where, fmt.Sprintf("%s:%d (%s %s)", k.Filename, k.Line, k.Key.Type(), xssh.FingerprintSHA256(k.Key)))
	}
	return fmt.Sprintf("%s: HOST KEY CHANGED: %s offers %s key %s, but known_hosts records another key for it at %s; "+
		"refusing to connect: someone may be intercepting the connection. If the host was reinstalled, "+
		"remove the old key with ssh-keygen -R %s and connect again",
		e.Host, e.Addr, e.KeyType, e.Fingerprint, strings.Join(where, ", "), knownhosts.Normalize(e.Addr))
}

// appendMu serializes additions to known_hosts files within storbench
// (connections to several hosts are set up at once).
var appendMu sync.Mutex

// hostKeys verifies host keys for one endpoint.
type hostKeys struct {
	ep        endpoint
	acceptNew bool
	check     xssh.HostKeyCallback
	// algorithms are the key types known_hosts holds for the host, so the
	// server is asked for a key that can be checked.
	algorithms []string
}

func newHostKeys(ep endpoint, acceptNew bool) (*hostKeys, error) {
	var files []string
	for _, f := range ep.knownHosts {
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		} else if !os.IsNotExist(err) {
			return nil, fmt.Errorf("%s: reading known hosts: %w", ep.name, err)
		}
	}
	check, err := knownhosts.New(files...)
	if err != nil {
		return nil, fmt.Errorf("%s: reading known hosts: %w", ep.name, err)
	}
	hk := &hostKeys{ep: ep, acceptNew: acceptNew, check: check}
	hk.algorithms = knownAlgorithms(check, ep.addr())
	return hk, nil
}

// knownAlgorithms asks the known_hosts callback which keys it holds for
// addr, by offering it a key it cannot know.
func knownAlgorithms(check xssh.HostKeyCallback, addr string) []string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	probe, err := xssh.NewPublicKey(pub)
	if err != nil {
		return nil
	}
	var ke *knownhosts.KeyError
	if !errors.As(check(addr, &net.TCPAddr{IP: net.IPv4zero}, probe), &ke) {
		return nil
	}
	var algs []string
	add := func(a ...string) {
		for _, x := range a {
			if !slices.Contains(algs, x) {
				algs = append(algs, x)
			}
		}
	}
	for _, k := range ke.Want {
		switch t := k.Key.Type(); t {
		case xssh.KeyAlgoRSA:
			add(xssh.KeyAlgoRSASHA512, xssh.KeyAlgoRSASHA256, xssh.KeyAlgoRSA)
		default:
			add(t)
		}
	}
	return algs
}

// callback is the HostKeyCallback for the handshake.
func (hk *hostKeys) callback(hostname string, remote net.Addr, key xssh.PublicKey) error {
	err := hk.check(hostname, remote, key)
	if err == nil {
		return nil
	}
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("%s: host key %s is marked @revoked in %s:%d; refusing to connect", hk.ep.name, xssh.FingerprintSHA256(key), re.Revoked.Filename, re.Revoked.Line)
	case errors.As(err, &ke) && len(ke.Want) > 0:
		return &ChangedHostKeyError{Host: hk.ep.name, Addr: hostname, KeyType: key.Type(), Fingerprint: xssh.FingerprintSHA256(key), Known: ke.Want}
	case errors.As(err, &ke):
		file := ""
		if len(hk.ep.knownHosts) > 0 {
			file = hk.ep.knownHosts[0]
		}
		if !hk.acceptNew {
			return &UnknownHostError{Host: hk.ep.name, Addr: hostname, KeyType: key.Type(), Fingerprint: xssh.FingerprintSHA256(key), KnownHosts: file}
		}
		if file == "" {
			return fmt.Errorf("%s: no known_hosts file to record the new host key in", hk.ep.name)
		}
		return addKnownHost(file, hostname, key)
	}
	return fmt.Errorf("%s: checking the host key: %w", hk.ep.name, err)
}

func endsInNewline(file string) bool {
	f, err := os.Open(file)
	if err != nil {
		return true
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return true
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, st.Size()-1); err != nil {
		return true
	}
	return b[0] == '\n'
}

// addKnownHost appends a known_hosts line for addr, creating the file
// (and its directory) private to the user as ssh does.
func addKnownHost(file, addr string, key xssh.PublicKey) error {
	appendMu.Lock()
	defer appendMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("recording the host key of %s: %w", addr, err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("recording the host key of %s: %w", addr, err)
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(addr)}, key) + "\n"
	if st, err := f.Stat(); err == nil && st.Size() > 0 && !endsInNewline(file) {
		line = "\n" + line
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("recording the host key of %s in %s: %w", addr, file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("recording the host key of %s in %s: %w", addr, file, err)
	}
	return nil
}
