#!/usr/bin/env bash
# Link checks you can trust (issue 29): no false alarm on a healthy cluster, the
# degraded link caught, a stopped peer named. The short run (the default suite)
# runs a healthy check that alarms again, at most twice; loops counts every alarm.
# Every "machine" is a network namespace on this box
# (tests/netns/linkcheck_cluster.sh).
#
#   linkcheck_trust_netns.sh short PATH/TO/cohort-linkcheck   one run of each case
#   linkcheck_trust_netns.sh loops PATH/TO/cohort-linkcheck   the issue's figures:
#       50 checks of each healthy case, with the default thresholds and with
#       --min-gbps 2, without and with a CPU hog beside them; 20 of the throttled
#       link; 5 of the stopped peer. Prints a table; fails on any false alarm
#       (ALARM_DIR=DIR keeps the report of each).
#
# The cases:
#   shm4, shm8  one machine, 4 (8) ranks over shm, the README's rank table
#   tcp2x2      two machines of 2 ranks on a bridge: shm within, tcp between
#   throttled   2 servers x 2 devices, a veth per tcp link; link 0-3's veth
#               throttled (tc tbf, 100 Mbit/s): only link 0-3 flagged, by the
#               relative threshold alone (no --min-gbps)
#   stopped     tcp2x2 with rank 3 stopped (SIGSTOP) while the check probes:
#               exactly rank 3's links unreachable, naming it, within the time
#               bound (--timeout plus a link timeout)
# Needs root; otherwise it prints why and exits 77 (ctest's SKIP_RETURN_CODE).
# Everything it creates is removed on exit, success or not.
set -uo pipefail

MODE=${1:?usage: linkcheck_trust_netns.sh short|loops PATH/TO/cohort-linkcheck}
LC=${2:?usage: linkcheck_trust_netns.sh short|loops PATH/TO/cohort-linkcheck}
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces (run ctest as root)"
command -v ip >/dev/null || skip "the ip command (iproute2) is not installed"
command -v tc >/dev/null || skip "the tc command (iproute2) is not installed"
command -v bc >/dev/null || skip "the bc command is not installed"
[ -x "$LC" ] || { echo "FAIL: $LC is not executable"; exit 1; }
case "$MODE" in short) RUNS=1 THROTTLED_RUNS=1 STOPPED_RUNS=1 ;;
  loops) RUNS=50 THROTTLED_RUNS=20 STOPPED_RUNS=5 ;;
  *) echo "usage: linkcheck_trust_netns.sh short|loops PATH/TO/cohort-linkcheck" >&2; exit 2 ;;
esac

ID=clt$$  # unique per run: parallel runs never share a name
WORK=$(mktemp -d "${TMPDIR:-/tmp}/${ID}.XXXXXX")
HOG=""
# shellcheck source=linkcheck_cluster.sh
. "$(dirname "$0")/linkcheck_cluster.sh"
cleanup() {
  [ -n "$HOG" ] && kill "$HOG" 2>/dev/null
  cluster_cleanup
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
FAILED=0
fail() {
  echo "FAIL: $*"
  FAILED=1
  local f
  for f in "$WORK"/"$LAST"*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 40 "$f"; }; done
  [ "$MODE" = short ] && exit 1
}

PORT=61000
next_port() { PORT=$((PORT + 1)); [ $PORT -lt 64000 ] || PORT=61000; }

# check CASE TABLE ARGS...: one check, LAST its name; sets CODES, ELAPSED. A check
# whose ranks found no program (exit 127: a build elsewhere was relinking it) is
# run again, not counted.
check() {
  local name=$1 table=$2 try
  shift 2
  for try in 1 2 3; do
    next_port
    LAST=$name.$PORT
    run_check "$LAST" "$PORT" "$table" "$@"
    [[ " ${CODES[*]} " == *" 127 "* ]] || return 0
    echo "note: $name: the program was missing (rebuilt elsewhere); running the check again"
    sleep 5
  done
}

# Whether every rank of the last check exited 0.
all_ok() { [ "${CODES[*]}" = "$(printf '0 %.0s' "${CODES[@]}" | sed 's/ $//')" ]; }

# Per case and threshold: checks, false alarms, longest check, per-link ratios.
declare -A CHECKS ALARMS LONGEST LOW HIGH
record() {  # record KEY: after a healthy check
  local key=$1 ratios
  CHECKS[$key]=$((${CHECKS[$key]:-0} + 1))
  if ! all_ok; then
    ALARMS[$key]=$((${ALARMS[$key]:-0} + 1))
    echo "false alarm ($key): exit codes ${CODES[*]}"
    grep -E '^  (SLOW|UNSTABLE|UNREACHABLE|BAD|PROBLEM)' "$WORK/$LAST.rank0.log" | head -5
    [ -n "${ALARM_DIR:-}" ] && cp "$WORK/$LAST.json" "$ALARM_DIR/alarm.${key// /_}.$PORT.json"
  fi
  if (($(echo "$ELAPSED > ${LONGEST[$key]:-0}" | bc))); then LONGEST[$key]=$ELAPSED; fi
  # Each link's median over its class median: how far from a false alarm (0.5).
  ratios=$(sed -nE 's/.*"classMedianGbps":([0-9.e+-]+).*"gbps":([0-9.e+-]+).*/\2 \1/p' \
    "$WORK/$LAST.json" | awk '$2 > 0 { print $1 / $2 }' | sort -g)
  if [ -n "$ratios" ]; then
    local lo hi
    lo=$(head -n 1 <<<"$ratios")
    hi=$(tail -n 1 <<<"$ratios")
    if [ -z "${LOW[$key]:-}" ] || (($(echo "$lo < ${LOW[$key]}" | bc -l))); then LOW[$key]=$lo; fi
    if [ -z "${HIGH[$key]:-}" ] || (($(echo "$hi > ${HIGH[$key]}" | bc -l))); then HIGH[$key]=$hi; fi
  fi
  rm -f "$WORK/$LAST".*  # keep the work directory small over hundreds of checks
}

# ---- the clusters -------------------------------------------------------------------
# One machine for shm4 and shm8: a namespace with loopback only, the README's table.
new_ns "${ID}h0" || skip "cannot create network namespaces here"
"$(dirname "$LC")/../ranktable/cohort-ranktable" generate --servers 1 --devices 4 \
  --ip-base 127.0.0.1 --host-ip-base 127.0.0.1 -o "$WORK/shm4.table" >/dev/null 2>&1 ||
  cluster_table "$WORK/shm4.table" "127.0.0.1:127.0.0.1:127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4"
cluster_table "$WORK/shm8.table" \
  "127.0.0.1:127.0.0.1:127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8"
nodes_cluster 2 2 || skip "cannot build namespaces joined by veth pairs and a bridge here"
cluster_table "$WORK/tcp2x2.table" "$NODE_NET.1:$NODE_NET.1:-,-" "$NODE_NET.2:$NODE_NET.2:-,-"
TCP_NS=("${RANK_NS[@]}")
TCP_ENV=("${RANK_ENV[@]}")
RANK_NS=()
RANK_ENV=()
device_cluster || skip "cannot build the device cluster (veth pairs between namespaces) here"
cluster_table "$WORK/dev.table" "srvA:$MGMT_NET.1:$DEV_NET.1,$DEV_NET.2" \
  "srvB:$MGMT_NET.3:$DEV_NET.3,$DEV_NET.4"
DEV_NS=("${RANK_NS[@]}")
DEV_ENV=("${RANK_ENV[@]}")
on_host() { RANK_NS=("${ID}h0" "${ID}h0" "${ID}h0" "${ID}h0" "${ID}h0" "${ID}h0" "${ID}h0" "${ID}h0"); RANK_ENV=(); }
on_nodes() { RANK_NS=("${TCP_NS[@]}"); RANK_ENV=("${TCP_ENV[@]}"); }
on_devices() { RANK_NS=("${DEV_NS[@]}"); RANK_ENV=("${DEV_ENV[@]}"); }

# ---- healthy: no false alarm ---------------------------------------------------------
healthy() {  # healthy HOG_LABEL
  local c args key i retry
  for c in shm4 shm8 tcp2x2; do
    case $c in shm*) on_host ;; tcp2x2) on_nodes ;; esac
    for args in "" "--min-gbps 2"; do
      key="$c${args:+ $args}$1"
      for ((i = 0; i < RUNS; i++)); do
        # shellcheck disable=SC2086  # the thresholds, split on purpose
        check "$c" "$WORK/$c.table" $args
        if [ "$MODE" = short ]; then
          # A false alarm (a link flagged slow or unstable on a loaded 2-core
          # machine) is run again, at most twice, and said; loops counts every one.
          # (A CI run saw tcp2x2's link 0-3 at 0.46 x in two checks in a row.)
          for retry in 1 2; do
            all_ok || grep -q UNREACHABLE "$WORK/$LAST.rank0.log" && break
            echo "note: $key: a false alarm ($(grep -oE '^  (SLOW|UNSTABLE) rank [0-9]+' \
              "$WORK/$LAST.rank0.log" | head -1)); running the check again ($retry of 2)"
            # shellcheck disable=SC2086  # the thresholds, split on purpose
            check "$c" "$WORK/$c.table" $args
          done
          all_ok || fail "$key: a healthy check exited ${CODES[*]}"
          if [ $c = tcp2x2 ]; then
            [[ $(link_line "$LAST" 0 2) == *'"transport":"tcp"'* ]] || fail "$key: 0-2 is not tcp"
            [[ $(link_line "$LAST" 2 3) == *'"transport":"shm"'* ]] || fail "$key: 2-3 is not shm"
          fi
          samples=$(link_line "$LAST" 0 1 | sed -E 's/.*"samples":\[(\[[^]]*\](,\[[^]]*\])*)\].*/\1/' |
            grep -o '\[' | wc -l)
          [ "$samples" -ge 5 ] ||
            fail "$key: the report carries $samples samples of link 0-1, not every one (5)"
        fi
        record "$key"
      done
    done
  done
}
healthy ""
if [ "$MODE" = loops ]; then
  (while :; do :; done) &
  HOG=$!
  healthy " + CPU hog"
  kill "$HOG"
  HOG=""
fi

# ---- one veth throttled: that link, and only that link --------------------------------
on_devices
ip -n "${ID}r0" link show "${ID}w03" >/dev/null || fail "no veth ${ID}w03"
tc -n "${ID}r0" qdisc add dev "${ID}w03" root tbf rate 100mbit burst 32kbit latency 400ms ||
  skip "tc cannot add a tbf qdisc here"
caught=0
for ((i = 0; i < THROTTLED_RUNS; i++)); do
  check throttled "$WORK/dev.table" --plot "$WORK/throttled.svg"
  got=$(flagged "$LAST" | tr '\n' ' ')
  if [ "$got" = "0-3 slow " ] &&
    grep -qE '^  SLOW rank 0 \(10\.217\.0\.1, server srvA\) <-> rank 3 \(10\.217\.0\.4, server srvB\): bandwidth 0\.01[0-9]* GB/s, 0\.0[0-9]* x the tcp links probed in the same passes \(< 0\.50\); tcp median [0-9.]+ GB/s over 4 links; spread' \
      "$WORK/$LAST.rank0.log"; then
    caught=$((caught + 1))
  else
    fail "throttled: flagged '$got', expected only '0-3 slow' by the relative threshold"
  fi
  if [ "$MODE" = short ]; then
    grep -c 'stroke="#000000"' "$WORK/throttled.svg" | grep -qx 2 ||
      fail "throttled: --plot did not outline the two cells of link 0-3"
  fi
done
tc -n "${ID}r0" qdisc del dev "${ID}w03" root

# ---- a peer stopped during the check: named unreachable, within the bound -----------
on_nodes
stopped_ok=0
bound=$((30 + 2))  # --timeout 30 plus a link timeout
for ((i = 0; i < STOPPED_RUNS; i++)); do
  STOP_RANK=3 STOP_AFTER=0.$((3 + i)) check stopped "$WORK/tcp2x2.table" --repeat 100 \
    --bandwidth 8M --link-timeout 2 --timeout 30
  got=$(flagged "$LAST" | tr '\n' ' ')
  # A link between live ranks may read slow here (and only here): rank 2 probes it
  # while its own probe of rank 3, on the same machine, is timing out. Slow links
  # are judged by the healthy and throttled cases; this one judges the stopped rank,
  # and no live link may be called unreachable.
  unreachable=$(flagged "$LAST" | grep -v ' slow$' | tr '\n' ' ')
  if [ "${CODES[*]}" = "1 1 1 stopped" ] &&
    [ "$unreachable" = "0-3 unreachable 1-3 unreachable 2-3 unreachable " ] &&
    grep -qF 'PROBLEM rank 3 (10.218.0.2) sent no results' "$WORK/$LAST.rank0.log" &&
    grep -qE '^  UNREACHABLE rank 2 \(10\.218\.0\.2\) <-> rank 3 \(10\.218\.0\.2\): rank 3 stopped answering' \
      "$WORK/$LAST.rank0.log" && (($(echo "$ELAPSED <= $bound" | bc))); then
    stopped_ok=$((stopped_ok + 1))
  else
    fail "stopped: codes ${CODES[*]}, flagged '$got', ${ELAPSED} s (bound $bound s)"
  fi
done

# ---- what it measured -----------------------------------------------------------------
printf '\n%-36s %6s %12s %10s %s\n' "case" "checks" "false alarms" "longest s" "link / class median"
for key in $(printf '%s\n' "${!CHECKS[@]}" | sed 's/ /~/g' | sort); do
  k=${key//\~/ }
  printf '%-36s %6s %12s %10.2f %s..%s\n' "$k" "${CHECKS[$k]}" "${ALARMS[$k]:-0}" \
    "${LONGEST[$k]}" "$(printf '%.2f' "${LOW[$k]:-0}")" "$(printf '%.2f' "${HIGH[$k]:-0}")"
done
printf '%-36s %6s %12s\n' "throttled: only link 0-3 flagged" "$THROTTLED_RUNS" "$caught caught"
printf '%-36s %6s %12s\n' "stopped: rank 3 named, in bound" "$STOPPED_RUNS" "$stopped_ok ok"
alarms=0
for k in "${!ALARMS[@]}"; do alarms=$((alarms + ALARMS[$k])); done
[ $alarms = 0 ] || fail "$alarms false alarms"
[ $FAILED = 0 ] || exit 1
echo "linkcheck_trust_netns ($MODE): all checks passed"
