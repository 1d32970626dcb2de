#!/usr/bin/env bash
# storage.sh - the cluster's storage, all real processes:
#  - StorageClass local-path: rancher/local-path-provisioner v0.0.30 (the k3s default), built from
#    the Go module proxy, run as a host process; its helper pods (localhost/kreal/tools:1) make and
#    remove each volume's directory on the node the volume belongs to, under that node's own
#    directory (node-local volumes, pinned with node affinity, WaitForFirstConsumer as in k3s).
#  - a network filesystem served from the last real node's namespace (socat + sftp-server on
#    its address, port $NETFS_PORT) and mounted with sshfs from every other real node's namespace,
#    so its traffic crosses the shaped links; StorageClass netfs: a second local-path-provisioner
#    instance over one of those mounts as a shared filesystem (volumes usable on any node).
# Normally driven by test/cluster/cluster.sh; directly: storage.sh build | up N | down N | netfs-up N | netfs-down N
set -euo pipefail
. "$(dirname "$0")/lib.sh"
NS=local-path-storage SA=local-path-provisioner-service-account

build() { # local-path-provisioner: go.mod has no replace directives, but the module's vendor/ is partial
  local v=$BIN/local-path-provisioner
  [ -x "$v" ] && [ "$(cat "$v.version" 2>/dev/null)" = "$LPP_VERSION" ] && { echo "local-path-provisioner cached in $BIN"; return; }
  local dir src=$ROOT/src/local-path-provisioner@$LPP_VERSION
  dir=$(cd / && go mod download -json "github.com/rancher/local-path-provisioner@$LPP_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  rm -rf "$src"; mkdir -p "$ROOT/src" "$BIN"; cp -r "$dir" "$src"; chmod -R u+w "$src"; rm -rf "$src/vendor"
  (cd "$src" && go build -mod=mod -ldflags "-s -w -X main.VERSION=$LPP_VERSION" -o "$v" .)
  echo "$LPP_VERSION" > "$v.version"
}

# netfs layout: the server's export, every client's mount point
netfs_server() { echo "$1"; }                       # N -> the serving node: the last one
netfs_export() { echo "$RUN/netfs/export"; }
netfs_mount() { echo "$RUN/netfs/mnt/$(node_name "$1")"; }
netfs_class_node() { if [ "$1" -ge 3 ]; then echo 2; else echo 1; fi; }   # whose mount backs the class

netfs_up() { # N
  local n=$1 srv i ip
  [ "$n" -ge 2 ] || return 0
  srv=$(netfs_server "$n") ip=$(node_ip "$(netfs_server "$n")")
  mkdir -p "$(netfs_export)"
  netfs_serve "$n"
  for i in $(seq 1 "$n"); do [ "$i" = "$srv" ] || netfs_mount_node "$n" "$i"; done
}

netfs_serve() { # N: (again after the server node was stopped and started)
  local srv; srv=$(netfs_server "$1")
  bash "$CLUSTER_DIR/nodes.sh" node_run "$srv" netfs-server socat "TCP-LISTEN:$NETFS_PORT,bind=$(node_ip "$srv"),reuseaddr,fork" \
    "EXEC:/usr/lib/openssh/sftp-server -e"
  waitfor "netfs server" in_node "$srv" bash -c "exec 3<>/dev/tcp/$(node_ip "$srv")/$NETFS_PORT"
}

netfs_mount_node() { # N I: node I mounts the export over its own link (sshfs runs in its namespace and cgroup)
  local n=$1 i=$2 m; m=$(netfs_mount "$i")
  unmount "$m"   # a mount whose sshfs died with its node answers "Transport endpoint is not connected"
  mkdir -p "$m"
  bash "$CLUSTER_DIR/nodes.sh" node_run "$i" netfs-sshfs sshfs -f -o "directport=$NETFS_PORT,allow_other,idmap=none" \
    "$(node_ip "$(netfs_server "$n")"):$(netfs_export)" "$m"
  waitfor "netfs mount of $(node_name "$i")" mountpoint -q "$m"
}

unmount() { if grep -qF " $1 " /proc/self/mountinfo; then fusermount -u -z "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || true; fi; }

netfs_down() {
  local m
  for m in "$RUN"/netfs/mnt/*; do
    unmount "$m"
  done
  rm -rf "$RUN/netfs"
}

# provisioner NAME PROVISIONER CONFIGJSON: one local-path-provisioner instance, its ConfigMap
provisioner() {
  local name=$1 prov=$2 config=$3 d=$RUN/storage/$1
  mkdir -p "$d"
  echo "$config" > "$d/config.json"
  cat > "$d/helperPod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: helper-pod}
spec:
  # a netfs volume's delete helper pod names no node: never a kwok node, where it would run forever
  # (the provisioner gives up after 120 s and retries: a deleted claim's PV stays Released)
  nodeSelector: {kreal.local/real: "true"}
  priorityClassName: system-node-critical
  tolerations: [{key: node.kubernetes.io/disk-pressure, operator: Exists, effect: NoSchedule}]
  containers: [{name: helper-pod, image: "$TOOLS_IMAGE", imagePullPolicy: Never}]
EOF
  KC -n "$NS" create configmap "$name" --from-file=config.json="$d/config.json" --from-file=helperPod.yaml="$d/helperPod.yaml" \
    --from-literal=setup="$(printf '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n')" \
    --from-literal=teardown="$(printf '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n')" \
    --dry-run=client -o yaml | KC apply -f - >/dev/null
  nohup "$BIN/local-path-provisioner" --debug start --config "$d/config.json" --kubeconfig "$KUBECONFIG" \
    --namespace "$NS" --helper-image "$TOOLS_IMAGE" --configmap-name "$name" --service-account-name "$SA" \
    --provisioner-name "$prov" --helper-pod-file "$d/helperPod.yaml" > "$RUN/logs/$name.log" 2>&1 &
  echo $! > "$RUN/$name.pid"
}

up() { # N: both provisioners and classes (netfs only with 2 or more real nodes)
  local n=$1 i paths=""
  mkdir -p "$RUN/storage" "$RUN/local-path/other"
  KC create namespace "$NS" --dry-run=client -o yaml | KC apply -f - >/dev/null
  KC -n "$NS" create serviceaccount "$SA" --dry-run=client -o yaml | KC apply -f - >/dev/null
  for i in $(seq 1 "$n"); do
    paths="$paths,{\"node\":\"$(node_name "$i")\",\"paths\":[\"$(node_state "$i")/local-path\"]}"
  done
  provisioner local-path-config rancher.io/local-path \
    "{\"nodePathMap\":[{\"node\":\"DEFAULT_PATH_FOR_NON_LISTED_NODES\",\"paths\":[\"$RUN/local-path/other\"]}$paths]}"
  KC apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-path}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
EOF
  [ "$n" -ge 2 ] || return 0
  netfs_up "$n"
  provisioner netfs-config storbench.local/netfs \
    "{\"sharedFileSystemPath\":\"$(netfs_mount "$(netfs_class_node "$n")")\"}"
  KC apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: netfs}
provisioner: storbench.local/netfs
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
EOF
}

down() { # volumes are directories under run/, removed with it
  stop_pidfile "$RUN/local-path-config.pid"
  stop_pidfile "$RUN/netfs-config.pid"
  netfs_down
  rm -rf "$RUN/storage" "$RUN/local-path"
}

"$@"
