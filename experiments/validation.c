/* experiments/validation.c - the validation scenarios: tables -> observations -> fit -> predict.
 * See validation.h. Each table's mapping onto the model is one builder function, in
 * validation_published.c or validation_measured.c (validation_int.h); its comment says which
 * profile shape it assumes and why. No published figure is written here: they
 * are all read from the CSVs. */
#include "experiments/validation.h"
#include "experiments/validation_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/calib_json.h"
#include "experiments/comm_load.h"
#include "experiments/cfg.h"
#include "experiments/fileio.h"
#include "experiments/yamlx.h"
#include "model/fit/calapply.h"
#include "model/fit/calfit.h"
#include "model/physics/comm.h"
#include "model/physics/ddp.h"
#include "model/physics/predict.h"
#include "model/physics/speed.h"
#include "model/fit/wmeas.h"
#include "sim/arena.h"
#include "sim/err.h"
#include "sim/xalloc.h"

/* ---- scenario file ---- */


static const char *const class_names[] = {"fp32", "fp64", "fp16", "tensor", NULL};

static const cfg_field exclude_fields[] = {
    CFG_SELF(val_exclude, at),
    {"figure", CFG_STRING, .required = true, .off = offsetof(val_exclude, figure),
     CFG_LOC(val_exclude, figure_at)},
    {"reason", CFG_STRING, .required = true, .off = offsetof(val_exclude, reason)},
    {0},
};

static const cfg_field scenario_fields[] = {
    {"table", CFG_STRING, .required = true, .off = offsetof(val_scenario, table),
     CFG_LOC(val_scenario, table_at)},
    {"csv", CFG_STRING, .off = offsetof(val_scenario, csv)}, /* or calib_runs (run_table) */
    {"gpu", CFG_STRING, .required = true, .off = offsetof(val_scenario, gpu),
     CFG_LOC(val_scenario, gpu_at)},
    {"target_mape_pct", CFG_DOUBLE, .required = true, CFG_MIN(0), CFG_MAX(100),
     .off = offsetof(val_scenario, target)},
    {"shared_target_mape_pct", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(100),
     .off = offsetof(val_scenario, shared_target), CFG_LOC(val_scenario, shared_target_at)},
    {"from_data_target_mape_pct", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(100),
     .off = offsetof(val_scenario, fd_target), CFG_LOC(val_scenario, fd_target_at)},
    {"fit", CFG_SEQ, .required = true, CFG_MIN(1), .elem = CFG_STRING,
     .off = offsetof(val_scenario, fit), .count_off = offsetof(val_scenario, n_fit),
     CFG_LOC(val_scenario, fit_at)},
    {"exclude", CFG_SEQ, CFG_SEQ_OF(val_scenario, exclude, n_exclude, val_exclude, exclude_fields)},
    {"note", CFG_STRING, .off = offsetof(val_scenario, note)},
    {"base", CFG_STRING, .off = offsetof(val_scenario, base)},
    {"calibration", CFG_STRING, .off = offsetof(val_scenario, calibration),
     CFG_LOC(val_scenario, calibration_at)},
    {"model", CFG_STRING, .off = offsetof(val_scenario, model)},
    {"pool", CFG_STRING, .off = offsetof(val_scenario, pool)},
    {"class", CFG_STRING, .names = class_names, .off = offsetof(val_scenario, cls)},
    {"ranks", CFG_INT, CFG_MIN(2), CFG_MAX(DDP_MAX_WORKERS), .off = offsetof(val_scenario, ranks)},
    {"gpus_per_node", CFG_INT, CFG_MIN(1), CFG_MAX(64),
     .off = offsetof(val_scenario, gpus_per_node)},
    {"interconnect", CFG_STRING, .off = offsetof(val_scenario, interconnect),
     CFG_LOC(val_scenario, interconnect_at)},
    {"topology", CFG_STRING, .off = offsetof(val_scenario, topology),
     CFG_LOC(val_scenario, topology_at)},
    {"harness_row", CFG_STRING, .off = offsetof(val_scenario, harness_row),
     CFG_LOC(val_scenario, harness_row_at)},
    {"from_data_exclude", CFG_SEQ,
     CFG_SEQ_OF(val_scenario, fd_exclude, n_fd_exclude, val_exclude, exclude_fields)},
    {"ll_max_bytes", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e15),
     .off = offsetof(val_scenario, ll_max_bytes)},
    {"min_bytes", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e15), .off = offsetof(val_scenario, min_bytes)},
    {"calib_runs", CFG_SEQ, CFG_MIN(1), CFG_MAX(WFIT_MAX_PROFILES / 2), .elem = CFG_STRING,
     .off = offsetof(val_scenario, calib_runs), .count_off = offsetof(val_scenario, n_calib_runs),
     CFG_LOC(val_scenario, calib_runs_at)},
    {0},
};

/* ---- CSV ---- */


static void csv_free(csv_table *t)
{
    free(t->rows);
    free(t->line);
    free(t->text);
    memset(t, 0, sizeof *t);
}

/* Split `line` at commas in place into at most CSV_MAX_COLS cells; returns the number of cells
 * the line has (more than CSV_MAX_COLS when it has more) and, through extra, where the first
 * cell past CSV_MAX_COLS starts (or NULL). */
static int split(char *line, char **cells, const char **extra)
{
    int n = 0;
    char *p = line;
    *extra = NULL;
    for (;;) {
        if (n < CSV_MAX_COLS) {
            cells[n] = p;
        } else if (n == CSV_MAX_COLS) {
            *extra = p;
        }
        n++;
        char *c = strchr(p, ',');
        if (!c) {
            break;
        }
        if (n <= CSV_MAX_COLS) {
            *c = '\0';
        }
        p = c + 1;
    }
    return n;
}

/* Split t->text (owned, len bytes, NUL-terminated) into lines and cells: the first line that is
 * neither empty nor a '#' comment is the header (at most CSV_MAX_COLS columns), every later one
 * a row of as many cells. Returns 0, or SIM_EINPUT with the first bad line reported to d
 * (messages name the file `path`). */
static int csv_parse(const char *path, size_t len, csv_table *t, diag *d)
{
    if (memchr(t->text, '\0', len)) {
        src_loc at = diag_loc_from_offset(path, t->text, len,
                                          (size_t)((char *)memchr(t->text, '\0', len) - t->text));
        diag_error(d, at, "csv", "NUL byte in the table; expected text, got binary data");
        return SIM_EINPUT;
    }
    int cap_rows = 64;
    t->rows = xcalloc((size_t)cap_rows, sizeof *t->rows, "csv rows");
    t->line = xcalloc((size_t)cap_rows, sizeof *t->line, "csv rows");
    char *next = t->text;
    for (int lineno = 1; next; lineno++) {
        char *line = next, *nl = strchr(line, '\n');
        next = nl ? nl + 1 : NULL;
        if (nl) {
            *nl = '\0';
        }
        size_t n_line = strlen(line);
        if (n_line > 0 && line[n_line - 1] == '\r') {
            line[--n_line] = '\0';
        }
        if (line[0] == '#' || line[0] == '\0') {
            continue;
        }
        char shown[64];
        snprintf(shown, sizeof shown, "%.*s%s", 48, line, n_line > 48 ? "..." : "");
        const char *extra;
        char **cells = t->header;
        char field[32] = "header";
        if (t->n_cols > 0) {
            if (t->n_rows == cap_rows) {
                cap_rows *= 2;
                t->rows = xrealloc(t->rows, (size_t)cap_rows * sizeof *t->rows, "csv rows");
                t->line = xrealloc(t->line, (size_t)cap_rows * sizeof *t->line, "csv rows");
            }
            cells = t->rows[t->n_rows];
            snprintf(field, sizeof field, "row %d", t->n_rows + 1);
        }
        int n = split(line, cells, &extra);
        if (t->n_cols == 0 && n > CSV_MAX_COLS) {
            diag_error(d, (src_loc){path, lineno, (int)(extra - line) + 1}, field,
                       "%d columns; expected at most %d, got '%s'", n, CSV_MAX_COLS, shown);
            return SIM_EINPUT;
        }
        if (t->n_cols == 0) {
            t->n_cols = n;
            continue;
        }
        if (n != t->n_cols) {
            diag_error(d, (src_loc){path, lineno, 1}, field,
                       "%d cells; expected %d, one per header column, got '%s'", n, t->n_cols,
                       shown);
            return SIM_EINPUT;
        }
        t->line[t->n_rows++] = lineno;
    }
    return 0;
}

static int csv_read(const char *path, csv_table *t, diag *d)
{
    memset(t, 0, sizeof *t);
    size_t len;
    int rc = fileio_read_all(path, FILEIO_MAX_BYTES, &t->text, &len);
    if (rc) {
        return rc;
    }
    return csv_parse(path, len, t, d);
}

/* The CSV given in memory (val_mem), copied into t. */
static int csv_read_mem(const char *path, const char *text, size_t len, csv_table *t, diag *d)
{
    memset(t, 0, sizeof *t);
    t->text = xmalloc(len + 1, "csv text");
    memcpy(t->text, text, len);
    t->text[len] = '\0';
    return csv_parse(path, len, t, d);
}

int val_csv_col(const csv_table *t, const char *name)
{
    for (int i = 0; i < t->n_cols; i++) {
        if (!strcmp(t->header[i], name)) {
            return i;
        }
    }
    return -1;
}

/* Co-runners of a time-slicing column "shared_x<K>" (K >= 1); false for any other header. */
bool val_prefixed_int(const char *text, const char *prefix, int lo, int hi, int *k)
{
    size_t n = strlen(prefix);
    int64_t v;
    char problem[64];
    if (!text || strncmp(text, prefix, n) != 0 || !isdigit((unsigned char)text[n]) ||
        !cfg_parse_i64(text + n, &v, problem, sizeof problem) || v < lo || v > hi) {
        return false;
    }
    *k = (int)v;
    return true;
}

bool val_shared_peers(const char *header, int *k)
{
    return val_prefixed_int(header, "shared_x", 1, 64, k);
}

void val_row_error(builder *b, const csv_table *t, int r, const char *fmt, ...)
{
    int w = snprintf(b->err, sizeof b->err, "row %d: ", r + 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err + w, sizeof b->err - (size_t)w, fmt, ap);
    va_end(ap);
    b->err_line = t->line[r];
}

bool val_cell_double(const char *s, double *out)
{
    char problem[64];
    return s && cfg_parse_double(s, out, problem, sizeof problem);
}

/* ---- figures ---- */


const mig_profile *val_find_part(builder *b, const char *name)
{
    if (!strcmp(name, "full")) {
        return NULL;
    }
    const mig_profile *p = gpu_find_profile(b->gpu, name);
    if (!p) {
        snprintf(b->err, sizeof b->err, "partition '%s' is not a profile of %s", name,
                 b->gpu->name);
    }
    return p;
}

fig_spec *val_add_fig(builder *b, const char *label, double published, const char *unit)
{
    if (b->n >= (int)(sizeof b->figs / sizeof b->figs[0])) {
        snprintf(b->err, sizeof b->err, "too many figures");
        return NULL;
    }
    fig_spec *f = &b->figs[b->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->f.label, sizeof f->f.label, "%s", label);
    snprintf(f->f.unit, sizeof f->f.unit, "%s", unit);
    f->f.published = published;
    f->batch = 1;
    f->util = -1;
    f->with = -1;
    f->with_n = 1;
    partition_cfg_init(&f->cfg, b->gpu);
    return f;
}

void val_free_param(builder *b, int profile, wl_param which)
{
    b->spec.free[b->spec.n_free++] = (wfit_free){.profile = profile, .which = (int)which};
}

void val_free_mparam(builder *b, wfit_mparam which)
{
    b->spec.free[b->spec.n_free++] = (wfit_free){.is_model = true, .which = (int)which};
}

typedef void build_fn(builder *b, const csv_table *t);

static const struct {
    const char *table;
    build_fn *fn;
} builders[] = {
    {"cern-simpletrack", val_build_simpletrack},
    {"chep-timeslicing", val_build_timeslicing},
    {"cern-mig-flops", val_build_flops},
    {"cern-finetune", val_build_finetune},
    {"migprofiler-resnet50-train", val_build_batch_latency},
    {"migprofiler-vit-infer", val_build_batch_latency},
    {"migprofiler-resnet50-infer", val_build_batch_latency},
    {"nos-yolos-sharing", val_build_sharing},
    {"h100-coloc", val_build_coloc},
    {"h100-coloc-ts2", val_build_coloc},
    {"h100-coloc-run4", val_build_coloc},
    {"h200-coloc-a", val_build_coloc},
    {"h200-coloc-b", val_build_coloc},
    {"h200-coloc-c", val_build_coloc},
    {"h200-coloc-a-bracketed", val_build_coloc},
    {"h200-coloc-b-bracketed", val_build_coloc},
    {"h200-coloc-c-bracketed", val_build_coloc},
    {"h200-coloc-d", val_build_coloc},
    {"h200-coloc-d-bracketed", val_build_coloc},
    {"h200-coloc-a-mps2", val_build_coloc},
    {"h200-coloc-b-mps2", val_build_coloc},
    {"h200-coloc-c-mps2", val_build_coloc},
    {"h200-coloc-d-mps2", val_build_coloc},
    {"h200-coloc-h-mps2", val_build_coloc},
    {"h200-coloc-g-mps2", val_build_coloc},
    {"h200-coloc-f-mps2", val_build_coloc},
    {"h200-coloc-i-mps2", val_build_coloc},
    {"h200-coloc-e", val_build_coloc},
    {"h200-coloc-e-bracketed", val_build_coloc},
    {"h200-coloc-e-hostheld", val_build_coloc},
    {"h200-coloc-f", val_build_coloc},
    {"h200-coloc-g", val_build_coloc},
    {"h200-coloc-h", val_build_coloc},
    {"h200-coloc-i", val_build_coloc},
    {"calib-h100-mps", val_build_calib_mps},
    {"calib-h100-timeslice", val_build_calib_ts},
    {"calib-h100-timeslice-run2", val_build_calib_ts},
    {"h200x4-ddp", val_build_ddp},
    {"h200x4-ddp-scale", val_build_ddp},
    {"h200x4-ddp-scale-b", val_build_ddp},
    {"h200x4-ddp-scale-c", val_build_ddp},
    {"h200x2-ddp", val_build_ddp},
};

/* ---- all-reduce sweeps ---- */

/* The sweep's ring as model/physics/comm.yaml and the catalog see it: `ranks` whole GPUs of the table's
 * type, gpus_per_node of them per node (one node when the scenario does not say), the nodes
 * joined by the scenario's interconnect (model/physics/comm.yaml's default network when it names none),
 * placed and ordered as model/physics/ddp.h places a job's workers. Returns 0, or SIM_EINPUT reported
 * to d. */
static int sweep_ring(const val_scenario *sc, const gpu_type *g, const comm_params *cp, diag *d,
                      comm_ring *ring)
{
    ddp_job job;
    memset(&job, 0, sizeof job);
    job.gpu = g;
    job.workers = sc->ranks;
    job.per_gpu = 1;
    job.gpus_per_node = sc->gpus_per_node > 0 ? sc->gpus_per_node : sc->ranks;
    int net = comm_load_net(cp, sc->interconnect, sc->interconnect_at, "interconnect", d);
    if (net < 0) {
        return SIM_EINPUT;
    }
    job.nic_bytes_per_s = cp->nets[net].line_bytes_per_s;
    job.nics = cp->nets[net].nics;
    if (sc->topology) {
        int t = comm_topo_find(cp, sc->topology);
        if (t < 0) {
            char names[256];
            comm_topo_names(cp, names, sizeof names);
            diag_error(d, sc->topology_at, "topology",
                       "unknown topology; expected one of [%s], got '%s'", names, sc->topology);
            return SIM_EINPUT;
        }
        job.topo = &cp->topos[t];
    }
    char why[256];
    if (ddp_shape(&job, why, sizeof why) != 0 || ddp_ring(&job, cp, ring, why, sizeof why) != 0) {
        diag_error(d, sc->table_at, "ranks", "%s; expected a ring of whole GPUs, got %d ranks",
                   why, sc->ranks);
        return SIM_EINPUT;
    }
    return 0;
}

double val_figure_error_pct(const val_figure *f)
{
    double e = fabs(f->predicted / f->published - 1) * 100;
    return isfinite(e) ? e : 100;
}

/* Error statistics of a table's predicted figures (neither fitted nor excluded). */
static void table_errors(val_table *t)
{
    double sum = 0;
    t->n_fitted = t->n_predicted = 0;
    t->max_pct = 0;
    for (int k = 0; k < t->n_figures; k++) {
        const val_figure *f = &t->figures[k];
        if (f->excluded) {
            continue;
        }
        if (f->fitted) {
            t->n_fitted++;
            continue;
        }
        double e = val_figure_error_pct(f);
        t->n_predicted++;
        sum += e;
        t->max_pct = fmax(t->max_pct, e);
    }
    t->mape_pct = t->n_predicted ? sum / t->n_predicted : 0;
}

/* harness_row: the benchmark's own cost per timed call (a framework's launch path inside the
 * timed region) is that row's measured time less the model's time for it (model_s[k], the row's
 * all-reduce alone); added to every from-data prediction of fd, and recorded as its parameter
 * harness_call_s. The row must lie below min_bytes (not a prediction), and the cost be >= 0. */
static void harness(const val_scenario *sc, val_table *fd, const double *model_s, diag *d)
{
    int k = 0;
    while (k < fd->n_figures && strcmp(fd->figures[k].label, sc->harness_row)) {
        k++;
    }
    double b = k < fd->n_figures ? strtod(fd->figures[k].label, NULL) : 0;
    if (k == fd->n_figures || !(b < sc->min_bytes)) {
        diag_error(d, sc->harness_row_at, "harness_row",
                   "%s; expected a figure BYTES/algbw below min_bytes (%.0f), got '%s'",
                   k == fd->n_figures ? "no such figure" : "a row the table counts",
                   sc->min_bytes, sc->harness_row);
        return;
    }
    double h = b / (fd->figures[k].published * 1e9) - model_s[k];
    if (!(h >= 0)) {
        diag_error(d, sc->harness_row_at, "harness_row",
                   "the row is faster than the model's all-reduce alone (by %.3g s); expected a "
                   "row whose time holds the benchmark's own cost, got '%s'",
                   -h, sc->harness_row);
        return;
    }
    snprintf(fd->figures[k].reason, sizeof fd->figures[k].reason,
             "harness_call_s was computed from this row");
    for (int j = 0; j < fd->n_figures; j++) {
        double bj = strtod(fd->figures[j].label, NULL);
        fd->figures[j].predicted = bj / (model_s[j] + h) / 1e9;
    }
    wfit_param_result *pa = &fd->fit.params[fd->fit.n_params++];
    snprintf(pa->name, sizeof pa->name, "harness_call_s");
    pa->value = h;
    pa->pinned = true;
}

/* An NCCL all-reduce sweep (columns bytes, algbw_gb_s), two ways.
 * Fitted: the ring alpha-beta model of model/physics/comm.h, t = 2(n-1) alpha + 2(n-1)/n S / beta,
 * fitted per protocol (LL up to ll_max_bytes, where the sweep shows NCCL's tuner switching;
 * Simple above) on the scenario's fitted rows with the calibration fit (model/fit/calfit.h: weighted
 * least squares in relative error, alpha and beta positive; a parameter the rows cannot pin is
 * held at the ring's model/physics/comm.yaml value), every row predicted as algbw = S / t.
 * From data (out->from_data, table NAME-from-data): nothing fitted; every row predicted by
 * model/physics/comm.h on the ring the catalog and model/physics/comm.yaml make (sweep_ring: link line rates and
 * efficiencies, alpha and LL switch point per link class, ring or tree as the tuner would pick),
 * exactly as a run costs a data-parallel job's all-reduce. Rows that model/physics/comm.yaml's own
 * numbers were computed from are excluded there (from_data_exclude, with the reason).
 * Rows below min_bytes are shown but excluded in both. */
static int run_comm_table(const val_scenario *sc, const gpu_type *g, const gpu_type *cg,
                          const csv_table *t, const char *csv_path, diag *d, val_table *out)
{
    int cb = val_csv_col(t, "bytes"), ca = val_csv_col(t, "algbw_gb_s");
    if (cb < 0 || ca < 0) {
        diag_error(d, (src_loc){csv_path, 0, 0}, sc->table,
                   "an all-reduce table needs the columns bytes and algbw_gb_s");
        return SIM_EINPUT;
    }
    comm_params cp;
    comm_ring ring, cring;
    if (comm_load_default(d, &cp) != 0 || sweep_ring(sc, g, &cp, d, &ring) != 0) {
        return SIM_EINPUT;
    }
    if (sweep_ring(sc, cg, &cp, d, &cring) != 0) {
        comm_ring_fini(&ring);
        comm_ring_fini(&cring);
        return SIM_EINPUT;
    }
    double rate = comm_ring_alone_rate(&ring), crate = comm_ring_alone_rate(&cring);
    val_table *fd = xcalloc(1, sizeof *fd, "validation table");
    out->from_data = fd;
    snprintf(fd->name, sizeof fd->name, "%.37s-from-data", sc->table);
    fd->target_mape_pct = sc->fd_target;
    out->figures = xcalloc((size_t)t->n_rows + 1, sizeof *out->figures, "validation figures");
    fd->figures = xcalloc((size_t)t->n_rows + 1, sizeof *fd->figures, "validation figures");
    double bytes[256], model_s[256];
    int n = 0;
    for (int r = 0; r < t->n_rows && n < 256; r++) {
        double b, a;
        if (!val_cell_double(t->rows[r][cb], &b) || !val_cell_double(t->rows[r][ca], &a) ||
            !(a > 0) || !(b > 0)) {
            diag_error(d, (src_loc){csv_path, t->line[r], 1}, sc->table,
                       "row %d: bytes and algbw_gb_s must be positive numbers", r + 1);
            comm_ring_fini(&ring);
            comm_ring_fini(&cring);
            return SIM_EINPUT;
        }
        val_figure *f = &out->figures[n], *fp = &fd->figures[n];
        snprintf(f->label, sizeof f->label, "%.0f/algbw", b);
        snprintf(f->unit, sizeof f->unit, "GB/s");
        f->published = a;
        *fp = *f;
        for (size_t i = 0; i < sc->n_fit; i++) {
            f->fitted |= !strcmp(f->label, sc->fit[i]);
        }
        f->excluded = b < sc->min_bytes && !f->fitted;
        fp->excluded = b < sc->min_bytes;
        model_s[n] = comm_ring_allreduce_time(&cp, &cring, b, crate);
        fp->predicted = b / model_s[n] / 1e9;
        bytes[n++] = b;
    }
    out->n_figures = fd->n_figures = n;
    if (sc->harness_row) {
        harness(sc, fd, model_s, d);
    }
    for (size_t i = 0; i < sc->n_fit; i++) {
        bool found = false;
        for (int k = 0; k < n; k++) {
            found |= !strcmp(out->figures[k].label, sc->fit[i]);
        }
        if (!found) {
            diag_error(d, sc->fit_at, "fit",
                       "no such figure in the table; expected BYTES/algbw, got '%s'", sc->fit[i]);
        }
    }
    for (size_t i = 0; i < sc->n_fd_exclude; i++) {
        const val_exclude *x = &sc->fd_exclude[i];
        bool found = false;
        for (int k = 0; k < n; k++) {
            val_figure *fp = &fd->figures[k];
            if (!strcmp(fp->label, x->figure)) {
                fp->excluded = found = true;
                snprintf(fp->reason, sizeof fp->reason, "%s", x->reason);
            }
        }
        if (!found) {
            char path[64];
            snprintf(path, sizeof path, "from_data_exclude[%zu].figure", i);
            diag_error(d, x->figure_at, path,
                       "no such figure in the table; expected BYTES/algbw, got '%s'", x->figure);
        }
    }
    if (!cfg_present(sc->fd_target_at)) {
        diag_error(d, sc->table_at, "from_data_target_mape_pct",
                   "missing; expected the target (percent) of the table's -from-data "
                   "predictions, which an all-reduce table (ranks) has beside its fitted ones");
    }
    if (diag_error_count(d) > 0) {
        comm_ring_fini(&ring);
        comm_ring_fini(&cring);
        return SIM_EINPUT;
    }
    cal_ar_fit fit[COMM_PROTO_COUNT];
    for (int pr = 0; pr < COMM_PROTO_COUNT; pr++) {
        cal_series s;
        memset(&s, 0, sizeof s);
        for (int k = 0; k < n && s.n < CAL_MAX_PTS; k++) {
            bool ll = bytes[k] <= sc->ll_max_bytes;
            if (out->figures[k].fitted && ll == (pr == COMM_PROTO_LL)) {
                s.pts[s.n].x = bytes[k];
                s.pts[s.n].median = bytes[k] / (out->figures[k].published * 1e9) * 1e3; /* ms */
                s.n++;
            }
        }
        /* held where the rows cannot pin them: the ring's own model/physics/comm.yaml values */
        cal_ar_assume as = {ring.alpha_s[pr],
                            pr == COMM_PROTO_LL ? rate * cp.ll_bw_frac : rate};
        const char *proto = pr == COMM_PROTO_LL ? "ll" : "simple";
        if (calfit_allreduce(&s, sc->ranks, &as, &fit[pr]) != 0) {
            diag_error(d, (src_loc){csv_path, 0, 0}, sc->table,
                       "protocol %s: fit needs at least 3 fitted rows on its side of "
                       "ll_max_bytes, got %d", pr == COMM_PROTO_LL ? "LL" : "Simple", s.n);
            comm_ring_fini(&ring);
            comm_ring_fini(&cring);
            return SIM_EINPUT;
        }
        const struct {
            const char *what;
            cal_param v;
            bool pinned;
        } ps[2] = {{"alpha_s", fit[pr].alpha_s, fit[pr].alpha_pinned},
                   {"busbw_bytes_per_s", fit[pr].beta_bytes_per_s, fit[pr].beta_pinned}};
        for (int i = 0; i < 2; i++) {
            wfit_param_result *pa = &out->fit.params[out->fit.n_params++];
            snprintf(pa->name, sizeof pa->name, "%s.%s", proto, ps[i].what);
            pa->value = ps[i].v.value;
            pa->std_err = ps[i].v.se;
            pa->pinned = ps[i].pinned;
            snprintf(pa->assumed, sizeof pa->assumed,
                     "this ring's model/physics/comm.yaml value (these rows cannot pin it)");
        }
    }
    for (int k = 0; k < n; k++) {
        const cal_ar_fit *ft =
            &fit[bytes[k] <= sc->ll_max_bytes ? COMM_PROTO_LL : COMM_PROTO_SIMPLE];
        out->figures[k].predicted = bytes[k] / calfit_allreduce_eval(ft, bytes[k]) / 1e9;
    }
    comm_ring_fini(&ring);
    comm_ring_fini(&cring);
    table_errors(out);
    table_errors(fd);
    if (sc->min_bytes > 0) {
        snprintf(out->excluded_reason, sizeof out->excluded_reason,
                 "messages below %.0f bytes are latency-bound rows outside the >= 1 MiB target",
                 sc->min_bytes);
        snprintf(fd->excluded_reason, sizeof fd->excluded_reason, "%s", out->excluded_reason);
    }
    return 0;
}

/* ---- running ---- */

static double fig_value(const fig_spec *f, double unit_time)
{
    return f->is_rate ? f->work / unit_time : f->work * unit_time;
}

/* f's lo..hi over the fit's family of profiles (members 1..: the refits along the parameters
 * the observations could not pin; each member moves its co-runner's profile too). */
static void family_range(const wfit_result *fit, fig_spec *f)
{
    f->f.lo = f->f.hi = f->f.predicted;
    for (int i = 1; i < fit->n_family; i++) {
        const wfit_member *mb = &fit->family[i];
        partition_cfg c = f->cfg;
        if (f->with >= 0) {
            c.with[0] = &mb->profiles[f->with];
        }
        speed_result r;
        predict_unit_estimate(&mb->profiles[f->profile], f->batch, &c, &mb->model, &r);
        if (r.outcome == SPEED_OK) {
            double v = fig_value(f, r.unit_time_s);
            f->f.lo = fmin(f->f.lo, v);
            f->f.hi = fmax(f->f.hi, v);
        }
    }
}

static void builder_free(builder *b)
{
    free(b->runs);
    free(b);
}

/* The path `rel`, relative to the directory of the scenario at scen_path (an absolute one as
 * given), into buf. */
static void beside(const char *scen_path, const char *rel, char *buf, size_t n)
{
    if (rel[0] == '/') { /* absolute: as given (as scenario_resolve does) */
        snprintf(buf, n, "%s", rel);
        return;
    }
    const char *slash = strrchr(scen_path, '/');
    int dir_len = slash ? (int)(slash - scen_path) : 0;
    snprintf(buf, n, "%.*s%s%s", dir_len, scen_path, slash ? "/" : "", rel);
}

/* Load the scenario's calib_runs into *out (owned by the caller, also on failure), each a
 * recording of the scenario's GPU g. Returns 0 or SIM_EINPUT (reported to d). */
static int load_runs(const val_scenario *sc, const char *scen_path, const gpu_catalog *cat,
                     const gpu_type *g, diag *d, cal_data **out)
{
    *out = xcalloc(sc->n_calib_runs, sizeof **out, "calibration recordings");
    for (size_t i = 0; i < sc->n_calib_runs; i++) {
        char path[1024], field[48];
        beside(scen_path, sc->calib_runs[i], path, sizeof path);
        snprintf(field, sizeof field, "calib_runs[%zu]", i);
        cal_data *r = &(*out)[i];
        int rc = calib_json_load_file(path, r, d);
        if (rc == SIM_ENOENT || rc == SIM_EIO) {
            diag_error(d, sc->calib_runs_at, field,
                       "cannot read the recording; expected a calib/run-all.sh JSON, got '%s' (%s)",
                       path, sim_strerror(rc));
        }
        if (rc != 0) {
            return SIM_EINPUT;
        }
        const gpu_type *mg = calapply_match_gpu(cat, r->device, r->sms_total);
        if (!mg || strcmp(mg->name, g->name) != 0) {
            diag_error(d, sc->calib_runs_at, field,
                       "recorded on another GPU (%d SMs); expected %s, got '%s'", r->sms_total,
                       g->name, r->device);
            return SIM_EINPUT;
        }
    }
    return 0;
}

/* *out = the scenario's GPU with its `calibration` (a `slicesim fit` model file, path relative to
 * the scenario's directory) applied (calmodel_apply). Returns 0 or SIM_EINPUT (reported to d). */
static int calibrated_gpu(const val_scenario *sc, const char *scen_path, const gpu_catalog *cat,
                          const phys_params *m, diag *d, gpu_type *out)
{
    char cal_path[1024];
    beside(scen_path, sc->calibration, cal_path, sizeof cal_path);
    cal_fit *cf = xmalloc(sizeof *cf, "calibration model");
    calapply_source src;
    int rc = calmodel_load_source(cal_path, cf, &src, d);
    calmodel_site site = {.gpu = sc->gpu,
                          .file_at = sc->calibration_at,
                          .file_path = "calibration",
                          .gpu_at = sc->gpu_at,
                          .gpu_path = "gpu"};
    if (rc == 0 && calmodel_apply(cf, &src, &site, cat, m, d, out) != 0) {
        rc = SIM_EINPUT;
    }
    free(cf);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        diag_error(d, sc->calibration_at, "calibration",
                   "cannot read the model file; expected a `slicesim fit` output, got '%s' (%s)",
                   cal_path, sim_strerror(rc));
        rc = SIM_EINPUT;
    }
    return rc;
}

/* Apply the scenario's `calibration` to the builder's GPU: b->gpu becomes b->calibrated. */
static int apply_calibration(builder *b, const val_scenario *sc, const char *scen_path,
                             const gpu_catalog *cat, const phys_params *m, diag *d)
{
    int rc = calibrated_gpu(sc, scen_path, cat, m, d, &b->calibrated);
    if (rc == 0) {
        b->gpu = &b->calibrated;
    }
    return rc;
}

/* Mark the builder's figures that the scenario fits and excludes; a label that names no figure
 * is reported to d. */
static void mark_figures(builder *b, const val_scenario *sc, diag *d)
{
    for (size_t i = 0; i < sc->n_fit; i++) {
        bool found = false;
        for (int k = 0; k < b->n; k++) {
            if (!strcmp(b->figs[k].f.label, sc->fit[i])) {
                b->figs[k].f.fitted = true;
                found = true;
            }
        }
        if (!found) {
            diag_error(d, sc->fit_at, "fit",
                       "no such figure in the table; expected ROW/COLUMN, got '%s'", sc->fit[i]);
        }
    }
    for (size_t i = 0; i < sc->n_exclude; i++) {
        bool found = false;
        for (int k = 0; k < b->n; k++) {
            if (!strcmp(b->figs[k].f.label, sc->exclude[i].figure)) {
                b->figs[k].f.excluded = true;
                snprintf(b->figs[k].f.reason, sizeof b->figs[k].f.reason, "%s",
                         sc->exclude[i].reason);
                b->figs[k].f.fitted = false;
                found = true;
            }
        }
        if (!found) {
            char path[64];
            snprintf(path, sizeof path, "exclude[%zu].figure", i);
            diag_error(d, sc->exclude[i].figure_at, path,
                       "no such figure in the table; expected ROW/COLUMN, got '%s'",
                       sc->exclude[i].figure);
        }
    }
}

/* log(predicted / measured) of DDP figure f with profile p holding x seconds of DDP host time. */
static double ddp_log_err(const builder *b, const fig_spec *f, const wl_profile *p,
                          const phys_params *m, double x)
{
    wl_profile q = *p;
    q.ddp_host_s = x;
    double pred = val_ddp_rate(b, f, &q, m);
    return isfinite(pred) && pred > 0 ? log(pred / f->f.published) : HUGE_VAL;
}

/* A fitted DDP row (workers >= 2: a table that fits a model's 2-worker job to predict its larger
 * ones) pins that model's DDP host time per step (wl_profile.ddp_host_s, model/physics/ddp.h's dH
 * instead of model/physics/comm.yaml's per-launch and per-collective constants), after the profiles
 * are fitted on the other rows: the x in [1 ns, 1 s] at which the row is met (bisection in log x:
 * the rate falls as x grows), its standard error the row's noise over |d log rate / dx|, printed
 * as the fit's parameter NAME.ddp_host_s. A row the model misses even at 1 ns (the model's GPU
 * path alone is too slow) keeps 1 ns, NOT PINNED. A row that states its ranks' host spread
 * within a step (fig_spec.ddp_host_sd, measured on its runs) sets the model's s to it first, as
 * the profile's step_cv = sqrt(sd^2 - host_spread^2) (model/physics/ddp.h: s = sqrt(host_spread^2
 * + step_cv^2); at least host_spread). Without fitted DDP rows, nothing changes. */
static void fit_ddp_host(const builder *b, wfit_result *fit)
{
    for (int k = 0; k < b->n; k++) {
        const fig_spec *f = &b->figs[k];
        if (!f->f.fitted || f->workers < 2 || fit->n_params >= WFIT_MAX_PARAMS) {
            continue;
        }
        wl_profile *p = &fit->profiles[f->profile];
        if (f->ddp_host_sd > 0) {
            double S = b->comm.host_spread;
            p->step_cv = sqrt(fmax(0, f->ddp_host_sd * f->ddp_host_sd - S * S));
        }
        double lo = log(1e-9), hi = 0;
        bool met = ddp_log_err(b, f, p, &fit->model, exp(lo)) >= 0;
        for (int i = 0; met && i < 100; i++) {
            double mid = (lo + hi) / 2;
            if (ddp_log_err(b, f, p, &fit->model, exp(mid)) >= 0) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        double x = exp(lo), h = fmax(x * 1e-3, 1e-7);
        double slope = (ddp_log_err(b, f, p, &fit->model, x + h) -
                        ddp_log_err(b, f, p, &fit->model, x)) / h;
        p->ddp_host_s = x;
        wfit_param_result *r = &fit->params[fit->n_params++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s.ddp_host_s", p->name ? p->name : "?");
        r->value = r->family_lo = r->family_hi = x;
        r->std_err = slope < 0 ? fmax(f->f.noise_pct / 100, WFIT_TIME_REL_SD) / -slope
                               : HUGE_VAL;
        r->pinned = met && r->std_err < x; /* as wfit's limit without a prior: a factor e */
        if (!r->pinned) {
            snprintf(r->assumed, sizeof r->assumed, "%s (row %s)",
                     met ? "the row's value" : "1 ns: the row beats the model at any host time",
                     f->f.label);
        }
    }
}

/* Fit the builder's profiles on its fitted figures, then predict every figure with the fitted
 * profiles and model into out (figures, error statistics, fit). */
static void fit_and_predict(builder *b, val_table *out)
{
    /* fit on the fitted figures */
    wfit_obs *obs = xcalloc((size_t)b->n, sizeof *obs, "validation observations");
    int n_obs = 0;
    for (int k = 0; k < b->n; k++) {
        fig_spec *f = &b->figs[k];
        if (!f->f.fitted || f->workers >= 2) { /* a DDP row fits its DDP host time below */
            continue;
        }
        wfit_obs *o = &obs[n_obs++];
        o->profile = f->profile;
        o->cfg = f->cfg;
        o->batch = f->batch;
        o->gpu_util = f->util;
        o->host_s = f->host_s;
        o->unit_time_s = f->is_rate ? f->work / f->f.published : f->f.published / f->work;
    }
    wfit_fit(&b->spec, n_obs, obs, &out->fit);
    free(obs);
    fit_ddp_host(b, &out->fit);
    /* predict every figure with the fitted profiles and model */
    out->figures = xcalloc((size_t)b->n, sizeof *out->figures, "validation figures");
    out->n_figures = b->n;
    for (int k = 0; k < b->n; k++) {
        fig_spec *f = &b->figs[k];
        speed_result r;
        if (f->with >= 0) {
            /* the co-runner as fitted (the spec held its start values) */
            f->cfg.n_with = 1;
            f->cfg.with[0] = &out->fit.profiles[f->with];
            f->cfg.with_batch[0] = 1;
            f->cfg.with_n[0] = f->with_n;
        }
        if (f->workers >= 2) { /* a DDP job: model/physics/ddp.h, no family range */
            f->f.predicted = val_ddp_rate(b, f, &out->fit.profiles[f->profile], &out->fit.model);
            f->f.lo = f->f.hi = f->f.predicted;
            out->figures[k] = f->f;
            if (!f->f.excluded && !f->f.fitted) {
                out->n_in_range += f->f.published >= f->f.lo && f->f.published <= f->f.hi;
            }
            continue;
        }
        predict_unit_estimate(&out->fit.profiles[f->profile], f->batch, &f->cfg, &out->fit.model,
                              &r);
        f->f.predicted = r.outcome == SPEED_OK ? fig_value(f, r.unit_time_s) : nan("");
        family_range(&out->fit, f);
        out->figures[k] = f->f;
        if (!f->f.excluded && !f->f.fitted) {
            out->n_in_range += f->f.published >= f->f.lo && f->f.published <= f->f.hi;
        }
    }
    table_errors(out);
    out->by_kind = b->by_kind;
    for (int i = 0; i < WFIT_MAX_PROFILES; i++) {
        /* names a builder made live in b, which goes now */
        for (int k = 0; k < WFIT_MAX_PROFILES; k++) {
            if (out->fit.profiles[i].name == b->names[k]) {
                out->fit.profiles[i].name = NULL;
            }
        }
    }
}

/* mem: the table in memory and no file opened (val_run_buffer), or NULL. */
static int run_table(const val_scenario *sc, const char *scen_path, const char *shared_dir,
                     const val_mem *mem, const gpu_catalog *cat, const phys_params *m, diag *d,
                     val_table *out)
{
    snprintf(out->name, sizeof out->name, "%s", sc->table);
    snprintf(out->pool, sizeof out->pool, "%s", sc->pool ? sc->pool : "");
    out->target_mape_pct = sc->target;
    out->shared_target_mape_pct = sc->shared_target;
    build_fn *fn = NULL;
    for (size_t i = 0; sc->ranks == 0 && i < sizeof builders / sizeof builders[0]; i++) {
        if (!strcmp(builders[i].table, sc->table)) {
            fn = builders[i].fn;
        }
    }
    if (sc->ranks > 0 && cfg_present(sc->shared_target_at)) {
        diag_error(d, sc->shared_target_at, "shared_target_mape_pct",
                   "an all-reduce table has no shared kinds; expected no shared_target_mape_pct "
                   "with ranks");
        return SIM_EINPUT;
    }
    if (sc->ranks == 0 && cfg_present(sc->fd_target_at)) {
        diag_error(d, sc->fd_target_at, "from_data_target_mape_pct",
                   "only an all-reduce table (ranks) has -from-data predictions; expected no "
                   "from_data_target_mape_pct without ranks");
        return SIM_EINPUT;
    }
    if (!fn && sc->ranks == 0) {
        diag_error(d, sc->table_at, "table",
                   "no model mapping for this table; expected one of cern-simpletrack, "
                   "chep-timeslicing, cern-mig-flops, cern-finetune, migprofiler-*, "
                   "nos-yolos-sharing, h100-coloc, h100-coloc-ts2, h100-coloc-run4, "
                   "h200-coloc-{a,b,c,d}[-bracketed|-mps2], h200-coloc-e[-bracketed|-hostheld], "
                   "h200-coloc-{f,g,h,i}[-mps2], "
                   "calib-h100-mps, calib-h100-timeslice, calib-h100-timeslice-run2, "
                   "h200x4-ddp, h200x4-ddp-scale[-b|-c], h200x2-ddp, got '%s'",
                   sc->table);
        return SIM_EINPUT;
    }
    const gpu_type *g = gpu_catalog_find(cat, sc->gpu);
    if (!g) {
        diag_error(d, sc->gpu_at, "gpu",
                   "unknown GPU; expected a catalog name, got '%s'", sc->gpu);
        return SIM_EINPUT;
    }
    if ((sc->csv != NULL) == (sc->n_calib_runs > 0)) {
        diag_error(d, sc->table_at, "csv",
                   "a table reads a CSV or calibration recordings; expected one of csv and "
                   "calib_runs, got %s", sc->csv ? "both" : "neither");
        return SIM_EINPUT;
    }
    if (mem && sc->n_calib_runs > 0) {
        snprintf(out->skipped, sizeof out->skipped,
                 "calib_runs are files, not read from memory: table skipped");
        return 0;
    }
    cal_data *runs = NULL;
    if (sc->n_calib_runs > 0) {
        int rc = load_runs(sc, scen_path, cat, g, d, &runs);
        if (rc != 0) {
            free(runs);
            return rc;
        }
    }
    /* the seed tables live in the shared dir; the others ship in data/ beside the scenario */
    char csv_path[1024];
    csv_table t;
    memset(&t, 0, sizeof t);
    snprintf(csv_path, sizeof csv_path, "%s", scen_path);
    int rc = 0;
    if (mem) {
        snprintf(csv_path, sizeof csv_path, "%s", mem->csv_path);
        rc = csv_read_mem(csv_path, mem->csv, mem->csv_len, &t, d);
    } else if (sc->csv) {
        snprintf(csv_path, sizeof csv_path, "%s/%s", shared_dir, sc->csv);
        rc = csv_read(csv_path, &t, d);
    }
    if (rc == SIM_ENOENT) {
        char rel[600], local[1024];
        snprintf(rel, sizeof rel, "data/%s", sc->csv);
        beside(scen_path, rel, local, sizeof local);
        int lrc = csv_read(local, &t, d);
        if (lrc == 0 || lrc == SIM_EINPUT) {
            snprintf(csv_path, sizeof csv_path, "%s", local);
            rc = lrc;
        }
    }
    if (rc == SIM_EINPUT) {
        csv_free(&t);
        return rc;
    }
    if (rc != 0) {
        snprintf(out->skipped, sizeof out->skipped, "%s not readable (%s): table skipped",
                 csv_path, sim_strerror(rc));
        return 0;
    }
    if (sc->ranks > 0) {
        free(runs);
        gpu_type cg = *g; /* the links of the node calibration, when the table names one */
        if (sc->calibration && !mem) {
            rc = calibrated_gpu(sc, scen_path, cat, m, d, &cg);
        }
        if (rc == 0 && !(mem && !mem->fit)) {
            rc = run_comm_table(sc, g, &cg, &t, csv_path, d, out);
        }
        csv_free(&t);
        return rc;
    }
    builder *b = xcalloc(1, sizeof *b, "validation builder");
    b->sc = sc;
    b->gpu = g;
    b->runs = runs;
    b->n_runs = (int)sc->n_calib_runs;
    if (sc->calibration && !mem) {
        rc = apply_calibration(b, sc, scen_path, cat, m, d);
        if (rc != 0) {
            builder_free(b);
            csv_free(&t);
            return rc;
        }
    }
    b->m = m;
    b->spec.model = *m;
    if (sc->base && !mem) {
        /* the base scenario's path is relative to this scenario's directory */
        char base_path[1024];
        beside(scen_path, sc->base, base_path, sizeof base_path);
        val_table base;
        rc = val_run_file(base_path, shared_dir, cat, m, d, &base);
        if (rc != 0 || base.skipped[0]) {
            snprintf(out->skipped, sizeof out->skipped, "base scenario %s: %s", base_path,
                     rc != 0 ? sim_strerror(rc) : "its table was skipped");
            val_table_fini(&base);
            builder_free(b);
            csv_free(&t);
            return rc;
        }
        b->spec.profiles[0] = base.fit.profiles[0];
        b->has_base = true;
        val_table_fini(&base);
    }
    fn(b, &t);
    csv_free(&t);
    if (b->err[0]) {
        diag_error(d, (src_loc){csv_path, b->err_line, b->err_line ? 1 : 0}, sc->table, "%s",
                   b->err);
        builder_free(b);
        return SIM_EINPUT;
    }
    if (cfg_present(sc->shared_target_at) && !b->by_kind) {
        diag_error(d, sc->shared_target_at, "shared_target_mape_pct",
                   "table %s is not labelled by kind (WORKLOAD/KIND); expected no "
                   "shared_target_mape_pct on it",
                   sc->table);
        builder_free(b);
        return SIM_EINPUT;
    }
    mark_figures(b, sc, d);
    if (diag_error_count(d) > 0 || (mem && !mem->fit)) {
        builder_free(b);
        return diag_error_count(d) > 0 ? SIM_EINPUT : 0;
    }
    fit_and_predict(b, out);
    builder_free(b);
    return 0;
}

/* Walk the loaded scenario (destroyed here) and run its table (run_table). */
static int run_doc(yamlx_doc *doc, arena *a, const char *scenario_path, const char *shared_dir,
                   const val_mem *mem, const gpu_catalog *cat, const phys_params *m, diag *d,
                   val_table *out)
{
    val_scenario sc;
    memset(&sc, 0, sizeof sc);
    cfg_walker w;
    cfg_walker_init(&w, doc, a, d, NULL);
    bool ok = cfg_walk_root(&w, scenario_fields, &sc);
    cfg_walker_fini(&w);
    yamlx_destroy(doc);
    if (!ok) {
        return SIM_EINPUT;
    }
    return run_table(&sc, scenario_path, shared_dir, mem, cat, m, d, out);
}

int val_run_file(const char *scenario_path, const char *shared_dir, const gpu_catalog *cat,
                 const phys_params *m, diag *d, val_table *out)
{
    memset(out, 0, sizeof *out);
    arena *a = arena_create();
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_file(scenario_path, a, d, &doc);
    if (rc == 0) {
        rc = run_doc(doc, a, scenario_path, shared_dir, NULL, cat, m, d, out);
    }
    arena_destroy(a);
    return rc;
}

int val_run_buffer(const char *scenario_path, const char *text, size_t len, const val_mem *mem,
                   const gpu_catalog *cat, const phys_params *m, diag *d, val_table *out)
{
    memset(out, 0, sizeof *out);
    arena *a = arena_create();
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_buffer(scenario_path, text, len, a, d, &doc);
    if (rc == 0) {
        rc = run_doc(doc, a, scenario_path, "", mem, cat, m, d, out);
    }
    arena_destroy(a);
    return rc;
}

void val_table_fini(val_table *t)
{
    if (t->from_data) {
        val_table_fini(t->from_data);
        free(t->from_data);
        t->from_data = NULL;
    }
    free(t->figures);
    t->figures = NULL;
    wfit_result_fini(&t->fit);
}
