# leftovers.sh PATH: storbench's work directories directly under PATH (a
# target directory on this host), one key=value a line: "dir=NAME" starts
# one, then "owner=" the content of its ownership file, "entry=T NAME" for
# each entry (T: f regular file, d directory, l symbolic link, o other) and
# "busy=PID COMM" for each process whose working directory is in it or
# whose command line names it ("stopping=PID COMM" when a storbench command
# started it). POSIX sh, /proc.
p=$1
for d in "$p"/storbench-*; do
	[ -d "$d" ] && [ ! -L "$d" ] || continue
	echo "dir=${d##*/}"
	[ -f "$d/.storbench-owner" ] && [ ! -L "$d/.storbench-owner" ] && echo "owner=$(head -c 4096 "$d/.storbench-owner" | tr '\n' ' ')"
	for e in "$d"/* "$d"/.[!.]* "$d"/..?*; do
		[ -e "$e" ] || [ -L "$e" ] || continue
		if [ -L "$e" ]; then t=l; elif [ -f "$e" ]; then t=f; elif [ -d "$e" ]; then t=d; else t=o; fi
		echo "entry=$t ${e##*/}"
	done
	r=$(cd -P -- "$d" && pwd -P) || continue
	# One ls and one grep for every process: their own command lines do
	# not name the directory (grep reads it from stdin).
	{
		ls -l /proc/[0-9]*/cwd 2>/dev/null | awk -v r="$r" '{
			i = index($0, " -> "); if (!i) next
			c = substr($0, i + 4)
			if (c == r || index(c, r "/") == 1) { split(substr($0, 1, i - 1), a, "/"); print a[3] } }'
		printf '%s\n' "$r" | grep -F -l -f - /proc/[0-9]*/cmdline 2>/dev/null | awk -F/ '{ print $3 }'
	} | sort -un | while read -r b; do
		c=$(cat "/proc/$b/comm" 2>/dev/null) || continue
		# A process a storbench command started (its wrapper marks them
		# all) is "stopping": its storbench is gone, so its wrapper is
		# ending it. So is one whose environment reads empty: it is
		# exiting (its memory is gone before its working directory).
		if grep -q -a -F -e "STORBENCH_SSH_CONN=" "/proc/$b/environ" 2>/dev/null ||
			[ "$(head -c 1 "/proc/$b/environ" 2>/dev/null | wc -c)" -eq 0 ]; then
			echo "stopping=$b $c"
		else
			echo "busy=$b $c"
		fi
	done
done
exit 0
