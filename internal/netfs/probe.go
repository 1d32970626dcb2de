package netfs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
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
//
// A watch made by WatchGreeting also waits, after each connection opens,
// for the service's first bytes (a Ceph daemon greets every connection
// with its banner before the client says anything): the wait the service
// process itself adds, which its CPU decides and its disk does not.
type RTTWatch struct {
	cancel    context.CancelFunc
	done      chan struct{}
	greet     bool
	samples   map[string][]time.Duration
	greetings map[string][]time.Duration
}

// WatchRTT starts probing addrs, about one round every interval,
// each probe bounded by timeout (a probe that times out counts as
// timeout: the least the round trip was).
//
// The gaps between probes are random (see nextGap): a fixed gap samples a
// periodic wait at the same few phases only. A CPU-capped process runs
// for the first few ms of each 100 ms CFS period and waits out the rest;
// probed every 250 ms, it is seen at just two phases 50 ms apart, and
// their median is the wait at one of them: 7 ms in one run, 112 ms in
// another, for the same 10% cap.
func WatchRTT(addrs []string, interval, timeout time.Duration) *RTTWatch {
	return watch(addrs, interval, timeout, false)
}

// WatchGreeting is WatchRTT for services that speak first: each probe
// also reads the service's first byte, bounded by timeout (a greeting
// that never comes counts as timeout). Greetings gives the waits.
func WatchGreeting(addrs []string, interval, timeout time.Duration) *RTTWatch {
	return watch(addrs, interval, timeout, true)
}

func watch(addrs []string, interval, timeout time.Duration, greet bool) *RTTWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &RTTWatch{cancel: cancel, done: make(chan struct{}), greet: greet,
		samples: map[string][]time.Duration{}, greetings: map[string][]time.Duration{}}
	// Each address has its own prober: one that is slow to answer does
	// not thin the others' samples.
	probes := make([]prober, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		probes[i].addr = a
		wg.Go(func() {
			// The gap runs from each probe's end: a slow probe (a timeout)
			// is not followed by a burst of catching-up ones.
			gaps := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
			for probes[i].probe(ctx, timeout, greet) {
				t := time.NewTimer(nextGap(gaps, interval))
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		})
	}
	go func() {
		defer close(w.done)
		wg.Wait()
		for _, p := range probes {
			if len(p.rtts) > 0 {
				w.samples[p.addr] = append(w.samples[p.addr], p.rtts...)
			}
			if len(p.greetings) > 0 {
				w.greetings[p.addr] = append(w.greetings[p.addr], p.greetings...)
			}
		}
	}()
	return w
}

// nextGap is the wait before the next probe: uniform between half and
// one and a half intervals, so the probes' phases against any periodic
// wait are spread evenly and the median of the waits seen is the median
// of the wait itself (random sampling sees time averages), while probes
// still come once an interval on average.
func nextGap(r *rand.Rand, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	return interval/2 + time.Duration(r.Int64N(int64(interval)))
}

// prober is one address's samples.
type prober struct {
	addr            string
	rtts, greetings []time.Duration
}

// probe measures one connection to the address (and its greeting); false
// when the watch was stopped meanwhile.
func (p *prober) probe(ctx context.Context, timeout time.Duration, greet bool) bool {
	var d net.Dialer
	cctx, ccancel := context.WithTimeout(ctx, timeout)
	defer ccancel()
	t0 := time.Now()
	c, err := d.DialContext(cctx, "tcp", p.addr)
	rtt := time.Since(t0)
	switch {
	case ctx.Err() != nil:
		if err == nil {
			_ = c.Close()
		}
		return false
	case err == nil:
		p.rtts = append(p.rtts, rtt)
	case isTimeout(err):
		p.rtts = append(p.rtts, timeout)
		return true
	default:
		return true
	}
	defer c.Close()
	if !greet {
		return true
	}
	t1 := time.Now()
	_ = c.SetReadDeadline(t1.Add(timeout))
	// Stop does not wait out a greeting that is slow to come.
	unblock := context.AfterFunc(ctx, func() { _ = c.SetReadDeadline(time.Now()) })
	defer unblock()
	buf := make([]byte, 1)
	_, err = c.Read(buf)
	wait := time.Since(t1)
	switch {
	case ctx.Err() != nil:
		return false
	case err == nil:
		p.greetings = append(p.greetings, wait)
	case isTimeout(err):
		p.greetings = append(p.greetings, timeout)
	}
	return true
}

// Stop ends the watch and returns each address's median round trip (no
// entry for an address no probe reached).
func (w *RTTWatch) Stop() map[string]time.Duration {
	w.cancel()
	<-w.done
	return medians(w.samples)
}

// Greetings is, once Stop returned, each address's upper quartile wait
// for the service's first byte (WatchGreeting; no entry for an address
// that never answered nor timed out, and none at all for WatchRTT).
//
// The upper quartile, not the median: a process short of CPU keeps a
// connection waiting only while it is throttled, part of each CFS
// period, so as few as half its greetings may be late. An OSD capped at
// 10% of a core greeted with a median of 16.2 ms in one of eight runs
// here (half its greetings came at once) and 38-59 ms in the others, an
// upper quartile of 63-139 ms in the seven whose every wait was logged;
// healthy OSDs under the same workload, 0.2-9 ms.
func (w *RTTWatch) Greetings() map[string]time.Duration {
	<-w.done
	return upperQuartiles(w.greetings)
}

func medians(samples map[string][]time.Duration) map[string]time.Duration {
	out := map[string]time.Duration{}
	for a, s := range samples {
		s = slices.Clone(s)
		slices.Sort(s)
		out[a] = s[len(s)/2]
	}
	return out
}

// upperQuartiles is each address's upper quartile: by nearest rank, the
// smallest sample with at least three quarters of them at or under it.
func upperQuartiles(samples map[string][]time.Duration) map[string]time.Duration {
	out := map[string]time.Duration{}
	for a, s := range samples {
		s = slices.Clone(s)
		slices.Sort(s)
		out[a] = s[(3*len(s)+3)/4-1]
	}
	return out
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
