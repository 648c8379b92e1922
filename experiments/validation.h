/* experiments/validation.h - reproduce the published tables (DESIGN.md §10).
 *
 * A validation scenario (experiments/validation/NAME.yaml) names a published table (a CSV in
 * ../shared/validation, or one shipped under experiments/validation/data with its citation), the
 * GPU it was measured on, the rows whose figures are FITTED (a stated minority) and the error
 * target on the others, which are PREDICTED. How a table's figures map onto the model (which
 * profile, which free parameters) is written per table in validation_published.c /
 * validation_measured.c, with the reason.
 *
 * Scenario schema:
 *   table: cern-simpletrack          # name printed in the summary line
 *   csv: cern-simpletrack.csv        # file name; looked up in the shared dir, then data/
 *   gpu: A100-PCIE-40GB              # catalog name
 *   target_mape_pct: 5               # target on predicted rows
 *   shared_target_mape_pct: 10       # optional, tables labelled by kind only: the target of
 *                                    # the shared kinds (ts, mps); target_mape_pct is then the
 *                                    # other kinds' and validate gives a verdict per kind
 *                                    # (val_kind_target)
 *   fit: ["10000000/7g.40gb", ...]   # figures used for fitting, as ROW/COLUMN labels
 *   exclude: [{figure: "10000/7g.40gb", reason: "..."}]   # optional: figures left out
 *   note: "..."                      # optional
 *   pool: h100-coloc-solo            # optional: validate also prints each kind's error over
 *                                    # every table naming this pool (val_table.pool), each
 *                                    # figure predicted by its own table's fit
 * An all-reduce table (an NCCL sweep: columns bytes, algbw_gb_s) says instead how it ran:
 *   ranks: 16                        # GPUs of the ring
 *   gpus_per_node: 8                 # optional: per node (default: all on one node)
 *   interconnect: a3-mega            # optional: the nodes' network (model/physics/comm.yaml)
 *   ll_max_bytes: 16777216           # largest message NCCL sent with LL in the sweep
 *   min_bytes: 1048576               # optional: smaller rows shown, not counted
 *   from_data_exclude: [{figure: "33554432/algbw", reason: "..."}]  # optional: rows that
 *                                    # model/physics/comm.yaml's numbers were computed from
 *   from_data_target_mape_pct: 15    # target on the NAME-from-data table's predictions
 *                                    # (required with ranks, refused without)
 * and gets two tables: NAME (alpha-beta fitted on the `fit` rows) and NAME-from-data (every row
 * predicted from model/physics/comm.yaml and the catalog alone, nothing fitted; val_table.from_data).
 * A table of calibration runs names the recordings instead of `csv` (calib/run-all.sh JSON of the
 * scenario's GPU, read by experiments/calib_json.h; paths relative to the scenario's directory):
 *   calib_runs: [../../calib/results/2026-11-22-h100-sxm.json, ...]   # figures runN-... per file
 * Ownership: results are plain data owned by the caller (val_table_fini).
 */
#ifndef SIMPROJ_EXPERIMENTS_VALIDATION_H
#define SIMPROJ_EXPERIMENTS_VALIDATION_H

#include <stdbool.h>
#include <stddef.h>

#include "model/hw/catalog.h"
#include "model/physics/speed.h"
#include "model/fit/wfit.h"
#include "sim/diag.h"

typedef struct val_figure {
    char label[64];      /* ROW/COLUMN */
    double published;
    double predicted;
    bool fitted;
    bool excluded;       /* left out of fitting and errors (reason printed) */
    char reason[384];    /* why this figure is excluded (the scenario's exclude reason), or "" */
    char unit[16];       /* "s", "TFLOPS", ... */
    double noise_pct;    /* measured relative noise of the published value (percent, one
                            standard deviation), 0 = not stated by the table */
    double lo, hi;       /* range of the prediction over the fit's family of profiles
                            (model/fit/wfit.h): every profile set that fits the fitted rows as well;
                            = predicted when the family has no other member */
} val_figure;

typedef struct val_table {
    char name[48];
    char skipped[1200];  /* non-empty: the table was not run, and why */
    double target_mape_pct;
    double shared_target_mape_pct; /* > 0: the ts and mps kinds' target, target_mape_pct the
                                      other kinds' (by-kind tables; val_kind_target) */
    int n_figures;
    val_figure *figures; /* owned */
    int n_fitted, n_predicted;
    double mape_pct, max_pct; /* over predicted figures */
    int n_in_range;           /* predicted figures whose published value lies in lo..hi */
    wfit_result fit;     /* the fit behind the predictions (owned) */
    char excluded_reason[256]; /* why figures without a reason of their own are excluded */
    char pool[48];       /* the scenario's `pool`, or "": validate pools the kinds of the
                            tables that name the same pool */
    bool by_kind;        /* labels are WORKLOAD/KIND[:WITH]: validate also prints the error of
                            the predicted figures per KIND (digits dropped: ts2, ts4 -> ts) */
    struct val_table *from_data; /* all-reduce tables: the same rows predicted from
                                    model/physics/comm.yaml alone, nothing fitted (owned), or NULL */
} val_table;

/* A figure's error: |predicted / published - 1| in percent, 100 when that is not finite (no
 * prediction). The one definition behind every error validate prints (per table, per kind, the
 * excluded figures' note). */
double val_figure_error_pct(const val_figure *f);

/* Run one scenario file. shared_dir: where the seed CSVs live (may not exist: the table is then
 * skipped with a message). Returns 0 (also when skipped), SIM_EINPUT for a bad scenario (reported
 * to d), SIM_ENOENT/SIM_EIO when the scenario file cannot be read. */
int val_run_file(const char *scenario_path, const char *shared_dir, const gpu_catalog *cat,
                 const phys_params *m, diag *d, val_table *out);

/* A scenario's table given in memory (val_run_buffer; the fuzz target
 * tests/fuzz/fuzz_validation.c). The text is borrowed. */
typedef struct val_mem {
    const char *csv_path; /* the table's name in messages (the scenario's csv key is not used) */
    const char *csv;      /* the CSV's text (need not be NUL-terminated) */
    size_t csv_len;
    bool fit;             /* false: stop once the figures are built and the scenario's fit and
                             exclude labels checked (nothing fitted or predicted) */
} val_mem;

/* Run one scenario given as `len` bytes of YAML (named scenario_path in messages) with the table
 * mem holds. No file is opened: a `calibration` is not applied (the catalog's GPU as it is), a
 * `base` not loaded (its profile fitted with the others), and a table of calib_runs is skipped
 * (out->skipped). Returns 0 or SIM_EINPUT (reported to d); out as val_run_file. */
int val_run_buffer(const char *scenario_path, const char *text, size_t len, const val_mem *mem,
                   const gpu_catalog *cat, const phys_params *m, diag *d, val_table *out);

/* Release what a table owns. */
void val_table_fini(val_table *t);

#endif
