#!/usr/bin/env bash
# The test cluster's figures for BENCHMARKS.md: build (nothing to do when cached), a cold
# start (binaries cached, cluster down) with its time, measure.sh on it, and down.
# Usage (root): bench/cluster/run.sh   (IDLE_SECONDS, LINK_SECONDS, REPS as for measure.sh)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
bash "$HERE/test/cluster/cluster.sh" build >/dev/null
exec bash "$HERE/test/cluster/cluster.sh" run bash "$HERE/bench/cluster/measure.sh"
