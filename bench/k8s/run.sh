#!/usr/bin/env bash
# Orchestration overhead of Kubernetes targets (see main.go), against the
# control plane of test/cluster/cluster.sh with kwok fake nodes only (no real
# node: CLUSTER_NODES=0). Uses a cluster already up, or brings one up under
# the cluster lock and always down again. Usage: bench/k8s/run.sh [-nodes 10] [-rounds parallel]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
export KUBECONFIG=$KAPI_ROOT/run/kubeconfig
cd "$HERE"
if [ -f "$KUBECONFIG" ]; then exec go run ./bench/k8s "$@"; fi
CLUSTER_NODES=${CLUSTER_NODES:-0} exec bash test/cluster/cluster.sh run go run ./bench/k8s "$@"
