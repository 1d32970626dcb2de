package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// StoredHealthText writes the device health records storbench health
// lists, or says how to store some when there are none.
func StoredHealthText(w io.Writer, hs []result.Health) error {
	if len(hs) == 0 {
		_, err := fmt.Fprintln(w, "No device health stored: import smartctl -a or smartctl --json output with storbench import.")
		return err
	}
	return HealthText(w, hs)
}

// HealthText writes device health records: identity, verdict, and the
// attributes that matter.
func HealthText(w io.Writer, hs []result.Health) error {
	for _, h := range hs {
		verdict := "healthy"
		if !h.Healthy() {
			verdict = "ATTENTION"
		}
		id := strings.TrimSpace(h.Model + " " + h.Serial)
		if id != "" && id != h.Target {
			id = " (" + id + ")"
		} else {
			id = ""
		}
		when := ""
		if !h.Captured.IsZero() {
			when = " at " + h.Captured.Format("2006-01-02 15:04 MST")
		}
		fmt.Fprintf(w, "Device health of %s%s%s: %s\n", h.Target, id, when, verdict)
		var facts []string
		if h.SelfAssessment != "" {
			facts = append(facts, "self-assessment "+h.SelfAssessment)
		}
		if h.PowerOnHours > 0 {
			facts = append(facts, fmt.Sprintf("%d power-on hours", h.PowerOnHours))
		}
		if h.TemperatureC > 0 {
			facts = append(facts, fmt.Sprintf("%d °C", h.TemperatureC))
		}
		if len(facts) > 0 {
			fmt.Fprintf(w, "  %s\n", strings.Join(facts, ", "))
		}
		attrs := append([]result.SMARTAttribute(nil), h.Attributes...)
		sort.Slice(attrs, func(i, j int) bool { return attrs[i].ID < attrs[j].ID })
		for _, a := range attrs {
			if a.Errors != nil && a.Operations != nil {
				advice := "healthy: the large raw value counts operations"
				if *a.Errors > 0 {
					advice = "watch whether the errors grow"
				}
				fmt.Fprintf(w, "  %3d %s: %d errors in %d operations (raw %d: Seagate's packed counters; %s)\n",
					a.ID, a.Name, *a.Errors, *a.Operations, a.RawValue, advice)
			}
		}
		if len(h.Flags) == 0 {
			fmt.Fprintln(w, "  nothing flagged: "+checked(h))
		}
		for _, fl := range h.Flags {
			if fl.AttributeID > 0 {
				fmt.Fprintf(w, "  ! %3d %s = %d: %s\n", fl.AttributeID, fl.Name, fl.Count, fl.Reason)
			} else {
				fmt.Fprintf(w, "  ! %s: %s\n", fl.Name, fl.Reason)
			}
		}
	}
	return nil
}

// checked says what a healthy record was checked for, by the kind of
// device its attributes show.
func checked(h result.Health) string {
	var ata, nvme, scsi bool
	for _, a := range h.Attributes {
		switch {
		case a.ID > 0:
			ata = true
		case a.Name == "critical_warning" || a.Name == "media_errors":
			nvme = true
		case a.Name == "grown_defect_list" || strings.HasPrefix(a.Name, "uncorrected_"):
			scsi = true
		}
	}
	var parts []string
	if ata {
		parts = append(parts, "no reallocated, pending or uncorrectable sectors, CRC errors or command timeouts")
	}
	if nvme {
		parts = append(parts, "no NVMe critical warning, media errors, spare below threshold, used-up endurance or frequent unsafe shutdowns")
	}
	if scsi {
		parts = append(parts, "no grown defects or uncorrected errors")
	}
	if len(parts) == 0 && h.SelfAssessment == "PASSED" {
		return "the self-assessment passed"
	}
	if len(parts) == 0 {
		return "no attribute to check in the output"
	}
	return strings.Join(parts, "; ")
}
