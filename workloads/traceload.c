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

/* One kept record: its job and where it came from. */
typedef struct kept {
    job_spec spec;
    double submit_s, dur_s; /* trace time, traced run time (TRACE_OPEN_S: none) */
    double factor;          /* work per traced second */
    uint64_t seq;           /* file order */
    uint64_t milli;         /* milli-GPU asked for in all (GPUs x gpu_milli) */
    bool fallback;          /* no rule gave it a profile */
} kept;

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

/* Record -> kept job (without work and submit time, set once the window is known). */
static void to_job(const traceload_opts *o, const trace_record *rec, const char *format, strset *ss,
                   uint64_t seq, kept *k)
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
        .submit_s = rec->submit_s,
        .dur_s = rec->duration_s,
        .factor = r ? r->work_factor : o->fallback_factor,
        .seq = seq,
        .milli = (uint64_t)rec->gpus * rec->gpu_milli,
        .fallback = fallback,
    };
}

static int by_submit(const void *pa, const void *pb)
{
    const kept *a = pa, *b = pb;
    if (a->spec.submit != b->spec.submit) {
        return a->spec.submit < b->spec.submit ? -1 : 1;
    }
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

/* FGD's tuning of an arrival-only workload (see the header): shuffle, then trim or inflate to
 * o->inflate x capacity. `all` holds n jobs; the result (possibly longer) replaces it. */
static kept *arrival_only(const traceload_opts *o, kept *all, size_t *n, traceload_stats *st)
{
    rng_root root = rng_root_make(o->seed);
    size_t m = *n;
    if (o->shuffle && m > 1) {
        rng_stream *s = rng_stream_open(&root, TRACELOAD_STREAM_SHUFFLE, 0);
        for (size_t i = m - 1; i > 0; i--) { /* Fisher-Yates */
            size_t j = (size_t)rng_uniform_int(s, i + 1);
            kept t = all[i];
            all[i] = all[j];
            all[j] = t;
        }
        rng_stream_close(s);
    }
    uint64_t total = 0;
    for (size_t i = 0; i < m; i++) {
        total += all[i].milli;
    }
    if (o->inflate > 0 && m > 0) {
        double target = o->inflate * (double)o->capacity_milli;
        rng_stream *s = rng_stream_open(&root, TRACELOAD_STREAM_INFLATE, 0);
        if ((double)total > target) {
            while ((double)total > target && m > 0) {
                size_t j = (size_t)rng_uniform_int(s, m);
                total -= all[j].milli;
                memmove(&all[j], &all[j + 1], (m - j - 1) * sizeof *all);
                m--;
                st->removed++;
            }
        } else {
            size_t n0 = m, cap = m;
            for (;;) {
                size_t j = (size_t)rng_uniform_int(s, n0);
                uint32_t g = job_units(&all[j].spec) > 0 ? job_units(&all[j].spec) : 1;
                uint64_t per_gpu = all[j].milli / g;
                if ((double)(total + per_gpu) > target) {
                    break;
                }
                if (m == cap) {
                    cap = 2 * cap;
                    all = xrealloc(all, cap * sizeof *all, "inflated jobs");
                }
                all[m] = all[j];
                all[m].seq = m;
                all[m].spec.pod.clone = true;
                total += all[m].milli;
                m++;
                st->inflated++;
            }
        }
        rng_stream_close(s);
    }
    for (size_t i = 0; i < m; i++) {
        all[i].spec.submit = sim_time_from_s((double)i * o->interval_s);
        all[i].spec.work_s = TRACELOAD_OPEN_WORK_S;
    }
    st->milli_total = total;
    *n = m;
    return all;
}

int traceload_jobs(trace_reader *r, const traceload_opts *o, arena *a, diag *d, job_table *t,
                   traceload_stats *st)
{
    *st = (traceload_stats){0};
    strset ss = {.a = a};
    kept *all = NULL;
    size_t n = 0, cap = 0;
    int rc, errors = diag_error_count(d);
    uint64_t seq = 0;
    trace_record rec;
    const char *format = o->default_class ? o->default_class : "trace";
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
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            all = xrealloc(all, cap * sizeof *all, "traced jobs");
        }
        to_job(o, &rec, format, &ss, seq++, &all[n]);
        const job_spec *js = &all[n].spec;
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
        n++;
    }
    free(ss.slot);
    if (rc == SIM_EIO || diag_error_count(d) > errors) {
        free(all);
        return rc == SIM_EIO ? SIM_EIO : SIM_EINPUT;
    }
    if (o->arrival_only) {
        all = arrival_only(o, all, &n, st);
    } else {
        double first = HUGE_VAL;
        for (size_t i = 0; i < n; i++) {
            first = all[i].submit_s >= 0 && all[i].submit_s < first ? all[i].submit_s : first;
        }
        first = isfinite(first) ? first : 0;
        st->first_submit_s = first;
        double lo = first + o->start_s;
        double hi = o->length_s > 0 ? lo + o->length_s : HUGE_VAL;
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            kept *k = &all[i];
            double s = k->submit_s >= 0 ? k->submit_s : first;
            if (s < lo || s >= hi) {
                st->outside++;
                continue;
            }
            k->spec.submit = sim_time_from_s(s - lo);
            if (k->dur_s == TRACE_OPEN_S) {
                k->spec.work_s = TRACELOAD_OPEN_WORK_S;
            } else {
                double w = k->dur_s * k->factor;
                k->spec.work_s = w >= 1e-9 ? w : 1e-9;
            }
            all[m++] = *k;
        }
        n = m;
        if (n > 1) {
            qsort(all, n, sizeof *all, by_submit);
        }
    }
    if (o->limit > 0 && n > o->limit) {
        st->outside += n - o->limit;
        n = (size_t)o->limit;
    }
    for (size_t i = 0; i < n; i++) {
        job_table_add(t, &all[i].spec);
        st->open += all[i].spec.work_s == TRACELOAD_OPEN_WORK_S;
        st->fallback += all[i].fallback && all[i].spec.req.per_worker > 0;
        st->cpu_jobs += all[i].spec.req.per_worker == 0;
    }
    st->jobs = n;
    free(all);
    return 0;
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
