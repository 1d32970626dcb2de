package telemetry

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// TestAttributeRecordedSamples replays /proc and /sys snapshots recorded on
// a host under each kind of load (testdata/record.sh; the network and
// thermal cases add the /sys files this VM lacks, testdata/craft.sh) and
// checks the class and the evidence.
func TestAttributeRecordedSamples(t *testing.T) {
	nfs := map[string]string{"fs_type": "nfs4", "mount_source": "192.0.2.10:/export", "hostname": "pi"}
	tests := []struct {
		class    string
		cfg      Config
		want     string
		evidence []string
	}{
		{"unclear", Config{Device: "vda"}, LimitedByUnclear, []string{"nothing saturated", "CPU 3% busy", "device vda 0% utilised"}},
		{"cpu", Config{Device: "vda"}, LimitedByCPU, []string{"CPU 100% busy", "busiest core 100%", "device vda 1% utilised"}},
		{"device", Config{Device: "vda"}, LimitedByDevice, []string{"device vda 100% utilised", "queue depth 10.2", "CPU 28% busy"}},
		{"network", ConfigFor(nfs, "testdata/network/t0"), LimitedByNetwork, []string{"eth0 at 90% of its 1 Gbit/s link", "CPU 3% busy"}},
		{"thermal-throttled", Config{Device: "vda"}, LimitedByThermal, []string{"ARM frequency capped, throttled (get_throttled 0x6)", "up to 84 °C", "CPU 100% busy"}},
		{"thermal-freqdrop", Config{Device: "vda"}, LimitedByThermal, []string{"CPU frequency dropped from 2900 to 1900 MHz under load", "up to 99 °C"}},
	}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			tel := replay(t, tt.class, tt.cfg)
			a := Attribute(&result.Result{}, tel)
			if a == nil {
				t.Fatal("no attribution")
			}
			if a.LimitedBy != tt.want {
				t.Errorf("limited by %s (%s), want %s", a.LimitedBy, a.Evidence, tt.want)
			}
			for _, e := range tt.evidence {
				if !strings.Contains(a.Evidence, e) {
					t.Errorf("evidence %q lacks %q", a.Evidence, e)
				}
			}
		})
	}
}

func TestAttributeFioThreadSaturated(t *testing.T) {
	// A 4-core Pi where fio's single thread is CPU-bound: the host looks
	// 30% busy and the scheduler spreads the thread over cores, but fio
	// itself reports a whole core used.
	tel := &result.Telemetry{CPUs: 4, Device: "sda", Summary: map[string]result.Summary{
		result.SeriesCPUBusy:        {Mean: 30, Samples: 5},
		result.SeriesCPUCoreMaxBusy: {Mean: 70, Samples: 5},
		result.SeriesDiskUtil:       {Mean: 60, Samples: 5},
	}}
	r := &result.Result{CPU: result.CPU{UserPercent: 40, SystemPercent: 58}}
	a := Attribute(r, tel)
	if a.LimitedBy != LimitedByCPU || !strings.Contains(a.Evidence, "fio's thread used 98% of a core") {
		t.Errorf("got %+v", a)
	}
	r.CPU = result.CPU{UserPercent: 10, SystemPercent: 20}
	if a := Attribute(r, tel); a.LimitedBy != LimitedByUnclear {
		t.Errorf("got %+v, want unclear", a)
	}
	tel.Summary[result.SeriesCPUCoreMaxBusy] = result.Summary{Mean: 97, Samples: 5}
	if a := Attribute(r, tel); a.LimitedBy != LimitedByCPU || !strings.Contains(a.Evidence, "one core saturated") {
		t.Errorf("got %+v, want one core saturated", a)
	}
}

func TestAttributeNeedsSamples(t *testing.T) {
	if a := Attribute(&result.Result{}, nil); a != nil {
		t.Errorf("nil telemetry: got %+v", a)
	}
	if a := Attribute(&result.Result{}, &result.Telemetry{}); a != nil {
		t.Errorf("empty telemetry: got %+v", a)
	}
}

func TestMissingSourcesAreListed(t *testing.T) {
	tel := replay(t, "unclear", Config{Device: "vda"})
	want := []string{"temperature:", "cpu frequency:", "throttling:"}
	for _, w := range want {
		found := false
		for _, m := range tel.Missing {
			found = found || strings.HasPrefix(m, w)
		}
		if !found {
			t.Errorf("missing %v lacks %q", tel.Missing, w)
		}
	}
	if _, ok := tel.Stat(result.SeriesCPUTemp); ok {
		t.Error("a temperature was reported from a host without thermal zones")
	}
	// A device that is not in diskstats is a missing source, not an error.
	tel = replay(t, "unclear", Config{Device: "nvme9n9"})
	if _, ok := tel.Stat(result.SeriesDiskUtil); ok || !strings.Contains(strings.Join(tel.Missing, "\n"), "has no device nvme9n9") {
		t.Errorf("missing = %v", tel.Missing)
	}
}

func TestSeriesAreColumnsOfEqualLength(t *testing.T) {
	tel := replay(t, "device", Config{Device: "vda"})
	if tel.Series == nil || len(tel.Series.OffsetsMS) != 3 {
		t.Fatalf("series = %+v", tel.Series)
	}
	for name, col := range tel.Series.Values {
		if len(col) != len(tel.Series.OffsetsMS) {
			t.Errorf("%s has %d values for %d offsets", name, len(col), len(tel.Series.OffsetsMS))
		}
	}
	if tel.Totals.DiskReadBytes != 3017584640 || tel.Totals.Elapsed.Seconds() != 3 {
		t.Errorf("totals = %+v", tel.Totals)
	}
}
