#!/usr/bin/env bash
# compare_ratios_test.sh SOURCE_DIR - bench/compare.sh --ratios on made-up
# results: the busbw ratios, the 1 KiB time ratio, and the memory ceilings
# computed from the memcpy blocks (medians over runs, the streaming block kept
# apart from the plain one): the allreduce table and every collective's; and
# the harness's memcpy and tcp references against the baselines'.
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
cohort,shm,allreduce,allreduce,2,3,1048576,80,13.1,13.1,0
mpi,shm,allreduce,allreduce,2,3,1048576,250,4.2,4.2,0
cohort,shm,allreduce,allreduce,4,3,1048576,200,5.2,7.9,0
cohort,shm,allgather,allgather,2,3,16777216,2000,8.0,4.0,0
mpi,shm,allgather,allgather,2,3,16777216,8000,2.0,1.0,0
cohort,shm,broadcast,broadcast,4,3,16777216,3000,5.0,5.0,0
mpi,shm,broadcast,broadcast,4,3,16777216,16000,1.0,1.0,0
cohort,shm,alltoall,alltoall,2,3,16777216,2800,6.0,3.0,0
mpi,shm,alltoall,alltoall,2,3,16777216,3300,5.0,2.5,0
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

# The harness's references in this run's summary and in the baselines' (two
# rounds today: medians 8 and 2.5 us; one 16 MiB row the baseline lacks).
cat > "$dir/summary.txt" <<'TXT'
memcpy reference (GB/s counting bytes copied once):
  memcpy  64M  threads=1  per-thread mean   7.00  best   8.00  aggregate   7.00
  memcpy  64M  threads=1  per-thread mean   9.00  best   9.50  aggregate   9.00
  memcpy  16M  threads=2  per-thread mean   6.00  best   7.00  aggregate  12.00
  memcpy   1M  threads=2  per-thread mean  10.00  best  11.00  aggregate  20.00
  memcpy   1M  threads=2  per-thread mean  20.00  best  21.00  aggregate  40.00
raw TCP loopback reference (2 processes, GB/s = 1e9 B/s):
  pingpong 1024 B half-RTT 2.00 us
  pingpong 1024 B half-RTT 3.00 us
  bidir 67108864 B per-dir 0.500 GB/s
TXT
cat > "$dir/base.txt" <<'TXT'
  memcpy  64M  threads=1  per-thread mean  16.00  best  17.00  aggregate  16.00
  pingpong 1024 B half-RTT 10.00 us
  bidir 67108864 B per-dir 1.000 GB/s
TXT

out=$(BASELINE="$dir/base.txt" "$src/bench/compare.sh" --ratios "$dir")
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
# The streaming ceiling (two threads 24 GB/s) of each collective at 16 MiB:
# allreduce np 2: 2 * 1 * 24 / 4 = 12 (ours 75%, 5 x 2.0 is 83% of it);
# np 4: 2 * 1.5 * 24 / 8 = 9 (67%, 5 x 1.5 = 83%); allgather np 2: 2 * 0.5 *
# 24 / 3 = 8 (50%, 2 x 1 = 25%); broadcast np 4: 2 * 24 / 4 = 12 (42%, 17%);
# alltoall np 2: 2 * 0.5 * 24 / 4 = 6 (50%, 2 x 2.5 = 83%).
row() { grep -Eq "^ $1 +$2 +$3 +$4 +$5 +$6 +$7\$" <<<"$out" || fail "streaming ceiling: $1 np $2"; }
row allreduce 2 9.000 2.000 12.000 75% 83%
row allreduce 4 6.000 1.500 9.000 67% 83%
row allgather 2 4.000 1.000 8.000 50% 25%
row broadcast 4 5.000 1.000 12.000 42% 17%
row alltoall 2 3.000 2.500 6.000 50% 83%
ref() { grep -Eq "^ $1 +$2 +$3 +$4\$" <<<"$out" || fail "reference: $1"; }
ref 'memcpy 64M, 1 thread \(GB/s\)' 8.00 16.00 0.50
ref 'tcp pingpong 1K half-RTT \(us\)' 2.50 10.00 0.25
ref 'tcp bidir 64M per-dir \(GB/s\)' 0.50 1.00 0.50
grep -q 'memcpy 16M' <<<"$out" && fail "a reference the baseline lacks is shown"
# The 1 MiB allreduce against its copies: two threads copy 1 MiB at the median
# 30 GB/s together, so 2 ranks' two copies take 2 x 1048576 / 30e3 = 69.9 us:
# ours 80 us (87% of that rate), the floor 250 / 5 = 50 us (it asks 140%).
# The 4-rank row has no OpenMPI figure and is left out.
grep -q 'two threads copy 1 MiB at 30.00 GB/s together' <<<"$out" || fail "1 MiB copy rate"
grep -Eq '^ +2 +80\.0 +250\.0 +50\.0 +69\.9 +87% +140%$' <<<"$out" || fail "1 MiB row"
grep -Eq '^ +4 +200\.0 ' <<<"$out" && fail "a 1 MiB row without OpenMPI's figure"
echo "compare_ratios_test: passed"
