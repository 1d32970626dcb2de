package ssh

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/execx"
)

// stoppedScript lists (and may stop) what one connection's commands left
// on the host (see stopped.sh).
//
//go:embed stopped.sh
var stoppedScript string

// connEnv is the variable every wrapper of a connection carries, with the
// connection's id: what the connection started on the host is found by it
// after the connection is gone.
const connEnv = "STORBENCH_SSH_CONN"

const (
	// lostPoll is how often the host is asked whether the lost
	// connection's commands are gone.
	lostPoll = 250 * time.Millisecond
	// lostNudge is how long the wrappers get to notice the loss by
	// themselves before they are told to stop (a host that fell silent
	// keeps its side of the connection open for a long time).
	lostNudge = 2 * time.Second
	// lostBound bounds the wait for the commands to be gone once told.
	lostBound = stopBackstop
)

// LostError says the connection to a host was lost, and what storbench
// found on the host afterwards through a new connection: nothing of its
// commands left running, or the processes still stopping, or why it could
// not look. It matches ErrConnectionLost.
type LostError struct {
	Host string
	// Cause is how the loss showed (a session that ended without an exit
	// status, a keepalive left unanswered).
	Cause error
	// Checked says the host was reached again and looked at.
	Checked bool
	// Stopping are the processes still there when the wait ended, "PID
	// COMM (in DIR)".
	Stopping []string
	// CheckErr is why the host could not be looked at.
	CheckErr error
}

func (e *LostError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v", ErrConnectionLost, e.Cause)
	switch {
	case e.CheckErr != nil:
		fmt.Fprintf(&b, "; whether its commands stopped on %s is unknown (%v): look there for fio before running on it again", e.Host, e.CheckErr)
	case len(e.Stopping) > 0:
		fmt.Fprintf(&b, "; still stopping on %s after %s: %s", e.Host, lostNudge+lostBound, strings.Join(e.Stopping, ", "))
	case e.Checked:
		fmt.Fprintf(&b, "; nothing of its commands runs on %s any more (checked over a new connection)", e.Host)
	}
	return b.String()
}

func (e *LostError) Unwrap() []error { return []error{ErrConnectionLost, e.Cause, e.CheckErr} }

// lose marks the connection lost for good: no command starts on it any
// more. The first cause is kept.
func (c *Client) lose(cause error) {
	c.lostMu.Lock()
	if c.lostCause == nil {
		c.lostCause = cause
	}
	c.lostMu.Unlock()
	c.shut()
}

// lost is why the connection was lost, or nil.
func (c *Client) lost() error {
	c.lostMu.Lock()
	defer c.lostMu.Unlock()
	return c.lostCause
}

// afterLoss marks the connection lost and waits, once for every command
// that ran on it, until what its commands started on the host is gone:
// it connects again (with the same options, so through the same sudo),
// lets the wrappers notice the loss, then tells those still there to
// stop, and waits within lostBound. It never starts a command there but
// that look.
func (c *Client) afterLoss(cause error) *LostError {
	c.lose(cause)
	c.settleOnce.Do(func() {
		c.settled = &LostError{Host: c.name, Cause: c.lost()}
		c.settled.Checked, c.settled.Stopping, c.settled.CheckErr = c.lookAfterLoss()
	})
	return c.settled
}

// lookAfterLoss waits on a new connection for the lost one's processes to
// be gone.
func (c *Client) lookAfterLoss() (checked bool, stopping []string, err error) {
	o := c.opts
	o.KeepAlive = 0
	ctx, cancel := context.WithTimeout(context.Background(), lostNudge+lostBound+dialBound(o, len(c.hops)))
	defer cancel()
	look, err := Dial(ctx, o)
	if err != nil {
		return false, nil, fmt.Errorf("connecting again: %w", err)
	}
	defer look.Close()
	nudged := time.Now().Add(lostNudge)
	deadline := nudged.Add(lostBound)
	for {
		mode := ""
		if !time.Now().Before(nudged) {
			mode = "term"
			nudged = deadline // once
		}
		out, err := execx.Output(look.Command(ctx, "sh", "-c", stoppedScript, "sh", c.id, mode))
		if err != nil {
			return false, nil, fmt.Errorf("listing what the lost connection's commands left: %w", err)
		}
		stopping = stopping[:0]
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.SplitN(l, " ", 3); len(f) == 3 {
				stopping = append(stopping, fmt.Sprintf("%s %s (in %s)", f[0], f[1], f[2]))
			}
		}
		if len(stopping) == 0 || time.Now().After(deadline) {
			return true, stopping, nil
		}
		select {
		case <-ctx.Done():
			return true, stopping, nil
		case <-time.After(lostPoll):
		}
	}
}

// dialBound is how long Dial may take for o, through hops jump hosts.
func dialBound(o Options, hops int) time.Duration {
	t := o.Timeout
	if t <= 0 {
		t = 15 * time.Second
	}
	return t * time.Duration(1+hops)
}

// errLostBefore is the refusal of a command on a connection already lost.
func errLostBefore(host string, cause error) error {
	return fmt.Errorf("on %s: %w earlier (%w): no new command starts on it", host, ErrConnectionLost, cause)
}
