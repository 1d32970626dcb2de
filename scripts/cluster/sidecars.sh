#!/usr/bin/env bash
# sidecars.sh - the Kubernetes CSI sidecars testcsi runs beside (external-provisioner,
# external-attacher, external-snapshotter's csi-snapshotter and snapshot-controller,
# external-resizer) built from the Go module proxy, and the snapshot CRDs.
# Usage: sidecars.sh build | path
# Cached in ${KAPI_ROOT:-~/.cache/storbench-kapi}/bin/csi (a second build takes seconds);
# sources are copied to $KAPI_ROOT/src/csi. The sidecars' go.mod files carry replace
# directives, so `go install pkg@version` fails: each module is downloaded, copied and
# built inside its copy with -mod=mod (see docs/testcsi.md).
set -euo pipefail
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
export GOFLAGS=-buildvcs=false
OUT=$KAPI_ROOT/bin/csi SRC=$KAPI_ROOT/src/csi
SNAPSHOTTER=github.com/kubernetes-csi/external-snapshotter/v8@v8.7.0
# module@version and the commands under its cmd/
SIDECARS=(
  "github.com/kubernetes-csi/external-provisioner/v6@v6.3.0 csi-provisioner"
  "github.com/kubernetes-csi/external-attacher/v4@v4.13.0 csi-attacher"
  "$SNAPSHOTTER csi-snapshotter snapshot-controller"
  "github.com/kubernetes-csi/external-resizer/v2@v2.3.0 csi-resizer"
)

moddir() { # the module cache directory of MODULE@VERSION
  go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}

build_one() { # module@version cmd...
  local mod=$1; shift
  local version=${mod##*@} name; name=$(basename "${mod%%@*}"); [[ $name == v[0-9]* ]] && name=$(basename "$(dirname "${mod%%@*}")")
  local stamp=$OUT/.$name.version missing=0 c
  for c in "$@"; do [ -x "$OUT/$c" ] || missing=1; done
  if [ "$missing" = 0 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$mod" ]; then return 0; fi
  local dir src=$SRC/$name-$version
  dir=$(moddir "$mod"); [ -n "$dir" ] || { echo "go mod download $mod failed" >&2; return 1; }
  rm -rf "$src"; mkdir -p "$SRC"; cp -r "$dir" "$src"; chmod -R u+w "$src"
  if [ "$mod" = "$SNAPSHOTTER" ]; then  # its client module is a sibling directory in git, not in the zip
    (cd "$src" && go mod edit -dropreplace=github.com/kubernetes-csi/external-snapshotter/client/v8)
  fi
  for c in "$@"; do
    echo "building $c ($mod)" >&2
    (cd "$src" && go build -mod=mod -ldflags "-s -w -X main.version=$version" -o "$OUT/$c" "./cmd/$c")
  done
  echo "$mod" > "$stamp"
}

crds() { # the six snapshot CRDs of the client module snapshot-controller was built with
  local src=$SRC/external-snapshotter-${SNAPSHOTTER##*@} client dir
  client=$(cd "$src" && go list -mod=mod -m -f '{{.Path}}@{{.Version}}' github.com/kubernetes-csi/external-snapshotter/client/v8)
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
  # One build at a time: two would copy over each other's sources in $SRC.
  exec 8>"$OUT/.lock"
  flock -w 3600 8 || { echo "could not take $OUT/.lock" >&2; return 1; }
  local s
  for s in "${SIDECARS[@]}"; do
    # shellcheck disable=SC2086
    build_one $s
  done
  crds
  echo "sidecars and CRDs in $OUT" >&2
}

case ${1:-} in
  build) build ;;
  path) echo "$OUT" ;;
  *) echo "usage: $0 build | path" >&2; exit 2 ;;
esac
