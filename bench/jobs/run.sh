#!/bin/sh
# Corpus table of issue 15: fio's examples run by fio itself and through
# storbench, shortened the same way on both sides; identical, refused (with
# the reason) and the wall time of each. Runs in a temporary directory on the
# disk of the repository (not tmpfs: direct I/O).
# Usage: bench/jobs/run.sh [RUNTIME]   (default 300ms per job; needs Go and fio)
set -eu
cd "$(dirname "$0")/../.."
work=$(mktemp -d "$PWD/.bench-jobs.XXXXXX")
trap 'rm -rf "$work"' EXIT
go run ./bench/jobs -work "$work" -runtime "${1:-300ms}"
