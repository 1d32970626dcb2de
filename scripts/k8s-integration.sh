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
# The cluster tier took 25 min on 2 cores, warm (BENCHMARKS.md): classcheck 585 s, runner/kube 483 s,
# test/cluster 230 s, deploytest 38 s, testcsi/incluster 171 s.
if [ -z "${PKGS:-}" ]; then
  PKGS=$(cd "$HERE" && grep -rl --include='*_test.go' '^func TestCluster' internal test | xargs -n1 dirname | sort -u | sed 's|^|./|; s|$|/|' | tr '\n' ' ')
fi
[ -n "$PKGS" ] || { echo "k8s-integration.sh: no test named TestCluster... found" >&2; exit 1; }
# The tests named TestClusterDown... take the cluster down for ups of their
# own. They run after all the others, told so (CLUSTER_DOWN_LAST=1), and
# leave it down: the up that would bring it back and the tier's own
# teardown are saved (about 80 s). Go test flags that choose tests (-run,
# -skip) keep the one invocation, in which such a test brings the cluster
# back up.
DOWN_PKGS=
case " $* " in
  *" -run"* | *" -skip"* | *" -test.run"* | *" -test.skip"*) ;;
  *) DOWN_PKGS=$(cd "$HERE" && grep -l --include='*_test.go' -r '^func TestClusterDown' $PKGS | xargs -rn1 dirname | sort -u | sed 's|$|/|' | tr '\n' ' ') ;;
esac
echo "cluster tier: go test -run '^TestCluster' $PKGS${DOWN_PKGS:+, the tests named TestClusterDown... last in $DOWN_PKGS}"
# One package at a time: all use the one cluster.
export PKGS DOWN_PKGS
exec bash "$HERE/test/cluster/cluster.sh" run bash -c '
  cd "$0"
  if [ -z "$DOWN_PKGS" ]; then exec go test -count=1 -p 1 -timeout 25m -run "^TestCluster" "$@" $PKGS; fi
  s=0
  go test -count=1 -p 1 -timeout 25m -run "^TestCluster" -skip "^TestClusterDown" "$@" $PKGS || s=1
  CLUSTER_DOWN_LAST=1 go test -count=1 -p 1 -timeout 25m -run "^TestClusterDown" "$@" $DOWN_PKGS || s=1
  exit "$s"' "$HERE" "$@"
