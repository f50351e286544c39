#!/usr/bin/env bash
# Builds the rank table fuzzers with clang in build-fuzz/ and runs each for
# SECONDS (default 60) seconds. Exits non-zero if any fuzzer finds a crash, a
# leak or a timeout (the reproducer is left in build-fuzz/artifacts/).
#
#   fuzz/run_fuzzers.sh 60
#
# Builds take the lock COHORT_BUILD_LOCK (default /tmp/cohort-build.lock) so they
# never run alongside another build of the tree.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${root}/build-fuzz"
lock="${COHORT_BUILD_LOCK:-/tmp/cohort-build.lock}"
fuzzers=(ranktable_json_fuzzer ranktable_yaml_fuzzer store_protocol_fuzzer)

locked() {
  if command -v flock >/dev/null; then flock "${lock}" "$@"; else "$@"; fi
}

if [[ ! -f "${build}/CMakeCache.txt" ]]; then
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  CC=clang CXX=clang++ locked cmake -S "${root}" -B "${build}" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOHORT_BUILD_FUZZERS=ON \
    -DCOHORT_BUILD_TESTS=OFF -DCOHORT_BUILD_BENCH=OFF -DCOHORT_BUILD_EXAMPLES=OFF
fi
locked cmake --build "${build}" --target "${fuzzers[@]}" -j 2

failed=0
for fuzzer in "${fuzzers[@]}"; do
  kind="${fuzzer#ranktable_}"
  kind="${kind%_fuzzer}"
  corpus="${build}/corpus/${kind}"
  artifacts="${build}/artifacts/${kind}/"
  mkdir -p "${corpus}" "${artifacts}"
  extra=()
  if [[ "${fuzzer}" == ranktable_* ]]; then
    # Seeds: the test tables of this format (the corpus grows in build-fuzz only).
    cp "${root}"/tests/ranktable/data/*."${kind}" "${corpus}/"
    extra=(-dict="${root}/fuzz/ranktable_${kind}.dict" -max_len=65536)
  else
    extra=(-max_len=8192)  # wire frames: no seeds, an empty corpus to grow
  fi
  echo "== ${fuzzer}: ${seconds} s"
  if ! "${build}/fuzz/${fuzzer}" "${corpus}" "${extra[@]}" \
      -max_total_time="${seconds}" -timeout=10 -rss_limit_mb=2048 \
      -detect_leaks=1 -artifact_prefix="${artifacts}" -print_final_stats=1; then
    echo "!! ${fuzzer} failed: reproducer in ${artifacts}" >&2
    failed=1
  fi
done
exit "${failed}"
