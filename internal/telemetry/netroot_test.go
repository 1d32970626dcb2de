package telemetry

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// writeCounters writes an interface's byte counters under root.
func writeCounters(t *testing.T, root, iface string, rx, tx int) {
	t.Helper()
	dir := filepath.Join(root, "sys/class/net", iface, "statistics")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]int{"rx_bytes": rx, "tx_bytes": tx} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strconv.Itoa(v)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNetOnlyAndNetRoot: a node read only through its network counters
// (NetOnly) lists exactly the reasons it was given and samples the
// interface under NetRoot, not under Root; the sources it was given are
// carried into the telemetry.
func TestNetOnlyAndNetRoot(t *testing.T) {
	root, netRoot := t.TempDir(), t.TempDir()
	writeCounters(t, netRoot, "eth0", 1000, 0)
	s := New(Config{Root: root, NetRoot: netRoot, Interface: "eth0", NetOnly: true, Host: "n3",
		Interval: 20 * time.Millisecond, Missing: []string{"cpu, disk, pressure: no sampler pod"},
		Sources: map[string]string{"network": "the kubelet's Summary API"}})
	want := []string{"cpu, disk, pressure: no sampler pod", "link speed: eth0 does not report one (Wi-Fi, virtual or down)"}
	if !slices.Equal(s.Missing(), want) {
		t.Errorf("missing %q, want %q", s.Missing(), want)
	}
	r := s.Start()
	time.Sleep(30 * time.Millisecond)
	writeCounters(t, netRoot, "eth0", 1000+5_000_000, 0)
	time.Sleep(50 * time.Millisecond)
	tel := r.Stop()
	if tel.Totals.NetRxBytes != 5_000_000 {
		t.Errorf("received %d bytes, want 5000000", tel.Totals.NetRxBytes)
	}
	if _, ok := tel.Stat(result.SeriesCPUBusy); ok {
		t.Error("a NetOnly sampler sampled the CPU")
	}
	if tel.Sources["network"] != "the kubelet's Summary API" || tel.Host != "n3" {
		t.Errorf("sources %v host %q", tel.Sources, tel.Host)
	}
}
