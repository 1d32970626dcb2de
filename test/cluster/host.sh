# host.sh - what the test cluster may touch on this machine, and what must not be in its way.
# Sourced (after lib.sh) by cluster.sh and nodes.sh, never run.
#
# The cluster shares the host with whatever else runs there, so:
# - before `up` changes anything, host_in_the_way names what it would replace or collide with (a
#   running Docker, another kubelet or k3s, the ports it listens on, its bridge, namespaces,
#   links and pod subnets taken by something else), and `up` refuses;
# - before `install`, apt-get is asked (simulated) what it would remove: nothing may go;
# - what `up` creates in shared tables is recorded as it is created (OWNED: its routes, its
#   bridge), and what was there before is snapshotted once per cluster (BASELINE: the CNI
#   network namespaces, the KUBE-* chains and their rules): `down` removes only what OWNED names
#   and what is not in the snapshot, and check-clean reports only what is not in the snapshot.
OWNED=$RUN/owned                 # one "route DEST via GW dev DEV" or "link NAME" a line
BASELINE=$ROOT/host-baseline     # kept after down, for check-clean
KUBE_CHAINS="filter:KUBE-FIREWALL filter:KUBE-KUBELET-CANARY nat:KUBE-KUBELET-CANARY mangle:KUBE-KUBELET-CANARY mangle:KUBE-IPTABLES-HINT"

own() { mkdir -p "$RUN"; echo "$*" >> "$OWNED"; }   # own KIND WHAT...: record something just created
owned() { [ -f "$OWNED" ] && grep -qxF "$*" "$OWNED"; }

# owned_route DEST GW DEV: a host route, recorded; one that exists already and is not ours is
# refused by host_in_the_way before up, so `replace` never replaces anyone else's.
owned_route() { ip route replace "$1" via "$2" dev "$3"; owned route "$1" via "$2" dev "$3" || own route "$1" via "$2" dev "$3"; }

# drop_owned_routes: every route OWNED names, and only those.
drop_owned_routes() {
  [ -f "$OWNED" ] || return 0
  local k r; while read -r k r; do
    if [ "$k" = route ]; then ip route del $r 2>/dev/null || true; fi
  done < "$OWNED"   # (an `a && b` last in the loop would make a file without routes fail set -e)
}

# snapshot_host: what exists before the cluster makes anything (once per cluster, from host_up).
snapshot_host() {
  local t
  ls -1 /run/netns 2>/dev/null | grep '^cni-' > "$BASELINE/netns" || true
  ip -4 route show | awk '{print $1}' > "$BASELINE/routes"
  for t in iptables ip6tables; do   # chains as ":NAME", rules as iptables-save prints them
    $t-save 2>/dev/null | grep -E '^(\*|:KUBE-|-A [A-Z-]+ .*KUBE-|-A KUBE-)' | awk '/^:/ { print $1; next } { print }' > "$BASELINE/$t" || true
  done
}

# preexisting_netns NAME: a CNI namespace that was there before the cluster (never ours).
preexisting_netns() { [ -f "$BASELINE/netns" ] && grep -qxF "$1" "$BASELINE/netns"; }

# rules_in TOOL TABLE: "-A ..." lines of TABLE as TOOL-save prints them.
rules_in() { $1-save -t "$2" 2>/dev/null | grep -E '^(:|-A )' || true; }
base_has() { [ -f "$BASELINE/$1" ] && awk -v t="*$2" '/^\*/ { cur = $0; next } cur == t' "$BASELINE/$1" | grep -qxF -- "$3"; }

# drop_kube_chains: the kubelet's chains in the host's namespace (node 1 runs there). A chain
# that was there before keeps what it had: only the rules added since go; a new chain goes whole.
drop_kube_chains() {
  local t ch table name line
  for t in iptables ip6tables; do
    command -v "$t" >/dev/null 2>&1 || continue
    for ch in INPUT OUTPUT; do   # the jumps to KUBE-FIREWALL, unless they were there before
      base_has "$t" filter "-A $ch -j KUBE-FIREWALL" || $t -D "$ch" -j KUBE-FIREWALL 2>/dev/null || true
    done
    for ch in $KUBE_CHAINS; do
      table=${ch%%:*} name=${ch#*:}
      if base_has "$t" "$table" ":$name"; then
        rules_in "$t" "$table" | grep -F -- "-A $name " | while read -r line; do
          base_has "$t" "$table" "$line" || eval "$t -t $table -D ${line#-A }" 2>/dev/null || true
        done
      else
        $t -t "$table" -F "$name" 2>/dev/null || true; $t -t "$table" -X "$name" 2>/dev/null || true
      fi
    done
  done
}

# new_kube_chains TOOL: KUBE-* chains that are not in the snapshot ("table:chain" a line).
new_kube_chains() {
  $1-save 2>/dev/null | awk '/^\*/ { t = substr($0, 2) } /^:KUBE-/ { split($1, a, ":"); print t ":" a[2] }' | while read -r x; do
    base_has "$1" "${x%%:*}" ":${x#*:}" || echo "$x"; done
}

# overlaps A/N B/M: the two IPv4 networks share an address.
overlaps() { python3 -c 'import ipaddress, sys; a, b = (ipaddress.ip_network(x, strict=False) for x in sys.argv[1:]); sys.exit(0 if a.overlaps(b) else 1)' "$1" "$2"; }

# host_in_the_way N: one line per thing that would be replaced or collide if a cluster of N real
# nodes came up now; status 1 when there is any. Reads only.
host_in_the_way() {
  local n=$1 bad=0 p x i nets port
  say() { echo "$*"; bad=1; }
  for p in $(pgrep -x dockerd); do say "Docker is running (dockerd, pid $p): its containerd, its iptables FORWARD policy and its bridges share what the cluster's nodes use; stop it (systemctl stop docker docker.socket) or run the tests elsewhere"; done
  for p in $(for x in kubelet k3s k3s-server k3s-agent k0s kubelite; do pgrep -x "$x"; done); do
    x=$(readlink "/proc/$p/exe" 2>/dev/null || true)
    case $x in "$BIN"/*) ;; *) say "another Kubernetes node runs here ($(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-80), pid $p): its kubelet's ports, cgroups and KUBE-* chains are the ones the cluster's host node uses" ;; esac
  done
  for port in "$ETCD_PORT:etcd" "$((ETCD_PORT + 1)):etcd peers" "$API_PORT:the API server" "${CM_PORT:-10257}:the controller-manager" \
              "${SCHED_PORT:-10259}:the scheduler" "$KWOK_PORT:kwok" "10250:the host node's kubelet" "10248:the host node's kubelet health"; do
    x=$(ss -Hltnp "sport = :${port%%:*}" 2>/dev/null | awk '{print $4, $6}' | head -1)
    [ -z "$x" ] || say "port ${port%%:*} (${port#*:}) is taken: $x"
  done
  if [ "$n" -ge 2 ] && ip link show "$BRIDGE" >/dev/null 2>&1 && ! owned link "$BRIDGE"; then say "a link named $BRIDGE exists: the cluster would take it as its bridge and delete it"; fi
  for i in $(seq 1 "$n"); do
    ! ip link show "sbpod$i" >/dev/null 2>&1 || say "a link named sbpod$i exists: node $i's pod bridge would take it over"
    [ "$i" = 1 ] && continue
    [ ! -e "/run/netns/$(node_netns "$i")" ] || say "a network namespace named $(node_netns "$i") exists: node $i would be made in it and deleted with it"
    ! ip link show "$(node_link "$i")" >/dev/null 2>&1 || say "a link named $(node_link "$i") exists: node $i's veth would collide with it"
  done
  nets=""; for i in $(seq 1 "$n"); do nets="$nets $(node_podcidr "$i")"; done
  [ "$n" -lt 2 ] || nets="$nets $BRIDGE_NET.0/24"
  while read -r x; do
    [ -n "$x" ] && [ "$x" != default ] || continue
    for p in $nets; do
      if overlaps "$x" "$p"; then say "route $(ip -4 route show "$x" | head -1 | tr -s " " | sed "s/ $//") overlaps the cluster's network $p: its routes would take that traffic"; break; fi
    done
  done < <(ip -4 route show | awk '{print $1}' | grep -E '^[0-9]')
  return "$bad"
}

# apt_would_remove PACKAGE...: the packages installing these would remove (apt-get -s), one a line.
apt_would_remove() { apt-get -s install --no-install-recommends "$@" 2>/dev/null | awk '$1 == "Remv" {print $2}'; }
