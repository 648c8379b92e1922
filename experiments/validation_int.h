/* experiments/validation_int.h - internals shared by the validation files: validation.c (the
 * scenario schema, CSV reading, the figure builder's helpers, the all-reduce sweeps, fit and
 * predict), validation_published.c (the builders of the published tables: CERN, CHEP,
 * MIGProfiler, nos) and validation_measured.c (the builders of our own measurements: the H100
 * co-location table and the replayed calibration recordings). Nothing outside
 * experiments/validation*.c includes it.
 * Ownership: a builder's figures live in the builder; the scenario and CSV are borrowed.
 * Units: as validation.h (seconds, the figure's own unit).
 */
#ifndef SIMPROJ_EXPERIMENTS_VALIDATION_INT_H
#define SIMPROJ_EXPERIMENTS_VALIDATION_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "experiments/calib_json.h"
#include "experiments/validation.h"
#include "model/hw/catalog.h"
#include "model/physics/comm.h"
#include "model/physics/speed.h"
#include "model/fit/wfit.h"
#include "sim/err.h"

typedef struct val_exclude {
    const char *figure;
    const char *reason;
    src_loc at, figure_at;
} val_exclude;

typedef struct val_scenario {
    const char *table, *csv, *gpu, *note, *base;
    const char *calibration; /* a `slicesim fit` model file, relative to the scenario's dir */
    const char **calib_runs; /* calibration recordings (calib/run-all.sh JSON) replayed instead
                                of a CSV, relative to the scenario's dir */
    size_t n_calib_runs;
    const char *pool;    /* tables pooled per kind by validate (same name), or NULL */
    const char *model;   /* row filter on a `model` column, or NULL */
    const char *cls;     /* precision class of the workload's compute, or NULL (fp32) */
    int ranks;           /* all-reduce tables: ranks of the sweep (0 = a workload table) */
    int gpus_per_node;   /* all-reduce tables: ranks per node (0 = all on one node) */
    const char *interconnect; /* all-reduce tables: the nodes' network (model/physics/comm.yaml) */
    const char *topology;     /* all-reduce tables: the nodes' wiring (model/physics/comm.yaml) */
    const char *harness_row;  /* all-reduce tables: the row (below min_bytes) whose measured time
                                 less the model's is the benchmark's own cost per timed call */
    val_exclude *fd_exclude;  /* all-reduce tables: rows left out of the from-data errors */
    size_t n_fd_exclude;
    double ll_max_bytes; /* all-reduce tables: largest message NCCL sent with LL in the sweep */
    double min_bytes;    /* all-reduce tables: smaller messages are shown, not counted */
    double target;
    double fd_target;    /* all-reduce tables: target on the -from-data table's predictions */
    double shared_target; /* by-kind tables: target of the shared kinds (ts, mps), or 0 */
    const char **fit;
    size_t n_fit;
    val_exclude *exclude;
    size_t n_exclude;
    src_loc table_at, gpu_at, fit_at, interconnect_at, topology_at, harness_row_at, calib_runs_at,
        calibration_at, fd_target_at, shared_target_at;
} val_scenario;

#define CSV_MAX_COLS 16

typedef struct csv_table {
    int n_cols;
    char *header[CSV_MAX_COLS];
    int n_rows;
    char *(*rows)[CSV_MAX_COLS];
    int *line;  /* line of each row in the file (owned) */
    char *text; /* owned buffer that the cells point into */
} csv_table;

typedef struct fig_spec {
    val_figure f;
    int profile;
    partition_cfg cfg;
    double batch;
    double work;  /* value = work * unit_time (time) or work / unit_time (rate) */
    bool is_rate;
    double util;  /* measured GPU utilisation (fitted with the figure), or < 0 */
    double host_s; /* measured host time per iteration (fitted with the figure), or 0 */
    int with;     /* profile index of a co-runner (cfg.with[0] at prediction), or -1 */
    int with_n;   /* clients of that co-runner (cfg.with_n[0]); 1 unless stated */
    int workers;  /* a DDP job of this many workers (>= 2; cfg: each worker's sharing, peers =
                     identical gangs on the same GPUs), predicted by val_ddp_rate; 0 = not DDP */
    double ddp_host_sd; /* a DDP row: the relative sd between its ranks' host times within a
                           step, measured on its runs; where the row is fitted it sets the
                           model's host spread s (fit_ddp_host); 0 = not measured */
} fig_spec;

typedef struct builder {
    const val_scenario *sc;
    const gpu_type *gpu;
    const phys_params *m;
    wfit_spec spec;
    bool has_base; /* profile 0 comes from another scenario's fit: keep it fixed */
    int n;
    fig_spec figs[256];
    char err[320];
    int err_line;                      /* line of the CSV row that err is about, or 0 */
    char names[WFIT_MAX_PROFILES][32]; /* profile names a builder made (the CSV is freed first) */
    gpu_type calibrated;               /* the scenario's GPU with its calibration applied */
    cal_data *runs;                    /* the scenario's calib_runs, loaded (owned) */
    int n_runs;
    bool by_kind;                      /* labels are WORKLOAD/KIND[:WITH] (val_table.by_kind) */
    comm_params comm;                  /* model/physics/comm.yaml, for DDP figures (workers >= 2) */
} builder;

/* Column index of NAME in the table's header, or -1. */
int val_csv_col(const csv_table *t, const char *name);
/* TEXT is PREFIX then a decimal integer K in [lo, hi]: true and *k = K. */
bool val_prefixed_int(const char *text, const char *prefix, int lo, int hi, int *k);
/* A header "shared_xK" (K in 1..64): true and *k = K. */
bool val_shared_peers(const char *header, int *k);
/* b->err about row r of t (0-based): "row R: " then the message; reported at the row's line. */
void val_row_error(builder *b, const csv_table *t, int r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A cell that parses as a finite number: true and *out. */
bool val_cell_double(const char *s, double *out);
/* The MIG profile NAME of the builder's GPU; NULL for "full" (the whole GPU) and, with b->err
 * set, for a name the GPU does not have. */
const mig_profile *val_find_part(builder *b, const char *name);
/* A new figure (label ROW/COLUMN, published value, unit) on the whole GPU, batch 1; NULL with
 * b->err set when the builder is full. */
fig_spec *val_add_fig(builder *b, const char *label, double published, const char *unit);
/* Free a profile parameter / a model parameter in the fit. */
void val_free_param(builder *b, int profile, wl_param which);
void val_free_mparam(builder *b, wfit_mparam which);

/* The builders: each maps one table onto profiles, figures and free parameters (b->err set on a
 * table it cannot map). Published tables (validation_published.c): */
void val_build_simpletrack(builder *b, const csv_table *t);
void val_build_timeslicing(builder *b, const csv_table *t);
void val_build_flops(builder *b, const csv_table *t);
void val_build_finetune(builder *b, const csv_table *t);
void val_build_batch_latency(builder *b, const csv_table *t);
void val_build_sharing(builder *b, const csv_table *t);
/* Our own measurements (validation_measured.c): */
void val_build_coloc(builder *b, const csv_table *t);
void val_build_calib_mps(builder *b, const csv_table *t);
void val_build_calib_ts(builder *b, const csv_table *t);
void val_build_ddp(builder *b, const csv_table *t);
/* Iterations per second of one worker of figure f's DDP job (f->workers >= 2) with profile p
 * and model m (model/physics/ddp.h on the builder's GPU and comm); NaN when the model cannot place or
 * evaluate it. */
double val_ddp_rate(const builder *b, const fig_spec *f, const wl_profile *p,
                    const phys_params *m);

#endif
