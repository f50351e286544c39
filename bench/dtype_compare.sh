#!/usr/bin/env bash
# dtype_compare.sh - busbw of the reducing collectives per data type against
# float's, in the same rounds: each round runs every type back to back for one
# rank count and transport, so that a type and float see the same machine.
#
#   bench/dtype_compare.sh                    # ~15 min on 2 cores
#   ROUNDS=1 CONFIGS="shm:2" bench/dtype_compare.sh
#   bench/dtype_compare.sh --ratios DIR       # the table again from an earlier run
#
# Prints, per collective, configuration (transport:ranks), type and size, the
# median over rounds of (busbw of the type / busbw of float in the same round),
# with the lowest round beside it, and a last line per type: the lowest median.
#
# Knobs (environment):
#   ROUNDS      interleaved rounds (default 3)
#   CONFIGS     transport:ranks pairs (default "shm:2 shm:4 shm:8 tcp:2 tcp:4")
#   TYPES       cohort-perf -d values; the first is the reference (default
#               "float bfloat16 half int8 int16")
#   COLLS       cohort-perf collectives (default allreduce,reducescatter,reduce)
#   SWEEP       size flags (default "-b 64K -e 64M -f 4 -B 512M")
#   OUT         results folder (default a fresh /tmp/dtype_compare.XXXXXX)
#   COHORT_PERF COHORTRUN  the binaries (default: this tree's build/)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
summarize() { /usr/bin/python3 "$HERE/round_ratios.py" "$1" "${TYPES%% *}"; }
TYPES=${TYPES:-"float bfloat16 half int8 int16"}
if [ "${1:-}" = "--ratios" ]; then
  summarize "${2:?usage: dtype_compare.sh --ratios DIR}"
  exit 0
fi
ROUNDS=${ROUNDS:-3}
CONFIGS=${CONFIGS:-"shm:2 shm:4 shm:8 tcp:2 tcp:4"}
COLLS=${COLLS:-allreduce,reducescatter,reduce}
SWEEP=${SWEEP:-"-b 64K -e 64M -f 4 -B 512M"}
COHORT_PERF=${COHORT_PERF:-$ROOT/build/tools/perf/cohort-perf}
COHORTRUN=${COHORTRUN:-$ROOT/build/tools/cohortrun/cohortrun}
OUT=${OUT:-$(mktemp -d /tmp/dtype_compare.XXXXXX)}
mkdir -p "$OUT"

for round in $(seq 1 "$ROUNDS"); do
  for config in $CONFIGS; do
    transport=${config%%:*} ranks=${config##*:}
    for type in $TYPES; do
      json="$OUT/r${round}_${transport}_${ranks}_${type}.json"
      echo "round $round: $transport x $ranks, $type"
      # shellcheck disable=SC2086  # SWEEP is a list of flags
      "$COHORTRUN" -n "$ranks" "$COHORT_PERF" "$COLLS" $SWEEP -d "$type" -c 0 \
        -t "$transport" --json "$json" > "$OUT/r${round}_${transport}_${ranks}_${type}.log" 2>&1 ||
        { echo "FAILED: see $OUT/r${round}_${transport}_${ranks}_${type}.log"; exit 1; }
    done
  done
done
echo "results in $OUT"
summarize "$OUT"
