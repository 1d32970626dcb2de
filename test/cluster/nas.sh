#!/usr/bin/env bash
# nas.sh - a "NAS" beside the test cluster that is NOT a node: the most common homelab setup, a
# share served from a box outside the cluster. Its own network namespace sbnas, a veth (host side
# sbvnas) to the cluster's bridge at $NAS_IP (an address of the nodes' subnet no node has), an
# SFTP server on $NAS_IP:$NETFS_PORT (socat + sftp-server, as storage.sh serves the netfs class)
# exporting $RUN/nas/export, an sshd on $NAS_IP:22 (root, the caller's key) so that storbench can
# reach it as an ssh:// target (its network round and its own storage, $RUN/nas/disk), and tc tbf
# shaping of both ends of its link, as nodes.sh shapes a node's port. Everything it makes is
# under $RUN/nas (pid files, host key, dirs) or named sbnas/sbvnas: down removes only that.
# While up, $RUN/nas/nas.env (NAS_ADDR, NAS_PORT, NAS_EXPORT, NAS_DISK, NAS_NETNS, NAS_LINK,
# NAS_SSH_HOSTKEY) is part of cluster.env.
# Usage (through cluster.sh): nas up | down | sshd PUBKEY_FILE | shape RATE | unshape | status
set -euo pipefail
. "$(dirname "$0")/lib.sh"
NAS_NS=sbnas NAS_LINK=sbvnas NAS_IP=${NAS_IP:-$BRIDGE_NET.200}
D=$RUN/nas

in_nas() { nsenter --net="/run/netns/$NAS_NS" "$@"; }

# nas_run NAME CMD...: CMD in the NAS's namespace, its own session (so down ends it and every
# child socat forks), logging to $D/NAME.log, pid in $D/NAME.pid
nas_run() { local n=$1; shift
  setsid nsenter --net="/run/netns/$NAS_NS" "$@" > "$D/$n.log" 2>&1 < /dev/null &
  echo $! > "$D/$n.pid"
}

stop() { # NAME: the process group of NAME, then NAME itself
  local f=$D/$1.pid
  [ -f "$f" ] || return 0
  kill -- "-$(cat "$f")" 2>/dev/null || true
  stop_pidfile "$f"
}

up() {
  [ -f "$RUN/nodes.count" ] || { log "the cluster is not up"; return 1; }
  [ ! -d "$D" ] || { log "the NAS is up already ($D): cluster.sh nas down first"; return 1; }
  ! ip netns list | grep -qw "$NAS_NS" || { log "network namespace $NAS_NS exists and is not this cluster's"; return 1; }
  ! ip link show "$NAS_LINK" >/dev/null 2>&1 || { log "link $NAS_LINK exists and is not this cluster's"; return 1; }
  local i; for i in $(seq 1 "$(cat "$RUN/nodes.count")"); do
    [ "$(node_ip "$i")" != "$NAS_IP" ] || { log "$NAS_IP is node $i's address"; return 1; }; done
  mkdir -p "$D/export" "$D/disk"
  chmod 0777 "$D/export" "$D/disk"
  trap 'log "nas up failed: tearing it down"; down' ERR
  ip netns add "$NAS_NS"
  ip link add "$NAS_LINK" type veth peer name eth0 netns "$NAS_NS"
  ip link set "$NAS_LINK" master "$BRIDGE" up
  in_nas ip link set lo up
  in_nas ip addr add "$NAS_IP/24" dev eth0
  in_nas ip link set eth0 up
  # the nodes are on its subnet; their pods (10.244.*) answer through the host, which routes them
  in_nas ip route add default via "$BRIDGE_IP"
  shape "${CLUSTER_RATE:-1gbit}"
  nas_run sftp socat "TCP-LISTEN:$NETFS_PORT,bind=$NAS_IP,reuseaddr,fork" "EXEC:/usr/lib/openssh/sftp-server -e"
  waitfor "the NAS's sftp server" in_nas bash -c "exec 3<>/dev/tcp/$NAS_IP/$NETFS_PORT" || { cat "$D/sftp.log" >&2; return 1; }
  {
    echo "NAS_ADDR=$NAS_IP"
    echo "NAS_PORT=$NETFS_PORT"
    echo "NAS_EXPORT=$D/export"
    echo "NAS_DISK=$D/disk"
    echo "NAS_NETNS=$NAS_NS"
    echo "NAS_LINK=$NAS_LINK"
    echo "NAS_SSH_HOSTKEY=$D/sshd/ssh_host_ed25519_key.pub"
  } > "$D/nas.env"
  bash "$CLUSTER_DIR/cluster.sh" write_env
  trap - ERR
  echo "NAS at $NAS_IP: sftp on port $NETFS_PORT exporting $D/export (not a node)"
}

sshd() { # PUBKEY_FILE: root login with that key on $NAS_IP:22, its own host key
  local key=$1 s=$D/sshd
  [ -d "$D" ] || { log "the NAS is not up"; return 1; }
  [ -f "$key" ] || { log "no public key file $key"; return 1; }
  mkdir -p "$s" /run/sshd; chmod 0755 /run/sshd
  [ -f "$s/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$s/ssh_host_ed25519_key" -C nas
  cp "$key" "$s/authorized_keys"; chmod 0600 "$s/authorized_keys"
  sshd_config "$s" "$NAS_IP" 22
  stop sshd
  local bin; bin=$(type -P sshd)   # the program, not this function; it re-execs itself: an absolute path
  nas_run sshd "$bin" -D -e -f "$s/sshd_config"
  waitfor "the NAS's sshd" in_nas bash -c "exec 3<>/dev/tcp/$NAS_IP/22" || { cat "$D/sshd.log" >&2; return 1; }
  echo "sshd of the NAS on $NAS_IP:22, host key $s/ssh_host_ed25519_key.pub"
}

shape() { # RATE: tbf on both ends of the NAS's veth, as nodes.sh shapes a node's port
  local rate=${1:-${CLUSTER_RATE:-1gbit}} b burst
  b=$(bash "$CLUSTER_DIR/nodes.sh" rate_bytes "$rate"); burst=$((b / 250)); [ "$burst" -ge 65536 ] || burst=65536
  tc qdisc replace dev "$NAS_LINK" root tbf rate "$rate" burst "$burst" latency 25ms
  in_nas tc qdisc replace dev eth0 root tbf rate "$rate" burst "$burst" latency 25ms
  echo "$rate" > "$D/rate"
}

unshape() {
  tc qdisc del dev "$NAS_LINK" root 2>/dev/null || true
  in_nas tc qdisc del dev eth0 root 2>/dev/null || true
  echo unshaped > "$D/rate"
}

down() { # always safe: only what up made (a NAS never brought up makes this a no-op)
  trap - ERR
  set +e
  [ -d "$D" ] || return 0
  stop sshd
  stop sftp
  if ip netns list | grep -qw "$NAS_NS"; then ip netns del "$NAS_NS"; fi   # the veth with it
  ip link del "$NAS_LINK" 2>/dev/null
  rm -rf "$D"
  if [ -f "$RUN/cluster.env" ]; then bash "$CLUSTER_DIR/cluster.sh" write_env; fi
  set -e
  return 0
}

status() {
  [ -d "$D" ] || { echo "NAS down"; return 0; }
  echo "NAS at $NAS_IP, link $NAS_LINK $(cat /sys/class/net/$NAS_LINK/operstate 2>/dev/null), rate $(cat "$D/rate" 2>/dev/null)"
}

check_clean() { # what a NAS could leave behind, one "left behind: ..." line each
  if ip netns list 2>/dev/null | grep -qw "$NAS_NS"; then echo "left behind: network namespace $NAS_NS"; fi
  if ip link show "$NAS_LINK" >/dev/null 2>&1; then echo "left behind: link $NAS_LINK"; fi
  local p
  for p in $(pgrep -f "^(socat TCP-LISTEN:$NETFS_PORT,bind=$NAS_IP,|[^ ]*sshd -D -e -f $D/)" || true); do
    echo "left behind: process $p: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-120)"; done
  return 0
}

cmd=${1:-}; shift || true
case $cmd in
  up|down|sshd|shape|unshape|status|check_clean) "$cmd" "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
