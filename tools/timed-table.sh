#!/usr/bin/env bash
# tools/timed-table.sh - docs/traces.md's openb-in-time table: what each policy's placements cost the
# pods once fractional sharing slows them (issue 20 item 3), generated from the program.
#
#   tools/timed-table.sh             (run from the repository root, or by tools/docs-check.sh)
#   tools/timed-table.sh --summary   one sentence on the spread between the policies, from the
#                                    last table's runs (build/timed-table/rows.tsv)
#
# Runs experiments/traces/openb-timed.yaml (openb's default pod list, each pod arriving at its
# creation time with its lifetime as solo work, every pod without a profile, i.e. GPU-bound) once
# per policy with --set policy.scheduler=NAME and prints one markdown row per policy from its
# run.json: pods that shared a GPU long enough to be slowed by more than 1 % (jobs.csv), JCT
# mean/p50/p95, slowdown (JCT / solo work) mean/p95/max, and pods still running at the horizon.
# A packing-only simulator gives every policy the same JCTs (each pod's lifetime: nothing waits
# in this replay). docs/traces.md's table is its `<!-- docs-gen: tools/timed-table.sh -->` block:
# `make docs-check` compares it, `make docs-update` rewrites it. Needs ../shared/traces (openb).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x ./slicesim ] || { echo "timed-table: ./slicesim is not built (make first)" >&2; exit 2; }
scratch=build/timed-table
rows="$scratch/rows.tsv"
if [ "${1:-}" = --summary ]; then
    [ -s "$rows" ] || { echo "timed-table: no runs in $scratch (run it without --summary)" >&2; exit 2; }
    sort -t$'\t' -k2,2g "$rows" | awk -F'\t' '
        NR == 1 { lo = $1; jlo = $2; slo = $3 }
        { hi = $1; jhi = $2; shi = $3 }
        END { printf "JCT mean from %.0f s (`%s`) to %.0f s (`%s`), %.1f %% more; slowdown mean from %.3f to %.3f.\n",
                     jlo, lo, jhi, hi, 100 * (jhi / jlo - 1), slo, shi }'
    exit 0
fi
rm -rf "$scratch"
mkdir -p "$scratch"
policies="fgd bestfit dotprod gpupacking gpuclustering random k8s binpack"
for p in $policies; do # the runs are independent: run them side by side
    ./slicesim run experiments/traces/openb-timed.yaml -o "$scratch/$p" \
        --set "policy.scheduler=$p" >"$scratch/$p.txt" 2>&1 &
done
wait
echo "| policy | pods slowed > 1 % | JCT mean | JCT p50 | JCT p95 | slowdown mean | slowdown p95 | slowdown max | running at the horizon |"
echo "|---|---|---|---|---|---|---|---|---|"
: >"$rows"
for p in $policies; do
    slowed=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                      $c["slowdown"] != "" && $c["slowdown"] > 1.01 { n++ } END { print n + 0 }' \
        "$scratch/$p/jobs.csv")
    jq -r --arg p "$p" --arg slowed "$slowed" '.metrics |
        "| `\($p)` | \($slowed) of \(.counts.done + .counts.running) | \(.jct_s.mean | floor) s | \(.jct_s.p50 | floor) s | \(.jct_s.p95 | floor) s | \(.scheduling.slowdown.mean * 1000 | round / 1000) | \(.scheduling.slowdown.p95 * 100 | round / 100) | \(.scheduling.slowdown.max * 10 | round / 10) | \(.counts.running) |"' \
        "$scratch/$p/run.json"
    jq -r --arg p "$p" '.metrics | [$p, .jct_s.mean, .scheduling.slowdown.mean] | @tsv' \
        "$scratch/$p/run.json" >>"$rows"
done
