#!/usr/bin/env bash
# Measures the running test cluster (test/cluster/cluster.sh up): each real node's idle CPU and
# memory (its cgroups sbnode<i>: containerd, kubelet, shims; no pods) and the shaped link
# between kreal-node-2 and kreal-node-3: iperf3 and fio's TCP engine (writer's figure) between
# hostNetwork pods, REPS times each, alternately. Prints Markdown.
# Usage: bench/cluster/run.sh (brings a cluster up and down around this), or this with a cluster up.
# Environment: IDLE_SECONDS (60), LINK_SECONDS (10), REPS (3).
set -euo pipefail
KAPI_ROOT=${KAPI_ROOT:-$HOME/.cache/storbench-kapi}
set -a; . "$KAPI_ROOT/run/cluster.env"; set +a
K() { "$KAPI_ROOT/bin/kubectl" "$@"; }
IDLE=${IDLE_SECONDS:-60} SECS=${LINK_SECONDS:-10} REPS=${REPS:-3}
echo "machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo
echo "### Idle real nodes ($IDLE s, no pods)"
echo
echo "| node | CPU (% of one core) | processes' RSS (MiB) | cgroup anon RSS (MiB) | cgroup incl. page cache (MiB) |"
echo "|---|---|---|---|---|"
declare -A c0
for n in $NODES; do v=$(echo "$n" | tr - _)_CGROUP; c0[$n]=$(cat "/sys/fs/cgroup/cpuacct/${!v}/cpuacct.usage"); done
t0=$(date +%s%N); sleep "$IDLE"; t1=$(date +%s%N)
for n in $NODES; do
  v=$(echo "$n" | tr - _)_CGROUP; cg=${!v}
  c1=$(cat "/sys/fs/cgroup/cpuacct/$cg/cpuacct.usage")
  rss=$(awk '$1 == "total_rss" {print $2}' "/sys/fs/cgroup/memory/$cg/memory.stat")
  all=$(cat "/sys/fs/cgroup/memory/$cg/memory.usage_in_bytes")
  # VmRSS counts the binaries' mapped pages too (kubelet's is 80 MB), which the cgroup's anon RSS does not
  vm=$(find "/sys/fs/cgroup/memory/$cg" -name cgroup.procs -exec cat {} + | while read -r p; do
    awk '$1 == "VmRSS:" {print $2}' "/proc/$p/status" 2>/dev/null || true; done | awk '{s += $1} END {print s * 1024}')
  awk -v n="$n" -v c=$((c1 - c0[$n])) -v t=$((t1 - t0)) -v r="$rss" -v a="$all" -v v="$vm" \
    'BEGIN {printf "| %s | %.2f | %.0f | %.0f | %.0f |\n", n, 100 * c / t, v / 1048576, r / 1048576, a / 1048576}'
done
echo
ip3=$kreal_node_3_IP
K create namespace sb-bench-link >/dev/null
trap 'K delete namespace sb-bench-link --wait=false >/dev/null 2>&1 || true' EXIT
K -n sb-bench-link apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: iperf3-server}
spec: {nodeName: kreal-node-3, hostNetwork: true, terminationGracePeriodSeconds: 0, containers: [{name: m, image: "$TOOLS_IMAGE", imagePullPolicy: Never, command: [iperf3, -s, -B, "$ip3"]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: fio-server}
spec: {nodeName: kreal-node-3, hostNetwork: true, terminationGracePeriodSeconds: 0, containers: [{name: m, image: "$REAL_IMAGE", imagePullPolicy: Never,
  command: [sh, -c, "while :; do fio --name=rx --ioengine=net --protocol=tcp --listen --port=8765 --rw=read --bs=4k --size=100g >/dev/null 2>&1 || sleep 0.2; done"]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: iperf3-client}
spec: {nodeName: kreal-node-2, hostNetwork: true, terminationGracePeriodSeconds: 0, containers: [{name: m, image: "$TOOLS_IMAGE", imagePullPolicy: Never}]}
---
apiVersion: v1
kind: Pod
metadata: {name: fio-client}
spec: {nodeName: kreal-node-2, hostNetwork: true, terminationGracePeriodSeconds: 0, containers: [{name: m, image: "$REAL_IMAGE", imagePullPolicy: Never}]}
YAML
K -n sb-bench-link wait --for=condition=Ready pod --all --timeout=120s >/dev/null
sleep 2
echo "### Shaped link kreal-node-2 -> kreal-node-3 ($RATE tbf on both ends of both ports; $SECS s runs)"
echo
echo "| run | iperf3 (Mbit/s) | fio net, writer (Mbit/s) | fio / iperf3 |"
echo "|---|---|---|---|"
for r in $(seq 1 "$REPS"); do
  ip=$(K -n sb-bench-link exec iperf3-client -- iperf3 -c "$ip3" -t "$SECS" -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])')
  fb=$(K -n sb-bench-link exec fio-client -- fio --name=tx --ioengine=net --protocol=tcp --hostname="$ip3" --port=8765 --rw=write \
    --bs=1m --size=100g --time_based --runtime="${SECS}s" --output-format=json | python3 -c 'import json,sys; t=sys.stdin.read(); print(json.loads(t[t.index("{"):])["jobs"][0]["write"]["bw_bytes"]*8)')
  awk -v r="$r" -v i="$ip" -v f="$fb" 'BEGIN {printf "| %d | %.0f | %.0f | %.3f |\n", r, i / 1e6, f / 1e6, f / i}'
done
echo
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
