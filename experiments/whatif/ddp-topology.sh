#!/bin/sh
# experiments/whatif/ddp-topology.sh DIR - the topology study's table from the runs under DIR
# (DIR/*/jobs.csv of experiments/whatif/ddp-topology.yaml): for every finished 16-worker job, its
# topology (workers per node, in node order) and epoch time (jct_s), then per number of nodes the
# count, min, median, mean and max of the epoch times. Reads only; prints to stdout.
set -eu
dir=${1:?usage: ddp-topology.sh DIR}
cat "$dir"/*/jobs.csv | awk -F, '$2 == "ddp16" && $13 == "done" {
    n = split($14, u, " "); delete per; k = 0; topo = ""
    for (i = 1; i <= n; i++) { split(u[i], p, "/"); if (!(p[1] in per)) order[++k] = p[1]; per[p[1]]++ }
    for (i = 1; i <= k; i++) topo = topo (i > 1 ? "," : "") per[order[i]]
    printf "%d [%s] %.3f\n", k, topo, $12
}' | sort -n -k1,1 -k3,3n > "$dir/topology.txt"
echo "nodes jobs min_s median_s mean_s max_s topologies"
awk '{ n[$1]++; t[$1, n[$1]] = $3; s[$1] += $3; if (!index(tp[$1], $2)) tp[$1] = tp[$1] " " $2 }
END { for (k = 1; k <= 16; k++) if (n[k]) {
        m = n[k]; med = (m % 2) ? t[k, (m + 1) / 2] : (t[k, m / 2] + t[k, m / 2 + 1]) / 2
        printf "%d %d %.1f %.1f %.1f %.1f%s\n", k, m, t[k, 1], med, s[k] / m, t[k, m], tp[k] } }' \
    "$dir/topology.txt"
