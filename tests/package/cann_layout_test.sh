#!/usr/bin/env bash
# Checks CANN's install layout (cmake/CohortCannLayout.cmake): installs the build
# into a scratch prefix, checks every path CANN programs' build files use, sources
# set_env.sh in a clean environment, builds a small ACL/HCCL program the ways CANN
# programs are built (-lhccl -lascendcl; lib64/libacl_rt.so by full path; the
# stub folders) and runs it with nothing but set_env.sh's environment. Then it
# installs the runtime component alone: enough to run the program, not to build
# it; the dev component added on top builds it.
#   cann_layout_test.sh BUILD_DIR PROGRAM_DIR CANN_VERSION COHORT_VERSION
set -euo pipefail
build=$1 program=$2/main.cc cann_version=$3 cohort_version=$4
work=$(mktemp -d)
work=$(cd -P "$work" && pwd)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

install_into() {  # PREFIX [COMPONENT]
  local log=$work/install-$(basename "$1")${2:+-$2}.log
  cmake --install "$build" --prefix "$1" ${2:+--component "$2"} > "$log" 2>&1 ||
    { cat "$log"; fail "cmake --install into $1 ${2:-}"; }
}

# A clean environment: the compiler on PATH (to build), nothing else.
clean() { env -i PATH=/usr/bin:/bin "$@"; }
# Runs PROGRAM with only the environment set_env.sh of PREFIX gives (env -i).
run_with_env() {  # PREFIX PROGRAM
  env -i bash --noprofile --norc -c 'set -euo pipefail; source "$1/set_env.sh"; exec "$2"' _ "$@"
}
expect_runs() {  # PREFIX PROGRAM
  local out
  out=$(run_with_env "$1" "$2" 2>&1) || fail "$2 with $1/set_env.sh: $out"
  grep -q '^cann program ok [1-9]' <<<"$out" || fail "$2 printed: $out"
}
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' '; }

P=$work/prefix
install_into "$P"

# --- The layout ---------------------------------------------------------------
for f in include/acl/acl.h include/hccl/hccl.h \
    lib64/libascendcl.so lib64/libhccl.so lib64/libacl_rt.so lib64/libacl_rt_impl.so \
    lib64/libmsprofiler.so lib64/libprofapi.so lib64/libacl_dvpp.so include/acl/ops/acl_dvpp.h \
    lib64/stub/libascendcl.so lib64/stub/libacl_rt.so lib64/stub/libacl_dvpp.so \
    lib64/stub/libhccl.so \
    runtime/include/acl/acl.h runtime/include/hccl/hccl.h runtime/lib64/libascendcl.so \
    runtime/lib64/libacl_rt.so runtime/lib64/stub/libascendcl.so \
    set_env.sh bin/setenv.bash version.cfg runtime/version.cfg runtime/version.info \
    share/info/runtime/version.info share/info/hccl/version.info; do
  test -f "$P/$f" || fail "missing $f"
done
test -d "$P/opp" || fail "missing opp/"
# The tree can be moved: no link is absolute.
abs=$(find "$P" -type l -lname '/*')
[ -z "$abs" ] || fail "absolute links: $abs"
for f in version.cfg runtime/version.cfg; do
  grep -qxF "runtime_running_version=[$cann_version:$cann_version]" "$P/$f" || fail "$f"
  grep -qF "Cohort $cohort_version" "$P/$f" || fail "$f does not name Cohort"
done
for f in runtime/version.info share/info/runtime/version.info share/info/hccl/version.info; do
  grep -qxF "Version=$cann_version" "$P/$f" || fail "$f lacks Version=$cann_version"
  grep -qxF "cohort_version=$cohort_version" "$P/$f" || fail "$f lacks cohort_version"
done

# --- set_env.sh -----------------------------------------------------------------
show_env='for v in ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME ASCEND_OPP_PATH ASCEND_AICPU_PATH \
  LD_LIBRARY_PATH PATH CMAKE_PREFIX_PATH; do printf "%s=%s\n" "$v" "${!v:-}"; done'
env_of() {  # SCRIPT [SHELL-OPTIONS]: the variables after sourcing SCRIPT (twice with "twice")
  env -i bash --noprofile --norc -c "set -euo pipefail; source \"\$1\"; \
    [ \"\$2\" != twice ] || source \"\$1\"; $show_env" _ "$1" "${2:-}"
}
out=$(env_of "$P/set_env.sh")
echo "$out"
value() { sed -n "s|^$1=||p" <<<"$out"; }
[ "$(value ASCEND_HOME_PATH)" = "$P" ] || fail "ASCEND_HOME_PATH"
[ "$(value ASCEND_TOOLKIT_HOME)" = "$P" ] || fail "ASCEND_TOOLKIT_HOME"
[ "$(value ASCEND_OPP_PATH)" = "$P/opp" ] || fail "ASCEND_OPP_PATH"
[ "$(value ASCEND_AICPU_PATH)" = "$P" ] || fail "ASCEND_AICPU_PATH"
case "$(value LD_LIBRARY_PATH):" in "$P/lib64:"*) ;; *) fail "LD_LIBRARY_PATH";; esac
case "$(value PATH):" in "$P/bin:"*) ;; *) fail "PATH";; esac
for v in ASCEND_HOME_PATH ASCEND_OPP_PATH ASCEND_AICPU_PATH; do
  test -d "$(value $v)" || fail "$v is not a folder"
done
IFS=: read -r -a dirs <<<"$(value LD_LIBRARY_PATH):$(value PATH)"
for d in "${dirs[@]}"; do test -d "$d" || fail "$d (from set_env.sh) is not a folder"; done
# bin/setenv.bash (a link) gives the same, and sourcing twice adds nothing twice.
[ "$(env_of "$P/bin/setenv.bash")" = "$out" ] || fail "bin/setenv.bash differs"
[ "$(env_of "$P/set_env.sh" twice)" = "$out" ] || fail "sourcing twice differs"
# A shell that cannot locate the script (dash) falls back on the install prefix.
home=$(env -i sh -c '. "$1/set_env.sh" && printf "%s" "$ASCEND_HOME_PATH"' _ "$P")
[ "$home" = "$P" ] || fail "sh: ASCEND_HOME_PATH=$home"

# --- Building and running a program ----------------------------------------------
bin=$work/bin
mkdir -p "$bin"
cp "$program" "$bin/main.cc"
# hccl_test's way: -I$ASCEND_DIR/include -L$ASCEND_DIR/lib64 -lhccl -lascendcl.
clean bash --noprofile --norc -c 'set -euo pipefail; source "$1/set_env.sh"
  g++ -std=c++11 -Wall -Werror "$2" -o "$3" -I"$ASCEND_HOME_PATH/include" \
    -L"$ASCEND_HOME_PATH/lib64" -lhccl -lascendcl' _ "$P" "$bin/main.cc" "$bin/by_name" ||
  fail "build with -lhccl -lascendcl"
# The hicann/runtime examples' way: $ASCEND_CANN_PACKAGE_PATH/lib64/libacl_rt.so by path.
clean bash --noprofile --norc -c 'set -euo pipefail; source "$1/set_env.sh"
  g++ -std=c++17 -D_GLIBCXX_USE_CXX11_ABI=0 -Wall -Werror -DNO_HCCL "$2" -o "$3" \
    -I"$ASCEND_HOME_PATH/include" "$ASCEND_HOME_PATH/lib64/libacl_rt.so"' \
  _ "$P" "$bin/main.cc" "$bin/by_path" || fail "build with lib64/libacl_rt.so"
# The stub folders (Ascend samples: runtime/include, runtime/lib64/stub), without
# set_env.sh: the libraries' RUNPATH must find Cohort's libraries from there.
clean g++ -Wall -Werror "$bin/main.cc" -o "$bin/by_stub" -I"$P/runtime/include" \
  -L"$P/runtime/lib64/stub" -lhccl -lascendcl || fail "build with runtime/lib64/stub"
clean g++ -Wall -Werror "$bin/main.cc" -o "$bin/by_lib64_stub" -I"$P/include" \
  -L"$P/lib64/stub" -lhccl -lascendcl || fail "build with lib64/stub"
# Ascend samples' DVPP-memory way: -lacl_dvpp beside -lascendcl, acl/ops/acl_dvpp.h.
clean g++ -Wall -Werror -DWITH_DVPP "$bin/main.cc" -o "$bin/by_dvpp" -I"$P/runtime/include" \
  -L"$P/runtime/lib64/stub" -lhccl -lascendcl -lacl_dvpp || fail "build with -lacl_dvpp"

# The linker records the SONAME, never a link's name or path.
grep -q 'libascendcl.so' <<<"$(needed "$bin/by_path")" || fail "by_path does not need libascendcl.so"
if grep -qE 'libacl_rt|/' <<<"$(needed "$bin/by_path")"; then
  fail "by_path records a link: $(needed "$bin/by_path")"
fi
echo "NEEDED by_name: $(needed "$bin/by_name")"
echo "NEEDED by_path: $(needed "$bin/by_path")"
for p in by_name by_path by_stub by_lib64_stub by_dvpp; do expect_runs "$P" "$bin/$p"; done
# Loaded through a link folder alone (CANN's runtime script puts lib64/stub on the
# library path), the libraries still find Cohort's own ones.
for d in lib64/stub runtime/lib64 runtime/lib64/stub; do
  out=$(env -i LD_LIBRARY_PATH="$P/$d" "$bin/by_name" 2>&1) || fail "LD_LIBRARY_PATH=$d: $out"
  grep -q '^cann program ok' <<<"$out" || fail "LD_LIBRARY_PATH=$d: $out"
done
# The programs load the installed libraries.
deps=$(env -i bash --noprofile --norc -c 'source "$1/set_env.sh"; ldd "$2"' _ "$P" "$bin/by_path")
grep -q "libascendcl.so => $P/lib64/libascendcl.so" <<<"$deps" || fail "ldd: $deps"
grep libcohort_runtime <<<"$deps" | grep -qF "$P/" || fail "ldd: $deps"

# The tree moved elsewhere still works.
mv "$P" "$work/moved"
home=$(env -i bash --noprofile --norc -c 'source "$1/set_env.sh"; printf "%s" "$ASCEND_HOME_PATH"' \
  _ "$work/moved")
[ "$home" = "$work/moved" ] || fail "moved tree: ASCEND_HOME_PATH=$home"
expect_runs "$work/moved" "$bin/by_name"

# --- The runtime component runs programs; dev is needed to build them ---------------
R=$work/runtime-only
install_into "$R" runtime
if find "$R" -name '*.h' | grep -q . || [ -e "$R/lib64/stub" ] || [ -e "$R/runtime/include" ]; then
  fail "the runtime component holds development files"
fi
for f in set_env.sh bin/setenv.bash lib64/libascendcl.so lib64/libhccl.so lib64/libacl_rt.so \
    runtime/lib64/libascendcl.so share/info/runtime/version.info version.cfg; do
  test -f "$R/$f" || fail "runtime component lacks $f"
done
for p in by_name by_path; do expect_runs "$R" "$bin/$p"; done
deps=$(env -i bash --noprofile --norc -c 'source "$1/set_env.sh"; ldd "$2"' _ "$R" "$bin/by_name")
grep -q "libhccl.so => $R/lib64/libhccl.so" <<<"$deps" || fail "ldd: $deps"
if clean bash --noprofile --norc -c 'source "$1/set_env.sh"; g++ "$2" -o "$3" \
    -I"$ASCEND_HOME_PATH/include" -L"$ASCEND_HOME_PATH/lib64" -lhccl -lascendcl' \
    _ "$R" "$bin/main.cc" "$bin/rt_only" > "$work/rt_only.log" 2>&1; then
  fail "a program builds against the runtime component alone"
fi
grep -q 'acl/acl.h' "$work/rt_only.log" || { cat "$work/rt_only.log"; fail "unexpected error"; }
install_into "$R" dev
clean bash --noprofile --norc -c 'source "$1/set_env.sh"; g++ "$2" -o "$3" \
  -I"$ASCEND_HOME_PATH/include" -L"$ASCEND_HOME_PATH/lib64" -lhccl -lascendcl' \
  _ "$R" "$bin/main.cc" "$bin/rt_dev" || fail "build against runtime + dev"
expect_runs "$R" "$bin/rt_dev"
echo "cann layout test passed"
