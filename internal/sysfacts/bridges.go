package sysfacts

// Bridge is a USB storage bridge chip and what is known of it.
type Bridge struct {
	Chip string
	// Quirk is the known trouble, "" when none is recorded; Source says
	// where it is recorded.
	Quirk, Source string
}

const (
	unusualUAS = "Linux drivers/usb/storage/unusual_uas.h"
	uasDetect  = "Linux drivers/usb/storage/uas-detect.h"
	piForum    = "Raspberry Pi forums, \"If you have a Raspberry Pi 4 and are getting bad speeds transferring data to/from USB3.0 SSDs\" (viewtopic.php?t=245931)"
)

// bridges are common USB-SATA and USB-NVMe bridges by vendor:product.
var bridges = map[string]Bridge{
	"152d:0578": {Chip: "JMicron JMS567/JMS578", Quirk: "broken FUA (kernel quirk); UAS trouble on Raspberry Pi 4, often forced to usb-storage with usb-storage.quirks=152d:0578:u, which queues one command at a time", Source: unusualUAS + "; " + piForum},
	"152d:0567": {Chip: "JMicron JMS567", Quirk: "broken FUA, no REPORT OPCODES (kernel quirks)", Source: unusualUAS},
	"152d:0539": {Chip: "JMicron JMS539", Quirk: "no REPORT OPCODES (kernel quirk)", Source: unusualUAS},
	"152d:0583": {Chip: "JMicron JMS583 (USB-NVMe)", Source: "no quirk recorded in " + unusualUAS},
	"174c:55aa": {Chip: "ASMedia ASM1051E/ASM1053E/ASM1153E", Quirk: "the ASM1051 and early ASM1053 share this ID without working UAS: the kernel then falls back to usb-storage", Source: uasDetect + "; " + piForum},
	"174c:1153": {Chip: "ASMedia ASM1153", Source: "no quirk recorded in " + unusualUAS},
	"2109:0711": {Chip: "VIA VL711", Quirk: "no ATA-1x passthrough (kernel quirk)", Source: unusualUAS},
	"0bda:9210": {Chip: "Realtek RTL9210 (USB-NVMe)", Source: "no quirk recorded in " + unusualUAS},
	"13fd:3940": {Chip: "Initio INIC-3069", Quirk: "no ATA-1x passthrough, residue ignored (kernel quirks)", Source: unusualUAS},
}

// KnownBridge returns the table's entry for a vendor:product ID, nil when
// it has none.
func KnownBridge(id string) *Bridge {
	if b, ok := bridges[id]; ok {
		return &b
	}
	return nil
}
