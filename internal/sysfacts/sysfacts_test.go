package sysfacts

import (
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtures are the trees testdata/craft.sh writes from the sysfs ABI
// documentation, with the disk and the default route's interface in each.
var fixtures = []struct{ name, disk, iface string }{
	{"nvme-x1", "nvme0n1", "eno1"},
	{"usb-sata", "sda", "eth0"},
	{"pi-sdcard", "mmcblk0", "wlan0"},
}

func labelLines(l map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(l)) {
		b.WriteString(k + "=" + l[k] + "\n")
	}
	return b.String()
}

// TestGolden reads each fixture tree directly and through the script a
// remote host runs; both give the golden labels.
func TestGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			root := filepath.Join("testdata", fx.name)
			got := labelLines(Read(Dir(root), fx.disk, fx.iface).Labels())
			golden := filepath.Join("testdata", fx.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("labels of %s:\n%s\nwant:\n%s", fx.name, got, want)
			}

			abs, err := filepath.Abs(root)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", Script, "sh", "", fx.disk)
			cmd.Env = append(os.Environ(), "STORBENCH_SYSROOT="+abs)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("script: %v", err)
			}
			snap := ParseSnapshot(out)
			if snap.Disk != fx.disk || snap.Interface != fx.iface {
				t.Fatalf("script found disk %q interface %q, want %q %q", snap.Disk, snap.Interface, fx.disk, fx.iface)
			}
			if remote := labelLines(Read(snap, snap.Disk, snap.Interface).Labels()); remote != got {
				t.Errorf("through the script:\n%s\ndirectly:\n%s", remote, got)
			}
		})
	}
}

func TestCeilings(t *testing.T) {
	cases := []struct {
		name  string
		f     Facts
		mbps  float64 // MB/s
		words string
	}{
		{"nvme 5 GT/s x1", Facts{Bus: "nvme", PCIe: &PCIeLink{Speed: 5, Width: 1}}, 400, "NVMe at 5 GT/s x1: the link allows about 400 MB/s"},
		{"nvme 8 GT/s x1 (7.877 Gb/s available)", Facts{Bus: "nvme", PCIe: &PCIeLink{Speed: 8, Width: 1}}, 787.7, "NVMe at 8 GT/s x1: the link allows about 788 MB/s"},
		{"usb 2 under a fast controller", Facts{Bus: "usb", PCIe: &PCIeLink{Speed: 5, Width: 1}, USB: &USBLink{SpeedMbps: 480, Driver: "usb-storage"}}, 42.4, "USB at 480 Mbit/s on usb-storage: the link allows about 42 MB/s"},
		{"sd card", Facts{Bus: "sd", Card: &Card{Type: "SD"}}, 104, "SD card bus (at most UHS-I SDR104): the link allows about 104 MB/s"},
		{"nothing known", Facts{}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bps, words := c.f.Ceiling()
			if d := bps/1e6 - c.mbps; d > 0.1 || d < -0.1 || words != c.words {
				t.Errorf("Ceiling() = %.1f MB/s %q, want %.1f %q", bps/1e6, words, c.mbps, c.words)
			}
		})
	}
}

// TestThisHost reads this machine's own /sys for the disk under the
// working directory, directly and through the script, and the two agree.
func TestThisHost(t *testing.T) {
	cmd := exec.Command("sh", "-c", Script, "sh", ".")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	snap := ParseSnapshot(out)
	direct := Read(Dir("/"), snap.Disk, snap.Interface)
	if snap.Disk != "" && direct.Scheduler == "" && Dir("/").Read("class/block/"+snap.Disk+"/queue/scheduler") != "" {
		t.Errorf("disk %s: no scheduler read", snap.Disk)
	}
	got, want := labelLines(Read(snap, snap.Disk, snap.Interface).Labels()), labelLines(direct.Labels())
	if got != want {
		t.Errorf("through the script:\n%s\ndirectly:\n%s", got, want)
	}
	t.Logf("this host: disk %q interface %q: %s", snap.Disk, snap.Interface, strings.ReplaceAll(want, "\n", "; "))
	if result.LabelBus.Of(direct.Labels()) == "" && snap.Disk != "" && !strings.HasPrefix(snap.Disk, "loop") && !strings.HasPrefix(snap.Disk, "zram") {
		t.Logf("disk %s: bus unknown", snap.Disk)
	}
}
