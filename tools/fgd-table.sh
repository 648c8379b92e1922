#!/usr/bin/env bash
# tools/fgd-table.sh - docs/traces.md's side-by-side of FGD's simulator policies on openb, generated
# from the program (issue 7 item 6, issue 20 item 2).
#
#   tools/fgd-table.sh     (run from the repository root, or by tools/docs-check.sh)
#
# Runs experiments/traces/openb-fgd.yaml (openb default pod list on the 1,213 GPU nodes,
# arrival-only, inflated to 1.3x the GPU capacity) for seeds 42-51, the simulator's ten
# (--seed N), once per policy and tie rule (--set policy.params.tie_break=...): the simulator's
# five scoring policies under both tie rules, `random`, and kube-scheduler's `k8s` and `binpack`
# with their own (random). From each run.json it takes metrics.scheduling.fgd: the milli-GPU
# allocation curve at 90, 100 and 130 % of the cluster's milli-GPU arrived (the points nearest
# to them; 130 % is the final state), the GPU allocation, the fragmented share of idle GPU at
# the end, and the unscheduled pods. It prints the mean and sample sd over the seeds beside the
# simulator's published means, which it computes from experiments/traces/fgd-reference.csv (the
# rows copied from the simulator's expected-results CSVs, with their source), and each policy's
# rank at 130 % among the simulator's six under the same tie rule (`random` ranks in the
# fixed-order group: its ties are its rule) beside its rank there. docs/traces.md's table is its `<!-- docs-gen: tools/fgd-table.sh -->`
# block: `make docs-check` compares it, `make docs-update` rewrites it. Needs ../shared/traces.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x ./slicesim ] || { echo "fgd-table: ./slicesim is not built (make first)" >&2; exit 2; }
ref=experiments/traces/fgd-reference.csv
scratch=build/fgd-table
rm -rf "$scratch"
mkdir -p "$scratch"
seeds="42 43 44 45 46 47 48 49 50 51"
# policy:tie rule, in the table's order
cases="fgd:fixed-order bestfit:fixed-order gpupacking:fixed-order gpuclustering:fixed-order
dotprod:fixed-order random:random fgd:random bestfit:random gpupacking:random
gpuclustering:random dotprod:random k8s:random binpack:random"
for c in $cases; do
    for s in $seeds; do
        echo "${c%%:*} ${c##*:} $s"
    done
done | xargs -P "$(nproc)" -n 3 sh -c '
    d='"$scratch"'/$0-$1-$2
    ./slicesim run experiments/traces/openb-fgd.yaml -o "$d" --seed "$2" \
        --set "policy.scheduler=$0" --set "policy.params.tie_break=$1" >"$d.txt" 2>&1 ||
        { echo "fgd-table: the run of $0 ($1, seed $2) failed: $d.txt" >&2; exit 255; }
    # policy tie seed milli90 milli100 milli130 gpu_alloc frag unscheduled. jq reads run.json
    # from its top-level key metrics on (the file is tab-indented, one key a line: "{" and those
    # lines are a JSON object), not the 6 MB of jobs and cluster ahead of it: 0.06 s, not 0.4.
    { echo "{"; sed -n "/^\t\"metrics\":/,\$p" "$d/run.json"; } | jq -r --arg p "$0" --arg t "$1" --arg s "$2" "
        .metrics.scheduling as \$m | \$m.fgd.curve as \$c
        | def at(x): ([\$c[] | {d: ((.arrived - x) | fabs), v: .milli_gpu_allocation}]
                      | min_by(.d) | .v * 100);
        [\$p, \$t, \$s, at(0.9), at(1.0), at(1.3), \$m.fgd.gpu_allocation * 100,
         \$m.fgd.fragmented_share_of_idle * 100, \$m.unscheduled.never_started]
        | @tsv" >"$d.tsv"
    rm -rf "$d"'
{
    echo "| policy | ties | milli-GPU at 90 % arrived | at 100 % | at 130 % | reference at 90 / 100 / 130 % | ours - reference at 100 / 130 % | rank at 130 % (reference) | GPU allocation | unscheduled pods | idle GPU share fragmented (reference) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for c in $cases; do
        cat "$scratch/${c%%:*}-${c##*:}"-*.tsv
    done | awk -v ref="$ref" -v cases="$cases" '
        function ms(k, i,    m) {
            m = s[k, i] / n[k]
            return sprintf("%.2f ± %.2f", m, n[k] > 1 ? sqrt((q[k, i] - n[k] * m * m) / (n[k] - 1)) : 0)
        }
        # rank of case k by mean milli-GPU at 130 % among the simulator policies under tie rule t
        # (the policy `random` is in every group: its ties are its rule)
        function rank_of(k, t,    c, r, m) {
            r = 1; m = s[k, 6] / n[k]
            for (c in n) {
                split(c, ct, ":")
                if ((ct[1] in rn) && (ct[2] == t || ct[1] == "random") && c != k && s[c, 6] / n[c] > m) r++
            }
            return r
        }
        function ref_rank(p,    c, r) {
            r = 1
            for (c in rn) if (rs[c, 6] / rn[c] > rs[p, 6] / rn[p]) r++
            return r
        }
        BEGIN {
            FS = "\t"
            while ((getline line < ref) > 0) {
                if (line ~ /^#/ || line ~ /^policy,/) continue
                split(line, f, ",")
                rn[f[1]]++
                for (i = 4; i <= 9; i++) rs[f[1], i] += f[i]
            }
            nc = split(cases, cs, /[ \n]+/)
        }
        {
            k = $1 ":" $2; n[k]++
            for (i = 4; i <= 9; i++) { s[k, i] += $i; q[k, i] += $i * $i }
        }
        END {
            for (ci = 1; ci <= nc; ci++) {
                k = cs[ci]; split(k, pt, ":"); p = pt[1]; t = pt[2]
                if (!(k in n)) continue
                line = "| `" p "` | " t " | " ms(k, 4) " | " ms(k, 5) " | " ms(k, 6) " | "
                if (p in rn) {
                    line = line sprintf("%.2f / %.2f / %.2f | %+.2f / %+.2f | %d (%d) | ", rs[p, 4] / rn[p], rs[p, 5] / rn[p], rs[p, 6] / rn[p], s[k, 5] / n[k] - rs[p, 5] / rn[p], s[k, 6] / n[k] - rs[p, 6] / rn[p], rank_of(k, p == "random" ? "fixed-order" : t), ref_rank(p))
                } else {
                    line = line "not in the simulator | | | "
                }
                line = line ms(k, 7) " | " sprintf("%.0f", s[k, 9] / n[k]) " | " ms(k, 8)
                print line ((p in rn) ? sprintf(" (%.2f)", rs[p, 9] / rn[p]) : "") " |"
            }
        }'
} >"$scratch/table.md"
cat "$scratch/table.md"
