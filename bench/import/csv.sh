#!/bin/sh
# Import memory benchmark (issue 9): storbench import of a generated
# 1,000,000-row generic CSV into a fresh database, in a child process whose
# peak RSS (getrusage) must stay under 300 MiB. Prints wall time and peak RSS.
# Usage: bench/import/csv.sh [rows]   (from anywhere; needs Go)
set -eu
cd "$(dirname "$0")/../.."
rows="${1:-1000000}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/storbench" ./cmd/storbench
go build -o "$work/csvrss" ./bench/import/csvrss
go run ./bench/import/csvgen -rows "$rows" -out "$work/big.csv"
for i in 1 2 3; do
	rm -f "$work/results.db"*
	"$work/csvrss" -storbench "$work/storbench" -csv "$work/big.csv" -db "$work/results.db"
done
