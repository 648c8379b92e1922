#!/bin/sh
# experiments/validation/from-data-table.sh - docs/ddp.md's table of the NCCL `-from-data`
# predictions ("Data-parallel jobs"): one row per message size, one column per `NAME-from-data`
# table of `slicesim validate` (in the order validate prints them), each cell the error of the
# prediction (algbw, predicted against measured); a figure validate excludes (latency-bound below
# 1 MiB, or one that model/physics/comm.yaml's numbers were computed from) in parentheses. Run from the
# repository root (or tools/docs-check.sh).
set -eu
./slicesim validate | awk '
function size(b) {
    if (b >= 1073741824) return b / 1073741824 " GiB"
    if (b >= 1048576) return b / 1048576 " MiB"
    if (b >= 1024) return b / 1024 " KiB"
    return b " B"
}
$1 ~ /-from-data$/ && $2 ~ /^[0-9]+\/algbw$/ {
    t = $1; sub(/-from-data$/, "", t)
    if (!(t in col)) { col[t] = ++ncol; name[ncol] = t }
    b = $2; sub(/\/.*/, "", b); b += 0
    if (!(b in seen)) { seen[b] = 1; sizes[++nsize] = b }
    e = ""; x = 0
    for (i = 3; i <= NF; i++) {
        if ($i ~ /^error=/) { e = $i; sub(/^error=/, "", e); sub(/%$/, " %", e) }
        if ($i == "excluded") x = 1
    }
    cell[col[t], b] = x ? "(" e ")" : e
}
END {
    for (i = 2; i <= nsize; i++) # sizes in increasing order (insertion sort: a few dozen)
        for (j = i; j > 1 && sizes[j - 1] > sizes[j]; j--) { s = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = s }
    printf "| message |"
    for (c = 1; c <= ncol; c++) printf " %s |", name[c]
    printf "\n|---:|"
    for (c = 1; c <= ncol; c++) printf "---:|"
    printf "\n"
    for (i = 1; i <= nsize; i++) {
        printf "| %s |", size(sizes[i])
        for (c = 1; c <= ncol; c++) printf " %s |", ((c, sizes[i]) in cell) ? cell[c, sizes[i]] : ""
        printf "\n"
    }
}'
