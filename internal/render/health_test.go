package render

import (
	"bytes"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// Records from real smartctl outputs: ATA, a failing Seagate, NVMe and
// SCSI, healthy and not.
func TestHealthText(t *testing.T) {
	var hs []result.Health
	for _, name := range []string{"smartctl-attributes-seagate.txt", "smartctl-seagate-failing.txt", "smartctl-seagate.json",
		"corpus/scrutiny-smart-nvme.json", "corpus/scrutiny-smart-nvme-failed.json", "corpus/shared-scrutiny-scsi-seagate.json"} {
		f, _ := parsed(t, name, false)
		if len(f.Health) == 0 {
			t.Fatalf("%s: no health record", name)
		}
		hs = append(hs, f.Health...)
	}
	var out bytes.Buffer
	if err := Formatted(&out, "table", hs, StoredHealthText); err != nil {
		t.Fatal(err)
	}
	golden(t, "health.txt", out.Bytes())

	out.Reset()
	if err := StoredHealthText(&out, []result.Health{}); err != nil {
		t.Fatal(err)
	}
	if want := "No device health stored: import smartctl -a or smartctl --json output with storbench import.\n"; out.String() != want {
		t.Errorf("no records: %q", out.String())
	}
}
