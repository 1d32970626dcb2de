package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

var (
	reSmartRowLong  = regexp.MustCompile(`^\s*(\d+)\s+(\S+)\s+(0x[0-9a-fA-F]+)\s+(\d+)\s+(\d+)\s+(\d+|---)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S.*?)\s*$`)
	reSmartRowBrief = regexp.MustCompile(`^\s*(\d+)\s+(\S+)\s+([-A-Za-z+]{6,7})\s+(\d+)\s+(\d+)\s+(\d+|---)\s+(\S+)\s+(\S.*?)\s*$`)
	reSmartInfo     = regexp.MustCompile(`^(Model Family|Device Model|Model Number|Product|Serial Number|Firmware Version|Local Time is|SMART overall-health self-assessment test result|SMART Health Status):\s*(.*?)\s*$`)
	reSmartVersion  = regexp.MustCompile(`^smartctl (\d[\w.-]*)`)
	reSmartCmd      = regexp.MustCompile(`smartctl\s+.*?(/dev/\S+)`)
)

// attributes that predict failure, flagged when their raw count is not zero.
var smartCritical = map[int]string{
	5:   "reallocated sectors: the drive has remapped bad sectors to spares",
	187: "reported uncorrectable errors: reads the drive could not correct",
	188: "command timeouts: commands that did not complete (often power or cabling)",
	196: "reallocation events: remapping operations",
	197: "pending sectors: unreadable sectors waiting to be remapped",
	198: "offline uncorrectable sectors: found bad by the drive's own scan",
	199: "UDMA CRC errors: transfer errors between drive and host (cable, connector or USB-SATA bridge)",
}

// parseSmartctl reads smartctl -a / -A / -x text: the identity lines, the
// overall self-assessment and the ATA attribute table.
func parseSmartctl(data []byte) (*parsed, error) {
	p := &parsed{tool: "smartctl"}
	var h result.Health
	family := ""
	inTable, brief := false, false
	for i, line := range lines(data) {
		n := i + 1
		if m := reSmartVersion.FindStringSubmatch(line); m != nil {
			p.version = m[1]
			continue
		}
		if m := reSmartCmd.FindStringSubmatch(line); m != nil && h.Device == "" {
			h.Device = m[1]
		}
		if m := reSmartInfo.FindStringSubmatch(line); m != nil {
			switch m[1] {
			case "Model Family":
				family = m[2]
			case "Device Model", "Model Number", "Product":
				h.Model = m[2]
			case "Serial Number":
				h.Serial = m[2]
			case "Firmware Version":
				h.Firmware = m[2]
			case "Local Time is":
				if t, err := time.Parse("Mon Jan _2 15:04:05 2006 MST", m[2]); err == nil {
					h.Captured = t
				}
			default:
				if w := strings.Fields(m[2]); len(w) > 0 {
					h.SelfAssessment = w[0]
				}
				if h.SelfAssessment == "OK" {
					h.SelfAssessment = "PASSED"
				}
			}
			continue
		}
		if reSmartTable.MatchString(line) {
			inTable, brief = true, !strings.Contains(line, "TYPE")
			continue
		}
		if !inTable {
			continue
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "||") || strings.HasPrefix(strings.TrimSpace(line), "|") {
			if strings.TrimSpace(line) == "" && len(h.Attributes) > 0 {
				inTable = false
			}
			continue
		}
		var a result.SMARTAttribute
		if brief {
			m := reSmartRowBrief.FindStringSubmatch(line)
			if m == nil {
				return nil, errAt(n, 0, "expected an attribute row \"ID NAME FLAGS VALUE WORST THRESH FAIL RAW_VALUE\", found %q", strings.TrimSpace(line))
			}
			a = smartAttr(m[1], m[2], m[3], m[4], m[5], m[6], "", "", m[7], m[8])
		} else {
			m := reSmartRowLong.FindStringSubmatch(line)
			if m == nil {
				return nil, errAt(n, 0, "expected an attribute row \"ID# ATTRIBUTE_NAME FLAG VALUE WORST THRESH TYPE UPDATED WHEN_FAILED RAW_VALUE\", found %q", strings.TrimSpace(line))
			}
			a = smartAttr(m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10])
		}
		if a.ID <= 0 || a.ID > 255 {
			return nil, errAt(n, 0, "expected an attribute ID from 1 to 255, found %d", a.ID)
		}
		h.Attributes = append(h.Attributes, a)
		p.rows++
	}
	if len(h.Attributes) == 0 && h.SelfAssessment == "" {
		return nil, errAt(1, 0, "expected smartctl's attribute table (\"ID# ATTRIBUTE_NAME ...\") or its self-assessment line, found neither")
	}
	finishHealth(&h, family)
	p.health = append(p.health, h)
	return p, nil
}

func smartAttr(id, name, flag, value, worst, thresh, typ, updated, whenFailed, raw string) result.SMARTAttribute {
	a := result.SMARTAttribute{Name: name, Flag: flag, Type: typ, Updated: updated, WhenFailed: whenFailed, Raw: raw}
	a.ID, _ = strconv.Atoi(id)
	a.Value, _ = strconv.Atoi(value)
	a.Worst, _ = strconv.Atoi(worst)
	a.Threshold, _ = strconv.Atoi(thresh)
	a.RawValue = leadingUint(raw)
	return a
}

func leadingUint(s string) uint64 {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	v, _ := strconv.ParseUint(s[:end], 10, 64)
	return v
}

// seagate reports whether the drive packs counters into the raw values of
// attributes 1 and 7: a Seagate model (ST...) or family, or, when the output
// does not name the drive, raw values of those attributes far too large to
// be plain error counts.
func seagate(h *result.Health, family string) bool {
	if strings.Contains(strings.ToLower(family), "seagate") || strings.HasPrefix(h.Model, "ST") || strings.HasPrefix(strings.ToLower(h.Model), "seagate") {
		return true
	}
	if h.Model != "" || family != "" {
		return false
	}
	for _, a := range h.Attributes {
		if (a.ID == 1 || a.ID == 7) && a.RawValue > 0xFFFF {
			return true
		}
	}
	return false
}

// finishHealth decodes packed raw values and flags what matters.
func finishHealth(h *result.Health, family string) {
	packed := seagate(h, family)
	h.Flags = []result.HealthFlag{}
	for i := range h.Attributes {
		a := &h.Attributes[i]
		if packed && (a.ID == 1 || a.ID == 7) {
			ops, errs := a.RawValue&0xFFFFFFFF, (a.RawValue>>32)&0xFFFF
			a.Operations, a.Errors = &ops, &errs
		}
		// The printed raw value leads with the figure that matters ("28425
		// (215 100 0)", "31 (Min/Max 24/35)"); the 48-bit value packs more.
		lead := leadingUint(a.Raw)
		switch a.ID {
		case 9:
			if h.PowerOnHours == 0 {
				h.PowerOnHours = int64(lead)
			}
		case 194:
			h.TemperatureC = int64(lead)
		case 190:
			if h.TemperatureC == 0 {
				h.TemperatureC = int64(lead)
			}
		}
		if why, ok := smartCritical[a.ID]; ok && a.RawValue > 0 {
			count := a.RawValue
			if a.ID == 188 && packed {
				// Seagate packs three 16-bit counters; the total matters.
				count = (a.RawValue & 0xFFFF) + (a.RawValue>>16)&0xFFFF + (a.RawValue>>32)&0xFFFF
			}
			if count > 0 {
				h.Flags = append(h.Flags, result.HealthFlag{AttributeID: a.ID, Name: a.Name, Count: count, Reason: why})
			}
		}
		if a.WhenFailed != "" && a.WhenFailed != "-" {
			h.Flags = append(h.Flags, result.HealthFlag{AttributeID: a.ID, Name: a.Name, Count: a.RawValue,
				Reason: fmt.Sprintf("normalised value %d, worst %d, reached the failure threshold %d (%s)", a.Value, a.Worst, a.Threshold, a.WhenFailed)})
		}
	}
	if h.SelfAssessment == "FAILED" {
		h.Flags = append(h.Flags, result.HealthFlag{Name: "self-assessment", Reason: "smartctl's overall-health self-assessment FAILED: back up the data now"})
	}
	if h.Target == "" {
		switch {
		case h.Device != "":
			h.Target = h.Device
		case h.Model != "" && h.Serial != "":
			h.Target = h.Model + " " + h.Serial
		}
	}
}

// smartJSON is the part of smartctl --json output the importer reads.
type smartJSON struct {
	Smartctl *struct {
		Version []int `json:"version"`
	} `json:"smartctl"`
	Device struct {
		Name string `json:"name"`
	} `json:"device"`
	ModelFamily  string `json:"model_family"`
	ModelName    string `json:"model_name"`
	SerialNumber string `json:"serial_number"`
	Firmware     string `json:"firmware_version"`
	LocalTime    struct {
		TimeT int64 `json:"time_t"`
	} `json:"local_time"`
	SmartStatus *struct {
		Passed bool `json:"passed"`
	} `json:"smart_status"`
	PowerOnTime struct {
		Hours int64 `json:"hours"`
	} `json:"power_on_time"`
	Temperature struct {
		Current int64 `json:"current"`
	} `json:"temperature"`
	ATA *struct {
		Table []struct {
			ID         int    `json:"id"`
			Name       string `json:"name"`
			Value      int    `json:"value"`
			Worst      int    `json:"worst"`
			Thresh     int    `json:"thresh"`
			WhenFailed string `json:"when_failed"`
			Flags      struct {
				String        string `json:"string"`
				Prefailure    bool   `json:"prefailure"`
				UpdatedOnline bool   `json:"updated_online"`
			} `json:"flags"`
			Raw struct {
				Value  uint64 `json:"value"`
				String string `json:"string"`
			} `json:"raw"`
		} `json:"table"`
	} `json:"ata_smart_attributes"`
	NVMe *struct {
		CriticalWarning int    `json:"critical_warning"`
		MediaErrors     uint64 `json:"media_errors"`
		PercentageUsed  int    `json:"percentage_used"`
		AvailableSpare  int    `json:"available_spare"`
		SpareThreshold  int    `json:"available_spare_threshold"`
	} `json:"nvme_smart_health_information_log"`
}

// parseSmartctlJSON reads smartctl --json (-j) output, ATA or NVMe.
func parseSmartctlJSON(data []byte) (*parsed, error) {
	p := &parsed{tool: "smartctl"}
	start := bytes.IndexByte(data, '{')
	if start < 0 {
		return nil, errAt(1, 0, "expected smartctl --json output (a JSON object), found none")
	}
	var s smartJSON
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	if err := dec.Decode(&s); err != nil {
		return nil, jsonError(data, start, err, "smartctl --json output")
	}
	if s.Smartctl == nil && s.ATA == nil && s.NVMe == nil {
		return nil, errAt(lineOf(data, start), 0, `expected smartctl --json output with "smartctl" and "ata_smart_attributes" or "nvme_smart_health_information_log", found other JSON`)
	}
	if s.Smartctl != nil && len(s.Smartctl.Version) >= 2 {
		p.version = fmt.Sprintf("%d.%d", s.Smartctl.Version[0], s.Smartctl.Version[1])
	}
	h := result.Health{Device: s.Device.Name, Model: s.ModelName, Serial: s.SerialNumber, Firmware: s.Firmware,
		PowerOnHours: s.PowerOnTime.Hours, TemperatureC: s.Temperature.Current}
	if s.LocalTime.TimeT > 0 {
		h.Captured = time.Unix(s.LocalTime.TimeT, 0)
	}
	if s.SmartStatus != nil {
		h.SelfAssessment = map[bool]string{true: "PASSED", false: "FAILED"}[s.SmartStatus.Passed]
	}
	if s.ATA != nil {
		for _, t := range s.ATA.Table {
			a := result.SMARTAttribute{ID: t.ID, Name: t.Name, Flag: strings.TrimSpace(t.Flags.String), Value: t.Value, Worst: t.Worst,
				Threshold: t.Thresh, WhenFailed: t.WhenFailed, Raw: t.Raw.String, RawValue: t.Raw.Value}
			a.Type = map[bool]string{true: "Pre-fail", false: "Old_age"}[t.Flags.Prefailure]
			a.Updated = map[bool]string{true: "Always", false: "Offline"}[t.Flags.UpdatedOnline]
			h.Attributes = append(h.Attributes, a)
			p.rows++
		}
	}
	finishHealth(&h, s.ModelFamily)
	if n := s.NVMe; n != nil {
		p.rows++
		if n.MediaErrors > 0 {
			h.Flags = append(h.Flags, result.HealthFlag{Name: "media_errors", Count: n.MediaErrors, Reason: "NVMe media and data integrity errors"})
		}
		if n.CriticalWarning != 0 {
			h.Flags = append(h.Flags, result.HealthFlag{Name: "critical_warning", Count: uint64(n.CriticalWarning), Reason: "NVMe critical warning bits set (spare, temperature, reliability or read-only)"})
		}
		if n.AvailableSpare > 0 && n.AvailableSpare <= n.SpareThreshold {
			h.Flags = append(h.Flags, result.HealthFlag{Name: "available_spare", Count: uint64(n.AvailableSpare), Reason: "NVMe spare capacity at or below its threshold"})
		}
		if n.PercentageUsed >= 100 {
			h.Flags = append(h.Flags, result.HealthFlag{Name: "percentage_used", Count: uint64(n.PercentageUsed), Reason: "NVMe rated endurance used up"})
		}
	}
	p.health = append(p.health, h)
	return p, nil
}
