#!/usr/bin/env bash
# Link health check before training, in one script (what HCCL users do with
# hccn_tool before a job):
#   1. validate the rank table            cohort-ranktable validate
#   2. check every link between the ranks cohortrun ... cohort-linkcheck
#   3. refuse to train if any link is bad or slower than --min-gbps (exit 1,
#      naming the bad links); otherwise start the training job (example 3,
#      mpirun_allreduce) with cohortrun on the same rank table.
#
#   examples/check_then_train.sh -n 4                  this machine, 4 ranks
#   examples/check_then_train.sh --ranktable rt.json   a rank table of this machine
#   examples/check_then_train.sh -n 4 --min-gbps 2 -- --steps 50   (after --: training options)
#
# Without --ranktable, a one-server table of N devices is generated (loopback
# addresses, and COHORT_IF_IP defaults to 127.0.0.1). Programs come from --build DIR (default: build/ next to this
# folder), else from PATH. Exit status: 0 trained; 1 invalid table, bad links or
# failed training; 2 bad command line or a missing program.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build="$here/../build"
ranks=4
ranktable=""
min_gbps=0
timeout=30
json=""
train_args=()

usage() {
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2
  echo "options: -n N, --ranktable FILE, --min-gbps X, --timeout S, --json FILE, --build DIR" >&2
  exit 2
}
say() { printf 'check_then_train: %s\n' "$*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    -n) ranks=${2:?}; shift 2 ;;
    --ranktable) ranktable=${2:?}; shift 2 ;;
    --min-gbps) min_gbps=${2:?}; shift 2 ;;
    --timeout) timeout=${2:?}; shift 2 ;;
    --json) json=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --) shift; train_args=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "check_then_train: unknown option '$1'" >&2; usage ;;
  esac
done

# find NAME SUBDIR: the program in the build tree, else on PATH.
find_program() {
  if [ -x "$build/$2/$1" ]; then echo "$build/$2/$1"; return; fi
  if command -v "$1" >/dev/null 2>&1; then command -v "$1"; return; fi
  echo "check_then_train: $1 not found in $build/$2 nor on PATH (build it, or pass --build DIR)" >&2
  exit 2
}
cohortrun=$(find_program cohortrun tools/cohortrun) || exit 2
ranktool=$(find_program cohort-ranktable tools/ranktable) || exit 2
linkcheck=$(find_program cohort-linkcheck tools/linkcheck) || exit 2
trainer=$(find_program mpirun_allreduce examples) || exit 2

work=$(mktemp -d "${TMPDIR:-/tmp}/check_then_train.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ -n "$json" ] || json="$work/links.json"

# 1. The rank table.
if [ -z "$ranktable" ]; then
  ranktable="$work/ranktable.json"
  "$ranktool" generate --servers 1 --devices "$ranks" --ip-base 127.0.0.1 \
    --host-ip-base 127.0.0.1 -o "$ranktable" || exit 1
  say "generated a rank table for this machine: $ranks ranks"
  export COHORT_IF_IP=${COHORT_IF_IP:-127.0.0.1}  # one machine: loopback only
fi
say "1/3 validating the rank table $ranktable"
if ! "$ranktool" validate "$ranktable"; then
  say "refusing to start training: the rank table $ranktable is invalid (errors above)"
  exit 1
fi

# 2. Every link, as a job of the table's ranks.
say "2/3 checking every link (cohort-linkcheck, timeout $timeout s, min $min_gbps GB/s)"
"$cohortrun" --ranktable "$ranktable" -- "$linkcheck" --timeout "$timeout" \
  --min-gbps "$min_gbps" --json "$json" 2>&1 | tee "$work/linkcheck.log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  # Report lines look like "BAD  rank 0 (addr) <-> rank 2 (addr): cause".
  bad=$(grep -oE '[A-Z]{2,} +rank [0-9]+ \([^)]*\) <-> rank [0-9]+ \([^)]*\): .*' \
    "$work/linkcheck.log" | sed -E 's/ +/ /' | sort -u)
  say "refusing to start training: cohort-linkcheck exited $status"
  if [ -n "$bad" ]; then
    say "bad links:"
    printf '%s\n' "$bad" | sed 's/^/  /'
  else
    say "no link verdicts were printed (see the output above)"
  fi
  exit 1
fi
say "all links ok (report: $json)"

# 3. The training job on the same ranks.
say "3/3 starting training: cohortrun --ranktable $ranktable -- mpirun_allreduce ${train_args[*]}"
"$cohortrun" --ranktable "$ranktable" -- "$trainer" "${train_args[@]}"
status=$?
[ "$status" -eq 0 ] || say "training failed (exit $status)"
exit "$status"
