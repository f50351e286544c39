#!/usr/bin/env bash
# compare_ratios_test.sh SOURCE_DIR - bench/compare.sh --ratios on made-up
# results: the busbw ratios, the 1 KiB time ratio, and the memory ceiling
# computed from the memcpy blocks (medians over runs, the streaming block kept
# apart from the plain one).
set -euo pipefail
src=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat > "$dir/all_rows.csv" <<'CSV'
lib,transport,collective,kind,np,runs,size,time_us,algbw,busbw,wrong
cohort,shm,allreduce,allreduce,2,3,1024,0.5,2.0,2.0,0
cohort,shm,allreduce,allreduce,2,3,16777216,1900,9.0,9.0,0
cohort,shm,allreduce,allreduce,4,3,16777216,5000,4.0,6.0,0
mpi,shm,allreduce,allreduce,2,3,1024,2.0,0.5,0.5,0
mpi,shm,allreduce,allreduce,2,3,16777216,9000,2.0,2.0,0
mpi,shm,allreduce,allreduce,4,3,16777216,20000,1.0,1.5,0
CSV
# Three runs; medians: memcpy one thread 12, two 13; streaming one 20, two 24.
run() {  # run FILE MEMCPY1 MEMCPY2 STREAM1 STREAM2
  cat > "$dir/$1" <<TXT
# streaming memcpy bandwidth: buffer=16777216 bytes, iters=30, cpus=2, pinned=1
# threads         bytes    best/thr    mean/thr   aggregate  time/copy(us)
        1      16777216       99.00       99.00       $4        1.0
        2      16777216       99.00       99.00       $5        1.0
# memcpy bandwidth: buffer=16777216 bytes, iters=30, cpus=2, pinned=1
# threads         bytes    best/thr    mean/thr   aggregate  time/copy(us)
        1      16777216       99.00       99.00       $2        1.0
        2      16777216       99.00       99.00       $3        1.0
# nccl-tests-style CPU collective benchmark
TXT
}
run cohort_np2_r1.txt 10 13 20 24
run cohort_np2_r2.txt 12 50 18 30
run cohort_np4_r1.txt 50 11 21 20

out=$("$src/bench/compare.sh" --ratios "$dir")
echo "$out"
fail() { echo "FAILED: $*" >&2; exit 1; }
grep -Eq '^ +16777216 +9\.000 +2\.000 +4\.50$' <<<"$out" || fail "2-rank 16 MiB busbw ratio 4.50"
grep -q '# 1 KiB time: ours 0.50 us, theirs 2.00 us, ratio 0.25' <<<"$out" || fail "1 KiB time ratio"
grep -Eq 'memcpy +one thread +12\.00 +two together +13\.00' <<<"$out" || fail "memcpy medians"
grep -Eq 'non-temporal +one thread +20\.00 +two together +24\.00' <<<"$out" || fail "streaming medians"
# np 2: issue 4*1/4*12 = 12 (9/12 = 75%), streaming 2*1/4*24 = 12 (75%);
# np 4: issue 4*3/16*12 = 9 (6/9 = 67%), streaming 2*3/16*24 = 9 (67%).
grep -Eq '^ +2 +9\.000 +12\.000 +75% +12\.000 +75%$' <<<"$out" || fail "2-rank ceiling row"
grep -Eq '^ +4 +6\.000 +9\.000 +67% +9\.000 +67%$' <<<"$out" || fail "4-rank ceiling row"
echo "compare_ratios_test: passed"
