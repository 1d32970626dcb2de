#!/usr/bin/env bash
# ceph.sh - a real Ceph (Debian's 16.2 packages) for storbench's tests: one monitor and manager,
# one BlueStore OSD per node (a sparse block file on the disk, not tmpfs) running in that node's
# network namespace, each OSD its own crush host, a size-3 pool "rbd" (failure domain host) and,
# with CEPH_FS=1, CephFS (pools cephfs_data/cephfs_metadata, one MDS). No systemd, no kernel
# module. Auth is cephx, as on every real Ceph: each daemon has its own key (its data directory's
# keyring), client.admin's keyring ($CEPH_DIR/ceph.client.admin.keyring) is named by ceph.conf's
# [global] keyring, so every client given CEPH_CONF (ceph, rbd, fio's rbd engine, ceph-fuse) is
# the admin; client.storbench is a restricted client (rbd profile on pool rbd, mgr read) whose
# keyring is $CEPH_DIR/ceph.client.storbench.keyring. Every daemon, socket, log, key and pid file
# lives under $CEPH_DIR.
#
# Two modes:
#   standalone: its own bridge sbc<tag>b (10.97.1.1/24, the monitor's address), node namespaces
#     sbc<tag>n<i> at 10.97.1.(10+i) behind veths sbc<tag>v<i>, and a client namespace
#     sbc<tag>c at 10.97.1.100 (veth sbc<tag>vc) with no OSD: host-level tests, no Kubernetes.
#   cluster: inside cluster.sh's test cluster (CLUSTER_CEPH=1): the monitor on the cluster's
#     bridge address, one OSD per real node in the node's namespace and cgroup, and with CephFS a
#     StorageClass "cephfs" of the test CSI driver's cephfs mode (test/cluster/csi.sh must be up):
#     each volume a directory /volumes/<id> of CephFS, made and removed through one ceph-fuse mount
#     on the host (mnt/controller), mounted on node N by node N's own ceph-fuse client, started by
#     node N's plugin in node N's namespace and cgroup: a pod's CephFS traffic crosses its node's link.
#
#   ceph.sh standalone up [N]      N OSD nodes (default 3); prints the env file
#   ceph.sh standalone down
#   ceph.sh cluster up|down|node-start NODE   (cluster.sh calls these)
#   ceph.sh osd slow ID BYTES_PER_SEC | unslow ID | cpu ID PERCENT | uncpu ID | stop ID | start ID | freeze ID | thaw ID | kill ID
#   ceph.sh link cut|restore|shape|unshape NODE [RATE]    NODE: a node name of the env file
#   ceph.sh cephfs mount NODE DIR | umount DIR   ceph-fuse in NODE's namespace (client: standalone's)
#   ceph.sh wait-clean [SECONDS]   until every PG is active+clean
#   ceph.sh check-clean [cluster]  fail if anything of a standalone Ceph (or the cluster's) is left
# Environment: CEPH_DIR (state; standalone default /var/tmp/storbench-ceph-<pid>, cluster
# $RUN/ceph), CEPH_TAG (standalone name part, default the pid), CEPH_FS=1 (CephFS),
# CEPH_BLOCK_SIZE (bytes of each OSD's block file, default 10 GiB sparse), CEPH_PG (default 32).
# While up, $CEPH_DIR/ceph.env (bash) describes it: CEPH_CONF, NODES, <node>_IP, <node>_NETNS,
# <node>_LINK, <node>_OSD, osd<N>_NODE, osd<N>_PID_FILE, POOL, CLIENT_NETNS..., ADMIN_KEYRING,
# USER_ID (storbench) and USER_KEYRING (its keyring: [client.storbench] key = ...).
set -Eeuo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
log() { echo "ceph.sh: $*" >&2; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since() { awk -v a="$1" -v b="$(now_ms)" 'BEGIN {printf "%.1f", (b - a) / 1000}'; }

# --- the state: written by up, read by every other command ------------------------------------
load() { # CEPH_DIR, else the test cluster's Ceph
  if [ -z "${CEPH_DIR:-}" ]; then . "$HERE/lib.sh"; CEPH_DIR=$RUN/ceph; fi
  [ -f "$CEPH_DIR/ceph.env" ] || { log "no Ceph is up in $CEPH_DIR (set CEPH_DIR)"; return 1; }
  . "$CEPH_DIR/ceph.env"
  export CEPH_CONF
  if [ "$MODE" = cluster ]; then . "$HERE/lib.sh"; fi   # node_state, node_run's layout
}
var() { local v; v=$(echo "$1_$2" | tr - _); echo "${!v:-}"; }   # NODE FIELD -> ceph.env's value
# in_ns NETNS CMD...: CMD in that network namespace only (nsenter, not `ip netns exec`: that would
# also give CMD a private mount namespace, hiding a FUSE mount it makes).
in_ns() { local ns=$1; shift; if [ -z "$ns" ]; then "$@"; else nsenter --net="/run/netns/$ns" "$@"; fi; }
C() { ceph --conf "$CEPH_CONF" "$@"; }
until_ok() { # SECONDS DESCRIPTION CMD...
  local n=$1 d=$2 t; shift 2; t=$(( $(date +%s) + n ))
  until "$@" >/dev/null 2>&1; do [ "$(date +%s)" -lt "$t" ] || { log "timeout ($n s) waiting for $d"; return 1; }; sleep 0.3; done
}

write_conf() { # DIR MON_IP NETWORK
  local d=$1 ip=$2 net=$3
  cat > "$d/ceph.conf" <<EOF
[global]
fsid = $(cat "$d/fsid")
mon host = $ip
mon initial members = a
public network = $net
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $d/ceph.client.admin.keyring
run dir = $d/run
admin socket = $d/run/\$cluster-\$name.asok
pid file = $d/run/\$name.pid
log file = $d/log/\$name.log
mon cluster log file = $d/log/cluster.log
chdir = ""
osd pool default size = 3
osd pool default min size = 2
osd crush chooseleaf type = 1
osd pool default pg autoscale mode = off
mon warn on insecure global id reclaim allowed = false
mon warn on pool no redundancy = false
mon data avail warn = 2
mon data avail crit = 1
mon allow pool delete = true
mon osd full ratio = .99
mon osd nearfull ratio = .98
mon osd backfillfull ratio = .99
osd failsafe full ratio = .99
osd objectstore = bluestore
bluestore block create = true
bluestore block size = ${CEPH_BLOCK_SIZE:-10737418240}
bluestore block db create = false
bluestore block wal create = false
osd memory target = 939524096
osd scrub load threshold = 2000
mgr initial modules = ""
[mon]
mon data = $d/mon/\$cluster-\$id
keyring = \$mon_data/keyring
[mgr]
mgr data = $d/mgr/\$cluster-\$id
keyring = \$mgr_data/keyring
[mds]
mds data = $d/mds/\$cluster-\$id
keyring = \$mds_data/keyring
[osd]
osd data = $d/osd/\$cluster-\$id
keyring = \$osd_data/keyring
[client]
admin socket = $d/run/\$cluster-\$name.\$pid.asok
# a daemonized ceph-fuse writes (and locks) its pid file: one per client
pid file = $d/run/\$name.\$pid.pid
log file = $d/log/\$name.\$pid.log
EOF
}

# start_daemon NETNS NAME CMD...: CMD in the background in NETNS (cluster mode: in the node's
# cgroup through nodes.sh node_run, so stopping the node kills it); its own pid in run/NAME.pid
start_daemon() {
  local ns=$1 name=$2; shift 2
  if [ "$MODE" = cluster ] && [ -n "${START_NODE_INDEX:-}" ]; then
    bash "$HERE/nodes.sh" node_run "$START_NODE_INDEX" "ceph-$name" "$@"
    cp "$(node_state "$START_NODE_INDEX")/run/ceph-$name.pid" "$CEPH_DIR/run/$name.daemon"
    return
  fi
  ( if [ -n "$ns" ]; then exec nsenter --net="/run/netns/$ns" "$@"; else exec "$@"; fi ) \
    > "$CEPH_DIR/log/$name.out" 2>&1 < /dev/null &
  echo $! > "$CEPH_DIR/run/$name.daemon"
}

# keys_make: the monitor's keyring (mon. and client.admin, as cephadm's bootstrap makes them) for
# its mkfs, and client.admin's own keyring, the one ceph.conf's [global] names
keys_make() {
  local k=$CEPH_DIR/mon.keyring a=$CEPH_DIR/ceph.client.admin.keyring
  ceph-authtool --create-keyring "$a" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
    --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool --create-keyring "$k" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$k" --import-keyring "$a" >/dev/null
  chmod 600 "$k" "$a"
}

# daemon_key NAME FILE CAPS...: NAME's key (made once) written to FILE, its data directory's keyring
daemon_key() { local n=$1 f=$2; shift 2; C auth get-or-create "$n" "$@" -o "$f"; }

# user_key: client.storbench, what a storbench user is given on a real Ceph: the rbd profile on
# pool rbd (its own images) and read access to the mgr (pg ls-by-pool: the pool's OSDs)
user_key() {
  C auth get-or-create client.storbench mon 'profile rbd' osd 'profile rbd pool=rbd' mgr 'profile rbd pool=rbd, allow r' \
    -o "$CEPH_DIR/ceph.client.storbench.keyring"
}

mon_up() { # NETNS IP
  local ns=$1 ip=$2
  mkdir -p "$CEPH_DIR/mon/ceph-a"
  keys_make
  in_ns "$ns" ceph-mon --conf "$CEPH_CONF" --id a --mkfs --mon-data "$CEPH_DIR/mon/ceph-a" \
    --fsid "$(cat "$CEPH_DIR/fsid")" --public-addr "$ip" --keyring "$CEPH_DIR/mon.keyring" > "$CEPH_DIR/log/mon-mkfs.out" 2>&1
  START_NODE_INDEX=${MON_NODE_INDEX:-} start_daemon "$ns" mon.a ceph-mon --conf "$CEPH_CONF" --id a -f --public-addr "$ip"
  until_ok 30 "the monitor" C status --connect-timeout 3
  C config set mgr mgr_pool false --force >/dev/null 2>&1 || true
  mkdir -p "$CEPH_DIR/mgr/ceph-x"
  daemon_key mgr.x "$CEPH_DIR/mgr/ceph-x/keyring" mon 'allow profile mgr' osd 'allow *' mds 'allow *'
  user_key
  START_NODE_INDEX=${MON_NODE_INDEX:-} start_daemon "$ns" mgr.x ceph-mgr --conf "$CEPH_CONF" -i x -f
}

# osd_up ID NODE NETNS IP [NODE_INDEX]: mkfs (first time only) and start osd.ID in NODE's namespace,
# its crush location host=NODE
osd_up() {
  local id=$1 node=$2 ns=$3 ip=$4 idx=${5:-} d uuid
  d=$CEPH_DIR/osd/ceph-$id
  if [ ! -f "$d/fsid" ]; then
    mkdir -p "$d"; uuid=$(cat /proc/sys/kernel/random/uuid)
    C osd new "$uuid" "$id" >/dev/null
    daemon_key "osd.$id" "$d/keyring" mon 'allow profile osd' mgr 'allow profile osd' osd 'allow *'
    in_ns "$ns" ceph-osd --conf "$CEPH_CONF" -i "$id" --mkfs --osd-uuid "$uuid" --public-addr "$ip" \
      --cluster-addr "$ip" > "$CEPH_DIR/log/osd.$id-mkfs.out" 2>&1 ||
      { log "osd.$id mkfs failed: $(tail -3 "$CEPH_DIR/log/osd.$id-mkfs.out")"; return 1; }
  fi
  START_NODE_INDEX=$idx start_daemon "$ns" "osd.$id" ceph-osd --conf "$CEPH_CONF" -i "$id" -f \
    --public-addr "$ip" --cluster-addr "$ip" --crush-location "root=default host=$node"
}

osd_is_up() { C osd dump --format json 2>/dev/null | grep -q "\"osd\":$1,\"uuid\":\"[^\"]*\",\"up\":1"; }

pools_up() { # the rbd pool, and CephFS with CEPH_FS=1
  local pg=${CEPH_PG:-32}
  C osd pool create rbd "$pg" "$pg" replicated >/dev/null
  C osd pool application enable rbd rbd >/dev/null
  rbd --conf "$CEPH_CONF" pool init rbd
  if [ "${CEPH_FS:-}" = 1 ]; then
    C osd pool create cephfs_metadata 16 16 replicated >/dev/null
    C osd pool create cephfs_data "$pg" "$pg" replicated >/dev/null
    C fs new cephfs cephfs_metadata cephfs_data >/dev/null
    mkdir -p "$CEPH_DIR/mds/ceph-a"
    daemon_key mds.a "$CEPH_DIR/mds/ceph-a/keyring" mon 'allow profile mds' osd 'allow rwx' mds 'allow' mgr 'allow profile mds'
    START_NODE_INDEX=${MON_NODE_INDEX:-} start_daemon "${MON_NETNS:-}" mds.a ceph-mds --conf "$CEPH_CONF" -i a -f
    until_ok 60 "an active MDS" bash -c "ceph --conf '$CEPH_CONF' fs status cephfs 2>/dev/null | grep -q active"
  fi
}

pgs_clean() { # every PG active+clean
  local s; s=$(C pg stat --format json 2>/dev/null) || return 1
  python3 -c '
import json, sys
d = json.loads(sys.argv[1]); m = d.get("pg_summary", d)
by = {x["name"]: x["num"] for x in m.get("num_pg_by_state", [])}
n = m.get("num_pgs", 0)
sys.exit(0 if n > 0 and by.get("active+clean", 0) == n else 1)' "$s"
}
wait-clean() { load; until_ok "${1:-300}" "every PG active+clean" pgs_clean; }

# --- standalone ---------------------------------------------------------------------------------
SA_NET=10.97.1
sa_names() { # TAG: the names of a standalone Ceph (15 characters at most for links)
  T=$1; BR=sbc${T}b; CLIENT_NS=sbc${T}c; CLIENT_LINK=sbc${T}vc
}

standalone_up() {
  local n=${1:-3} t0 i tag ns ip link
  t0=$(now_ms); tag=${CEPH_TAG:-$$}
  CEPH_DIR=${CEPH_DIR:-/var/tmp/storbench-ceph-$tag}
  [ ! -f "$CEPH_DIR/ceph.env" ] || { log "a Ceph is up in $CEPH_DIR already"; return 1; }
  sa_names "$tag"
  [ ${#CLIENT_LINK} -le 15 ] || { log "CEPH_TAG $tag is too long for link names"; return 1; }
  ip link show "$BR" >/dev/null 2>&1 && { log "bridge $BR exists: another standalone Ceph with tag $tag?"; return 1; }
  ip -4 addr show | grep -q " $SA_NET\.1/" && { log "$SA_NET.1 is in use: one standalone Ceph at a time (flock it)"; return 1; }
  mkdir -p "$CEPH_DIR"/{run,log,osd,mon,mgr,mds,cgroup}
  MODE=standalone
  echo "standalone $tag $n" > "$CEPH_DIR/standalone"
  trap 'log "up failed: tearing down"; standalone_down' ERR
  cat /proc/sys/kernel/random/uuid > "$CEPH_DIR/fsid"
  ip link add "$BR" type bridge; ip addr add "$SA_NET.1/24" dev "$BR"; ip link set "$BR" up
  for i in $(seq 1 "$n") c; do
    if [ "$i" = c ]; then ns=$CLIENT_NS link=$CLIENT_LINK ip=$SA_NET.100
    else ns=sbc${tag}n$i link=sbc${tag}v$i ip=$SA_NET.$((10 + i)); fi
    ip netns add "$ns"
    ip link add "$link" type veth peer name eth0 netns "$ns"
    ip link set "$link" master "$BR" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$ip/24" dev eth0
    ip -n "$ns" link set eth0 up
  done
  write_conf "$CEPH_DIR" "$SA_NET.1" "$SA_NET.0/24"
  CEPH_CONF=$CEPH_DIR/ceph.conf
  sa_env "$tag" "$n"
  mon_up "" "$SA_NET.1"
  for i in $(seq 1 "$n"); do osd_up $((i - 1)) "sbceph-node-$i" "sbc${tag}n$i" "$SA_NET.$((10 + i))"; done
  for i in $(seq 1 "$n"); do until_ok 60 "osd.$((i - 1)) up" osd_is_up $((i - 1)); done
  pools_up
  until_ok 120 "every PG active+clean" pgs_clean
  trap - ERR
  echo "ceph up in $(since "$t0") s: . $CEPH_DIR/ceph.env"
}

sa_env() { # TAG N
  local tag=$1 n=$2 i v
  {
    echo "# written by test/cluster/ceph.sh standalone up; removed by down"
    echo "MODE=standalone"
    echo "CEPH_DIR=$CEPH_DIR"
    echo "CEPH_CONF=$CEPH_DIR/ceph.conf"
    echo "CEPH_TAG=$tag"
    echo "MON_IP=$SA_NET.1"
    echo "BRIDGE=sbc${tag}b"
    echo "POOL=rbd"
    echo "ADMIN_KEYRING=$CEPH_DIR/ceph.client.admin.keyring"
    echo "USER_ID=storbench"
    echo "USER_KEYRING=$CEPH_DIR/ceph.client.storbench.keyring"
    [ "${CEPH_FS:-}" != 1 ] || echo "CEPHFS=cephfs"
    echo "CLIENT_NETNS=sbc${tag}c"
    echo "CLIENT_IP=$SA_NET.100"
    echo "CLIENT_LINK=sbc${tag}vc"
    local names=""; for i in $(seq 1 "$n"); do names="$names sbceph-node-$i"; done
    echo "NODES=\"${names# }\""
    for i in $(seq 1 "$n"); do
      v=sbceph_node_$i
      echo "${v}_NETNS=sbc${tag}n$i"; echo "${v}_IP=$SA_NET.$((10 + i))"
      echo "${v}_LINK=sbc${tag}v$i"; echo "${v}_OSD=$((i - 1))"
      echo "osd$((i - 1))_NODE=sbceph-node-$i"
    done
  } > "$CEPH_DIR/ceph.env"
}

standalone_down() {
  local t0 tag n i; t0=$(now_ms)
  trap - ERR
  [ -n "${CEPH_DIR:-}" ] || { log "CEPH_DIR is not set"; return 1; }
  [ -e "$CEPH_DIR" ] || { echo "ceph down: nothing in $CEPH_DIR (a failed up tears itself down)"; return 0; }
  [ -f "$CEPH_DIR/standalone" ] || { log "$CEPH_DIR is not a standalone Ceph's"; return 1; }
  read -r _ tag n < "$CEPH_DIR/standalone"
  sa_names "$tag"
  set +e
  unmount_all
  stop_daemons
  cgroups_remove
  for i in $(seq 1 "$n") c; do
    # The veth first: a namespace outlives its name while anything still
    # holds it (a socket, another mount namespace's copy of its bind
    # mount), and its end of the pair with it.
    if [ "$i" = c ]; then ip link del "$CLIENT_LINK" 2>/dev/null; ip netns del "$CLIENT_NS" 2>/dev/null
    else ip link del "sbc${tag}v$i" 2>/dev/null; ip netns del "sbc${tag}n$i" 2>/dev/null; fi
  done
  ip link del "$BR" 2>/dev/null
  rm -rf "$CEPH_DIR"
  set -e
  echo "ceph down in $(since "$t0") s"
}

unmount_all() { # every ceph-fuse mount this Ceph made (their list: run/mounts)
  local m
  [ -f "$CEPH_DIR/run/mounts" ] || return 0
  while read -r m; do
    if grep -qF " $m " /proc/self/mountinfo; then fusermount -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; fi
  done < "$CEPH_DIR/run/mounts"
}

stop_daemons() { # SIGKILL every daemon of this Ceph (thawed first), and wait for them to go
  local f p left
  for f in "$CEPH_DIR"/run/*.daemon; do
    [ -f "$f" ] || continue; p=$(cat "$f")
    kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null
  done
  for _ in $(seq 1 50); do
    left=""
    for f in "$CEPH_DIR"/run/*.daemon; do [ -f "$f" ] && alive "$(cat "$f")" && left=1; done
    [ -n "$left" ] || break; sleep 0.1
  done
  # anything else still using the directory (ceph-fuse, a client someone left)
  for p in $(pgrep -f -- "--conf $CEPH_DIR/ceph.conf" || true); do kill -9 "$p" 2>/dev/null; done
  return 0
}

cgroups_remove() { local d; for d in "$CEPH_DIR"/cgroup/*; do [ -f "$d" ] && rmdir "$(cat "$d")" 2>/dev/null; done; return 0; }

check-clean() { # [cluster]: what a standalone Ceph (or the test cluster's) could leave; prints each leftover, fails if any
  local bad=0 x
  if [ "${1:-}" = cluster ]; then
    . "$HERE/lib.sh"
    for x in /sys/fs/cgroup/*/sbceph-cluster-* "$RUN/ceph"; do [ ! -e "$x" ] || { echo "left behind: $x"; bad=1; }; done
    for x in $(pgrep -f -- "--conf $RUN/ceph/ceph.conf" || true); do echo "left behind: ceph process $x"; bad=1; done
    for x in $(cephfs_client_mounts); do echo "left behind: ceph-fuse mount $x"; bad=1; done
    [ "$bad" = 0 ] && echo clean
    return "$bad"
  fi
  for x in $(ip netns list 2>/dev/null | awk '{print $1}'); do case $x in sbc*n[0-9]*|sbc*c) echo "left behind: network namespace $x"; bad=1 ;; esac; done
  for x in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1); do case $x in sbc*b|sbc*v[0-9c]*) echo "left behind: link $x"; bad=1 ;; esac; done
  # (sbceph-cluster-*: the test cluster's Ceph's, which may be up beside a standalone one: check-clean cluster)
  for x in /sys/fs/cgroup/blkio/sbceph* /sys/fs/cgroup/cpu/sbceph* /var/tmp/storbench-ceph-*; do
    case $x in */sbceph-cluster-*) continue ;; esac
    [ ! -e "$x" ] || { echo "left behind: $x"; bad=1; }
  done
  for x in $(pgrep -f -- "--conf /var/tmp/storbench-ceph-" || true); do echo "left behind: process $x"; bad=1; done
  if grep -q " /var/tmp/storbench-ceph-" /proc/self/mountinfo; then echo "left behind: mounts"; bad=1; fi
  [ "$bad" = 0 ] && echo clean
  return "$bad"
}

# --- faults ---------------------------------------------------------------------------------------
osd_pid() { cat "$CEPH_DIR/run/osd.$1.daemon"; }
dead() { ! alive "$1"; }
# alive PID: running, sleeping or stopped, not a zombie waiting for a reaper that may never come
alive() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ -n "$s" ] && [ "$s" != Z ]; }
osd_node() { var "osd$1" NODE; }

# whole_disk FILE: MAJ:MIN of the whole disk holding FILE (blkio throttles whole disks only)
whole_disk() {
  local dev majmin sys
  dev=$(stat -c %d "$1"); majmin="$((dev >> 8 & 0xfff)):$((dev & 0xff | (dev >> 12 & 0xfff00)))"
  sys=$(readlink -f "/sys/dev/block/$majmin") || { log "no block device $majmin under $1"; return 1; }
  if [ -f "$sys/partition" ]; then cat "$(dirname "$sys")/dev"; else echo "$majmin"; fi
}

osd() { # slow|unslow|cpu|uncpu|stop|start|freeze|thaw|kill ID [BYTES_PER_SEC|PERCENT]
  load
  local op=$1 id=$2 cg disk node
  [ -f "$CEPH_DIR/run/osd.$id.daemon" ] || { log "no osd.$id"; return 1; }
  case $op in
    slow) # a blkio cgroup for the OSD: read and write throttled on the disk holding its block file
      disk=$(whole_disk "$CEPH_DIR/osd/ceph-$id/block")
      cg=/sys/fs/cgroup/blkio/sbceph-${CEPH_TAG:-cluster}-osd$id
      mkdir -p "$cg"; echo "$cg" > "$CEPH_DIR/cgroup/osd$id"
      echo "$disk ${3:?bytes per second}" > "$cg/blkio.throttle.write_bps_device"
      echo "$disk $3" > "$cg/blkio.throttle.read_bps_device"
      echo "$(osd_pid "$id")" > "$cg/cgroup.procs"
      echo "osd.$id: disk $disk limited to $3 bytes/s" ;;
    unslow)
      cg=$(cat "$CEPH_DIR/cgroup/osd$id" 2>/dev/null) || return 0
      echo "$(osd_pid "$id")" > /sys/fs/cgroup/blkio/cgroup.procs 2>/dev/null || true
      rmdir "$cg"; rm -f "$CEPH_DIR/cgroup/osd$id" ;;
    cpu) # a cpu cgroup capping the OSD at PERCENT of one core (CFS quota over a 100 ms period)
      cg=/sys/fs/cgroup/cpu/sbceph-${CEPH_TAG:-cluster}-osd$id
      mkdir -p "$cg"; echo "$cg" > "$CEPH_DIR/cgroup/osd$id-cpu"
      echo 100000 > "$cg/cpu.cfs_period_us"; echo $(( ${3:?percent of one core} * 1000 )) > "$cg/cpu.cfs_quota_us"
      echo "$(osd_pid "$id")" > "$cg/cgroup.procs"
      echo "osd.$id: CPU limited to $3% of one core" ;;
    uncpu)
      cg=$(cat "$CEPH_DIR/cgroup/osd$id-cpu" 2>/dev/null) || return 0
      echo "$(osd_pid "$id")" > /sys/fs/cgroup/cpu/cgroup.procs 2>/dev/null || true
      rmdir "$cg"; rm -f "$CEPH_DIR/cgroup/osd$id-cpu" ;;
    stop) kill "$(osd_pid "$id")"; until_ok 30 "osd.$id to exit" dead "$(osd_pid "$id")" ;;
    kill) kill -9 "$(osd_pid "$id")" ;;
    freeze) kill -STOP "$(osd_pid "$id")" ;;
    thaw) kill -CONT "$(osd_pid "$id")" ;;
    start)
      until_ok 10 "osd.$id's old process to end" dead "$(osd_pid "$id")" || { log "osd.$id runs already"; return 1; }
      node=$(osd_node "$id")
      MON_NODE_INDEX="" osd_up "$id" "$node" "$(var "$node" NETNS)" "$(var "$node" IP)" "$(var "$node" INDEX)"
      until_ok 60 "osd.$id up" osd_is_up "$id" ;;
    *) log "osd: slow|unslow|cpu|uncpu|stop|start|freeze|thaw|kill ID [BYTES_PER_SEC|PERCENT]"; return 2 ;;
  esac
}

link() { # cut|restore|shape|unshape NODE [RATE]
  load
  local op=$1 node=$2 l ns rate burst
  if [ "$MODE" = cluster ]; then bash "$HERE/cluster.sh" node "$op" "$node" ${3:+"$3"}; return; fi
  l=$(var "$node" LINK) ns=$(var "$node" NETNS)
  [ "$node" != client ] || { l=$CLIENT_LINK ns=$CLIENT_NETNS; }
  [ -n "$l" ] || { log "no node $node"; return 1; }
  case $op in
    cut) ip link set "$l" down ;;
    restore) ip link set "$l" up ;;
    shape) rate=${3:?rate, e.g. 200mbit}; burst=$(rate_burst "$rate")
      tc qdisc replace dev "$l" root tbf rate "$rate" burst "$burst" latency 25ms
      ip netns exec "$ns" tc qdisc replace dev eth0 root tbf rate "$rate" burst "$burst" latency 25ms ;;
    unshape) tc qdisc del dev "$l" root 2>/dev/null || true
      ip netns exec "$ns" tc qdisc del dev eth0 root 2>/dev/null || true ;;
    *) log "link: cut|restore|shape|unshape NODE [RATE]"; return 2 ;;
  esac
}

rate_burst() { # RATE -> tbf burst bytes: 4 ms at the rate, at least 64 KiB (as nodes.sh)
  local r=${1,,} n u b
  n=${r%%[a-z]*}; u=${r#"$n"}
  case $u in gbit) b=$((n * 125000000)) ;; mbit) b=$((n * 125000)) ;; kbit) b=$((n * 125)) ;; *) log "rate $1: kbit, mbit or gbit"; return 1 ;; esac
  b=$((b / 250)); [ "$b" -ge 65536 ] || b=65536; echo "$b"
}

cephfs() { # mount NODE DIR | umount DIR
  load
  case $1 in
    mount) local ns; ns=$(var "$2" NETNS); [ "$2" != client ] || ns=$CLIENT_NETNS
      mkdir -p "$3"; echo "$3" >> "$CEPH_DIR/run/mounts"
      in_ns "$ns" ceph-fuse --conf "$CEPH_CONF" "$3" > /dev/null
      until_ok 30 "the ceph-fuse mount $3" mountpoint -q "$3" ;;
    umount) fusermount -u "$2" 2>/dev/null || umount -l "$2" ;;
    *) log "cephfs: mount NODE DIR | umount DIR"; return 2 ;;
  esac
}

# --- in the test cluster --------------------------------------------------------------------------
cluster_mode() {
  . "$HERE/lib.sh"
  CEPH_DIR=${CEPH_DIR:-$RUN/ceph}
  MODE=cluster
  case $1 in
    up) cluster_up ;;
    down) cluster_down ;;
    node-start) cluster_node_start "$2" ;;
    *) log "cluster up|down|node-start NODE"; return 2 ;;
  esac
}

cluster_up() {
  local t0 n i name; t0=$(now_ms)
  . "$RUN/cluster.env"
  n=$(cat "$RUN/nodes.count")
  [ "$n" -ge 3 ] || { log "a size-3 pool with host as failure domain needs 3 real nodes (CLUSTER_NODES=$n)"; return 1; }
  mkdir -p "$CEPH_DIR"/{run,log,osd,mon,mgr,mds,cgroup}
  cat /proc/sys/kernel/random/uuid > "$CEPH_DIR/fsid"
  write_conf "$CEPH_DIR" "$BRIDGE_IP" "$BRIDGE_NET.0/24"
  CEPH_CONF=$CEPH_DIR/ceph.conf
  cluster_env "$n"
  mon_up "" "$BRIDGE_IP"
  for i in $(seq 1 "$n"); do
    name=$(node_name "$i")
    # node 1 is the host's own node: its OSD listens on the bridge address
    if [ "$i" = 1 ]; then osd_up 0 "$name" "" "$BRIDGE_IP" 1; else osd_up $((i - 1)) "$name" "$(node_netns "$i")" "$(node_ip "$i")" "$i"; fi
  done
  for i in $(seq 1 "$n"); do until_ok 60 "osd.$((i - 1)) up" osd_is_up $((i - 1)); done
  pools_up
  until_ok 120 "every PG active+clean" pgs_clean
  if [ "${CEPH_FS:-}" = 1 ]; then cluster_cephfs_class; fi
  echo "ceph up in $(since "$t0") s: . $CEPH_DIR/ceph.env"
}

cluster_env() { # N
  local n=$1 i v name
  {
    echo "# written by test/cluster/ceph.sh cluster up; removed by down"
    echo "MODE=cluster"
    echo "CEPH_DIR=$CEPH_DIR"
    echo "CEPH_CONF=$CEPH_DIR/ceph.conf"
    echo "MON_IP=$BRIDGE_IP"
    echo "POOL=rbd"
    echo "ADMIN_KEYRING=$CEPH_DIR/ceph.client.admin.keyring"
    echo "USER_ID=storbench"
    echo "USER_KEYRING=$CEPH_DIR/ceph.client.storbench.keyring"
    [ "${CEPH_FS:-}" != 1 ] || { echo "CEPHFS=cephfs"; echo "CEPHFS_CLASS=cephfs"; }
    echo "NODES=\"$NODES\""
    for i in $(seq 1 "$n"); do
      name=$(node_name "$i"); v=$(echo "$name" | tr - _)
      echo "${v}_INDEX=$i"; echo "${v}_NETNS=$(node_netns "$i")"
      if [ "$i" = 1 ]; then echo "${v}_IP=$BRIDGE_IP"; else echo "${v}_IP=$(node_ip "$i")"; fi
      echo "${v}_LINK=$(node_link "$i")"; echo "${v}_OSD=$((i - 1))"
      echo "osd$((i - 1))_NODE=$name"
    done
  } > "$CEPH_DIR/ceph.env"
}

# cluster_cephfs_class: class cephfs of the test CSI driver (mode cephfs): the controller makes
# each volume's directory through the host's ceph-fuse mount mnt/controller (not in any node's
# cgroup: it outlives a node stop), each node's plugin mounts the volume with its own ceph-fuse
cluster_cephfs_class() {
  local m=$CEPH_DIR/mnt/controller
  KC get csidriver testcsi.storbench.io >/dev/null 2>&1 ||
    { log "class cephfs needs the test CSI driver (test/cluster/csi.sh up)"; return 1; }
  mkdir -p "$m"; echo "$m" >> "$CEPH_DIR/run/mounts"
  ceph-fuse --conf "$CEPH_CONF" "$m" > "$CEPH_DIR/log/ceph-fuse-controller.out" 2>&1
  until_ok 30 "the controller's ceph-fuse mount" mountpoint -q "$m"
  mkdir -p "$m/volumes"
  KC apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: cephfs
  # the CephFS behind the class: storbench reads its data pool's size and OSD hosts from Ceph
  annotations: {storbench.io/ceph-fs: cephfs}
provisioner: testcsi.storbench.io
parameters: {mode: cephfs, cephConf: "$CEPH_CONF", cephPath: /volumes, share: "$m/volumes"}
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
allowVolumeExpansion: true
EOF
}

cluster_node_start() { # NODE: after cluster.sh node start: its OSD died with it (its ceph-fuse
  # clients too: the kubelet has the node's plugin, itself started again by csi.sh, mount again)
  load
  local id; id=$(var "$1" OSD)
  [ -n "$id" ] || return 0
  osd start "$id"
}

# cephfs_client_mounts: the mount points of every ceph-fuse client of this cluster's (the nodes'
# mounts of class cephfs's volumes are under their kubelets' roots, below $RUN)
cephfs_client_mounts() {
  awk -v run="$RUN/" '{ split($0, a, " - "); split(a[2], b, " ") } b[1] == "fuse.ceph-fuse" && index($5, run) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# cephfs_pvs_gone: the class's volumes are deleted by the CSI driver (the directory through the
# host's mount) while Ceph still serves them (a released claim's PV goes within seconds); what is left after 60 s is
# removed here, so no PV names a path that is about to vanish.
cephfs_pvs_gone() {
  local pvs
  until_ok 60 "the cephfs class's PVs to go" no_cephfs_pvs && return 0
  pvs=$(pvs_of_cephfs)
  [ -z "$pvs" ] || { log "removing PVs left on class cephfs: $(echo $pvs)"; KC delete pv $pvs --wait=false >/dev/null; }
}

pvs_of_cephfs() { KC get pv -o jsonpath='{range .items[?(@.spec.storageClassName=="cephfs")]}{.metadata.name}{"\n"}{end}' 2>/dev/null; }
no_cephfs_pvs() { [ -z "$(pvs_of_cephfs)" ]; }

cluster_down() {
  local t0; t0=$(now_ms)
  [ -d "$CEPH_DIR" ] || return 0
  set +e
  cephfs_pvs_gone
  KC delete storageclass cephfs --ignore-not-found >/dev/null 2>&1
  unmount_all
  stop_daemons
  # a node's ceph-fuse mount its kubelet did not release (stop_daemons ended its client)
  cephfs_client_mounts | while read -r m; do log "unmounting a node's ceph-fuse mount left: $m"; umount -l "$m"; done
  cgroups_remove
  rm -rf "$CEPH_DIR"
  set -e
  echo "ceph down in $(since "$t0") s"
}

cmd=${1:-}; shift || true
case $cmd in
  standalone) case ${1:-} in up) shift; standalone_up "$@" ;; down) standalone_down ;; *) log "standalone up [N] | down"; exit 2 ;; esac ;;
  cluster) cluster_mode "$@" ;;
  osd|link|cephfs|wait-clean|check-clean) "$cmd" "$@" ;;
  *) sed -n '2,/^set -Eeuo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
