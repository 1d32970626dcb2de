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
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
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
	// Qualified names the network in Target: the round measures more
	// than one between the same nodes.
	Qualified bool
}

// Target is how results name the pair: "a -> b", or "a -> b (host
// network)" when the round measures the same nodes on more than one
// network.
func (p Pair) Target() string {
	t := p.From.Node + " -> " + p.To.Node
	if p.Qualified {
		t += " (" + p.To.Network + " network)"
	}
	return t
}

// Pairs returns the ordered pairs of distinct nodes among eps within
// each network (the first endpoint of a node on a network stands for it;
// a fio node's wins over an Other one's), in a stable order: every pair
// with a fio node at either end, and with all also the pairs of two
// Other nodes.
func Pairs(eps []runner.NetEndpoint, all bool) []Pair {
	var networks []string
	byNet := map[string][]runner.NetEndpoint{}
	for _, e := range eps {
		nodes, seen := byNet[e.Network], -1
		for i, n := range nodes {
			if n.Node == e.Node {
				seen = i
			}
		}
		switch {
		case seen >= 0 && nodes[seen].Other && !e.Other:
			nodes[seen] = e
		case seen < 0:
			if len(nodes) == 0 {
				networks = append(networks, e.Network)
			}
			byNet[e.Network] = append(nodes, e)
		}
	}
	var pairs []Pair
	for _, nw := range networks {
		for _, a := range byNet[nw] {
			for _, b := range byNet[nw] {
				if a.Node != b.Node && (all || !a.Other || !b.Other) {
					pairs = append(pairs, Pair{From: a, To: b, Qualified: len(networks) > 1})
				}
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
	send := func() (*result.Result, error) {
		return transfer(ctx, p, flow{name: "bulk", bs: 128 << 10, ramp: time.Second, runtime: o.send()})
	}
	idle := func() (*result.Result, error) {
		return transfer(ctx, p, flow{name: "ping", bs: 64, pingpong: true, runtime: o.rtt()})
	}
	// While busy: one fio runs both flows, so both are connected before
	// either starts; the round trips begin two seconds into the transfer,
	// once the sender's queue has filled, and end before it does.
	busy := func() (*result.Result, error) {
		return transfer(ctx, p, flow{name: "ping", bs: 64, pingpong: true, delay: 2 * time.Second, runtime: o.rtt()},
			flow{name: "bulk", bs: 128 << 10, runtime: o.rtt() + 4*time.Second})
	}
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

// flow is one TCP connection of a measurement: a fio job on each side.
type flow struct {
	name string
	bs   int
	// pingpong has the receiver echo every block: the sender's completion
	// latency is then the round trip.
	pingpong bool
	// ramp is left out of the figures; delay is waited before starting.
	ramp, delay, runtime time.Duration
	port                 int
}

// transfer runs the flows, each a job of one receiving fio on p.To and one
// sending fio on p.From, and returns the sender's figures of the first
// flow: throughput, or with pingpong the round trip of each block.
func transfer(ctx context.Context, p Pair, flows ...flow) (*result.Result, error) {
	base := 20000 + rand.IntN(20000)
	var recvJobs []string
	send := []string{"--ioengine=net", "--protocol=tcp", "--hostname=" + p.To.Address, "--rw=write", "--size=1000g",
		"--time_based", "--output-format=json"}
	var longest time.Duration
	for i := range flows {
		f := &flows[i]
		f.port = base + i
		pp := "--pingpong=0"
		recvBS := 4096 // fio's reader miscounts short reads of larger blocks
		if f.pingpong {
			pp, recvBS = "--pingpong=1", f.bs // an echo must match the block it answers
		}
		longest = max(longest, f.ramp+f.delay+f.runtime)
		recvJobs = append(recvJobs, "--name="+f.name, "--port="+strconv.Itoa(f.port), "--bs="+strconv.Itoa(recvBS), pp)
		send = append(send, "--name="+f.name, "--port="+strconv.Itoa(f.port), "--bs="+strconv.Itoa(f.bs), pp,
			"--runtime="+seconds(f.runtime), "--ramp_time="+seconds(f.ramp), "--startdelay="+seconds(f.delay))
	}
	// Options before the first --name are global; the receiver gives up
	// well after the sender would have finished.
	recv := append([]string{"--ioengine=net", "--protocol=tcp", "--listen", "--rw=read", "--size=1000g", "--output-format=json",
		"--runtime=" + seconds(longest+30*time.Second)}, recvJobs...)

	recvCtx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	recvDone := make(chan error, 1)
	var recvErr bytes.Buffer
	go func() {
		recvDone <- p.To.Cmder.Command(recvCtx, "fio", recv...).SetStdout(&bytes.Buffer{}).SetStderr(&recvErr).Run()
	}()

	// The sender starts once every port listens: a connection refused on
	// one port would end the receiver's job on another.
	if err := waitListening(ctx, p.To.Cmder, flows, recvDone); err != nil {
		return nil, fmt.Errorf("fio receiving on %s: %w: %s", p.To.Node, err, lastLine(recvErr.String()))
	}
	var out []byte
	var err error
	// A refused connection (a listener not yet accepting) is tried again
	// for ten seconds.
	for attempt := 0; ; attempt++ {
		var stdout, stderr bytes.Buffer
		err = p.From.Cmder.Command(ctx, "fio", send...).SetStdout(&stdout).SetStderr(&stderr).Run()
		out = stdout.Bytes()
		if err == nil || ctx.Err() != nil || attempt == 40 || !refused(stdout.String()+stderr.String()) {
			if err != nil {
				err = fmt.Errorf("fio sending from %s to %s:%d: %w: %s", p.From.Node, p.To.Address, base, err, lastLine(stdout.String()+stderr.String()))
			}
			break
		}
		select {
		case <-recvDone:
			return nil, fmt.Errorf("fio receiving on %s port %d stopped before the sender connected: %s", p.To.Node, base, lastLine(recvErr.String()))
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
	if perr != nil || len(docs) == 0 {
		return nil, fmt.Errorf("fio sending from %s to %s: no JSON result: %v", p.From.Node, p.To.Address, perr)
	}
	for _, j := range docs[len(docs)-1].AllJobs() {
		if j.Name != flows[0].name {
			continue
		}
		r := fio.ToResult(j)
		r.RawFioJSON = raws[len(raws)-1]
		r.Read, r.Trim = nil, nil
		return &r, nil
	}
	return nil, fmt.Errorf("fio sending from %s to %s: no job %s in its result", p.From.Node, p.To.Address, flows[0].name)
}

// waitListening polls the receiver's /proc/net/tcp and tcp6 (there even
// in a minimal container) until every flow's port is in LISTEN state.
func waitListening(ctx context.Context, c execx.Cmder, flows []flow, recvDone <-chan error) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, _ := execx.Output(c.Command(ctx, "cat", "/proc/net/tcp", "/proc/net/tcp6"))
		listening := 0
		for _, f := range flows {
			if listens(string(out), f.port) {
				listening++
			}
		}
		if listening == len(flows) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d ports listening after 15 s", listening, len(flows))
		}
		select {
		case err := <-recvDone:
			return fmt.Errorf("fio stopped before listening (%v)", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// listens reports whether /proc/net/tcp text has a socket in LISTEN state
// (0A) on port.
func listens(procNetTCP string, port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(procNetTCP, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
			return true
		}
	}
	return false
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
