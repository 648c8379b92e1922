#!/bin/sh
# tools/bench-sweep.sh - speed-up of `slicesim sweep` with local workers and MPI ranks
# (`make bench-sweep`). Runs experiments/bench/sweep.yaml (16 points) with -j 1, -j 2,
# mpirun -np 1 and -np 2, checks that every run gave the same point files, and prints one
# `key=value` line per configuration:
#   sweep mode=... points=16 wall_s=T speedup=T(-j 1)/T
# then, from the per-point wall times of the -j 1 run (point_info.json), what K ranks would take
# on a node with K free cores: the points are dealt round-robin (point k to rank k mod K), so
# T_K = start-up + max over ranks of the sum of their points' times:
#   sweep_estimate ranks=K wall_s=T speedup=...
# The machine's other load shows in the figures: run it on a quiet machine.
set -eu
SLICESIM=${SLICESIM:-./slicesim}
FILE=${1:-experiments/bench/sweep.yaml}
dir=$(mktemp -d /tmp/slicesim-bench-sweep-XXXXXX)
trap 'rm -rf "$dir"' EXIT
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
now() { date +%s.%N; }
run() { # name, command...
    name=$1; shift
    t0=$(now); "$@" >/dev/null; t1=$(now)
    echo "$name $(echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}')" >> "$dir/times"
}
run j1 "$SLICESIM" sweep "$FILE" -o "$dir/j1" -j 1
run j2 "$SLICESIM" sweep "$FILE" -o "$dir/j2" -j 2
if command -v mpirun >/dev/null 2>&1; then
    run np1 mpirun $root --oversubscribe -np 1 "$SLICESIM" sweep "$FILE" -o "$dir/np1"
    run np2 mpirun $root --oversubscribe -np 2 "$SLICESIM" sweep "$FILE" -o "$dir/np2"
fi
for d in j2 np1 np2; do
    [ -d "$dir/$d" ] || continue
    diff -r -x run_info.json -x point_info.json "$dir/j1" "$dir/$d" >/dev/null ||
        { echo "bench-sweep: $d gave different point files than -j 1" >&2; exit 1; }
done
n=$(ls "$dir/j1/points" | wc -l)
awk -v n="$n" '
    $1 == "j1" { base = $2 }
    { t[$1] = $2; order[NR] = $1 }
    END {
        split("j1:-j 1,j2:-j 2,np1:mpirun -np 1,np2:mpirun -np 2", m, ",")
        for (i = 1; i <= NR; i++) {
            k = order[i]
            printf "sweep mode=%s points=%d wall_s=%.3f speedup=%.2f identical=yes\n", k, n, t[k], base / t[k]
        }
    }' "$dir/times"
# per-point times of the -j 1 run, in point order (directory names sort in point order)
for p in "$dir"/j1/points/*; do
    awk -F'[:,]' '/"wall_s"/ { gsub(/[ \t]/, "", $2); print $2 }' "$p/point_info.json"
done > "$dir/points"
j1=$(awk '$1 == "j1" { print $2 }' "$dir/times")
awk -v total="$j1" '
    { w[NR - 1] = $1; sum += $1 }
    END {
        startup = total - sum; if (startup < 0) startup = 0
        printf "sweep_points n=%d point_mean_s=%.3f point_max_s=%.3f startup_s=%.3f\n", NR, sum / NR, max(w, NR), startup
        for (k = 1; k <= 16; k *= 2) {
            worst = 0
            for (r = 0; r < k; r++) { s = 0; for (i = r; i < NR; i += k) s += w[i]; if (s > worst) worst = s }
            printf "sweep_estimate ranks=%d wall_s=%.3f speedup=%.2f\n", k, startup + worst, total / (startup + worst)
        }
    }
    function max(a, n,   i, m) { m = 0; for (i = 0; i < n; i++) if (a[i] > m) m = a[i]; return m }' "$dir/points"
