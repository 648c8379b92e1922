/* workloads/traceload.c - traced records -> jobs (see traceload.h). */
#include "workloads/traceload.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/hw/milli.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "sim/xalloc.h"

/* Interned strings: queues, users, classes and GPU specs repeat, so each distinct one is stored
 * once in the arena (open addressing on rng_hash64). */
typedef struct strset {
    const char **slot;
    size_t cap, n;
    arena *a;
} strset;

static const char *intern(strset *s, const char *t)
{
    if (!t) {
        return NULL;
    }
    if (2 * (s->n + 1) > s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 64;
        const char **ns = xcalloc(ncap, sizeof *ns, "interned strings");
        for (size_t i = 0; i < s->cap; i++) {
            if (s->slot[i]) {
                size_t h = (size_t)rng_hash64(s->slot[i]) & (ncap - 1);
                while (ns[h]) {
                    h = (h + 1) & (ncap - 1);
                }
                ns[h] = s->slot[i];
            }
        }
        free(s->slot);
        s->slot = ns;
        s->cap = ncap;
    }
    size_t h = (size_t)rng_hash64(t) & (s->cap - 1);
    while (s->slot[h]) {
        if (!strcmp(s->slot[h], t)) {
            return s->slot[h];
        }
        h = (h + 1) & (s->cap - 1);
    }
    s->slot[h] = arena_strdup(s->a, t);
    s->n++;
    return s->slot[h];
}

/* A record's job (its submit time set when given) and what the index keeps of it. */
typedef struct kept {
    job_spec spec;
    uint64_t milli; /* milli-GPU asked for in all (GPUs x gpu_milli) */
    bool fallback;  /* no rule gave it a profile */
} kept;

/* What a traced job is until the run reaches it: 16 bytes, not the job (a job_spec is 128).
 * Timed jobs are read again from the file by offset when given (trace_read_at, checked against
 * the row's hash); where the file cannot be read again (helios, whose jobs are drawn from its
 * bins; a pipe) and in arrival-only mode (every job stays live to the end of the run: reading
 * again would only cost), the jobs are held in file order and the index points at them. */
typedef struct entry {
    union {
        double submit_s; /* timed, during the pass: the traced submission (-1: none) */
        struct {
            uint32_t milli, units; /* arrival-only, until the tuning: milli-GPU and units */
        } a;
        sim_time at; /* then: the job's submit time */
    } k;
    uint64_t w; /* bits 0-39: the row's byte offset (read again) or the record's index in
                 * file order (held); 40-44: flags; 45-63: the row's hash (read again) */
} entry;
_Static_assert(sizeof(entry) == 16, "an index entry is 16 bytes");

#define W_OFF_BITS 40
#define W_OFF ((UINT64_C(1) << W_OFF_BITS) - 1)
#define W_OPEN (UINT64_C(1) << 40)     /* open-ended (work TRACELOAD_OPEN_WORK_S) */
#define W_FALLBACK (UINT64_C(1) << 41) /* a GPU job no rule gives a profile */
#define W_CPU (UINT64_C(1) << 42)      /* a CPU-only job */
#define W_UNFIT (UINT64_C(1) << 43)    /* no node of the empty cluster can hold it (opts.fits) */
#define W_CLONE (UINT64_C(1) << 44)    /* an arrival-only clone */
#define W_HASH_SHIFT 45
#define W_HASH ((UINT32_C(1) << (64 - W_HASH_SHIFT)) - 1) /* 19 bits of the row's hash */

void traceload_split(uint32_t g, uint32_t max_per_worker, uint32_t *per_worker, uint32_t *n_workers)
{
    if (g == 0) { /* a CPU-only pod: one worker holding no GPU (model/cluster/job.h) */
        *per_worker = 0;
        *n_workers = 1;
        return;
    }
    uint32_t m = max_per_worker >= 1 ? max_per_worker : 1;
    uint32_t p = g < m ? g : m;
    while (p > 1 && g % p != 0) {
        p--;
    }
    *per_worker = p >= 1 ? p : 1;
    *n_workers = g / *per_worker;
}

static bool str_ok(const char *want, const char *have)
{
    return !want || (have && !strcmp(want, have));
}

const traceload_rule *traceload_match(const traceload_opts *o, const trace_record *rec)
{
    for (size_t i = 0; i < o->n_rules; i++) {
        const traceload_rule *r = &o->rules[i];
        if (r->name && (!rec->name || fnmatch(r->name, rec->name, 0) != 0)) {
            continue;
        }
        if (!str_ok(r->queue, rec->queue) || !str_ok(r->user, rec->user) ||
            !str_ok(r->klass, rec->klass) || !str_ok(r->gpu_type, rec->gpu_type)) {
            continue;
        }
        if (rec->gpus < r->gpus_min || (r->gpus_max > 0 && rec->gpus > r->gpus_max)) {
            continue;
        }
        return r;
    }
    return NULL;
}

/* Record -> its job (without its submit time, set when it is given). */
static void to_job(const traceload_opts *o, const trace_record *rec, const char *format, strset *ss,
                   kept *k)
{
    const traceload_rule *r = traceload_match(o, rec);
    const char *cls = r && r->class_name ? r->class_name : rec->klass ? rec->klass : format;
    uint32_t per = 0, workers = 1; /* no GPU: a CPU-only pod, one worker */
    const char *res = r && r->resource ? r->resource : o->resource;
    bool any_slice = res && !strcmp(res, JOB_RES_MIG_ANY);
    if (any_slice) {
        per = 1; /* any MIG slice: one slice, whatever the record asked for */
    } else if (rec->gpus > 0) {
        traceload_split(rec->gpus, o->max_per_worker, &per, &workers);
    }
    bool fallback = !r || !r->profile;
    double w = rec->duration_s * (r ? r->work_factor : o->fallback_factor);
    *k = (kept){
        .spec = {.class_name = intern(ss, cls),
                 .req = {.resource = intern(ss, res), .per_worker = per, .n_workers = workers},
                 .mem_bytes = r && r->profile ? r->mem_bytes : o->fallback_mem_bytes,
                 .profile = r ? intern(ss, r->profile) : NULL,
                 .pod = {.gpu_milli = rec->gpu_milli < MILLI_PER_GPU && !any_slice ? rec->gpu_milli : 0,
                         .cpu_milli = rec->cpu_milli,
                         .host_mem_bytes = rec->mem_bytes,
                         .gpu_spec = intern(ss, rec->gpu_spec),
                         .qos = intern(ss, rec->qos),
                         .user = intern(ss, rec->user),
                         .queue = intern(ss, rec->queue)}},
        .milli = (uint64_t)rec->gpus * rec->gpu_milli,
        .fallback = fallback,
    };
    if (o->arrival_only || rec->duration_s == TRACE_OPEN_S) {
        k->spec.work_s = TRACELOAD_OPEN_WORK_S;
    } else {
        k->spec.work_s = w >= 1e-9 ? w : 1e-9;
    }
}

/* Chronological, ties in file order (the offset or index in file order: bits 0-39). */
static int by_submit(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    if (a->k.at != b->k.at) {
        return a->k.at < b->k.at ? -1 : 1;
    }
    uint64_t x = a->w & W_OFF, y = b->w & W_OFF;
    return x < y ? -1 : (x > y);
}

/* FGD's tuning of an arrival-only workload (see the header): shuffle, then trim or inflate to
 * o->inflate x capacity. `all` holds n entries; the result (possibly longer) replaces it, each
 * entry's submit time set (one per interval, in list order). */
static entry *arrival_only(const traceload_opts *o, entry *all, size_t *n, traceload_stats *st)
{
    rng_root root = rng_root_make(o->seed);
    size_t m = *n;
    if (o->shuffle && m > 1) {
        rng_stream *s = rng_stream_open(&root, TRACELOAD_STREAM_SHUFFLE, 0);
        for (size_t i = m - 1; i > 0; i--) { /* Fisher-Yates */
            size_t j = (size_t)rng_uniform_int(s, i + 1);
            entry t = all[i];
            all[i] = all[j];
            all[j] = t;
        }
        rng_stream_close(s);
    }
    uint64_t total = 0;
    for (size_t i = 0; i < m; i++) {
        total += all[i].k.a.milli;
    }
    if (o->inflate > 0 && m > 0) {
        double target = o->inflate * (double)o->capacity_milli;
        rng_stream *s = rng_stream_open(&root, TRACELOAD_STREAM_INFLATE, 0);
        if ((double)total > target) {
            while ((double)total > target && m > 0) {
                size_t j = (size_t)rng_uniform_int(s, m);
                total -= all[j].k.a.milli;
                memmove(&all[j], &all[j + 1], (m - j - 1) * sizeof *all);
                m--;
                st->removed++;
            }
        } else {
            size_t n0 = m, cap = m;
            for (;;) {
                size_t j = (size_t)rng_uniform_int(s, n0);
                uint32_t g = all[j].k.a.units > 0 ? all[j].k.a.units : 1;
                uint64_t per_gpu = all[j].k.a.milli / g;
                if ((double)(total + per_gpu) > target) {
                    break;
                }
                if (m == cap) {
                    cap = 2 * cap;
                    all = xrealloc(all, cap * sizeof *all, "inflated jobs");
                }
                all[m] = all[j];
                all[m].w |= W_CLONE;
                total += all[m].k.a.milli;
                m++;
                st->inflated++;
            }
        }
        rng_stream_close(s);
    }
    for (size_t i = 0; i < m; i++) {
        all[i].k.at = sim_time_from_s((double)i * o->interval_s);
    }
    st->milli_total = total;
    *n = m;
    return all;
}

/* Timed: the window after the first submission; entries' submit times set, in order. */
static void timed_window(const traceload_opts *o, entry *all, size_t *n, traceload_stats *st)
{
    double first = HUGE_VAL;
    for (size_t i = 0; i < *n; i++) {
        double s = all[i].k.submit_s;
        first = s >= 0 && s < first ? s : first;
    }
    first = isfinite(first) ? first : 0;
    st->first_submit_s = first;
    double lo = first + o->start_s;
    double hi = o->length_s > 0 ? lo + o->length_s : HUGE_VAL;
    size_t m = 0;
    for (size_t i = 0; i < *n; i++) {
        double s = all[i].k.submit_s >= 0 ? all[i].k.submit_s : first;
        if (s < lo || s >= hi) {
            st->outside++;
            continue;
        }
        all[m] = all[i];
        all[m++].k.at = sim_time_from_s(s - lo);
    }
    *n = m;
    if (m > 1) {
        qsort(all, m, sizeof *all, by_submit);
    }
}

struct traceload_stream {
    trace_reader *r;     /* the rows are read again from it (borrowed); NULL: held */
    traceload_opts o;    /* as opened, fits cleared (the cluster it asked is gone) */
    const char *format;  /* class of jobs no rule names and without a class key */
    strset ss;           /* the jobs' strings, interned again for rows read again */
    job_spec *held;      /* held: every record's job in file order (freed once all are given) */
    entry *e;            /* the jobs to give, chronological */
    size_t n, next;
    int status;          /* 0, or why a row could not be read again (traceload_status) */
};

int traceload_open(trace_reader *r, const traceload_opts *o, arena *a, diag *d,
                   traceload_stats *st, traceload_stream **out)
{
    *st = (traceload_stats){0};
    *out = NULL;
    traceload_stream *ts = xcalloc(1, sizeof *ts, "trace stream");
    ts->o = *o;
    ts->o.fits = NULL;
    ts->o.fits_ctx = NULL;
    ts->format = o->default_class ? o->default_class : "trace";
    ts->ss.a = a;
    bool again = trace_seekable(r) && !o->arrival_only; /* read again, or held */
    entry *all = NULL;
    size_t n = 0, cap = 0, cap_held = 0;
    int rc, errors = diag_error_count(d);
    trace_record rec;
    while ((rc = trace_next(r, &rec)) != 0) {
        if (rc == SIM_EIO) {
            break;
        }
        st->rows++;
        if (rc < 0) {
            if (diag_error_count(d) >= DIAG_MAX_ERRORS) {
                break;
            }
            continue;
        }
        if (rec.gpus == 0 && !o->keep_cpu_pods) {
            st->cpu_only++;
            continue;
        }
        kept k;
        to_job(o, &rec, ts->format, &ts->ss, &k);
        const job_spec *js = &k.spec;
        uint32_t m = js->pod.gpu_milli;
        if (m > 0 && o->share_mem_bytes > 0 &&
            (double)js->mem_bytes > (double)o->share_mem_bytes * m / 1000.0 &&
            trace_error_gpu_milli(r, "memory need %.3g GiB is more than a %" PRIu32
                                     "-milli share of the largest GPU's %.3g GiB; expected a "
                                     "gpu_milli of at least %.0f, got '%" PRIu32 "'",
                                  (double)js->mem_bytes / 1073741824.0, m,
                                  (double)o->share_mem_bytes / 1073741824.0,
                                  ceil(1000.0 * (double)js->mem_bytes /
                                       (double)o->share_mem_bytes),
                                  m)) {
            if (diag_error_count(d) >= DIAG_MAX_ERRORS) {
                break;
            }
            continue;
        }
        uint64_t off = again ? trace_row_offset(r) : n;
        if (off > W_OFF) {
            trace_error_row(r, "row past the first TiB of the file; expected a trace file of at "
                               "most 2^40 bytes, got a longer one");
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            all = xrealloc(all, cap * sizeof *all, "traced jobs");
        }
        entry *e = &all[n];
        e->w = off | (js->work_s == TRACELOAD_OPEN_WORK_S ? W_OPEN : 0) |
               (k.fallback && js->req.per_worker > 0 ? W_FALLBACK : 0) |
               (js->req.per_worker == 0 ? W_CPU : 0) |
               (o->fits && !o->fits(o->fits_ctx, js) ? W_UNFIT : 0) |
               (again ? (uint64_t)(trace_row_hash(r) & W_HASH) << W_HASH_SHIFT : 0);
        if (o->arrival_only) {
            e->k.a.milli = (uint32_t)k.milli;
            e->k.a.units = job_units(js);
        } else {
            e->k.submit_s = rec.submit_s;
        }
        if (!again) {
            if (n == cap_held) {
                cap_held = cap_held ? 2 * cap_held : 1024;
                ts->held = xrealloc(ts->held, cap_held * sizeof *ts->held, "traced jobs");
            }
            ts->held[n] = k.spec;
        }
        n++;
    }
    if (rc == SIM_EIO || diag_error_count(d) > errors) {
        free(all);
        traceload_destroy(ts);
        return rc == SIM_EIO ? SIM_EIO : SIM_EINPUT;
    }
    if (o->arrival_only) {
        all = arrival_only(o, all, &n, st);
    } else {
        timed_window(o, all, &n, st);
    }
    if (o->limit > 0 && n > o->limit) {
        st->outside += n - o->limit;
        n = (size_t)o->limit;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t w = all[i].w;
        st->open += (w & W_OPEN) != 0;
        st->fallback += (w & W_FALLBACK) != 0;
        st->cpu_jobs += (w & W_CPU) != 0;
        if (w & W_UNFIT) {
            st->unplaceable++;
        } else {
            all[m++] = all[i];
        }
    }
    st->jobs = m;
    ts->r = again ? r : NULL;
    ts->e = m > 0 ? xrealloc(all, m * sizeof *all, "traced jobs") : (free(all), NULL);
    ts->n = m;
    *out = ts;
    return 0;
}

size_t traceload_count(const traceload_stream *s)
{
    return s->n;
}

int traceload_status(const traceload_stream *s)
{
    return s->status;
}

bool traceload_next(void *ctx, job_spec *out)
{
    traceload_stream *s = ctx;
    if (s->next >= s->n) {
        return false;
    }
    const entry *e = &s->e[s->next++];
    if (!s->r) {
        *out = s->held[e->w & W_OFF];
        if (s->next == s->n) { /* the last given: the table holds them all now */
            free(s->held);
            s->held = NULL;
        }
    } else {
        trace_record rec;
        int rc = s->status;
        if (rc == 0) {
            rc = trace_read_at(s->r, e->w & W_OFF, (uint32_t)(e->w >> W_HASH_SHIFT), W_HASH,
                               &rec);
        }
        if (rc == 1) {
            kept k;
            to_job(&s->o, &rec, s->format, &s->ss, &k);
            *out = k.spec;
        } else {
            /* the file changed or cannot be read (reported, or left to the caller): the run is
             * abandoned; a job that asks for nothing stands in for each one left */
            s->status = rc;
            *out = (job_spec){.class_name = s->format,
                              .req = {.resource = s->o.resource, .n_workers = 1},
                              .work_s = TRACELOAD_OPEN_WORK_S};
        }
    }
    out->submit = e->k.at;
    out->pod.clone = (e->w & W_CLONE) != 0;
    return true;
}

size_t traceload_held_record_bytes(void)
{
    return sizeof(job_spec) + sizeof(entry);
}

void traceload_destroy(traceload_stream *s)
{
    if (!s) {
        return;
    }
    free(s->ss.slot);
    free(s->held);
    free(s->e);
    free(s);
}

int traceload_check(trace_reader *r, uint64_t n_rows)
{
    trace_record rec;
    int status = 0;
    for (uint64_t i = 0; i < n_rows; i++) {
        int rc = trace_next(r, &rec);
        if (rc == 0) {
            break;
        }
        if (rc == SIM_EIO) {
            return rc;
        }
        if (rc < 0) {
            status = SIM_EINPUT;
        }
    }
    return status;
}
