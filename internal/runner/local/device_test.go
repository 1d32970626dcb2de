package local

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/internal/testenv"
)

// TestExclusiveHoldLastsUntilCleanup: while a prepared device target is
// held, tools that open it exclusively (mkfs, mount, swapon) fail; after
// Cleanup they work.
func TestExclusiveHoldLastsUntilCleanup(t *testing.T) {
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs", "mkfs")
	dev := testenv.LoopDevice(t, 32<<20)
	p, err := NewTarget(dev, Options{Destructive: []string{dev}}).Prepare(context.Background(), writeNeed("hold"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use") {
		t.Errorf("mkfs.ext4 on a held device: %v %s", err, out)
	}
	if err := p.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	safetytest.Run(t, "mkfs.ext4", "-q", "-F", dev)
}

// TestReadOnlyDeviceServesReadsOnly: a device the kernel marks read-only
// may be read, and any write workload is refused in Check, before the run.
func TestReadOnlyDeviceServesReadsOnly(t *testing.T) {
	testenv.Loop(t)
	var c safetytest.Case
	for _, k := range safetytest.Cases() {
		if k.Name == "read-only-blank" {
			c = k
		}
	}
	dev := c.Device(t)
	tgt := NewTarget(dev, Options{Destructive: []string{dev}})
	if err := tgt.Check(context.Background(), runner.Need{RunID: "r", FileSize: 8 << 20}); err != nil {
		t.Errorf("read workloads on a read-only device: %v", err)
	}
	err := tgt.Check(context.Background(), writeNeed("r"))
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "blockdev --setrw") {
		t.Errorf("write workloads on a read-only device: %v", err)
	}
}

// TestDeviceMountedBetweenCheckAndPrepare: Check passes on a blank device,
// then something mounts it where storbench cannot see (another mount
// namespace, magic erased); Prepare's exclusive open refuses it.
func TestDeviceMountedBetweenCheckAndPrepare(t *testing.T) {
	dev := testenv.LoopDevice(t, 64<<20)
	tgt := NewTarget(dev, Options{Destructive: []string{dev}})
	if err := tgt.Check(context.Background(), writeNeed("race")); err != nil {
		t.Fatalf("blank device: %v", err)
	}
	safetytest.MountHiddenAndUnsigned(t, dev)
	before := safetytest.Sum(t, dev)
	p, err := tgt.Prepare(context.Background(), writeNeed("race"))
	if err == nil {
		p.Cleanup(context.Background())
		t.Fatal("Prepare accepted a device mounted since Check")
	}
	if !strings.Contains(err.Error(), "exclusive open (EBUSY)") {
		t.Errorf("Prepare: %v", err)
	}
	if left := openFDs(dev); len(left) > 0 {
		t.Errorf("left open: %v", left)
	}
	if after := safetytest.Sum(t, dev); after != before {
		t.Errorf("device changed: sha256 %s -> %s", before, after)
	}
}
