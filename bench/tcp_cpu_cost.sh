#!/usr/bin/env bash
# tcp_cpu_cost.sh - what a 16 MiB allreduce over loopback TCP costs in CPU time,
# Cohort's against OpenMPI's (btl tcp), in interleaved rounds: where the time of
# issue 42's tcp floor (2x OpenMPI-tcp) goes on this machine.
#
#   bench/tcp_cpu_cost.sh [--ranks "2 4 8"] [--rounds 3] [--iters 100]
#
# Each configuration runs twice under /usr/bin/time (user + system of all of its
# processes): with 1 timed call and with ITERS, so that the difference is the
# CPU of ITERS - 1 calls without the job's start and end. Printed per rank count,
# medians over the rounds: time per call, CPU per call over (time x processors)
# (1.0: every processor busy, so a call's time is its CPU over the processors),
# and CPU per GB sent (a ring sends 2(N-1)/N x 16 MiB per rank, the fewest bytes
# any allreduce can). With the processors busy, being 2x faster than OpenMPI
# means moving a byte for half its CPU; most of both is the kernel's copying
# (`bench/transport_bench_tcp` prints one loopback stream's cpu/GB for scale).
set -euo pipefail

ranks="2 4 8" rounds=3 iters=100
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    *) echo "tcp_cpu_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
build=${COHORT_BUILD:-$here/../build}
mpi_bench=${BUILD:-${TMPDIR:-/tmp}/cohort-peers/build}/mpi_coll_bench
for bin in "$build/tools/cohortrun/cohortrun" "$build/tools/perf/cohort-perf" "$mpi_bench"; do
  [ -x "$bin" ] || { echo "tcp_cpu_cost.sh: no $bin (build, and run bench/compare.sh once for the peers)" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp)
trap 'rm -f "$out" "$out".run' EXIT

# run LIB NP N: one run of N timed calls; appends "LIB NP N time_us cpu_s" to $out.
run() {
  local lib=$1 np=$2 n=$3 t
  local sweep=(-b 16M -e 16M -n "$n" -w 5 -c 0)
  if [ "$lib" = cohort ]; then
    /usr/bin/time -f "cpu %U %S" "$build/tools/cohortrun/cohortrun" -n "$np" \
      "$build/tools/perf/cohort-perf" allreduce "${sweep[@]}" -t tcp >"$out.run" 2>&1
    t=$(awk '$1 == "[0]" && $2 == 16777216 {print $7}' "$out.run")
  else
    /usr/bin/time -f "cpu %U %S" mpirun -np "$np" --oversubscribe --bind-to none --mca pml ob1 \
      --mca btl self,tcp --mca btl_tcp_if_include lo "$mpi_bench" "${sweep[@]}" -C allreduce \
      >"$out.run" 2>&1
    t=$(awk '$1 == 16777216 {print $6}' "$out.run")
  fi
  local cpu
  cpu=$(awk '$1 == "cpu" {print $2 + $3}' "$out.run")
  [ -n "$t" ] && [ -n "$cpu" ] || { echo "tcp_cpu_cost.sh: $lib at $np ranks failed:" >&2; cat "$out.run" >&2; exit 1; }
  echo "$lib $np $n $t $cpu" >>"$out"
  echo "round $round: $lib x $np, $n call(s): $t us/call, $cpu s CPU" >&2
}
both() { run "$1" "$2" 1; run "$1" "$2" "$iters"; }

for round in $(seq 1 "$rounds"); do
  for np in $ranks; do
    if [ $((round % 2)) = 1 ]; then both cohort "$np"; both openmpi "$np"; else both openmpi "$np"; both cohort "$np"; fi
  done
done

python3 - "$out" "$iters" "$(nproc)" <<'PY'
import statistics, sys
from collections import defaultdict
runs = defaultdict(dict)  # (lib, np) -> round index -> {n: (time_us, cpu_s)}
count = defaultdict(int)
for line in open(sys.argv[1]):
    lib, np, n, t, cpu = line.split()
    key, n = (lib, int(np)), int(n)
    if n == 1:
        count[key] += 1
    runs[key].setdefault(count[key], {})[n] = (float(t), float(cpu))
iters, cores = int(sys.argv[2]), int(sys.argv[3])
size = 16 << 20
rows = {}
for key, rounds in runs.items():
    np = key[1]
    sent = np * 2 * (np - 1) / np * size / 1e9  # GB all ranks send per call
    t, busy, per_gb = [], [], []
    for r in rounds.values():
        if 1 not in r or iters not in r:
            continue
        cpu_call = (r[iters][1] - r[1][1]) / (iters - 1)
        t.append(r[iters][0])
        busy.append(cpu_call / (r[iters][0] * 1e-6 * cores))
        per_gb.append(cpu_call / sent)
    if t:
        rows[key] = (statistics.median(t), statistics.median(busy), statistics.median(per_gb), len(t))
print(f"# 16 MiB allreduce over loopback tcp, medians of interleaved rounds, {iters} calls a run "
      f"less a 1-call run, {cores} processors")
print(f"#{'np':>3} {'cohort_us':>10} {'openmpi_us':>10} {'ratio':>6} {'cohort_busy':>11} "
      f"{'openmpi_busy':>12} {'cohort_s/GB':>11} {'openmpi_s/GB':>12}")
for np in sorted({k[1] for k in rows}):
    if ("cohort", np) not in rows or ("openmpi", np) not in rows:
        continue
    c, m = rows[("cohort", np)], rows[("openmpi", np)]
    print(f" {np:>3} {c[0]:>10.1f} {m[0]:>10.1f} {m[0] / c[0]:>6.2f} {c[1]:>11.2f} {m[1]:>12.2f} "
          f"{c[2]:>11.3f} {m[2]:>12.3f}")
PY
