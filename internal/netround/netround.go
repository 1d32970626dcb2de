// Package netround measures the links between the nodes of a run with
// fio's net engine (ioengine=net, TCP): throughput from one node to
// another, and the round trip (pingpong=1, the receiver echoing every
// block) with the link idle and while a bulk transfer keeps it busy. Each
// measurement is a result like any other (round "network", target "a ->
// b"), so history, trend and compare read them unchanged; Matrix in
// internal/analysis lays them out node by node.
//
// fio's listening reader miscounts short reads with large blocks and
// stops early, so the receiver reads in 4 KiB blocks and the sender's
// figure is the one kept.
package netround

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// Workloads of the network round, in the order they run (named in
// internal/result, where analyses read them).
const (
	WorkloadSend    = result.WorkloadTCPSend
	WorkloadRTTIdle = result.WorkloadTCPRTTIdle
	WorkloadRTTBusy = result.WorkloadTCPRTTBusy
)

// Workloads lists them in order.
var Workloads = []string{WorkloadSend, WorkloadRTTIdle, WorkloadRTTBusy}

// Options say how long each measurement runs.
type Options struct {
	// Send is how long a throughput measurement runs after a one-second
	// ramp; 0 means 5 s.
	Send time.Duration
	// RTT is how long a round-trip measurement runs; 0 means 3 s.
	RTT time.Duration
}

func (o Options) send() time.Duration {
	if o.Send <= 0 {
		return 5 * time.Second
	}
	return o.Send
}

func (o Options) rtt() time.Duration {
	if o.RTT <= 0 {
		return 3 * time.Second
	}
	return o.RTT
}

// Pair is one direction between two nodes.
type Pair struct {
	From, To runner.NetEndpoint
}

// Target is how results name the pair: "a -> b".
func (p Pair) Target() string { return p.From.Node + " -> " + p.To.Node }

// Pairs returns every ordered pair of distinct nodes among eps (the
// first endpoint of a node stands for it), in a stable order.
func Pairs(eps []runner.NetEndpoint) []Pair {
	var nodes []runner.NetEndpoint
	seen := map[string]bool{}
	for _, e := range eps {
		if !seen[e.Node] {
			seen[e.Node] = true
			nodes = append(nodes, e)
		}
	}
	var pairs []Pair
	for _, a := range nodes {
		for _, b := range nodes {
			if a.Node != b.Node {
				pairs = append(pairs, Pair{From: a, To: b})
			}
		}
	}
	return pairs
}

// Measure runs the pair's measurements, one after the other, and returns
// a result for each (not stored: the caller sets the run, round and
// repetition). A measurement that fails gives a failed result carrying
// fio's message, and the others still run.
func Measure(ctx context.Context, p Pair, o Options) []result.Result {
	var out []result.Result
	send := func() (*result.Result, error) { return transfer(ctx, p, o.send(), 128<<10, false) }
	idle := func() (*result.Result, error) { return transfer(ctx, p, o.rtt(), 64, true) }
	busy := func() (*result.Result, error) { return busyRTT(ctx, p, o) }
	for i, m := range []func() (*result.Result, error){send, idle, busy} {
		started := time.Now()
		r, err := m()
		if r == nil {
			r = &result.Result{}
		}
		r.Workload, r.Target, r.Round = Workloads[i], p.Target(), result.RoundNetwork
		r.Started, r.Finished = started, time.Now()
		r.Labels = map[string]string{}
		result.LabelNetFrom.Set(r.Labels, p.From.Node)
		result.LabelNetTo.Set(r.Labels, p.To.Node)
		result.LabelNetAddress.Set(r.Labels, p.To.Address)
		result.LabelNetwork.Set(r.Labels, p.To.Network)
		if err != nil {
			r.Status, r.Error = result.StatusFailed, err.Error()
		} else if r.Status == "" {
			r.Status = result.StatusComplete
		}
		out = append(out, *r)
		if ctx.Err() != nil {
			break
		}
	}
	return out
}

// busyRTT measures round trips while a bulk transfer runs on the same
// pair, starting them a second into it so the sender's queue has filled.
func busyRTT(ctx context.Context, p Pair, o Options) (*result.Result, error) {
	bulkCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var bulkErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, bulkErr = transfer(bulkCtx, p, o.rtt()+3*time.Second, 128<<10, false)
	}()
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
	}
	r, err := transfer(ctx, p, o.rtt(), 64, true)
	stop()
	wg.Wait()
	if err == nil && bulkErr != nil && !errors.Is(bulkErr, context.Canceled) && bulkCtx.Err() == nil {
		err = fmt.Errorf("the bulk transfer that loads the link failed: %w", bulkErr)
	}
	return r, err
}

// transfer runs a receiver on p.To and a sender on p.From for d and
// returns the sender's figures: throughput, or with pingpong the round
// trip of each block (completion latency).
func transfer(ctx context.Context, p Pair, d time.Duration, bs int, pingpong bool) (*result.Result, error) {
	port := 20000 + rand.IntN(20000)
	pp := "--pingpong=0"
	if pingpong {
		pp = "--pingpong=1"
	}
	recvBS := 4096
	if pingpong {
		recvBS = bs // an echo must match the block it answers
	}
	recvCtx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	recvDone := make(chan error, 1)
	var recvErr bytes.Buffer
	go func() {
		recvDone <- p.To.Cmder.Command(recvCtx, "fio", "--name=recv", "--ioengine=net", "--protocol=tcp", "--listen",
			"--port="+strconv.Itoa(port), "--rw=read", "--bs="+strconv.Itoa(recvBS), "--size=1000g", pp,
			"--runtime="+seconds(d+30*time.Second), "--output-format=json").SetStdout(&bytes.Buffer{}).SetStderr(&recvErr).Run()
	}()

	args := []string{"--name=send", "--ioengine=net", "--protocol=tcp", "--hostname=" + p.To.Address,
		"--port=" + strconv.Itoa(port), "--rw=write", "--bs=" + strconv.Itoa(bs), "--size=1000g", pp,
		"--time_based", "--runtime=" + seconds(d), "--output-format=json"}
	if !pingpong {
		args = append(args, "--ramp_time=1")
	}
	var out []byte
	var err error
	// The receiver takes a moment to listen: a refused connection is
	// tried again for a few seconds.
	for attempt := 0; ; attempt++ {
		var stdout, stderr bytes.Buffer
		err = p.From.Cmder.Command(ctx, "fio", args...).SetStdout(&stdout).SetStderr(&stderr).Run()
		out = stdout.Bytes()
		if err == nil || ctx.Err() != nil || attempt == 40 || !refused(stdout.String()+stderr.String()) {
			if err != nil {
				err = fmt.Errorf("fio sending from %s to %s:%d: %w: %s", p.From.Node, p.To.Address, port, err, lastLine(stdout.String()+stderr.String()))
			}
			break
		}
		select {
		case <-recvDone:
			return nil, fmt.Errorf("fio receiving on %s port %d stopped before the sender connected: %s", p.To.Node, port, lastLine(recvErr.String()))
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	// The receiver ends when the sender disconnects; a stuck one is
	// stopped.
	select {
	case <-recvDone:
	case <-time.After(10 * time.Second):
		stopRecv()
		<-recvDone
	}
	if err != nil {
		return nil, err
	}
	docs, raws, _, perr := fio.ParseOutputs(bytes.NewReader(out))
	if perr != nil || len(docs) == 0 || len(docs[len(docs)-1].AllJobs()) == 0 {
		return nil, fmt.Errorf("fio sending from %s to %s: no JSON result: %v", p.From.Node, p.To.Address, perr)
	}
	r := fio.ToResult(docs[len(docs)-1].AllJobs()[0])
	r.RawFioJSON = raws[len(raws)-1]
	r.Read, r.Trim = nil, nil
	return &r, nil
}

func refused(s string) bool {
	return strings.Contains(s, "Connection refused") || strings.Contains(s, "connect:")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func seconds(d time.Duration) string { return strconv.Itoa(int((d+time.Second-1)/time.Second)) + "s" }

// Local is this host as an endpoint, for tests and benchmarks.
func Local(node, address string) runner.NetEndpoint {
	return runner.NetEndpoint{Node: node, Address: address, Network: "host", Cmder: execx.Local{}}
}
