#!/usr/bin/env bash
# Link health check before training, in one script (what HCCL users do with
# hccn_tool before a job):
#   1. validate the rank table            cohort-ranktable validate
#   2. check every link between the ranks cohortrun ... cohort-linkcheck
#   3. refuse to train if any link is bad, unreachable, or slow: under
#      --min-ratio (default 0.5) of the median of its class (every shm, tcp or
#      rdma link of the job), or under --min-gbps when given (exit 1, naming the
#      links); otherwise start the training job (example 3, mpirun_allreduce)
#      with cohortrun on the same rank table.
#
#   examples/check_then_train.sh -n 4                  this machine, 4 ranks
#   examples/check_then_train.sh --ranktable rt.json   a rank table of this machine
#   examples/check_then_train.sh -n 4 --min-gbps 2 -- --steps 50   (after --: training options)
#   examples/check_then_train.sh -n 4 --plot links.svg   (the link matrix, flagged links marked)
#   examples/check_then_train.sh --ranktable rt.json --server-id ID   on EVERY server
#
# Without --ranktable, a one-server table of N devices is generated (loopback
# addresses, and COHORT_IF_IP defaults to 127.0.0.1). With --server-id, this is
# one machine of a multi-server job: run it on every server of the table with
# that server's id and the same COHORT_JOB_TOKEN; each starts only its ranks.
# The server holding rank 0 serves the job's store at --master ADDR:PORT
# (default: its host_ip, port 29500): the link check there, training at PORT+1.
# Programs come from --build DIR (default: build/ next to this folder), else from
# PATH. Exit status: 0 trained; 1 invalid table, bad links or failed training;
# 2 bad command line or a missing program.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build="$here/../build"
ranks=4
ranktable=""
min_gbps=0
min_ratio=0.5
timeout=30
json=""
plot=""
server_id=""
master=""
train_args=()

usage() {
  sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2
  echo "options: -n N, --ranktable FILE, --server-id ID, --master ADDR:PORT, --min-ratio R," \
    "--min-gbps X, --timeout S, --json FILE, --plot FILE.svg, --build DIR" >&2
  exit 2
}
say() { printf 'check_then_train: %s\n' "$*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    -n) ranks=${2:?}; shift 2 ;;
    --ranktable) ranktable=${2:?}; shift 2 ;;
    --min-gbps) min_gbps=${2:?}; shift 2 ;;
    --min-ratio) min_ratio=${2:?}; shift 2 ;;
    --plot) plot=${2:?}; shift 2 ;;
    --timeout) timeout=${2:?}; shift 2 ;;
    --json) json=${2:?}; shift 2 ;;
    --server-id) server_id=${2:?}; shift 2 ;;
    --master) master=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --) shift; train_args=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "check_then_train: unknown option '$1'" >&2; usage ;;
  esac
done
if [ -n "$server_id" ] && [ -z "$ranktable" ]; then
  echo "check_then_train: --server-id needs --ranktable FILE" >&2; usage
fi
if [ -n "$master" ] && [ -z "$server_id" ]; then
  echo "check_then_train: --master needs --server-id ID (one machine needs no master)" >&2; usage
fi

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
"$ranktool" validate "$ranktable" | tee "$work/table.txt"
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
  say "refusing to start training: the rank table $ranktable is invalid (errors above)"
  exit 1
fi

# Where the jobs meet: one machine, cohortrun's own store; several, the store of
# the server holding rank 0. The check and the training get a port each, so that
# a machine that starts training early never reaches the check's store.
launch=(--ranktable "$ranktable")
check_master=()
train_master=()
servers=$(sed -nE 's/^servers: ([0-9]+) .*/\1/p' "$work/table.txt")
if [ -n "$server_id" ]; then
  if [ -z "$master" ]; then
    # The summary's line of rank 0's server: '  server 0 "ID" host ADDR: ranks 0..1, ...'.
    rank0='ranks (0|0\.\.[0-9]+|([0-9]+,)*0(,[0-9]+)*), devices'
    addr=$(sed -nE "s/^  server [0-9]+ \".*\" host ([^ ]+)( super pod \".*\")?: $rank0 .*/\\1/p" \
      "$work/table.txt" | head -n 1)
    if [ -z "$addr" ]; then
      echo "check_then_train: rank 0's server has no host_ip in $ranktable:" \
        "pass --master ADDR:PORT" >&2
      exit 2
    fi
    [[ $addr != *:* ]] || addr="[$addr]"
    master="$addr:29500"
  fi
  port=${master##*:}
  if ! [[ $port =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65534 ]; then
    echo "check_then_train: --master '$master' is not ADDR:PORT with PORT in 1..65534" >&2
    exit 2
  fi
  launch+=(--server-id "$server_id")
  check_master=(--master "$master")
  train_master=(--master "${master%:*}:$((10#$port + 1))")
  say "this machine: server '$server_id' of $servers; job store at $master" \
    "(training: port $((10#$port + 1)))"
elif [ "${servers:-1}" -gt 1 ]; then
  echo "check_then_train: $ranktable has $servers servers: run this script on each of them" \
    "with --server-id ID" >&2
  exit 2
fi

# 2. Every link, as a job of the table's ranks. The relative check is on by
# default: a link slower than --min-ratio of its class's median is flagged, so
# a degraded link is caught without knowing what this cluster's links move.
floor=""
[ "$min_gbps" = 0 ] || floor=", min $min_gbps GB/s"
say "2/3 checking every link (cohort-linkcheck, timeout $timeout s," \
  "min $min_ratio x its class median$floor)"
plot_args=()
[ -z "$plot" ] || plot_args=(--plot "$plot")
"$cohortrun" "${launch[@]}" "${check_master[@]}" -- "$linkcheck" --timeout "$timeout" \
  --min-ratio "$min_ratio" --min-gbps "$min_gbps" --json "$json" "${plot_args[@]}" 2>&1 |
  tee "$work/linkcheck.log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  # Report lines look like "SLOW rank 0 (addr) <-> rank 2 (addr): cause".
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
# Rank 0 writes the report, so only its machine has it.
if [ -f "$json" ]; then say "all links ok (report: $json)"; else say "all links ok"; fi

# 3. The training job on the same ranks.
say "3/3 starting training: cohortrun ${launch[*]} ${train_master[*]} --" \
  "mpirun_allreduce ${train_args[*]}"
"$cohortrun" "${launch[@]}" "${train_master[@]}" -- "$trainer" "${train_args[@]}"
status=$?
[ "$status" -eq 0 ] || say "training failed (exit $status)"
exit "$status"
