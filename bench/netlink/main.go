// Command netlink measures the network round (internal/netround) on a
// 1 Gbit/s tc tbf link between two network namespaces it creates (a
// bridge 10.96.0.0/24, a veth per namespace, tbf on both ends of the
// sender's veth as test/cluster shapes a node's port), against iperf3
// on the same link: storbench's TCP throughput over the shaped rate
// (goal 0.95-1.0) and over iperf3's (goal within 5%), and the round trips
// idle and busy. It needs root, ip, tc, nsenter, fio and iperf3, and
// removes what it made on exit.
//
//	go run ./bench/netlink -reps 5 -seconds 10
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/netround"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

const (
	bridge    = "sbnl0"
	shapedBPS = 125e6 // 1 Gbit/s
)

// inNetns runs commands in a network namespace.
type inNetns string

func (n inNetns) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	return execx.Local{}.Command(ctx, "nsenter", append([]string{"--net=/run/netns/" + string(n), name}, args...)...)
}

func sh(args ...string) error {
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func setUp() (func(), error) {
	down := func() {
		for _, ns := range []string{"sbnl-a", "sbnl-b"} {
			exec.Command("ip", "netns", "del", ns).Run()
		}
		exec.Command("ip", "link", "del", bridge).Run()
	}
	down()
	steps := [][]string{{"ip", "link", "add", bridge, "type", "bridge"}, {"ip", "link", "set", bridge, "up"}}
	for i, ns := range []string{"sbnl-a", "sbnl-b"} {
		v := fmt.Sprintf("sbnlv%d", i)
		addr := fmt.Sprintf("10.96.0.%d/24", 11+i)
		steps = append(steps, []string{"ip", "netns", "add", ns},
			[]string{"ip", "link", "add", v, "type", "veth", "peer", "name", "eth0", "netns", ns},
			[]string{"ip", "link", "set", v, "master", bridge, "up"},
			[]string{"nsenter", "--net=/run/netns/" + ns, "ip", "addr", "add", addr, "dev", "eth0"},
			[]string{"nsenter", "--net=/run/netns/" + ns, "ip", "link", "set", "eth0", "up"},
			[]string{"nsenter", "--net=/run/netns/" + ns, "ip", "link", "set", "lo", "up"})
	}
	tbf := []string{"root", "tbf", "rate", "1gbit", "burst", "500000", "latency", "25ms"}
	steps = append(steps, append([]string{"tc", "qdisc", "replace", "dev", "sbnlv0"}, tbf...),
		append([]string{"nsenter", "--net=/run/netns/sbnl-a", "tc", "qdisc", "replace", "dev", "eth0"}, tbf...))
	for _, s := range steps {
		if err := sh(s...); err != nil {
			down()
			return nil, err
		}
	}
	return down, nil
}

// iperf3 returns the receiver's goodput from a to b over d, bytes/s.
func iperf3(ctx context.Context, d time.Duration) (float64, error) {
	srv := exec.CommandContext(ctx, "nsenter", "--net=/run/netns/sbnl-b", "iperf3", "-s", "-1", "-B", "10.96.0.12")
	if err := srv.Start(); err != nil {
		return 0, err
	}
	defer srv.Wait()
	var out []byte
	var err error
	for range 40 {
		time.Sleep(100 * time.Millisecond)
		out, err = exec.CommandContext(ctx, "nsenter", "--net=/run/netns/sbnl-a", "iperf3", "-J", "-c", "10.96.0.12",
			"-t", fmt.Sprint(int(d.Seconds())), "-O", "1").Output()
		if err == nil {
			break
		}
	}
	if err != nil {
		srv.Process.Kill()
		return 0, fmt.Errorf("iperf3: %v: %s", err, out)
	}
	var doc struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return 0, err
	}
	return doc.End.SumReceived.BitsPerSecond / 8, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func main() {
	reps := flag.Int("reps", 5, "pairs of measurements (storbench, iperf3), interleaved")
	seconds := flag.Int("seconds", 10, "seconds each throughput measurement runs")
	flag.Parse()
	down, err := setUp()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer down()
	ctx := context.Background()
	pair := netround.Pair{
		From: runner.NetEndpoint{Node: "a", Address: "10.96.0.11", Network: "host", Cmder: inNetns("sbnl-a")},
		To:   runner.NetEndpoint{Node: "b", Address: "10.96.0.12", Network: "host", Cmder: inNetns("sbnl-b")},
	}
	d := time.Duration(*seconds) * time.Second
	var fioBPS, iperfBPS []float64
	var idle, busy []float64
	for i := range *reps {
		rs := netround.Measure(ctx, pair, netround.Options{Send: d, RTT: 3 * time.Second})
		for _, r := range rs {
			if r.Status != result.StatusComplete {
				fmt.Fprintf(os.Stderr, "%s: %s\n", r.Workload, r.Error)
				os.Exit(1)
			}
			p50, _ := r.Write.Completion.At(50)
			switch r.Workload {
			case netround.WorkloadSend:
				fioBPS = append(fioBPS, r.Write.BytesPerSec)
			case netround.WorkloadRTTIdle:
				idle = append(idle, float64(p50))
			case netround.WorkloadRTTBusy:
				busy = append(busy, float64(p50))
			}
		}
		ip, err := iperf3(ctx, d)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		iperfBPS = append(iperfBPS, ip)
		fmt.Printf("rep %d: storbench %.1f MB/s, iperf3 %.1f MB/s, round trip p50 idle %s busy %s\n", i+1,
			fioBPS[i]/1e6, ip/1e6, time.Duration(idle[i]), time.Duration(busy[i]))
	}
	f, ip := median(fioBPS), median(iperfBPS)
	fmt.Printf("\n| | median |\n|---|---|\n")
	fmt.Printf("| storbench network round, TCP send | %.1f MB/s |\n| iperf3 (receiver) | %.1f MB/s |\n", f/1e6, ip/1e6)
	fmt.Printf("| storbench / shaped rate (125 MB/s) | **%.3f** |\n| storbench / iperf3 | **%.3f** |\n", f/shapedBPS, f/ip)
	fmt.Printf("| round trip p50, idle | %s |\n| round trip p50, link busy | %s |\n", time.Duration(median(idle)), time.Duration(median(busy)))
}
