// Package sysfacts reads the link and the settings behind a storage
// device from a host's /sys, as the kernel's sysfs ABI documents them
// (Documentation/ABI/testing/sysfs-bus-pci, sysfs-bus-usb,
// sysfs-class-net, sysfs-devices-system-cpu, sysfs-block): the PCIe link
// of the device or its host controller (speed and width now against the
// most the device can do), a USB device's speed, the driver of its storage
// interface (uas or usb-storage) and its bridge chip, an SD card or eMMC,
// the NIC of the host's default route (speed, duplex), the CPU frequency
// governor and the device's I/O scheduler. It turns them into labels and
// into the throughput the slowest link allows (Facts.Ceiling). It reads
// this host's /sys directly (Dir) or another host's through a shell
// script's output (Script, ParseSnapshot); nothing here runs or prints.
package sysfacts

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// PayloadShare is the share of a PCIe or USB link's line rate, after its
// line code, that carries data: packet headers, flow control and
// acknowledgements take the rest. About 80% for PCIe with 128- to
// 256-byte payloads, and as much as bulk USB 3 reaches with UAS.
const PayloadShare = 0.80

// Facts are the links and settings behind one disk.
type Facts struct {
	// Disk is the whole disk read ("nvme0n1", "sda", "mmcblk0").
	Disk string
	// Bus is how the disk is attached: "nvme", "usb", "sd", "mmc",
	// "virtio", "ata", "scsi" or "" when unknown.
	Bus string
	// PCIe is the nearest PCIe link above the disk: the NVMe drive's own,
	// or a USB or SATA host controller's; nil when there is none.
	PCIe *PCIeLink
	// USB is the USB device carrying the disk; nil when it is not USB.
	USB *USBLink
	// Card is an SD card or eMMC; nil otherwise.
	Card *Card
	// NIC is the network interface of the host's default route.
	NIC *NIC
	// Governor is the CPU frequency governor of cpu0, "" without cpufreq.
	Governor string
	// Scheduler is the disk's I/O scheduler in use ("none", "mq-deadline").
	Scheduler string
}

// PCIeLink is a PCIe link now and at most (current_link_* and max_link_*).
type PCIeLink struct {
	// Device is the PCI address and vendor:device of the link's device.
	Device, ID string
	// Speed is in GT/s per lane; Width is in lanes.
	Speed, MaxSpeed float64
	Width, MaxWidth int
}

// USBLink is the USB device holding a disk.
type USBLink struct {
	ID string // vendor:product, e.g. "152d:0578"
	// SpeedMbps is the signalling rate (480, 5000, 10000, 20000).
	SpeedMbps int
	// Driver is the storage interface's driver: "uas" or "usb-storage".
	Driver             string
	Manufacturer, Name string
	// Bridge is the chip's entry in the known-bridges table, nil when it
	// is not in it.
	Bridge *Bridge
}

// Card is an SD card or eMMC (the MMC bus).
type Card struct {
	Type string // "SD", "MMC" (eMMC) or "SDIO"
	Name string // the card's product name
	// Host is the MMC host controller's driver ("sdhci-iproc" on a
	// Raspberry Pi 4).
	Host string
}

// NIC is a network interface's link.
type NIC struct {
	Name      string
	SpeedMbps int    // 0 when the kernel does not know (virtual, Wi-Fi, down)
	Duplex    string // "full", "half" or "" when unknown
	Virtual   bool   // under /sys/devices/virtual (a bridge, veth, bond)
}

// Read reads the facts of disk (a whole disk's name; "" for none) and
// of the interface iface ("" for none) from t.
func Read(t Tree, disk, iface string) Facts {
	f := Facts{Disk: disk, Governor: t.Read("devices/system/cpu/cpu0/cpufreq/scaling_governor")}
	if disk != "" {
		f.Scheduler = activeScheduler(t.Read("class/block/" + disk + "/queue/scheduler"))
		f.readDisk(t, disk)
	}
	if iface != "" {
		n := &NIC{Name: iface, Duplex: t.Read("class/net/" + iface + "/duplex")}
		if n.Duplex == "unknown" {
			n.Duplex = ""
		}
		if v, err := strconv.Atoi(t.Read("class/net/" + iface + "/speed")); err == nil && v > 0 {
			n.SpeedMbps = v
		}
		n.Virtual = strings.HasPrefix(t.Resolve("class/net/"+iface), "devices/virtual/")
		f.NIC = n
	}
	return f
}

// readDisk walks from the disk up its device path: the first USB device,
// MMC card and PCIe link on the way are the ones carrying it.
func (f *Facts) readDisk(t Tree, disk string) {
	dev := t.Resolve("class/block/" + disk)
	if dev == "" {
		return
	}
	switch {
	case strings.HasPrefix(disk, "nvme"):
		f.Bus = "nvme"
	case strings.HasPrefix(disk, "vd"):
		f.Bus = "virtio"
	}
	var usbIface string
	for p := path.Dir(dev); p != "devices" && p != "." && p != "/"; p = path.Dir(p) {
		base := path.Base(p)
		switch {
		case f.USB == nil && usbIface == "" && t.Read(p+"/bInterfaceProtocol") != "":
			usbIface = p
		case f.USB == nil && t.Read(p+"/idVendor") != "":
			f.USB = readUSB(t, p, usbIface)
			f.Bus = "usb"
		case f.Card == nil && t.Read(p+"/type") != "" && strings.HasPrefix(base, "mmc") && strings.Contains(base, ":"):
			f.Card = &Card{Type: t.Read(p + "/type"), Name: t.Read(p + "/name")}
			// mmc0:aaaa is under mmc_host/mmc0 under the controller.
			f.Card.Host = path.Base(t.Resolve(path.Dir(path.Dir(path.Dir(p))) + "/driver"))
			if f.Card.Host == "." {
				f.Card.Host = ""
			}
			f.Bus = map[string]string{"SD": "sd", "MMC": "mmc"}[f.Card.Type]
		case f.PCIe == nil && t.Read(p+"/current_link_speed") != "":
			f.PCIe = readPCIe(t, p)
		}
		if f.Bus == "" && strings.HasPrefix(base, "ata") {
			f.Bus = "ata"
		}
	}
	if f.Bus == "" && strings.Contains(dev, "/host") && strings.Contains(dev, "/target") {
		f.Bus = "scsi"
	}
}

func readUSB(t Tree, dir, iface string) *USBLink {
	u := &USBLink{ID: t.Read(dir+"/idVendor") + ":" + t.Read(dir+"/idProduct"),
		Manufacturer: t.Read(dir + "/manufacturer"), Name: t.Read(dir + "/product")}
	u.SpeedMbps, _ = strconv.Atoi(t.Read(dir + "/speed"))
	if iface != "" {
		if d := path.Base(t.Resolve(iface + "/driver")); d != "." {
			u.Driver = d
		}
	}
	u.Bridge = KnownBridge(u.ID)
	return u
}

func readPCIe(t Tree, dir string) *PCIeLink {
	l := &PCIeLink{Device: path.Base(dir), ID: strings.TrimPrefix(t.Read(dir+"/vendor"), "0x") + ":" + strings.TrimPrefix(t.Read(dir+"/device"), "0x")}
	l.Speed = gts(t.Read(dir + "/current_link_speed"))
	l.MaxSpeed = gts(t.Read(dir + "/max_link_speed"))
	l.Width, _ = strconv.Atoi(t.Read(dir + "/current_link_width"))
	l.MaxWidth, _ = strconv.Atoi(t.Read(dir + "/max_link_width"))
	return l
}

// gts reads "8.0 GT/s PCIe" (or the older "8 GT/s") as 8.
func gts(s string) float64 {
	f, _ := strconv.ParseFloat(strings.Fields(s + " 0")[0], 64)
	return f
}

// activeScheduler picks the bracketed name from "none [mq-deadline] bfq".
func activeScheduler(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// BytesPerSec is what the link carries in data: lanes times the line rate
// after the line code (8b/10b up to 5 GT/s, 128b/130b from 8 GT/s), times
// PayloadShare.
func (l *PCIeLink) BytesPerSec() float64 { return pcieBPS(l.Speed, l.Width) }

func pcieBPS(gt float64, lanes int) float64 {
	code := 128.0 / 130
	if gt <= 5 {
		code = 8.0 / 10
	}
	return gt * 1e9 * code / 8 * float64(lanes) * PayloadShare
}

// Reduced reports whether the link runs slower or narrower than it can.
func (l *PCIeLink) Reduced() bool {
	return (l.MaxSpeed > 0 && l.Speed < l.MaxSpeed) || (l.MaxWidth > 0 && l.Width < l.MaxWidth)
}

func (l *PCIeLink) String() string {
	s := fmt.Sprintf("%g GT/s x%d", l.Speed, l.Width)
	if l.Reduced() {
		s += fmt.Sprintf(" (capable of %g GT/s x%d)", l.MaxSpeed, l.MaxWidth)
	}
	return s
}

// BytesPerSec is what the USB link carries in data: the signalling rate
// after its line code (8b/10b at 5 Gbit/s, 128b/132b above; USB 2 has no
// such code but its bulk transfers top out near 53 MB/s of the 60 MB/s
// raw), times PayloadShare. 0 when the speed is unknown.
func (u *USBLink) BytesPerSec() float64 {
	switch {
	case u.SpeedMbps <= 0:
		return 0
	case u.SpeedMbps <= 480:
		return 53e6 * PayloadShare
	case u.SpeedMbps <= 5000:
		return float64(u.SpeedMbps) * 1e6 * 8 / 10 / 8 * PayloadShare
	}
	return float64(u.SpeedMbps) * 1e6 * 128 / 132 / 8 * PayloadShare
}

// BytesPerSec is the most an SD card's or eMMC's bus carries: UHS-I
// SDR104 (104 MB/s) for an SD card, HS400 (400 MB/s) for eMMC. The bus
// mode in use is not in sysfs (it is in debugfs, mmcN/ios), so this is an
// upper bound, not the link now.
func (c *Card) BytesPerSec() float64 {
	switch c.Type {
	case "SD":
		return 104e6
	case "MMC":
		return 400e6
	}
	return 0
}

// Ceiling is the throughput the slowest link under the disk allows and
// that link in words ("NVMe at 5 GT/s x1: the link allows about 400
// MB/s"); 0 and "" when no link is known.
func (f Facts) Ceiling() (bytesPerSec float64, words string) {
	pick := func(bps float64, w string) {
		if bps > 0 && (bytesPerSec == 0 || bps < bytesPerSec) {
			bytesPerSec, words = bps, w
		}
	}
	if f.PCIe != nil {
		what := "PCIe"
		switch {
		case f.Bus == "nvme":
			what = "NVMe"
		case f.USB != nil:
			what = "the USB host controller's PCIe"
		}
		pick(f.PCIe.BytesPerSec(), fmt.Sprintf("%s at %g GT/s x%d", what, f.PCIe.Speed, f.PCIe.Width))
	}
	if f.USB != nil {
		drv := ""
		if f.USB.Driver != "" {
			drv = " on " + f.USB.Driver
		}
		pick(f.USB.BytesPerSec(), fmt.Sprintf("USB at %s%s", usbSpeed(f.USB.SpeedMbps), drv))
	}
	if f.Card != nil {
		pick(f.Card.BytesPerSec(), fmt.Sprintf("%s card bus (at most %s)", f.Card.Type, map[string]string{"SD": "UHS-I SDR104", "MMC": "HS400"}[f.Card.Type]))
	}
	if bytesPerSec > 0 {
		words += fmt.Sprintf(": the link allows about %.0f MB/s", bytesPerSec/1e6)
	}
	return bytesPerSec, words
}

func usbSpeed(mbps int) string {
	if mbps >= 1000 {
		return fmt.Sprintf("%g Gbit/s", float64(mbps)/1000)
	}
	return fmt.Sprintf("%d Mbit/s", mbps)
}

// Labels returns the facts as labels (result.LabelKey constants); facts
// that are unknown are left out.
func (f Facts) Labels() map[string]string {
	l := map[string]string{}
	set := func(k result.LabelKey, v string) {
		if v != "" {
			k.Set(l, v)
		}
	}
	set(result.LabelBus, f.Bus)
	if f.PCIe != nil {
		set(result.LabelPCIeLink, fmt.Sprintf("%g GT/s x%d", f.PCIe.Speed, f.PCIe.Width))
		if f.PCIe.MaxSpeed > 0 {
			set(result.LabelPCIeLinkMax, fmt.Sprintf("%g GT/s x%d", f.PCIe.MaxSpeed, f.PCIe.MaxWidth))
		}
	}
	if u := f.USB; u != nil {
		if u.SpeedMbps > 0 {
			set(result.LabelUSBSpeed, strconv.Itoa(u.SpeedMbps))
		}
		set(result.LabelUSBDriver, u.Driver)
		bridge := u.ID
		if u.Bridge != nil {
			bridge += " " + u.Bridge.Chip
			set(result.LabelUSBBridgeQuirk, u.Bridge.Quirk)
		} else if n := strings.TrimSpace(u.Manufacturer + " " + u.Name); n != "" {
			bridge += " " + n
		}
		set(result.LabelUSBBridge, bridge)
	}
	if c := f.Card; c != nil {
		set(result.LabelCardType, c.Type)
		set(result.LabelCardHost, c.Host)
	}
	if n := f.NIC; n != nil {
		set(result.LabelNIC, n.Name)
		if n.SpeedMbps > 0 {
			set(result.LabelNICSpeed, strconv.Itoa(n.SpeedMbps))
		}
		set(result.LabelNICDuplex, n.Duplex)
	}
	set(result.LabelCPUGovernor, f.Governor)
	if bps, words := f.Ceiling(); bps > 0 {
		set(result.LabelLinkCeilingBPS, strconv.FormatFloat(bps, 'f', 0, 64))
		set(result.LabelLinkCeiling, words)
	}
	return l
}
