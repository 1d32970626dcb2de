#!/usr/bin/env bash
# Orchestration overhead of Kubernetes targets (see main.go), against the
# loopback cluster of ../shared/k8s. Brings it up when it is not already up,
# and then always down again. Usage: bench/k8s/run.sh [-nodes 10] [-rounds parallel]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
K8S_SCRIPTS=${K8S_SCRIPTS:-$(cd "$HERE/../shared/k8s" && pwd)}
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
export KUBECONFIG=$KAPI_ROOT/run/kubeconfig
if [ ! -f "$KUBECONFIG" ]; then
  trap '"$K8S_SCRIPTS/kapi.sh" down' EXIT INT TERM
  "$K8S_SCRIPTS/kapi.sh" up
fi
cd "$HERE"
go run ./bench/k8s "$@"
