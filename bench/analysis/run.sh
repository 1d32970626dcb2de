#!/usr/bin/env bash
# Times "storbench compare" and "storbench report -o report.html" over
# 100,000 generated workload results in a real SQLite database, with
# /usr/bin/time -v (wall time and peak RSS). Targets: <= 2 s and <= 300 MiB
# each. Usage: bench/analysis/run.sh [RESULTS] (default 100000).
set -euo pipefail
cd "$(dirname "$0")/../.."
results=${1:-100000}
repeat=${REPEAT:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/storbench" ./cmd/storbench
go build -o "$work/gen" ./bench/analysis/gen
start=$(date +%s.%N)
read -r -a ids < <("$work/gen" -db "$work/bench.db" -results "$results")
printf 'generated %d results in %d runs: %.1f s, database %s\n' "$results" "${#ids[@]}" \
	"$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')" "$(du -h "$work/bench.db" | cut -f1)"

status=0
measure() {
	local name=$1
	shift
	for i in $(seq "$repeat"); do
		/usr/bin/time -v "$@" >"$work/out" 2>"$work/time"
		wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/time")
		rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$work/time")
		cpu=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {printf "%.2f", u + s}' "$work/time")
		verdict=ok
		if awk -v w="$wall" 'BEGIN {exit !(w > 2)}' || ((rss > 300)); then
			verdict=OVER
			status=1
		fi
		printf '%-15s run %d: wall %5.2f s  cpu %5.2f s  peak RSS %4d MiB  %s\n' "$name" "$i" "$wall" "$cpu" "$rss" "$verdict"
	done
}
db=(--db "$work/bench.db")
measure compare "$work/storbench" "${db[@]}" compare "${ids[@]}" --group-by storage --baseline storage=nvme
measure report "$work/storbench" "${db[@]}" report "${ids[@]}" --group-by storage --baseline storage=nvme -o "$work/report.html"
# Without groups: 100 targets side by side, the largest tables and charts.
measure compare-targets "$work/storbench" "${db[@]}" compare "${ids[@]}" --baseline pvc-00-00
measure report-targets "$work/storbench" "${db[@]}" report "${ids[@]}" --baseline pvc-00-00 -o "$work/report-targets.html"
printf 'report.html: %s bytes; load average: %s\n' "$(stat -c %s "$work/report.html")" "$(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
