package telemetry

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

	"github.com/storbench/storbench/internal/execx"
)

// StreamScript prints the host's counters once a second in one session
// (see stream.sh).
//
//go:embed stream.sh
var StreamScript string

// firstFrameWait bounds the wait for the host's first frame of counters.
const firstFrameWait = 10 * time.Second

// Stream keeps a copy of a host's /proc and /sys counters on this
// machine, refreshed from one long command (an SSH session, an exec into a
// pod) that streams them once a second: one command, not one a second,
// since each costs the host a process and, over SSH, a login shell. A
// Sampler samples the copy (Root) as it samples a root, so a reading is at
// most one interval older than the host's.
type Stream struct {
	mirror string
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// StartStream starts the command through c and returns once the first
// frame is copied. kind names the copy's temporary directory
// ("storbench-KIND-telemetry-*"), so each runner finds its own leftovers.
func StartStream(c execx.Cmder, kind string) (*Stream, error) {
	mirror, err := os.MkdirTemp("", "storbench-"+kind+"-telemetry-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Stream{mirror: mirror, cancel: cancel, done: make(chan error, 1)}
	pr, pw := io.Pipe()
	first := make(chan error, 1)
	go func() {
		err := c.Command(ctx, "sh", "-c", StreamScript, "sh", strconv.Itoa(int(DefaultInterval/time.Second))).SetStdout(pw).Run()
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
			return nil, errors.Join(err, s.Stop())
		}
	case <-time.After(firstFrameWait):
		return nil, errors.Join(fmt.Errorf("no counters from the host in %s", firstFrameWait), s.Stop())
	}
	return s, nil
}

// copyFrames writes each frame's files under the mirror, each replaced
// whole so a reader never sees half of one; the first complete frame is
// reported on first.
func (s *Stream) copyFrames(r io.Reader, first chan<- error) error {
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

// Root is the copy: /proc and /sys under it are the host's.
func (s *Stream) Root() string { return s.mirror }

// Stop ends the command and removes the copy; calling it again does
// nothing.
func (s *Stream) Stop() error {
	var err error
	s.once.Do(func() {
		s.cancel()
		<-s.done
		err = os.RemoveAll(s.mirror)
	})
	return err
}
