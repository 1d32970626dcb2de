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
	loops "$n" "$devs"
}
# loops NAME DEVS: the loop devices that read the device (or a partition of
# it, DEVS their major:minor): backed by it, by a file on a filesystem on
# it (mounted or not: the kernel keeps a lazily unmounted one), or, for a
# loop device, by its own backing file. losetup reports the backing file's
# device and inode as the kernel keeps them, so a file no longer reachable
# by its path still counts; without losetup only /sys's paths are read.
loops() {
	if command -v losetup >/dev/null 2>&1; then
		self=$(losetup --noheadings --list --output BACK-MAJ:MIN,BACK-INO "/dev/$1" 2>/dev/null | awk '{print $1 " " $2}')
		losetup --noheadings --list --output NAME,MAJ:MIN,BACK-MAJ:MIN,BACK-INO,OFFSET,BACK-FILE 2>/dev/null |
			while read -r name mm bmm bino off file; do
				case " $2 " in *" $mm "*) continue ;; esac
				hit=
				case " $2 " in *" $bmm "*) hit=1 ;; esac
				if [ -b "$file" ]; then
					set -- "$1" "$2" $(stat -L -c '%t %T' "$file")
					case " $2 " in *" $((0x$3)):$((0x$4)) "*) hit=1 ;; esac
				fi
				[ -n "$self" ] && [ "$bmm $bino" = "$self" ] && hit=1
				[ -n "$hit" ] || continue
				[ "$off" = 0 ] && off= || off=", offset $off"
				echo "loop=${name##*/} (backing file $file$off)"
			done
		return
	fi
	for l in /sys/block/loop*; do
		file=$(cat "$l/loop/backing_file" 2>/dev/null) || continue
		[ -b "$file" ] || continue
		case " $2 " in *" $(cat "$l/dev") "*) continue ;; esac
		set -- "$1" "$2" $(stat -L -c '%t %T' "$file")
		case " $2 " in *" $((0x$3)):$((0x$4)) "*) echo "loop=${l##*/} (backing file $file)" ;; esac
	done
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
