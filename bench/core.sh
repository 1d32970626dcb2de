#!/usr/bin/env bash
# Fidelity and footprint of a local run (see bench/core/main.go).
# Usage: bash bench/core.sh [DIR] [PAIRS]   DIR defaults to a new directory under the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
CGO_ENABLED=0 go build -o bin/storbench ./cmd/storbench
dir=${1:-$(mktemp -d "$PWD/.bench.XXXXXX")}
trap '[ -z "${1:-}" ] && rm -rf "$dir"' EXIT
go run ./bench/core -storbench bin/storbench -dir "$dir" -pairs "${2:-3}" "${@:3}"
