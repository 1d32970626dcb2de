#!/usr/bin/env bash
# nodes.sh - REAL nodes beside control-plane.sh: kubelet v1.33.13 (built from the same k8s.io
# modules) + Debian's containerd 1.6 / runc / CNI plugins. Images are made locally from host
# binaries by mkimage.py (nothing can be pulled): localhost/kreal/pause:3.10 (kubernetes'
# pause.c, static), localhost/kreal/fio:3.33 (host fio + sh + coreutils, and Gluster's translators,
# transports and auth modules that fio's gfapi engine loads at run time, which ldd does not list;
# the rbd CLI and Ceph's compressor and crypto plugins, for k8s:rbd:POOL's images) and
# localhost/kreal/tools:1 (iperf3, sha256sum and the shell tools local-path-provisioner's
# helper pods run).
# Node 1, kreal-node, is the host's own: host network, 127.0.0.1. Node i >= 2, kreal-node-i,
# lives in network namespace sbn<i>, joined by a veth (host side sbv<i>) to the bridge sbbr0
# (10.98.0.1/24) at 10.98.0.(10+i), both ends shaped with tc tbf. Every node has its own
# containerd (root, state, socket, runc root), kubelet (root dir, cgroup root sbnode<i>, serving
# certificate with its IP), CNI bridge sbpod<i> and pod subnet 10.244.<i>.0/24; routes between
# the nodes make pod IPs reachable across nodes. Everything a node runs sits in the cgroups
# sbnode<i> (containerd, kubelet, shims, sshd and network-filesystem processes in
# sbnode<i>/system, pods under sbnode<i>/kubepods), so `stop` kills a node as a dead machine.
# Normally driven by test/cluster/cluster.sh; directly (root, control-plane.sh up first):
# Usage: nodes.sh build | host-up | host-down | up I | down I | routes N | stop I | start I
#        | link_cut I | link_restore I | shape I RATE | unshape I | sshd_up I PUBKEY [PORT] | sshd_down I
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/host.sh"   # OWNED, BASELINE: what the cluster made, what was there before

sock() { echo "$(node_state "$1")/containerd/containerd.sock"; }
CTR() { local i=$1; shift; ctr -a "$(sock "$i")" -n k8s.io "$@"; }

# gluster_plugins: the modules libgfapi dlopens (glusterfs-common's xlator, rpc-transport and auth
# folders); mkimage.py adds each one's own library closure. None when Gluster is not installed.
gluster_plugins() { find /usr/lib/*/glusterfs/*/xlator /usr/lib/*/glusterfs/*/rpc-transport /usr/lib/*/glusterfs/*/auth \
  -name '*.so' 2>/dev/null | sort; }

# ceph_plugins: the modules librados and librbd dlopen (compressors, crypto accelerators), which
# ldd does not list either; mkimage.py adds each one's own library closure.
ceph_plugins() { find /usr/lib/*/ceph/compressor /usr/lib/*/ceph/crypto -name '*.so' 2>/dev/null | sort; }

build() { # kubelet from the control plane's module set, the pause binary, the image archives
  cd "$ROOT/src"
  grep -q cmd/kubelet tools.go || { sed -i 's#^)$#\t_ "k8s.io/kubernetes/cmd/kubelet"\n)#' tools.go; go mod tidy; }
  if [ "$("$BIN/kubelet" --version 2>/dev/null)" != "Kubernetes v$K8S_VERSION" ]; then
    local V=$K8S_VERSION X=k8s.io/component-base/version
    go build -ldflags "-s -w -X $X.gitVersion=v$V -X $X.gitMajor=${V%%.*} -X $X.gitMinor=$(echo "$V" | cut -d. -f2)" \
      -o "$BIN/" k8s.io/kubernetes/cmd/kubelet
  fi
  mkdir -p "$BIN/images"; cd "$BIN/images"
  if [ ! -f pause.tar ]; then
    local kdir; kdir=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
    gcc -Os -static -DVERSION=v3.10-kreal -o pause "$kdir/build/pause/linux/pause.c" && strip pause
    python3 "$CLUSTER_DIR/mkimage.py" "$PAUSE_IMAGE" pause.tar '["/pause"]' ./pause=/pause
  fi
  [ -f "$FIO_ARCHIVE" ] || python3 "$CLUSTER_DIR/mkimage.py" "$REAL_IMAGE" "$FIO_ARCHIVE" \
    '["/bin/sh","-c","echo fio image ready; exec sleep infinity"]' \
    /usr/bin/fio /bin/sh /bin/sleep /bin/cat /bin/ls /bin/df /bin/mkdir /bin/rm /bin/echo /bin/true /bin/false /bin/sync /bin/ps /bin/kill \
    /usr/bin/timeout /usr/bin/stat /usr/bin/head /usr/bin/tail /usr/bin/wc /usr/bin/date /usr/bin/env /usr/bin/id /usr/bin/uname \
    /usr/bin/nproc /usr/bin/dd /usr/bin/grep /usr/bin/sed /usr/bin/mawk=/usr/bin/awk /usr/bin/sha256sum /usr/bin/tr /usr/bin/cut \
    /usr/bin/sort /usr/bin/mv /usr/bin/cp /usr/bin/touch /usr/bin/readlink /usr/bin/basename /usr/bin/dirname /usr/bin/find /usr/bin/xargs \
    /usr/bin/rbd $(gluster_plugins) $(ceph_plugins)
  [ -f tools.tar ] || python3 "$CLUSTER_DIR/mkimage.py" "$TOOLS_IMAGE" tools.tar \
    '["/bin/sh","-c","exec sleep infinity"]' \
    /usr/bin/iperf3 /bin/sh /bin/sleep /bin/cat /bin/ls /bin/mkdir /bin/rm /bin/rmdir /bin/chmod /bin/chown /bin/echo /bin/true \
    /bin/false /bin/sync /usr/bin/dd /usr/bin/sha256sum /usr/bin/timeout /usr/bin/head /usr/bin/du /usr/bin/stat /usr/bin/env \
    /usr/bin/grep /usr/bin/mawk=/usr/bin/awk /usr/bin/wc /usr/bin/date /usr/bin/touch /usr/bin/truncate
}

# --- the host side: bridge, API forwarder, what kubelet and CNI change -------------------------

HOST_PATHS="/var/log/containers /var/log/pods /var/lib/kubelet /var/lib/cni /run/containerd /run/netns /run/sshd /usr/libexec/kubernetes"
SYSCTLS="vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward"

host_up() { # N: bridge, forwarder, saved host state
  local n=${1:-3}
  mkdir -p "$RUN/nodes" "$RUN/logs" "$BASELINE"
  if [ ! -f "$RUN/host.saved" ]; then   # once per cluster: the first host-up after a down
    sysctl -n $SYSCTLS > "$BASELINE/sysctl"
    : > "$BASELINE/created"
    snapshot_host
    for p in $HOST_PATHS; do [ -e "$p" ] || echo "$p" >> "$BASELINE/created"; done
    # a kubelet with the default cgroup root makes /kubepods in every hierarchy (not ours: each
    # node has its own root), but a crashed or foreign one leaves it behind: ours to remove if new
    [ -d /sys/fs/cgroup/cpu/kubepods ] || echo cgroup:kubepods >> "$BASELINE/created"
    touch "$RUN/host.saved"
  fi
  sysctl -q -w net.ipv4.ip_forward=1   # the host routes between the nodes' links and its own pod bridge
  [ "$n" -ge 2 ] || return 0
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then ip link add "$BRIDGE" type bridge && own link "$BRIDGE"; fi
  owned link "$BRIDGE" || { log "$BRIDGE exists and is not the cluster's"; return 1; }
  ip addr replace "$BRIDGE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # The API server listens on 127.0.0.1 only; the nodes reach it at the bridge address (in its
  # certificate) through this TCP forwarder, which exists only on the bridge the harness made.
  if ! [ -f "$RUN/apifwd.pid" ] || ! kill -0 "$(cat "$RUN/apifwd.pid")" 2>/dev/null; then
    # its own process group: each connection is a forked child, stopped with it
    setsid socat "TCP-LISTEN:$API_PORT,bind=$BRIDGE_IP,reuseaddr,fork" "TCP:127.0.0.1:$API_PORT" > "$RUN/logs/apifwd.log" 2>&1 < /dev/null &
    echo $! > "$RUN/apifwd.pid"
  fi
}

host_down() { # after every node is down; nothing to undo unless host_up ran (a refused up made nothing)
  [ -f "$RUN/host.saved" ] || return 0
  if [ -f "$RUN/apifwd.pid" ]; then kill -- "-$(cat "$RUN/apifwd.pid")" 2>/dev/null || true; fi
  stop_pidfile "$RUN/apifwd.pid"
  drop_owned_routes   # only the routes routes() recorded, never another 10.244.* route
  if owned link "$BRIDGE"; then ip link del "$BRIDGE" 2>/dev/null || true; fi
  cni_netns_cleanup ''
  drop_kube_chains    # the chains kubelet creates in the host's namespace, as they were before
  if [ -f "$BASELINE/sysctl" ] && [ -f "$RUN/host.saved" ]; then
    local k v vals; vals=$(cat "$BASELINE/sysctl")
    for k in $SYSCTLS; do v=$(echo "$vals" | head -1); vals=$(echo "$vals" | tail -n +2); sysctl -q -w "$k=$v"; done
  fi
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/cni/results/sbpod* 2>/dev/null || true
  if [ -f "$BASELINE/created" ] && [ -f "$RUN/host.saved" ]; then
    while read -r p; do
      case $p in
        "") ;;
        cgroup:*) for d in $(cg_dirs) /sys/fs/cgroup/unified; do
                    if [ -d "$d/${p#cgroup:}" ]; then find "$d/${p#cgroup:}" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi; done ;;
        /run/netns) rmdir "$p" 2>/dev/null || true ;;   # others' namespaces may live there by now
        *) rm -rf "$p" ;;
      esac
    done < "$BASELINE/created"
  fi
  rm -f "$RUN/host.saved"
}

# cni_netns_cleanup CIDR_PREFIX: the pod network namespaces (/run/netns/cni-*) whose pod address
# is in 10.244.<prefix>: containerd removes one only when the kubelet stops its sandbox, which a
# killed node never does. '' means every pod subnet of the cluster. A namespace that was there
# before the cluster (BASELINE) is never one of its pods'.
cni_netns_cleanup() {
  local pat="10\\.244\\.${1:+$1\\.}" ns
  for ns in /run/netns/cni-*; do
    [ -e "$ns" ] || continue
    preexisting_netns "${ns##*/}" && continue
    if nsenter --net="$ns" ip -4 -o addr 2>/dev/null | grep -q " inet $pat" ||
       ! nsenter --net="$ns" ip -4 -o addr show scope global 2>/dev/null | grep -q inet; then
      umount "$ns" 2>/dev/null || umount -l "$ns" 2>/dev/null || true
      rm -f "$ns"
    fi
  done
}

# --- shaping ----------------------------------------------------------------------------------

rate_bytes() { # 1gbit, 500mbit, 100kbit -> bytes per second
  local r=${1,,} n u
  n=${r%%[a-z]*}; u=${r#"$n"}
  case $u in gbit) echo $((n * 125000000)) ;; mbit) echo $((n * 125000)) ;; kbit) echo $((n * 125)) ;;
    bit|"") echo $((n / 8)) ;; *) log "rate $1: use bit, kbit, mbit or gbit"; return 1 ;; esac
}

shape() { # I RATE: tbf on both ends of node I's veth (its "switch port")
  local i=$1 rate=${2:-${CLUSTER_RATE:-1gbit}} b burst
  b=$(rate_bytes "$rate"); burst=$((b / 250)); [ "$burst" -ge 65536 ] || burst=65536   # 4 ms at the rate, at least 64 KiB
  tc qdisc replace dev "$(node_link "$i")" root tbf rate "$rate" burst "$burst" latency 25ms
  in_node "$i" tc qdisc replace dev eth0 root tbf rate "$rate" burst "$burst" latency 25ms
  echo "$rate" > "$(node_state "$i")/rate"
}

unshape() {
  local i=$1
  tc qdisc del dev "$(node_link "$i")" root 2>/dev/null || true
  in_node "$i" tc qdisc del dev eth0 root 2>/dev/null || true
  echo unshaped > "$(node_state "$i")/rate"
}

link_cut() { ip link set "$(node_link "$1")" down; }        # the cable pulled at the switch
link_restore() { ip link set "$(node_link "$1")" up; }

# --- cgroups: everything a node runs --------------------------------------------------------------

cg_make() { # I: sbnode<i>/system in every hierarchy (cpuset needs cpus and mems before tasks join)
  local i=$1 d g
  for d in $(cg_dirs); do
    for g in "$(node_cgroup "$i")" "$(node_cgroup "$i")/system"; do
      mkdir -p "$d/$g"
      if [ -f "$d/$g/cpuset.cpus" ]; then
        [ -n "$(cat "$d/$g/cpuset.cpus")" ] || cat "$(dirname "$d/$g")/cpuset.cpus" > "$d/$g/cpuset.cpus"
        [ -n "$(cat "$d/$g/cpuset.mems")" ] || cat "$(dirname "$d/$g")/cpuset.mems" > "$d/$g/cpuset.mems"
      fi
    done
  done
}

# node_run I NAME CMD...: start CMD in node I's network namespace and system cgroup, in the
# background, logging to logs/NAME.log, pid in run/NAME.pid (the pid is CMD's own: nsenter execs).
node_run() {
  local i=$1 n=$2 s d; shift 2; s=$(node_state "$i")
  (
    for d in $(cg_dirs); do echo "$BASHPID" > "$d/$(node_cgroup "$i")/system/cgroup.procs"; done
    if [ "$i" = 1 ]; then exec "$@"; else exec nsenter --net="/run/netns/sbn$i" "$@"; fi
  ) > "$s/logs/$n.log" 2>&1 < /dev/null &
  echo $! > "$s/run/$n.pid"
}

cg_pids() { local i=$1 d; for d in $(cg_dirs); do
    if [ -d "$d/$(node_cgroup "$i")" ]; then find "$d/$(node_cgroup "$i")" -name cgroup.procs -exec cat {} + 2>/dev/null || true; fi
  done | sort -u; }

kill_all() { # I: every process of node I at once (frozen first, so nothing forks meanwhile)
  local i=$1 fz=/sys/fs/cgroup/freezer/$(node_cgroup "$1") p
  for _ in $(seq 1 50); do
    p=$(cg_pids "$i"); [ -n "$p" ] || return 0
    [ -d "$fz" ] && echo FROZEN > "$fz/freezer.state" 2>/dev/null || true
    kill -9 $p 2>/dev/null || true
    [ -d "$fz" ] && echo THAWED > "$fz/freezer.state" 2>/dev/null || true
    sleep 0.2
  done
  log "node $i: processes still alive: $(cg_pids "$i" | tr '\n' ' ')"; return 1
}

cg_remove() { # I: also the unified (v2) hierarchy, where runc mirrors the pods' cgroups
  local i=$1 d
  for _ in $(seq 1 25); do
    for d in $(cg_dirs) /sys/fs/cgroup/unified; do
      if [ -d "$d/$(node_cgroup "$i")" ]; then find "$d/$(node_cgroup "$i")" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi; done
    [ -z "$(for d in $(cg_dirs) /sys/fs/cgroup/unified; do [ ! -d "$d/$(node_cgroup "$i")" ] || echo x; done)" ] && return 0
    sleep 0.2
  done
  log "node $i: cgroups left"; return 1
}

# --- one node ---------------------------------------------------------------------------------------

up() { # I: network, containerd, images, kubelet; waits until the node is Ready
  local i=$1 s name ip ns link
  s=$(node_state "$i") name=$(node_name "$i") ip=$(node_ip "$i") ns=$(node_netns "$i") link=$(node_link "$i")
  [ -f "$KUBECONFIG" ] || { log "the control plane is not up"; return 1; }
  mkdir -p "$s"/{containerd,cni/net.d,kubelet/pki,kubelet/root,kubelet/podlogs,kubelet/volume-plugins,logs,run,local-path}
  if [ -n "$ns" ]; then
    ip netns add "$ns"
    ip link add "$link" type veth peer name eth0 netns "$ns"
    ip link set "$link" master "$BRIDGE" up
    in_node "$i" ip link set lo up
    in_node "$i" ip addr add "$ip/24" dev eth0
    in_node "$i" ip link set eth0 up
    in_node "$i" ip route add default via "$BRIDGE_IP"
    in_node "$i" sysctl -q -w net.ipv4.ip_forward=1
    shape "$i" "${CLUSTER_RATE:-1gbit}"
  fi
  cg_make "$i"
  write_configs "$i"
  start_node "$i"
  echo "real node $name Ready at $ip"
}

write_configs() { # I: containerd, CNI, kubelet certificate, kubeconfig and configuration
  local i=$1 s name ip P=$RUN/pki
  s=$(node_state "$i") name=$(node_name "$i") ip=$(node_ip "$i")
  local K=$s/kubelet SOCK; SOCK=$(sock "$i")
  cat > "$s/containerd/config.toml" <<EOF
version = 2
root = "$s/containerd/root"
state = "$s/containerd/state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "$ip"
  stream_server_port = "0"
  # root here lacks CAP_SYS_RESOURCE: runc's "write -998 to /proc/self/oom_score_adj" fails with EPERM
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        # the default /run/containerd/runc is shared by every containerd on the host
        Root = "$s/containerd/state/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$s/cni/net.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "$s/containerd/opt"
EOF
  # CNI for non-hostNetwork pods: the node's own bridge and subnet, no masquerade
  cat > "$s/cni/net.d/10-sbpod$i.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "sbpod$i", "plugins": [
  {"type": "bridge", "bridge": "sbpod$i", "isGateway": true, "isDefaultGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$(node_podcidr "$i")"}]], "dataDir": "$s/cni/ipam"}},
  {"type": "loopback"}]}
EOF
  # the kubelet's serving certificate, from the control plane's CA, naming the node's IP
  openssl req -newkey rsa:2048 -nodes -keyout "$K/pki/kubelet.key" -out "$K/pki/kubelet.csr" -subj "/CN=$name" 2>/dev/null
  echo "subjectAltName=IP:$ip,IP:127.0.0.1,DNS:localhost,DNS:$name" > "$K/pki/san.cnf"
  openssl x509 -req -in "$K/pki/kubelet.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 30 \
    -extfile "$K/pki/san.cnf" -out "$K/pki/kubelet.crt" 2>/dev/null
  if [ "$i" = 1 ]; then cp "$KUBECONFIG" "$K/kubeconfig"
  else sed "s#https://127.0.0.1:$API_PORT#https://$BRIDGE_IP:$API_PORT#" "$KUBECONFIG" > "$K/kubeconfig"; fi
  cat > "$K/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: 10250
readOnlyPort: 0
healthzBindAddress: $ip
healthzPort: 10248
tlsCertFile: $K/pki/kubelet.crt
tlsPrivateKeyFile: $K/pki/kubelet.key
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}, x509: {clientCAFile: $P/ca.crt}}
authorization: {mode: AlwaysAllow}   # test only: the apiserver has no kubelet client cert
cgroupDriver: cgroupfs
cgroupRoot: /$(node_cgroup "$i")
containerRuntimeEndpoint: unix://$SOCK
failSwapOn: false
podLogsDir: $K/podlogs
volumePluginDir: $K/volume-plugins
resolvConf: /etc/resolv.conf
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
maxPods: 20
# a lease renewed every 4 s: the controller-manager's short grace (16 s) sees a dead node fast
nodeLeaseDurationSeconds: 16
nodeStatusUpdateFrequency: 4s
EOF
}

# kubelet_log STATE: what a kubelet that did not come up said, without its plugin listing
kubelet_log() { grep -v 'plugins.go' "$1/logs/kubelet.log" | { head -8; echo "[...]"; tail -25; } >&2; }

start_node() { # I: containerd, the images, kubelet (the node's network and cgroups exist)
  local i=$1 s name ip SOCK
  s=$(node_state "$i") name=$(node_name "$i") ip=$(node_ip "$i") SOCK=$(sock "$i")
  node_run "$i" containerd containerd --config "$s/containerd/config.toml"
  waitfor "containerd of $name" ctr -a "$SOCK" version || { tail -20 "$s/logs/containerd.log" >&2; return 1; }
  local img tar
  for img in pause fio tools; do
    tar=$img.tar; [ "$img" != fio ] || tar=$FIO_ARCHIVE
    CTR "$i" images ls -q | grep -q "kreal/$img:" || CTR "$i" images import "$BIN/images/$tar" >/dev/null
  done
  # On the host node --node-ip=127.0.0.1: the kubelet refuses a loopback node IP and then leaves
  # status.addresses alone, so they are set below (the apiserver dials them for exec and logs).
  node_run "$i" kubelet "$BIN/kubelet" --config="$s/kubelet/config.yaml" --kubeconfig="$s/kubelet/kubeconfig" \
    --root-dir="$s/kubelet/root" --hostname-override="$name" --node-ip="$ip" \
    --node-labels=kreal.local/real=true --v=1
  # A kubelet registers in seconds on a quiet machine; one started right after its node was torn
  # down, beside other tests on two busy cores, took over a minute (seen in CI): three allowed.
  WAITFOR_TRIES=360 waitfor "node $name" KC get node "$name" || { kubelet_log "$s"; return 1; }
  if [ "$i" = 1 ]; then
    KC patch node "$name" --subresource=status --type=merge \
      -p "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"},{\"type\":\"Hostname\",\"address\":\"$name\"}]}}" >/dev/null
  fi
  WAITFOR_TRIES=360 waitfor "node $name Ready" node_ready "$name" || { kubelet_log "$s"; return 1; }
}

stop() { # I: the node dies as a machine would: kubelet, containerd, shims, containers, sshd... all SIGKILLed
  local i=$1 s; s=$(node_state "$i")
  kill_all "$i"
  rm -f "$s"/run/*.pid
  unmount_under "$s/kubelet/root"   # a dead machine's mounts are gone with it
  unmount_under "$s/containerd"
}

start() { start_node "$1"; }   # I: after stop: containerd and kubelet again, same state

unmount_under() { { grep -F " $1/" /proc/self/mountinfo || true; } | awk '{print $5}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done; }

down() { # I: pods off the node, kubelet, containers, containerd, network, cgroups, state
  local i=$1 s name; s=$(node_state "$i") name=$(node_name "$i")
  [ -d "$s" ] || return 0
  if [ -f "$s/run/kubelet.pid" ] && kill -0 "$(cat "$s/run/kubelet.pid")" 2>/dev/null && [ -f "$KUBECONFIG" ]; then
    # the kubelet stops each sandbox (CNI teardown, its network namespace removed)
    timeout 60 "$BIN/kubectl" delete pods -A --field-selector "spec.nodeName=$name" --grace-period=1 --wait=true >/dev/null 2>&1 || true
  fi
  stop_pidfile "$s/run/kubelet.pid"
  if [ -S "$(sock "$i")" ]; then   # whatever is left: kill and remove tasks (their shims then exit), containers
    local c
    for c in $(CTR "$i" tasks ls -q 2>/dev/null); do CTR "$i" tasks kill -s SIGKILL "$c" 2>/dev/null || true; done
    sleep 0.5
    for c in $(CTR "$i" tasks ls -q 2>/dev/null); do CTR "$i" tasks rm -f "$c" >/dev/null 2>&1 || true; done
    for c in $(CTR "$i" containers ls -q 2>/dev/null); do CTR "$i" containers rm "$c" >/dev/null 2>&1 || true; done
  fi
  stop_pidfile "$s/run/containerd.pid"
  kill_all "$i" || true
  unmount_under "$s"
  cni_netns_cleanup "$i"
  cg_remove "$i" || true
  if [ "$i" = 1 ]; then ip link del "sbpod$i" 2>/dev/null || true
  else ip netns del "$(node_netns "$i")" 2>/dev/null || true; fi   # its veth, CNI bridge and pod veths with it
  rm -f /var/lib/cni/results/sbpod"$i"-* 2>/dev/null || true
  "$BIN/kubectl" delete node "$name" --wait=false >/dev/null 2>&1 || true
  rm -rf "$s"
}

routes() { # N: every node's pod subnet reachable from every other node (as a flat CNI's host routes)
  local n=$1 i j via
  for j in $(seq 2 "$n"); do owned_route "$(node_podcidr "$j")" "$(node_ip "$j")" "$BRIDGE"; done
  for i in $(seq 2 "$n"); do
    for j in $(seq 1 "$n"); do
      [ "$i" = "$j" ] && continue
      if [ "$j" = 1 ]; then via=$BRIDGE_IP; else via=$(node_ip "$j"); fi
      in_node "$i" ip route replace "$(node_podcidr "$j")" via "$via" dev eth0
    done
  done
}

sshd_up() { # I PUBKEY_FILE [PORT]: an sshd in node I's namespace (own host key), root login with that key
  local i=$1 key=$2 port=${3:-} s ip d
  s=$(node_state "$i") ip=$(node_ip "$i"); d=$s/sshd
  if [ -z "$port" ]; then if [ "$i" = 1 ]; then port=2222; else port=22; fi; fi
  [ -f "$key" ] || { log "no public key file $key"; return 1; }
  mkdir -p "$d" /run/sshd; chmod 0755 /run/sshd
  [ -f "$d/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$d/ssh_host_ed25519_key" -C "$(node_name "$i")"
  cp "$key" "$d/authorized_keys"; chmod 0600 "$d/authorized_keys"
  sshd_config "$d" "$ip" "$port"
  stop_pidfile "$s/run/sshd.pid"
  node_run "$i" sshd "$(command -v sshd)" -D -e -f "$d/sshd_config"
  waitfor "sshd of $(node_name "$i")" in_node "$i" bash -c "exec 3<>/dev/tcp/$ip/$port" || { cat "$s/logs/sshd.log" >&2; return 1; }
  echo "sshd of $(node_name "$i") on $ip:$port, host key $d/ssh_host_ed25519_key.pub"
}

sshd_down() { stop_pidfile "$(node_state "$1")/run/sshd.pid"; }

"$@"
