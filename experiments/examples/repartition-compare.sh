#!/bin/sh
# experiments/examples/repartition-compare.sh - docs/repartition.md's re-partitioning comparison (`make
# compare-repartition`): one job trace on 8 A100s run five ways, one row per pool from the runs'
# run.json: static all-balanced MIG (repartition.yaml with the re-partitioner off), the demand
# re-partitioner (repartition.yaml), 7-way time-slicing (repartition-ts.yaml), a mixed pool
# (repartition-mixed.yaml) and MISO's policy (repartition-miso.yaml). Outputs go to
# ${CMP_DIR:-results/compare-repartition}. Run from the repository root (or tools/docs-check.sh).
set -eu
dir=experiments/examples
out=${CMP_DIR:-results/compare-repartition}
./slicesim run "$dir/repartition.yaml" -o "$out/static" --force --set repartition.enabled=false >/dev/null
./slicesim run "$dir/repartition.yaml" -o "$out/repartition" --force >/dev/null
./slicesim run "$dir/repartition-ts.yaml" -o "$out/timeslice" --force >/dev/null
./slicesim run "$dir/repartition-mixed.yaml" -o "$out/mixed" --force >/dev/null
./slicesim run "$dir/repartition-miso.yaml" -o "$out/miso" --force >/dev/null
echo '| pool | done | queued | wait mean s | wait p95 s | JCT mean s | GPUs busy | layouts | drain GPU-h | apply GPU-h | evicted GPU-h |'
echo '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
for v in static repartition timeslice mixed miso; do
    jq -r --arg v "$v" '.metrics | "| \($v) | \(.counts.done) | \(.counts.queued) | \(.wait_s.mean|floor) | \(.wait_s.p95|floor) | \(.jct_s.mean|floor) | \(.allocation.gpus_busy_mean*1000|floor/10)% | \(.repartition.applied // "-") | \(if .repartition then .repartition.drain_gpu_h*10|floor/10 else "-" end) | \(if .repartition then .repartition.apply_gpu_h*10|floor/10 else "-" end) | \(if .repartition then .repartition.evicted_gpu_h*10|floor/10 else "-" end) |"' \
        "$out/$v/run.json"
done
