#!/usr/bin/env bash
# cluster.sh - storbench's own test cluster on this machine (root, Debian; no Docker, no
# registry): a real control plane on 127.0.0.1, kwok fake nodes, and real nodes with their own
# containerd and kubelet: kreal-node on the host's own network, kreal-node-2..N each in a network
# namespace behind a tc-shaped veth. Storage: local-path-provisioner (class local-path) and a
# network filesystem served from the last node (class netfs). docs/cluster.md says what is real.
#
#   cluster.sh install             Debian packages the cluster needs (apt-get)
#   cluster.sh build               binaries and images, cached in $KAPI_ROOT (~/.cache/storbench-kapi)
#   cluster.sh cached              exit 0 when build has only the project's own CSI driver left to build
#   cluster.sh up                  start everything; on failure, tear it down again
#   cluster.sh down                stop everything, undo every host change (always safe to run)
#   cluster.sh run CMD...          flock /tmp/storbench-cluster.lock, up, CMD, down (even on signals)
#   cluster.sh status              nodes, their links and rates, classes
#   cluster.sh check-clean         fail if anything of a cluster is left on the host
#   cluster.sh node stop|start|cut|restore|shape|unshape NAME [RATE]
#   cluster.sh sshd NAME PUBKEY_FILE [PORT]   an sshd in the node's namespace (port 22 on its address)
#   cluster.sh sshd NAME stop
#   cluster.sh kwok-nodes N [k=v...] | pvs N [class]    fake nodes kwok-node-1..N, static fake PVs
#   cluster.sh nas up|down|sshd PUBKEY_FILE|shape RATE|unshape|status   a NAS that is not a node (nas.sh)
# Environment: CLUSTER_NODES (real nodes, default 3), CLUSTER_RATE (tbf rate of every link,
# default 1gbit), NODE_GRACE (node-monitor grace, default 16s), KAPI_ROOT, CLUSTER_CEPH=1 (a real
# Ceph across the real nodes, test/cluster/ceph.sh; CEPH_FS=1 adds CephFS and class cephfs),
# CLUSTER_GLUSTER=1 (a GlusterFS volume and class "gluster": gluster.sh), CLUSTER_FAIL_AT=STEP
# (the harness's own tests: up fails after STEP, host or node-I, and must tear down everything).
# While up, $KAPI_ROOT/run/cluster.env (bash) describes the cluster for scripts and tests.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/host.sh"   # what may be in the way; what the cluster made (OWNED), what was there before (BASELINE)
C=$HERE
LOCK=${CLUSTER_LOCK:-/tmp/storbench-cluster.lock}
N=${CLUSTER_NODES:-3}
[ -f "$RUN/nodes.count" ] && N=$(cat "$RUN/nodes.count")

install() {
  local need=() p
  for p in containerd runc containernetworking-plugins iptables iproute2 etcd-server iperf3 sshfs fuse3 socat \
           openssh-server openssh-client openssl curl gcc libc6-dev fio python3 util-linux procps \
           xfsprogs e2fsprogs glusterfs-server glusterfs-client; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  apt-get update -qq
  # Debian's containerd replaces Docker's containerd.io (and apt then removes docker-ce): nothing
  # the machine has may go to make room for the cluster.
  local gone; gone=$(apt_would_remove "${need[@]}" | tr '\n' ' ')
  if [ -n "$gone" ]; then
    log "refusing to install ${need[*]}: apt-get would remove ${gone% } (a running Docker's containerd.io, say); install them yourself if that is what you want"
    return 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

build() {
  # One build at a time per $KAPI_ROOT: scripts/test.sh's background build and
  # k8s-integration.sh's own; the second waits, then finds everything cached.
  mkdir -p "$ROOT"
  exec 8>"$ROOT/build.lock"
  flock 8
  echo $$ > "$ROOT/build.pid"   # the holder: scripts/test.sh raises its priority when it waits on it
  bash "$C/control-plane.sh" build
  bash "$C/nodes.sh" build
  bash "$C/storage.sh" build
  if [ -f "$C/csi.sh" ]; then bash "$C/csi.sh" build; fi
}

cached() {
  [ "$("$BIN/kube-apiserver" --version 2>/dev/null)" = "Kubernetes v$K8S_VERSION" ] && [ -x "$BIN/kwok" ] &&
    [ "$("$BIN/kubelet" --version 2>/dev/null)" = "Kubernetes v$K8S_VERSION" ] &&
    [ -f "$BIN/images/pause.tar" ] && [ -f "$BIN/images/$FIO_ARCHIVE" ] && [ -f "$BIN/images/tools.tar" ] &&
    [ "$(cat "$BIN/local-path-provisioner.version" 2>/dev/null)" = "$LPP_VERSION" ] &&
    for b in csi-provisioner csi-attacher csi-snapshotter csi-resizer snapshot-controller; do [ -x "$BIN/csi/$b" ] || return 1; done
}

# fail_at STEP: CLUSTER_FAIL_AT=STEP makes up fail right after STEP (host, node-I), as a node that
# never registers would: the harness's own tests check that a half-made cluster is torn down whole.
fail_at() { [ "${CLUSTER_FAIL_AT:-}" != "$1" ] || { log "failing after $1 (CLUSTER_FAIL_AT)"; return 1; }; }

up() {
  local t0 i; t0=$(now_ms)
  [ ! -f "$RUN/nodes.count" ] || { log "a cluster is up already ($RUN): cluster.sh down first"; return 1; }
  local way
  if ! way=$(host_in_the_way "$N"); then   # before anything is made: nothing here is the cluster's
    log "refusing to start: the cluster would replace or collide with what runs on this host:"
    echo "$way" | sed 's/^/  - /' >&2
    REFUSED=1   # nothing was made: run's finish has nothing to bring down
    return 1
  fi
  if [ -z "${CLUSTER_LOCK_HELD:-}" ] && flock -n "$LOCK" true 2>/dev/null; then
    log "warning: nobody holds $LOCK; one cluster per machine: use 'cluster.sh run', or flock it yourself"; fi
  mkdir -p "$RUN"; echo "$N" > "$RUN/nodes.count"
  trap 'log "up failed: tearing down"; down' ERR
  bash "$C/nodes.sh" host_up "$N"
  fail_at host
  bash "$C/control-plane.sh" up >/dev/null
  for i in $(seq 1 "$N"); do bash "$C/nodes.sh" up "$i"; fail_at "node-$i"; done
  bash "$C/nodes.sh" routes "$N"
  bash "$C/storage.sh" up "$N"
  if [ "${CLUSTER_GLUSTER:-}" = 1 ]; then bash "$C/gluster.sh" cluster-up "$N"; fi
  write_env
  if [ -f "$C/csi.sh" ]; then bash "$C/csi.sh" up; fi
  if [ "${CLUSTER_CEPH:-}" = 1 ]; then bash "$C/ceph.sh" cluster up; fi   # opt-in: Ceph across the real nodes
  trap - ERR
  echo "cluster up in $(since "$t0") s: KUBECONFIG=$KUBECONFIG, env $RUN/cluster.env"
}

write_env() {
  local i v f=$RUN/cluster.env names=""
  for i in $(seq 1 "$N"); do names="$names $(node_name "$i")"; done
  {
    echo "# written by test/cluster/cluster.sh up; removed by down"
    echo "KAPI_ROOT=$ROOT"
    echo "KUBECONFIG=$KUBECONFIG"
    echo "API_URL=https://127.0.0.1:$API_PORT"
    echo "API_BRIDGE_URL=https://$BRIDGE_IP:$API_PORT"
    echo "BRIDGE=$BRIDGE"
    echo "BRIDGE_IP=$BRIDGE_IP"
    echo "NODES=\"${names# }\""
    echo "NODE_GRACE=${NODE_GRACE:-16s}"
    echo "RATE=${CLUSTER_RATE:-1gbit}"
    echo "REAL_IMAGE=$REAL_IMAGE"
    echo "TOOLS_IMAGE=$TOOLS_IMAGE"
    echo "SHARED_DIR=$RUN/shared"
    echo "LOCAL_PATH_CLASS=local-path"
    if [ "$N" -ge 2 ]; then
      echo "NETFS_CLASS=netfs"
      echo "NETFS_SERVER=$(node_name "$N")"
      echo "NETFS_PORT=$NETFS_PORT"
      echo "NETFS_EXPORT=$RUN/netfs/export"
    fi
    for i in $(seq 1 "$N"); do
      v=$(node_name "$i" | tr - _)
      echo "${v}_NETNS=$(node_netns "$i")"
      echo "${v}_IP=$(node_ip "$i")"
      echo "${v}_LINK=$(node_link "$i")"
      echo "${v}_KUBELET_ROOT=$(node_state "$i")/kubelet/root"
      echo "${v}_CONTAINERD_SOCK=$(node_state "$i")/containerd/containerd.sock"
      echo "${v}_KUBECONFIG=$(node_state "$i")/kubelet/kubeconfig"
      echo "${v}_POD_CIDR=$(node_podcidr "$i")"
      echo "${v}_CGROUP=$(node_cgroup "$i")"
      if [ "$N" -ge 2 ] && [ "$i" != "$N" ]; then echo "${v}_NETFS=$RUN/netfs/mnt/$(node_name "$i")"; fi
    done
    if [ -f "$RUN/gluster/gluster.env" ]; then cat "$RUN/gluster/gluster.env"; fi
    if [ -f "$RUN/nas/nas.env" ]; then cat "$RUN/nas/nas.env"; fi
  } > "$f"
  mkdir -p "$RUN/shared"; chmod 0777 "$RUN/shared"
}

down() { # every step tolerates a half-built cluster
  local t0 i; t0=$(now_ms)
  trap - ERR
  set +e
  if [ -f "$C/csi.sh" ] && [ -f "$RUN/kubeconfig" ]; then bash "$C/csi.sh" down; fi
  if [ -d "$RUN/ceph" ]; then bash "$C/ceph.sh" cluster down; fi
  bash "$C/gluster.sh" cluster-down "$N"
  bash "$C/nas.sh" down
  bash "$C/storage.sh" down
  for i in $(seq "$N" -1 1); do bash "$C/nodes.sh" down "$i"; done
  bash "$C/control-plane.sh" down
  bash "$C/nodes.sh" host_down
  grep -F " $RUN/" /proc/self/mountinfo | awk '{print $5}' | sort -r | while read -r m; do umount -l "$m"; done
  rm -rf "$RUN"
  set -e
  echo "cluster down in $(since "$t0") s"
}

run() { # CMD...: the whole life of a cluster around one command, under the machine's cluster lock;
  # after down, check-clean: a leftover fails the run even when CMD passed
  exec 9>"$LOCK"
  flock -w "${CLUSTER_LOCK_WAIT:-1800}" 9 || { log "could not take $LOCK"; return 1; }
  export CLUSTER_LOCK_HELD=1
  trap 'finish' EXIT
  trap 'exit 130' INT TERM
  up
  # CMD in the background: bash runs a trap only once a foreground command ends, and a signal
  # for this script alone (timeout, kill) must stop CMD and bring the cluster down now
  "$@" &
  CHILD=$!
  trap 'kill -TERM "$CHILD" 2>/dev/null; wait "$CHILD" 2>/dev/null; exit 130' INT TERM
  wait "$CHILD"
}

finish() {
  local s=$?
  trap - EXIT
  trap '' INT TERM # the teardown runs to its end
  if [ -z "${REFUSED:-}" ]; then
    down
    check-clean >&2 || { [ "$s" -ne 0 ] || s=1; }
  fi
  exit "$s"
}

status() {
  [ -f "$RUN/nodes.count" ] || { echo "cluster down"; return 0; }
  KC get nodes -o wide
  KC get storageclass
  local i
  for i in $(seq 2 "$N"); do
    echo "$(node_name "$i"): link $(node_link "$i") $(cat /sys/class/net/"$(node_link "$i")"/operstate 2>/dev/null), rate $(cat "$(node_state "$i")/rate" 2>/dev/null)"
  done
}

node() { # stop|start|cut|restore|shape|unshape NAME [RATE]
  local op=$1 name=$2 i; i=$(node_index "$name")
  [ "$i" -le "$N" ] || { log "no node $name"; return 1; }
  case $op in
    stop) bash "$C/nodes.sh" stop "$i" ;;
    start)
      bash "$C/nodes.sh" start "$i"
      if [ "$N" -ge 2 ]; then   # its network filesystem processes died with it
        if [ "$i" = "$N" ]; then
          bash "$C/storage.sh" netfs_serve "$N"
          local j; for j in $(seq 1 $((N - 1))); do bash "$C/storage.sh" netfs_mount_node "$N" "$j"; done
        else bash "$C/storage.sh" netfs_mount_node "$N" "$i"; fi
      fi
      bash "$C/gluster.sh" cluster-node-start "$N" "$i"   # a no-op without GlusterFS
      # the test CSI driver's node plugin died with it too (it runs in the node's cgroup)
      if [ -f "$C/csi.sh" ]; then bash "$C/csi.sh" node-up "$name"; fi
      if [ -f "$RUN/ceph/ceph.env" ]; then bash "$C/ceph.sh" cluster node-start "$name"; fi ;;
    cut|restore) [ "$i" -ge 2 ] || { log "$name is the host's own node: it has no link"; return 1; }
      bash "$C/nodes.sh" "link_$op" "$i" ;;
    shape|unshape) [ "$i" -ge 2 ] || { log "$name is the host's own node: it has no link"; return 1; }
      bash "$C/nodes.sh" "$op" "$i" "${3:-${CLUSTER_RATE:-1gbit}}" ;;
    *) log "node: stop|start|cut|restore|shape|unshape NAME [RATE]"; return 2 ;;
  esac
}

sshd() { # NAME PUBKEY_FILE [PORT] | NAME stop
  local i; i=$(node_index "$1")
  if [ "${2:-}" = stop ]; then bash "$C/nodes.sh" sshd_down "$i"; else bash "$C/nodes.sh" sshd_up "$i" "$2" "${3:-}"; fi
}
kwok-nodes() { bash "$C/control-plane.sh" nodes "$@"; }
pvs() { bash "$C/control-plane.sh" pvs "$@"; }
nas() { bash "$C/nas.sh" "$@"; }

check-clean() { # everything a cluster could leave on the host; prints each leftover, fails if any
  local bad=0 x
  say() { echo "left behind: $*"; bad=1; }
  [ ! -e "$RUN" ] || say "state $RUN"
  # what was there before the cluster (BASELINE, host.sh) is not a leftover
  for x in $(ip netns list 2>/dev/null | awk '{print $1}'); do case $x in sbn[0-9]|sbn[0-9][0-9]) say "network namespace $x" ;;
    cni-*) preexisting_netns "$x" || say "network namespace $x" ;; esac; done
  for x in /run/netns/cni-*; do [ ! -e "$x" ] || preexisting_netns "${x##*/}" || say "network namespace file $x"; done
  for x in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1); do
    case $x in "$BRIDGE"|sbv[0-9]|sbv[0-9][0-9]|sbpod[0-9]|sbpod[0-9][0-9]|kreal0) say "link $x" ;; esac; done
  for x in $(ip -4 route show | awk '$1 ~ /^10\.244\./ {print $1}'); do
    grep -qxF "$x" "$BASELINE/routes" 2>/dev/null || say "route $x"; done
  # (the cluster's own sshfs mounts are under $ROOT: a host test's elsewhere, beside the tier, are not its)
  local mnt="$ROOT/| /run/netns/cni-|/run/containerd/"
  for x in $(grep -E " $mnt" /proc/self/mountinfo | awk '{print $5}' || true); do
    case $x in /run/netns/cni-*) ! preexisting_netns "${x##*/}" || continue ;; esac
    say "mount $x"; done
  for x in /sys/fs/cgroup/*/sbnode*; do [ ! -d "$x" ] || say "cgroup $x"; done
  if [ -d /sys/fs/cgroup/cpu/kubepods ] && grep -qx cgroup:kubepods "$ROOT/host-baseline/created" 2>/dev/null; then
    say "cgroup kubepods (made while the cluster ran)"; fi
  for x in $(losetup -a 2>/dev/null | grep -F "$ROOT/" | cut -d: -f1 || true); do say "loop device $x"; done
  # what the cluster runs (not, say, a build writing into $BIN)
  for x in $(pgrep -f "^($BIN/|etcd --name kapi|containerd --config $ROOT/|containerd-shim|socat TCP-LISTEN:($API_PORT|$NETFS_PORT)|sshfs -f -o directport=$NETFS_PORT,|[^ ]*sshd -D -e -f $ROOT/|bash $C/control-plane.sh podwatch)" || true); do
    [ "$x" = $$ ] || say "process $x: $(tr '\0' ' ' < /proc/"$x"/cmdline 2>/dev/null | cut -c1-120)"; done
  for x in iptables ip6tables; do
    local new; new=$(new_kube_chains "$x" | tr '\n' ' ')
    [ -z "$new" ] || say "$x chains $new"
  done
  if [ -f "$ROOT/host-baseline/sysctl" ]; then
    [ "$(sysctl -n vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward)" = "$(cat "$ROOT/host-baseline/sysctl")" ] ||
      say "sysctls $(sysctl vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward | tr '\n' ' ') (before: $(tr '\n' ' ' < "$ROOT/host-baseline/sysctl"))"
  fi
  if [ -f "$ROOT/host-baseline/created" ]; then
    while read -r x; do case $x in ""|cgroup:*) ;; *) [ ! -e "$x" ] || say "host path $x" ;; esac; done < "$ROOT/host-baseline/created"
  fi
  while read -r x; do say "ceph: $x"; done < <(bash "$C/ceph.sh" check-clean cluster | sed -n 's/^left behind: //p')
  bash "$C/gluster.sh" check-clean cluster "$RUN/gluster" | grep -v '^clean$' && bad=1
  bash "$C/nas.sh" check_clean | grep . && bad=1
  [ "$bad" = 0 ] && echo "clean"
  return "$bad"
}

cmd=${1:-}; shift || true
case $cmd in
  install|build|cached|up|down|run|status|node|sshd|kwok-nodes|pvs|nas|check-clean|write_env) "$cmd" "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
