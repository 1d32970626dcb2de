#!/usr/bin/env bash
# control-plane.sh - a real Kubernetes control plane for integration tests, on 127.0.0.1, no Docker:
# etcd (Debian package) + kube-apiserver, kube-controller-manager, kube-scheduler and kubectl
# built from the k8s.io Go modules, + kwok, which plays the kubelet for fake nodes
# (pods reach Running; there is no container runtime). kwok also serves the kubelet API on
# 127.0.0.1:$KWOK_PORT, so `kubectl exec POD -- CMD` runs CMD as a LOCAL process on this machine
# (kwok Exec/ClusterExec CRs) and `kubectl logs POD` reads a local CRI-format file (Logs/ClusterLogs).
# Each pod gets a private directory $RUN/pods/NS/POD: exec runs there (env POD_NAME, POD_NAMESPACE,
# POD_DIR) and `kubectl logs` reads $RUN/pods/NS/POD/pod.log (lines: "<RFC3339Nano> stdout F <text>").
# Normally driven by test/cluster/cluster.sh; directly:
# Usage: control-plane.sh build | up | nodes N [k=v...] | pvs N [storageclass] | podexec NS POD [UID] | down
#   build  ~7 min the first time, cached after   up  start everything (~8 s)   down  stop it, remove state
# KUBECONFIG for tests: $KAPI_ROOT/run/kubeconfig. The API server listens on 127.0.0.1 only; the
# real nodes reach it at the bridge address through a forwarder (nodes.sh), which its certificate names.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
KAPI_POD_DIRS=${KAPI_POD_DIRS:-1}   # 1: per-pod exec/logs dirs (pods reach Running only once theirs exists); 0: one shared dir
NODE_GRACE=${NODE_GRACE:-16s}       # --node-monitor-grace-period: a silent node is NotReady after this (default 50 s)
SELF=$CLUSTER_DIR/control-plane.sh

build() {
  if [ "$("$BIN/kube-apiserver" --version 2>/dev/null)" = "Kubernetes v$K8S_VERSION" ] && [ -x "$BIN/kwok" ]; then
    echo "binaries cached in $BIN"; kwok_yaml; return; fi
  mkdir -p "$ROOT/src" "$BIN"; cd "$ROOT/src"
  local V=$K8S_VERSION gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@v$V" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  { printf 'module kapibuild\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$V"
    sed -nE 's#^\s*(k8s.io/[a-z0-9-]+) => \./staging/src/.*#\t\1 => \1 v0.'"${V#1.}"'#p' "$gomod"
    printf ')\n'; } > go.mod
  printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver"\n\t_ "k8s.io/kubernetes/cmd/kube-controller-manager"\n\t_ "k8s.io/kubernetes/cmd/kube-scheduler"\n\t_ "k8s.io/kubernetes/cmd/kubectl"\n)\n' > tools.go
  go mod tidy
  local X=k8s.io/component-base/version
  go build -ldflags "-s -w -X $X.gitVersion=v$V -X $X.gitMajor=${V%%.*} -X $X.gitMinor=$(echo "$V" | cut -d. -f2) -X k8s.io/client-go/pkg/version.gitVersion=v$V" \
    -o "$BIN/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
  GOBIN=$BIN go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  kwok_yaml
}

kwok_yaml() { # kwok's stage configs and the CRDs for local exec/logs, from the kwok module source
  [ -f "$BIN/kwok-stages.yaml" ] && [ -f "$BIN/kwok-crds.yaml" ] && return
  local K; K=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION
  [ -d "$K" ] || (cd / && go mod download "sigs.k8s.io/kwok@$KWOK_VERSION")
  for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
           pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
    echo "---"; cat "$K/kustomize/stage/$f.yaml"; done > "$BIN/kwok-stages.yaml"
  for f in execs clusterexecs logs clusterlogs; do cat "$K/kustomize/crd/bases/kwok.x-k8s.io_$f.yaml"; done > "$BIN/kwok-crds.yaml"
}

start() { # name, command...
  local n=$1; shift
  nohup "$@" > "$RUN/logs/$n.log" 2>&1 &
  echo $! > "$RUN/$n.pid"
}

up() {
  mkdir -p "$RUN/pki" "$RUN/logs" "$RUN/etcd"; cd "$RUN/pki"
  openssl genrsa -out sa.key 2048 2>/dev/null; openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 365 -subj /CN=kapi-ca 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver 2>/dev/null
  echo "subjectAltName=IP:127.0.0.1,IP:$BRIDGE_IP,DNS:localhost" > san.cnf   # the nodes dial the bridge address
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 -extfile san.cnf -out apiserver.crt 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout kwok.key -out kwok.csr -subj /CN=kwok-kubelet 2>/dev/null   # kwok's kubelet API
  openssl x509 -req -in kwok.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 -extfile san.cnf -out kwok.crt 2>/dev/null
  echo "$(openssl rand -hex 16),admin,admin,system:masters" > tokens.csv
  cat > "$KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: kapi, cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$RUN/pki/ca.crt"}}]
users: [{name: admin, user: {token: "$(cut -d, -f1 tokens.csv)"}}]
contexts: [{name: kapi, context: {cluster: kapi, user: admin, namespace: default}}]
current-context: kapi
EOF
  start etcd etcd --name kapi --data-dir "$RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT+1))" --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT+1))" \
    --initial-cluster "kapi=http://127.0.0.1:$((ETCD_PORT+1))"
  waitfor etcd curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
  start apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --secure-port="$API_PORT" --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
    --tls-cert-file=apiserver.crt --tls-private-key-file=apiserver.key --client-ca-file=ca.crt \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file=sa.pub --service-account-signing-key-file=sa.key \
    --service-cluster-ip-range=10.96.0.0/16 --token-auth-file=tokens.csv --authorization-mode=RBAC \
    --kubelet-preferred-address-types=InternalIP --kubelet-certificate-authority=ca.crt
  waitfor apiserver api "https://127.0.0.1:$API_PORT/readyz"
  local kc=(--kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" --bind-address=127.0.0.1 --leader-elect=false)
  start controller-manager "$BIN/kube-controller-manager" "${kc[@]}" --secure-port="${CM_PORT:-10257}" \
    --root-ca-file=ca.crt --service-account-private-key-file=sa.key --use-service-account-credentials=false \
    --pvclaimbinder-sync-period=1s --node-monitor-grace-period="$NODE_GRACE" --node-monitor-period=2s
  start scheduler "$BIN/kube-scheduler" "${kc[@]}" --secure-port="${SCHED_PORT:-10259}"
  # kwok's kubelet API (exec, logs) on 127.0.0.1:$KWOK_PORT (HTTPS, cert from our CA; the node-initialize
  # stage sets node InternalIP=--node-ip and daemonEndpoints.kubeletEndpoint.Port=--node-port).
  # --node-lease-duration-seconds: without it kwok renews no node Leases, the node-lifecycle controller
  # marks every node Unknown after ~50 s, and node-initialize re-runs and (kwok template bug when there
  # is no Hostname address, hence --node-name) drops status.addresses -> "no preferred addresses found".
  # exec/logs targets come from the Exec/ClusterExec/Logs/ClusterLogs CRs: defaults for all pods
  # here, a per-pod Exec+Logs (private dir) from `podexec`, which podwatch runs for every new pod.
  waitfor "kwok CRDs" "$BIN/kubectl" apply -f "$BIN/kwok-crds.yaml"
  "$BIN/kubectl" wait --for condition=established --timeout=60s -f "$BIN/kwok-crds.yaml" >/dev/null
  mkdir -p "$RUN/pods/_default"; : > "$RUN/pods/_default/pod.log"
  cat > "$RUN/kwok-defaults.yaml" <<EOF
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata: {name: local}
spec: {execs: [{local: {workDir: "$RUN/pods/_default"}}]}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: local}
spec: {logs: [{logsFile: "$RUN/pods/_default/pod.log"}]}
EOF
  waitfor "default ClusterExec/ClusterLogs" "$BIN/kubectl" apply -f "$RUN/kwok-defaults.yaml"
  if [ "$KAPI_POD_DIRS" = 1 ]; then   # gate pod-ready on the annotation podexec sets once the pod's Exec exists
    awk '/^  name: pod-ready$/ {p=1} p && /^    matchExpressions:$/ {print; print "    - key: '"'"'.metadata.annotations[\"kapi.local/exec-dir\"]'"'"'"; print "      operator: Exists"; p=0; next} {print}' \
      "$BIN/kwok-stages.yaml" > "$RUN/kwok-stages.yaml"
    grep -q kapi.local/exec-dir "$RUN/kwok-stages.yaml"
  else cp "$BIN/kwok-stages.yaml" "$RUN/kwok-stages.yaml"; fi
  start kwok "$BIN/kwok" --kubeconfig="$KUBECONFIG" --config="$RUN/kwok-stages.yaml" --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --server-address="127.0.0.1:$KWOK_PORT" --node-ip=127.0.0.1 --node-name=localhost --node-port="$KWOK_PORT" \
    --node-lease-duration-seconds=20 \
    --tls-cert-file=kwok.crt --tls-private-key-file=kwok.key --enable-crds=Exec,ClusterExec,Logs,ClusterLogs
  waitfor kwok curl -fsS "http://127.0.0.1:$KWOK_PORT/healthz"
  if [ "$KAPI_POD_DIRS" = 1 ]; then start podwatch setsid env KAPI_ROOT="$ROOT" bash "$SELF" podwatch; fi   # own process group, see down
  api -X POST -H 'Content-Type: application/yaml' "https://127.0.0.1:$API_PORT/api/v1/nodes" --data-binary @- >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: kwok-node-0, annotations: {kwok.x-k8s.io/node: fake}, labels: {kubernetes.io/hostname: kwok-node-0, kubernetes.io/os: linux}}
status: {allocatable: {cpu: "32", memory: 256Gi, pods: "110"}, capacity: {cpu: "32", memory: 256Gi, pods: "110"}}
EOF
  waitfor "default serviceaccount" api "https://127.0.0.1:$API_PORT/api/v1/namespaces/default/serviceaccounts/default"
  waitfor "node Ready" sh -c "\"$BIN/kubectl\" get node kwok-node-0 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -q True"
  echo "cluster up: KUBECONFIG=$KUBECONFIG"
}

nodes() { # nodes N [key=value ...]: add fake nodes kwok-node-1..N (kwok makes them Ready), with extra labels
  local n=${1:-3}; shift || true
  local labels="" kv
  for kv in "$@"; do labels="$labels, \"${kv%%=*}\": \"${kv#*=}\""; done
  for i in $(seq 1 "$n"); do "$BIN/kubectl" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: kwok-node-$i, annotations: {kwok.x-k8s.io/node: fake}, labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: arm64$labels}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
EOF
  done
  for i in $(seq 1 "$n"); do
    waitfor "node kwok-node-$i Ready" sh -c "\"$BIN/kubectl\" get node kwok-node-$i -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -q True"
  done
}

pvs() { # pvs N [storageClassName]: static fake PVs so PVCs can bind (there is no provisioner); one PV per PVC
  local sc=${2:-}
  for i in $(seq 1 "${1:-3}"); do "$BIN/kubectl" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: fake-pv-${sc:-none}-$i}
spec: {capacity: {storage: 100Gi}, accessModes: [ReadWriteOnce, ReadWriteMany], storageClassName: "$sc", hostPath: {path: /nonexistent/fake-pv-${sc:-none}-$i}}
EOF
  done
}

podexec() { # podexec NS POD [UID]: private dir $RUN/pods/NS/POD for `kubectl exec` (workDir) and `kubectl logs`
  local ns=$1 pod=$2 uid=${3:-} d=$RUN/pods/$1/$2 meta u="https://127.0.0.1:$API_PORT"
  mkdir -p "$d"; [ -f "$d/pod.log" ] || : > "$d/pod.log"
  meta="name: \"$pod\", namespace: \"$ns\""   # with UID: owned by the pod, garbage-collected with it
  if [ -n "$uid" ]; then meta="$meta, ownerReferences: [{apiVersion: v1, kind: Pod, name: \"$pod\", uid: \"$uid\"}]"; fi
  # curl + server-side apply (idempotent), not kubectl: ~10 ms per call instead of ~150 ms of CPU
  api -X PATCH -H 'Content-Type: application/apply-patch+yaml' --data-binary @- >/dev/null \
    "$u/apis/kwok.x-k8s.io/v1alpha1/namespaces/$ns/execs/$pod?fieldManager=kapi&force=true" <<EOF
{apiVersion: kwok.x-k8s.io/v1alpha1, kind: Exec, metadata: {$meta},
 spec: {execs: [{local: {workDir: "$d", envs: [{name: POD_NAME, value: "$pod"}, {name: POD_NAMESPACE, value: "$ns"}, {name: POD_DIR, value: "$d"}]}}]}}
EOF
  api -X PATCH -H 'Content-Type: application/apply-patch+yaml' --data-binary @- >/dev/null \
    "$u/apis/kwok.x-k8s.io/v1alpha1/namespaces/$ns/logs/$pod?fieldManager=kapi&force=true" <<EOF
{apiVersion: kwok.x-k8s.io/v1alpha1, kind: Logs, metadata: {$meta}, spec: {logs: [{logsFile: "$d/pod.log"}]}}
EOF
  api -X PATCH -H 'Content-Type: application/merge-patch+json' "$u/api/v1/namespaces/$ns/pods/$pod" >/dev/null 2>&1 \
    --data-binary "{\"metadata\":{\"annotations\":{\"kapi.local/exec-dir\":\"$d\"}}}" || true   # lets kwok make it Running
}

podwatch() { # (background, started by up) run podexec for every pod the first time it is seen
  echo $$ > "$RUN/podwatch.pid"   # the process-group leader (setsid may have forked)
  while :; do
    "$BIN/kubectl" get pods -A --watch --no-headers -o 'custom-columns=NS:.metadata.namespace,N:.metadata.name,U:.metadata.uid' |
      { declare -A seen; while read -r ns pod uid; do
          [ -n "${seen[$uid]:-}" ] && continue; seen[$uid]=1
          { podexec "$ns" "$pod" "$uid" || echo "podexec $ns/$pod failed" >&2; } &
        done; } || true
    sleep 1
  done
}

down() { # SIGTERM everything we started (by pid file), wait, remove state
  local pids="" n p
  if [ -f "$RUN/podwatch.pid" ]; then kill -- "-$(cat "$RUN/podwatch.pid")" 2>/dev/null || true; fi   # its process group
  for n in podwatch kwok scheduler controller-manager apiserver etcd; do
    if [ -f "$RUN/$n.pid" ]; then pids="$pids $(cat "$RUN/$n.pid")"; fi; done
  if [ -n "$pids" ]; then kill $pids 2>/dev/null || true; fi
  for p in $pids; do for _ in $(seq 1 50); do alive "$p" || break; sleep 0.2; done; done
  for p in $pids; do kill -9 "$p" 2>/dev/null || true; done   # the API server may outlive 10 s of SIGTERM
  for n in podwatch kwok scheduler controller-manager apiserver etcd; do rm -f "$RUN/$n.pid"; done
  rm -rf "$RUN/etcd" "$RUN/pki" "$RUN/pods" "$RUN/logs" "$RUN/kubeconfig" "$RUN"/kwok-*.yaml
}

"$@"
