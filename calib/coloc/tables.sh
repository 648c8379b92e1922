#!/bin/sh
# calib/coloc/tables.sh [DIR]: writes every co-location table of experiments/validation/data from
# the committed recordings of calib/coloc (the commands docs/validation.md gives per table, in one
# place), into DIR (default experiments/validation/data). Run from the repository root.
# `sh calib/coloc/tables.sh /tmp/t && diff -r /tmp/t experiments/validation/data` shows that the
# committed tables are what table.py makes of the committed JSON (no diff but the files only there).
set -eu
D=${1:-experiments/validation/data}
mkdir -p "$D"
T="python3 calib/coloc/table.py"
C=calib/coloc
TM=$C/2026-11-29-h200-trainmps.json
$T --out GPU-eeb9c801="$D/h100-coloc.csv" --out GPU-25a995e6="$D/h100-coloc-run4.csv" \
    $C/2026-11-24-h100-run3?.json $C/2026-11-24-h100-run4?.json $C/2026-11-24-h100-tail.json
F="$C/2026-11-28-h200-x2-run1-gpu0.json $C/2026-11-28-h200-x2-run2-gpu0.json $C/2026-11-28-h200-x2-run2-gpu1.json"
$T --out GPU-beb0b59a="$D/h200-coloc-a.csv" --out GPU-889d0018="$D/h200-coloc-b.csv" \
    --out GPU-7927ae8b="$D/h200-coloc-c.csv" $F
$T --bracketed --out GPU-beb0b59a="$D/h200-coloc-a-bracketed.csv" \
    --out GPU-889d0018="$D/h200-coloc-b-bracketed.csv" --out GPU-7927ae8b="$D/h200-coloc-c-bracketed.csv" $F
$T --out GPU-a7c27df2="$D/h200-coloc-d.csv" $C/2026-11-29-h200-run5.json
$T --bracketed --out GPU-a7c27df2="$D/h200-coloc-d-bracketed.csv" $C/2026-11-29-h200-run5.json
R="$C/2026-11-29-h200-run6.json $C/2026-11-29-h200-run7.json"
$T --out GPU-168e6658="$D/h200-coloc-e.csv" $R
$T --bracketed --second-thread $TM --out GPU-168e6658="$D/h200-coloc-e-bracketed.csv" $R
$T --host-held --second-thread $TM --out GPU-168e6658="$D/h200-coloc-e-hostheld.csv" $R
$T $C/2026-11-29-h200-rot1.json $C/2026-11-29-h200-rot2.json > "$D/h200-coloc-f.csv"
$T --out GPU-594283e5+GPU-207f789c="$D/h200-coloc-g.csv" $C/2026-11-29-h200-x2-rot-gpu0.json \
    $C/2026-11-29-h200-x2-rot-gpu1.json
$T --out GPU-b330b5a7+GPU-797b21e6="$D/h200-coloc-h.csv" $C/2026-11-29-h200-x2-roth-gpu0.json \
    $C/2026-11-29-h200-x2-roth-gpu1.json
$T --out GPU-9447b99b+GPU-21cf34a0="$D/h200-coloc-i.csv" $C/2026-11-29-h200-x2-roti-gpu0.json \
    $C/2026-11-29-h200-x2-roti-gpu1.json
