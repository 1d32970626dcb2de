#!/bin/sh
# craft.sh: writes the fixture /sys trees of the golden tests, laid out as
# the kernel's sysfs ABI documents them (Documentation/ABI/testing/
# sysfs-bus-pci: current_link_speed "8.0 GT/s PCIe", current_link_width;
# sysfs-bus-usb: speed in Mbit/s, idVendor, idProduct, the interface's
# bInterfaceProtocol (0x50 Bulk-Only, 0x62 UAS) and driver link;
# sysfs-bus-mmc-devices and sysfs-class-mmc: type, name; sysfs-class-net:
# speed in Mbit/s, duplex; sysfs-devices-system-cpu: scaling_governor;
# sysfs-block: queue/scheduler). Run from testdata/: sh craft.sh
set -e
w() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >"$1"; }
l() { mkdir -p "$(dirname "$1")"; ln -sfn "$2" "$1"; }
drivers() { for d in "$@"; do w "$S/bus/$d/uevent" ""; done; }
route() { w "$(dirname "$S")/proc/net/route" "$(printf 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n%s\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0' "$1")"; }

# An NVMe drive that can do 8 GT/s x4 trained at 5 GT/s x1 (a riser, a
# slot sharing its lanes), on a desktop with the performance governor.
rm -rf nvme-x1; S=nvme-x1/sys
P=devices/pci0000:00/0000:00:1d.0/0000:3d:00.0
drivers pci/drivers/nvme pci/drivers/pcieport
w $S/$P/current_link_speed "5.0 GT/s PCIe"; w $S/$P/current_link_width 1
w $S/$P/max_link_speed "8.0 GT/s PCIe"; w $S/$P/max_link_width 4
w $S/$P/vendor 0x144d; w $S/$P/device 0xa808
l $S/$P/driver ../../../../bus/pci/drivers/nvme
w $S/devices/pci0000:00/0000:00:1d.0/current_link_speed "5.0 GT/s PCIe"
w $S/devices/pci0000:00/0000:00:1d.0/current_link_width 1
w $S/$P/nvme/nvme0/model "Samsung SSD 970 EVO Plus 1TB"
w $S/$P/nvme/nvme0/nvme0n1/queue/scheduler "[none] mq-deadline kyber bfq"
w $S/$P/nvme/nvme0/nvme0n1/queue/rotational 0
l $S/$P/nvme/nvme0/nvme0n1/device ..
l $S/class/block/nvme0n1 ../../$P/nvme/nvme0/nvme0n1
N=devices/pci0000:00/0000:00:1f.6/net/eno1
w $S/$N/speed 1000; w $S/$N/duplex full
l $S/class/net/eno1 ../../$N
route eno1
w $S/devices/system/cpu/cpu0/cpufreq/scaling_governor performance

# A Raspberry Pi 4's USB 3 port (the VL805 controller on a 5 GT/s x1
# PCIe link) with a JMicron USB-SATA bridge forced to usb-storage.
rm -rf usb-sata; S=usb-sata/sys
C=devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0
drivers pci/drivers/xhci_hcd usb/drivers/usb-storage platform/drivers/bcmgenet
w $S/$C/current_link_speed "5.0 GT/s PCIe"; w $S/$C/current_link_width 1
w $S/$C/max_link_speed "5.0 GT/s PCIe"; w $S/$C/max_link_width 1
w $S/$C/vendor 0x1106; w $S/$C/device 0x3483
l $S/$C/driver ../../../../../../../bus/pci/drivers/xhci_hcd
U=$C/usb2/2-2
w $S/$C/usb2/idVendor 1d6b; w $S/$C/usb2/idProduct 0003; w $S/$C/usb2/speed 5000
w $S/$U/idVendor 152d; w $S/$U/idProduct 0578; w $S/$U/speed 5000
w $S/$U/manufacturer JMicron; w $S/$U/product "USB to ATA/ATAPI Bridge"
w $S/$U/2-2:1.0/bInterfaceProtocol 50
l $S/$U/2-2:1.0/driver ../../../../../../../../../../bus/usb/drivers/usb-storage
B=$U/2-2:1.0/host0/target0:0:0/0:0:0:0/block/sda
w $S/$U/2-2:1.0/host0/target0:0:0/0:0:0:0/model "CT500MX500SSD1"
w $S/$B/queue/scheduler "none [mq-deadline] kyber bfq"
w $S/$B/queue/rotational 0
l $S/$B/device ../../../0:0:0:0
w $S/$B/sda2/partition 2
l $S/class/block/sda ../../$C/usb2/2-2/2-2:1.0/host0/target0:0:0/0:0:0:0/block/sda
N=devices/platform/scb/fd580000.ethernet/net/eth0
w $S/$N/speed 1000; w $S/$N/duplex full
l $S/class/net/eth0 ../../$N
route eth0
w $S/devices/system/cpu/cpu0/cpufreq/scaling_governor ondemand

# A Raspberry Pi 4's SD card on its Arasan/iProc SDHCI controller, Wi-Fi
# as the default route (no link speed).
rm -rf pi-sdcard; S=pi-sdcard/sys
H=devices/platform/emmc2bus/fe340000.mmc
drivers platform/drivers/sdhci-iproc mmc/drivers/mmcblk
l $S/$H/driver ../../../../bus/platform/drivers/sdhci-iproc
M=$H/mmc_host/mmc0/mmc0:aaaa
w $S/$M/type SD; w $S/$M/name SC64G; w $S/$M/manfid 0x000003; w $S/$M/oemid 0x5344
l $S/$M/driver ../../../../../../../bus/mmc/drivers/mmcblk
w $S/$M/block/mmcblk0/queue/scheduler "[mq-deadline] kyber none"
w $S/$M/block/mmcblk0/queue/rotational 0
w $S/$M/block/mmcblk0/mmcblk0p2/partition 2
l $S/class/block/mmcblk0 ../../$M/block/mmcblk0
N=devices/platform/soc/fe300000.mmcnr/mmc_host/mmc1/mmc1:0001/mmc1:0001:1/net/wlan0
w $S/$N/duplex unknown
l $S/class/net/wlan0 ../../$N
route wlan0
w $S/devices/system/cpu/cpu0/cpufreq/scaling_governor ondemand
