# lib.sh - what every script of test/cluster shares: versions, the cache
# layout, the cluster's addresses, and small helpers. Sourced, never run.
# The cache lives outside the clone ($KAPI_ROOT, default ~/.cache/storbench-kapi):
# bin/ (built binaries and image archives) and src/ (the build module) survive
# `down`; run/ (state of a running cluster) does not.
K8S_VERSION=${K8S_VERSION:-1.33.13}     # all k8s.io staging modules v0.33.13 must be on the Go proxy
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
LPP_VERSION=${LPP_VERSION:-v0.0.30}     # rancher/local-path-provisioner, the k3s default
ROOT=${KAPI_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/storbench-kapi}
BIN=$ROOT/bin RUN=$ROOT/run
CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ETCD_PORT=${ETCD_PORT:-2379} API_PORT=${API_PORT:-6443} KWOK_PORT=${KWOK_PORT:-10247}
# The nodes' network: a host bridge, one veth per namespaced node.
BRIDGE=${CLUSTER_BRIDGE:-sbbr0} BRIDGE_IP=${CLUSTER_BRIDGE_IP:-10.98.0.1} BRIDGE_NET=10.98.0
NETFS_PORT=${NETFS_PORT:-2022}          # the sftp server of the network filesystem, on its node's address
# FIO_ARCHIVE is REAL_IMAGE's archive in $BIN/images, named by its content: a new name when the
# content changes (gfapi: Gluster's translators added; rbd: the rbd CLI and Ceph's plugins), so a
# cached older archive is built again.
FIO_ARCHIVE=fio-gfapi-rbd.tar
REAL_IMAGE=localhost/kreal/fio:3.33 TOOLS_IMAGE=localhost/kreal/tools:1 PAUSE_IMAGE=localhost/kreal/pause:3.10
# the caller's flags kept (scripts/test.sh's -trimpath: the cluster tier's tests then
# share the host lanes' compiled packages)
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false"
export KUBECONFIG=$RUN/kubeconfig

# Node i (1-based): 1 is the host's own node kreal-node on 127.0.0.1; i >= 2
# is kreal-node-i in network namespace sbn<i> at 10.98.0.(10+i).
node_name() { if [ "$1" = 1 ]; then echo kreal-node; else echo "kreal-node-$1"; fi; }
node_index() { case $1 in kreal-node) echo 1 ;; kreal-node-[0-9]*) echo "${1#kreal-node-}" ;; *) echo "unknown node $1" >&2; return 1 ;; esac; }
node_netns() { [ "$1" = 1 ] || echo "sbn$1"; }
node_ip() { if [ "$1" = 1 ]; then echo 127.0.0.1; else echo "$BRIDGE_NET.$((10 + $1))"; fi; }
node_link() { [ "$1" = 1 ] || echo "sbv$1"; }          # host side of the node's veth
node_state() { echo "$RUN/nodes/$(node_name "$1")"; }
node_cgroup() { echo "sbnode$1"; }                     # under every cgroup v1 hierarchy
node_podcidr() { echo "10.244.$1.0/24"; }
node_var() { echo "$(node_name "$1" | tr - _)_$2"; }   # cluster.env's per-node variable names
# in_node i CMD...: CMD in node i's network namespace (nsenter --net only: `ip
# netns exec` would also unshare the mount namespace and remount /sys, hiding
# the cgroups and the kubelet's volume mounts from containerd).
in_node() { local i=$1; shift
  if [ "$i" = 1 ]; then "$@"; else nsenter --net="/run/netns/sbn$i" "$@"; fi; }
# cg_exec i part CMD...: exec CMD in node i's cgroup sbnode<i>/<part> of every
# hierarchy, so that stopping the node can kill all it runs, and its CPU and
# memory are counted together.
cg_dirs() { local d; for d in /sys/fs/cgroup/*/; do [ "$d" = /sys/fs/cgroup/unified/ ] || echo "${d%/}"; done; }
KC() { "$BIN/kubectl" "$@"; }

log() { echo "cluster: $*" >&2; }
waitfor() { # description, command...
  local d=$1; shift
  for _ in $(seq 1 "${WAITFOR_TRIES:-120}"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  log "timeout waiting for $d ($(( ${WAITFOR_TRIES:-120} / 2 )) s)"; return 1
}
api() { curl -fsS --cacert "$RUN/pki/ca.crt" -H "Authorization: Bearer $(cut -d, -f1 "$RUN/pki/tokens.csv")" "$@"; }
node_ready() { [ "$("$BIN/kubectl" get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; }
# alive PID: running, sleeping or stopped, not a zombie. A process whose parent has gone is
# reaped by PID 1, which in some containers takes seconds; waiting for kill -0 to fail waited
# for that reaper (about 2 s for each process a down stopped), though a zombie holds no port,
# file or mount.
alive() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ -n "$s" ] && [ "$s" != Z ]; }
# stop_pidfile FILE: SIGTERM, wait up to 20 s for it to exit, SIGKILL.
stop_pidfile() { local f=$1 p; [ -f "$f" ] || return 0; p=$(cat "$f")
  kill "$p" 2>/dev/null || true; for _ in $(seq 1 100); do alive "$p" || break; sleep 0.2; done
  kill -9 "$p" 2>/dev/null || true; rm -f "$f"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since() { awk -v a="$1" -v b="$(now_ms)" 'BEGIN {printf "%.1f", (b - a) / 1000}'; }   # seconds since a now_ms
# sshd_config DIR ADDR PORT: an sshd's configuration in DIR (host key, authorized_keys there): root
# login with the authorized key only, on ADDR:PORT (nodes.sh sshd_up, nas.sh sshd)
sshd_config() { local d=$1
  cat > "$d/sshd_config" <<EOF
ListenAddress $2:$3
HostKey $d/ssh_host_ed25519_key
PidFile none
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
}
