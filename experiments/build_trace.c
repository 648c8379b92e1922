/* experiments/build_trace.c - a scenario's traced workload (see build_trace.h). */
#include "experiments/build_trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/build.h"
#include "model/hw/mig.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "workloads/traceload.h"

/* Memory of the largest GPU of c that takes fractional shares (cluster_device.shareable); 0 when
 * none does. */
static uint64_t largest_share_gpu_mem(const cluster *c)
{
    uint64_t best = 0;
    for (dev_id d = 0; d < cluster_n_devices(c); d++) {
        const cluster_device *dv = cluster_device_get(c, d);
        best = dv->shareable && dv->mem_bytes > best ? dv->mem_bytes : best;
    }
    return best;
}

/* The trace cannot be read: as the loader reports it. */
static void read_error(built_run *b)
{
    const scenario_trace *tr = &b->spec->workload.trace;
    diag_error(b->d, tr->file_at, "workload.trace.file",
               "read error; expected a readable file, got '%s'", tr->file);
}

/* fits_somewhere as traceload_opts.fits (ctx: the empty cluster). */
static bool fits_cb(void *ctx, const job_spec *s);

int build_trace_load(built_run *b, const cluster *c)
{
    const scenario_trace *tr = &b->spec->workload.trace;
    SIM_ASSERT(b->res->trules != NULL); /* resolved with the scenario (experiments/resolve.h) */
    traceload_opts opts = {
        .arrival_only = tr->mode == SCN_TRACE_ARRIVAL_ONLY,
        .start_s = sim_time_to_s(tr->start_ns),
        .length_s = sim_time_to_s(tr->length_ns),
        .limit = tr->limit,
        .resource = tr->resource,
        .default_class = trace_format_name((trace_format)tr->format),
        .max_per_worker = tr->max_per_worker,
        .keep_cpu_pods = tr->cpu_pods,
        .fallback_factor = b->res->fallback_factor,
        .n_rules = tr->n_rules,
        .rules = b->res->trules,
        .fits = fits_cb,
        .fits_ctx = (void *)c,
        .shuffle = tr->shuffle,
        .inflate = tr->inflate,
        .capacity_milli = MILLI_PER_GPU * (uint64_t)cluster_n_gpus(c),
        .share_mem_bytes = largest_share_gpu_mem(c),
        .interval_s = sim_time_to_s(tr->interval_ns),
        .seed = b->spec->seed,
    };
    FILE *f = scenario_open_trace(tr->file, "trace", tr->file_at, "workload.trace.file", b->d);
    if (!f) { /* there at load, gone since */
        return SIM_EINPUT;
    }
    /* the stream reads rows again from the file while the run goes on: the file, its reader
     * and the source they borrow live until built_run_fini */
    trace_src *src = arena_calloc(b->a, 1, sizeof *src);
    *src = scenario_trace_source(b->spec);
    b->tfile = f;
    int rc = trace_open(src, f, b->d, &b->treader);
    if (rc == 0) {
        rc = traceload_open(b->treader, &opts, b->a, b->d, &b->tstats, &b->tload);
    }
    if (rc == SIM_EIO) {
        read_error(b);
        rc = SIM_EINPUT;
    }
    return rc;
}

/* Jobs the scenario's trace will give, for the estimate (tools/estimate.h): its records counted
 * by one streaming pass (errors are left to load_trace), times the inflation of an arrival-only
 * replay. 0 when the file cannot be read. */
/* Distinct pod shapes among records, counted up to SHAPES_COUNTED (a kube policy caches at most
 * 256): each record's shape hashed (64-bit FNV-1a of GPUs, milli-GPU, CPU, memory and GPU spec)
 * into an open-addressing set. */
#define SHAPES_COUNTED 512
typedef struct shape_set {
    uint64_t slot[2 * SHAPES_COUNTED]; /* 0: empty */
    size_t n;
} shape_set;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    }
    return h;
}

static void shape_add(shape_set *set, const trace_record *rec)
{
    if (set->n == SHAPES_COUNTED) {
        return;
    }
    uint64_t h = 1469598103934665603ull;
    h = fnv(h, &rec->gpus, sizeof rec->gpus);
    h = fnv(h, &rec->gpu_milli, sizeof rec->gpu_milli);
    h = fnv(h, &rec->cpu_milli, sizeof rec->cpu_milli);
    h = fnv(h, &rec->mem_bytes, sizeof rec->mem_bytes);
    h = rec->gpu_spec ? fnv(h, rec->gpu_spec, strlen(rec->gpu_spec) + 1) : fnv(h, "", 0);
    h += h == 0;
    size_t cap = sizeof set->slot / sizeof set->slot[0], i = (size_t)(h & (cap - 1));
    while (set->slot[i] && set->slot[i] != h) {
        i = (i + 1) & (cap - 1);
    }
    if (!set->slot[i]) {
        set->slot[i] = h;
        set->n++;
    }
}

void build_trace_estimate(const built_run *b, est_trace *out)
{
    const scenario_trace *tr = &b->spec->workload.trace;
    *out = (est_trace){0};
    FILE *f = fopen(tr->file, "r");
    if (!f) {
        return;
    }
    shape_set *shapes = xcalloc(1, sizeof *shapes, "trace estimate");
    diag *scratch = diag_create();
    trace_src src = scenario_trace_source(b->spec);
    trace_reader *rd = NULL;
    trace_record rec;
    double *at = NULL, first = HUGE_VAL; /* submissions, for the window (rows may be unsorted) */
    size_t n_at = 0, cap = 0;
    if (trace_open(&src, f, scratch, &rd) == 0) {
        int rc;
        while ((rc = trace_next(rd, &rec)) != 0 && rc != SIM_EIO) {
            if (rc == 1 && (rec.gpus > 0 || tr->cpu_pods)) {
                if (n_at == cap) {
                    cap = cap ? 2 * cap : 1024;
                    at = xrealloc(at, cap * sizeof *at, "trace estimate");
                }
                at[n_at++] = rec.submit_s;
                first = rec.submit_s >= 0 && rec.submit_s < first ? rec.submit_s : first;
                shape_add(shapes, &rec);
            }
        }
    }
    trace_close(rd);
    fclose(f);
    diag_destroy(scratch);
    double n = 0, lo = (isfinite(first) ? first : 0) + sim_time_to_s(tr->start_ns);
    double hi = tr->length_ns > 0 ? lo + sim_time_to_s(tr->length_ns) : HUGE_VAL;
    for (size_t i = 0; i < n_at; i++) { /* no submission column (-1): the window's start */
        double s = at[i] >= 0 ? at[i] : lo;
        n += tr->mode == SCN_TRACE_ARRIVAL_ONLY || (s >= lo && s < hi);
    }
    free(at);
    if (tr->mode == SCN_TRACE_ARRIVAL_ONLY && tr->inflate > 1) {
        n *= tr->inflate;
    }
    out->jobs = tr->limit > 0 && n > (double)tr->limit ? (double)tr->limit : n;
    out->records = (double)n_at;
    out->shapes = (double)shapes->n;
    free(shapes);
}

/* Can the empty cluster ever hold job s? A CPU-only pod (per_worker 0) needs one node with its
 * CPU and memory (capacity 0 = not modelled); others, the units on GPUs its gpu_spec allows
 * (build_request_fits): an openb pod asking for a GPU model no node has is never placeable. */
static bool fits_somewhere(const cluster *c, const job_spec *s)
{
    if (job_any_slice(s)) {
        return true; /* the layout policy finds it a slice (scenario_check_any_slice) */
    }
    if (s->req.per_worker > 0) {
        return build_request_fits(c, &s->req, &s->pod);
    }
    for (node_id n = 0; n < cluster_n_nodes(c); n++) {
        uint64_t cpu = cluster_node_cpu_capacity(c, n), mem = cluster_node_mem_capacity(c, n);
        if ((cpu == 0 || s->pod.cpu_milli <= cpu) && (mem == 0 || s->pod.host_mem_bytes <= mem)) {
            return true;
        }
    }
    return false;
}

static bool fits_cb(void *ctx, const job_spec *s)
{
    return fits_somewhere(ctx, s);
}

/* The synthetic and traced streams merged (build_trace_source): the next job of each, drawn
 * when the merge first needs it. */
typedef struct merge_src {
    built_run *run;
    synth_stream *a;     /* NULL: no synthetic jobs */
    traceload_stream *b; /* NULL: no trace */
    job_spec x, y;       /* the next job of a and of b, when has_x / has_y */
    bool has_x, has_y, need_x, need_y;
} merge_src;

static bool merge_next(void *ctx, job_spec *out)
{
    merge_src *m = ctx;
    if (m->need_x) {
        m->has_x = m->a && synth_stream_next(m->a, &m->x);
        m->need_x = false;
    }
    if (m->need_y) {
        m->has_y = m->b && traceload_next(m->b, &m->y);
        m->need_y = false;
        if (m->b && traceload_status(m->b) != 0) {
            build_trace_failed(m->run);
        }
    }
    if (m->has_x && (!m->has_y || m->x.submit <= m->y.submit)) {
        *out = m->x;
        m->need_x = true;
        return true;
    }
    if (m->has_y) {
        *out = m->y;
        m->need_y = true;
        return true;
    }
    return false;
}

void build_trace_failed(built_run *b)
{
    if (b->tfailed) {
        return;
    }
    b->tfailed = true;
    if (traceload_status(b->tload) == SIM_EIO) {
        read_error(b);
    }
    if (b->w) {
        world_stop(b->w);
    }
}

void build_trace_source(built_run *b, job_table *t, size_t n_synth)
{
    merge_src *m = arena_calloc(b->a, 1, sizeof *m);
    *m = (merge_src){.run = b, .a = b->synth, .b = b->tload, .need_x = true, .need_y = true};
    size_t n = n_synth + (b->tload ? traceload_count(b->tload) : 0);
    job_table_set_source(t, n, merge_next, m);
}
