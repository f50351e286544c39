#!/usr/bin/env bash
# The layering of DESIGN.md: a folder may include only itself and the folders
# below it (the linker enforces the same through --no-undefined).
set -euo pipefail
src=$1
declare -A allowed=(
  [common]="common"
  [kernels]="common kernels"
  [runtime]="common runtime"
  [ranktable]="common ranktable"
  [transport]="common kernels runtime transport"
  [collective]="common kernels runtime ranktable transport collective"
  [launcher]="common ranktable transport launcher"
  # acl implements the kernel launch ABI of include/ascendc/ (the AscendC headers).
  [acl]="common kernels runtime ascendc acl"
  [torch_cohort]="torch_cohort"  # the public API (cohort/) only
)
bad=0
for folder in "${!allowed[@]}"; do
  [ -d "$src/$folder" ] || continue
  while IFS= read -r line; do
    file=${line%%:*}
    inc=${line#*#include \"}  # the folder named before the first slash
    inc=${inc%%/*}
    [ "$inc" = cohort ] && continue
    ok=0
    for a in ${allowed[$folder]}; do [ "$inc" = "$a" ] && ok=1; done
    if [ $ok = 0 ]; then
      echo "layering: $file includes $inc/ (allowed: ${allowed[$folder]})"
      bad=1
    fi
  done < <(grep -rn '#include "[^"]*/' "$src/$folder" --include='*.h' --include='*.cc' || true)
done
# Public headers include only public headers.
if grep -rn '#include "' "$src/include/cohort" | grep -v '#include "cohort/'; then
  echo "layering: a public header includes a private one"; bad=1
fi
[ $bad = 0 ] && echo "layering OK"
exit $bad
