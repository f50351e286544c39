#!/usr/bin/env bash
# Cohort's two commands (see README.md):
#   ./dev.sh run    install the build's Debian packages (as root), configure, build what the
#                   main job needs, run it; `run --all` builds everything first
#   ./dev.sh test   install every package the suite needs, configure, build everything, run the
#                   whole test suite; non-zero on any failure
#   ./dev.sh build  install everything, configure, build every target, run nothing
# Options for test: --quick (the main build's ctest only).
# All are incremental: a second run rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
JOBS=${JOBS:-2}

# What the libraries, the tools and the main job build against.
RUN_DEPS=(cmake ninja-build g++ pkg-config
          libboost-dev libyaml-cpp-dev nlohmann-json3-dev libibverbs-dev
          libcli11-dev libspdlog-dev libfmt-dev libopenblas-dev)
# What the suite, the sanitizer builds, the fuzzers, the packaging checks, the torch backend
# and the benchmarks add.
TEST_DEPS=(make file dpkg-dev libboost-system-dev
           libgtest-dev libgmock-dev libbenchmark-dev libopenmpi-dev openmpi-bin ibverbs-utils
           clang libclang-rt-14-dev iproute2 procps bc
           python3-torch libtorch-dev pybind11-dev python3-pytest
           libgloo-dev)  # the last: Gloo, a baseline of bench/compare.sh (../shared/peers)
# The main job's programs: ninja builds these and the libraries they link, nothing else.
RUN_TARGETS=(cohortrun tp_inference)

log() { printf '\n== %s\n' "$*"; }

# Stage timing: each stage() starts a phase; the table prints at exit, also on failure, so that
# the first run's minutes and the CI budget (under 45 minutes) can be watched.
STAGES=()
STAGE_NAME=""
STAGE_START=0
stage() {
  local now
  now=$(date +%s)
  [ -n "$STAGE_NAME" ] && STAGES+=("$(printf '%6d s  %s' $((now - STAGE_START)) "$STAGE_NAME")")
  STAGE_NAME=$1
  STAGE_START=$now
  [ -n "$1" ] && log "$1"
  return 0
}
print_stages() {
  local rc=$? line
  stage ""
  [ ${#STAGES[@]} -eq 0 ] && return $rc
  printf '\n== time per stage%s\n' "$([ $rc = 0 ] || echo " (failed, rc $rc)")"
  for line in "${STAGES[@]}"; do echo "$line"; done
  printf '%6d s  total\n' $(($(date +%s) - START))
  return $rc
}

# install_deps PACKAGE...: installs those of them that are missing.
install_deps() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "dev.sh: missing Debian packages: ${missing[*]}" >&2
    echo "dev.sh: run as root once, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  log "installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# One build at a time on this machine, even across shells (the lock is free in CI).
lock_builds() { exec 9>/tmp/cohort-build.lock; flock 9; }
unlock_builds() { flock -u 9; }

# configure DIR [cmake -D options...]: configures anew each time, so that packages installed
# since the last run (the suite's, after a `run`) are found; a configured tree takes seconds.
configure() {
  local dir=$1; shift
  mkdir -p "$dir"
  cmake -S "$ROOT" -B "$dir" -G Ninja "$@" > "$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log" >&2; return 1; }
  grep -E '^-- (Cohort|torch_cohort)' "$dir/configure.log" || true
}

# build DIR [TARGET...]: builds those targets (all if none), incrementally.
build() {
  local dir=$1; shift
  cmake --build "$dir" -j "$JOBS" ${1:+--target "$@"}
}

# configure_and_build DIR [cmake -D options...]: both under the lock; $TARGETS (a list) limits
# the build to those targets.
configure_and_build() {
  local dir=$1; shift
  lock_builds
  configure "$dir" "$@"
  # shellcheck disable=SC2086  # TARGETS: a list, split on purpose
  build "$dir" ${TARGETS:-}
  unlock_builds
}

run_ctest() {
  local dir=$1; shift
  ctest --test-dir "$dir" -j "$JOBS" --output-on-failure --timeout 600 "$@"
}

cmd_run() {
  local all=0
  [ "${1:-}" = "--all" ] && { all=1; shift; }
  START=$(date +%s)
  trap print_stages EXIT
  stage "packages"
  if [ $all = 1 ]; then install_deps "${RUN_DEPS[@]}" "${TEST_DEPS[@]}"; else install_deps "${RUN_DEPS[@]}"; fi
  lock_builds
  stage "configure"
  configure build
  if [ $all = 1 ]; then
    stage "build (every target)"
    build build
  else
    stage "build (${RUN_TARGETS[*]} and their libraries; every target: ./dev.sh run --all)"
    build build "${RUN_TARGETS[@]}"
  fi
  unlock_builds
  # The main job: tensor-parallel inference on 4 emulated devices, one rank per process.
  stage "main job: cohortrun -n 4 tp_inference --job --graph"
  ./build/tools/cohortrun/cohortrun -n 4 ./build/examples/tp_inference --job --graph "$@"
}

cmd_build() {
  START=$(date +%s)
  trap print_stages EXIT
  stage "packages"
  install_deps "${RUN_DEPS[@]}" "${TEST_DEPS[@]}"
  stage "configure and build (every target)"
  configure_and_build build
}

cmd_test() {
  local quick=0
  [ "${1:-}" = "--quick" ] && quick=1
  START=$(date +%s)
  trap print_stages EXIT
  stage "set-up (Debian packages)"
  install_deps "${RUN_DEPS[@]}" "${TEST_DEPS[@]}"
  stage "build (RelWithDebInfo)"
  configure_and_build build
  stage "test suite"
  run_ctest build
  [ $quick = 1 ] && return 0
  # The sanitizer builds compile eight sources as one (CMake's unity build): most of a
  # sanitized compile is parsing the same headers again, and the ASan build took 440 s
  # instead of 770. The release build stays one object per source, so that an edit
  # rebuilds one file and a missing #include still fails there.
  stage "AddressSanitizer + UBSan build"
  configure_and_build build-asan -DCOHORT_SANITIZE=address -DCMAKE_BUILD_TYPE=Debug \
    -DCOHORT_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON
  stage "AddressSanitizer + UBSan: whole suite"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build-asan -LE nosan
  stage "ThreadSanitizer build (the suites labelled tsan)"
  TARGETS=tsan_tests configure_and_build build-tsan -DCOHORT_SANITIZE=thread \
    -DCMAKE_BUILD_TYPE=Debug -DCOHORT_BUILD_BENCH=OFF -DCOHORT_BUILD_EXAMPLES=OFF \
    -DCMAKE_UNITY_BUILD=ON
  stage "ThreadSanitizer: the suites labelled tsan"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_ctest build-tsan -L tsan
  if [ -x fuzz/run_fuzzers.sh ]; then
    stage "fuzzers (${FUZZ_SECONDS:-20} s each)"
    fuzz/run_fuzzers.sh "${FUZZ_SECONDS:-20}"
  fi
  stage ""
  log "all tests passed"
}

case "${1:-}" in
  run) shift; cmd_run "$@" ;;
  build) shift; cmd_build "$@" ;;
  test) shift; cmd_test "$@" ;;
  *) echo "usage: ./dev.sh run [--all] [job options] | build | test [--quick]" >&2; exit 2 ;;
esac
