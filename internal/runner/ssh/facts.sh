# facts.sh PATH: what storbench needs to know of PATH and its host, one
# key=value a line (see hostFacts in runtarget.go). POSIX sh, awk and /proc.
p=$1
echo "hostname=$(cat /proc/sys/kernel/hostname 2>/dev/null || hostname)"
echo "kernel=$(uname -r)"
echo "arch=$(uname -m)"
command -v fio >/dev/null 2>&1 && echo "fio=$(command -v fio)"
awk -F': *' '/^model name/ && m == "" {m = $2} /^(Model|Hardware)/ {h = $2}
  END {if (m == "") m = h; if (m != "") print "cpu_model=" m}' /proc/cpuinfo
# block DEV_DIR: the device under /sys, its disk and what uses it.
block() {
	d=$(readlink -f "$1") || return
	n=${d##*/}
	disk=$n
	[ -e "$d/partition" ] && { disk=${d%/*}; disk=${disk##*/}; }
	echo "device=$n"
	echo "disk=$disk"
	[ -r "/sys/class/block/$disk/device/model" ] && echo "device_model=$(cat "/sys/class/block/$disk/device/model")"
	[ -r "/sys/class/block/$disk/queue/rotational" ] && echo "rotational=$(cat "/sys/class/block/$disk/queue/rotational")"
	[ "$(cat "$d/ro" 2>/dev/null)" = 1 ] && echo "ro=1"
	devs="$(cat "$d/dev")"
	for h in "$d"/holders/*; do [ -e "$h" ] && echo "holder=${h##*/}"; done
	for q in "$d"/*/partition; do
		[ -e "$q" ] || continue
		q=${q%/partition}
		echo "partition=${q##*/}"
		devs="$devs $(cat "$q/dev")"
	done
	awk -v devs=" $devs " 'index(devs, " " $3 " ") {print "mount=" $3 " on " $5}' /proc/self/mountinfo
	while read -r f _; do
		[ -b "$f" ] || continue
		set -- $(stat -L -c '%t %T' "$f")
		case " $devs " in *" $((0x$1)):$((0x$2)) "*) echo "swap=$f" ;; esac
	done </proc/swaps
}
if [ -d "$p" ]; then
	echo "kind=directory"
	[ -w "$p" ] && [ -x "$p" ] && echo "writable=1"
	stat -f -c 'space=%S %b %f %a' "$p"
	r=$(cd "$p" && pwd -P) || exit 1
	# The mount holding r: the longest mount point that is r or above it.
	info=$(awk -v r="$r" '{ m = $5; gsub(/\\040/, " ", m)
		if ((r == m || m == "/" || index(r, m "/") == 1) && length(m) >= best) {
			best = length(m); mm = $3; mp = m
			for (i = 7; $i != "-"; i++) ;
			t = $(i+1); s = $(i+2); ro = ($6 ~ /^ro(,|$)/)
		} }
		END { print "fs_type=" t; print "mount_point=" mp; print "mount_source=" s; print "majmin=" mm; if (ro) print "ro=1" }' /proc/self/mountinfo)
	echo "$info"
	mm=$(echo "$info" | sed -n 's/^majmin=//p')
	[ -e "/sys/dev/block/$mm" ] && block "/sys/dev/block/$mm"
elif [ -b "$p" ]; then
	echo "kind=device"
	set -- $(stat -L -c '%t %T' "$p")
	echo "majmin=$((0x$1)):$((0x$2))"
	block "/sys/dev/block/$((0x$1)):$((0x$2))"
elif [ -e "$p" ]; then
	echo "kind=other"
else
	echo "kind=missing"
fi
exit 0
