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
# For every word of FILES, the lines naming it outside comments, minus its declarations and
# definitions (`TYPE name(` at column 0): a call, a function-pointer table entry or a macro body
# is a use. Printed as `word count`, from one pass over the files (a grep per name took a minute).
# A word is what grep -w takes for one: a run of letters, digits and underscores.
count_words() {
    # shellcheck disable=SC2086
    LC_ALL=C awk '
        /^[[:space:]]*(\/\*|\*( |\/|$)|\/\/)/ { next }
        {
            decl = ""
            if (match($0, /^[a-zA-Z_][a-zA-Z0-9_ *\\]*[ *\\][a-zA-Z0-9_]+\(/)) {
                decl = substr($0, 1, RLENGTH - 1)
                sub(/.*[ *\\]/, "", decl)
            }
            n = split($0, w, /[^A-Za-z0-9_]+/)
            split("", seen)
            for (i = 1; i <= n; i++) {
                if (w[i] != "" && !(w[i] in seen)) {
                    seen[w[i]] = 1
                    if (w[i] != decl) uses[w[i]]++
                }
            }
        }
        END { for (k in uses) print k, uses[k] }' $1
}
declare -A uses_in_sources uses_in_fuzz
while read -r w c; do uses_in_sources[$w]=$c; done < <(count_words "$sources")
while read -r w c; do uses_in_fuzz[$w]=$c; done < <(count_words "$fuzz")
# each header's names of functions declared at column 0 (multi-line prototypes included: the
# name is on the first line); typedefs, macros and static inline helpers are skipped
declare -A names_of
while read -r h name; do
    names_of[$h]+="$name "
done < <(grep -HE '^[a-zA-Z_][a-zA-Z0-9_ \*]*[ \*]([a-z_][a-z0-9_]*)\(' $headers \
         | grep -vE '^[^:]*:(typedef|static|#|extern "C")' \
         | sed -E 's/^([^:]*):[a-zA-Z_][a-zA-Z0-9_ \*]*[ \*]([a-z_][a-z0-9_]*)\(.*/\1 \2/' \
         | sort -u -k1,1 -k2,2)
for h in $headers; do
    for name in ${names_of[$h]:-}; do
        case $name in *__*) continue ;; esac
        uses=${uses_in_sources[$name]:-0}
        case $name in *_buffer | *_buffer_mig) uses=$((uses + ${uses_in_fuzz[$name]:-0})) ;; esac
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
others=$(echo $sources $tests | tr ' ' '\n' | grep -v -x -e sim/err.h -e sim/err.c)
for code in $(sed -nE 's/^ *X\(([A-Z]+),.*/\1/p' sim/err.h); do
    if ! grep -qw "SIM_$code" $others; then
        echo "sim/err.h: SIM_$code"
        n=$((n + 1))
    fi
done
if [ $n -gt 0 ]; then
    echo "unused-public: $n public functions the program does not call (use them, make them static, move them to tests/ as an oracle, or remove them)"
    exit 1
fi
echo "unused-public: every public function has a caller in the program ($pending pending, listed above)"
