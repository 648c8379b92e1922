#!/usr/bin/env bash
# tools/readme-map.sh - the README's per-module map ("Source code layout") names every module of
# sim/ and of each model/ room, and nothing that is gone (`make docs-check` runs it).
#
#   tools/readme-map.sh [FILE.md]      (default: README.md; run from the repository root)
#
# A folder's list starts at a line "`FOLDER/`..." and runs to the next blank line after its
# bullets; each bullet "* `NAME`[, `NAME`]: what it owns" names modules (NAME.c and/or NAME.h,
# written bare or with its suffix) or data files (NAME.yaml). engine_int.h-style internals
# (*_int.h) belong to their module's line. Exit 1 with the differences, 0 when the map matches.
set -euo pipefail
cd "$(dirname "$0")/.."
readme=${1:-README.md}
status=0
for dir in sim model/hw model/physics model/cluster model/fit model/policy; do
    listed=$(awk -v head="\`$dir/\`" '
        index($0, head) == 1 { on = 1; next }
        on && /^\* `/ { seen = 1; line = $0; sub(/:.*/, "", line)
                        while (match(line, /`[^`]+`/)) { print substr(line, RSTART + 1, RLENGTH - 2)
                                                        line = substr(line, RSTART + RLENGTH) }
                        next }
        on && seen && /^$/ { exit }
    ' "$readme" | sed -E 's/\.(c|h)$//' | sort -u)
    present=$(find "$dir" -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' -o -name '*.yaml' \) \
        ! -name '*_int.h' -printf '%f\n' | sed -E 's/\.(c|h)$//' | sort -u)
    if [ -z "$listed" ]; then
        echo "readme-map: $readme has no module list for $dir/" >&2
        status=1
        continue
    fi
    missing=$(comm -13 <(echo "$listed") <(echo "$present"))
    stale=$(comm -23 <(echo "$listed") <(echo "$present"))
    for m in $missing; do
        echo "readme-map: $readme: $dir/$m is not in the module map; expected a line \"* \`$m\`: what it owns\"" >&2
        status=1
    done
    for m in $stale; do
        echo "readme-map: $readme: the module map lists $dir/$m, which does not exist" >&2
        status=1
    done
done
[ $status -eq 0 ] && echo "readme-map: the module map names every module of sim/ and model/"
exit $status
