#!/bin/sh
# experiments/examples/byom/compare.sh - docs/bring-your-own-model.md's "predicted vs published" table for the
# bring-your-own-model example: predicts queries.yaml with my-tracker.yaml (written by the
# fit-workload step, in the current directory) and sets each prediction beside the published
# figure that published.csv names. Run from the repository root (or tools/docs-check.sh).
set -eu
dir=experiments/examples/byom
./slicesim predict my-tracker.yaml workloads/library/cern-finetune.yaml "$dir/queries.yaml" \
    > my-tracker-predictions.csv
echo '| query | predicted s (range) | published s | error |'
echo '|---|---|---|---|'
# published.csv has one quoted label with commas: split on commas outside quotes.
awk -v data=experiments/validation/data '
function split_csv(line, f,    n, i, c, q, cur) {
    n = 0; cur = ""; q = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (c == "\"") { q = !q } else if (c == "," && !q) { f[++n] = cur; cur = "" } else { cur = cur c }
    }
    f[++n] = cur
    return n
}
function published(csv, row, col,    path, line, f, n, i, ci, hdr) {
    path = data "/" csv; hdr = 0; ci = 0
    while ((getline line < path) > 0) {
        if (line ~ /^#/ || line == "") continue
        n = split_csv(line, f)
        if (!hdr) { for (i = 1; i <= n; i++) if (f[i] == col) ci = i; hdr = 1; continue }
        if (f[1] == row) { close(path); return f[ci] }
    }
    close(path)
    return ""
}
FNR == NR {
    if (FNR == 1) next
    split_csv($0, p); t[p[1]] = p[2]; lo[p[1]] = p[5]; hi[p[1]] = p[6]; ok[p[1]] = p[4]
    next
}
/^#/ || /^index,/ { next }
{
    split_csv($0, m)
    pub = published(m[3], m[4], m[5])
    if (ok[m[1]] != "ok" || pub == "") { printf "| %s | %s | %s | n/a |\n", m[2], ok[m[1]], pub; next }
    cite = m[6] != "" ? " (" m[6] ")" : ""
    printf "| %s | %.2f (%.2f-%.2f) | %s%s | %+.1f %% |\n", m[2], t[m[1]], lo[m[1]], hi[m[1]], pub,
           cite, (t[m[1]] / pub - 1) * 100
}' my-tracker-predictions.csv "$dir/published.csv"
