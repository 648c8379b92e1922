#!/usr/bin/env bash
# tools/bench-table.sh - the measured speed tables of docs/engine.md (`make bench-tables`).
#
#   tools/bench-table.sh [--update] [--before REV] [--reps N] engine|sched...
#
# Timings depend on the machine and its load, so they cannot be checked byte for byte as the
# docs-check blocks are; instead each table is written by this script, never by hand, under a
# caption that names the machine, the date, the revision and the command that measured it.
#   engine  the hold model (`slicesim bench engine` and `bench heap`, N = 1000 and 10^6 pending
#           events) and `bench fluid` (1000 and 100 000 activities): events per CPU second, the
#           median of N alternating runs.
#   sched   CPU seconds (`bench run` cpu_s: user + system) of whole runs that stress the
#           scheduling cycle: openb-fgd under every policy, openb-timed, philly-mig; the median
#           of N runs. With --before REV, a column for that revision too (its release build,
#           made from `git archive REV` under build/bench-table/, on today's scenario files).
# Without --update the tables are printed; with it, the block under each marker of docs/engine.md
# "<!-- bench-table: NAME -->" (up to the next blank line) is replaced. Uses the release build
# (build/release/slicesim; the make target builds it). Run from the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
update=0
before=""
reps=3
tables=()
while [ $# -gt 0 ]; do
    case "$1" in
    --update) update=1 ;;
    --before) before=$2; shift ;;
    --reps) reps=$2; shift ;;
    engine | sched) tables+=("$1") ;;
    *) echo "usage: tools/bench-table.sh [--update] [--before REV] [--reps N] engine|sched..." >&2
       exit 2 ;;
    esac
    shift
done
[ ${#tables[@]} -eq 0 ] && tables=(engine sched)
bin=build/release/slicesim
[ -x "$bin" ] || { echo "bench-table: $bin is not built (make BUILD=release first)" >&2; exit 2; }
scratch=build/bench-table
rm -rf "$scratch"
mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT

# The revision measured; "-dirty" when anything but the Markdown files (which this script
# rewrites) differs from it.
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- . ':(exclude)*.md' 2>/dev/null || rev="$rev-dirty"
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
machine="$(uname -n) (${cpu:-unknown CPU}, $(nproc) cores)"
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
load() { cut -d' ' -f1 /proc/loadavg; }
# One value of a `key=value` line.
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
caption() { # what, command
    echo "Measured by \`$2\` on $machine, $(date -u '+%Y-%m-%d %H:%M') UTC, load $(load) at the" \
         "start; release build of $rev; $1, median of $reps:"
}

engine_table() {
    local cap
    cap=$(caption "events per CPU second of the measured steps" "make bench-tables")
    local -A v
    local r k n
    for r in $(seq "$reps"); do # alternating, so slow phases of the machine hit every kind
        for n in 1000 1000000; do
            local ev=2000000
            [ "$n" = 1000000 ] && ev=4000000
            for k in engine heap; do
                v[$k.$n]+="$("$bin" bench $k --pending $n --events $ev | field events_per_cpu_s) "
            done
        done
        for n in 1000 100000; do
            v[fluid.$n]+="$("$bin" bench fluid --pending $n --events 500000 | field events_per_cpu_s) "
        done
    done
    m() { echo "${v[$1]}" | tr ' ' '\n' | grep . | median; }
    echo "$cap"
    echo
    echo "| benchmark | pending | engine M/CPU-s | bare heap M/CPU-s | engine / heap |"
    echo "|---|---:|---:|---:|---:|"
    for n in 1000 1000000; do
        m engine.$n >"$scratch/e"
        m heap.$n >"$scratch/h"
        awk -v n=$n -v e="$(cat "$scratch/e")" -v h="$(cat "$scratch/h")" \
            'BEGIN { printf "| hold model | %d | %.2f | %.2f | %.2f |\n", n, e / 1e6, h / 1e6, e / h }'
    done
    for n in 1000 100000; do
        awk -v n=$n -v f="$(m fluid.$n)" \
            'BEGIN { printf "| fluid completions | %d | %.2f | - | - |\n", n, f / 1e6 }'
    done
}

# The runs of the scheduling table: scenario, policy.
sched_runs="openb-fgd fgd
openb-fgd bestfit
openb-fgd dotprod
openb-fgd gpupacking
openb-fgd gpuclustering
openb-fgd random
openb-fgd k8s
openb-fgd binpack
openb-fgd fifo
openb-fgd backfill
openb-timed k8s
openb-timed fgd
philly-mig k8s"

sched_cpu() { # binary, scenario, policy: the median CPU seconds, or n/a when it does not run
    local b=$1 s=$2 p=$3 r out vals=""
    for r in $(seq "$reps"); do
        out=$("$b" bench run "experiments/traces/$s.yaml" --set "policy.scheduler=$p" \
            -o "$scratch/run" 2>/dev/null) || { echo n/a; return; }
        vals+="$(echo "$out" | field cpu_s) "
    done
    echo "$vals" | tr ' ' '\n' | grep . | median
}

sched_table() {
    local old="" cap head sep
    if [ -n "$before" ]; then
        local brev
        brev=$(git rev-parse --short=7 "$before")
        mkdir -p "$scratch/before"
        git archive "$before" | tar -x -C "$scratch/before"
        make -C "$scratch/before" --no-print-directory -j2 BUILD=release all >/dev/null
        old="$scratch/before/build/release/slicesim"
        head="| run | before ($brev) | now ($rev) |"
        sep="|---|---:|---:|"
    else
        head="| run | CPU s |"
        sep="|---|---:|"
    fi
    cap=$(caption "CPU seconds of \`slicesim bench run experiments/traces/RUN.yaml --set policy.scheduler=POLICY\`" \
        "make bench-tables${before:+ BENCH_BEFORE=$before}")
    echo "$cap"
    echo
    echo "$head"
    echo "$sep"
    local s p
    while read -r s p; do
        if [ -n "$old" ]; then
            echo "| $s, \`$p\` | $(sched_cpu "$old" "$s" "$p") | $(sched_cpu "$bin" "$s" "$p") |"
        else
            echo "| $s, \`$p\` | $(sched_cpu "$bin" "$s" "$p") |"
        fi
    done <<<"$sched_runs"
}

doc=docs/engine.md # the file whose markers --update rewrites
for t in "${tables[@]}"; do
    "${t}_table" >"$scratch/$t.md"
    if [ $update -eq 0 ]; then
        cat "$scratch/$t.md"
        continue
    fi
    grep -q "^<!-- bench-table: $t -->\$" "$doc" ||
        { echo "bench-table: $doc has no <!-- bench-table: $t --> marker" >&2; exit 2; }
    awk -v table="$scratch/$t.md" -v marker="<!-- bench-table: $t -->" '
        skip == 1 && /^$/ { skip = 2; next }   # the caption paragraph
        skip == 2 && /^$/ { skip = 0 }         # the table
        skip { next }
        { print }
        $0 == marker { while ((getline l < table) > 0) print l; skip = 1 }
    ' "$doc" >"$scratch/doc.md"
    mv "$scratch/doc.md" "$doc"
    echo "bench-table: rewrote the $t table of $doc"
done
