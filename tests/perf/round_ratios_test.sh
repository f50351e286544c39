#!/usr/bin/env bash
# round_ratios_test.sh SOURCE_DIR - bench/round_ratios.py (the tables of
# dtype_compare.sh and compare.sh --against) on made-up cohort-perf --json
# files: each variant's busbw over the reference's of the same round, the
# median and lowest round per cell, in-place rows left out (but for a
# collective that runs only in place, a broadcast), sizes named, the
# lowest and highest medians, and the cells below the floor.
set -euo pipefail
src=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

run() {  # run FILE BUSBW_8B BUSBW_1M [IN_PLACE_BUSBW [BROADCAST_BUSBW]]
  local inplace=""
  [ -n "${4:-}" ] && inplace=", {\"kind\": \"allreduce\", \"in_place\": true, \"rows\": [{\"size\": 8, \"busbw\": $4}]}"
  [ -n "${5:-}" ] && inplace+=", {\"kind\": \"broadcast\", \"in_place\": true, \"rows\": [{\"size\": 8, \"busbw\": $5}]}"
  cat > "$dir/$1" <<JSON
{"collectives": [{"kind": "allreduce", "in_place": false,
  "rows": [{"size": 8, "busbw": $2}, {"size": 1048576, "busbw": $3}]}$inplace]}
JSON
}
# Three rounds at shm:2. new/old at 8 B: 0.5, 0.9, 0.8 -> median 0.80, lowest
# 0.50; at 1 MiB: 1.2, 1.0, 1.1 -> 1.10 (1.00). The in-place rows (100) and a
# round without its reference (r4) count for nothing. A broadcast, which runs
# in place only, counts: 3.0 / 4.0 in round 1.
run r1_shm_2_old.json 1.0 10.0 1 4.0
run r1_shm_2_new.json 0.5 12.0 100 3.0
run r2_shm_2_old.json 1.0 10.0
run r2_shm_2_new.json 0.9 10.0
run r3_shm_2_old.json 1.0 10.0
run r3_shm_2_new.json 0.8 11.0
run r4_shm_2_new.json 0.1 0.1
# tcp:4, one round: 0.96 at 8 B, 2.00 at 1 MiB.
run r1_tcp_4_old.json 2.5 4.0
run r1_tcp_4_new.json 2.4 8.0

out=$(python3 "$src/bench/round_ratios.py" "$dir" old 0.95)
echo "$out"
fail() { echo "FAILED: $*" >&2; exit 1; }
grep -qx 'allreduce shm:2 new:  8B 0.80 (0.50)  1M 1.10 (1.00)' <<<"$out" || fail "shm:2 row"
grep -qx 'allreduce tcp:4 new:  8B 0.96 (0.96)  1M 2.00 (2.00)' <<<"$out" || fail "tcp:4 row"
grep -qx 'broadcast shm:2 new:  8B 0.75 (0.75)' <<<"$out" || fail "in-place-only broadcast row"
grep -qx 'lowest median for new: 0.75 at broadcast shm:2 8B' <<<"$out" || fail "lowest"
grep -qx 'highest median for new: 2.00 at allreduce tcp:4 1M' <<<"$out" || fail "highest"
grep -qx '2 of 5 cells below 0.95:' <<<"$out" || fail "count below the floor"
grep -qx '  new allreduce shm:2 8B 0.80' <<<"$out" || fail "the cell below the floor"
# A type as the variant, float the reference (dtype_compare.sh's naming).
mkdir "$dir/types"
run types/r1_shm_8_float.json 1.0 4.0
run types/r1_shm_8_bfloat16.json 1.0 3.0
out=$(python3 "$src/bench/round_ratios.py" "$dir/types")
grep -qx 'allreduce shm:8 bfloat16:  8B 1.00 (1.00)  1M 0.75 (0.75)' <<<"$out" || fail "type row"
echo "round_ratios: ok"
