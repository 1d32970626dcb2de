#!/usr/bin/env bash
# Kubernetes integration tests for storbench against the project's own test
# cluster (test/cluster/cluster.sh: a real control plane, kwok fake nodes, three
# real kubelet/containerd nodes on shaped links, local-path and netfs storage).
# Installs and builds what is missing (cached in $KAPI_ROOT: see BENCHMARKS.md
# for the cold build; seconds once cached), brings the cluster up under
# /tmp/storbench-cluster.lock, always brings it down, and exits with the
# tests' status.
#
# Usage (root): scripts/k8s-integration.sh [go test flags, e.g. -run Kwok]
# Environment: KAPI_ROOT (default ~/.cache/storbench-kapi), SKIP_INSTALL=1 to
# skip apt-get, CLUSTER_NODES / CLUSTER_RATE as for test/cluster/cluster.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
if [ "${SKIP_INSTALL:-0}" != 1 ]; then bash "$HERE/test/cluster/cluster.sh" install; fi
bash "$HERE/test/cluster/cluster.sh" build

export STORBENCH_K8S_INTEGRATION=1 CLUSTER_ENV=$KAPI_ROOT/run/cluster.env KUBECONFIG=$KAPI_ROOT/run/kubeconfig
# internal/classcheck: classes --measure on the test classes (quick profiles, one full, node failure), about 7 min.
PKGS=${PKGS:-"./internal/runner/kube/ ./test/deploytest/ ./test/cluster/ ./internal/classcheck/"}
if [ -d "$HERE/test/testcsi/incluster" ]; then PKGS="$PKGS ./test/testcsi/incluster/"; fi   # the test CSI driver's
# One package at a time: all use the one cluster.
export PKGS
exec bash "$HERE/test/cluster/cluster.sh" run bash -c 'cd "$0" && go test -count=1 -p 1 -timeout 25m "$@" $PKGS' "$HERE" "$@"
