package analysis

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// fig builds the figures of one result from metric values.
func fig(target, workload string, rep int, values map[string]float64) result.Figures {
	f := result.Figures{RunID: "20261122-100000-aaaa", Target: target, Round: result.RoundIsolated, Repetition: rep,
		Workload: workload, Status: result.StatusComplete, Labels: map[string]string{"hostname": "lab"},
		Values: make([]float64, len(result.Metrics))}
	for i, m := range result.Metrics {
		f.Values[i] = math.NaN()
		if v, ok := values[m]; ok {
			f.Values[i] = v
		}
	}
	return f
}

func judge(t *testing.T, kind string, figs []result.Figures, opts VerdictOptions) *Verdict {
	t.Helper()
	c := mustCompare(t, figs, Options{})
	v, err := VerdictFor(kind, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if v.For != kind {
		t.Errorf("For = %q", v.For)
	}
	for _, ch := range v.Checks {
		if ch.Threshold == "" || ch.Source == "" {
			t.Errorf("check %q states no threshold or source", ch.Name)
		}
	}
	return v
}

func TestEtcdVerdict(t *testing.T) {
	ms := float64(time.Millisecond)
	tests := []struct {
		name   string
		p99s   []float64 // one per repetition
		iops   float64
		want   Status
		iopsSt Status
	}{
		{"fast", []float64{2 * ms}, 800, Pass, Pass},
		{"at 10 ms passes", []float64{10 * ms}, 300, Pass, Info},
		{"between 10 and 20 ms warns", []float64{15 * ms}, 100, Warn, Info},
		{"at 20 ms warns", []float64{20 * ms}, 100, Warn, Info},
		{"above 20 ms fails", []float64{25 * ms}, 40, Fail, Warn},
		{"the worst repetition decides", []float64{3 * ms, 4 * ms, 21 * ms}, 900, Fail, Pass},
		{"few synced writes warn", []float64{5 * ms}, 45, Warn, Warn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var figs []result.Figures
			for i, p := range tt.p99s {
				figs = append(figs, fig("/var/lib/etcd", "etcd-fdatasync", i+1, map[string]float64{result.MetricSyncP99: p, result.MetricIOPS: tt.iops}))
			}
			v := judge(t, ForEtcd, figs, VerdictOptions{})
			if v.Status != tt.want {
				t.Errorf("status = %s, want %s (%+v)", v.Status, tt.want, v.Checks)
			}
			if len(v.Checks) != 2 || v.Checks[1].Status != tt.iopsSt {
				t.Fatalf("checks = %+v", v.Checks)
			}
			if !strings.Contains(v.Checks[0].Threshold, "10 ms") || !strings.Contains(v.Checks[0].Source, "OpenShift") ||
				!strings.Contains(v.Checks[1].Source, "500") {
				t.Errorf("thresholds/sources not stated: %+v", v.Checks)
			}
		})
	}
}

func TestEtcdVerdictNeedsData(t *testing.T) {
	c := mustCompare(t, []result.Figures{fig("/t", "seq-read", 1, map[string]float64{result.MetricBW: 1e8})}, Options{})
	_, err := VerdictFor(ForEtcd, c, VerdictOptions{})
	var missing *MissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "run the etcd suite") {
		t.Errorf("err = %v", err)
	}
	if _, err := VerdictFor("zfs", c, VerdictOptions{}); !errors.Is(err, ErrUnknownVerdict) {
		t.Errorf("unknown verdict: %v", err)
	}
}

func TestCephVerdict(t *testing.T) {
	tests := []struct {
		name      string
		syncIOPS  float64
		seqBW     float64
		want      Status
		classWord string
	}{
		{"hdd", 150, 180e6, Fail, "HDD class"},
		{"consumer ssd", 1800, 450e6, Warn, "without power-loss protection"},
		{"datacentre ssd", 22000, 1.5e9, Pass, "datacentre SSD"},
		{"fast but slow link-speed writes", 22000, 90e6, Warn, "datacentre SSD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			figs := []result.Figures{
				fig("/dev/sdb", "seq-write-4m", 1, map[string]float64{result.MetricBW: tt.seqBW, result.MetricIOPS: tt.seqBW / (4 << 20)}),
				fig("/dev/sdb", "sync-write-4k-qd1", 1, map[string]float64{result.MetricIOPS: tt.syncIOPS, result.MetricBW: tt.syncIOPS * 4096}),
			}
			v := judge(t, ForCephOSD, figs, VerdictOptions{DeviceBytes: map[string]int64{"/dev/sdb": 1e12}})
			if v.Status != tt.want {
				t.Errorf("status = %s, want %s", v.Status, tt.want)
			}
			if !strings.Contains(v.Checks[0].Detail, tt.classWord) {
				t.Errorf("class = %q, want %q", v.Checks[0].Detail, tt.classWord)
			}
			// 1 TB: 1% = 9.3 GiB, 2% = 18.6 GiB, 4% = 37.3 GiB.
			if len(v.Advice) != 1 || !strings.Contains(v.Advice[0], "9.3 GiB-18.6 GiB for RBD") || !strings.Contains(v.Advice[0], "37.3 GiB for RGW") {
				t.Errorf("advice = %v", v.Advice)
			}
		})
	}
	v := judge(t, ForCephOSD, []result.Figures{fig("/dev/sdb", "sync-write-4k-qd1", 1, map[string]float64{result.MetricIOPS: 9000})}, VerdictOptions{})
	if len(v.Advice) != 1 || !strings.Contains(v.Advice[0], "--device-size") {
		t.Errorf("advice without a size = %v", v.Advice)
	}
}

func TestPiScore(t *testing.T) {
	kb := 1024.0
	var figs []result.Figures
	// seq-write-dd four times: 10, 20, 20, 100 MB/s, trimmed mean 20.
	for i, mbps := range []float64{10, 20, 20, 100} {
		figs = append(figs, fig("/mnt/usb", "seq-write-dd", i+1, map[string]float64{result.MetricBW: mbps * 1e6}))
	}
	figs = append(figs,
		fig("/mnt/usb", "rand-read-4k-qd64", 1, map[string]float64{result.MetricIOPS: 2000}),
		fig("/mnt/usb", "rand-write-4k-qd64", 1, map[string]float64{result.MetricIOPS: 500}),
		fig("/mnt/usb", "read-4k-qd1", 1, map[string]float64{result.MetricBW: 10240 * kb}),
		fig("/mnt/usb", "write-4k-qd1", 1, map[string]float64{result.MetricBW: 2048 * kb}),
		fig("/mnt/usb", "rand-read-4k-qd1", 1, map[string]float64{result.MetricBW: 5120 * kb}),
		fig("/mnt/usb", "rand-write-4k-qd1", 1, map[string]float64{result.MetricBW: 1024 * kb}),
	)
	// (20x1024 + 2000x4 + 500x10 + 10240 + 2048 + 5120x4 + 1024x10) / 100
	// = (20480 + 8000 + 5000 + 10240 + 2048 + 20480 + 10240) / 100 = 764.88
	c := mustCompare(t, figs, Options{})
	score, _, err := PiScore(c, "/mnt/usb", result.RoundIsolated)
	if err != nil || !near(score, 764.88) {
		t.Fatalf("score = %v, %v; want 764.88", score, err)
	}
	v := judge(t, ForPiScore, figs, VerdictOptions{})
	if v.Status != Info || v.Checks[0].Display != "765" || !strings.Contains(v.Checks[0].Source, "fio equivalents") {
		t.Errorf("verdict = %+v", v)
	}
	_, err = VerdictFor(ForPiScore, mustCompare(t, figs[:6], Options{}), VerdictOptions{})
	if err == nil || !strings.Contains(err.Error(), "no read-4k-qd1 result") {
		t.Errorf("incomplete pi suite: %v", err)
	}
}

func TestGeneralVerdict(t *testing.T) {
	strong := []result.Figures{
		fig("/mnt/nvme", "seq-read", 1, map[string]float64{result.MetricBW: 2e9, result.MetricIOPS: 2000}),
		fig("/mnt/nvme", "seq-write", 1, map[string]float64{result.MetricBW: 1e9, result.MetricIOPS: 1000}),
		fig("/mnt/nvme", "rand-read-4k-qd32", 1, map[string]float64{result.MetricIOPS: 300000}),
		fig("/mnt/nvme", "rand-write-4k-qd1", 1, map[string]float64{result.MetricIOPS: 30000, result.MetricLatP99: 80e3}),
	}
	weak := []result.Figures{
		fig("/mnt/sd", "seq-read", 1, map[string]float64{result.MetricBW: 40e6, result.MetricIOPS: 40}),
		fig("/mnt/sd", "seq-write", 1, map[string]float64{result.MetricBW: 10e6, result.MetricIOPS: 10}),
		fig("/mnt/sd", "rand-read-4k-qd32", 1, map[string]float64{result.MetricIOPS: 600}),
		fig("/mnt/sd", "rand-write-4k-qd1", 1, map[string]float64{result.MetricIOPS: 90, result.MetricLatP99: 80e6}),
	}
	v := judge(t, ForGeneral, strong, VerdictOptions{})
	if v.Status != Pass || len(v.Checks) != 4 {
		t.Errorf("strong: %s, %d checks", v.Status, len(v.Checks))
	}
	for _, ch := range v.Checks {
		if ch.Display != RatingGood || ch.Detail == "" {
			t.Errorf("strong %s = %s (%s)", ch.Name, ch.Display, ch.Detail)
		}
	}
	v = judge(t, ForGeneral, weak, VerdictOptions{})
	if v.Status != Fail {
		t.Errorf("weak: %s", v.Status)
	}
	v = judge(t, ForGeneral, append(strong, weak...), VerdictOptions{})
	if v.Status != Fail || !strings.Contains(v.Summary, "/mnt/sd: good for none") {
		t.Errorf("mixed: %s %q", v.Status, v.Summary)
	}
}

func TestApplicable(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{})
	if got := strings.Join(Applicable(c), ","); got != "general" {
		t.Errorf("applicable = %s", got)
	}
}
