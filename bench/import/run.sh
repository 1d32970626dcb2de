#!/bin/sh
# Import benchmark: storbench import of 1,000 fio JSON files of typical size
# (derived from real fio 3.33 outputs) into a fresh database. Target: <= 3 s.
# Usage: bench/import/run.sh   (from anywhere; needs Go and GNU time)
set -eu
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/storbench" ./cmd/storbench
go run ./bench/import/gen -n 1000 -out "$work/files"
for i in 1 2 3; do
	rm -f "$work/results.db"*
	/usr/bin/time -f "run $i: %e s wall, %U s user, %S s sys, max RSS %M KiB" \
		"$work/storbench" --db "$work/results.db" import "$work"/files/*.json --output json >"$work/out.json"
done
echo "stored results: $(grep -o '"results": [0-9]*' "$work/out.json" | tail -1)"
