#!/usr/bin/env bash
# csi.sh - storbench's test-only CSI driver (test/testcsi) on the test cluster, with the
# real sidecars (test/cluster/sidecars.sh): one controller beside external-provisioner,
# attacher, snapshotter, resizer and snapshot-controller, and one node plugin per real node (in
# that node's network namespace and cgroup, so it dies with `node stop`), registered straight
# into that node kubelet's plugins_registry (node-driver-registrar cannot
# be fetched here). docs/testcsi.md says what each StorageClass promises and breaks.
#
#   csi.sh build   the sidecars and CRDs (cached in $KAPI_ROOT/bin/csi) and the driver
#   csi.sh up      CRDs, CSIDriver, StorageClasses testcsi-<mode>, VolumeSnapshotClass, processes
#                  (testcsi-netfs, with 2 or more real nodes: the netfs export, mounted by each node)
#   csi.sh down    claims and snapshots of its classes, processes, mounts, loop devices, state
#   csi.sh node-up NODE  the node plugin of NODE again, after `cluster.sh node start NODE`
#   csi.sh status  processes, CSINodes, volumes and loop devices
#   csi.sh usage [SECONDS]  CPU (% of one core) and resident memory of each process over SECONDS (60)
#
# Reads $KAPI_ROOT/run/cluster.env (or $CLUSTER_ENV), which test/cluster/cluster.sh writes:
# KUBECONFIG, NODES, SHARED_DIR and per node (name with '-' as '_') NETNS (empty for the
# host's own node) and KUBELET_ROOT. Needs root (loop devices, mounts, nsenter).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
export GOFLAGS=-buildvcs=false
BIN=$KAPI_ROOT/bin CSIBIN=$KAPI_ROOT/bin/csi
RUN=$KAPI_ROOT/run/csi
CLUSTER_ENV=${CLUSTER_ENV:-$KAPI_ROOT/run/cluster.env}
DRIVER=testcsi.storbench.io
MODES="local shared bad-snapshot stuck-expand root-only no-fsync"
CTRL_SOCK=$RUN/controller.sock
MAX_VOLUMES=${TESTCSI_MAX_VOLUMES:-8}       # per node: CSINode allocatable count, loop devices held
CAPACITY=${TESTCSI_CAPACITY_BYTES:-68719476736}

log() { echo "csi: $*" >&2; }
KC() { "$BIN/kubectl" "$@"; }
load_env() {
  [ -f "$CLUSTER_ENV" ] || { log "no $CLUSTER_ENV: bring the cluster up with test/cluster/cluster.sh first"; return 1; }
  # shellcheck disable=SC1090
  . "$CLUSTER_ENV"
  export KUBECONFIG
  STATE=${SHARED_DIR:-$KAPI_ROOT/run/shared}/testcsi
  # netfs mode: the cluster's network filesystem export (storage.sh), each volume a directory of
  # its testcsi/ that every node using it mounts itself (sshfs from the node's namespace)
  if [ -n "${NETFS_SERVER:-}" ]; then
    NETFS_SHARE=$NETFS_EXPORT/testcsi NETFS_ADDR=$(nodevar "$NETFS_SERVER" IP):$NETFS_PORT
    case " $MODES " in *" netfs "*) ;; *) MODES="$MODES netfs" ;; esac
  fi
}
nodevar() { local v; v="$(echo "$1" | tr - _)_$2"; echo "${!v:-}"; }
waitfor() { local d=$1; shift; for _ in $(seq 1 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  log "timeout waiting for $d"; return 1; }

build() {
  bash "$HERE/sidecars.sh" build
  build_driver
}

build_driver() { # seconds when the Go build cache is warm
  mkdir -p "$CSIBIN"
  (cd "$REPO" && go build -o "$CSIBIN/testcsi" ./test/testcsi/cmd/testcsi)
}

# start NAME CMD...: CMD in its own session (so down can end it and its children), logging to
# $RUN/logs/NAME.log, its pid in $RUN/pids/NAME. With CGROUP=sbnode<i> set, in that node's
# cgroup <CGROUP>/system of every (v1) hierarchy, as test/cluster/nodes.sh's node_run does.
start() { local n=$1; shift
  (
    local d
    if [ -n "${CGROUP:-}" ]; then
      for d in /sys/fs/cgroup/*/; do
        [ "$d" = /sys/fs/cgroup/unified/ ] || echo "$BASHPID" > "$d$CGROUP/system/cgroup.procs"
      done
    fi
    exec setsid "$@"
  ) > "$RUN/logs/$n.log" 2>&1 < /dev/null &
  echo $! > "$RUN/pids/$n"
}

# supervise NAME CMD...: CMD again each time it exits, while the driver's socket exists (the
# sidecars exit when the driver's socket goes away, and on some API errors).
supervise() { local n=$1; shift
  start "$n" bash -c 'while [ -S "$0" ]; do "$@"; echo "exited with $?; restarting in 1 s"; sleep 1; done' "$CTRL_SOCK" "$@"
}

up() {
  load_env
  [ ! -d "$RUN/pids" ] || { log "already up ($RUN): csi.sh down first"; return 1; }
  local s
  for s in csi-provisioner csi-attacher csi-snapshotter csi-resizer snapshot-controller; do
    [ -x "$CSIBIN/$s" ] || { log "$CSIBIN/$s missing: run test/cluster/sidecars.sh build"; return 1; }
  done
  for s in losetup mkfs.xfs xfs_growfs mkfs.ext4 resize2fs e2fsck fsfreeze blockdev; do
    command -v "$s" >/dev/null || { log "$s missing: apt-get install xfsprogs e2fsprogs util-linux"; return 1; }
  done
  build_driver
  mkdir -p "$RUN/logs" "$RUN/pids" "$STATE"
  objects
  start controller "$CSIBIN/testcsi" --role=controller --endpoint="$CTRL_SOCK" --state-dir="$STATE" --capacity-bytes="$CAPACITY"
  waitfor "the controller's socket" test -S "$CTRL_SOCK" || { tail -n 20 "$RUN/logs/controller.log" >&2; return 1; }
  local common=(--csi-address="$CTRL_SOCK" --kubeconfig="$KUBECONFIG" --leader-election=false --v=2)
  supervise csi-provisioner "$CSIBIN/csi-provisioner" "${common[@]}" --feature-gates=Topology=true \
    --extra-create-metadata --default-fstype=xfs --timeout=60s
  supervise csi-attacher "$CSIBIN/csi-attacher" "${common[@]}" --timeout=30s
  supervise csi-snapshotter "$CSIBIN/csi-snapshotter" "${common[@]}" --timeout=60s
  supervise csi-resizer "$CSIBIN/csi-resizer" "${common[@]}" --timeout=30s
  start snapshot-controller "$CSIBIN/snapshot-controller" --kubeconfig="$KUBECONFIG" --leader-election=false --v=2
  local n
  for n in $NODES; do start_node_plugin "$n"; done
  for n in $NODES; do registered "$n"; done
  log "up: classes $(for m in $MODES; do printf 'testcsi-%s ' "$m"; done)on $NODES"
}

# start_node_plugin NODE: the node plugin in NODE's network namespace and in its cgroup
# sbnode<i>/system (cluster.env's <node>_CGROUP), beside its kubelet and containerd: `node stop`
# kills it with the rest of the node, as a dead machine's plugin would be gone.
start_node_plugin() { local n=$1 ns root cg
  ns=$(nodevar "$n" NETNS) root=$(nodevar "$n" KUBELET_ROOT) cg=$(nodevar "$n" CGROUP)
  [ -n "$root" ] || { log "cluster.env has no KUBELET_ROOT for $n"; return 1; }
  # A unix socket's path holds at most 107 bytes: short names under the kubelet's root.
  local sock=$root/plugins/testcsi/csi.sock reg=$root/plugins_registry/testcsi-reg.sock
  [ ${#reg} -le 107 ] && [ ${#sock} -le 107 ] || { log "socket path $reg or $sock is longer than 107 bytes: choose a shorter KAPI_ROOT"; return 1; }
  local cmd=("$CSIBIN/testcsi" --role=node --node-id="$n" --endpoint="$sock" --registration-socket="$reg"
    --state-dir="$STATE" --max-volumes="$MAX_VOLUMES")
  if [ -n "$ns" ]; then cmd=(nsenter --net="/run/netns/$ns" "${cmd[@]}"); fi
  CGROUP=$cg start "node-$n" "${cmd[@]}"
}

registered() { # NODE: the kubelet of NODE lists the driver in its CSINode
  waitfor "$DRIVER registered on $1" sh -c "\"$BIN/kubectl\" get csinode $1 -o jsonpath='{.spec.drivers[*].name}' | grep -qw $DRIVER" ||
    { tail -n 20 "$RUN/logs/node-$1.log" "$RUN/logs/controller.log" >&2; return 1; }
}

node_up() { # NODE: after `cluster.sh node start NODE` (its plugin died with it): the plugin again
  load_env
  [ -d "$RUN/pids" ] || return 0   # the driver is not up
  local p=$RUN/pids/node-$1
  if [ -f "$p" ] && kill -0 "$(cat "$p")" 2>/dev/null; then log "the node plugin of $1 is running"; return 0; fi
  start_node_plugin "$1"
  registered "$1"
}

objects() { # CRDs (snapshot-controller waits for all six), then the driver's objects
  KC apply -f "$CSIBIN/crd/" >/dev/null
  KC wait --for=condition=established --timeout=60s -f "$CSIBIN/crd/" >/dev/null
  {
    cat <<EOF2
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $DRIVER, labels: {app.kubernetes.io/part-of: testcsi}}
spec:
  attachRequired: true
  podInfoOnMount: false
  volumeLifecycleModes: [Persistent]
  # The node plugin declares VOLUME_MOUNT_GROUP: the kubelet hands fsGroup to it instead of
  # changing ownership itself (so root-only can ignore it).
  fsGroupPolicy: File
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata:
  name: testcsi
  labels: {app.kubernetes.io/part-of: testcsi}
driver: $DRIVER
deletionPolicy: Delete
EOF2
    local m binding params
    for m in $MODES; do
      binding=Immediate; [ "$m" != local ] || binding=WaitForFirstConsumer
      params="mode: $m, csi.storage.k8s.io/fstype: xfs"
      if [ "$m" = netfs ]; then mkdir -p "$NETFS_SHARE"; params="mode: $m, server: \"$NETFS_ADDR\", share: \"$NETFS_SHARE\""; fi
      cat <<EOF2
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: testcsi-$m, labels: {app.kubernetes.io/part-of: testcsi}}
provisioner: $DRIVER
parameters: {$params}
reclaimPolicy: Delete
volumeBindingMode: $binding
allowVolumeExpansion: true
EOF2
    done
  } | KC apply -f - >/dev/null
}

# alive PID: not gone and not a zombie (lib.sh's: a zombie may wait seconds for PID 1 to reap it)
alive() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ -n "$s" ] && [ "$s" != Z ]; }
stop_pid() { local f=$1 p; [ -f "$f" ] || return 0; p=$(cat "$f")
  kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true
  for _ in $(seq 1 50); do alive "$p" || break; sleep 0.2; done
  kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true
  rm -f "$f"; }

our_claims() { # namespace/name of every claim of a class of the driver (testcsi-*, ceph.sh's cephfs)
  local classes
  classes=" $(KC get storageclass -o jsonpath="{range .items[?(@.provisioner==\"$DRIVER\")]}{.metadata.name} {end}" 2>/dev/null)"
  KC get pvc -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {.spec.storageClassName}{"\n"}{end}' 2>/dev/null |
    awk -v classes="$classes" '$2 ~ /^testcsi-/ || index(classes, " " $2 " ") {print $1}'
}

release_objects() { # while the driver still runs: pods on its volumes, snapshots and claims, so it
  # unmounts and deletes what it made
  local c deadline claims
  claims=$(our_claims | tr '\n' ' ')
  if [ -n "$claims" ]; then
    KC get pods -A -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name} {.spec.volumes[*].persistentVolumeClaim.claimName}{"\n"}{end}' 2>/dev/null |
      awk -v claims=" $claims" '{ for (i = 3; i <= NF; i++) if (index(claims, " " $1 "/" $i " ")) { print $1, $2; break } }' |
      while read -r ns name; do KC delete pod -n "$ns" "$name" --grace-period=1 --wait=false >/dev/null 2>&1 || true; done
  fi
  KC get volumesnapshot -A -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name} {.spec.volumeSnapshotClassName}{"\n"}{end}' 2>/dev/null |
    awk '$3 == "testcsi" {print $1, $2}' | while read -r ns name; do KC delete volumesnapshot -n "$ns" "$name" --wait=false >/dev/null 2>&1 || true; done
  for c in $(our_claims); do KC delete pvc -n "${c%%/*}" "${c#*/}" --wait=false >/dev/null 2>&1 || true; done
  deadline=$((SECONDS + ${TESTCSI_DOWN_WAIT:-30}))
  while [ $SECONDS -lt $deadline ]; do
    [ -z "$(KC get pv -o jsonpath="{range .items[?(@.spec.csi.driver==\"$DRIVER\")]}{.metadata.name} {end}" 2>/dev/null)" ] && break
    sleep 1
  done
}

down() { # every step tolerates a half-made set-up
  set +e
  load_env 2>/dev/null || STATE=${SHARED_DIR:-$KAPI_ROOT/run/shared}/testcsi
  if [ -d "$RUN/pids" ] && [ -f "${KUBECONFIG:-}" ] && KC get --raw /readyz >/dev/null 2>&1; then
    release_objects
    KC delete storageclass -l app.kubernetes.io/part-of=testcsi --wait=false >/dev/null 2>&1
    KC delete volumesnapshotclass -l app.kubernetes.io/part-of=testcsi --wait=false >/dev/null 2>&1
    KC delete csidriver "$DRIVER" --wait=false >/dev/null 2>&1
  fi
  local f
  for f in "$RUN"/pids/*; do [ -e "$f" ] && stop_pid "$f"; done
  release_disks
  release_shares
  rm -rf "$STATE" "$RUN"
  set -e
}

release_disks() { # every mount of a loop device of ours, then the devices
  local dev mp
  [ -n "${STATE:-}" ] || return 0
  losetup --list --noheadings --output NAME,BACK-FILE 2>/dev/null | awk -v s="$STATE/" 'index($2, s) == 1 {print $1}' |
  while read -r dev; do
    awk -v d="$dev" '$0 ~ " - " { split($0, a, " - "); split(a[2], b, " "); if (b[2] == d) print $5 }' /proc/self/mountinfo | sort -r |
      while read -r mp; do fsfreeze --unfreeze "$mp" 2>/dev/null; umount -l "$mp" || log "umount $mp failed"; done
    losetup --detach "$dev" || log "losetup --detach $dev failed"
  done
}

release_shares() { # every node's sshfs mount of a netfs volume (its sshfs exits with it)
  [ -n "${NETFS_ADDR:-}" ] || return 0
  local mp
  awk -v src="${NETFS_ADDR%:*}:$NETFS_SHARE/" '{ split($0, a, " - "); split(a[2], b, " ") }
    b[1] == "fuse.sshfs" && index(b[2], src) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r mp; do umount -l "$mp" || log "umount $mp failed"; done
}

status() {
  load_env
  local f
  for f in "$RUN"/pids/*; do [ -e "$f" ] || continue
    if kill -0 "$(cat "$f")" 2>/dev/null; then echo "$(basename "$f"): running (pid $(cat "$f"))"; else echo "$(basename "$f"): dead"; fi
  done
  KC get csinode -o custom-columns='NODE:.metadata.name,DRIVERS:.spec.drivers[*].name,MAX:.spec.drivers[*].allocatable.count'
  ls "$STATE/volumes" 2>/dev/null | sed -n 's/\.json$//p' | sed 's/^/volume /'
  losetup --list --noheadings --output NAME,BACK-FILE | awk -v s="$STATE/" 'index($2, s) == 1'
}

usage() { # CPU over an interval from /proc/PID/stat (utime+stime of the process and its reaped
  # children, so a restarted sidecar counts), RSS from /proc/PID/status; a supervised sidecar is the
  # loop's child
  local secs=${1:-60} f p name hz; hz=$(getconf CLK_TCK)
  declare -A t0
  pids() { local f p c; for f in "$RUN"/pids/*; do p=$(cat "$f"); c=$(pgrep -P "$p" | head -1)
    [ -n "$c" ] && grep -q '^bash' "/proc/$p/comm" 2>/dev/null && p=$c; echo "$(basename "$f") $p"; done; }
  ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat" 2>/dev/null || echo 0; }
  while read -r name p; do t0[$name]=$(ticks "$p"); done < <(pids)
  sleep "$secs"
  printf '%-28s %8s %9s\n' PROCESS CPU_PCT RSS_MIB
  while read -r name p; do
    awk -v a="${t0[$name]}" -v b="$(ticks "$p")" -v hz="$hz" -v s="$secs" -v n="$name" \
      -v rss="$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null)" \
      'BEGIN { printf "%-28s %8.2f %9.1f\n", n, (b - a) / hz / s * 100, rss / 1024 }'
  done < <(pids)
}

case ${1:-} in
  build|up|down|status) "$1" ;;
  node-up) node_up "$2" ;;
  usage) shift; usage "$@" ;;
  *) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
