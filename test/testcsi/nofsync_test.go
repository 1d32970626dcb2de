package testcsi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// no-fsync: the volume is published through an overlay mounted volatile
// (every sync skipped), and its data still moves with it between nodes.
func TestNoFsyncModePublishesAVolatileOverlay(t *testing.T) {
	r := newRig(t, nil)
	v := r.mustCreate(t, volumeSpec{name: "pvc-nofsync", mode: ModeNoFsync, size: 32 << 20})
	mnt := r.use(t, v.GetVolumeId(), "node-a", mountCap("", ""))
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(info), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[4] == mnt {
			line = l
		}
	}
	if !strings.Contains(line, " - overlay ") || !strings.Contains(line, "volatile") {
		t.Fatalf("published %s as %q, want an overlay mounted volatile", mnt, line)
	}
	data := writeRandom(t, filepath.Join(mnt, "kept"), 8192)
	r.release(t, v.GetVolumeId(), "node-a")
	sameFile(t, filepath.Join(r.use(t, v.GetVolumeId(), "node-b", mountCap("", "")), "kept"), data)
}
