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
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
if [ "${SKIP_INSTALL:-0}" != 1 ]; then bash "$HERE/test/cluster/cluster.sh" install; fi
bash "$HERE/test/cluster/cluster.sh" build

export STORBENCH_K8S_INTEGRATION=1 CLUSTER_ENV=$KAPI_ROOT/run/cluster.env KUBECONFIG=$KAPI_ROOT/run/kubeconfig
# The cluster tier is every test named TestCluster... (test/kubetest fails any
# other test that asks for the cluster), in the packages that declare one;
# PKGS narrows it, go test flags given here (-run, -v) come after the default.
if [ -z "${PKGS:-}" ]; then
  PKGS=$(cd "$HERE" && grep -rl --include='*_test.go' '^func TestCluster' internal test | xargs -n1 dirname | sort -u | sed 's|^|./|; s|$|/|' | tr '\n' ' ')
fi
[ -n "$PKGS" ] || { echo "k8s-integration.sh: no test named TestCluster... found" >&2; exit 1; }
export PKGS
# Each test holds the cluster alone, or shared with one test of another
# package when its first statement is kubetest.Shared(t): it changes
# nothing another test sees, measures nothing another could disturb and
# checks only its own run's objects (test/kubetest/hold.go). Go test flags
# that choose tests (-run, -skip) keep one invocation, two packages at a
# time, the holds keeping them apart; a TestClusterDown... test in it
# brings the cluster back up.
case " $* " in
  *" -run"* | *" -skip"* | *" -test.run"* | *" -test.skip"*)
    echo "cluster tier: go test -p 2 -run '^TestCluster' $* $PKGS"
    exec bash "$HERE/test/cluster/cluster.sh" run bash -c '
      cd "$0"
      exec go test -count=1 -p 2 -timeout 45m -run "^TestCluster" "$@" $PKGS' "$HERE" "$@"
    ;;
esac
# Otherwise in three steps, each test once:
#  1. the tests that share the cluster, two packages at a time, so that two
#     of them run at once (mixed with the others, they rarely met);
#  2. the others but TestClusterDown..., one package at a time (each holds
#     the cluster alone, and nothing else builds or runs beside it);
#  3. the tests named TestClusterDown..., which take the cluster down for
#     ups of their own: told so (CLUSTER_DOWN_LAST=1), they leave it down,
#     which saves the up that would bring it back and the tier's own
#     teardown (about 80 s).
# The shared tests are found in the source: "DIR/ NAME" per test whose
# first line is kubetest.Shared(t).
shared=$(cd "$HERE" && grep -r -A1 --include='*_test.go' '^func TestCluster' $PKGS | awk '
  /_test\.go:func TestCluster/ { f = $1; sub(/[^\/]*_test\.go:func$/, "", f); n = $2; sub(/\(.*/, "", n); next }
  /_test\.go-\tkubetest\.Shared\(t\)/ && n != "" { print f " " n }
  { n = "" }' | sort -u)
SHARED_RE=$(echo "$shared" | awk 'NF == 2 {print $2}' | sort -u | paste -sd'|')
SHARED_PKGS=$(echo "$shared" | awk 'NF == 2 {print $1}' | sort -u | tr '\n' ' ')
DOWN_PKGS=$(cd "$HERE" && grep -l --include='*_test.go' -r '^func TestClusterDown' $PKGS | xargs -rn1 dirname | sort -u | sed 's|$|/|' | tr '\n' ' ')
echo "cluster tier: $(echo "$shared" | grep -c .) tests that share the cluster (go test -p 2) in $SHARED_PKGS; then the others in $PKGS${DOWN_PKGS:+; then the tests named TestClusterDown... in $DOWN_PKGS}"
export SHARED_RE SHARED_PKGS DOWN_PKGS
exec bash "$HERE/test/cluster/cluster.sh" run bash -c '
  cd "$0"
  s=0
  if [ -n "$SHARED_RE" ]; then
    go test -count=1 -p 2 -timeout 25m -run "^($SHARED_RE)\$" "$@" $SHARED_PKGS || s=1
  fi
  go test -count=1 -p 1 -timeout 25m -run "^TestCluster" -skip "^(TestClusterDown.*${SHARED_RE:+|$SHARED_RE})\$" "$@" $PKGS || s=1
  if [ -n "$DOWN_PKGS" ]; then
    CLUSTER_DOWN_LAST=1 go test -count=1 -p 1 -timeout 25m -run "^TestClusterDown" "$@" $DOWN_PKGS || s=1
  fi
  exit "$s"' "$HERE" "$@"
