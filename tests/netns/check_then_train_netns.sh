#!/usr/bin/env bash
# examples/check_then_train.sh as HCCL users run a check script: on every server
# of a rank table, each "server" a network namespace on this box.
#
#   check_then_train_netns.sh PATH/TO/check_then_train.sh BUILD_DIR
#
# Three node namespaces, each with one veth whose other end sits on a bridge in a
# fourth ("switch") namespace: nothing is added to the root namespace and no other
# interface is touched (linkcheck_cluster.sh's nodes_cluster). Addresses exist
# only inside the node namespaces. A rank table of 3 servers x 2 ranks; the
# script runs in every node namespace with its own --server-id and the same
# COHORT_JOB_TOKEN. Then:
#   1. every link ok: every machine's script exits 0 and the job trains (rank 0's
#      step lines prove the weights stayed identical on all 6 ranks);
#   2. the one link between n1 and n2 cut (an "unreachable" route each way, so
#      connects fail at once; rank 0 and the store live on n0): every script exits
#      1 within its --timeout, names exactly the 4 links between n1's and n2's
#      ranks with their addresses, says training was refused, and training never
#      started; every link to n0's ranks is ok.
# Needs root; otherwise it prints why and exits 77 (ctest's SKIP_RETURN_CODE).
# Everything it creates is removed on exit, success or not.
set -euo pipefail

SCRIPT=${1:?usage: check_then_train_netns.sh PATH/TO/check_then_train.sh BUILD_DIR}
BUILD=${2:?usage: check_then_train_netns.sh PATH/TO/check_then_train.sh BUILD_DIR}
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces (run ctest as root)"
command -v ip >/dev/null || skip "the ip command (iproute2) is not installed"
command -v timeout >/dev/null || skip "the timeout command (coreutils) is not installed"
[ -x "$SCRIPT" ] || { echo "FAIL: $SCRIPT is not executable"; exit 1; }
for prog in tools/cohortrun/cohortrun tools/linkcheck/cohort-linkcheck \
  tools/ranktable/cohort-ranktable examples/mpirun_allreduce; do
  [ -x "$BUILD/$prog" ] || { echo "FAIL: $BUILD/$prog is not built"; exit 1; }
done

ID=ctt$$  # unique per run: parallel runs never share a name
WORK=$(mktemp -d "${TMPDIR:-/tmp}/${ID}.XXXXXX")
# shellcheck source=linkcheck_cluster.sh
. "$(dirname "$0")/linkcheck_cluster.sh"
cluster_own
NODES=("${ID}n0" "${ID}n1" "${ID}n2")
SUBNET=$NODE_NET

fail() {
  echo "FAIL: $*"
  for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 80 "$f"; }; done
  exit 1
}

# ---- the "cluster": one veth per node namespace to a bridge (linkcheck_cluster.sh)
nodes_cluster 3 1 || skip "cannot build namespaces joined by veth pairs and a bridge on this machine"

# 3 servers x 2 devices; the server id is the host address. Ranks 0,1 on n0 (rank
# 0: the job's store), 2,3 on n1, 4,5 on n2.
"$BUILD/tools/ranktable/cohort-ranktable" generate --servers 3 --devices 2 \
  --host-ip-base "$SUBNET.1" --ip-base 192.168.215.1 -o "$WORK/table.json" >/dev/null
TIMEOUT=15  # the script's --timeout, for the link check (each link: a third)

# run_machines CASE ARGS...: the script on every node, its exit codes in CODES.
run_machines() {
  local name=$1 i pids=()
  shift
  local token
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  for i in 0 1 2; do
    ip netns exec "${NODES[$i]}" env -u COHORT_IF_IP -u COHORT_SOCKET_IFNAME \
      -u COHORT_HOST_ID -u COHORT_TRANSPORT -u COHORT_RANKTABLE TMPDIR="$WORK" \
      COHORT_JOB_TOKEN="$token" COHORT_DEVICE_MEMORY=512M COHORT_CONNECT_TIMEOUT=20 \
      COHORT_EXEC_TIMEOUT=60 OPENBLAS_NUM_THREADS=1 \
      timeout -k 5 90 "$SCRIPT" --build "$BUILD" --ranktable "$WORK/table.json" \
      --server-id "$SUBNET.$((i + 1))" --timeout "$TIMEOUT" "$@" -- --steps 5 \
      >"$WORK/$name.n$i.log" 2>&1 &
    pids+=($!)
    PIDS+=($!)
  done
  CODES=()
  for i in 0 1 2; do
    if wait "${pids[$i]}"; then CODES+=(0); else CODES+=($?); fi
  done
}

# The script's own list of bad links: its lines "  BAD rank A (addr) <-> rank B ...".
bad_list() { grep -E '^  [A-Z]+ rank [0-9]+ \(' "$WORK/$1.log" || true; }

# ---- 1. every link ok: the job trains ---------------------------------------------
start=$(date +%s)
run_machines ok
# A healthy cluster's check may flag a link slow or unstable on a loaded 2-core
# machine (several 0.4-0.5x dips a day here); the soak counts such false alarms
# (linkcheck_trust_netns.sh loops). Here one is run again, once, and said; a
# second alarm fails. A link found unreachable is never run again.
if [ "${CODES[*]}" != "0 0 0" ] && ! grep -q UNREACHABLE "$WORK"/ok.n*.log &&
  grep -qE '(SLOW|UNSTABLE) rank' "$WORK/ok.n0.log"; then
  echo "note: all links up: a false alarm ($(grep -oE '(SLOW|UNSTABLE) rank [0-9]+ .* rank [0-9]+' \
    "$WORK/ok.n0.log" | head -1 | cut -c1-120)); running the case once more"
  start=$(date +%s)
  run_machines ok
fi
elapsed=$(($(date +%s) - start))
[ "${CODES[*]}" = "0 0 0" ] || fail "all links up: exit codes ${CODES[*]}, expected 0 0 0"
for i in 0 1 2; do
  log=$WORK/ok.n$i.log
  grep -qF "check_then_train: all links ok" "$log" || fail "all links up: n$i did not pass the check"
  grep -qF "check_then_train: 3/3 starting training" "$log" || fail "all links up: n$i did not train"
done
grep -qF "job store at $SUBNET.1:29500" "$WORK/ok.n1.log" ||
  fail "all links up: the default --master is not rank 0's host_ip, port 29500"
grep -qF "result: all 15 links ok" "$WORK/ok.n0.log" || fail "all links up: rank 0 did not report 15 ok links"
# Ranks are named as the table names them (device_ip, server_id), with the
# address their tcp links used (the host's) where it differs.
grep -qF "ok rank 0 (192.168.215.1, server $SUBNET.1) <-> rank 1 (192.168.215.2, server $SUBNET.1): shm" \
  "$WORK/ok.n0.log" || fail "all links up: ranks 0 and 1 (one machine) are not linked by shm"
grep -qF "ok rank 2 (192.168.215.3 via $SUBNET.2, server $SUBNET.2) <-> rank 4 (192.168.215.5 via $SUBNET.3, server $SUBNET.3): tcp" \
  "$WORK/ok.n0.log" || fail "all links up: ranks 2 and 4 (n1, n2) are not linked by tcp"
steps=$(grep -cE '^\[0\] step +[0-9]+ +loss .* weights identical on all ranks' "$WORK/ok.n0.log" || true)
[ "$steps" = 5 ] || fail "all links up: $steps of 5 training steps with identical weights"
grep -qE '^\[0\] training OK: .* in 5 steps on 6 ranks' "$WORK/ok.n0.log" ||
  fail "all links up: rank 0 did not report 'training OK' on 6 ranks"
echo "ok: 3 machines x 2 ranks: all 15 links ok, trained 5 steps on 6 ranks (${elapsed} s)"

# ---- 2. the n1 <-> n2 link cut: training refused on every machine -----------------
ip -n "${NODES[1]}" route add unreachable "$SUBNET.3/32"
ip -n "${NODES[2]}" route add unreachable "$SUBNET.2/32"
start=$(date +%s)
run_machines cut --master "$SUBNET.1:29600"
# The healthy links may raise the same false alarm as in case 1 (a 0.48 x dip
# of one tcp link beside the whole suite, twice in three runs): run once more.
if grep -qE '^\[0\]   (SLOW|UNSTABLE) rank' "$WORK/cut.n0.log"; then
  echo "note: n1-n2 cut: a healthy link also flagged ($(grep -oE '(SLOW|UNSTABLE) rank [0-9]+ .* rank [0-9]+' \
    "$WORK/cut.n0.log" | head -1 | cut -c1-120)); running the case once more"
  start=$(date +%s)
  run_machines cut --master "$SUBNET.1:29600"
fi
elapsed=$(($(date +%s) - start))
[ "${CODES[*]}" = "1 1 1" ] || fail "n1-n2 cut: exit codes ${CODES[*]}, expected 1 1 1"
# The check's bound: its --timeout, a link timeout more for the verdict to reach
# every rank, and a few seconds to start and stop the processes.
limit=$((TIMEOUT + TIMEOUT / 3 + 8))
[ "$elapsed" -le "$limit" ] || fail "n1-n2 cut: took ${elapsed} s, more than ${limit} s"
expected=""
for a in 2 3; do
  for b in 4 5; do
    expected+="rank $a (192.168.215.$((a + 1)) via $SUBNET.2, server $SUBNET.2) <-> rank $b"
    expected+=" (192.168.215.$((b + 1)) via $SUBNET.3, server $SUBNET.3)"$'\n'
  done
done
for i in 0 1 2; do
  log=$WORK/cut.n$i.log
  grep -qF "check_then_train: refusing to start training: cohort-linkcheck exited" "$log" ||
    fail "n1-n2 cut: n$i did not refuse to train"
  grep -q "3/3 starting training" "$log" && fail "n1-n2 cut: n$i started training"
  grep -qE 'step +[0-9]+ +loss|training OK' "$log" && fail "n1-n2 cut: training ran on n$i"
  named=$(bad_list "cut.n$i" | sed -E 's/^  [A-Z]+ (rank .*\)): .+$/\1/' | sort)
  [ "$named"$'\n' = "$expected" ] ||
    fail "n1-n2 cut: n$i named the bad links '$named', expected the 4 between n1 and n2"
done
grep -qF "result: 4 of 15 links bad" "$WORK/cut.n0.log" ||
  fail "n1-n2 cut: rank 0 did not report exactly 4 of 15 links bad"
ok_links=$(grep -cE '^\[0\]   ok rank [0-9]+ \(' "$WORK/cut.n0.log" || true)
[ "$ok_links" = 11 ] || fail "n1-n2 cut: $ok_links links ok, expected the 11 that touch n0 or stay inside a machine"
for b in 2 3 4 5; do
  grep -qE "^\[0\]   ok rank 0 \(192\.168\.215\.1[^)]*\) <-> rank $b " "$WORK/cut.n0.log" ||
    fail "n1-n2 cut: link 0 <-> $b (to n0) is not ok"
done
echo "ok: n1-n2 cut: every machine exited 1 in ${elapsed} s naming the 4 links n1<->n2, no training"
echo "check_then_train_netns: all checks passed"
