package safety

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/execx"
)

// CmderFacts reads a block device where storbench reaches it only through
// a runner's connection (a Kubernetes pod with a Block-mode volume): its
// size (blockdev, or /sys where blockdev is missing), its first 5 MiB and
// last 1 MiB through dd, judged by the built-in check. It needs sh, dd,
// stat and cat in the image (busybox has them all).
type CmderFacts struct {
	Cmder execx.Cmder
}

var _ Facts = CmderFacts{}

// Spans of the device the built-in check reads: every detector looks in the
// first 4 MiB + 6 bytes (the last LUKS2 secondary header) or the last
// 768 KiB (the ZFS end labels).
const (
	headSpan = 5 << 20
	tailSpan = 1 << 20
	ddBlock  = 4096
)

// Device implements Facts. Mounts, holders and loop devices of the far side
// are not seen; the exclusive-open guard is the runner's to take.
func (f CmderFacts) Device(ctx context.Context, path string) (*Device, error) {
	out, err := execx.Output(f.Cmder.Command(ctx, "sh", "-c", sizeScript, "sh", path))
	if err != nil {
		return nil, fmt.Errorf("reading the size of %s: %w", path, err)
	}
	size, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("reading the size of %s: blockdev said %q", path, out)
	}
	d := &Device{Path: path, Name: path, SizeBytes: size}
	head, err := execx.Output(f.Cmder.Command(ctx, "dd", "if="+path, "bs="+strconv.Itoa(ddBlock), "count="+strconv.Itoa(headSpan/ddBlock)))
	if err != nil {
		return nil, fmt.Errorf("reading the start of %s: %w", path, err)
	}
	spans := []span{{0, head}}
	if size > headSpan {
		skip := (size - tailSpan) / ddBlock
		tail, err := execx.Output(f.Cmder.Command(ctx, "dd", "if="+path, "bs="+strconv.Itoa(ddBlock), "skip="+strconv.FormatInt(skip, 10)))
		if err != nil {
			return nil, fmt.Errorf("reading the end of %s: %w", path, err)
		}
		spans = append(spans, span{skip * ddBlock, tail})
	}
	found, err := detectMagic(&image{r: spansReader{spans}, size: size})
	for _, s := range found {
		d.Signatures = append(d.Signatures, s+" (built-in check)")
	}
	if err != nil {
		d.Unproven = append(d.Unproven, "reading the device for known signatures failed: "+err.Error())
	}
	d.Signature = strings.Join(d.Signatures, ", ")
	return d, nil
}

// sizeScript prints the size in bytes of the block device $1.
// Without blockdev it asks /sys, then /proc/partitions (1 KiB blocks).
const sizeScript = `if command -v blockdev >/dev/null 2>&1; then exec blockdev --getsize64 "$1"; fi
set -- $(stat -L -c '%t %T' "$1") || exit 1
maj=$((0x$1)) min=$((0x$2))
if [ -r /sys/dev/block/$maj:$min/size ]; then echo $(( $(cat /sys/dev/block/$maj:$min/size) * 512 )); exit; fi
while read -r a b blocks name; do
  if [ "$a" = "$maj" ] && [ "$b" = "$min" ]; then echo $((blocks * 1024)); exit; fi
done </proc/partitions
echo "no size for device $maj:$min in /sys or /proc/partitions" >&2; exit 1`

type span struct {
	off  int64
	data []byte
}

// spansReader reads from the spans fetched; anything else is an error, so
// a detector looking elsewhere proves nothing blank.
type spansReader struct{ spans []span }

func (r spansReader) ReadAt(p []byte, off int64) (int, error) {
	for _, s := range r.spans {
		if off >= s.off && off+int64(len(p)) <= s.off+int64(len(s.data)) {
			return copy(p, s.data[off-s.off:]), nil
		}
	}
	return 0, fmt.Errorf("bytes %d-%d were not fetched", off, off+int64(len(p)))
}

// CheckFresh decides whether writers may write to a volume storbench itself
// created for this run (a Kubernetes Block-mode PVC): no --destructive is
// needed, but a volume that is not blank (a retained or pre-provisioned
// volume with data) is refused like any device.
func CheckFresh(ctx context.Context, facts Facts, path string, writers []string) error {
	dev, err := facts.Device(ctx, path)
	if err != nil {
		return &Refusal{Device: path, Writers: writers, Rule: RuleUnknown, Msg: "cannot read what the volume holds: " + err.Error()}
	}
	what := fmt.Sprintf("workloads %s write to the new volume %s", strings.Join(writers, ", "), path)
	if reasons := dev.InUse(); len(reasons) > 0 {
		return &Refusal{Device: path, Writers: writers, Rule: RuleInUse, Reasons: append(reasons, dev.Unproven...),
			Msg: what + ", which already holds data (a retained or pre-provisioned volume?): storbench writes only to blank volumes"}
	}
	if len(dev.Unproven) > 0 {
		return &Refusal{Device: path, Writers: writers, Rule: RuleUnknown, Reasons: dev.Unproven, Msg: what + ", which storbench cannot prove blank"}
	}
	return nil
}
