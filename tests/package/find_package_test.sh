#!/usr/bin/env bash
# Installs the build into a scratch prefix, builds the consumer project against
# it with find_package(Cohort), and runs it.
set -euo pipefail
build=$1 consumer=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/cfg.log"
cmake --build "$work/build" > "$work/build.log"
out=$("$work/build/consumer")
echo "$out"
grep -q "consumer OK" <<<"$out"
# The pkg-config file works too, and names the prefix it was installed into.
flags=$(PKG_CONFIG_PATH=$(dirname "$(find "$work/prefix" -name cohort.pc)") \
        pkg-config --cflags --libs cohort)
echo "$flags"
libdir=$(echo "$flags" | tr ' ' '\n' | sed -n 's/^-L//p')
test -d "$libdir" || { echo "pkg-config's -L$libdir does not exist" >&2; exit 1; }
test "$(cd "$libdir" && pwd -P)" = "$(cd "$(dirname "$(find "$work/prefix" -name 'libcohort_common.so*' | head -1)")" && pwd -P)"
test -f "$(find "$work/prefix" -path '*/cohort/version.cfg')"
echo "find_package test passed"
