#!/usr/bin/env bash
# HCCL programs built as their authors build them for Ascend: the runtime and
# dev components of the build tree are installed into a scratch prefix, which
# becomes ASCEND_HOME; each program is compiled with
#   g++ test.cpp -I$ASCEND_HOME/include -L$ASCEND_HOME/lib64 -lhccl -lascendcl
# (mpicxx for the MPI one) and run with 4 ranks:
#   cluster_collectives   rank table -> HcclCommInitClusterInfo, under mpirun and
#                         under cohortrun (when COHORTRUN is given and exists)
#   root_info_allreduce   HcclGetRootInfo + MPI_Bcast + HcclCommInitRootInfo, mpirun
# Every network address is 127.0.0.1.
#   hccl_program_test.sh BUILD_DIR PROGRAMS_DIR [COHORTRUN]
set -euo pipefail
build=$1 programs=$(realpath "$2") cohortrun=${3:-}
[ -n "$cohortrun" ] && [ -e "$cohortrun" ] && cohortrun=$(realpath "$cohortrun")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for component in runtime dev; do
  cmake --install "$build" --prefix "$work/ascend" --component $component >> "$work/install.log" ||
    { cat "$work/install.log"; exit 1; }
done
export ASCEND_HOME=$work/ascend
test -f "$ASCEND_HOME/lib64/libhccl.so"
test -f "$ASCEND_HOME/include/hccl/hccl.h"
test -f "$ASCEND_HOME/include/hccl/hccl_types.h"
test -f "$ASCEND_HOME/include/hccl/hccl_comm.h"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A one-server rank table: rank r on device r, rank 0 serving the store at
# 127.0.0.1 on HCCL_IF_BASE_PORT.
table=$work/rank_table.json
{
  printf '{"status":"completed","version":"1.0","server_count":"1","server_list":[{'
  printf '"server_id":"node-0","host_ip":"127.0.0.1","device":['
  for r in 0 1 2 3; do
    [ $r -gt 0 ] && printf ','
    printf '{"device_id":"%d","device_ip":"192.168.100.%d","rank_id":"%d"}' $r $((r + 1)) $r
  done
  printf ']}]}\n'
} > "$table"

failed=0
fail() { echo "FAIL $1"; [ -f "${2:-}" ] && cat "$2"; failed=1; }

# compile NAME COMPILER: the program in $work/NAME/a.out
compile() {
  mkdir -p "$work/$1"
  cp "$programs/$1.cpp" "$work/$1/test.cpp"
  (cd "$work/$1" && $2 test.cpp -I$ASCEND_HOME/include -L$ASCEND_HOME/lib64 -lhccl -lascendcl) \
    > "$work/$1/compile.log" 2>&1 || { fail "$1: does not compile" "$work/$1/compile.log"; return 1; }
}

# expect_lines LOG TEXT: TEXT appears on 4 lines of LOG (one per rank).
expect_lines() {
  local n
  n=$(grep -c -- "$2" "$1" || true)
  [ "$n" = 4 ] || { fail "$(basename "$(dirname "$1")"): expected 4 lines with '$2', got $n" "$1"; return 1; }
}

mpirun_args=(--allow-run-as-root --oversubscribe -np 4 --bind-to none --mca btl self,vader
             -x LD_LIBRARY_PATH=$ASCEND_HOME/lib64 -x HCCL_IF_IP=127.0.0.1
             -x COHORT_DEVICE_MEMORY=256M)

if compile cluster_collectives g++; then
  log=$work/cluster_collectives/mpirun.log
  if (cd "$work/cluster_collectives" &&
      HCCL_IF_BASE_PORT=$(free_port) timeout 120 mpirun "${mpirun_args[@]}" \
        -x HCCL_IF_BASE_PORT ./a.out "$table") > "$log" 2>&1; then
    expect_lines "$log" "all checks passed" && echo "ok cluster_collectives under mpirun"
  else
    fail "cluster_collectives under mpirun: exit status $?" "$log"
  fi
  if [ -n "$cohortrun" ] && [ -x "$cohortrun" ]; then
    log=$work/cluster_collectives/cohortrun.log
    if (cd "$work/cluster_collectives" &&
        LD_LIBRARY_PATH=$ASCEND_HOME/lib64 HCCL_IF_BASE_PORT=$(free_port) HCCL_IF_IP=127.0.0.1 \
        COHORT_DEVICE_MEMORY=256M timeout 120 "$cohortrun" -n 4 -- ./a.out "$table") \
        > "$log" 2>&1; then
      expect_lines "$log" "all checks passed" && echo "ok cluster_collectives under cohortrun"
    else
      fail "cluster_collectives under cohortrun: exit status $?" "$log"
    fi
  else
    echo "skip cluster_collectives under cohortrun: no cohortrun binary"
  fi
  # The program needs only libhccl and libascendcl: they find Cohort's libraries.
  deps=$(LD_LIBRARY_PATH=$ASCEND_HOME/lib64 ldd "$work/cluster_collectives/a.out")
  if ! grep -qF "$ASCEND_HOME/lib64/libhccl.so" <<<"$deps" ||
     ! grep libcohort_collective <<<"$deps" | grep -qF "$ASCEND_HOME/"; then
    fail "a.out does not load the installed libraries"; echo "$deps"
  fi
fi

if compile root_info_allreduce mpicxx; then
  log=$work/root_info_allreduce/mpirun.log
  if (cd "$work/root_info_allreduce" && timeout 120 mpirun "${mpirun_args[@]}" ./a.out) \
      > "$log" 2>&1; then
    expect_lines "$log" "root-info allreduce 0 wrong" && echo "ok root_info_allreduce under mpirun"
  else
    fail "root_info_allreduce under mpirun: exit status $?" "$log"
  fi
fi

[ $failed = 0 ] && echo "hccl programs passed"
exit $failed
