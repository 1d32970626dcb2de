#!/usr/bin/env bash
# Kubernetes integration tests for storbench (issue 6), against a real cluster
# on loopback: ../shared/k8s/kapi.sh (control plane + kwok fake nodes) and
# kreal.sh (one real kubelet/containerd node). Installs and builds what is
# missing (cached in $KAPI_ROOT: ~11 min the first time, seconds after), brings
# both up, always brings them down, and exits with the tests' status.
#
# Usage (root): scripts/k8s-integration.sh [go test flags, e.g. -run Kwok]
# Environment: KAPI_ROOT (default ~/.cache/storbench-kapi), K8S_SCRIPTS (default
# the shared/k8s folder beside the clone), SKIP_INSTALL=1 to skip apt-get.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
K8S_SCRIPTS=${K8S_SCRIPTS:-$(cd "$HERE/../shared/k8s" 2>/dev/null && pwd || true)}
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
[ -x "$K8S_SCRIPTS/kapi.sh" ] || { echo "kapi.sh not found: set K8S_SCRIPTS to the folder holding kapi.sh and kreal.sh" >&2; exit 2; }

if [ "${SKIP_INSTALL:-0}" != 1 ]; then
  "$K8S_SCRIPTS/kapi.sh" install
  "$K8S_SCRIPTS/kreal.sh" install
fi
"$K8S_SCRIPTS/kapi.sh" build
"$K8S_SCRIPTS/kreal.sh" build

down() {
  "$K8S_SCRIPTS/kreal.sh" down || true
  "$K8S_SCRIPTS/kapi.sh" down || true
}
trap down EXIT INT TERM
"$K8S_SCRIPTS/kapi.sh" up
"$K8S_SCRIPTS/kreal.sh" up

export KUBECONFIG=$KAPI_ROOT/run/kubeconfig STORBENCH_K8S_INTEGRATION=1
cd "$HERE"
status=0
# One package at a time: both use the one cluster.
go test -count=1 -p 1 -timeout 20m "$@" ./internal/runner/kube/ ./internal/deploytest/ ./internal/classcheck/ || status=$?
exit $status
