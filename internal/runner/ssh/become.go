package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

// BecomeError says why sudo on a host would not run storbench's commands
// as another user, and what fixes it.
type BecomeError struct {
	Host   string // as the user named it
	User   string // logged in as
	As     string // the user sudo was asked for
	Reason string // "password", "not allowed", "no sudo" or sudo's own words
	Stderr string
}

func (e *BecomeError) Error() string {
	switch e.Reason {
	case "password":
		return fmt.Sprintf("%s: ansible_become is set but sudo asks %s for a password, and storbench never types passwords "+
			"(ansible_become_password is not used): allow %s to run commands as %s without one, e.g. a drop-in /etc/sudoers.d/storbench "+
			"with the line %q (visudo -f /etc/sudoers.d/storbench), or log in as %s",
			e.Host, e.User, e.User, e.As, e.User+" ALL=("+e.As+") NOPASSWD: ALL", e.As)
	case "not allowed":
		return fmt.Sprintf("%s: ansible_become is set but sudo does not let %s run commands as %s (%s): add a sudoers rule for %s, or log in as %s",
			e.Host, e.User, e.As, e.Stderr, e.User, e.As)
	case "no sudo":
		return fmt.Sprintf("%s: ansible_become is set but the host has no sudo in %s's PATH: install it (Debian and Raspberry Pi OS: apt-get install sudo) or log in as %s",
			e.Host, e.User, e.As)
	}
	return fmt.Sprintf("%s: ansible_become is set but sudo -n -u %s failed for %s: %s", e.Host, e.As, e.User, e.Reason)
}

// becomeProbeTimeout bounds the one command that proves sudo works.
const becomeProbeTimeout = 15 * time.Second

// setBecome makes every later command run through sudo -n as user (root
// when empty), once one command proves sudo does so without asking for a
// password.
func (c *Client) setBecome(ctx context.Context, user string) error {
	if user == "" {
		user = "root"
	}
	words := []string{"sudo", "-n", "-u", quote(user), "--"}
	sess, err := c.conn.NewSession()
	if err != nil {
		return fmt.Errorf("%s: checking sudo: %w", c.name, err)
	}
	defer sess.Close()
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	if err := sess.Start(strings.Join(append(words, "id", "-un"), " ")); err != nil {
		return fmt.Errorf("%s: checking sudo: %w", c.name, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- sess.Wait() }()
	select {
	case err = <-waited:
	case <-ctx.Done():
		return fmt.Errorf("%s: checking sudo: %w", c.name, ctx.Err())
	case <-time.After(becomeProbeTimeout):
		return fmt.Errorf("%s: checking sudo: sudo -n did not answer within %s", c.name, becomeProbeTimeout)
	}
	be := &BecomeError{Host: c.name, User: c.user, As: user, Stderr: strings.TrimSpace(stderr.String())}
	var ee *xssh.ExitError
	switch {
	case err == nil:
		if got := strings.TrimSpace(stdout.String()); !strings.HasSuffix(got, user) {
			// A login shell may print first; the last line is id's.
			be.Reason = fmt.Sprintf("it ran as %q", got)
			return be
		}
		c.become, c.becomeUser = words, user
		return nil
	case errors.As(err, &ee) && ee.ExitStatus() == 127:
		be.Reason = "no sudo"
	case strings.Contains(be.Stderr, "password is required"):
		be.Reason = "password"
	case strings.Contains(be.Stderr, "not in the sudoers"), strings.Contains(be.Stderr, "not allowed to"), strings.Contains(be.Stderr, "may not run sudo"):
		be.Reason = "not allowed"
	case errors.As(err, &ee):
		be.Reason = fmt.Sprintf("exit code %d: %s", ee.ExitStatus(), be.Stderr)
	default:
		return fmt.Errorf("%s: checking sudo: %w", c.name, err)
	}
	return be
}

// Become is the user commands run as through sudo, or "" when they run as
// the login user.
func (c *Client) Become() string { return c.becomeUser }
