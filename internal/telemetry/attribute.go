package telemetry

import (
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// Limits behind the attribution rules.
const (
	DeviceUtilLimit  = 90.0 // % of the time the device had I/O in flight
	CPUBusyLimit     = 85.0 // % of all cores busy
	CoreSaturated    = 95.0 // % busy of the busiest core, or of fio's own thread
	NetworkLinkLimit = 85.0 // % of the link speed
	// FreqDropRatio: under load, a frequency below this share of the run's
	// own peak is a cap, not the governor idling.
	FreqDropRatio = 0.90
	// LoadedCore is how busy the busiest core must be for a frequency
	// sample to count as "under load".
	LoadedCore = 80.0
)

// Limit classes.
const (
	LimitedByDevice  = "device"
	LimitedByCPU     = "cpu"
	LimitedByNetwork = "network"
	LimitedByThermal = "thermal"
	LimitedByUnclear = "unclear"
)

// Attribute says what limited a result, from the telemetry recorded while
// it ran, with the evidence in words and figures. Rules, first match wins
// (a hot CPU slows everything else, a saturated CPU cannot keep a device
// or link busy): thermal (a Raspberry Pi throttling flag, or the CPU
// frequency dropping under load), cpu (all cores >= 85% busy on average, or
// the busiest core >= 95%, or fio's own thread >= 95% of a core), network
// (>= 85% of the link speed), device (>= 90% utilised), else unclear. It
// returns nil when t holds no samples.
func Attribute(r *result.Result, t *result.Telemetry) *result.Attribution {
	if t == nil || len(t.Summary) == 0 {
		return nil
	}
	mean := func(name string) (float64, bool) {
		s, ok := t.Stat(name)
		return s.Mean, ok
	}
	busy, hasBusy := mean(result.SeriesCPUBusy)
	core, hasCore := mean(result.SeriesCPUCoreMaxBusy)
	util, hasUtil := mean(result.SeriesDiskUtil)
	link, hasLink := mean(result.SeriesNetLinkUtil)
	fioCPU := 0.0
	if r != nil {
		fioCPU = r.CPU.UserPercent + r.CPU.SystemPercent
	}

	var context []string // the other figures, so a reader sees what was not the limit
	cpuWords := ""
	if hasBusy {
		cpuWords = fmt.Sprintf("CPU %.0f%% busy", busy)
		if hasCore && t.CPUs > 1 {
			cpuWords += fmt.Sprintf(" (busiest core %.0f%%)", core)
		}
	}
	deviceWords := ""
	if hasUtil {
		deviceWords = fmt.Sprintf("device %s %.0f%% utilised", t.Device, util)
		if q, ok := mean(result.SeriesDiskQueue); ok {
			deviceWords += fmt.Sprintf(", queue depth %.1f", q)
		}
	}
	linkWords := ""
	if hasLink {
		linkWords = fmt.Sprintf("%s at %.0f%% of its %s link", t.Interface, link, linkSpeed(t.LinkBytesPerSec))
	}
	add := func(words ...string) {
		for _, w := range words {
			if w != "" {
				context = append(context, w)
			}
		}
	}

	if why := thermal(t); why != "" {
		add(cpuWords, deviceWords, linkWords)
		return attribution(LimitedByThermal, why, context)
	}
	switch {
	case hasBusy && busy >= CPUBusyLimit:
		add(deviceWords, linkWords)
		return attribution(LimitedByCPU, cpuWords, context)
	case hasCore && t.CPUs > 1 && core >= CoreSaturated:
		add(deviceWords, linkWords)
		return attribution(LimitedByCPU, fmt.Sprintf("one core saturated: busiest core %.0f%% busy, all cores %.0f%%", core, busy), context)
	case fioCPU >= CoreSaturated:
		add(cpuWords, deviceWords, linkWords)
		return attribution(LimitedByCPU, fmt.Sprintf("fio's thread used %.0f%% of a core", fioCPU), context)
	case hasLink && link >= NetworkLinkLimit:
		add(cpuWords, deviceWords)
		return attribution(LimitedByNetwork, linkWords, context)
	case hasUtil && util >= DeviceUtilLimit:
		add(cpuWords, linkWords)
		return attribution(LimitedByDevice, deviceWords, context)
	}
	add(cpuWords, deviceWords, linkWords)
	if len(context) == 0 {
		return &result.Attribution{LimitedBy: LimitedByUnclear, Evidence: "no CPU, device or network figures were sampled"}
	}
	return &result.Attribution{LimitedBy: LimitedByUnclear, Evidence: "nothing saturated: " + strings.Join(context, ", ")}
}

func attribution(class, lead string, context []string) *result.Attribution {
	ev := lead
	if len(context) > 0 {
		ev += "; " + strings.Join(context, ", ")
	}
	return &result.Attribution{LimitedBy: class, Evidence: ev}
}

var throttleBits = []struct {
	bit  uint32
	name string
}{{0x1, "under-voltage"}, {0x2, "ARM frequency capped"}, {0x4, "throttled"}, {0x8, "soft temperature limit"}}

// thermal returns why the CPU was slowed, or "".
func thermal(t *result.Telemetry) string {
	temp := ""
	if s, ok := t.Stat(result.SeriesCPUTemp); ok {
		temp = fmt.Sprintf(", up to %.0f °C", s.Max)
	}
	if t.Throttled != 0 {
		var flags []string
		for _, b := range throttleBits {
			if t.Throttled&b.bit != 0 {
				flags = append(flags, b.name)
			}
		}
		return fmt.Sprintf("Raspberry Pi firmware reported %s (get_throttled 0x%x)%s", strings.Join(flags, ", "), t.Throttled, temp)
	}
	if t.Series == nil {
		return ""
	}
	freq, core := t.Series.Values[result.SeriesCPUFreq], t.Series.Values[result.SeriesCPUCoreMaxBusy]
	var peak, low float64
	loaded := 0
	for i := 0; i < len(freq) && i < len(core); i++ {
		if core[i] < LoadedCore {
			continue
		}
		if loaded == 0 || freq[i] > peak {
			peak = freq[i]
		}
		if loaded == 0 || freq[i] < low {
			low = freq[i]
		}
		loaded++
	}
	if loaded >= 2 && peak > 0 && low < FreqDropRatio*peak {
		return fmt.Sprintf("CPU frequency dropped from %.0f to %.0f MHz under load%s", peak, low, temp)
	}
	return ""
}

func linkSpeed(bps float64) string {
	mbit := bps * 8 / 1e6
	if mbit >= 1000 {
		return fmt.Sprintf("%g Gbit/s", mbit/1000)
	}
	return fmt.Sprintf("%g Mbit/s", mbit)
}
