#!/usr/bin/env bash
# Link-flap trials: issue 45's acceptance run for retried links.
#
#   bench/link_flap_trials.sh [--scenario reset|two-resets|down|flap|no-retry]
#       [--trials 20] [--seed 1] [--bytes 16777216] [--steps 40] [--down-ms 7000]
#       [--build build]
#
# Two "machines" (network namespaces on a bridge, bench/netns_cluster.sh), two
# ranks each under cohortrun --nnodes 2: shm within a machine, tcp between. Every
# rank allreduces BYTES STEPS times (more if the events need a longer loop) and
# checks every element (bench/flap_trial).
# With HCCL_OP_RETRY_ENABLE=L1:1 and HCCL_OP_RETRY_PARAMS=MaxCnt:3,HoldTime:5000,
# IntervalTime:1000, at a seeded random moment of the loop:
#   reset       `ss -K dst <peer>` inside one namespace (a NIC reset): every
#               allreduce must finish exactly, the one it hit at most 1 s slower
#               than the median (its cost is printed per trial)
#   two-resets  the same, twice, 3 s apart
#   down        the link of machine 0 down for --down-ms (past HoldTime): every
#               rank must fail, naming the link, and the time from the cut to
#               each rank's error is printed
#   flap        the link down for --down-ms (0.5 s, 2 s): ridden out as a reset
#   no-retry    a reset without HCCL_OP_RETRY_ENABLE: every rank must fail within
#               seconds, naming the link
# In every trial each rank must leave, once its communicator is destroyed, the
# descriptors and threads a run without an event leaves, and /dev/shm no entry.
# Exit status 1 if any trial failed; 77 where namespaces cannot be made. A failed
# trial's whole log is kept in $LINK_FLAP_LOGS when that names a directory.
set -euo pipefail

scenario=reset trials=20 seed=1 bytes=$((16 << 20)) steps=40 down_ms=7000 build=build
while [ $# -gt 0 ]; do
  case $1 in
    --scenario) scenario=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --down-ms) down_ms=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "link_flap_trials.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case $scenario in reset | two-resets | down | flap | no-retry) ;; *) echo "bad --scenario" >&2; exit 2 ;; esac
cohortrun=$build/tools/cohortrun/cohortrun
worker=$build/bench/flap_trial
[ -x "$cohortrun" ] && [ -x "$worker" ] || { echo "build $cohortrun and $worker first" >&2; exit 2; }
command -v ss >/dev/null || { echo "skipped: no ss command (iproute2)" >&2; exit 77; }

log=$(mktemp)
. "$(dirname "$0")/netns_cluster.sh"
cleanup() {
  rm -f "$log" "$log".node*
  netns_cluster_down
}
trap cleanup EXIT
rc=0
netns_cluster_up || rc=$?
[ "$rc" = 0 ] || exit "$rc"

retry_env=(HCCL_OP_RETRY_ENABLE=L1:1 HCCL_OP_RETRY_PARAMS=MaxCnt:3,HoldTime:5000,IntervalTime:1000)
[ "$scenario" = no-retry ] && retry_env=()
now_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }
port=29800
watchdog=120
pids=()

start_job() {
  port=$((port + 1))
  pids=()
  local i
  for i in 0 1; do
    ip netns exec "$(netns_ns "$i")" env COHORT_JOB_TOKEN="$NETNS_TOKEN" \
      COHORT_IF_IP="$NETNS_SUBNET.$((i + 1))" COHORT_EXEC_TIMEOUT=60 "${retry_env[@]}" \
      timeout -s KILL "$watchdog" "$cohortrun" --keep-going --nnodes 2 --node-rank "$i" \
      --master "$NETNS_SUBNET.1:$port" -n 2 -- "$worker" --bytes "$bytes" --steps "$steps" \
      >"$log.node$i" 2>&1 &
    pids+=($!)
  done
  # Until every rank runs its loop (or the job ended early).
  for _ in $(seq 600); do
    [ "$(cat "$log.node0" "$log.node1" 2>/dev/null | grep -c 'START rank=')" = 4 ] && return 0
    kill -0 "${pids[0]}" 2>/dev/null || kill -0 "${pids[1]}" 2>/dev/null || break
    sleep 0.05
  done
  return 1
}

finish_job() {
  local i status=0
  for i in 0 1; do wait "${pids[$i]}" || status=$?; done
  cat "$log.node0" "$log.node1" >"$log"
  return $status
}

reset_link() {  # inside a random machine, every socket to the other one
  local m=$((RANDOM % 2))
  ip netns exec "$(netns_ns "$m")" ss -K -t dst "$NETNS_SUBNET.$((2 - m))" >/dev/null
}

# One loop's length without any event, for the random moments.
start_job || { cat "$log.node"*; echo "the job did not start"; exit 1; }
finish_job || { cat "$log"; echo "the loop fails without any event"; exit 1; }
median=$(grep -o 'median_ms=[0-9.]*' "$log" | sed 's/.*=//' | sort -n | tail -1)
reference=$(grep -o 'fds=[-+0-9]* threads=[-+0-9]*' "$log" | sort -u)
[ "$(echo "$reference" | wc -l)" = 1 ] || { echo "ranks differ without an event: $reference"; exit 1; }
loop_ms=$(awk -v m="$median" -v s="$steps" 'BEGIN { printf "%d", m * s }')
# The loop must outlast the events: two resets 3 s apart, or a cut link.
need_ms=1000
[ "$scenario" = two-resets ] && need_ms=6000
[ "$scenario" = down ] || [ "$scenario" = flap ] && need_ms=$((down_ms + 2000))
if [ "$loop_ms" -lt "$need_ms" ]; then
  steps=$(awk -v n="$need_ms" -v m="$median" 'BEGIN { printf "%d", n / m + 1 }')
  loop_ms=$(awk -v m="$median" -v s="$steps" 'BEGIN { printf "%d", m * s }')
fi
echo "without an event: median allreduce $median ms; $steps steps, about $loop_ms ms;" \
  "each rank leaves $reference"

RANDOM=$seed
bad=0
costs=()
for ((t = 1; t <= trials; t++)); do
  shm_before=$(ls /dev/shm | wc -l)
  start_job || true
  span=$loop_ms
  [ "$scenario" = two-resets ] && span=$((loop_ms - 3500))
  delay_ms=$((RANDOM % (span * 8 / 10 + 1)))
  sleep "$(awk -v d="$delay_ms" 'BEGIN { printf "%.3f", d / 1000 }')"
  event_ns=$(now_ns)
  case $scenario in
    reset | no-retry) reset_link ;;
    two-resets) reset_link; sleep 3; reset_link ;;
    down | flap)
      ip -n "$(netns_ns 0)" link set "$(netns_link 0)" down
      sleep "$(awk -v d="$down_ms" 'BEGIN { printf "%.3f", d / 1000 }')"
      ip -n "$(netns_ns 0)" link set "$(netns_link 0)" up ;;
  esac
  set +e
  finish_job
  status=$?
  set -e
  problem="" detail=""
  done_lines=$(grep -c 'DONE rank=' "$log" || true)
  shm_after=$(ls /dev/shm | wc -l)
  [ "$shm_after" -le "$shm_before" ] || problem="/dev/shm: $shm_before -> $shm_after entries"
  # Nothing of the communicator left open after its destroy, break or not.
  clean=$(grep -c "LEFT rank=[0-9]* $reference" "$log" || true)
  [ "$clean" = 4 ] || problem="${problem:+$problem; }$clean of 4 ranks left only what a run without an event leaves ($reference)"
  failed_lines=$(grep -c 'FAILED rank=' "$log" || true)
  case $scenario in
    reset | two-resets | flap)
      [ "$status" = 0 ] || problem="exit $status"
      [ "$done_lines" = 4 ] || problem="${problem:+$problem; }$done_lines of 4 ranks checked every allreduce"
      if [ "$done_lines" -gt 0 ]; then
        cost=$(grep 'DONE rank=' "$log" | sed 's/.*median_ms=\([0-9.]*\) max_ms=\([0-9.]*\).*/\1 \2/' |
          awk '{ c = $2 - $1; if (c > m) m = c } END { printf "%.1f", m }')
        costs+=("$cost")
        broke=$(grep -c 'the link broke' "$log" || true)
        detail="the hit allreduce cost $cost ms more than the median ($broke link end(s) broke)"
        # (A short cut may pass with TCP's own retransmissions, no break.)
        [ "$broke" -gt 0 ] || [ "$scenario" = flap ] ||
          problem="${problem:+$problem; }no link broke (was the reset made?)"
        if [ "$scenario" != flap ] && awk -v c="$cost" 'BEGIN { exit !(c > 1000) }'; then
          problem="${problem:+$problem; }cost $cost ms > 1000 ms"
        fi
      fi ;;
    down | no-retry)
      [ "$failed_lines" = 4 ] || problem="$failed_lines of 4 ranks failed"
      unnamed=$(grep 'FAILED rank=' "$log" | grep -vc 'connection to rank\|link' || true)
      [ "$unnamed" = 0 ] || problem="${problem:+$problem; }$unnamed error(s) name no link"
      if [ "$failed_lines" -gt 0 ]; then
        latest=$(grep -o 'FAILED rank=[0-9-]* step=[0-9-]* t=[0-9]*' "$log" | sed 's/.*t=//' | sort -n | tail -1)
        detail=$(awk -v a="$event_ns" -v b="$latest" 'BEGIN { printf "every rank failed %.2f s after the event", (b - a) / 1e9 }')
      fi ;;
  esac
  printf 'trial %3d: %s at +%d ms: %s%s\n' "$t" "$scenario" "$delay_ms" "${detail:-?}" \
    "${problem:+: FAILED: $problem}"
  if [ -n "$problem" ]; then
    bad=$((bad + 1))
    grep "FAILED rank=" "$log" | tail -12 | cut -c1-400 | sed 's/^/    /'
    [ -z "${LINK_FLAP_LOGS:-}" ] || cp "$log" "$LINK_FLAP_LOGS/trial$t.log"
  elif [ "$scenario" = down ] || [ "$scenario" = no-retry ]; then
    grep 'FAILED rank=' "$log" | head -4 | cut -c1-300 | sed 's/^/    /'
  fi
done

if [ ${#costs[@]} -gt 0 ]; then
  printf '%s\n' "${costs[@]}" | sort -n | awk -v n="$trials" -v bad="$bad" -v s="$scenario" '
    { v[NR] = $1 }
    END { printf "%d trials (%s), %d failed: extra time of the hit allreduce p50 %.1f ms, max %.1f ms\n",
                 n, s, bad, v[int((NR - 1) / 2) + 1], v[NR] }'
else
  echo "$trials trials ($scenario), $bad failed"
fi
[ "$bad" = 0 ]
