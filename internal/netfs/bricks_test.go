package netfs

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"
)

// TestReadBricks reads a real client's files (captured from a replica-3
// volume's FUSE mount on this machine, testdata/): brick 2 after a 8 MiB
// direct write, brick 1 after its brick process was killed, brick 0 with
// an empty profile (just read).
func TestReadBricks(t *testing.T) {
	files := map[string]string{
		"/m/.meta/graphs/active/volfile":                "replica3.vol",
		"/m/.meta/graphs/active/sbvol-client-2/profile": "gluster-client-profile.txt",
		"/m/.meta/graphs/active/sbvol-client-2/private": "gluster-client-private.txt",
		"/m/.meta/graphs/active/sbvol-client-1/profile": "",
		"/m/.meta/graphs/active/sbvol-client-1/private": "gluster-client-private-down.txt",
		"/m/.meta/graphs/active/sbvol-client-0/profile": "",
		"/m/.meta/graphs/active/sbvol-client-0/private": "gluster-client-private.txt",
	}
	read := func(p string) ([]byte, error) {
		f, ok := files[p]
		if !ok {
			return nil, errors.New("no such file: " + p)
		}
		if f == "" {
			return []byte("[sbvol-client-N.latency]\n"), nil
		}
		return os.ReadFile(filepath.Join("testdata", f))
	}
	bs, err := ReadBricks(read, "/m")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 {
		t.Fatalf("%d bricks", len(bs))
	}
	b2 := bs[2]
	w := b2.Ops["WRITE"]
	if b2.Host != "10.97.2.4" || b2.Brick != "/tmp/glt1/n3/brick" || !b2.Connected || w.Count != 64 || w.Total != 121472107 ||
		w.Mean() != 1898001*time.Nanosecond || b2.BytesWritten <= 8<<20 {
		t.Errorf("brick 2: %+v, write %+v mean %v", b2, w, w.Mean())
	}
	if bs[1].Connected || !bs[0].Connected || len(bs[0].Ops) != 0 {
		t.Errorf("brick 1 connected %v (killed), brick 0 %v with ops %v", bs[1].Connected, bs[0].Connected, bs[0].Ops)
	}
	delete(files, "/m/.meta/graphs/active/sbvol-client-0/private")
	if _, err := ReadBricks(read, "/m"); err == nil || !strings.Contains(err.Error(), "brick 10.97.2.2:/tmp/glt1/n1/brick") {
		t.Errorf("a brick's missing state: %v", err)
	}
}

// TestParseProfileRefuses: malformed lines and oversized files are
// refused, naming the line.
func TestParseProfileRefuses(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"[x.latency]\nx.latency.WRITE = AVG:1 CNT:two TOTAL:3\n", "line 2: count"},
		{"garbage\n", "line 1"},
		{strings.Repeat("x", maxMetaFileLen+1), "more than a profile holds"},
	} {
		if _, err := ParseProfile([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.30q: %v, want %q", tt.in, err, tt.want)
		}
	}
	if _, _, _, err := ParsePrivate([]byte("total_bytes_read = 3\n")); err == nil {
		t.Error("a state without its connection was accepted")
	}
}

// TestWatchRTT: a listener on 127.0.0.1 answers (a median is kept), a
// closed port refuses (no entry).
func TestWatchRTT(t *testing.T) {
	testenv.Measures(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	w := WatchRTT([]string{ln.Addr().String(), closedAddr}, 20*time.Millisecond, 200*time.Millisecond)
	time.Sleep(150 * time.Millisecond)
	got := w.Stop()
	ln.Close()
	if rtt, ok := got[ln.Addr().String()]; !ok || rtt <= 0 || rtt > 100*time.Millisecond {
		t.Errorf("listener: %v (%v)", rtt, ok)
	}
	if _, ok := got[closedAddr]; ok {
		t.Errorf("a refused port has a round trip: %v", got)
	}
}

// TestWatchGreeting: a service that greets at once and one that greets
// 60 ms late (a process short of CPU) have the same round trip and
// greetings that far apart; one late on two connections in five (a
// process throttled part of each CFS period) is named late too, by the
// upper quartile its median would hide; one that never greets counts the
// timeout, and Stop does not wait it out.
func TestWatchGreeting(t *testing.T) {
	testenv.Measures(t)
	serve := func(delay time.Duration, greet bool) string {
		return serveEvery(t, func(int) time.Duration { return delay }, greet)
	}
	prompt, late, mute := serve(0, true), serve(60*time.Millisecond, true), serve(0, false)
	sometimes := serveEvery(t, func(i int) time.Duration {
		if i%5 < 2 {
			return 60 * time.Millisecond
		}
		return 0
	}, true)
	timeout := time.Second
	w := WatchGreeting([]string{prompt, late, sometimes, mute}, 20*time.Millisecond, timeout)
	time.Sleep(1500 * time.Millisecond)
	t0 := time.Now()
	rtts := w.Stop()
	if d := time.Since(t0); d > timeout/2 {
		t.Errorf("Stop took %v: it waited out a greeting", d)
	}
	g := w.Greetings()
	for _, a := range []string{prompt, late, sometimes, mute} {
		if rtts[a] <= 0 || rtts[a] > 50*time.Millisecond {
			t.Errorf("%s: round trip %v", a, rtts[a])
		}
	}
	if g[prompt] > 50*time.Millisecond {
		t.Errorf("prompt greeting %v", g[prompt])
	}
	for _, a := range []string{late, sometimes} {
		if g[a] < 60*time.Millisecond || g[a] >= timeout {
			t.Errorf("%s: late greeting %v, want about 60 ms", a, g[a])
		}
	}
	if g[mute] != timeout {
		t.Errorf("mute service: %v, want the timeout %v", g[mute], timeout)
	}
	if plain := WatchRTT([]string{prompt}, 20*time.Millisecond, timeout); len(func() map[string]time.Duration { plain.Stop(); return plain.Greetings() }()) != 0 {
		t.Error("WatchRTT read greetings")
	}
}

// serveEvery listens on 127.0.0.1 and answers the i-th connection (from
// 0) after delay(i) with a banner, or never when greet is false.
func serveEvery(t *testing.T, delay func(int) time.Duration, greet bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				time.Sleep(delay(i))
				if greet {
					c.Write([]byte("ceph v2\n"))
					return
				}
				time.Sleep(3 * time.Second)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestUpperQuartiles: by nearest rank, from one sample to many.
func TestUpperQuartiles(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var out []time.Duration
		for _, x := range xs {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	got := upperQuartiles(map[string][]time.Duration{
		"one": ms(7), "four": ms(4, 1, 3, 2), "five": ms(5, 1, 4, 2, 3), "half late": ms(60, 0, 60, 0, 0, 60, 0, 60, 0, 0),
	})
	want := map[string]time.Duration{"one": 7 * time.Millisecond, "four": 3 * time.Millisecond, "five": 4 * time.Millisecond, "half late": 60 * time.Millisecond}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: upper quartile %v, want %v", k, got[k], w)
		}
	}
}

// TestNextGap: the probes' phases against a 100 ms period (the CFS period
// of a CPU-capped process) fall evenly over it, where a fixed 250 ms gap
// hits two phases only; the gaps average the interval and stay within
// half of it either side.
func TestNextGap(t *testing.T) {
	const interval, period, buckets, n = 250 * time.Millisecond, 100 * time.Millisecond, 10, 4000
	r := rand.New(rand.NewPCG(1, 2))
	var at, sum time.Duration
	var random, fixed [buckets]int
	for i := range n {
		g := nextGap(r, interval)
		if g < interval/2 || g >= interval*3/2 {
			t.Fatalf("gap %v outside [%v, %v)", g, interval/2, interval*3/2)
		}
		at, sum = at+g, sum+g
		random[at%period*buckets/period]++
		fixed[time.Duration(i+1)*interval%period*buckets/period]++
	}
	if mean := sum / n; mean < interval*95/100 || mean > interval*105/100 {
		t.Errorf("mean gap %v, want about %v", mean, interval)
	}
	for b, c := range random {
		if c < n/buckets*7/10 || c > n/buckets*13/10 {
			t.Errorf("phase bucket %d of %d: %d of %d probes, want about %d: %v", b, buckets, c, n, n/buckets, random)
		}
	}
	hit := 0
	for _, c := range fixed {
		if c > 0 {
			hit++
		}
	}
	if hit != 2 {
		t.Errorf("a fixed gap hit %d phase buckets, the case this guards against hits 2", hit)
	}
	if nextGap(r, 0) != 0 {
		t.Error("a zero interval waits")
	}
}
