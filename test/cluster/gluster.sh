#!/usr/bin/env bash
# gluster.sh - a real GlusterFS (Debian's glusterfs-server 10.3) for storbench's tests: one
# glusterd and one brick per node, a replica volume across the nodes' shaped links, a FUSE
# client. Each glusterd has its own network namespace AND a private mount namespace with its
# own /var/lib/glusterd, /run and /var/log/glusterfs bound in (several glusterd on one host
# collide otherwise); the CLI runs inside a node (nsenter -t GLUSTERD -n -m).
#
# Standalone (no Kubernetes; host-level tests, test/glustertest):
#   gluster.sh standalone-up DIR [NODES]   namespaces sbglus<ID>n<i> on bridge sbglus<ID> in a
#                                          free /28 of 10.97.2.0/24, a client namespace
#                                          sbglus<ID>c, volume "sbvol" mounted at DIR/mnt
#                                          through the client's link; DIR/gluster.env says what
#                                          is up. ID: $GLUSTER_ID (default the pid), <= 7 chars.
#                                          GLUSTER_VOLUME_OPTS="KEY=VALUE ...": volume options
#                                          set before the volume starts (either mode).
#   gluster.sh standalone-down DIR         everything undone (always safe to run)
# In the test cluster (cluster.sh up/down with CLUSTER_GLUSTER=1):
#   gluster.sh cluster-up N | cluster-down N    glusterd + brick on real nodes 1..min(N,3) (node
#                                          1 at the bridge address), volume "sbgluster" replicated
#                                          across them, a FUSE mount per node (in its netns and
#                                          cgroup: its traffic crosses its link), StorageClass
#                                          "gluster" (local-path-provisioner over each node's own
#                                          mount, so volumes are pinned to a node); state in
#                                          $RUN/gluster, described by its gluster.env
#   gluster.sh cluster-node-start N I      after `cluster.sh node start`: glusterd and mount again
# Faults, either mode (STATE: DIR, or "cluster"):
#   gluster.sh brick STATE kill|freeze|thaw|start NODE   SIGKILL / SIGSTOP / SIGCONT its brick
#                                          process; start = `volume start V force`
#   gluster.sh brick STATE cpu NODE PERCENT | uncpu NODE   its brick capped at PERCENT of one core
#                                          (a cgroup v1 CFS quota, sbglus-<ID>-brick<NODE>)
#   gluster.sh brick STATE slow NODE BYTES_PER_SEC | unslow NODE   its brick's reads and writes
#                                          throttled on the disk under it (blkio v1: direct I/O
#                                          only, so the volume needs storage.o-direct=on)
#   gluster.sh link STATE cut|restore|shape|unshape NODE [RATE]
#   gluster.sh cli STATE NODE ARGS...      the gluster CLI inside node NODE (1-based)
#   gluster.sh check-clean [ID DIR]        fail if a namespace, link, process or mount of that harness
#                                          (of any, without ID) is left
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VOLUME=${GLUSTER_VOLUME:-sbvol}
NET=10.97.2

glog() { echo "gluster: $*" >&2; }
gwait() { # description, command...: up to 60 s
  local d=$1; shift
  for _ in $(seq 1 240); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  glog "timeout waiting for $d"; return 1
}
nowms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { awk -v a="$1" -v b="$(nowms)" 'BEGIN {printf "%.1f", (b - a) / 1000}'; }

# --- one glusterd ---------------------------------------------------------------------------------

# gd_script NODEDIR: the script, run under `unshare -m --propagation private bash -c`, that
# becomes a node's glusterd (an exec chain: the pid is glusterd's)
gd_script() {
  local d=$1
  # no hooks copied in: Debian's start hooks (S29CTDBsetup, S30samba-start) would touch the host's samba
  mkdir -p "$d/glusterd" "$d/run/gluster" "$d/log" "$d/brick"
  # glusterd looks peers' addresses up in DNS (probe, volume create): from a node whose default
  # route leads nowhere each lookup waits out the resolver (20 s per peer probed, 20 s for
  # `volume create` in the test cluster); a resolver on the node's own loopback, where nothing
  # listens, fails at once, as a node with no route does
  printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' > "$d/resolv.conf"
  echo "mount --bind $d/resolv.conf /etc/resolv.conf && mount --bind $d/glusterd /var/lib/glusterd && mount --bind $d/run /run && mount --bind $d/log /var/log/glusterfs && exec glusterd -N -p $d/glusterd.pid --log-file=$d/log/glusterd.log"
}

# in_ns NETNS CMD...: CMD in network namespace NETNS ("" = the host's), the host's mount namespace
in_ns() { local ns=$1; shift; if [ -n "$ns" ]; then nsenter --net="/run/netns/$ns" "$@"; else "$@"; fi; }

# gcli NODEDIR ARGS...: the gluster CLI inside that node's namespaces
gcli() { local d=$1; shift; nsenter -t "$(cat "$d/glusterd.pid")" -n -m gluster --mode=script "$@"; }

# mntns_pids NODEDIR: every process in that glusterd's mount namespace (glusterd, bricks, self-heal)
mntns_pids() {
  local ns p; ns=$(cat "$1/mntns" 2>/dev/null) || return 0
  for p in $(pgrep -x glusterd; pgrep -x glusterfsd; pgrep -x glusterfs); do
    [ "$(readlink "/proc/$p/ns/mnt" 2>/dev/null)" = "$ns" ] && echo "$p"; done; true
}

gd_started() { # NODEDIR: record its mount namespace once glusterd answers
  local d=$1 p
  gwait "glusterd in $d" test -s "$d/glusterd.pid"
  p=$(cat "$d/glusterd.pid")
  gwait "glusterd in $d" bash -c "[ \"\$(readlink /proc/$p/ns/mnt)\" != \"$(readlink /proc/self/ns/mnt)\" ]"
  readlink "/proc/$p/ns/mnt" > "$d/mntns"
  gwait "glusterd in $d answering" gcli "$d" peer status
}

gd_stop() { # NODEDIR: glusterd, its bricks and self-heal daemon, gone (reaped) before it returns
  local d=$1 p all=""
  for _ in $(seq 1 25); do
    p=$(mntns_pids "$d"); [ -n "$p" ] || break
    all="$all $p"; kill -9 $p 2>/dev/null || true; sleep 0.2
  done
  [ -z "$(mntns_pids "$d")" ] || { glog "still alive in $d: $(mntns_pids "$d" | tr '\n' ' ')"; return 1; }
  for p in $all; do for _ in $(seq 1 50); do [ -e "/proc/$p" ] || break; sleep 0.1; done; done
}

brick_pid() { # NODEDIR: the brick process (glusterfsd) of that node
  local p; for p in $(mntns_pids "$1"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = glusterfsd ] && { echo "$p"; return 0; }; done; return 1
}

# --- the volume -----------------------------------------------------------------------------------

# volume_up FIRSTDIR VOLUME IP...: peers probed from the first node, the replica volume started
volume_up() {
  local d=$1 vol=$2 ip bricks=() i=0 t0; shift 2
  t0=$(nowms)
  for ip in "${@:2}"; do gcli "$d" peer probe "$ip" >/dev/null; done
  glog "peers probed in $(secs "$t0") s"
  gwait "$(($# - 1)) peers connected" bash -c "[ \$(nsenter -t $(cat "$d/glusterd.pid") -n -m gluster --mode=script pool list | grep -c Connected) -eq $#  ]"
  glog "peers connected in $(secs "$t0") s"
  for ip in "$@"; do i=$((i + 1)); bricks+=("$ip:$(cat "$d/../brickdir.$i")"); done
  gcli "$d" volume create "$vol" replica "$#" "${bricks[@]}" force >/dev/null
  # GLUSTER_VOLUME_OPTS="KEY=VALUE ...": set before start and mount. A client takes some options
  # (network.ping-timeout) only when it connects: set on a mounted volume, they do not reach it.
  local kv; for kv in ${GLUSTER_VOLUME_OPTS:-}; do gcli "$d" volume set "$vol" "${kv%%=*}" "${kv#*=}" >/dev/null; done
  glog "volume created in $(secs "$t0") s"
  # on a loaded machine a brick may start too slowly for glusterd's commit ("Commit failed on
  # localhost"): the volume is then started with the bricks that are up; force starts the rest
  if ! gcli "$d" volume start "$vol" >/dev/null; then
    for _ in 1 2 3; do sleep 2; gcli "$d" volume start "$vol" force >/dev/null && break; done
  fi
  glog "volume start in $(secs "$t0") s"
  gwait "bricks of $vol online" bash -c "[ \$(nsenter -t $(cat "$d/glusterd.pid") -n -m gluster --mode=script volume status $vol detail | grep -c '^Online.*: Y') -eq $# ]"
}

# fuse_mount NETNS SERVERIP VOLUME MNT LOGDIR: the FUSE client in NETNS, mounted in the host's mount namespace
fuse_mount() {
  local ns=$1 ip=$2 vol=$3 m=$4 l=$5
  mkdir -p "$m" "$l"
  in_ns "$ns" glusterfs --volfile-server="$ip" --volfile-id="$vol" --log-file="$l/client.log" --pid-file="$l/client.pid" "$m"
  gwait "FUSE mount $m" mountpoint -q "$m"
}

fuse_unmount() { # MNT PIDFILE
  if grep -qF " $1 " /proc/self/mountinfo; then umount -l "$1" 2>/dev/null || fusermount -u -z "$1" 2>/dev/null || true; fi
  if [ -n "$2" ] && [ -f "$2" ]; then kill "$(cat "$2")" 2>/dev/null || true; rm -f "$2"; fi
}

# --- standalone: its own namespaces ---------------------------------------------------------------

rate_burst() { # RATE -> tbf burst bytes: 4 ms at the rate, at least 64 KiB
  local n u b; n=$(echo "$1" | sed 's/[a-z]*$//') u=$(echo "$1" | sed 's/^[0-9]*//')
  case $u in gbit) b=$((n * 125000000)) ;; mbit) b=$((n * 125000)) ;; kbit) b=$((n * 125)) ;; *) b=$((n / 8)) ;; esac
  b=$((b / 250)); [ "$b" -ge 65536 ] || b=65536; echo "$b"
}

# slot_pick: a /28 of 10.97.2.0/24 no host link has an address in (under a lock)
slot_pick() {
  local s used; used=$(ip -4 -o addr show | awk '{print $4}')
  for s in $(seq 0 15); do echo "$used" | grep -q "^$NET\.$((s * 16 + 1))/" || { echo "$s"; return 0; }; done
  glog "no free /28 in $NET.0/24"; return 1
}

standalone_up() { # DIR [NODES]
  local dir=$1 n=${2:-3} id=${GLUSTER_ID:-$$} t0 s base i ns ip ips=() b
  t0=$(nowms)
  [ ${#id} -le 7 ] || { glog "GLUSTER_ID $id: at most 7 characters"; return 1; }
  [ ! -f "$dir/gluster.env" ] || { glog "$dir is up already"; return 1; }
  mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
  echo "$id" > "$dir/id"
  export SBGLUS_ID=$id   # every process of this harness inherits it: check-clean finds them by it
  trap 'glog "standalone-up failed: tearing down"; standalone_down "$dir"' ERR
  b=sbglus$id
  exec 8<"$HERE/gluster.sh"; flock 8   # this script is the lock: no lock file left behind
  s=$(slot_pick); base=$((s * 16))
  ip link add "$b" type bridge; ip addr add "$NET.$((base + 1))/28" dev "$b"; ip link set "$b" up
  flock -u 8; exec 8>&-
  for i in $(seq 1 "$n") c; do
    ns=$b$([ "$i" = c ] && echo c || echo "n$i")
    if [ "$i" = c ]; then ip=$NET.$((base + 14)); else ip=$NET.$((base + 1 + i)); fi
    ip netns add "$ns"
    ip link add "${b}v$i" type veth peer name eth0 netns "$ns"
    ip link set "${b}v$i" master "$b" up
    ip -n "$ns" addr add "$ip/28" dev eth0
    ip -n "$ns" link set eth0 up; ip -n "$ns" link set lo up
    echo "$ns" > "$dir/netns.$i"; echo "$ip" > "$dir/ip.$i"; echo "${b}v$i" > "$dir/link.$i"
  done
  for i in $(seq 1 "$n"); do
    mkdir -p "$dir/n$i"; echo "$dir/n$i/brick" > "$dir/brickdir.$i"
    nsenter --net="/run/netns/$(cat "$dir/netns.$i")" unshare -m --propagation private bash -c "$(gd_script "$dir/n$i")" \
      > "$dir/n$i/glusterd.out" 2>&1 < /dev/null &
    ips+=("$(cat "$dir/ip.$i")")
  done
  for i in $(seq 1 "$n"); do gd_started "$dir/n$i"; done
  volume_up "$dir/n1" "$VOLUME" "${ips[@]}"
  fuse_mount "$(cat "$dir/netns.c")" "${ips[0]}" "$VOLUME" "$dir/mnt" "$dir/client"
  trap - ERR
  {
    echo "# written by gluster.sh standalone-up; removed by standalone-down"
    echo "GLUSTER_DIR=$dir"; echo "GLUSTER_VOLUME=$VOLUME"; echo "GLUSTER_NODES=$n"
    echo "GLUSTER_SERVERS=\"${ips[*]}\""; echo "GLUSTER_MOUNT=$dir/mnt"
    echo "GLUSTER_CLIENT_NETNS=$(cat "$dir/netns.c")"; echo "GLUSTER_CLIENT_IP=$(cat "$dir/ip.c")"
    echo "GLUSTER_CLIENT_LINK=$(cat "$dir/link.c")"; echo "GLUSTER_CLIENT_PID=$(cat "$dir/client/client.pid")"
    echo "GLUSTER_BRIDGE=$b"; echo "GLUSTER_BRIDGE_IP=$NET.$((base + 1))"
    for i in $(seq 1 "$n"); do
      echo "GLUSTER_N${i}_NETNS=$(cat "$dir/netns.$i")"; echo "GLUSTER_N${i}_IP=$(cat "$dir/ip.$i")"
      echo "GLUSTER_N${i}_LINK=$(cat "$dir/link.$i")"; echo "GLUSTER_N${i}_BRICK=$(cat "$dir/brickdir.$i")"
      echo "GLUSTER_N${i}_GLUSTERD_PID=$(cat "$dir/n$i/glusterd.pid")"
    done
  } > "$dir/gluster.env.tmp"
  mv "$dir/gluster.env.tmp" "$dir/gluster.env"
  echo "gluster up in $(secs "$t0") s: $dir/gluster.env"
}

standalone_down() { # DIR: every step tolerates a half-built harness
  local dir=$1 id t0 d f; t0=$(nowms)
  trap - ERR; set +e
  [ -d "$dir" ] || return 0
  id=$(cat "$dir/id" 2>/dev/null)
  fuse_unmount "$dir/mnt" "$dir/client/client.pid"
  for d in "$dir"/n[0-9]*; do [ -d "$d" ] && gd_stop "$d"; done
  [ -z "$id" ] || for f in /sys/fs/cgroup/cpu/sbglus-"$id"-brick* /sys/fs/cgroup/blkio/sbglus-"$id"-brick*; do uncgroup "$f"; done
  # a glusterd that never recorded its mount namespace: find it by its pid file
  for f in "$dir"/n[0-9]*/glusterd.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
  if [ -n "$id" ]; then
    for f in "$dir"/netns.*; do [ -f "$f" ] && ip netns del "$(cat "$f")" 2>/dev/null; done
    ip link del "sbglus$id" 2>/dev/null
  fi
  rm -rf "$dir/n"[0-9]* "$dir/mnt" "$dir/client" "$dir"/netns.* "$dir"/ip.* "$dir"/link.* "$dir"/brickdir.* "$dir/id" "$dir/gluster.env"
  set -e
  echo "gluster down in $(secs "$t0") s"
}

# --- in the test cluster (sourced lib.sh: node_name, node_ip, RUN...) -----------------------------

GLUSTER_CLASS=gluster

cluster_bricks() { if [ "$1" -ge 3 ]; then echo 3; else echo "$1"; fi; }   # N -> nodes with a brick
cluster_ip() { if [ "$1" = 1 ]; then echo "$BRIDGE_IP"; else node_ip "$1"; fi; }   # node 1: the host's bridge address

cluster_up() { # N: glusterd + brick on nodes 1..min(N,3), a FUSE mount on every node, the class
  local n=$1 g=$GLUSTER_RUN t0 i b ips=() paths=""
  t0=$(nowms)
  [ "$n" -ge 2 ] || { glog "GlusterFS needs 2 or more real nodes"; return 1; }
  export SBGLUS_ID=cluster
  b=$(cluster_bricks "$n")
  mkdir -p "$g"
  for i in $(seq 1 "$n"); do
    echo "$(node_link "$i")" > "$g/link.$i"; echo "$(node_netns "$i")" > "$g/netns.$i"
  done
  for i in $(seq 1 "$b"); do
    mkdir -p "$g/n$i"; echo "$g/n$i/brick" > "$g/brickdir.$i"; ips+=("$(cluster_ip "$i")")
    cluster_glusterd "$i"
  done
  for i in $(seq 1 "$b"); do gd_started "$g/n$i"; done
  glog "glusterd on $b nodes in $(secs "$t0") s"
  volume_up "$g/n1" "$VOLUME" "${ips[@]}"
  glog "volume $VOLUME started in $(secs "$t0") s"
  for i in $(seq 1 "$n"); do cluster_mount "$i"; paths="$paths,{\"node\":\"$(node_name "$i")\",\"paths\":[\"$g/mnt/$(node_name "$i")\"]}"; done
  glog "mounted on $n nodes in $(secs "$t0") s"
  bash "$HERE/storage.sh" provisioner gluster-config storbench.local/gluster "{\"nodePathMap\":[${paths#,}]}"
  KC apply -f - >/dev/null <<EOF2
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $GLUSTER_CLASS}
provisioner: storbench.local/gluster
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
parameters: {replicas: "$b", replicationModel: client, replicaNodes: "$(for i in $(seq 1 "$b"); do node_name "$i"; done | paste -sd,)"}
EOF2
  {
    echo "GLUSTER_CLASS=$GLUSTER_CLASS"; echo "GLUSTER_VOLUME=$VOLUME"; echo "GLUSTER_RUN=$g"
    echo "GLUSTER_SERVERS=\"${ips[*]}\""; echo "GLUSTER_REPLICAS=$b"
    for i in $(seq 1 "$n"); do echo "$(node_var "$i" GLUSTER)=$g/mnt/$(node_name "$i")"; done
  } > "$g/gluster.env"
  echo "gluster up in $(secs "$t0") s"
}

cluster_glusterd() { # I: its glusterd in node I's namespace and cgroup (bricks and self-heal are its children)
  local d=$GLUSTER_RUN/n$1
  rm -f "$d/glusterd.pid" "$d/mntns"
  bash "$HERE/nodes.sh" node_run "$1" gluster-glusterd unshare -m --propagation private bash -c "$(gd_script "$d")"
}

cluster_mount() { # I: node I's FUSE client, in its namespace and cgroup, server: the first brick's node
  local m; m=$GLUSTER_RUN/mnt/$(node_name "$1")
  fuse_unmount "$m" ""   # a client that died with its node leaves "Transport endpoint is not connected"
  mkdir -p "$m"
  bash "$HERE/nodes.sh" node_run "$1" gluster-client glusterfs -N --volfile-server="$(cluster_ip 1)" --volfile-id="$VOLUME" \
    --log-file="$GLUSTER_RUN/client-$(node_name "$1").log" "$m"
  gwait "gluster mount of $(node_name "$1")" mountpoint -q "$m"
}

cluster_node_start() { # N I: after `cluster.sh node start`: its glusterd (which starts its brick) and its mount
  local n=$1 i=$2
  [ -d "$GLUSTER_RUN" ] || return 0
  if [ "$i" -le "$(cluster_bricks "$n")" ]; then cluster_glusterd "$i"; gd_started "$GLUSTER_RUN/n$i"; fi
  cluster_mount "$i"
}

cluster_down() { # N: tolerates a half-built GlusterFS
  local n=${1:-3} g=$GLUSTER_RUN m d
  set +e
  [ -d "$g" ] || return 0
  # the provisioner deletes the class's released volumes (a helper pod): give it the time before it stops
  WAITFOR_TRIES=60 waitfor "gluster volumes deleted" bash -c "[ -z \"\$(\"$BIN/kubectl\" get pv -o jsonpath='{.items[?(@.spec.storageClassName==\"$GLUSTER_CLASS\")].metadata.name}')\" ]"
  KC delete storageclass "$GLUSTER_CLASS" --ignore-not-found >/dev/null 2>&1
  stop_pidfile "$RUN/gluster-config.pid"
  KC -n local-path-storage delete configmap gluster-config --ignore-not-found >/dev/null 2>&1
  rm -rf "$RUN/storage/gluster-config"
  for m in "$g"/mnt/*; do [ -d "$m" ] && fuse_unmount "$m" ""; done
  for d in $(seq 1 "$n"); do stop_pidfile "$(node_state "$d")/run/gluster-client.pid"; done
  for d in "$g"/n[0-9]*; do [ -d "$d" ] && gd_stop "$d"; done
  for d in /sys/fs/cgroup/cpu/sbglus-cluster-brick* /sys/fs/cgroup/blkio/sbglus-cluster-brick*; do uncgroup "$d"; done
  rm -rf "$g"
  set -e
}

# --- faults ---------------------------------------------------------------------------------------

state_dir() { if [ "$1" = cluster ]; then . "$HERE/lib.sh"; echo "$RUN/gluster"; else echo "$1"; fi; }

brick() { # STATE kill|freeze|thaw|start|cpu|uncpu|slow|unslow NODE [PERCENT|BYTES_PER_SEC]
  local dir; dir=$(state_dir "$1"); local op=$2 i=$3 p cg disk
  case $op in
    kill) p=$(brick_pid "$dir/n$i"); kill -9 "$p" ;;
    freeze) p=$(brick_pid "$dir/n$i"); kill -STOP "$p" ;;
    thaw) p=$(brick_pid "$dir/n$i"); kill -CONT "$p" ;;
    start) # glusterd may not have noticed the brick's death yet: force-start until it runs
      for _ in $(seq 1 30); do
        gcli "$dir/n1" volume start "$(vol_of "$dir")" force >/dev/null
        sleep 1; brick_pid "$dir/n$i" >/dev/null && return 0
      done
      glog "brick of node $i did not start"; return 1 ;;
    cpu) # a cpu cgroup capping the brick at PERCENT of one core (CFS quota over a 100 ms period)
      cg=$(brick_cgroup cpu "$dir" "$i"); p=$(brick_pid "$dir/n$i")
      mkdir -p "$cg"; echo 100000 > "$cg/cpu.cfs_period_us"; echo $(( ${4:?percent of one core} * 1000 )) > "$cg/cpu.cfs_quota_us"
      echo "$p" > "$cg/cgroup.procs"; glog "brick of node $i: CPU limited to $4% of one core" ;;
    slow) # a blkio cgroup: the brick's reads and writes throttled on the whole disk under its directory
      cg=$(brick_cgroup blkio "$dir" "$i"); p=$(brick_pid "$dir/n$i"); disk=$(whole_disk "$(cat "$dir/brickdir.$i")")
      mkdir -p "$cg"; echo "$disk ${4:?bytes per second}" > "$cg/blkio.throttle.write_bps_device"
      echo "$disk $4" > "$cg/blkio.throttle.read_bps_device"
      echo "$p" > "$cg/cgroup.procs"; glog "brick of node $i: disk $disk limited to $4 bytes/s" ;;
    uncpu|unslow) uncgroup "$(brick_cgroup "$([ "$op" = uncpu ] && echo cpu || echo blkio)" "$dir" "$i")" ;;
    *) glog "brick: kill|freeze|thaw|start|cpu|uncpu|slow|unslow"; return 2 ;;
  esac
}

# brick_cgroup HIERARCHY STATEDIR NODE: the cgroup a fault puts node NODE's brick in
brick_cgroup() { echo "/sys/fs/cgroup/$1/sbglus-$(cat "$2/id" 2>/dev/null || echo cluster)-brick$3"; }

# uncgroup CG: its processes back to the hierarchy's root, then the cgroup removed (none: nothing)
uncgroup() {
  [ -d "$1" ] || return 0
  local p; for p in $(cat "$1/cgroup.procs" 2>/dev/null); do echo "$p" > "$(dirname "$1")/cgroup.procs" 2>/dev/null || true; done
  rmdir "$1"
}

# whole_disk PATH: MAJ:MIN of the whole disk holding PATH (blkio throttles whole disks only)
whole_disk() {
  local dev majmin sys
  dev=$(stat -c %d "$1"); majmin="$((dev >> 8 & 0xfff)):$((dev & 0xff | (dev >> 12 & 0xfff00)))"
  sys=$(readlink -f "/sys/dev/block/$majmin") || { glog "no block device $majmin under $1"; return 1; }
  if [ -f "$sys/partition" ]; then cat "$(dirname "$sys")/dev"; else echo "$majmin"; fi
}

vol_of() { sed -n 's/^GLUSTER_VOLUME=//p' "$1/gluster.env"; }

link() { # STATE cut|restore|shape|unshape NODE [RATE]   (NODE c: the standalone client)
  local dir; dir=$(state_dir "$1"); local op=$2 i=$3 rate=${4:-1gbit} l ns
  l=$(cat "$dir/link.$i") ns=$(cat "$dir/netns.$i")
  case $op in
    cut) ip link set "$l" down ;;
    restore) ip link set "$l" up ;;
    shape) tc qdisc replace dev "$l" root tbf rate "$rate" burst "$(rate_burst "$rate")" latency 25ms
      in_ns "$ns" tc qdisc replace dev eth0 root tbf rate "$rate" burst "$(rate_burst "$rate")" latency 25ms ;;
    unshape) tc qdisc del dev "$l" root 2>/dev/null || true; in_ns "$ns" tc qdisc del dev eth0 root 2>/dev/null || true ;;
    *) glog "link: cut|restore|shape|unshape"; return 2 ;;
  esac
}

cli() { local dir; dir=$(state_dir "$1"); local i=$2; shift 2; gcli "$dir/n$i" "$@"; }

check_clean() { # [ID DIR]: that harness only (another may be running), else every sbglus* and gluster process
  local id=${1:-} dir=${2:-} bad=0 x
  for x in $(ip netns list 2>/dev/null | awk '{print $1}'); do case $x in "sbglus$id"*) echo "left behind: network namespace $x"; bad=1 ;; esac; done
  for x in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1); do case $x in "sbglus$id"*) echo "left behind: link $x"; bad=1 ;; esac; done
  for x in $(pgrep -x glusterd; pgrep -x glusterfsd; pgrep -x glusterfs); do
    if [ -z "$id" ] || tr '\0' '\n' < "/proc/$x/environ" 2>/dev/null | grep -qx "SBGLUS_ID=$id"; then
      echo "left behind: process $x $(tr '\0' ' ' < "/proc/$x/cmdline" 2>/dev/null | cut -c1-100)"; bad=1; fi
  done
  for x in /sys/fs/cgroup/cpu/sbglus-"$id"* /sys/fs/cgroup/blkio/sbglus-"$id"*; do [ ! -e "$x" ] || { echo "left behind: cgroup $x"; bad=1; }; done
  for x in $(awk '$0 ~ / - fuse.glusterfs / {print $5}' /proc/self/mountinfo); do
    case $x in "$dir"*) echo "left behind: mount $x"; bad=1 ;; esac; done
  [ "$bad" = 0 ] && echo clean
  return "$bad"
}

cmd=${1:-}; shift || true
case $cmd in cluster-*) . "$HERE/lib.sh"; GLUSTER_RUN=$RUN/gluster VOLUME=${GLUSTER_VOLUME:-sbgluster} ;; esac
case $cmd in
  standalone-up) standalone_up "$@" ;;
  standalone-down) standalone_down "$@" ;;
  cluster-up) cluster_up "$@" ;;
  cluster-down) cluster_down "$@" ;;
  cluster-node-start) cluster_node_start "$@" ;;
  brick|link|cli) "$cmd" "$@" ;;
  check-clean) check_clean "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
