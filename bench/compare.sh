#!/usr/bin/env bash
# compare.sh - cohort-perf side by side with OpenMPI (shm, tcp) and Gloo (tcp),
# interleaved in the same rounds by ../shared/peers/run_peers.sh, then the ratios
# ours / theirs per size.
#
#   bench/compare.sh                         # NPS="2 4 8", REPEAT=3 (~15 min)
#   NPS="2 4" REPEAT=3 bench/compare.sh
#   bench/compare.sh --ratios RESULTS_DIR    # ratios again from an earlier run
#   bench/compare.sh --against OLD_BUILD     # this build against another (below)
#
# Cohort runs through NEW_CMD once per transport in TRANSPORTS (default "shm tcp"):
#   cohortrun -n {np} cohort-perf COLLS {sweep} -t T
# with rank 0's lines kept (cohortrun prefixes them "[0] "). Its shm rows are
# compared with MPI over shm (vader); its tcp rows with MPI over tcp and Gloo
# (for allreduce the better of Gloo's ring and halving-doubling at each size).
# Printed per collective, rank count and pair: busbw of both and busbw ratio at
# every size, the 1 KiB time ratio, then a summary at 1 KiB / 1 MiB / 16 MiB.
# Ratios > 1 mean Cohort is faster (for time: < 1 is faster). Last, the memory
# ceiling at 16 MiB from memcpy runs made before each of ours: the allreduce's
# (the issue's formula and the two threads' measured copy), then every
# collective's, with our busbw and what the floor asks as shares of it. Then
# the harness's memcpy and raw tcp references of this run against the
# baselines' (how fast this machine is today compared with then), and the
# 1 MiB allreduce against the time its copies take at this run's memcpy rate.
#
# Knobs (environment):
#   NPS REPEAT       rank counts and interleaved rounds (default "2 4 8", 3)
#   TRANSPORTS       cohort-perf -t values to run (default "shm tcp")
#   COLLS            cohort-perf collectives (default the five the peers run)
#   PARTS            run_peers.sh parts (default "memcpy tcp mpi_shm mpi_tcp gloo new")
#   BASELINE         the baselines' summary (default ../shared/peers/results/summary.txt)
#   EXTRA            more cohort-perf flags (e.g. "-A ring")
#   COHORT_PERF COHORTRUN  the binaries (default: this tree's build/)
#   COHORT_SHARED    the shared folder (default: ../../shared from this script)
#   RES BUILD ...    passed on to run_peers.sh (see its header)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${COHORT_SHARED:-$(dirname "$0")/../../shared}
PEERS="$SHARED/peers"
# The summary the issue's baselines come from (its memcpy and tcp references).
BASELINE=${BASELINE:-"$PEERS/results/summary.txt"}

ratios() {  # ratios CSV [RESULTS_DIR [BASELINE_SUMMARY]]: the tables, from summarize.py's merged rows
  python3 - "$1" "${2:-}" "${3:-}" <<'PY'
import csv, glob, os, re, statistics, sys
from collections import defaultdict

rows = defaultdict(dict)   # (lib, transport, kind, np) -> size -> (time_us, busbw)
for r in csv.DictReader(open(sys.argv[1])):
    key = (r["lib"], r["transport"], r["kind"], int(r["np"]))
    size, t, bw = int(r["size"]), float(r["time_us"]), float(r["busbw"])
    old = rows[key].get(size)
    if old is None or bw > old[1]:   # gloo allreduce: best of ring and hd
        rows[key][size] = (t, bw)

PAIRS = [("shm", "mpi", "shm"), ("tcp", "mpi", "tcp"), ("tcp", "gloo", "tcp")]
KINDS = ["allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall"]
nps = sorted({k[3] for k in rows})

def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)

summary = []
for kind in KINDS:
    for np in nps:
        for ours_t, lib, theirs_t in PAIRS:
            ours = rows.get(("cohort", ours_t, kind, np))
            theirs = rows.get((lib, theirs_t, kind, np))
            if not ours or not theirs:
                continue
            print(f"## {kind}  np={np}  cohort {ours_t} / {lib} {theirs_t}")
            print(f"#{'size':>11}  {'ours_busbw':>10}  {'their_busbw':>11}  {'busbw_ratio':>11}")
            for size in sorted(set(ours) & set(theirs)):
                o, t = ours[size][1], theirs[size][1]
                print(f"{size:>12}  {o:>10.3f}  {t:>11.3f}  {fmt(o / t if t > 0 else None, '.2f'):>11}")
            lat = [ours.get(1024), theirs.get(1024)]
            tr = lat[0][0] / lat[1][0] if all(lat) and lat[1][0] > 0 else None
            if all(lat):
                print(f"# 1 KiB time: ours {lat[0][0]:.2f} us, theirs {lat[1][0]:.2f} us, "
                      f"ratio {fmt(tr, '.2f')}")
            print()
            def bw_ratio(s):
                if s in ours and s in theirs and theirs[s][1] > 0:
                    return ours[s][1] / theirs[s][1]
                return None
            summary.append((kind, np, f"{ours_t}/{lib}-{theirs_t}", tr,
                            bw_ratio(1 << 20), bw_ratio(16 << 20)))

print("# Summary: ours / theirs (time: < 1 is faster; busbw: > 1 is faster)")
print(f"#{'collective':<15} {'np':>3}  {'pair':<14} {'time@1K':>8} {'busbw@1M':>9} {'busbw@16M':>10}")
for kind, np, pair, tr, b1, b16 in summary:
    print(f" {kind:<15} {np:>3}  {pair:<14} {fmt(tr, '.2f'):>8} {fmt(b1, '.2f'):>9} {fmt(b16, '.2f'):>10}")

# The memory ceiling of a 16 MiB allreduce, from the memcpy_bench runs made
# before each of our runs (the memcpy blocks in cohort_np*.txt). Each rank
# reads its 1/N of every input and writes it to every output: N copies of the
# buffer in all, which on two processors take at least N x 16 MiB / (the copy
# bandwidth of both together): busbw 2(N-1)/N^2 x the two-thread aggregate.
# The issue's ceiling, 4(N-1)/N^2 x one thread's memcpy, is that formula when
# two threads copy twice as fast as one. The streaming ceiling uses the copy
# with non-temporal stores, as our large operations write (plain stores also
# read every output line first: a third more traffic).
copies = defaultdict(list)   # (kind, threads) -> aggregate GB/s of 16 MiB copies
for path in sorted(glob.glob(os.path.join(sys.argv[2], "cohort_np*.txt"))) if sys.argv[2] else []:
    kind = None
    for line in open(path):
        if line.startswith("# memcpy bandwidth"):
            kind = "memcpy"
        elif line.startswith("# streaming memcpy bandwidth"):
            kind = "streaming"
        elif kind and not line.startswith("#"):
            tok = line.split()
            try:
                threads, size, aggregate = int(tok[0]), int(tok[1]), float(tok[4])
            except (ValueError, IndexError):
                kind = None
                continue
            if size == 16 << 20:
                copies[(kind, threads)].append(aggregate)
# The streaming ceiling of a collective at 16 MiB: the bytes its direct
# algorithm reads and writes over all ranks (S the size column), each moved at
# the two threads' copy rate (a copy of B bytes reads B and writes B).
#   allreduce       reads N*S, writes N*S   busbw 2(N-1)/N * S / t
#   allgather       reads S, writes N*S     (N-1)/N
#   reduce_scatter  reads N*S, writes S     (N-1)/N
#   broadcast       reads S, writes (N-1)*S 1
#   alltoall        reads N*S, writes N*S   (N-1)/N
# For allreduce that is 2(N-1)/N^2 x the two-thread copy rate.
TRAFFIC = {"allreduce": lambda n: 2 * n, "allgather": lambda n: n + 1,
           "reduce_scatter": lambda n: n + 1, "broadcast": lambda n: n,
           "alltoall": lambda n: 2 * n}
FACTOR = {"allreduce": lambda n: 2 * (n - 1) / n, "broadcast": lambda n: 1.0}

def streaming_ceiling(kind, n, two_threads):
    f = FACTOR.get(kind, lambda n: (n - 1) / n)(n)
    return 2 * f * two_threads / TRAFFIC[kind](n)

want = [("memcpy", 1), ("memcpy", 2), ("streaming", 1), ("streaming", 2)]
if all(k in copies for k in want):
    bw = {k: statistics.median(copies[k]) for k in want}
    print()
    print(f"# Memory ceiling of allreduce at 16 MiB, GB/s (medians of "
          f"{len(copies[('memcpy', 1)])} runs of memcpy_bench -s 16M before ours):")
    print(f"#   memcpy            one thread {bw[('memcpy', 1)]:6.2f}  two together "
          f"{bw[('memcpy', 2)]:6.2f}  ({bw[('memcpy', 2)] / bw[('memcpy', 1)]:.2f}x one)")
    print(f"#   non-temporal      one thread {bw[('streaming', 1)]:6.2f}  two together "
          f"{bw[('streaming', 2)]:6.2f}  ({bw[('streaming', 2)] / bw[('streaming', 1)]:.2f}x one)")
    print(f"#{'np':>3}  {'ours_busbw':>10}  {'issue_ceiling':>13}  {'ours_of_it':>10}  "
          f"{'streaming_ceiling':>17}  {'ours_of_it':>10}")
    for np in nps:
        ours = rows.get(("cohort", "shm", "allreduce", np), {}).get(16 << 20)
        if not ours:
            continue
        issue = 4 * (np - 1) / np ** 2 * bw[("memcpy", 1)]
        streaming = streaming_ceiling("allreduce", np, bw[("streaming", 2)])
        print(f"{np:>4}  {ours[1]:>10.3f}  {issue:>13.3f}  {ours[1] / issue:>10.0%}  "
              f"{streaming:>17.3f}  {ours[1] / streaming:>10.0%}")

    # Every collective's streaming ceiling, and what the floor (5x OpenMPI for
    # allreduce, 2x for the others) asks as a share of it: above 100% no
    # algorithm that moves these bytes through memory reaches it.
    floor = {"allreduce": 5.0}
    print()
    print(f"# Streaming ceiling at 16 MiB (busbw GB/s; two threads' non-temporal copy "
          f"{bw[('streaming', 2)]:.2f} GB/s)")
    print(f"#{'collective':<15} {'np':>3}  {'ours':>7}  {'openmpi':>7}  {'ceiling':>7}  "
          f"{'ours_of_it':>10}  {'floor_needs':>11}")
    for kind in KINDS:
        for np in nps:
            ours = rows.get(("cohort", "shm", kind, np), {}).get(16 << 20)
            theirs = rows.get(("mpi", "shm", kind, np), {}).get(16 << 20)
            if not ours:
                continue
            ceiling = streaming_ceiling(kind, np, bw[("streaming", 2)])
            needs = (f"{floor.get(kind, 2.0) * theirs[1] / ceiling:>11.0%}" if theirs
                     else f"{'-':>11}")
            print(f" {kind:<15} {np:>3}  {ours[1]:>7.3f}  {fmt(theirs[1] if theirs else None):>7}  "
                  f"{ceiling:>7.3f}  {ours[1] / ceiling:>10.0%}  {needs}")

# The machine of this run against the one the baselines were taken on: the
# harness's own references (its memcpy and tcp parts, in summary.txt) beside
# those of the baseline summary, medians over rounds. The floors are ratios to
# OpenMPI measured here; where this machine copies slower than the baseline's,
# memory-bound operations (ours) lose more than latency-bound ones.
MEMCPY_LINE = re.compile(r"^\s*memcpy\s+(\S+)\s+threads=(\d+)\s+per-thread mean\s+\S+"
                         r"\s+best\s+\S+\s+aggregate\s+([\d.]+)")
TCP_LINE = re.compile(r"^\s*(pingpong|stream|bidir)\s+(\d+) B\s+(\S+)\s+([\d.]+)\s+(us|GB/s)")

def references(path):
    found = defaultdict(list)   # label -> values
    for line in open(path):
        m = MEMCPY_LINE.match(line)
        if m:
            size, threads, aggregate = m.group(1), int(m.group(2)), float(m.group(3))
            label = f"memcpy {size}, {threads} thread{'s' if threads > 1 else ''} (GB/s)"
            found[label].append(aggregate)
            continue
        m = TCP_LINE.match(line)
        if m:
            kind, size, what, value, unit = m.groups()
            size = int(size)
            shown = f"{size >> 20}M" if size >= 1 << 20 else f"{size >> 10}K"
            found[f"tcp {kind} {shown} {what} ({unit})"].append(float(value))
    return {k: statistics.median(v) for k, v in found.items()}

today_path = os.path.join(sys.argv[2], "summary.txt") if sys.argv[2] else ""
if today_path and os.path.exists(today_path) and sys.argv[3] and os.path.exists(sys.argv[3]):
    today, base = references(today_path), references(sys.argv[3])
    common = [k for k in base if k in today]
    if common:
        print()
        print(f"# This machine against the baselines' ({sys.argv[3]}), medians:")
        print(f"#{'reference':<40} {'today':>8}  {'baseline':>8}  {'today/baseline':>14}")
        for k in common:
            print(f" {k:<40} {today[k]:>8.2f}  {base[k]:>8.2f}  {today[k] / base[k]:>14.2f}")

# The 1 MiB allreduce against the time its bytes take to move. Each rank of the
# direct algorithm reads 1/N of every input and writes its reduced block to every
# output: at least a copy of the whole buffer per rank, N copies over the two
# processors, each copying at half the harness's two-thread 1 MiB aggregate. The
# floor (5x OpenMPI's busbw) gives a time; floor_needs is the copies' time as a
# share of it: above 100% no algorithm that moves these bytes reaches it here.
copy1m = (references(today_path).get("memcpy 1M, 2 threads (GB/s)")
          if today_path and os.path.exists(today_path) else None)
if copy1m:
    mib = 1 << 20
    print()
    print(f"# The 1 MiB allreduce against its copies (two threads copy 1 MiB at "
          f"{copy1m:.2f} GB/s together; times in us)")
    print(f"#{'np':>3}  {'ours':>7}  {'openmpi':>7}  {'floor':>7}  {'copies':>7}  "
          f"{'ours_of_it':>10}  {'floor_needs':>11}")
    for np in nps:
        ours = rows.get(("cohort", "shm", "allreduce", np), {}).get(mib)
        theirs = rows.get(("mpi", "shm", "allreduce", np), {}).get(mib)
        if not ours or not theirs:
            continue
        copies_us = np * mib / (copy1m * 1e3)
        floor_us = theirs[0] / 5.0
        print(f"{np:>4}  {ours[0]:>7.1f}  {theirs[0]:>7.1f}  {floor_us:>7.1f}  {copies_us:>7.1f}  "
              f"{copies_us / ours[0]:>10.0%}  {copies_us / floor_us:>11.0%}")
PY
}

if [ "${1:-}" = "--ratios" ]; then
  dir=${2:-"${RES:-${TMPDIR:-/tmp}/cohort-peers/results}"}
  ratios "$dir/all_rows.csv" "$dir" "$BASELINE"
  exit 0
fi

# --against OLD_BUILD: this build against another build of Cohort (a checkout
# of main before a change, built with cmake -B OLD_BUILD), no peers: every
# round runs both builds' cohort-perf back to back for each transport:ranks
# pair, the order swapped each round, then round_ratios.py's table of new /
# old busbw per size and the cells below FLOOR.
if [ "${1:-}" = "--against" ]; then
  old=${2:?usage: compare.sh --against OLD_BUILD_DIR}
  new=${COHORT_BUILD:-"$HERE/../build"}
  CONFIGS=${CONFIGS:-"shm:2 shm:4 shm:8 tcp:2 tcp:4"}
  COLLS=${COLLS:-"allreduce,allgather,reducescatter,broadcast,alltoall"}
  SWEEP=${SWEEP:-"-b 8 -e 16M -f 4 -n 500 -w 20 -B 1G"}
  OUT=${OUT:-$(mktemp -d /tmp/compare_builds.XXXXXX)}
  mkdir -p "$OUT"
  for dir in "$old" "$new"; do
    for bin in tools/perf/cohort-perf tools/cohortrun/cohortrun; do
      [ -x "$dir/$bin" ] || { echo "compare.sh: $dir/$bin is not built" >&2; exit 2; }
    done
  done
  for round in $(seq 1 "${REPEAT:-3}"); do
    order="old new"
    [ $((round % 2)) = 0 ] && order="new old"
    for config in $CONFIGS; do
      transport=${config%%:*} ranks=${config##*:}
      for which in $order; do
        dir=$old
        [ "$which" = new ] && dir=$new
        base="$OUT/r${round}_${transport}_${ranks}_${which}"
        echo "round $round: $transport x $ranks, $which ($dir)"
        # shellcheck disable=SC2086  # SWEEP and EXTRA are lists of flags
        "$dir/tools/cohortrun/cohortrun" -n "$ranks" "$dir/tools/perf/cohort-perf" "$COLLS" \
          $SWEEP -c 0 -t "$transport" ${EXTRA:-} --json "$base.json" > "$base.log" 2>&1 ||
          { echo "FAILED: see $base.log" >&2; exit 1; }
      done
    done
  done
  echo "results in $OUT"
  /usr/bin/python3 "$HERE/round_ratios.py" "$OUT" old "${FLOOR:-0.95}" | tee "$OUT/ratios.txt"
  exit 0
fi

[ -x "$PEERS/run_peers.sh" ] || { echo "compare.sh: no $PEERS/run_peers.sh (set COHORT_SHARED)" >&2; exit 2; }
BUILD_TREE="$HERE/../build"
COHORT_PERF=${COHORT_PERF:-"$BUILD_TREE/tools/perf/cohort-perf"}
COHORTRUN=${COHORTRUN:-"$BUILD_TREE/tools/cohortrun/cohortrun"}
for bin in "$COHORT_PERF" "$COHORTRUN"; do
  [ -x "$bin" ] || { echo "compare.sh: $bin is not built" >&2; exit 2; }
done
TRANSPORTS=${TRANSPORTS:-"shm tcp"}
COLLS=${COLLS:-"allreduce,allgather,reducescatter,broadcast,alltoall"}
EXTRA=${EXTRA:-}

# One cohortrun per transport; rank 0's lines without cohortrun's "[0] " prefix,
# other ranks' lines dropped; pipefail keeps a failing rank's exit status.
# Before them, the memory ceiling of that round (printed after the ratios):
# memcpy of 16 MiB on one and two threads, with glibc's non-temporal stores
# (its own path above x86_non_temporal_threshold, lowered here to 1 MiB) and
# without (as the issue measures it). The first block's header is renamed so
# that summarize.py, which reads only "# memcpy bandwidth" blocks, skips it.
MEMCPY_BENCH="${BUILD:-${TMPDIR:-/tmp}/cohort-peers/build}/memcpy_bench"
cmd="set -o pipefail"
cmd+=" && GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold=0x100000 '$MEMCPY_BENCH' -s 16M -n 30 -t 2"
cmd+=" | sed 's/^# memcpy bandwidth/# streaming memcpy bandwidth/'"
cmd+=" && '$MEMCPY_BENCH' -s 16M -n 30 -t 2"
for t in $TRANSPORTS; do
  cmd+=" && '$COHORTRUN' -n {np} '$COHORT_PERF' $COLLS {sweep} -t $t $EXTRA"
  cmd+=" | sed -e '/^\\[[1-9][0-9]*\\] /d' -e 's/^\\[0\\] //'"
done

export NPS=${NPS:-"2 4 8"} REPEAT=${REPEAT:-3}
export PARTS=${PARTS:-"memcpy tcp mpi_shm mpi_tcp gloo new"}
export NEW_CMD="$cmd" NEW_NAME=cohort
export RES=${RES:-"${TMPDIR:-/tmp}/cohort-peers/results"}
echo "compare.sh: NPS=\"$NPS\" REPEAT=$REPEAT TRANSPORTS=\"$TRANSPORTS\" results in $RES" >&2
mkdir -p "$RES"
rc=0
"$PEERS/run_peers.sh" || rc=$?
echo
ratios "$RES/all_rows.csv" "$RES" "$BASELINE" | tee "$RES/ratios.txt"
exit $rc
