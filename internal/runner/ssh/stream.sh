# stream.sh INTERVAL: the host's counters for telemetry, every INTERVAL
# seconds, as frames: "== FILE" before each file's content, "==" after
# the last (see sampler.go). Files that do not exist are left out.
i=$1
while :; do
	for f in /proc/stat /proc/diskstats /proc/pressure/io \
		/sys/class/thermal/thermal_zone*/temp /sys/class/thermal/thermal_zone*/type \
		/sys/devices/system/cpu/cpufreq/policy[0-9]*/scaling_cur_freq \
		/sys/devices/system/cpu/cpufreq/policy[0-9]*/cpuinfo_max_freq \
		/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq \
		/sys/devices/system/cpu/cpu[0-9]*/cpufreq/cpuinfo_max_freq \
		/sys/devices/platform/soc/soc:firmware/get_throttled; do
		[ -r "$f" ] || continue
		echo "== $f"
		cat "$f" 2>/dev/null
	done
	echo "=="
	sleep "$i"
done
