#!/usr/bin/env bash
# The whole test suite: installs what the tests use (as root, on Debian or
# Ubuntu), then runs every Go test with real fio, loop devices, SQLite and
# headless Chromium, the brief fuzz runs, and the Kubernetes integration tests
# against a real control plane on loopback.
#
# Usage: bash scripts/test.sh [host|cluster]
#   (none)   the whole suite: the host tests that measure (their first
#            statement is testenv.Measures(t)) with nothing else running,
#            then the cluster tier with, beside it at a low CPU priority, the
#            other host tests, the tools module's tests, the brief fuzz runs
#            and the unit tier under the race detector
#   host     every test but the cluster's: real fio, loop devices, sshd,
#            Chromium, the tools module, the brief fuzz runs
#   cluster  the tests named TestCluster... on the test cluster
#            (scripts/k8s-integration.sh)
# The unit tier needs no script, no root and no tools: go test -short ./...
set -euo pipefail
cd "$(dirname "$0")/.."
tier=${1:-all}
case "$tier" in
all | host | cluster) ;;
*)
  echo "usage: bash scripts/test.sh [host|cluster] (the unit tier: go test -short ./...)" >&2
  exit 2
  ;;
esac
# Loop devices, mounts, network namespaces and the loopback cluster need
# root: a user with sudo is taken there (keeping PATH, so the same go runs);
# root on a bare Debian has no sudo and needs none.
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
  exec sudo env "PATH=$PATH" ${STORBENCH_REQUIRE:+"STORBENCH_REQUIRE=$STORBENCH_REQUIRE"} bash "$0" "$@"
fi
# Go builds with -trimpath: what it compiles then holds no source path, so
# Go's build cache serves a clone at a new path (a fresh CI checkout) as it
# serves the one that filled it (BENCHMARKS.md). The machine's GOFLAGS stay.
case " $(go env GOFLAGS) " in
*" -trimpath "*) ;;
*) GOFLAGS="$(go env GOFLAGS) -trimpath" && export GOFLAGS=${GOFLAGS# } ;;
esac
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  need=()
  for p in fio hdparm chromium e2fsprogs util-linux procps f2fs-tools ntfs-3g exfatprogs xorriso squashfs-tools genromfs lvm2 bcache-tools cryptsetup-bin fdisk xfsprogs btrfs-progs dosfstools openssh-server openssh-client prometheus curl iproute2 sudo glusterfs-server glusterfs-client iperf3; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  for p in ceph-mon ceph-osd ceph-mgr ceph-mds ceph-fuse ceph-common; do   # a real Ceph: test/cluster/ceph.sh, test/cephtest
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    # nothing the machine has may go to make room for the tests' packages
    gone=$(apt-get -s install --no-install-recommends "${need[@]}" 2>/dev/null | awk '$1 == "Remv" {print $2}' | tr '\n' ' ')
    if [ -n "$gone" ]; then
      echo "test.sh: refusing to install ${need[*]}: apt-get would remove ${gone% }; install them yourself if that is what you want" >&2
      exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
fi
# Kubernetes integration on the project's own test cluster (test/cluster/cluster.sh:
# a real control plane, kwok nodes, three real nodes on shaped links; needs
# root; builds its binaries once into $KAPI_ROOT, see BENCHMARKS.md). In the
# whole suite it runs after the host tests that measure, and beside the
# others.
if [ "$tier" = cluster ]; then
  exec bash scripts/k8s-integration.sh
fi
# With nothing cached, the test cluster's binaries (control plane, kubelet,
# kwok, local-path, the CSI sidecars: about 11 minutes of two idle cores,
# BENCHMARKS.md) build in the background while the package tests run, at the
# lowest CPU priority, so they take only what the tests leave idle;
# k8s-integration.sh's own build then waits for it (cluster.sh build holds
# $KAPI_ROOT/build.lock) and finds everything cached.
# in_session NICE CMD...: CMD in a session (and process group) of its own
# at CPU priority NICE. The kernel's autogroups (kernel.sched_autogroup_enabled,
# on in Debian's kernels) share the CPU between sessions first and only then,
# by nice, between the processes of one session: a session of its own at
# nice 19 took as much CPU as one at nice 0 (BENCHMARKS.md). So the session's
# own priority (/proc/PID/autogroup) is set too, where the kernel has one:
# the build then takes only what the host tests that measure leave idle.
in_session() {
  setsid bash -c 'echo "$0" > /proc/self/autogroup 2>/dev/null || :; exec nice -n "$0" "$@"' "$@"
}
build_pid=
if [ "$tier" = all ] && [ "$(id -u)" -eq 0 ]; then
  export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
  if ! bash test/cluster/cluster.sh cached; then
    if [ "${SKIP_INSTALL:-0}" != 1 ]; then bash test/cluster/cluster.sh install; fi
    mkdir -p "$KAPI_ROOT"
    echo "test.sh: the test cluster's binaries build in the background (nice 19): $KAPI_ROOT/build.log"
    # its own process group, so that Ctrl-C stops the go builds under it too
    in_session 19 bash test/cluster/cluster.sh build > "$KAPI_ROOT/build.log" 2>&1 & build_pid=$!
  fi
fi
# Ctrl-C (or TERM) stops the whole script. bash runs no INT trap after a
# foreground command that handled the signal itself, as go test does (it
# waits for its test binary and exits 1), so each step runs in the
# background, in its own process group, and the script waits for it: the
# wait ends at once on a signal, and the trap sends INT to the step's group
# and to that of the host tests beside the cluster tier (go test, its test
# binary, fio; a script step ends when its go test fails), TERM to each of
# them still running after 10 s or on a second Ctrl-C (the cluster's script
# ignores INT while the cluster comes up, and tears it down on TERM), and
# waits for them, so that their own cleanup ends first. Then the background
# build's process group and the cluster tier (which tears the cluster down
# on TERM) are stopped.
step_pid= beside_pid= cluster_pid=
step() {
  setsid "$@" & step_pid=$!
  local rc=0
  wait "$step_pid" || rc=$?
  step_pid=
  return "$rc"
}
running() { # PID: not gone, not a zombie
  local st
  st=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${st#Z}" = "$st" ]
}
any_running() {
  local p
  for p; do if running "$p"; then return 0; fi; done
  return 1
}
stop() {
  echo "test.sh: interrupted: stopping" >&2
  local groups=($step_pid $beside_pid) p i
  if [ ${#groups[@]} -gt 0 ]; then
    trap 'for p in "${groups[@]}"; do kill -TERM "$p" 2>/dev/null; done' INT TERM
    for p in "${groups[@]}"; do kill -INT -- -"$p" 2>/dev/null || true; done
    for i in $(seq 20); do if any_running "${groups[@]}"; then sleep 0.5; fi; done
    for p in "${groups[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    while any_running "${groups[@]}"; do wait "${groups[@]}" 2>/dev/null || true; done
  fi
  trap '' INT TERM
  if [ -n "${beside_mark:-}" ]; then rm -f "$beside_mark"; fi
  if [ -n "$build_pid" ]; then kill -TERM -- -"$build_pid" 2>/dev/null || true; fi
  if [ -n "$cluster_pid" ]; then kill -TERM "$cluster_pid" 2>/dev/null || true; wait "$cluster_pid" 2>/dev/null || true; fi
  exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM
# The cluster tier runs in the background, its lines marked "[cluster]"
# (the marking sed ignores Ctrl-C, so that the cluster's teardown is shown).
start_cluster() {
  bash scripts/k8s-integration.sh > >(trap '' INT TERM; exec sed -u 's/^/[cluster] /') 2>&1 & cluster_pid=$!
}
status=0
if [ "$tier" = host ]; then
  step go test -count=1 -timeout 30m ./... || status=1
else
  # The host tests that measure (a rate, a round trip, a verdict drawn from
  # them, a deadline close to what the work takes: testenv.Measures) run
  # first, two packages at a time as always, with nothing else on the
  # machine. The names are found in the source, "NAME" per test whose first
  # statement is testenv.Measures(t), and run in every package that has a
  # test of that name: each test runs once, here or in the step beside the
  # cluster tier, which skips them.
  measures=$(grep -r -A1 --include='*_test.go' '^func Test' internal test bench | awk '
    /_test\.go:func Test/ { n = $2; sub(/\(.*/, "", n); next }
    /_test\.go-\ttestenv\.Measures\(t\)/ && n != "" { print n }
    { n = "" }' | sort -u)
  MEASURES_RE=$(echo "$measures" | paste -sd'|')
  if [ -n "$MEASURES_RE" ]; then
    # the test tree first (sort -r): its live Ceph and GlusterFS take longest
    MEASURES_PKGS=$(grep -rlE --include='*_test.go' "^func ($MEASURES_RE)\(" internal test bench | xargs -n1 dirname | sort -ru | sed 's|^|./|; s|$|/|' | tr '\n' ' ')
    echo "== host tests that measure: $(echo "$measures" | grep -c .) tests in $MEASURES_PKGS"
    step go test -count=1 -timeout 30m -run "^($MEASURES_RE)\$" $MEASURES_PKGS || status=1
  fi
fi
# The tools module's tests (release archives, images, krew, the Helm chart
# against the kustomize base: Helm and kustomize stay out of go.mod), each
# importer fuzz target for 5000 executions (the seed corpus ran above), and
# in the whole suite the unit tier under the race detector: CPU-bound work
# that checks no timing. In the whole suite it runs beside the cluster tier,
# at nice 19 in a session of its own (below: what that priority does).
cpu_work() {
  step $1 bash -c 'cd tools && exec go test -count=1 -timeout 30m ./...' || status=1
  step $1 bash scripts/fuzz-brief.sh 5000 || status=1
}
if [ "$tier" = host ]; then
  cpu_work ""
  exit "$status"
fi
# A build of the cluster's binaries still running (this script's, or one
# started before it at the lowest priority, as .ci/run does) now takes the
# CPU first: the cluster tier waits for it (cluster.sh build holds
# $KAPI_ROOT/build.lock and writes its PID beside it), the CPU-bound work
# does not. Its processes are raised to priority 0 from the top down, so
# that those they start later inherit it.
renice_tree() {
  echo 0 > "/proc/$1/autogroup" 2>/dev/null || :   # its session's, once is enough
  renice -n 0 -p "$1" >/dev/null 2>&1 || return 0
  local c
  for c in $(ps -o pid= --ppid "$1"); do renice_tree "$c"; done
}
if [ -n "${KAPI_ROOT:-}" ] && [ -f "$KAPI_ROOT/build.pid" ] && ! flock -n "$KAPI_ROOT/build.lock" true 2>/dev/null; then
  renice_tree "$(cat "$KAPI_ROOT/build.pid")"
fi
# While the lanes beside the cluster tier run, this file exists: the
# cluster's tests that judge what limits a run (kubetest.Measures) wait
# until it is gone.
beside_mark=$(mktemp /tmp/storbench-beside.XXXXXX)
export STORBENCH_BESIDE_RUNNING=$beside_mark
start_cluster
# Beside the cluster tier, whose tests mostly wait on Kubernetes, Ceph's
# timers and shaped links, two lanes at once: the other host tests at
# nice 10 (these assert no timing another process's load could move, and
# testenv.Measures fails them here), and the CPU-bound work at nice 19.
# Their lines are marked "[host]". Each lane is a session of its own, so
# its nice value ranks only its own processes: across sessions, the kernel's
# autogroups give each lane a share equal to each of the cluster's. Giving
# the lanes' sessions that priority too (in_session) was tried: their work
# moved later, into the cluster tier's tests that measure (a sweep found
# the CPU busy and failed), and the tier was no shorter (BENCHMARKS.md).
echo "== host tests beside the cluster tier (nice 10), lines marked [host]"
skip=()
if [ -n "$MEASURES_RE" ]; then skip=(-skip "^($MEASURES_RE)\$"); fi
setsid nice -n 10 env STORBENCH_TEST_BESIDE=1 go test -count=1 -timeout 30m "${skip[@]}" ./... \
  > >(trap '' INT TERM; exec sed -u 's/^/[host] /') 2>&1 & beside_pid=$!
cpu_work "nice -n 19"
# The unit tier under the race detector leaves out the tests that measure
# too (a few run under -short): they ran in the quiet step.
echo "== unit tier, race detector (go test -short -race ./...)"
step nice -n 19 go test -short -race -count=1 -timeout 30m "${skip[@]}" ./... || status=1
wait "$beside_pid" || { echo "test.sh: the host tests beside the cluster tier failed"; status=1; }
beside_pid=
rm -f "$beside_mark"
if [ -n "$build_pid" ]; then
  if wait "$build_pid"; then
    echo "test.sh: the test cluster's binaries are built ($KAPI_ROOT/build.log)"
  else
    # k8s-integration.sh built again in the foreground and said what failed
    echo "test.sh: the background build of the test cluster failed; its last lines ($KAPI_ROOT/build.log):"
    tail -n 20 "$KAPI_ROOT/build.log" | sed 's/^/  /'
  fi
fi
wait "$cluster_pid" || { echo "test.sh: the cluster tests failed (lines marked [cluster])"; status=1; }
exit "$status"
