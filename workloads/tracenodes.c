/* workloads/tracenodes.c - a traced node list -> node groups (see tracenodes.h). */
#include "workloads/tracenodes.h"

#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"
#include "workloads/csvin.h"

static const char *const columns[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
enum { N_COLUMNS = 5 };

int tracenodes_read(FILE *f, const char *name, arena *a, diag *d, tracenodes *out)
{
    *out = (tracenodes){0};
    csvin *in = NULL;
    int rc = csvin_open(f, name, true, d, &in);
    if (rc) {
        return rc;
    }
    int col[N_COLUMNS];
    bool ok = true;
    for (int k = 0; k < N_COLUMNS; k++) {
        col[k] = csvin_column(in, columns[k]);
        if (col[k] < 0) {
            diag_error(d, (src_loc){name, 1, 1}, columns[k],
                       "missing column in the header; expected an openb node list "
                       "(sn,cpu_milli,memory_mib,gpu,model), got no '%s'",
                       columns[k]);
            ok = false;
        }
    }
    int errors = diag_error_count(d);
    size_t cap = 0;
    while (ok && (rc = csvin_next(in)) != 0) {
        if (rc == SIM_EIO || diag_error_count(d) >= DIAG_MAX_ERRORS) {
            break;
        }
        if (rc < 0) {
            continue;
        }
        uint64_t cpu = 0, mib = 0, gpus = 0;
        bool row = csvin_u64(in, (size_t)col[1], 0, UINT32_MAX, &cpu);
        row = csvin_u64(in, (size_t)col[2], 0, UINT64_MAX >> 20, &mib) && row;
        row = csvin_u64(in, (size_t)col[3], 0, 64, &gpus) && row;
        const char *model = csvin_field(in, (size_t)col[4]);
        if (row && gpus > 0 && !model[0]) {
            csvin_error(in, (size_t)col[4],
                        "missing GPU model on a node with %llu GPUs; expected a model like T4, "
                        "got ''",
                        (unsigned long long)gpus);
            row = false;
        }
        if (!row) {
            continue;
        }
        out->n_cpu_nodes += gpus == 0;
        out->n_nodes++;
        out->n_gpus += gpus;
        size_t g = 0;
        while (g < out->n_groups &&
               !(out->groups[g].gpus == gpus && out->groups[g].cpu_milli == cpu &&
                 out->groups[g].mem_bytes == mib << 20 && !strcmp(out->groups[g].model, model))) {
            g++;
        }
        if (g == out->n_groups) {
            if (g == cap) {
                cap = cap ? 2 * cap : 16;
                out->groups = xrealloc(out->groups, cap * sizeof *out->groups, "node groups");
            }
            out->groups[g] = (tracenodes_group){
                arena_strdup(a, model), (uint32_t)gpus, cpu, mib << 20, 0, csvin_line(in)};
            out->n_groups++;
        }
        out->groups[g].count++;
    }
    csvin_close(in);
    /* move the groups into the arena so that the caller owns nothing */
    tracenodes_group *kept = arena_calloc(a, out->n_groups ? out->n_groups : 1, sizeof *kept);
    if (out->n_groups) {
        memcpy(kept, out->groups, out->n_groups * sizeof *kept);
    }
    free(out->groups);
    out->groups = kept;
    if (rc == SIM_EIO) {
        return SIM_EIO;
    }
    if (!ok || diag_error_count(d) > errors) {
        return SIM_EINPUT;
    }
    if (out->n_groups == 0) {
        diag_error(d, (src_loc){name, 1, 1}, NULL,
                   "no node in the node list; expected at least one row, got none");
        return SIM_EINPUT;
    }
    return 0;
}
