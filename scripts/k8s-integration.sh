#!/usr/bin/env bash
# Kubernetes integration tests for storbench against the project's own test
# cluster (test/cluster/cluster.sh: a real control plane, kwok fake nodes, three
# real kubelet/containerd nodes on shaped links, local-path and netfs storage).
# Installs and builds what is missing (cached in $KAPI_ROOT: see BENCHMARKS.md
# for the cold build; seconds once cached), brings the cluster up under
# /tmp/storbench-cluster.lock, always brings it down, and exits with the
# tests' status.
#
# Usage (root): scripts/k8s-integration.sh [go test flags, e.g. -run ClusterKwok]
# Environment: KAPI_ROOT (default ~/.cache/storbench-kapi), SKIP_INSTALL=1 to
# skip apt-get, CLUSTER_NODES / CLUSTER_RATE as for test/cluster/cluster.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --steps ]; then
  # The tier's command under cluster.sh run: go test steps, each in a
  # process group of its own with SIGINT at its default (a command run in
  # the background, as cluster.sh runs this, starts with SIGINT ignored, and
  # test binaries would keep it so). cluster.sh stops this with TERM on
  # Ctrl-C or a timeout: the running step's group gets SIGINT (TERM 15 s
  # later if it is still there), no further step starts, and this exits
  # once the step has, before cluster.sh tears the cluster down.
  shift
  cd "$HERE"
  stopped= pid=
  trap 'stopped=1; [ -z "$pid" ] || kill -INT -- -"$pid" 2>/dev/null || true' TERM
  n=0
  step() { # go test args...
    [ -z "$stopped" ] || return 1
    local s i json format=standard-quiet
    n=$((n + 1)) json=$TIMES/step-$n.json
    # go test's package lines, then each failed test's output (with -v,
    # go test -v's); its events kept in $json
    case " $* " in *" -v "* | *" -test.v "*) format=standard-verbose ;; esac
    setsid env --default-signal=INT "$GOTESTSUM" --format "$format" --hide-summary=skipped --jsonfile "$json" -- "$@" & pid=$!
    while :; do
      s=0; wait "$pid" || s=$?
      kill -0 "$pid" 2>/dev/null || break # ended, not a wait cut short by TERM
      for i in $(seq 30); do kill -0 "$pid" 2>/dev/null && sleep 0.5; done
      kill -TERM -- -"$pid" 2>/dev/null || true
    done
    pid=
    # what took the time, test by test, in every run
    "$GOTESTSUM" tool slowest --jsonfile "$json" --threshold 20s | awk -v n="$n" 'NR == 1 { print "step " n ": tests over 20 s (package, test, time):" } { print "  " $0 }'
    return "$s"
  }
  # The tests named TestClusterCeph... share one Ceph with CephFS, up for
  # the step (kubetest.CephUp uses a Ceph that is up and leaves it), then
  # down, the cluster left as it was: one bring-up (about 30 s) in place
  # of one per test.
  ceph_step() {
    local t0=$SECONDS rc=0 out
    if ! out=$(CEPH_FS=1 bash "$HERE/test/cluster/ceph.sh" cluster up 2>&1); then
      echo "$out" | tail -n 20
      echo "ceph.sh cluster up failed: the tests named TestClusterCeph... did not run"
      bash "$HERE/test/cluster/ceph.sh" cluster down >/dev/null 2>&1 || true
      return 1
    fi
    echo "Ceph with CephFS up for the tests named TestClusterCeph... in $((SECONDS - t0)) s"
    local skip=()
    if [ -n "$SHARED_RE" ]; then skip=(-skip "^($SHARED_RE)\$"); fi
    step -count=1 -p 2 -timeout 40m -run "^TestClusterCeph" "${skip[@]}" "$@" $CEPH_PKGS || rc=1
    bash "$HERE/test/cluster/ceph.sh" cluster down || rc=1
    bash "$HERE/test/cluster/ceph.sh" check-clean cluster || rc=1
    return "$rc"
  }
  s=0
  case $1 in
    one) shift; step -count=1 -p 2 -timeout 45m -run "^TestCluster" "$@" $PKGS || s=1 ;;
    three)
      shift
      if [ -n "$SHARED_RE" ]; then
        step -count=1 -p 2 -timeout 25m -run "^($SHARED_RE)\$" "$@" $SHARED_PKGS || s=1
      fi
      if [ -n "$ALONE_PKGS" ]; then
        step -count=1 -p 2 -timeout 40m -run "^TestCluster" -skip "^(TestClusterDown.*|TestClusterCeph.*${SHARED_RE:+|$SHARED_RE}${MEASURES_RE:+|$MEASURES_RE})\$" "$@" $ALONE_PKGS || s=1
      fi
      if [ -n "$MEASURES_RE" ] && [ -z "$stopped" ]; then
        step -count=1 -p 1 -timeout 40m -run "^($MEASURES_RE)\$" "$@" $MEASURES_PKGS || s=1
      fi
      if [ -n "$CEPH_PKGS" ] && [ -z "$stopped" ]; then
        ceph_step "$@" || s=1
      fi
      if [ -n "$DOWN_PKGS" ]; then
        CLUSTER_DOWN_LAST=1 step -count=1 -p 1 -timeout 25m -run "^TestClusterDown" "$@" $DOWN_PKGS || s=1
      fi ;;
  esac
  if [ -n "$stopped" ]; then exit 143; fi
  exit "$s"
fi
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
if [ "${SKIP_INSTALL:-0}" != 1 ]; then bash "$HERE/test/cluster/cluster.sh" install; fi
bash "$HERE/test/cluster/cluster.sh" build

# gotestsum (the tools module's) runs go test in each step: the same output,
# and each test's time kept in $KAPI_ROOT/test-times/step-N.json, the slowest
# printed after each step. It is built outside $KAPI_ROOT/bin, where
# check-clean counts any running process as the cluster's.
export GOTESTSUM=$KAPI_ROOT/tools/gotestsum TIMES=$KAPI_ROOT/test-times
(cd "$HERE/tools" && go build -o "$GOTESTSUM" gotest.tools/gotestsum)
mkdir -p "$TIMES" && rm -f "$TIMES"/step-*.json
export STORBENCH_K8S_INTEGRATION=1 CLUSTER_ENV=$KAPI_ROOT/run/cluster.env KUBECONFIG=$KAPI_ROOT/run/kubeconfig
# The cluster tier is every test named TestCluster... (test/kubetest fails any
# other test that asks for the cluster), in the packages that declare one;
# PKGS narrows it, go test flags given here (-run, -v) come after the default.
if [ -z "${PKGS:-}" ]; then
  PKGS=$(cd "$HERE" && grep -rl --include='*_test.go' '^func TestCluster' internal test | xargs -n1 dirname | sort -u | sed 's|^|./|; s|$|/|' | tr '\n' ' ')
fi
[ -n "$PKGS" ] || { echo "k8s-integration.sh: no test named TestCluster... found" >&2; exit 1; }
export PKGS
# Each test holds the cluster alone, or shared with the other shared tests
# (those of its package beside it, go test's -parallel at a time, and those
# of one other package) when its first statement is kubetest.Shared(t): it
# changes nothing another test sees, measures nothing another could disturb
# and checks only its own run's objects (test/kubetest/hold.go). Go test flags
# that choose tests (-run, -skip) keep one invocation, two packages at a
# time, the holds keeping them apart; a TestClusterDown... test in it
# brings the cluster back up.
case " $* " in
  *" -run"* | *" -skip"* | *" -test.run"* | *" -test.skip"*)
    echo "cluster tier: go test -p 2 -run '^TestCluster' $* $PKGS"
    exec bash "$HERE/test/cluster/cluster.sh" run bash "$HERE/scripts/k8s-integration.sh" --steps one "$@"
    ;;
esac
# Otherwise in five steps, each test once:
#  1. the tests that share the cluster, two packages at a time and two tests
#     of a package at a time (mixed with the others, they rarely met);
#  2. the others but TestClusterDown..., TestClusterCeph... and those that
#     measure, in the packages that have one: each test holds the cluster
#     alone, so two packages' test binaries at a time take turns (go test
#     -p 2: the next package's test binary links while a test runs, in place
#     of a link of 5-17 s before each package with -p 1);
#  2b. the tests that judge what limits a run (first line kubetest.Measures(t)),
#     one package at a time: each waits until scripts/test.sh's work beside
#     the cluster tier has ended (STORBENCH_BESIDE_RUNNING), which by then
#     it mostly has;
#  3. the tests named TestClusterCeph..., alone as in 2, with one Ceph up
#     for them all (kubetest.CephUp uses it), brought down after;
#  4. the tests named TestClusterDown..., which take the cluster down for
#     ups of their own: told so (CLUSTER_DOWN_LAST=1), they leave it down,
#     which saves the up that would bring it back and the tier's own
#     teardown (about 80 s).
# The tests are found in the source: "DIR/ NAME shared|measures|alone" per
# test, by its first line: kubetest.Shared(t), kubetest.Measures(t), other.
tests=$(cd "$HERE" && grep -r -A1 --include='*_test.go' '^func TestCluster' $PKGS | awk '
  function out() { if (n != "") print f " " n " " how; n = "" }
  /_test\.go:func TestCluster/ { out(); f = $1; sub(/[^\/]*_test\.go:func$/, "", f); n = $2; sub(/\(.*/, "", n); how = "alone"; next }
  /_test\.go-\tkubetest\.Shared\(t\)/ && n != "" { how = "shared" }
  /_test\.go-\tkubetest\.Measures\(t\)/ && n != "" { how = "measures" }
  { out() }
  END { out() }' | sort -u)
shared=$(echo "$tests" | awk '$3 == "shared" {print $1 " " $2}')
SHARED_RE=$(echo "$shared" | awk 'NF == 2 {print $2}' | sort -u | paste -sd'|')
SHARED_PKGS=$(echo "$shared" | awk 'NF == 2 {print $1}' | sort -u | tr '\n' ' ')
ALONE_PKGS=$(echo "$tests" | awk '$3 == "alone" && $2 !~ /^TestCluster(Down|Ceph)/ {print $1}' | sort -u | tr '\n' ' ')
MEASURES_RE=$(echo "$tests" | awk '$3 == "measures" {print $2}' | sort -u | paste -sd'|')
MEASURES_PKGS=$(echo "$tests" | awk '$3 == "measures" {print $1}' | sort -u | tr '\n' ' ')
CEPH_PKGS=$(echo "$tests" | awk '$3 == "alone" && $2 ~ /^TestClusterCeph/ {print $1}' | sort -u | tr '\n' ' ')
DOWN_PKGS=$(echo "$tests" | awk '$2 ~ /^TestClusterDown/ {print $1}' | sort -u | tr '\n' ' ')
echo "cluster tier: $(echo "$shared" | grep -c .) tests that share the cluster (go test -p 2) in $SHARED_PKGS; then the others in $ALONE_PKGS${MEASURES_PKGS:+; then the tests that measure, in $MEASURES_PKGS}${CEPH_PKGS:+; then the tests named TestClusterCeph..., with one Ceph up for them, in $CEPH_PKGS}${DOWN_PKGS:+; then the tests named TestClusterDown... in $DOWN_PKGS}"
export SHARED_RE SHARED_PKGS ALONE_PKGS MEASURES_RE MEASURES_PKGS CEPH_PKGS DOWN_PKGS
exec bash "$HERE/test/cluster/cluster.sh" run bash "$HERE/scripts/k8s-integration.sh" --steps three "$@"
