#!/usr/bin/env bash
# Telemetry overhead: the `standard` suite with telemetry on and off,
# alternating (ABBA order so drift does not favour one side), on one
# directory target. Per run it records the wall time, storbench's own CPU
# time (utime+stime of the storbench process from /proc/PID/stat, which
# excludes its fio children) and every workload's IOPS.
#
# Usage: bench/telemetry/run.sh TARGET_DIR [PAIRS]   (from the repository root)
# Needs: go, fio, jq.
set -euo pipefail
target=${1:?usage: run.sh TARGET_DIR [PAIRS]}
pairs=${2:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/storbench" ./cmd/storbench
hz=$(getconf CLK_TCK)

run_one() { # mode -> prints "mode wall_s cpu_s" and leaves $work/<n>.json
	local mode=$1 n=$2 start end pid ticks=0 s rest
	start=$(date +%s.%N)
	"$work/storbench" run --suite standard --target "$target" --db "$work/bench.db" \
		--telemetry="$mode" --output json >"$work/$n.json" 2>"$work/$n.err" &
	pid=$!
	# The process stays readable as a zombie until wait reaps it, so the
	# last reading is its final CPU time.
	while s=$(cat "/proc/$pid/stat" 2>/dev/null); do
		rest=${s##*) }
		read -r -a f <<<"$rest"
		ticks=$((f[11] + f[12]))
		[ "${f[0]}" = Z ] && break
		sleep 0.2
	done
	wait "$pid"
	end=$(date +%s.%N)
	echo "$mode $(echo "$end - $start" | bc) $(echo "scale=3; $ticks / $hz" | bc)"
}

echo "# pair mode wall_s storbench_cpu_s cpu_pct_of_wall total_iops"
n=0
for p in $(seq 1 "$pairs"); do
	order="true false"
	[ $((p % 2)) -eq 0 ] && order="false true"
	for mode in $order; do
		n=$((n + 1))
		read -r m wall cpu < <(run_one "$mode" "$n")
		iops=$(jq '[.results[] | ((.read.iops // 0) + (.write.iops // 0))] | add' "$work/$n.json")
		jq -r --arg m "$m" --arg p "$p" '.results[] | "\($p) \($m) \(.workload) \((.read.iops // 0) + (.write.iops // 0))"' "$work/$n.json" >>"$work/per-workload"
		echo "$p $m $wall $cpu $(echo "scale=3; 100 * $cpu / $wall" | bc) $iops"
	done
done
echo
echo "# per workload: mean IOPS with telemetry, without, ratio"
awk '{k=$3; if ($2=="true") {on[k]+=$4; non[k]++} else {off[k]+=$4; noff[k]++}}
	END {for (k in on) printf "%-20s %12.1f %12.1f %6.3f\n", k, on[k]/non[k], off[k]/noff[k], (on[k]/non[k])/(off[k]/noff[k])}' "$work/per-workload"
echo
echo "# per pair: geometric mean over workloads of IOPS on/off"
awk '{k=$1" "$3; v[k" "$2]=$4; pairs[$1]=1; w[$3]=1}
	END {for (p in pairs) {s=0; n=0; for (k in w) {a=v[p" "k" true"]; b=v[p" "k" false"]; if (a>0 && b>0) {s+=log(a/b); n++}}
		r=exp(s/n); printf "pair %s %.3f\n", p, r; all+=log(r); np++}
	printf "geometric mean over pairs: %.3f\n", exp(all/np)}' "$work/per-workload" | sort
