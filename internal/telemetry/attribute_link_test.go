package telemetry

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/sysfacts"
)

func TestLinkCap(t *testing.T) {
	nvme := sysfacts.Facts{Bus: "nvme", PCIe: &sysfacts.PCIeLink{Speed: 5, Width: 1, MaxSpeed: 8, MaxWidth: 4}}.Labels()
	for _, c := range []struct {
		name string
		bps  float64
		want string
	}{
		{"at the link", 390e6, "NVMe at 5 GT/s x1: the link allows about 400 MB/s; measured 390 MB/s, 98% of it"},
		{"well below it", 200e6, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &result.Result{Labels: nvme, Read: &result.Direction{BytesPerSec: c.bps, TotalIOs: 1}}
			a := LinkCap(r)
			switch {
			case c.want == "" && a != nil:
				t.Errorf("LinkCap = %+v, want nil", a)
			case c.want != "" && (a == nil || a.LimitedBy != LimitedByLink || !strings.HasPrefix(a.Evidence, c.want)):
				t.Errorf("LinkCap = %+v, want link: %s", a, c.want)
			}
		})
	}
}
