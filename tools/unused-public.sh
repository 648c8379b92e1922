#!/usr/bin/env bash
# tools/unused-public.sh - list public functions the program does not call.
#
# A public function is one declared at the start of a line in a module header (sim/ model/*/
# workloads/ experiments/ tools/ *.h) as `TYPE name(...);`. It is unused when nothing in the
# program (sim/ model/ workloads/ experiments/ tools/, its own module included) names it but its
# declaration and its definition: a function only tests call is unused, and belongs in tests/ (an
# oracle, tests/unit/oracle_*.c) or nowhere (issue 24). Two exceptions, both by name:
#   - a parser's in-memory entry point (`*_buffer`, `*_buffer_mig`) counts its fuzz target in
#     tests/fuzz/ as a caller: STYLE.md section 7 makes a fuzz target part of every parser;
#   - `module__name` helpers (STYLE.md section 3: internal, shared between files) are not public.
# PENDING below lists the few still unused, each with why it stays for now; they are printed
# but do not fail. Status codes of sim/err.h that nothing returns or tests are listed too.
# Prints `header: name` for each and exits 1 when there is any (CI runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
headers=$(ls sim/*.h model/*/*.h workloads/*.h experiments/*.h tools/*.h 2>/dev/null)
sources=$(ls sim/*.[ch] model/*/*.[ch] workloads/*.[ch] experiments/*.[ch] \
             tools/*.[ch] 2>/dev/null)
fuzz=$(ls tests/fuzz/*.c 2>/dev/null)
tests=$(ls tests/unit/*.[ch] tests/fuzz/*.c 2>/dev/null)
# name: why it is still here (remove the line when it is resolved)
PENDING="
"
n=0
pending=0
# lines naming $1 outside comments, minus declarations/definitions (`TYPE name(` at column 0): a
# call, a function-pointer table entry or a macro body is a use
count_uses() {
    grep -hw "$1" $2 | grep -vE '^[[:space:]]*(/\*|\*( |/|$)|//)' \
        | grep -vcE "^[a-zA-Z_][a-zA-Z0-9_ \*]*[ \*]$1\(" || true
}
for h in $headers; do
    # names of functions declared at column 0 (multi-line prototypes included: the name is on
    # the first line); typedefs, macros and static inline helpers are skipped
    names=$(grep -E '^[a-zA-Z_][a-zA-Z0-9_ \*]*[ \*]([a-z_][a-z0-9_]*)\(' "$h" \
            | grep -vE '^(typedef|static|#|extern "C")' \
            | sed -E 's/^[a-zA-Z_][a-zA-Z0-9_ \*]*[ \*]([a-z_][a-z0-9_]*)\(.*/\1/' | sort -u \
            || true)
    for name in $names; do
        case $name in *__*) continue ;; esac
        uses=$(count_uses "$name" "$sources")
        case $name in *_buffer | *_buffer_mig) uses=$((uses + $(count_uses "$name" "$fuzz"))) ;; esac
        if [ "$uses" -eq 0 ]; then
            why=$(printf '%s\n' "$PENDING" | sed -n "s/^$name: //p")
            if [ -n "$why" ]; then
                echo "$h: $name (pending: $why)"
                pending=$((pending + 1))
            else
                echo "$h: $name"
                n=$((n + 1))
            fi
        fi
    done
done
# status codes of sim/err.h (X(NAME, value, text)) that no file but sim/err.[ch] names
for code in $(sed -nE 's/^ *X\(([A-Z]+),.*/\1/p' sim/err.h); do
    if ! grep -qw "SIM_$code" $(echo $sources $tests | tr ' ' '\n' | grep -v -x -e sim/err.h -e sim/err.c); then
        echo "sim/err.h: SIM_$code"
        n=$((n + 1))
    fi
done
if [ $n -gt 0 ]; then
    echo "unused-public: $n public functions the program does not call (use them, make them static, move them to tests/ as an oracle, or remove them)"
    exit 1
fi
echo "unused-public: every public function has a caller in the program ($pending pending, listed above)"
