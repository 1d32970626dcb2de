package telemetry

import (
	"fmt"
	"strconv"

	"github.com/storbench/storbench/internal/result"
)

// LimitedByLink is a result capped by the link under its disk (PCIe, USB,
// an SD card's bus), as internal/sysfacts read it.
const LimitedByLink = "link"

// LinkCeilingShare is how close, in percent, a result's throughput must
// come to what the link under its disk allows for the link to be named.
const LinkCeilingShare = 85.0

// LinkCap names the link under the disk as what limited r when its
// throughput (reads and writes together) reached LinkCeilingShare% of
// the ceiling in its labels (result.LabelLinkCeilingBPS); nil otherwise.
// A link at its ceiling binds whatever the host's counters say, so the
// engine lets it replace Attribute's answer.
func LinkCap(r *result.Result) *result.Attribution {
	ceiling, err := strconv.ParseFloat(result.LabelLinkCeilingBPS.Of(r.Labels), 64)
	if err != nil || ceiling <= 0 {
		return nil
	}
	var bps float64
	for _, d := range r.Directions() {
		bps += d.BytesPerSec
	}
	share := bps / ceiling * 100
	if share < LinkCeilingShare {
		return nil
	}
	ev := fmt.Sprintf("%s; measured %.0f MB/s, %.0f%% of it", result.LabelLinkCeiling.Of(r.Labels), bps/1e6, share)
	if r.Bottleneck != nil && r.Bottleneck.LimitedBy != LimitedByUnclear {
		ev += "; the host's counters said " + r.Bottleneck.LimitedBy + ": " + r.Bottleneck.Evidence
	}
	return &result.Attribution{LimitedBy: LimitedByLink, Evidence: ev}
}
