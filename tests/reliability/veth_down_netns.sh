#!/usr/bin/env bash
# A network link cut during a collective loop, across "machines" (network
# namespaces on this box), over tcp.
#
#   veth_down_netns.sh PATH/TO/reliability_fault_worker
#
# Two node namespaces, each with one veth whose other end sits on a bridge in a
# third ("switch") namespace: nothing is added to the root namespace and no other
# interface is touched. Addresses (10.216.0.0/24) exist only inside the node
# namespaces. Two cases:
#   1. 2 machines x 2 ranks (ranks 0,1 on n0, 2,3 on n1; the store is in rank
#      0's process): shm inside a machine, tcp between them;
#   2. 2 machines x 1 rank: pure tcp;
#   3. 2 machines x 2 ranks again, but the last rank (on n1) is killed (SIGKILL)
#      instead: every survivor, on both machines, fails within KILL_LIMIT seconds
#      with a remote error (17) naming the dead rank.
# Every rank loops over large allreduces; once all of them loop, n1's veth is set
# down. Then every rank must fail within CUT_LIMIT seconds (COHORT_EXEC_TIMEOUT
# plus slack) with a timeout (9) or remote error (17) that names the operation and
# a rank on the other side of the cut (or, for a rank that was waiting on its own
# machine, a rank there whose error does: see check_failures), and nothing may be
# left running in either namespace.
# Needs root; otherwise it prints why and exits 77 (ctest's SKIP_RETURN_CODE).
# Everything it creates is removed on exit, success or not; every wait is bounded
# (about 30 s per case at most).
set -euo pipefail

WORKER=${1:?usage: veth_down_netns.sh PATH/TO/reliability_fault_worker}
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces (run ctest as root)"
command -v ip >/dev/null || skip "the ip command (iproute2) is not installed"
[ -x "$WORKER" ] || { echo "FAIL: $WORKER is not executable"; exit 1; }

ID=cvd$$  # unique per run; interface names stay under 16 characters
NODES=("${ID}n0" "${ID}n1")
SWITCH=${ID}sw
SUBNET=10.216.0
EXEC_TIMEOUT=3
CUT_LIMIT=8      # seconds from the cut to the last rank's exit
KILL_LIMIT=5.5   # seconds from a rank's death to the last survivor's exit
START_LIMIT=30   # seconds for every rank to join and loop
BYTES=$((32 << 20))
WORK=$(mktemp -d "${TMPDIR:-/tmp}/${ID}.XXXXXX")
PIDS=()

cleanup() {
  local pid ns
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for ns in "${NODES[@]}" "$SWITCH"; do
    # Whatever still runs in our namespaces was started by this test.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

CASE=
fail() {
  echo "FAIL ($CASE): $*"
  for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done
  exit 1
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# ---- the "cluster" ---------------------------------------------------------------
build_cluster() {
  local i ns
  ip netns add "$SWITCH" || return 1
  ip -n "$SWITCH" link add "${ID}br" type bridge || return 1
  ip -n "$SWITCH" link set "${ID}br" up || return 1
  for i in 0 1; do
    ns=${NODES[$i]}
    ip netns add "$ns" || return 1
    ip link add "${ID}a$i" netns "$ns" type veth peer name "${ID}b$i" netns "$SWITCH" || return 1
    ip -n "$SWITCH" link set "${ID}b$i" master "${ID}br" up || return 1
    ip -n "$ns" addr add "$SUBNET.$((i + 1))/24" dev "${ID}a$i" || return 1
    ip -n "$ns" link set lo up || return 1
    ip -n "$ns" link set "${ID}a$i" up || return 1
  done
}
build_cluster || skip "cannot build namespaces joined by veth pairs and a bridge on this machine"

# ---- one case ----------------------------------------------------------------------
# start_ranks PER_NODE PORT: PER_NODE ranks on each node, ranks in node order, the
# store in rank 0's process; transports left to Cohort (shm inside a namespace).
start_ranks() {
  local per=$1 port=$2 world=$(($1 * 2)) r node
  RANK_PIDS=()
  for ((r = 0; r < world; r++)); do
    node=$((r / per))
    ip netns exec "${NODES[$node]}" env -u COHORT_SOCKET_IFNAME -u COHORT_HOST_ID \
      -u COHORT_TRANSPORT -u COHORT_ALGO RANK=$r WORLD_SIZE=$world LOCAL_RANK=$((r % per)) \
      LOCAL_WORLD_SIZE=$per MASTER_ADDR=$SUBNET.1 MASTER_PORT=$port \
      COHORT_IF_IP=$SUBNET.$((node + 1)) COHORT_IF_BASE_PORT=$((port + 1)) \
      COHORT_DEVICE_MEMORY=256M COHORT_CONNECT_TIMEOUT=20 COHORT_EXEC_TIMEOUT=$EXEC_TIMEOUT \
      COHORT_JOB_TOKEN="$ID-$CASE" "$WORKER" loop "$BYTES" >"$WORK/rank$r.log" 2>&1 &
    RANK_PIDS+=($!)
    PIDS+=($!)
  done
}

wait_looping() {
  local r start=$SECONDS
  for r in "${!RANK_PIDS[@]}"; do
    until grep -q "^rank $r: looping" "$WORK/rank$r.log"; do
      kill -0 "${RANK_PIDS[$r]}" 2>/dev/null || fail "rank $r exited before it looped"
      [ $((SECONDS - start)) -lt $START_LIMIT ] || fail "rank $r did not loop within $START_LIMIT s"
      sleep 0.05
    done
  done
}

# wait_exits CUT_TIME [LIMIT]: sets CODES[r] and TOOK[r] (seconds after the cut).
wait_exits() {
  local cut=$1 limit=${2:-$CUT_LIMIT} left=${#RANK_PIDS[@]} r t alive
  CODES=() TOOK=()
  while [ $left -gt 0 ]; do
    t=$(elapsed "$cut" "$(now)")
    for r in "${!RANK_PIDS[@]}"; do
      [ -z "${CODES[$r]:-}" ] || continue
      kill -0 "${RANK_PIDS[$r]}" 2>/dev/null && continue
      if wait "${RANK_PIDS[$r]}"; then CODES[$r]=0; else CODES[$r]=$?; fi
      TOOK[$r]=$t
      left=$((left - 1))
    done
    if [ $left -gt 0 ] && awk -v t="$t" -v l="$limit" 'BEGIN { exit !(t > l) }'; then
      alive=""
      for r in "${!RANK_PIDS[@]}"; do [ -n "${CODES[$r]:-}" ] || alive+=" $r"; done
      fail "rank(s)$alive still running $t s after the fault (limit $limit s)"
    fi
    sleep 0.05
  done
}

# names LINE P: whether an error names rank P ("rank P (tcp ...", "rank P died",
# "rank(s) 1, P").
names() { grep -Eq "rank $2[ (]|rank\(s\) ([0-9]+, )*$2([^0-9]|\$)" <<<"$1"; }
failure_line() { grep -m1 "^rank $1: allreduce FAILED code=" "$WORK/rank$1.log" || true; }

# names_across R PER: whether rank R's error names a rank on the other node.
names_across() {
  local r=$1 per=$2 p first=$(($1 / $2 == 0 ? $2 : 0))
  for ((p = first; p < first + per; p++)); do names "$(failure_line "$r")" $p && return 0; done
  return 1
}

# Every rank: exit 7, a timeout or remote error naming the operation and a rank
# across the cut. A rank whose last wait was on a rank of its own machine (its
# shm barrier, or that rank's death) may name only that rank when the note that
# would explain it is out of reach (the store is across the cut), as long as that
# rank's own error names a rank across the cut: one hop, through the logs.
check_failures() {
  local per=$1 world=$(($1 * 2)) r q line code via
  for ((r = 0; r < world; r++)); do
    line=$(failure_line $r)
    echo "  rank $r: exit ${CODES[$r]} after ${TOOK[$r]} s: $line"
    [ "${CODES[$r]}" = 7 ] || fail "rank $r exited ${CODES[$r]}, expected 7 (a failed allreduce)"
    code=$(sed -E 's/.*FAILED code=([0-9]+).*/\1/' <<<"$line")
    [ "$code" = 9 ] || [ "$code" = 17 ] ||
      fail "rank $r: code '$code', expected 9 (timeout) or 17 (remote error)"
    [[ $line == *"allreduce #"* ]] || fail "rank $r: the error does not name the operation: $line"
  done
  for ((r = 0; r < world; r++)); do
    names_across $r $per && continue
    line=$(failure_line $r) via=
    for ((q = r / per * per; q < (r / per + 1) * per; q++)); do
      [ $q != $r ] && names "$line" $q && names_across $q $per && via=$q
    done
    [ -n "$via" ] || fail "rank $r: the error names no rank across the cut, directly or through a rank of its machine: $line"
    echo "  rank $r names rank $via of its machine, whose error names a rank across the cut"
  done
}

# run_case NAME PER_NODE PORT
run_case() {
  CASE=$1
  local per=$2 port=$3 ns cut
  rm -f "$WORK"/*.log
  start_ranks "$per" "$port"
  wait_looping
  ip -n "${NODES[1]}" link set "${ID}a1" down  # the cut, during the loop
  cut=$(now)
  echo "$CASE: all $((per * 2)) ranks loop; ${NODES[1]}'s veth set down"
  wait_exits "$cut"
  check_failures "$per"
  if [ "$per" = 2 ]; then
    grep -q "failed allreduce=hierarchical shm" "$WORK/rank0.log" &&
      grep -q "failed allreduce=hierarchical tcp" "$WORK/rank2.log" ||
      fail "not the hierarchical allreduce, shm inside the machines and tcp between them"
  else
    grep -q "failed allreduce=[a-z_-]* tcp" "$WORK/rank0.log" || fail "the ranks did not use tcp"
  fi
  for ns in "${NODES[@]}" "$SWITCH"; do
    [ -z "$(ip netns pids "$ns")" ] || fail "processes left in $ns: $(ip netns pids "$ns" | tr '\n' ' ')"
  done
  ip -n "${NODES[1]}" link set "${ID}a1" up
  echo "ok ($CASE): every rank failed within $CUT_LIMIT s of the cut, naming a rank across it; nothing left"
}

# kill_case NAME PORT: 2 x 2 ranks, the last one killed during the loop.
kill_case() {
  CASE=$1
  local port=$2 dead=3 r line ns killed
  rm -f "$WORK"/*.log
  start_ranks 2 "$port"
  wait_looping
  kill -9 "${RANK_PIDS[$dead]}"
  killed=$(now)
  echo "$CASE: all 4 ranks loop; rank $dead (on ${NODES[1]}) killed"
  wait_exits "$killed" "$KILL_LIMIT"
  [ "${CODES[$dead]}" = 137 ] || fail "rank $dead exited ${CODES[$dead]}, expected 137 (SIGKILL)"
  for r in 0 1 2; do
    line=$(failure_line $r)
    echo "  rank $r: exit ${CODES[$r]} after ${TOOK[$r]} s: $line"
    [ "${CODES[$r]}" = 7 ] || fail "rank $r exited ${CODES[$r]}, expected 7 (a failed allreduce)"
    [[ $line == *"FAILED code=17"* ]] || fail "rank $r: not a remote error (17): $line"
    names "$line" $dead || fail "rank $r: the error does not name the dead rank $dead: $line"
  done
  for ns in "${NODES[@]}" "$SWITCH"; do
    [ -z "$(ip netns pids "$ns")" ] || fail "processes left in $ns: $(ip netns pids "$ns" | tr '\n' ' ')"
  done
  echo "ok ($CASE): every survivor named the dead rank within $KILL_LIMIT s; nothing left"
}

run_case "2x2" 2 29700
run_case "2x1" 1 29800
kill_case "2x2-kill" 29900
echo "veth_down_netns: all checks passed"
