# sysfacts facts.sh PATH: the /sys files behind PATH's disk, the default
# route's interface and the CPU governor, for internal/sysfacts. One line
# each: "f REL=VALUE" (a file under /sys), "l REL=TARGET" (a link resolved,
# both relative to /sys), "disk=NAME", "iface=NAME". POSIX sh.
R=${STORBENCH_SYSROOT:-}
S=$R/sys
rel() { r=$(readlink -f "$S/$1") || return 1; [ -e "$r" ] || return 1; echo "l $1=${r#"$(readlink -f "$S")"/}"; }
file() { [ -r "$S/$1" ] && v=$(cat "$S/$1" 2>/dev/null) && echo "f $1=$v"; }
disk=
mm=
if [ -b "$1" ]; then
	set -- "$1" "$2" $(stat -L -c '%t %T' "$1")
	mm="$((0x$3)):$((0x$4))"
elif [ -n "$1" ] && d=$(stat -L -c %d "$1" 2>/dev/null); then
	mm="$(( (d >> 8) & 0xfff )):$(( (d & 0xff) | ((d >> 12) & 0xfff00) ))"
fi
if [ -n "$mm" ]; then
	if b=$(readlink -f "$S/dev/block/$mm") && [ -e "$b" ]; then
		disk=${b##*/}
		[ -e "$b/partition" ] && { disk=${b%/*}; disk=${disk##*/}; }
	fi
fi
[ -z "$disk" ] && [ -n "$2" ] && disk=$2
if [ -n "$disk" ]; then
	echo "disk=$disk"
	rel "class/block/$disk"
	file "class/block/$disk/queue/scheduler"
	file "class/block/$disk/queue/rotational"
	file "class/block/$disk/device/model"
	p=$(readlink -f "$S/class/block/$disk")
	top=$(readlink -f "$S/devices")
	while [ -n "$p" ] && [ "$p" != "$top" ] && [ "$p" != / ]; do
		q=${p#"$(readlink -f "$S")"/}
		for a in current_link_speed current_link_width max_link_speed max_link_width vendor device \
			speed idVendor idProduct manufacturer product bInterfaceProtocol type name; do
			file "$q/$a"
		done
		[ -e "$p/driver" ] && rel "$q/driver"
		p=${p%/*}
	done
fi
iface=$(awk '$2 == "00000000" && $8 == "00000000" {print $1; exit}' "$R/proc/net/route" 2>/dev/null)
if [ -n "$iface" ]; then
	echo "iface=$iface"
	rel "class/net/$iface"
	file "class/net/$iface/speed"
	file "class/net/$iface/duplex"
fi
file devices/system/cpu/cpu0/cpufreq/scaling_governor
exit 0
