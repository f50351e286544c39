#!/usr/bin/env bash
# A two-machine Cohort job on one box: two network namespaces ("machines") on a
# bridge, two ranks each, running collective_mp_worker's collective check.
#
#   multinode_test.sh cohortrun COHORTRUN WORKER   cohortrun --nnodes 2 in each namespace
#   multinode_test.sh mpirun MPIRUN WORKER         mpirun -np 4 over both namespaces
#
# Checks every rank's exit status and results ("rank R: check OK"), that ranks
# of one machine talk over shm and machines over tcp, and that allreduce ran the
# hierarchical algorithm (2 nodes x 2 ranks).
#
# The bridge and its veths are created by the test, with addresses from a
# private /24 (10.214.N.0/24, the first N unused here): .1 and .2 inside the
# namespaces, .254 on the bridge in the root namespace (mpirun's daemons call
# back to it). Needs root; otherwise it prints why and exits 77 (ctest's
# SKIP_RETURN_CODE). Everything it creates is removed on exit, success or not;
# every step is bounded by `timeout`, the whole run by about 100 s.
set -euo pipefail

skip() { echo "skipped: $*"; exit 77; }
usage() { echo "usage: multinode_test.sh cohortrun|mpirun LAUNCHER WORKER" >&2; exit 2; }
[ $# = 3 ] || usage
MODE=$1 LAUNCHER=$2 WORKER=$3
case "$MODE" in cohortrun | mpirun) ;; *) usage ;; esac
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces and a bridge (run ctest as root)"
command -v ip >/dev/null || skip "the ip command (iproute2) is not installed"
command -v timeout >/dev/null || skip "the timeout command (coreutils) is not installed"
[ -x "$LAUNCHER" ] || skip "$MODE launcher '$LAUNCHER' is not an executable (is it installed?)"
[ -x "$WORKER" ] || { echo "FAIL: worker $WORKER is not executable"; exit 1; }

ID=cmn$$  # unique per run; interface names stay under 16 characters
NODES=("${ID}n0" "${ID}n1")
BRIDGE=${ID}br
WORK=$(mktemp -d "${TMPDIR:-/tmp}/${ID}.XXXXXX")
PIDS=()
CREATED_BRIDGE=0

cleanup() {
  local pid ns
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for ns in "${NODES[@]}"; do
    # Whatever still runs in our namespaces was started by this test.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  for i in 0 1; do ip link del "${ID}h$i" 2>/dev/null || true; done
  [ $CREATED_BRIDGE = 1 ] && ip link del "$BRIDGE" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  echo "FAIL ($MODE): $*"
  for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 60 "$f"; }; done
  exit 1
}

# ---- the "cluster" ---------------------------------------------------------------
SUBNET=
for n in $(seq 0 63); do
  if ! ip -4 addr show | grep -q "inet 10\.214\.$n\." && ! ip -4 route show | grep -q "^10\.214\.$n\."; then
    SUBNET=10.214.$n
    break
  fi
done
[ -n "$SUBNET" ] || skip "every 10.214.N.0/24 (N < 64) is in use on this machine"

ip netns add "${NODES[0]}" 2>/dev/null || skip "cannot create network namespaces here"
ip netns add "${NODES[1]}"
ip link add "$BRIDGE" type bridge || skip "cannot create a bridge here"
CREATED_BRIDGE=1
ip addr add "$SUBNET.254/24" dev "$BRIDGE"
ip link set "$BRIDGE" up
for i in 0 1; do
  ns=${NODES[$i]}
  ip link add "${ID}h$i" type veth peer name "${ID}c$i" netns "$ns"
  ip link set "${ID}h$i" master "$BRIDGE" up
  ip -n "$ns" addr add "$SUBNET.$((i + 1))/24" dev "${ID}c$i"
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "${ID}c$i" up
done
echo "cluster: ${NODES[0]} ($SUBNET.1), ${NODES[1]} ($SUBNET.2) on bridge $BRIDGE ($SUBNET.254)"

TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
PORT=29611  # the namespaces are new: any port is free there
# Every rank logs its algorithm choices and links (stderr, relayed by the launcher).
JOB_ENV=(COHORT_JOB_TOKEN="$TOKEN" COHORT_DEVICE_MEMORY=512M COHORT_CONNECT_TIMEOUT=30
         COHORT_EXEC_TIMEOUT=60 COHORT_LOG_LEVEL=info COHORT_LOG_SUBSYS=collective,transport)

run_cohortrun() {
  local r
  for r in 0 1; do
    ip netns exec "${NODES[$r]}" env "${JOB_ENV[@]}" timeout -k 5 90 "$LAUNCHER" --nnodes 2 \
      --node-rank "$r" --master "$SUBNET.1:$PORT" -n 2 --timeout 80 -- "$WORKER" check \
      >"$WORK/node$r.log" 2>&1 &
    PIDS+=($!)
  done
  for r in 0 1; do
    wait "${PIDS[$r]}" || fail "cohortrun on node $r exited with status $?"
  done
  cat "$WORK"/node0.log "$WORK"/node1.log >"$WORK/all.txt"
}

run_mpirun() {
  # The remote launch agent: AGENT HOST cmd... runs cmd in HOST's namespace. The
  # namespaces share the hostname and /tmp, so each "machine" gets its own
  # OpenMPI session directory (the daemons would race on one otherwise), and
  # rtc_hwloc_vmhole=none keeps them from sharing their topology through a file.
  mkdir -p "$WORK/tmp0" "$WORK/tmp1"
  cat >"$WORK/agent.sh" <<EOF
#!/bin/sh
host=\$1
shift
case "\$host" in
  $SUBNET.1) ns=${NODES[0]} tmp=$WORK/tmp0 ;;
  $SUBNET.2) ns=${NODES[1]} tmp=$WORK/tmp1 ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
OMPI_MCA_orte_tmpdir_base=\$tmp exec ip netns exec "\$ns" sh -c "\$*"
EOF
  chmod +x "$WORK/agent.sh"
  printf '%s slots=2\n%s slots=2\n' "$SUBNET.1" "$SUBNET.2" >"$WORK/hostfile"
  local exports=() v
  for v in "${JOB_ENV[@]}"; do exports+=(-x "$v"); done
  timeout -k 5 90 "$LAUNCHER" --allow-run-as-root --oversubscribe \
    --mca plm_rsh_agent "$WORK/agent.sh" --mca btl self,tcp \
    --mca btl_tcp_if_include "$SUBNET.0/24" --mca oob_tcp_if_include "$SUBNET.0/24" \
    --mca rtc_hwloc_vmhole none \
    -np 4 --hostfile "$WORK/hostfile" -x MASTER_ADDR="$SUBNET.1" -x MASTER_PORT="$PORT" \
    "${exports[@]}" "$WORKER" check >"$WORK/mpirun.log" 2>&1 &
  PIDS+=($!)
  wait "${PIDS[0]}" || fail "mpirun exited with status $?"
  cp "$WORK/mpirun.log" "$WORK/all.txt"
}

# ---- the job and its checks -------------------------------------------------------
start=$(date +%s)
"run_$MODE"
out=$WORK/all.txt
for r in 0 1 2 3; do
  grep -q "rank $r: check OK" "$out" || fail "rank $r did not report 'check OK'"
done
# lastChoice names the link to rank 1 (rank 0) or rank 0 (others): the same
# machine for ranks 0 and 1, the other machine for ranks 2 and 3.
for r in 0 1; do
  grep -Eq "rank $r: check OK \(.* shm\)" "$out" || fail "rank $r: its link inside the machine is not shm"
done
for r in 2 3; do
  grep -Eq "rank $r: check OK \(.* tcp\)" "$out" || fail "rank $r: its link between machines is not tcp"
done
# Each rank logs one "shm link to rank P" per shm peer: exactly 0<->1 and 2<->3.
for r in 0 1 2 3; do
  grep -q "shm link to rank $r " "$out" || fail "no shm link to rank $r from its machine's other rank"
done
links=$(grep -c "shm link to rank " "$out" || true)
[ "$links" = 4 ] || fail "$links shm links instead of 4: a shm link crosses the machines"
grep -q "tcp listening on $SUBNET\." "$out" || fail "no rank listened for tcp on the bridge subnet"
grep -q "2 node(s), hierarchical" "$out" || fail "the communicator did not see 2 nodes"
grep -q "start: allreduce=hierarchical" "$out" || fail "allreduce did not run the hierarchical algorithm"
echo "PASS ($MODE): 2 machines x 2 ranks, shm inside, tcp between, hierarchical allreduce ($(( $(date +%s) - start )) s)"
