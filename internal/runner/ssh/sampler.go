package ssh

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/telemetry"
)

// streamScript prints the host's counters once a second in one session
// (see stream.sh).
//
//go:embed stream.sh
var streamScript string

// firstFrameWait bounds the wait for the host's first frame of counters.
const firstFrameWait = 10 * time.Second

// hostStream keeps a copy of a host's /proc and /sys counters on this
// machine, refreshed from one long session that streams them once a
// second (one session, not one a second: each costs the host an sshd fork
// and a login shell). internal/telemetry samples the copy as it samples a
// root, so a reading is at most one interval older than the host's.
type hostStream struct {
	mirror string
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// startStream starts the session and returns once the first frame is
// copied.
func startStream(client *Client) (*hostStream, error) {
	mirror, err := os.MkdirTemp("", "storbench-ssh-telemetry-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &hostStream{mirror: mirror, cancel: cancel, done: make(chan error, 1)}
	pr, pw := io.Pipe()
	first := make(chan error, 1)
	go func() {
		err := client.Command(ctx, "sh", "-c", streamScript, "sh", strconv.Itoa(int(telemetry.DefaultInterval/time.Second))).SetStdout(pw).Run()
		pw.CloseWithError(err)
	}()
	go func() {
		err := s.copyFrames(pr, first)
		pr.CloseWithError(err)
		s.done <- err
	}()
	select {
	case err := <-first:
		if err != nil {
			return nil, errors.Join(err, s.stop())
		}
	case <-time.After(firstFrameWait):
		return nil, errors.Join(fmt.Errorf("no counters from the host in %s", firstFrameWait), s.stop())
	}
	return s, nil
}

// copyFrames writes each frame's files under the mirror, each replaced
// whole so a reader never sees half of one; the first complete frame is
// reported on first.
func (s *hostStream) copyFrames(r io.Reader, first chan<- error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var name string
	var content bytes.Buffer
	flush := func() error {
		if name == "" {
			return nil
		}
		p := filepath.Join(s.mirror, filepath.Clean("/"+name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp := p + ".new"
		if err := os.WriteFile(tmp, content.Bytes(), 0o644); err != nil {
			return err
		}
		name = ""
		return os.Rename(tmp, p)
	}
	told := false
	tell := func(err error) {
		if !told {
			told = true
			first <- err
		}
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "==" || strings.HasPrefix(line, "== ") {
			if err := flush(); err != nil {
				tell(err)
				return err
			}
			if line == "==" {
				tell(nil)
				continue
			}
			name = strings.TrimPrefix(line, "== ")
			content.Reset()
			continue
		}
		content.WriteString(line)
		content.WriteByte('\n')
	}
	err := sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	tell(fmt.Errorf("reading the host's counters: %w", err))
	return err
}

// stop ends the session and removes the copy; calling it again does
// nothing.
func (s *hostStream) stop() error {
	var err error
	s.once.Do(func() {
		s.cancel()
		<-s.done
		err = os.RemoveAll(s.mirror)
	})
	return err
}

// samplerFor makes Prepared.Telemetry for a target with these labels and
// the stop its Cleanup calls. A host whose counters cannot be streamed
// gets no sampler (runner.Prepared allows it): its results carry no
// telemetry.
func samplerFor(client *Client, labels map[string]string) (func() (runner.Sampler, error), func() error) {
	var mu sync.Mutex
	var streams []*hostStream
	start := func() (runner.Sampler, error) {
		s, err := startStream(client)
		if err != nil {
			return nil, fmt.Errorf("streaming the counters of %s: %w", client.Name(), err)
		}
		mu.Lock()
		streams = append(streams, s)
		mu.Unlock()
		return streamSampler{telemetry.New(telemetry.ConfigFor(labels, s.mirror))}, nil
	}
	stop := func() error {
		mu.Lock()
		defer mu.Unlock()
		var errs []error
		for _, s := range streams {
			errs = append(errs, s.stop())
		}
		streams = nil
		return errors.Join(errs...)
	}
	return start, stop
}

// streamSampler offers a telemetry.Sampler of a host's copy as the
// runner's.
type streamSampler struct{ s *telemetry.Sampler }

func (h streamSampler) Start() runner.Recording { return h.s.Start() }
