/* workloads/tracenodes.h - a traced node list -> node groups (openb's openb_node_list_*.csv).
 *
 * Columns (../shared/traces/README.md section 1): sn (node name), cpu_milli (milli-cores),
 * memory_mib (MiB), gpu (GPUs on the node), model (GPU model; empty on CPU-only nodes).
 * Nodes with the same (model, gpu, cpu_milli, memory_mib) form one group, in order of first
 * appearance, so 1,523 openb nodes become a few dozen groups. Nodes without GPUs (model empty)
 * form groups with gpus 0 too: they hold CPU-only pods; n_cpu_nodes counts them.
 * The GPU model stays the trace's name (T4, V100M32, G2...); the scenario loader maps it to a
 * catalog type (experiments/scenario.h, `cluster.trace.gpu_map`).
 * Errors: FILE:LINE:COL: error: COLUMN: PROBLEM; expected WHAT, got 'VALUE' (workloads/csvin.h).
 * Streaming: one line at a time; memory is one entry per distinct group.
 * Ownership: groups and their strings live in the arena given.
 */
#ifndef SIMPROJ_WORKLOADS_TRACENODES_H
#define SIMPROJ_WORKLOADS_TRACENODES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/arena.h"
#include "sim/diag.h"

typedef struct tracenodes_group {
    const char *model;  /* the trace's GPU model name */
    uint32_t gpus;      /* GPUs per node; 0 on a CPU-only node (model "") */
    uint64_t cpu_milli; /* CPU capacity per node, milli-cores */
    uint64_t mem_bytes; /* host memory per node, bytes */
    uint32_t count;     /* nodes */
    int line;           /* line of its first node */
} tracenodes_group;

typedef struct tracenodes {
    size_t n_groups;
    tracenodes_group *groups;
    uint64_t n_nodes;     /* nodes read */
    uint64_t n_gpus;      /* GPUs on them */
    uint64_t n_cpu_nodes; /* nodes without GPUs */
} tracenodes;

/* Read the node list from f (borrowed) under display name `name`. Returns 0 and fills *out;
 * SIM_EINPUT after reporting every bad row (up to the diag cap); SIM_EIO on a read error. */
int tracenodes_read(FILE *f, const char *name, arena *a, diag *d, tracenodes *out);

#endif
