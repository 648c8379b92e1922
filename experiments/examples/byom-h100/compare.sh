#!/bin/sh
# experiments/examples/byom-h100/compare.sh - docs/bring-your-own-model.md's "what the measurements buy" table:
# fits resnet50-train.yaml (time, utilisation, GPM, kernel census), resnet50-train-time-only.yaml
# (time and utilisation), the latter once more with host_overlap 0 (a loop that waited for each
# GPU phase: what a wrong host_overlap predicts) and stream.yaml with `slicesim fit-workload`
# under the H100 calibration, predicts queries.yaml with each ResNet-50 profile, and sets the
# predictions beside the measured rows of experiments/validation/data/h100-coloc.csv that each query's comment names. Run from
# the repository root (or tools/docs-check.sh); writes only to a temporary directory.
set -eu
dir=experiments/examples/byom-h100
cal=calib/results/2026-11-22-h100-sxm-model.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fit() { # OBS-PATH CLASS OUT
    ./slicesim fit-workload "$1" -o "$tmp/$3" --class "$2" --calibration "$cal" >/dev/null
}
sed 's/^host_overlap: 1$/host_overlap: 0/' "$dir/resnet50-train-time-only.yaml" >"$tmp/o0-obs.yaml"
fit "$dir/resnet50-train.yaml" cnn-training measured.yaml
fit "$dir/resnet50-train-time-only.yaml" cnn-training time-only.yaml
fit "$tmp/o0-obs.yaml" cnn-training overlap0.yaml
fit "$dir/stream.yaml" memory-bound stream.yaml
for p in measured time-only overlap0; do
    ./slicesim predict "$tmp/$p.yaml" "$tmp/stream.yaml" "$dir/queries.yaml" --calibration "$cal" \
        >"$tmp/$p.csv"
done
echo '| measured run | measured it/s (noise) | predicted, all measurements | error | predicted, time + utilisation only | error | the same, host_overlap 0 | error |'
echo '|---|---|---|---|---|---|---|---|'
grep -o '# cnn_train/[^ ]*' "$dir/queries.yaml" | cut -c3- >"$tmp/figures"
awk -F, -v figs="$tmp/figures" -v a="$tmp/measured.csv" -v b="$tmp/time-only.csv" \
    -v o="$tmp/overlap0.csv" '
BEGIN {
    n = 0
    while ((getline f < figs) > 0) fig[n++] = f
    while ((getline l < a) > 0) { split(l, c, ","); if (c[1] ~ /^[0-9]+$/) ta[c[1]] = c[3] }
    while ((getline l < b) > 0) { split(l, c, ","); if (c[1] ~ /^[0-9]+$/) tb[c[1]] = c[3] }
    while ((getline l < o) > 0) { split(l, c, ","); if (c[1] ~ /^[0-9]+$/) to[c[1]] = c[3] }
}
/^#/ { next }
{ rate[$1] = $5; sd[$1] = $8 }
END {
    for (i = 0; i < n; i++) {
        m = rate[fig[i]]
        printf "| %s | %.2f (±%.1f %%) | %.2f | %+.1f %% | %.2f | %+.1f %% | %.2f | %+.1f %% |\n",
               fig[i], m, 100 * sd[fig[i]], ta[i], (ta[i] / m - 1) * 100, tb[i],
               (tb[i] / m - 1) * 100, to[i], (to[i] / m - 1) * 100
    }
}' experiments/validation/data/h100-coloc.csv
