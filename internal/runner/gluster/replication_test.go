package gluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/testenv"
	"github.com/storbench/storbench/test/glustertest"
)

// inNetNS runs commands in a network namespace (the host's mount namespace).
type inNetNS string

func (n inNetNS) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	return execx.Local{}.Command(ctx, "nsenter", append([]string{"--net=/run/netns/" + string(n), name}, args...)...)
}

// TestClientSideReplication: a sequential write through the gfapi target
// from a client whose link is shaped to 200 Mbit/s sends every copy
// itself: its link carries replicas x the payload (within 15%), and the
// write runs at the link's measured rate / replicas (within 10%).
func TestClientSideReplication(t *testing.T) {
	testenv.Measures(t)
	var v *glustertest.Volume
	t.Run("volume", func(t *testing.T) {
		testenv.Fio(t)
		testenv.Tool(t, "iperf3", "iperf3")
		v = glustertest.Start(t, glustertest.Options{})
		v.LinkOp(t, "shape", -1, "200mbit")
		linkBPS := iperf(t, v)
		tgt := &Target{spec: Spec{Server: v.Nodes[0].Addr, Volume: v.Name}}
		p, err := tgt.Prepare(context.Background(), runner.Need{RunID: "repl", FileSize: 96 << 20, Writers: []string{"seq-write"}, Direct: true})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := p.Cleanup(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		s, err := spec.Parse([]byte("name: r\nworkloads:\n  - {name: seq-write, rw: write, bs: 4MiB, iodepth: 4, size: 96MiB}\n"), "r")
		if err != nil {
			t.Fatal(err)
		}
		rx := func() float64 { return counter(t, v.Client.Link, "rx_bytes") } // the client's sends, at the switch
		before := rx()
		out, err := fio.Runner{Cmder: inNetNS(v.Client.NetNS)}.Run(context.Background(), fio.FromWorkload(s.Workloads[0], p.File, ""), nil)
		if err != nil {
			t.Fatal(err)
		}
		sent := rx() - before
		w := out.Final.Jobs[0].Write
		payload, bps := *w.IOBytes, fio.ToResult(out.Final.Jobs[0]).Write.BytesPerSec
		ratio, ceiling := sent/payload, linkBPS/3
		t.Logf("link %.1f MB/s; write %.2f MB/s, ceiling link/3 %.2f MB/s (%.0f%%); client link carried %.2fx the payload",
			linkBPS/1e6, bps/1e6, ceiling/1e6, bps/ceiling*100, ratio)
		if ratio < 3*0.85 || ratio > 3*1.15 {
			t.Errorf("client link carried %.2fx the payload, want 3x within 15%%", ratio)
		}
		if bps < ceiling*0.9 || bps > ceiling*1.1 {
			t.Errorf("write %.2f MB/s, want link/3 = %.2f MB/s within 10%%", bps/1e6, ceiling/1e6)
		}
	})
	if v != nil {
		glustertest.CheckClean(t, v)
	}
}

// iperf measures the client's link: TCP from the client to the first
// server for 4 s, in bytes per second. A measurement that reports nothing
// (iperf3 says why in its JSON's error) is taken again, up to three times;
// the one-off server is always stopped (a server left waiting once hung
// the whole package until its timeout).
func iperf(t *testing.T, v *glustertest.Volume) float64 {
	t.Helper()
	var last string
	for attempt := 1; attempt <= 3; attempt++ {
		bps, out, err := iperfOnce(v)
		if err == nil {
			return bps
		}
		last = fmt.Sprintf("attempt %d: %v\n%s", attempt, err, out)
		t.Log(last)
		time.Sleep(time.Second)
	}
	t.Fatalf("iperf3 from the client to %s: %s", v.Nodes[0].Addr, last)
	return 0
}

func iperfOnce(v *glustertest.Volume) (float64, string, error) {
	srv := exec.Command("nsenter", "--net=/run/netns/"+v.Nodes[0].NetNS, "iperf3", "-s", "-1", "-B", v.Nodes[0].Addr)
	if err := srv.Start(); err != nil {
		return 0, "", err
	}
	defer func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	}()
	var out []byte
	var err error
	for i := 0; i <= 20; i++ {
		// The server not listening yet: iperf3 -J fails, or (3.12) exits 0
		// with the refusal in its JSON.
		out, err = exec.Command("nsenter", "--net=/run/netns/"+v.Client.NetNS, "iperf3", "-J", "-t", "4", "-c", v.Nodes[0].Addr).Output()
		if err == nil && !strings.Contains(string(out), "Connection refused") {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return 0, string(out), err
	}
	var r struct {
		Error string `json:"error"`
		End   struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, string(out), err
	}
	if r.End.SumReceived.BitsPerSecond == 0 {
		return 0, string(out), fmt.Errorf("no throughput reported (iperf3: %q)", r.Error)
	}
	return r.End.SumReceived.BitsPerSecond / 8, "", nil
}

func counter(t *testing.T, link, name string) float64 {
	t.Helper()
	b, err := os.ReadFile("/sys/class/net/" + link + "/statistics/" + name)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
