# Sourced by the trial scripts: two "machines" as network namespaces on a bridge,
# made and removed by the caller, with addresses from a free 10.215.N.0/24.
#
#   netns_cluster_up      makes them; sets NETNS_SUBNET (10.215.N), NETNS_NAME and
#                         NETNS_TOKEN (a job token); returns 77 (ctest's skip code)
#                         where namespaces cannot be made (not root, no iproute2)
#   netns_ns I            machine I's namespace (its address: $NETNS_SUBNET.(I+1))
#   netns_link I          machine I's interface inside its namespace
#   netns_cluster_down    kills what runs in them and removes everything
NETNS_NAME=""

netns_ns() { echo "${NETNS_NAME}n$1"; }
netns_link() { echo "${NETNS_NAME}c$1"; }

netns_cluster_up() {
  [ "$(id -u)" = 0 ] || { echo "skipped: network namespaces need root" >&2; return 77; }
  command -v ip >/dev/null || { echo "skipped: no ip command (iproute2)" >&2; return 77; }
  local n i
  NETNS_SUBNET=""
  for n in $(seq 0 63); do
    if ! ip -4 addr show | grep -q "inet 10\.215\.$n\." && ! ip -4 route show | grep -q "^10\.215\.$n\."; then
      NETNS_SUBNET=10.215.$n
      break
    fi
  done
  [ -n "$NETNS_SUBNET" ] || { echo "every 10.215.N.0/24 is in use" >&2; return 1; }
  NETNS_NAME=cst$$
  ip netns add "$(netns_ns 0)" || { echo "skipped: cannot create network namespaces" >&2; NETNS_NAME=""; return 77; }
  ip netns add "$(netns_ns 1)"
  ip link add "${NETNS_NAME}br" type bridge
  ip link set "${NETNS_NAME}br" up
  for i in 0 1; do
    ip link add "${NETNS_NAME}h$i" type veth peer name "$(netns_link "$i")" netns "$(netns_ns "$i")"
    ip link set "${NETNS_NAME}h$i" master "${NETNS_NAME}br" up
    ip -n "$(netns_ns "$i")" addr add "$NETNS_SUBNET.$((i + 1))/24" dev "$(netns_link "$i")"
    ip -n "$(netns_ns "$i")" link set lo up
    ip -n "$(netns_ns "$i")" link set "$(netns_link "$i")" up
  done
  NETNS_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
}

netns_cluster_down() {
  [ -n "$NETNS_NAME" ] || return 0
  local i pid
  for i in 0 1; do
    for pid in $(ip netns pids "$(netns_ns "$i")" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$(netns_ns "$i")" 2>/dev/null || true
    ip link del "${NETNS_NAME}h$i" 2>/dev/null || true
  done
  ip link del "${NETNS_NAME}br" 2>/dev/null || true
  NETNS_NAME=""
}
