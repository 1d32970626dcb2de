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
// overall self-assessment, the ATA attribute table, the NVMe health log and
// the SCSI error counters. A file holding several smartctl outputs (a log
// of daily checks) gives one record per output, each with its time.
func parseSmartctl(data []byte) (*parsed, error) {
	p := &parsed{tool: "smartctl"}
	ls := lines(data)
	starts := []int{0}
	for i, line := range ls {
		if i > 0 && reSmartVersion.MatchString(line) {
			starts = append(starts, i)
		}
	}
	var firstErr *ParseError
	for k, s := range starts {
		end := len(ls)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		h, rows, err := smartctlRecord(ls[s:end], s, p)
		// A header such as "===== /dev/sda =====" before a smartctl banner
		// names the device of a multi-disk log.
		if err == nil && h.Device == "" && s > 0 {
			if m := reDeviceHeader.FindStringSubmatch(ls[s-1]); m != nil {
				h.Device, h.Target = m[1], m[1]
			}
		}
		if err != nil && k == 0 && len(starts) > 1 && !reSmartVersion.MatchString(ls[0]) {
			continue // notes before the first smartctl output
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if k > 0 || len(starts) > 1 {
				p.problems = append(p.problems, result.ImportProblem{Line: err.Line, Kind: result.ProblemSkipped, Msg: "smartctl output not read: " + err.Msg})
			}
			continue
		}
		p.rows += rows
		p.health = append(p.health, *h)
	}
	if len(p.health) == 0 {
		return nil, firstErr
	}
	return p, nil
}

var (
	reDeviceHeader = regexp.MustCompile(`^[=#*\- ]*(/dev/[\w/.-]+)[=#*\- ]*$`)
	reNVMeField    = regexp.MustCompile(`^(Critical Warning|Temperature|Available Spare|Available Spare Threshold|Percentage Used|Power Cycles|Power On Hours|Unsafe Shutdowns|Media and Data Integrity Errors|Error Information Log Entries):\s+(\S+)`)
	reSCSIDefects  = regexp.MustCompile(`^Elements in grown defect list:\s*(\d+)`)
	reSCSITemp     = regexp.MustCompile(`^Current Drive Temperature:\s*(\d+) C`)
	reSCSIHours    = regexp.MustCompile(`^\s*Accumulated power on time, hours:minutes (\d+):`)
	reSCSICounter  = regexp.MustCompile(`^(read|write|verify):\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s*$`)
)

// smartctlRecord reads one smartctl output; offset is the index of its
// first line in the file.
func smartctlRecord(ls []string, offset int, p *parsed) (*result.Health, int, *ParseError) {
	r := &smartReader{p: p}
	for i, line := range ls {
		if err := r.readLine(offset+i+1, line); err != nil {
			return nil, 0, err
		}
	}
	if len(r.h.Attributes) == 0 && r.h.SelfAssessment == "" && !r.nv.any() {
		return nil, 0, errAt(offset+1, 0, "expected smartctl's attribute table (\"ID# ATTRIBUTE_NAME ...\"), NVMe health log, SCSI error counters or self-assessment line, found none")
	}
	finishHealth(&r.h, r.family)
	r.nv.apply(&r.h)
	return &r.h, r.rows, nil
}

// smartReader reads one smartctl record line by line: the information
// section, the NVMe and SCSI logs, and the ATA attribute table.
type smartReader struct {
	p      *parsed
	h      result.Health
	nv     nvmeLog
	family string
	rows   int
	// inTable: inside the attribute table; brief: its "-f brief" layout.
	inTable, brief bool
}

func (r *smartReader) readLine(n int, line string) *ParseError {
	if m := reSmartVersion.FindStringSubmatch(line); m != nil {
		r.p.version = m[1]
		return nil
	}
	if m := reSmartCmd.FindStringSubmatch(line); m != nil && r.h.Device == "" {
		r.h.Device = m[1]
	}
	if m := reSmartInfo.FindStringSubmatch(line); m != nil {
		r.info(m[1], m[2])
		return nil
	}
	if m := reNVMeField.FindStringSubmatch(line); m != nil {
		v, ok := smartNumber(m[2])
		if !ok {
			return errAt(n, 0, "expected a number for %s, found %q", m[1], m[2])
		}
		r.nv.set(m[1], v)
		r.rows++
		return nil
	}
	if r.scsiLine(line) {
		return nil
	}
	if reSmartTable.MatchString(line) {
		r.inTable, r.brief = true, !strings.Contains(line, "TYPE")
		return nil
	}
	if !r.inTable {
		return nil
	}
	return r.tableRow(n, line)
}

// info reads a line of the information section: "Serial Number: ...".
func (r *smartReader) info(key, value string) {
	switch key {
	case "Model Family":
		r.family = value
	case "Device Model", "Model Number", "Product":
		r.h.Model = value
	case "Serial Number":
		r.h.Serial = value
	case "Firmware Version":
		r.h.Firmware = value
	case "Local Time is":
		for _, layout := range []string{"Mon Jan _2 15:04:05 2006 MST", "Mon Jan _2 15:04:05 2006 -0700", "Mon Jan _2 15:04:05 2006"} {
			if t, err := time.Parse(layout, value); err == nil {
				r.h.Captured = t
				break
			}
		}
	default:
		if w := strings.Fields(value); len(w) > 0 {
			r.h.SelfAssessment = w[0]
		}
		if r.h.SelfAssessment == "OK" {
			r.h.SelfAssessment = "PASSED"
		}
	}
}

// scsiLine reads a line of a SCSI device's report (defects, temperature,
// hours, error counters) and reports whether it was one.
func (r *smartReader) scsiLine(line string) bool {
	if m := reSCSIDefects.FindStringSubmatch(line); m != nil {
		v, _ := strconv.ParseUint(m[1], 10, 64)
		r.nv.scsi, r.nv.defects = true, &v
		r.rows++
		return true
	}
	if m := reSCSITemp.FindStringSubmatch(line); m != nil {
		r.h.TemperatureC, _ = strconv.ParseInt(m[1], 10, 64)
		return true
	}
	if m := reSCSIHours.FindStringSubmatch(line); m != nil {
		r.h.PowerOnHours, _ = strconv.ParseInt(m[1], 10, 64)
		return true
	}
	if m := reSCSICounter.FindStringSubmatch(line); m != nil {
		v, _ := strconv.ParseUint(m[8], 10, 64)
		r.nv.scsi = true
		r.nv.uncorrected = append(r.nv.uncorrected, scsiCounter{m[1], v})
		r.rows++
		return true
	}
	return false
}

// tableRow reads a row of the ATA attribute table; a blank line after
// rows ends the table.
func (r *smartReader) tableRow(n int, line string) *ParseError {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "|") {
		if t == "" && len(r.h.Attributes) > 0 {
			r.inTable = false
		}
		return nil
	}
	var a result.SMARTAttribute
	if r.brief {
		m := reSmartRowBrief.FindStringSubmatch(line)
		if m == nil {
			return errAt(n, 0, "expected an attribute row \"ID NAME FLAGS VALUE WORST THRESH FAIL RAW_VALUE\", found %q", t)
		}
		a = smartAttr(m[1], m[2], m[3], m[4], m[5], m[6], "", "", m[7], m[8])
	} else {
		m := reSmartRowLong.FindStringSubmatch(line)
		if m == nil {
			return errAt(n, 0, "expected an attribute row \"ID# ATTRIBUTE_NAME FLAG VALUE WORST THRESH TYPE UPDATED WHEN_FAILED RAW_VALUE\", found %q", t)
		}
		a = smartAttr(m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10])
	}
	if a.ID <= 0 || a.ID > 255 {
		return errAt(n, 0, "expected an attribute ID from 1 to 255, found %d", a.ID)
	}
	r.h.Attributes = append(r.h.Attributes, a)
	r.rows++
	return nil
}

// smartNumber reads "0x04", "2,354,229,498", "100%", "32".
func smartNumber(s string) (uint64, bool) {
	s = strings.TrimSuffix(strings.ReplaceAll(s, ",", ""), "%")
	if strings.HasPrefix(s, "0x") {
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return v, err == nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

type scsiCounter struct {
	op    string
	count uint64
}

// nvmeLog holds the NVMe health log and SCSI error counters of a record;
// nil fields were not in the output.
type nvmeLog struct {
	critical, temp, spare, spareThresh, used, cycles, hours, unsafe, media, errLog *uint64
	scsi                                                                           bool
	defects                                                                        *uint64
	uncorrected                                                                    []scsiCounter
}

func (l *nvmeLog) any() bool { return l.critical != nil || l.media != nil || l.scsi }

func (l *nvmeLog) set(field string, v uint64) {
	p := &v
	switch field {
	case "Critical Warning":
		l.critical = p
	case "Temperature":
		l.temp = p
	case "Available Spare":
		l.spare = p
	case "Available Spare Threshold":
		l.spareThresh = p
	case "Percentage Used":
		l.used = p
	case "Power Cycles":
		l.cycles = p
	case "Power On Hours":
		l.hours = p
	case "Unsafe Shutdowns":
		l.unsafe = p
	case "Media and Data Integrity Errors":
		l.media = p
	case "Error Information Log Entries":
		l.errLog = p
	}
}

// criticalWarningBits names the NVMe critical warning bits (NVMe base
// specification, SMART / Health Information log, byte 0).
var criticalWarningBits = []string{
	"available spare capacity has fallen below the threshold",
	"temperature is outside its thresholds",
	"NVM subsystem reliability is degraded (media or internal errors)",
	"media has been placed in read-only mode",
	"volatile memory backup device has failed",
	"persistent memory region has become read-only or unreliable",
}

// apply records the NVMe/SCSI figures on h and flags what matters.
func (l *nvmeLog) apply(h *result.Health) {
	attr := func(name string, v *uint64) {
		if v != nil {
			h.Attributes = append(h.Attributes, result.SMARTAttribute{Name: name, Raw: strconv.FormatUint(*v, 10), RawValue: *v})
		}
	}
	for _, a := range []struct {
		name string
		v    *uint64
	}{{"critical_warning", l.critical}, {"available_spare", l.spare}, {"available_spare_threshold", l.spareThresh},
		{"percentage_used", l.used}, {"power_cycles", l.cycles}, {"unsafe_shutdowns", l.unsafe},
		{"media_errors", l.media}, {"num_err_log_entries", l.errLog}, {"grown_defect_list", l.defects}} {
		attr(a.name, a.v)
	}
	if l.hours != nil && h.PowerOnHours == 0 {
		h.PowerOnHours = int64(*l.hours)
	}
	if l.temp != nil && h.TemperatureC == 0 {
		h.TemperatureC = int64(*l.temp)
	}
	flag := func(name string, count uint64, reason string) {
		h.Flags = append(h.Flags, result.HealthFlag{Name: name, Count: count, Reason: reason})
	}
	if c := l.critical; c != nil && *c != 0 {
		for bit, why := range criticalWarningBits {
			if *c&(1<<bit) != 0 {
				flag("critical_warning", *c, fmt.Sprintf("NVMe critical warning 0x%02x, bit %d: %s", *c, bit, why))
			}
		}
		if *c>>len(criticalWarningBits) != 0 {
			flag("critical_warning", *c, fmt.Sprintf("NVMe critical warning 0x%02x: reserved bits set", *c))
		}
	}
	if l.media != nil && *l.media > 0 {
		flag("media_errors", *l.media, fmt.Sprintf("%d NVMe media and data integrity errors: unrecovered data errors", *l.media))
	}
	if l.spare != nil && l.spareThresh != nil && *l.spareThresh > 0 && *l.spare < *l.spareThresh {
		flag("available_spare", *l.spare, fmt.Sprintf("NVMe available spare %d%% is below its threshold %d%%", *l.spare, *l.spareThresh))
	}
	if l.used != nil && *l.used >= 100 {
		flag("percentage_used", *l.used, fmt.Sprintf("NVMe percentage used %d%%: the rated endurance is used up", *l.used))
	}
	if l.unsafe != nil && *l.unsafe >= unsafeShutdownsMin && (l.cycles == nil || float64(*l.unsafe) >= unsafeShutdownsShare*float64(*l.cycles)) {
		flag("unsafe_shutdowns", *l.unsafe, fmt.Sprintf("%d unsafe shutdowns (power lost without a flush) of %s power cycles: check the power supply", *l.unsafe, countOr(l.cycles)))
	}
	if l.defects != nil && *l.defects > 0 {
		flag("grown_defect_list", *l.defects, fmt.Sprintf("%d elements in the SCSI grown defect list: sectors remapped since manufacture", *l.defects))
	}
	for _, c := range l.uncorrected {
		v := c.count
		attr("uncorrected_"+c.op+"_errors", &v)
		if c.count > 0 {
			flag("uncorrected_"+c.op+"_errors", c.count, fmt.Sprintf("%d SCSI %s errors the drive could not correct", c.count, c.op))
		}
	}
}

// Unsafe shutdowns are flagged from this many, and when they are at least
// this share of all power cycles: a few are ordinary (a pulled plug), a
// drive that loses power unflushed on most cycles risks its data.
const (
	unsafeShutdownsMin   = 10
	unsafeShutdownsShare = 0.5
)

func countOr(v *uint64) string {
	if v == nil {
		return "an unknown number of"
	}
	return strconv.FormatUint(*v, 10)
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
		Version  []int `json:"version"`
		Messages []struct {
			String string `json:"string"`
		} `json:"messages"`
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
		CriticalWarning *uint64 `json:"critical_warning"`
		Temperature     *uint64 `json:"temperature"`
		AvailableSpare  *uint64 `json:"available_spare"`
		SpareThreshold  *uint64 `json:"available_spare_threshold"`
		PercentageUsed  *uint64 `json:"percentage_used"`
		PowerCycles     *uint64 `json:"power_cycles"`
		PowerOnHours    *uint64 `json:"power_on_hours"`
		UnsafeShutdowns *uint64 `json:"unsafe_shutdowns"`
		MediaErrors     *uint64 `json:"media_errors"`
		ErrLogEntries   *uint64 `json:"num_err_log_entries"`
	} `json:"nvme_smart_health_information_log"`
	SCSIDefects *uint64 `json:"scsi_grown_defect_list"`
	SCSIErrors  map[string]struct {
		Uncorrected *uint64 `json:"total_uncorrected_errors"`
	} `json:"scsi_error_counter_log"`
}

// parseSmartctlJSON reads smartctl --json (-j) output of ATA, NVMe and
// SCSI devices; several documents in one file are several records.
func parseSmartctlJSON(data []byte) (*parsed, error) {
	p := &parsed{tool: "smartctl"}
	pos := 0
	var firstErr error
	for pos < len(data) {
		start := nextObjectStart(data, pos)
		if start < 0 && pos == 0 {
			start = bytes.IndexByte(data, '{')
		}
		if start < 0 {
			break
		}
		var s smartJSON
		dec := json.NewDecoder(bytes.NewReader(data[start:]))
		if err := dec.Decode(&s); err != nil {
			err = jsonError(data, start, err, "smartctl --json output")
			if pe := toParseError(err); strings.Contains(pe.Msg, "cut") {
				p.problems = append(p.problems, result.ImportProblem{Line: pe.Line, Kind: result.ProblemCut, Msg: pe.Msg})
			} else if len(p.health) > 0 {
				p.problems = append(p.problems, result.ImportProblem{Line: pe.Line, Kind: result.ProblemSkipped, Msg: pe.Msg})
			}
			if firstErr == nil {
				firstErr = err
			}
			break
		}
		pos = start + int(dec.InputOffset())
		if s.Smartctl == nil && s.Device.Name == "" && s.ATA == nil && s.NVMe == nil && s.SCSIDefects == nil && s.SCSIErrors == nil {
			if firstErr == nil {
				firstErr = errAt(lineOf(data, start), 0, `expected smartctl --json output with "smartctl" and "ata_smart_attributes", "nvme_smart_health_information_log" or "scsi_error_counter_log", found other JSON`)
			}
			continue
		}
		if s.ATA == nil && s.NVMe == nil && s.SCSIDefects == nil && s.SCSIErrors == nil && s.SmartStatus == nil {
			why := "no SMART data in it"
			if s.Smartctl != nil && len(s.Smartctl.Messages) > 0 {
				why = "smartctl said: " + s.Smartctl.Messages[0].String
			}
			pe := errAt(lineOf(data, start), 0, "expected SMART data in the smartctl --json output, found %s", why)
			p.problems = append(p.problems, result.ImportProblem{Line: pe.Line, Kind: result.ProblemSkipped, Msg: pe.Msg})
			if firstErr == nil {
				firstErr = pe
			}
			continue
		}
		p.health = append(p.health, smartJSONHealth(&s, p))
	}
	if len(p.health) == 0 {
		if firstErr == nil {
			firstErr = errAt(1, 0, "expected smartctl --json output (a JSON object), found none")
		}
		return nil, firstErr
	}
	return p, nil
}

func smartJSONHealth(s *smartJSON, p *parsed) result.Health {
	if s.Smartctl != nil && len(s.Smartctl.Version) >= 2 {
		p.version = fmt.Sprintf("%d.%d", s.Smartctl.Version[0], s.Smartctl.Version[1])
	}
	h := result.Health{Device: s.Device.Name, Model: s.ModelName, Serial: s.SerialNumber, Firmware: s.Firmware,
		PowerOnHours: s.PowerOnTime.Hours, TemperatureC: s.Temperature.Current}
	if s.LocalTime.TimeT > 0 {
		h.Captured = time.Unix(s.LocalTime.TimeT, 0).UTC()
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
	if s.Temperature.Current > 0 {
		h.TemperatureC = s.Temperature.Current // smartctl's own reading wins over attribute 194
	}
	var l nvmeLog
	if n := s.NVMe; n != nil {
		p.rows++
		l = nvmeLog{critical: n.CriticalWarning, temp: n.Temperature, spare: n.AvailableSpare, spareThresh: n.SpareThreshold,
			used: n.PercentageUsed, cycles: n.PowerCycles, hours: n.PowerOnHours, unsafe: n.UnsafeShutdowns, media: n.MediaErrors, errLog: n.ErrLogEntries}
	}
	if s.SCSIDefects != nil || s.SCSIErrors != nil {
		p.rows++
		l.scsi, l.defects = true, s.SCSIDefects
		for _, op := range []string{"read", "write", "verify"} {
			if e, ok := s.SCSIErrors[op]; ok && e.Uncorrected != nil {
				l.uncorrected = append(l.uncorrected, scsiCounter{op, *e.Uncorrected})
			}
		}
	}
	l.apply(&h)
	return h
}
