package netfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Probe measures the round trip to a server's service port: the median
// of n TCP connection set-ups (SYN to SYN-ACK; the connection is closed
// at once), each bounded by timeout.
func Probe(ctx context.Context, s Server, n int, timeout time.Duration) (time.Duration, error) {
	var d net.Dialer
	var rtts []time.Duration
	for range max(n, 1) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		t0 := time.Now()
		c, err := d.DialContext(cctx, "tcp", s.Addr())
		rtt := time.Since(t0)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("round trip to %s: %w", s.Addr(), err)
		}
		if err := c.Close(); err != nil {
			return 0, fmt.Errorf("round trip to %s: closing: %w", s.Addr(), err)
		}
		rtts = append(rtts, rtt)
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], nil
}

// RoundTrip is one server's measured round trip, or why it was not.
type RoundTrip struct {
	Server Server
	RTT    time.Duration
	Err    error
}

// ProbeAll probes every server of m, one after the other.
func ProbeAll(ctx context.Context, m Mount, n int, timeout time.Duration) []RoundTrip {
	var out []RoundTrip
	for _, s := range m.Servers {
		rtt, err := Probe(ctx, s, n, timeout)
		out = append(out, RoundTrip{Server: s, RTT: rtt, Err: err})
	}
	return out
}

// Labels are the result labels m and its measured round trips give a
// target: the replication model and count, the servers, their round
// trips, and what is known of the link to them.
func (m Mount) Labels(rtts []RoundTrip) map[string]string {
	l := map[string]string{}
	result.LabelReplicationModel.Set(l, m.Model)
	if m.Replicas > 0 {
		result.LabelReplicas.Set(l, strconv.Itoa(m.Replicas))
		result.LabelReplicasSource.Set(l, m.ReplicasSource)
	}
	var addrs, words []string
	for _, s := range m.Servers {
		addrs = append(addrs, s.Addr())
	}
	if len(m.Servers) > 0 {
		result.LabelVolumeServer.Set(l, m.Servers[0].Host)
		result.LabelVolumeServers.Set(l, strings.Join(addrs, ","))
	}
	for _, r := range rtts {
		if r.Err != nil {
			words = append(words, fmt.Sprintf("%s unreachable (%v)", r.Server.Addr(), r.Err))
			continue
		}
		words = append(words, fmt.Sprintf("%s %.2f ms", r.Server.Addr(), float64(r.RTT)/1e6))
	}
	if len(words) > 0 {
		result.LabelServerRTT.Set(l, strings.Join(words, ", "))
	}
	if len(m.Servers) > 0 {
		result.LabelServerLink.Set(l, serverLinkWords(m))
	}
	return l
}

// serverLinkWords: the servers' side of the link is not measured from a
// mount alone; say so and how to measure it.
func serverLinkWords(m Mount) string {
	host := m.Servers[0].Host
	w := "unmeasured on the servers' side: the ceiling is this host's NIC; measure the path with iperf3 (`iperf3 -s` on " + host + ", `iperf3 -c " + host + "` here)"
	if m.Model == result.ReplicationClient && m.Replicas > 1 {
		w += fmt.Sprintf("; this client sends every write %d times, so it gets at most 1/%d of its link", m.Replicas, m.Replicas)
	}
	return w
}

// RTTWatch probes the round trip to a set of addresses (HOST:PORT) again
// and again while a workload runs: a server whose link the workload fills
// answers late (its SYN waits behind the data), while a server whose disk
// or CPU is slow still answers at once (the kernel answers, not the
// service). Stop ends it and gives each address's median.
type RTTWatch struct {
	cancel  context.CancelFunc
	done    chan struct{}
	samples map[string][]time.Duration
}

// WatchRTT starts probing addrs, one round every interval, each probe
// bounded by timeout (a probe that times out counts as timeout: the
// least the round trip was).
func WatchRTT(addrs []string, interval, timeout time.Duration) *RTTWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &RTTWatch{cancel: cancel, done: make(chan struct{}), samples: map[string][]time.Duration{}}
	go func() {
		defer close(w.done)
		var d net.Dialer
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			for _, a := range addrs {
				cctx, ccancel := context.WithTimeout(ctx, timeout)
				t0 := time.Now()
				c, err := d.DialContext(cctx, "tcp", a)
				rtt := time.Since(t0)
				ccancel()
				switch {
				case ctx.Err() != nil:
					return
				case err == nil:
					_ = c.Close()
					w.samples[a] = append(w.samples[a], rtt)
				case isTimeout(err):
					w.samples[a] = append(w.samples[a], timeout)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// Stop ends the watch and returns each address's median round trip (no
// entry for an address no probe reached).
func (w *RTTWatch) Stop() map[string]time.Duration {
	w.cancel()
	<-w.done
	out := map[string]time.Duration{}
	for a, s := range w.samples {
		s = slices.Clone(s)
		slices.Sort(s)
		out[a] = s[len(s)/2]
	}
	return out
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
