#!/bin/sh
# experiments/whatif/hep-gan-scaling.sh [DIR] - the 3DGAN what-if's scaling (docs/ddp.md): runs
# experiments/whatif/hep-gan-ddp.yaml (or, given DIR, reads DIR/jobs.csv of such a run) and prints
# one row per layout, batch and worker count: the epoch time (jct_s of jobs.csv), the speed-up per
# doubling of workers over the previous count of the same layout and batch,
# (t_prev / t)^(1 / log2(n / n_prev)) (2.00x is perfect scaling), and the parallel efficiency
# against the 4-worker job, t_4 * 4 / (t * n). A job that did not finish prints its outcome.
# Run from the repository root (or tools/docs-check.sh); writes only to a temporary directory.
set -eu
if [ $# -ge 1 ]; then
    csv=$1/jobs.csv
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    ./slicesim run experiments/whatif/hep-gan-ddp.yaml -o "$tmp" > /dev/null
    csv=$tmp/jobs.csv
fi
echo "| layout | batch | workers | epoch s | per doubling | efficiency vs 4 |"
echo "|---|---:|---:|---:|---:|---:|"
awk -F, 'NR > 1 {
    # class: LAYOUT-wN-bB
    n = split($2, p, "-"); w = substr(p[n - 1], 2) + 0; b = substr(p[n], 2) + 0
    lay = p[1]; for (i = 2; i <= n - 2; i++) lay = lay "-" p[i]
    key = lay " " b
    if ($13 != "done") { printf "| %s | %d | %d | %s | | |\n", lay, b, w, $13; next }
    t = $12 + 0
    if (key in last_n) {
        d = exp(log(last_t[key] / t) / (log(w / last_n[key]) / log(2)))
        printf "| %s | %d | %d | %.1f | %.2fx | %.1f %% |\n", lay, b, w, t, d, 100 * t4[key] * 4 / (t * w)
    } else {
        if (w == 4) t4[key] = t
        printf "| %s | %d | %d | %.1f | | |\n", lay, b, w, t
    }
    last_n[key] = w; last_t[key] = t
}' "$csv"
