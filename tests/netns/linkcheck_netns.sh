#!/usr/bin/env bash
# cohort-linkcheck across "machines": network namespaces on this box.
#
#   linkcheck_netns.sh PATH/TO/cohort-linkcheck
#
# Builds three node namespaces, each with one veth whose other end sits on a
# bridge inside a fourth ("switch") namespace, so that nothing is added to the
# root namespace and no other interface is touched (linkcheck_cluster.sh's
# nodes_cluster). Addresses exist only inside the node namespaces. Then:
#   1. three ranks, one per namespace, from a generated rank table: every link
#      ok, and tcp between namespaces (Cohort's host id includes the netns);
#   2. two ranks in one namespace: the link is shm;
#   3. one namespace's veth taken down: exactly that node's links are reported
#      unreachable, naming the cause, within --timeout; that rank reports that it
#      cannot reach the store.
# Needs root; otherwise it prints why and exits 77 (ctest's SKIP_RETURN_CODE).
# Everything it creates is removed on exit, success or not.
set -euo pipefail

LC=${1:?usage: linkcheck_netns.sh PATH/TO/cohort-linkcheck}
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces (run ctest as root)"
command -v ip >/dev/null || skip "the ip command (iproute2) is not installed"
[ -x "$LC" ] || { echo "FAIL: $LC is not executable"; exit 1; }

ID=cht$$  # unique per run: parallel runs never share a name
WORK=$(mktemp -d "${TMPDIR:-/tmp}/${ID}.XXXXXX")
# shellcheck source=linkcheck_cluster.sh
. "$(dirname "$0")/linkcheck_cluster.sh"
cluster_own
NODES=("${ID}n0" "${ID}n1" "${ID}n2")
SUBNET=$NODE_NET

fail() {
  echo "FAIL: $*"
  for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done
  exit 1
}

# ---- the "cluster": one veth per node namespace to a bridge (linkcheck_cluster.sh)
nodes_cluster 3 1 || skip "cannot build namespaces joined by veth pairs and a bridge on this machine"

# A rank table: one server per entry of $@ ("IP:DEVICES"), ranks in order.
ranktable() {
  local out=$1 rank=0 first=1 server ip n d
  shift
  {
    echo "{\"status\": \"completed\", \"version\": \"1.0\", \"server_count\": \"$#\", \"server_list\": ["
    for server in "$@"; do
      ip=${server%%:*}
      n=${server##*:}
      [ $first = 1 ] || echo ","
      first=0
      echo "{\"server_id\": \"$ip\", \"host_ip\": \"$ip\", \"device\": ["
      for ((d = 0; d < n; d++)); do
        [ $d = 0 ] || echo ","
        echo "{\"device_id\": \"$d\", \"rank_id\": \"$rank\"}"
        rank=$((rank + 1))
      done
      echo "]}"
    done
    echo "]}"
  } >"$out"
}

# run_ranks STEP PORT TABLE NS... : rank i in namespace NS[i]; sets CODES[i].
run_ranks() {
  local step=$1 port=$2 table=$3 i=0 ns
  shift 3
  local pids=()
  for ns in "$@"; do
    ip netns exec "$ns" env -u COHORT_IF_IP -u COHORT_SOCKET_IFNAME -u COHORT_HOST_ID \
      -u COHORT_TRANSPORT COHORT_IF_BASE_PORT="$port" COHORT_JOB_TOKEN="$ID-$step" \
      "$LC" --ranktable "$table" --rank "$i" $LC_ARGS --json "$WORK/$step.report.json" \
      >"$WORK/$step.rank$i.log" 2>&1 &
    pids+=($!)
    PIDS+=($!)
    i=$((i + 1))
  done
  CODES=()
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then CODES+=(0); else CODES+=($?); fi
  done
}

link_line() { grep -E "^\{\"a\":$2,.*\"b\":$3," "$WORK/$1.report.json" || true; }

# ---- 1. one rank per namespace: all ok, tcp ---------------------------------------
ranktable "$WORK/three.json" "$SUBNET.1:1" "$SUBNET.2:1" "$SUBNET.3:1"
LC_ARGS="--timeout 20 --bandwidth 1M"
run_ranks three 60100 "$WORK/three.json" "${NODES[@]}"
[ "${CODES[*]}" = "0 0 0" ] || fail "three namespaces: exit codes ${CODES[*]}, expected 0 0 0"
for pair in "0 1" "0 2" "1 2"; do
  line=$(link_line three $pair)
  [[ $line == *'"status":"ok"'* ]] || fail "three namespaces: link $pair not ok: $line"
  [[ $line == *'"transport":"tcp"'* ]] || fail "three namespaces: link $pair is not tcp: $line"
done
grep -qF "ok rank 0 ($SUBNET.1) <-> rank 2 ($SUBNET.3): tcp" "$WORK/three.rank0.log" ||
  fail "three namespaces: rank 0 printed no ok line for 0 <-> 2"
echo "ok: 3 namespaces, 3 links, all tcp"

# ---- 2. two ranks in one namespace: shm ---------------------------------------------
ranktable "$WORK/one.json" "$SUBNET.1:2"
run_ranks one 60200 "$WORK/one.json" "${NODES[0]}" "${NODES[0]}"
[ "${CODES[*]}" = "0 0" ] || fail "one namespace: exit codes ${CODES[*]}, expected 0 0"
line=$(link_line one 0 1)
[[ $line == *'"status":"ok"'* && $line == *'"transport":"shm"'* ]] ||
  fail "one namespace: link 0 1 is not an ok shm link: $line"
echo "ok: 2 ranks in one namespace use shm"

# ---- 3. node 2's veth down: exactly its links bad, within the timeout ---------------
ip -n "${NODES[2]}" link set "${ID}e2" down
LC_ARGS="--timeout 12 --link-timeout 4 --bandwidth 1M"
start=$(date +%s)
run_ranks down 60300 "$WORK/three.json" "${NODES[@]}"
elapsed=$(($(date +%s) - start))
[ "${CODES[*]}" = "1 1 2" ] || fail "veth down: exit codes ${CODES[*]}, expected 1 1 2"
[ "$elapsed" -le 15 ] || fail "veth down: took ${elapsed} s, the timeout is 12 s"
line=$(link_line down 0 1)
[[ $line == *'"status":"ok"'* ]] || fail "veth down: link 0 1 should be ok: $line"
for a in 0 1; do
  line=$(link_line down $a 2)
  [[ $line == *'"status":"unreachable"'* && $line == *'"cause":"rank 2 did not join within 4 s"'* ]] ||
    fail "veth down: link $a 2 should be unreachable because rank 2 never joined: $line"
  grep -qF "UNREACHABLE rank $a ($SUBNET.$((a + 1))) <-> rank 2 ($SUBNET.3): rank 2 did not join within 4 s" \
    "$WORK/down.rank$a.log" "$WORK/down.rank0.log" ||
    fail "veth down: no line naming rank $a, rank 2, their addresses and the cause"
done
[ "$(grep -c '"status":"unreachable"' "$WORK/down.report.json")" = 2 ] ||
  fail "veth down: not exactly 2 unreachable links"
[ "$(grep -c '"status":"ok"' "$WORK/down.report.json")" = 1 ] || fail "veth down: not exactly 1 ok link"
grep -q "rank 2 cannot reach the job store at $SUBNET.1:60300" "$WORK/down.rank2.log" ||
  fail "veth down: rank 2 did not say that it cannot reach the store"
echo "ok: with node 2's veth down, links 0-2 and 1-2 unreachable in ${elapsed} s, 0-1 ok"
echo "linkcheck_netns: all checks passed"
