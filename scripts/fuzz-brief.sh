#!/bin/sh
# Runs every fuzz target of the importer briefly (CI). The committed seed
# corpus (testdata/ samples) already runs with plain "go test".
# Usage: scripts/fuzz-brief.sh [seconds per target, default 5]
set -eu
cd "$(dirname "$0")/.."
secs="${1:-5}"
pkg=./internal/importer
targets=$(go test -list '^Fuzz' "$pkg" | grep '^Fuzz')
for t in $targets; do
	echo "== $t (${secs}s)"
	go test -run '^$' -fuzz "^${t}\$" -fuzztime "${secs}s" "$pkg"
done
