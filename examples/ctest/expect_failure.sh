#!/bin/sh
# expect_failure.sh REGEX COMMAND [ARGS...]: a ctest helper for the examples'
# failure paths. Passes (exit 0) when COMMAND exits with status 1 and its output
# (stdout and stderr) matches the extended regular expression REGEX.
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 1 ]; then
  echo "expect_failure: '$*' exited with status $rc, expected 1"
  exit 1
fi
if ! printf '%s\n' "$out" | grep -qE -- "$regex"; then
  echo "expect_failure: the output of '$*' does not match: $regex"
  exit 1
fi
echo "expect_failure: failed as expected"
