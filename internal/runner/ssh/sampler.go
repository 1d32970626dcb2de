package ssh

import (
	"errors"
	"fmt"
	"sync"

	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/telemetry"
)

// samplerFor makes Prepared.Telemetry for a target with these labels and
// the stop its Cleanup calls. A host whose counters cannot be streamed
// gets no sampler (runner.Prepared allows it): its results carry no
// telemetry.
func samplerFor(client *Client, labels map[string]string) (func() (runner.Sampler, error), func() error) {
	var mu sync.Mutex
	var streams []*telemetry.Stream
	start := func() (runner.Sampler, error) {
		s, err := telemetry.StartStream(client, "ssh")
		if err != nil {
			return nil, fmt.Errorf("streaming the counters of %s: %w", client.Name(), err)
		}
		mu.Lock()
		streams = append(streams, s)
		mu.Unlock()
		return streamSampler{telemetry.New(telemetry.ConfigFor(labels, s.Root()))}, nil
	}
	stop := func() error {
		mu.Lock()
		defer mu.Unlock()
		var errs []error
		for _, s := range streams {
			errs = append(errs, s.Stop())
		}
		streams = nil
		return errors.Join(errs...)
	}
	return start, stop
}

// streamScript is what the stream runs on the host (tests run it here).
var streamScript = telemetry.StreamScript

// streamSampler offers a telemetry.Sampler of a host's copy as the
// runner's.
type streamSampler struct{ s *telemetry.Sampler }

func (h streamSampler) Start() runner.Recording { return h.s.Start() }
