#!/bin/sh
# Builds the network and thermal cases from the recorded /proc snapshots,
# adding the /sys files this VM does not have (a 1 Gbit/s NIC carrying an
# NFS mount; a Raspberry Pi's thermal zone, cpufreq policy and firmware
# get_throttled word) in the kernel's own formats. Run from testdata/.
set -eu
rm -rf network thermal-throttled thermal-freqdrop
for i in 0 1 2 3; do
	# network: an idle host whose eth0 moves ~112 MB/s of a 1 Gbit/s link.
	d=network/t$i
	mkdir -p "$d/proc/net" "$d/sys/class/net/eth0/statistics"
	cp -r unclear/t$i/proc/. "$d/proc/"
	printf 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\neth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\neth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n' > "$d/proc/net/route"
	echo 1000 > "$d/sys/class/net/eth0/speed"
	echo $((5000000000 + i * 112000000)) > "$d/sys/class/net/eth0/statistics/rx_bytes"
	echo $((900000000 + i * 2000000)) > "$d/sys/class/net/eth0/statistics/tx_bytes"

	# thermal-throttled: a busy Pi whose firmware reports throttling from t2.
	d=thermal-throttled/t$i
	mkdir -p "$d/sys/class/thermal/thermal_zone0" "$d/sys/devices/platform/soc/soc:firmware" "$d/sys/devices/system/cpu/cpufreq/policy0"
	cp -r cpu/t$i/proc "$d/"
	echo cpu-thermal > "$d/sys/class/thermal/thermal_zone0/type"
	echo $((78000 + i * 2000)) > "$d/sys/class/thermal/thermal_zone0/temp"
	echo 1800000 > "$d/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq"
	echo 1800000 > "$d/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq"
	if [ "$i" -ge 2 ]; then echo 60006 > "$d/sys/devices/platform/soc/soc:firmware/get_throttled"; else echo 0 > "$d/sys/devices/platform/soc/soc:firmware/get_throttled"; fi

	# thermal-freqdrop: a busy x86 box whose frequency sinks under load.
	d=thermal-freqdrop/t$i
	mkdir -p "$d/sys/class/thermal/thermal_zone0" "$d/sys/devices/system/cpu/cpufreq/policy0"
	cp -r cpu/t$i/proc "$d/"
	echo x86_pkg_temp > "$d/sys/class/thermal/thermal_zone0/type"
	echo $((90000 + i * 3000)) > "$d/sys/class/thermal/thermal_zone0/temp"
	echo 3600000 > "$d/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq"
	echo $((3400000 - i * 500000)) > "$d/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq"
done
