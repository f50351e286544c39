#!/usr/bin/env bash
# Kill (or abort) trials of surviving a dead rank: issue 45's acceptance run.
#
#   bench/shrink_trials.sh [--ranks 8] [--trials 200] [--seed 1] [--bytes 16777216]
#                          [--mode kill|abort] [--after 100] [--build build] [--netns]
#
# Each trial starts RANKS ranks under `cohortrun --keep-going` allreducing BYTES in
# a loop; a seeded random rank dies (SIGKILL) or aborts at a random step, a random
# moment into its allreduce. Every survivor must name the same failed rank, shrink,
# and check every element of AFTER allreduces; the trial prints the time from the
# death to the first correct allreduce after the shrink (the slowest survivor's).
# A trial that takes longer than 10 s plus the AFTER allreduces' own time is a hang.
# Leaks: /dev/shm's entries before and after each trial, and each survivor's
# descriptors and threads left open at its end, against a run without a failure.
# Prints the p50/p99/max recovery times; exit status 1 if any trial failed.
#
# --netns: two "machines" of RANKS/2 ranks each (network namespaces on a bridge,
# made and removed by the script, addresses from a free 10.215.N.0/24), one
# cohortrun --nnodes 2 in each: ranks of one machine talk over shm, the machines
# over tcp. Needs root.
set -euo pipefail

ranks=8 trials=200 seed=1 bytes=$((16 << 20)) mode=kill after=100 build=build netns=0
while [ $# -gt 0 ]; do
  case $1 in
    --netns) netns=1; shift ;;
    --ranks) ranks=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "shrink_trials.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
cohortrun=$build/tools/cohortrun/cohortrun
worker=$build/bench/shrink_trial
[ -x "$cohortrun" ] && [ -x "$worker" ] || { echo "build $cohortrun and $worker first" >&2; exit 2; }
log=$(mktemp)
. "$(dirname "$0")/netns_cluster.sh"
cleanup() {
  rm -f "$log" "$log".node*
  netns_cluster_down
}
trap cleanup EXIT

if [ "$netns" = 1 ]; then
  [ $((ranks % 2)) = 0 ] || { echo "--netns needs an even --ranks" >&2; exit 2; }
  rc=0
  netns_cluster_up || rc=$?
  [ "$rc" = 0 ] || exit "$rc"
  port=29700
fi

# One job: every rank's output in $log. The arguments go to every rank.
run_job() {
  if [ "$netns" = 0 ]; then
    COHORT_IF_IP=${COHORT_IF_IP:-127.0.0.1} timeout -s KILL "$watchdog" "$cohortrun" \
      --keep-going -n "$ranks" "$worker" "$@" >"$log" 2>&1
    return
  fi
  port=$((port + 1))  # a fresh port for each job's store
  local i pids=() rc=0
  for i in 0 1; do
    ip netns exec "$(netns_ns "$i")" env COHORT_JOB_TOKEN="$NETNS_TOKEN" \
      COHORT_IF_IP="$NETNS_SUBNET.$((i + 1))" \
      timeout -s KILL "$watchdog" "$cohortrun" --keep-going --nnodes 2 --node-rank "$i" \
      --master "$NETNS_SUBNET.1:$port" -n $((ranks / 2)) -- "$worker" "$@" >"$log.node$i" 2>&1 &
    pids+=($!)
  done
  for i in 0 1; do wait "${pids[$i]}" || rc=$?; done
  cat "$log.node0" "$log.node1" >"$log"
  return $rc
}

# What one communicator leaves in a process without any failure.
watchdog=60
run_job --bytes "$bytes" --victim -1 --at 2
reference=$(grep -o 'fds=[-+0-9]* threads=[-+0-9]*' "$log" | sort -u)
[ "$(echo "$reference" | wc -l)" = 1 ] || { echo "ranks differ without a failure: $reference"; exit 1; }
echo "without a failure each rank leaves: $reference"

# The hang watchdog: 10 s, plus the checked allreduces' own time (about 0.1 s each
# for 16 MiB on 8 ranks of this 2-processor machine; twice that across machines).
watchdog=$((10 + (after * (bytes >> 20) * (netns + 1) + 159) / 160))
RANDOM=$seed
bad=0
times=()
for ((t = 1; t <= trials; t++)); do
  victim=$((RANDOM % ranks)) at=$((2 + RANDOM % 6)) delay=$((RANDOM % 20000))
  shm_before=$(ls /dev/shm | wc -l)
  start=$(date +%s%N)
  set +e
  run_job --bytes "$bytes" --victim "$victim" --at "$at" --delay-us "$delay" --mode "$mode" \
    --after "$after"
  rc=$?
  set -e
  elapsed=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  shm_after=$(ls /dev/shm | wc -l)
  problem=""
  [ "$rc" = 137 ] && [ "$mode" = kill ] || [ "$rc" = 0 ] || problem="cohortrun exit $rc"
  killed=$(grep -o 'KILL rank=[0-9]* t=[0-9]*' "$log" | sed 's/.*t=//')
  [ -n "$killed" ] || problem="${problem:+$problem; }the victim never reached its step"
  survived=$(grep -c "SURVIVED rank=[0-9]* failed=\[$victim\] new=[0-9]*/$((ranks - 1)) " "$log" || true)
  checked=$(grep -c "CHECKED rank=[0-9]* allreduces=$after $reference" "$log" || true)
  [ "$survived" = $((ranks - 1)) ] || problem="${problem:+$problem; }$survived of $((ranks - 1)) survivors agreed on rank $victim"
  [ "$checked" = $((ranks - 1)) ] || problem="${problem:+$problem; }$checked of $((ranks - 1)) checked $after allreduces and leaked nothing"
  [ "$shm_after" -le "$shm_before" ] || problem="${problem:+$problem; }/dev/shm: $shm_before -> $shm_after entries"
  if grep -q FAILED "$log"; then problem="${problem:+$problem; }$(grep -m1 FAILED "$log")"; fi
  if [ -n "$killed" ] && [ "$survived" -gt 0 ]; then
    last=$(grep -o 't_first=[0-9]*' "$log" | sed 's/t_first=//' | sort -n | tail -1)
    ms=$(awk -v a="$killed" -v b="$last" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
    times+=("$ms")
  else
    ms="-"
  fi
  printf 'trial %3d: rank %d %s at step %d +%5d us: recovered in %s ms (trial %s s)%s\n' \
    "$t" "$victim" "$mode" "$at" "$delay" "$ms" "$elapsed" "${problem:+: FAILED: $problem}"
  if [ -n "$problem" ]; then
    bad=$((bad + 1))
    sed 's/^/    /' "$log" | grep -v '^\s*\[[0-9]*\]  \s*\[' | tail -20
    [ -z "${SHRINK_TRIALS_LOGS:-}" ] || cp "$log" "$SHRINK_TRIALS_LOGS/trial$t.log"
  fi
done

if [ ${#times[@]} -gt 0 ]; then
  where=$([ "$netns" = 1 ] && echo ", 2 machines" || echo "")
  printf '%s\n' "${times[@]}" | sort -n | awk -v n="$trials" -v bad="$bad" -v mode="$mode" \
    -v where="$where" '
    { v[NR] = $1 }
    END {
      p50 = v[int((NR - 1) * 0.50) + 1]; p99 = v[int((NR - 1) * 0.99) + 1]
      printf "%d trials (%s%s), %d failed: recovery p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
             n, mode, where, bad, p50, p99, v[NR]
    }'
fi
[ "$bad" = 0 ]
