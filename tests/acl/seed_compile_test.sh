#!/usr/bin/env bash
# The seed documents' sample programs (tests/acl/seeds/*.cpp), built as their
# authors build them: the build tree is installed into a scratch prefix, that
# prefix becomes ASCEND_HOME, and each sample is compiled with the seeds' own
# command line, then run with $ASCEND_HOME/lib64 on the library path (as the
# seed says to) and its output checked.
#   seed_compile_test.sh BUILD_DIR SEEDS_DIR
set -euo pipefail
build=$1 seeds=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/ascend" > "$work/install.log" ||
  { cat "$work/install.log"; exit 1; }
export ASCEND_HOME=$work/ascend
test -f "$ASCEND_HOME/lib64/libascendcl.so"
test -f "$ASCEND_HOME/include/acl/acl.h"

# sample -> lines its output must contain ('|' separates lines)
declare -A expected=(
  [init_finalize]="acl init/finalize ok"
  [set_get_device]="current device id: 0"
  [malloc_memcpy]="aclrtMalloc ok|roundtrip ok|aclrtFree ok"
  [two_stream_event]="stream B saw stream A's data|elapsed ms ok"
)
failed=0
for sample in "${!expected[@]}"; do
  dir=$work/$sample
  mkdir -p "$dir"
  cp "$seeds/$sample.cpp" "$dir/test.cpp"
  if ! (cd "$dir" && g++ test.cpp -I$ASCEND_HOME/include -L$ASCEND_HOME/lib64 -lascendcl) \
      > "$dir/compile.log" 2>&1; then
    echo "FAIL $sample: does not compile"; cat "$dir/compile.log"; failed=1; continue
  fi
  status=0
  out=$(cd "$dir" && LD_LIBRARY_PATH=$ASCEND_HOME/lib64 ./a.out 2>&1) || status=$?
  if [ $status -ne 0 ]; then
    echo "FAIL $sample: exit status $status"; echo "$out"; failed=1; continue
  fi
  IFS='|' read -r -a lines <<<"${expected[$sample]}"
  for line in "${lines[@]}"; do
    if ! grep -qF -- "$line" <<<"$out"; then
      echo "FAIL $sample: output lacks '$line'"; echo "$out"; failed=1
    fi
  done
  echo "ok $sample"
done
# The program needs only libascendcl: it finds Cohort's libraries itself.
deps=$(LD_LIBRARY_PATH=$ASCEND_HOME/lib64 ldd "$work/init_finalize/a.out")
if ! grep -qF "$ASCEND_HOME/lib64/libascendcl.so" <<<"$deps" ||
   ! grep libcohort_runtime <<<"$deps" | grep -qF "$ASCEND_HOME/"; then
  echo "FAIL: a.out does not load the installed libraries"; echo "$deps"; failed=1
fi
[ $failed = 0 ] && echo "seed samples passed"
exit $failed
