#!/usr/bin/env bash
# Builds the three Debian packages, compiles the consumer against cohort-dev (plus
# the runtime it depends on), then runs it with nothing of Cohort but the unpacked
# cohort-runtime package on its library path.
set -euo pipefail
build=$1 consumer=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work/debs" > "$work/cpack.log") || { cat "$work/cpack.log"; exit 1; }
ls "$work/debs"/*.deb
runtime=$(ls "$work"/debs/cohort-runtime_*.deb)
dev=$(ls "$work"/debs/cohort-dev_*.deb)
tools=$(ls "$work"/debs/cohort-tools_*.deb)
# cohort-runtime holds shared libraries, the environment script (set_env.sh and its
# link bin/setenv.bash) and version files only.
if dpkg-deb -c "$runtime" | awk '{print $6}' | grep -v -e '/$' -e '/bin/setenv\.bash$' |
    grep -E '\.(h|cmake|pc)$|/bin/|/stub/'; then
  echo "cohort-runtime contains more than libraries"; exit 1
fi
# (Listings go to variables first: grep -q in a pipe under pipefail can kill the
# writer with SIGPIPE and fail the test at random.)
devList=$(dpkg-deb -c "$dev")
grep -q 'include/cohort/runtime.h' <<<"$devList"
grep -q 'lib64/stub/libascendcl.so' <<<"$devList"
runtimeList=$(dpkg-deb -c "$runtime")
grep -q '/set_env.sh$' <<<"$runtimeList"
runtimeInfo=$(dpkg-deb -I "$runtime")
grep -q 'Package: cohort-runtime' <<<"$runtimeInfo"
test -n "$tools"
# Development machine: dev + runtime.
dpkg -x "$dev" "$work/devroot"
dpkg -x "$runtime" "$work/devroot"
cmake -S "$consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/devroot/usr" \
  -DCMAKE_SKIP_RPATH=ON > "$work/cfg.log"
cmake --build "$work/build" > "$work/build.log"
# Production machine: the runtime package alone.
dpkg -x "$runtime" "$work/rtroot"
libdir=$(dirname "$(find "$work/rtroot" -name 'libcohort_runtime.so.*' | head -1)")
out=$(LD_LIBRARY_PATH="$libdir" "$work/build/consumer")
echo "$out"
grep -q "consumer OK" <<<"$out"
# And it really loaded the unpacked runtime.
deps=$(LD_LIBRARY_PATH="$libdir" ldd "$work/build/consumer")
grep cohort_runtime <<<"$deps" | grep "$work/rtroot"
echo "runtime-only package test passed"
