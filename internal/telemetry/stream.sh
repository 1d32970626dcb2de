# stream.sh INTERVAL: the host's counters for telemetry, every INTERVAL
# seconds, as frames: "== FILE" before each file's content, "==" after
# the last (see sampler.go). Files that do not exist are left out.
# Network: the routes and the counters of the interfaces that can carry
# network storage (not loopback, container or bridge ports, of which a k3s
# node has dozens). Throttling: the firmware's sysfs file, else vcgencmd
# (older Raspberry Pi kernels), framed as that file.
i=$1
throttled=/sys/devices/platform/soc/soc:firmware/get_throttled
vcgencmd=
if [ ! -r "$throttled" ] && command -v vcgencmd >/dev/null 2>&1; then
	vcgencmd=$(command -v vcgencmd)
fi
while :; do
	for f in /proc/stat /proc/diskstats /proc/pressure/io \
		/sys/class/thermal/thermal_zone*/temp /sys/class/thermal/thermal_zone*/type \
		/sys/devices/system/cpu/cpufreq/policy[0-9]*/scaling_cur_freq \
		/sys/devices/system/cpu/cpufreq/policy[0-9]*/cpuinfo_max_freq \
		/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq \
		/sys/devices/system/cpu/cpu[0-9]*/cpufreq/cpuinfo_max_freq \
		"$throttled" /proc/net/route \
		/sys/class/net/*/statistics/rx_bytes /sys/class/net/*/statistics/tx_bytes /sys/class/net/*/speed; do
		case $f in
		/sys/class/net/lo/* | /sys/class/net/veth* | /sys/class/net/cali* | /sys/class/net/lxc* | \
			/sys/class/net/docker* | /sys/class/net/br-* | /sys/class/net/cni* | /sys/class/net/flannel* | \
			/sys/class/net/cilium* | /sys/class/net/vxlan* | /sys/class/net/tunl* | /sys/class/net/kube-*) continue ;;
		esac
		[ -r "$f" ] || continue
		echo "== $f"
		cat "$f" 2>/dev/null
	done
	if [ -n "$vcgencmd" ]; then
		echo "== $throttled"
		"$vcgencmd" get_throttled 2>/dev/null
	fi
	echo "=="
	sleep "$i"
done
