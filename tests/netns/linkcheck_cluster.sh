# Network-namespace clusters for cohort-linkcheck's tests; sourced, not run.
#
#   nodes_cluster N R    N "machines" (namespaces ${ID}n0..), R ranks each, one
#                        veth each to a bridge in a switch namespace; addresses
#                        $NODE_NET.(i+1). Ranks of a machine talk over shm, machines
#                        over tcp.
#   device_cluster       2 servers x 2 devices, each device (rank) a namespace of
#                        its own (${ID}r0..r3) as an Ascend device has its own NIC:
#                        a management veth to the switch ($MGMT_NET.(r+1), the job
#                        store) and one point-to-point veth per rank of the other
#                        server (${ID}wIJ in rank I's namespace) carrying the
#                        device address $DEV_NET.(r+1); so each tcp link has a veth
#                        of its own (throttle ${ID}w03: link 0-3 and nothing else).
#                        A server's ranks share COHORT_HOST_ID, so they use shm.
#   run_check NAME PORT TABLE ARGS...   one check, every rank at once (see below)
#   cluster_cleanup                     kills what the checks left, removes it all
#   cluster_own                         cluster_cleanup on exit, with PIDS and WORK
#
# The "machines" share this box's processors, and the check knows it (one boot
# id): it probes them as one machine. The caller sets ID (unique, <= 8
# characters), WORK (a directory) and LC (the cohort-linkcheck binary), and traps
# EXIT to cluster_cleanup.

NODE_NET=10.218.0
MGMT_NET=10.216.0
DEV_NET=10.217.0
NAMESPACES=()
CHECK_PIDS=()

cluster_cleanup() {
  local pid ns
  for pid in "${CHECK_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for ns in "${NAMESPACES[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  NAMESPACES=()
}

# For a test whose own processes (PIDS) and files (WORK) go with the cluster:
# cluster_own makes the exit remove all three (and INT or TERM exit 130).
PIDS=()
cluster_exit() {
  local pid
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  cluster_cleanup
  rm -rf "$WORK"
}
cluster_own() {
  trap cluster_exit EXIT
  trap 'exit 130' INT TERM
}

new_ns() {
  ip netns add "$1" || return 1
  NAMESPACES+=("$1")
  ip -n "$1" link set lo up
}

switch_ns() {  # once: both clusters hang on one bridge (their subnets differ)
  [ -n "$(ip netns list | grep -E "^${ID}sw( |$)")" ] && return 0
  new_ns "${ID}sw" || return 1
  ip -n "${ID}sw" link add "${ID}br" type bridge || return 1
  ip -n "${ID}sw" link set "${ID}br" up
}

# A veth from namespace $1 (name $2, address $3/24) to the switch's bridge.
to_switch() {
  ip link add "$2" netns "$1" type veth peer name "$2s" netns "${ID}sw" || return 1
  ip -n "${ID}sw" link set "$2s" master "${ID}br" up || return 1
  ip -n "$1" addr add "$3/24" dev "$2" || return 1
  ip -n "$1" link set "$2" up
}

# RANK_NS[r] and RANK_ENV[r] (env assignments) say where and how rank r runs.
RANK_NS=()
RANK_ENV=()

nodes_cluster() {
  local n=$1 per=$2 i r=0
  switch_ns || return 1
  for ((i = 0; i < n; i++)); do
    new_ns "${ID}n$i" || return 1
    to_switch "${ID}n$i" "${ID}e$i" "$NODE_NET.$((i + 1))" || return 1
    for ((j = 0; j < per; j++)); do
      RANK_NS[r]=${ID}n$i
      RANK_ENV[r]=""
      r=$((r + 1))
    done
  done
}

device_cluster() {
  local r i j
  switch_ns || return 1
  for r in 0 1 2 3; do
    new_ns "${ID}r$r" || return 1
    to_switch "${ID}r$r" "${ID}m$r" "$MGMT_NET.$((r + 1))" || return 1
    RANK_NS[r]=${ID}r$r
    RANK_ENV[r]="COHORT_IF_IP=$DEV_NET.$((r + 1)) COHORT_HOST_ID=$ID-server$((r / 2))"
  done
  for i in 0 1; do
    for j in 2 3; do
      ip link add "${ID}w$i$j" netns "${ID}r$i" type veth peer name "${ID}w$j$i" \
        netns "${ID}r$j" || return 1
      ip -n "${ID}r$i" addr add "$DEV_NET.$((i + 1))/32" peer "$DEV_NET.$((j + 1))/32" \
        dev "${ID}w$i$j" || return 1
      ip -n "${ID}r$j" addr add "$DEV_NET.$((j + 1))/32" peer "$DEV_NET.$((i + 1))/32" \
        dev "${ID}w$j$i" || return 1
      ip -n "${ID}r$i" link set "${ID}w$i$j" up || return 1
      ip -n "${ID}r$j" link set "${ID}w$j$i" up || return 1
    done
  done
}

# A rank table: one server per argument "ID:HOST_IP:DEVICE_IP,DEVICE_IP,..." (no
# device addresses: "ID:HOST_IP:-,-").
cluster_table() {
  local out=$1 rank=0 first=1 server id host devs d
  shift
  {
    echo "{\"status\": \"completed\", \"version\": \"1.0\", \"server_count\": \"$#\", \"server_list\": ["
    for server in "$@"; do
      IFS=: read -r id host devs <<<"$server"
      [ $first = 1 ] || echo ","
      first=0
      echo "{\"server_id\": \"$id\", \"host_ip\": \"$host\", \"device\": ["
      local n=0
      for d in ${devs//,/ }; do
        [ $n = 0 ] || echo ","
        if [ "$d" = - ]; then
          echo "{\"device_id\": \"$n\", \"rank_id\": \"$rank\"}"
        else
          echo "{\"device_id\": \"$n\", \"device_ip\": \"$d\", \"rank_id\": \"$rank\"}"
        fi
        n=$((n + 1))
        rank=$((rank + 1))
      done
      echo "]}"
    done
    echo "]}"
  } >"$out"
}

# run_check NAME PORT TABLE ARGS...: rank r of the table in RANK_NS[r] (or in this
# namespace when RANK_NS is empty); the report goes to
# $WORK/NAME.json, rank r's output to $WORK/NAME.rank$r.log; CODES[r] is its exit
# status and ELAPSED the seconds the slowest rank took. STOP_RANK=r STOP_AFTER=S
# stops rank r with SIGSTOP S seconds after the start (and kills it at the end).
run_check() {
  local name=$1 port=$2 table=$3 r size
  local pids=()
  shift 3
  size=$(grep -o '"rank_id"' "$table" | wc -l)
  local t0
  t0=$(date +%s.%N)
  for ((r = 0; r < size; r++)); do
    local where=()
    [ -n "${RANK_NS[r]:-}" ] && where=(ip netns exec "${RANK_NS[r]}")
    # shellcheck disable=SC2086  # RANK_ENV holds assignments, split on purpose
    "${where[@]}" env -u COHORT_IF_IP -u COHORT_SOCKET_IFNAME -u COHORT_HOST_ID \
      -u COHORT_TRANSPORT COHORT_IF_BASE_PORT="$port" COHORT_JOB_TOKEN="$ID-$name" \
      ${RANK_ENV[r]:-} "$LC" --ranktable "$table" --rank "$r" --json "$WORK/$name.json" "$@" \
      >"$WORK/$name.rank$r.log" 2>&1 &
    pids+=($!)
    CHECK_PIDS+=($!)
  done
  if [ -n "${STOP_RANK:-}" ]; then
    sleep "${STOP_AFTER:-1}"
    kill -STOP "${pids[$STOP_RANK]}" 2>/dev/null || true
  fi
  CODES=()
  for ((r = 0; r < size; r++)); do
    if [ -n "${STOP_RANK:-}" ] && [ "$r" = "$STOP_RANK" ]; then continue; fi
    if wait "${pids[$r]}"; then CODES[r]=0; else CODES[r]=$?; fi
  done
  ELAPSED=$(echo "$(date +%s.%N) - $t0" | bc)
  if [ -n "${STOP_RANK:-}" ]; then
    kill -9 "${pids[$STOP_RANK]}" 2>/dev/null || true
    wait "${pids[$STOP_RANK]}" 2>/dev/null || true
    CODES[STOP_RANK]=stopped
  fi
}

# The JSON line of link A-B in report NAME.
link_line() { grep -E "^\{\"a\":$2,.*\"b\":$3," "$WORK/$1.json" || true; }
# The flagged links of report NAME, "A-B status" per line.
flagged() {
  grep -E '^\{"a":' "$WORK/$1.json" 2>/dev/null | grep -v '"status":"ok"' |
    sed -E 's/^\{"a":([0-9]+),.*"b":([0-9]+),.*"status":"([a-z]+)".*/\1-\2 \3/' || true
}
