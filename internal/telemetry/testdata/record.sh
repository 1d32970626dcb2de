#!/bin/sh
# Records /proc snapshots one second apart into DIR/t0 .. DIR/tN, for the
# attribution tests. Usage: record.sh DIR COUNT (run while a load runs).
set -eu
dir=$1; n=$2; i=0
while [ "$i" -lt "$n" ]; do
	mkdir -p "$dir/t$i/proc/pressure"
	cat /proc/stat > "$dir/t$i/proc/stat"
	cat /proc/diskstats > "$dir/t$i/proc/diskstats"
	cat /proc/pressure/io > "$dir/t$i/proc/pressure/io" 2>/dev/null || true
	i=$((i+1))
	[ "$i" -lt "$n" ] && sleep 1
done
