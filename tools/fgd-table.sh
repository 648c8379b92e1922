#!/usr/bin/env bash
# tools/fgd-table.sh - the README's side-by-side of FGD's simulator policies on openb, generated
# from the program (issue 7 item 6).
#
#   tools/fgd-table.sh     (run from the repository root, or by tools/docs-check.sh)
#
# Runs experiments/traces/openb-fgd.yaml (openb default pod list, arrival-only, inflated to 1.3x
# the GPU capacity, shuffled with seed 42) once per policy with --set policy.scheduler=NAME and
# prints one markdown row per policy from the summary's "at the end:" line. The README's table is
# its `<!-- docs-gen: tools/fgd-table.sh -->` block: `make docs-check` compares it, `make
# docs-update` rewrites it. Needs ../shared/traces (the openb files).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x ./slicesim ] || { echo "fgd-table: ./slicesim is not built (make first)" >&2; exit 2; }
scratch=build/fgd-table
rm -rf "$scratch"
mkdir -p "$scratch"
table="$scratch/table.md"
policies="fgd bestfit dotprod gpupacking gpuclustering random k8s binpack"
for p in $policies; do # the runs are independent: run them side by side
    ./slicesim run experiments/traces/openb-fgd.yaml -o "$scratch/$p" \
        --set "policy.scheduler=$p" >"$scratch/$p.txt" 2>/dev/null &
done
wait
{
    echo "| policy | GPU allocation | milli-GPU allocation | unscheduled pods | idle GPU share fragmented |"
    echo "|---|---|---|---|---|"
    for p in $policies; do
        # at the end: 98.9% of GPUs allocated (6145 of 6212), 94.1% of milli-GPU, 2394 jobs
        # unscheduled; 97.67% of idle GPU share fragmented (FGD)
        grep '^at the end:' "$scratch/$p.txt" | sed -E "s/^at the end: ([0-9.]+)% of GPUs allocated \(([0-9]+) of ([0-9]+)\), ([0-9.]+)% of milli-GPU, ([0-9]+) jobs unscheduled; ([0-9.]+)% of idle GPU share fragmented.*/| \`$p\` | \1 % (\2 of \3) | \4 % | \5 | \6 % |/"
    done
} >"$table"
cat "$table"
