#!/usr/bin/env bash
# tools/unused-public.sh - list public functions nobody calls.
#
# A public function is one declared at the start of a line in a module header (sim/ model/*/
# workloads/ experiments/ tools/ *.h) as `TYPE name(...);`. It is unused when
# nothing but its declaration and its definition names it: no call anywhere, its own module,
# tests and fuzz targets included. Status codes of sim/err.h that nothing returns or tests are
# listed too. Prints `header: name` for each and exits 1 when there is any (CI runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
headers=$(ls sim/*.h model/*/*.h workloads/*.h experiments/*.h tools/*.h 2>/dev/null)
sources=$(ls sim/*.[ch] model/*/*.[ch] workloads/*.[ch] experiments/*.[ch] \
             tools/*.[ch] tests/unit/*.[ch] tests/fuzz/*.c 2>/dev/null)
n=0
for h in $headers; do
    # names of functions declared at column 0 (multi-line prototypes included: the name is on
    # the first line); typedefs, macros and static inline helpers are skipped
    names=$(grep -E '^[a-zA-Z_][a-zA-Z0-9_ \*]*[ \*]([a-z_][a-z0-9_]*)\(' "$h" \
            | grep -vE '^(typedef|static|#|extern "C")' \
            | sed -E 's/^[a-zA-Z_][a-zA-Z0-9_ \*]*[ \*]([a-z_][a-z0-9_]*)\(.*/\1/' | sort -u \
            || true)
    for name in $names; do
        # uses = lines naming it outside comments, minus declarations/definitions (`TYPE name(`
        # at column 0): a call, a function-pointer table entry or a macro body is a use
        uses=$(grep -hw "$name" $sources | grep -vE '^[[:space:]]*(/\*|\*( |/|$)|//)' \
               | grep -vcE "^[a-zA-Z_][a-zA-Z0-9_ \*]*[ \*]$name\(" || true)
        if [ "$uses" -eq 0 ]; then
            echo "$h: $name"
            n=$((n + 1))
        fi
    done
done
# status codes of sim/err.h (X(NAME, value, text)) that no file but sim/err.[ch] names
for code in $(sed -nE 's/^ *X\(([A-Z]+),.*/\1/p' sim/err.h); do
    if ! grep -qw "SIM_$code" $(echo $sources | tr ' ' '\n' | grep -v -x -e sim/err.h -e sim/err.c); then
        echo "sim/err.h: SIM_$code"
        n=$((n + 1))
    fi
done
if [ $n -gt 0 ]; then
    echo "unused-public: $n public functions nobody calls (remove them, make them static, or use them)"
    exit 1
fi
echo "unused-public: every public function has a caller"
