#!/usr/bin/env bash
# Cohort's two commands (see README.md):
#   ./dev.sh run    install missing Debian packages (as root), configure, build, run the main job
#   ./dev.sh test   the same set-up, then the whole test suite; non-zero on any failure
# Options for test: --quick (the main build's ctest only).
# Both are incremental: a second run rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
JOBS=${JOBS:-2}

DEPS=(cmake ninja-build g++ make pkg-config file dpkg-dev
      libboost-dev libboost-system-dev libyaml-cpp-dev nlohmann-json3-dev
      libgtest-dev libgmock-dev libbenchmark-dev libopenmpi-dev openmpi-bin
      libibverbs-dev ibverbs-utils libcli11-dev libspdlog-dev libfmt-dev libopenblas-dev
      clang libclang-rt-14-dev iproute2 procps bc
      python3-torch libtorch-dev pybind11-dev python3-pytest
      libgloo-dev)  # the last: Gloo, a baseline of bench/compare.sh (../shared/peers)

log() { printf '\n== %s\n' "$*"; }

# Stage timing for `test`: each log line in cmd_test starts a stage; the table prints at exit,
# also on failure, so that the CI budget (under 45 minutes) can be watched.
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
  printf '%6d s  total\n' $(($(date +%s) - TEST_START))
  return $rc
}

install_deps() {
  local missing=() p
  for p in "${DEPS[@]}"; do
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

# build DIR [cmake -D options...]: configure once, then build incrementally.
build() {
  local dir=$1; shift
  # One build at a time on this machine, even across shells (the lock is free in CI).
  exec 9>/tmp/cohort-build.lock
  flock 9
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$ROOT" -B "$dir" -G Ninja "$@"
  fi
  cmake --build "$dir" -j "$JOBS"
  flock -u 9
}

run_ctest() {
  local dir=$1; shift
  ctest --test-dir "$dir" -j "$JOBS" --output-on-failure --timeout 600 "$@"
}

cmd_run() {
  install_deps
  build build
  # The main job: tensor-parallel inference on 4 emulated devices, one rank per process.
  if [ -x build/tools/cohortrun/cohortrun ]; then
    log "main job: cohortrun -n 4 tp_inference --job"
    ./build/tools/cohortrun/cohortrun -n 4 ./build/examples/tp_inference --job "$@"
  else
    log "main job: tp_inference --tp 4 (cohortrun is not built)"
    ./build/examples/tp_inference --tp 4 "$@"
  fi
}

cmd_test() {
  local quick=0
  [ "${1:-}" = "--quick" ] && quick=1
  TEST_START=$(date +%s)
  trap print_stages EXIT
  stage "set-up (Debian packages)"
  install_deps
  stage "build (RelWithDebInfo)"
  build build
  stage "test suite"
  run_ctest build
  [ $quick = 1 ] && return 0
  stage "AddressSanitizer + UBSan build"
  build build-asan -DCOHORT_SANITIZE=address -DCMAKE_BUILD_TYPE=Debug -DCOHORT_BUILD_BENCH=OFF
  stage "AddressSanitizer + UBSan: whole suite"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build-asan -LE nosan
  stage "ThreadSanitizer build"
  build build-tsan -DCOHORT_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug -DCOHORT_BUILD_BENCH=OFF \
    -DCOHORT_BUILD_EXAMPLES=OFF
  stage "ThreadSanitizer: the suites labelled tsan"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_ctest build-tsan -L tsan
  if [ -x fuzz/run_fuzzers.sh ]; then
    stage "fuzzers (${FUZZ_SECONDS:-60} s each)"
    fuzz/run_fuzzers.sh "${FUZZ_SECONDS:-60}"
  fi
  stage ""
  log "all tests passed"
}

case "${1:-}" in
  run) shift; cmd_run "$@" ;;
  test) shift; cmd_test "$@" ;;
  *) echo "usage: ./dev.sh run | test [--quick]" >&2; exit 2 ;;
esac
