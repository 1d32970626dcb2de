#!/usr/bin/env bash
# sidecars.sh - the Kubernetes CSI sidecars testcsi runs beside (external-provisioner,
# external-attacher, external-snapshotter's csi-snapshotter and snapshot-controller,
# external-resizer) built from the Go module proxy, and the snapshot CRDs.
# Usage: sidecars.sh build | path
# Cached in ${KAPI_ROOT:-~/.cache/storbench-kapi}/bin/csi (a second build takes seconds).
# All five are built by ONE `go build` in ONE module ($KAPI_ROOT/src/csi: a go.mod that
# requires the four sidecar modules, and a tools.go that imports their five mains), so they
# share one k8s.io version set (the newest any of them asks for, $K8S_STAGING below) and each
# Kubernetes package is compiled once, not once per sidecar. The sidecars' own go.mod files
# carry replace directives, which Go ignores in a dependency: ours pins every k8s.io staging
# module to $K8S_STAGING the same way (see docs/testcsi.md).
set -euo pipefail
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
export GOFLAGS=-buildvcs=false
OUT=$KAPI_ROOT/bin/csi SRC=$KAPI_ROOT/src/csi
K8S_STAGING=${K8S_STAGING:-v0.36.1}
SNAPSHOTTER=github.com/kubernetes-csi/external-snapshotter/v8@v8.7.0
# module@version and the commands under its cmd/
SIDECARS=(
  "github.com/kubernetes-csi/external-provisioner/v6@v6.3.0 csi-provisioner"
  "github.com/kubernetes-csi/external-attacher/v4@v4.13.0 csi-attacher"
  "$SNAPSHOTTER csi-snapshotter snapshot-controller"
  "github.com/kubernetes-csi/external-resizer/v2@v2.3.0 csi-resizer"
)
# the k8s.io staging modules (those k8s.io/kubernetes replaces with ./staging/src/...)
STAGING="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
  cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt
  kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
  mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller streaming"

moddir() { # the module cache directory of MODULE@VERSION
  go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}

stamp() { # what the cached binaries were built from
  printf '%s\n' "$K8S_STAGING" "${SIDECARS[@]}"
}

cached() {
  local s c
  for s in "${SIDECARS[@]}"; do
    for c in ${s#* }; do [ -x "$OUT/$c" ] || return 1; done
  done
  [ -f "$SRC/go.mod" ] && [ "$(cat "$OUT/.stamp" 2>/dev/null)" = "$(stamp)" ]
}

build_all() {
  cached && return 0
  local s mod pkgs=() ldflags=() c m
  rm -rf "$SRC"; mkdir -p "$SRC" "$OUT"
  {
    printf 'module storbench-sidecars\n\ngo 1.26.0\n\nrequire (\n'
    for s in "${SIDECARS[@]}"; do mod=${s%% *}; printf '\t%s %s\n' "${mod%@*}" "${mod##*@}"; done
    printf ')\n\nreplace (\n'
    for m in $STAGING; do printf '\tk8s.io/%s => k8s.io/%s %s\n' "$m" "$m" "$K8S_STAGING"; done
    printf ')\n'
  } > "$SRC/go.mod"
  { printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for s in "${SIDECARS[@]}"; do
      mod=${s%% *}
      for c in ${s#* }; do
        printf '\t_ "%s/cmd/%s"\n' "${mod%@*}" "$c"
        pkgs+=("${mod%@*}/cmd/$c")
        # each main gets its own version; a package pattern in -ldflags picks the main it applies to
        ldflags+=("-ldflags=${mod%@*}/cmd/$c=-s -w -X main.version=${mod##*@}")
      done
    done
    printf ')\n'; } > "$SRC/tools.go"
  echo "building ${pkgs[*]##*/} in one module (k8s.io $K8S_STAGING)" >&2
  (cd "$SRC" && go mod tidy && go build "${ldflags[@]}" -o "$OUT/" "${pkgs[@]}")
  stamp > "$OUT/.stamp"
}

crds() { # the six snapshot CRDs of the client module snapshot-controller was built with
  local client dir
  client=$(cd "$SRC" && go list -m -f '{{.Path}}@{{.Version}}' github.com/kubernetes-csi/external-snapshotter/client/v8)
  [ "$(cat "$OUT/crd/.version" 2>/dev/null)" = "$client" ] && [ "$(ls "$OUT"/crd/*.yaml 2>/dev/null | wc -l)" -ge 6 ] && return 0
  dir=$(moddir "$client")
  rm -rf "$OUT/crd"; mkdir -p "$OUT/crd"
  cp "$dir"/config/crd/*.yaml "$OUT/crd/"
  rm -f "$OUT/crd/kustomization.yaml"
  chmod u+w "$OUT"/crd/*.yaml
  echo "$client" > "$OUT/crd/.version"
  [ "$(ls "$OUT"/crd/*.yaml | wc -l)" -ge 6 ] || { echo "expected six snapshot CRDs in $dir/config/crd" >&2; return 1; }
}

build() {
  mkdir -p "$OUT"
  # One build at a time: two would write over each other's module in $SRC.
  exec 8>"$OUT/.lock"
  flock -w 3600 8 || { echo "could not take $OUT/.lock" >&2; return 1; }
  build_all
  crds
  echo "sidecars and CRDs in $OUT" >&2
}

case ${1:-} in
  build) build ;;
  path) echo "$OUT" ;;
  *) echo "usage: $0 build | path" >&2; exit 2 ;;
esac
