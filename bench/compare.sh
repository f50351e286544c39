#!/usr/bin/env bash
# compare.sh - cohort-perf side by side with OpenMPI (shm, tcp) and Gloo (tcp),
# interleaved in the same rounds by ../shared/peers/run_peers.sh, then the ratios
# ours / theirs per size.
#
#   bench/compare.sh                         # NPS="2 4 8", REPEAT=3 (~15 min)
#   NPS="2 4" REPEAT=3 bench/compare.sh
#   bench/compare.sh --ratios RESULTS_DIR    # ratios again from an earlier run
#
# Cohort runs through NEW_CMD once per transport in TRANSPORTS (default "shm tcp"):
#   cohortrun -n {np} cohort-perf COLLS {sweep} -t T
# with rank 0's lines kept (cohortrun prefixes them "[0] "). Its shm rows are
# compared with MPI over shm (vader); its tcp rows with MPI over tcp and Gloo
# (for allreduce the better of Gloo's ring and halving-doubling at each size).
# Printed per collective, rank count and pair: busbw of both and busbw ratio at
# every size, the 1 KiB time ratio, then a summary at 1 KiB / 1 MiB / 16 MiB.
# Ratios > 1 mean Cohort is faster (for time: < 1 is faster).
#
# Knobs (environment):
#   NPS REPEAT       rank counts and interleaved rounds (default "2 4 8", 3)
#   TRANSPORTS       cohort-perf -t values to run (default "shm tcp")
#   COLLS            cohort-perf collectives (default the five the peers run)
#   PARTS            run_peers.sh parts (default "mpi_shm mpi_tcp gloo new")
#   EXTRA            more cohort-perf flags (e.g. "-A ring")
#   COHORT_PERF COHORTRUN  the binaries (default: this tree's build/)
#   COHORT_SHARED    the shared folder (default: ../../shared from this script)
#   RES BUILD ...    passed on to run_peers.sh (see its header)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${COHORT_SHARED:-$(dirname "$0")/../../shared}
PEERS="$SHARED/peers"
[ -x "$PEERS/run_peers.sh" ] || { echo "compare.sh: no $PEERS/run_peers.sh (set COHORT_SHARED)" >&2; exit 2; }

ratios() {  # ratios CSV: the tables, from summarize.py's merged rows
  python3 - "$1" <<'PY'
import csv, sys
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
PY
}

if [ "${1:-}" = "--ratios" ]; then
  dir=${2:-"${RES:-${TMPDIR:-/tmp}/cohort-peers/results}"}
  ratios "$dir/all_rows.csv"
  exit 0
fi

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
cmd="set -o pipefail"
for t in $TRANSPORTS; do
  cmd+=" && '$COHORTRUN' -n {np} '$COHORT_PERF' $COLLS {sweep} -t $t $EXTRA"
  cmd+=" | sed -e '/^\\[[1-9][0-9]*\\] /d' -e 's/^\\[0\\] //'"
done

export NPS=${NPS:-"2 4 8"} REPEAT=${REPEAT:-3}
export PARTS=${PARTS:-"mpi_shm mpi_tcp gloo new"}
export NEW_CMD="$cmd" NEW_NAME=cohort
export RES=${RES:-"${TMPDIR:-/tmp}/cohort-peers/results"}
echo "compare.sh: NPS=\"$NPS\" REPEAT=$REPEAT TRANSPORTS=\"$TRANSPORTS\" results in $RES" >&2
mkdir -p "$RES"
rc=0
"$PEERS/run_peers.sh" || rc=$?
echo
ratios "$RES/all_rows.csv" | tee "$RES/ratios.txt"
exit $rc
