#!/usr/bin/env bash
# What node telemetry costs on a Kubernetes target (see main.go), on
# test/cluster/cluster.sh's cluster with its real nodes, brought up under the
# cluster lock and always down again.
# Usage: bench/k8stelemetry/run.sh [-seconds 20] [-reps 2]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
export KUBECONFIG=$KAPI_ROOT/run/kubeconfig
cd "$HERE"
go build -o /tmp/bench-k8stelemetry ./bench/k8stelemetry
exec bash test/cluster/cluster.sh run /tmp/bench-k8stelemetry "$@"
