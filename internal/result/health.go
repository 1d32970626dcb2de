package result

import "time"

// Health is a storage device's SMART state at one moment, as smartctl read
// it. It is stored beside performance results so a slow disk can be told
// apart from a dying one.
type Health struct {
	ID     int64  `json:"id,omitempty"`
	RunID  string `json:"run_id"`
	Target string `json:"target"`
	// Device is the device smartctl read (/dev/sda), when known.
	Device   string `json:"device,omitempty"`
	Model    string `json:"model,omitempty"`
	Serial   string `json:"serial,omitempty"`
	Firmware string `json:"firmware,omitempty"`
	// Captured is when smartctl ran, when its output says so.
	Captured time.Time `json:"captured,omitzero"`
	// SelfAssessment is smartctl's overall verdict: "PASSED", "FAILED" or
	// empty when the output did not include it.
	SelfAssessment string           `json:"self_assessment,omitempty"`
	PowerOnHours   int64            `json:"power_on_hours,omitempty"`
	TemperatureC   int64            `json:"temperature_c,omitempty"`
	Attributes     []SMARTAttribute `json:"attributes"`
	// Flags are the findings that matter, each naming the attribute and why.
	Flags []HealthFlag `json:"flags"`
}

// Healthy reports whether nothing was flagged and the self-assessment did
// not fail.
func (h *Health) Healthy() bool {
	return len(h.Flags) == 0 && h.SelfAssessment != "FAILED"
}

// SMARTAttribute is one row of the ATA SMART attribute table.
type SMARTAttribute struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	Flag       string `json:"flag,omitempty"`
	Value      int    `json:"value"`
	Worst      int    `json:"worst"`
	Threshold  int    `json:"thresh"`
	Type       string `json:"type,omitempty"`
	Updated    string `json:"updated,omitempty"`
	WhenFailed string `json:"when_failed,omitempty"`
	// Raw is the raw value as smartctl printed it; RawValue its leading
	// integer (the whole 48-bit raw counter).
	Raw      string `json:"raw"`
	RawValue uint64 `json:"raw_value"`
	// Operations and Errors are set for attributes whose raw value packs two
	// counters (Seagate's Raw_Read_Error_Rate and Seek_Error_Rate: the low 32
	// bits count operations, the high 16 bits count errors).
	Operations *uint64 `json:"operations,omitempty"`
	Errors     *uint64 `json:"errors,omitempty"`
}

// HealthFlag is one finding about a device, e.g. reallocated sectors.
type HealthFlag struct {
	AttributeID int    `json:"attribute_id,omitempty"`
	Name        string `json:"name"`
	Count       uint64 `json:"count"`
	Reason      string `json:"reason"`
}
