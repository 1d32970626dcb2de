package ssh

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/safety"
)

// holdScript opens a device on the host with O_EXCL and keeps it open
// (see hold.sh).
//
//go:embed hold.sh
var holdScript string

// holdWait bounds the wait for the host to say the device is held.
const holdWait = 15 * time.Second

// remoteHold is an exclusive open of a device on a host, kept by one
// session: the host's counterpart of safety.Hold. It ends when released,
// or on the host when the connection goes (the wrapper stops it).
type remoteHold struct {
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// holdDevice opens dev on the host exclusively, through client, and
// returns once the host holds it. EBUSY there is the safety owner's
// refusal (safety.BusyRefusal); a host with no way to open it exclusively
// is refused too, with what to install.
func holdDevice(ctx context.Context, client *Client, dev string) (*remoteHold, error) {
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &remoteHold{cancel: cancel, done: make(chan error, 1)}
	pr, pw := io.Pipe()
	var stderr strings.Builder
	var stderrMu sync.Mutex
	go func() {
		err := client.Command(hctx, "sh", "-c", holdScript, "sh", dev).SetStdout(pw).
			SetStderr(writerFunc(func(p []byte) (int, error) {
				stderrMu.Lock()
				defer stderrMu.Unlock()
				return stderr.Write(p)
			})).Run()
		pw.CloseWithError(err)
		h.done <- err
	}()
	held := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(pr).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "held" {
			err = fmt.Errorf("the host said %q", line)
		}
		held <- err
		io.Copy(io.Discard, pr)
	}()
	var err error
	select {
	case err = <-held:
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(holdWait):
		err = fmt.Errorf("the host did not open it within %s", holdWait)
	}
	if err == nil {
		return h, nil
	}
	rerr := h.release()
	var re *execx.RunError
	if errors.As(rerr, &re) {
		stderrMu.Lock()
		said := strings.TrimSpace(stderr.String())
		stderrMu.Unlock()
		switch re.ExitCode {
		case 16:
			return nil, safety.BusyRefusal(dev)
		case 3:
			return nil, fmt.Errorf("%s: %s: install perl or python3 there (apt-get install perl-base): storbench holds a device exclusively while it measures it", client.Name(), said)
		}
		return nil, fmt.Errorf("opening %s exclusively on %s: %s: %w", dev, client.Name(), said, rerr)
	}
	return nil, fmt.Errorf("opening %s exclusively on %s: %w", dev, client.Name(), errors.Join(err, rerr))
}

// release ends the hold and waits until the host let go of the device;
// calling it again returns the first answer.
func (h *remoteHold) release() error {
	h.once.Do(func() {
		h.cancel()
		err := <-h.done
		var re *execx.RunError
		if errors.As(err, &re) && errors.Is(err, context.Canceled) {
			err = nil // stopped as asked
		}
		h.err = err
	})
	return h.err
}
