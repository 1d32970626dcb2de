#!/bin/sh
# The hostile device corpus (issue 9): every device in
# internal/safety/safetytest is built on a real loop device and must be
# refused, with its sha256 unchanged, by the built-in check alone, by the
# blkid path, and through `storbench run` (suite and raw fio job, with and
# without blkid on PATH). Prints the count of cases and pass/fail per case.
# Usage: bench/safety/run.sh   (as root; needs Go, fio, losetup and the
# image tools listed in scripts/test.sh)
set -eu
cd "$(dirname "$0")/../.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
STORBENCH_REQUIRE=${STORBENCH_REQUIRE:-root,loop,fio} go test -count=1 -v \
	-run 'TestHostileDeviceCorpus|TestHostileDevicesRefusedThroughTheCLI' \
	./internal/safety/ ./internal/app/ >"$out" 2>&1 || status=$?
echo "cases per test and outcome:"
grep -E '^ +--- (PASS|FAIL|SKIP): TestHostile[^ ]*/' "$out" | awk '{split($3, a, "/"); sub(":", "", $2); print a[1], $2}' | sort | uniq -c
grep -E 'hostile device corpus' "$out" | sed 's/^ *[a-z_]*\.go:[0-9]*: //'
if [ "$status" -ne 0 ]; then
	grep -E -A3 -- '--- FAIL' "$out" | head -40
	echo "FAIL (go test exit $status)"
	exit "$status"
fi
echo "PASS: every hostile device refused, checksums unchanged"
