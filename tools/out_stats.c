/* tools/out_stats.c - the statistics of a finished run that the writers share (see out.h:
 * out_stats). */
#include <stdlib.h>
#include <string.h>

#include "sim/qsel.h"
#include "sim/stats.h"
#include "sim/xalloc.h"
#include "tools/out.h"

enum { D_WAIT, D_JCT, D_WAIT_Q, D_SLOW, D_N };

/* The figures of one distribution other than its quantiles, gathered in id order. */
typedef struct dist_acc {
    stats_running r;
    double sum;
    qsel *q;
} dist_acc;

static void acc_add(dist_acc *a, double v)
{
    stats_running_add(&a->r, v);
    a->sum += v;
    qsel_add(a->q, v);
}

/* Class c's accumulator: the last one asked for when the name is the same pointer (a class's
 * jobs share their name), else found by name, else a new one. */
static out_class_stats *class_of(out_stats *s, size_t *cap, size_t *last, const char *name)
{
    if (*last < s->n_classes && s->classes[*last].name == name) {
        return &s->classes[*last];
    }
    for (size_t i = 0; i < s->n_classes; i++) {
        if (s->classes[i].name == name || !strcmp(s->classes[i].name, name)) {
            *last = i;
            return &s->classes[i];
        }
    }
    if (s->n_classes == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        s->classes = xrealloc(s->classes, *cap * sizeof *s->classes, "classes");
    }
    s->classes[s->n_classes] = (out_class_stats){.name = name};
    *last = s->n_classes;
    return &s->classes[s->n_classes++];
}

/* The values of the distributions whose quantiles are still open (q[d] non-NULL), in id order. */
static void job_values(const job_table *jt, sim_time horizon, qsel *const q[D_N])
{
    for (job_id k = 0; k < job_table_count(jt); k++) {
        const job *j = job_table_get(jt, k);
        if (j->start >= 0) {
            double wt = sim_time_to_s(job_wait_ns(j));
            if (q[D_WAIT]) {
                qsel_add(q[D_WAIT], wt);
            }
            if (q[D_WAIT_Q]) {
                qsel_add(q[D_WAIT_Q], wt);
            }
        } else if (j->state == JOB_QUEUED && q[D_WAIT_Q]) {
            qsel_add(q[D_WAIT_Q], sim_time_to_s(horizon - j->spec.submit));
        }
        if (j->state == JOB_DONE && (q[D_JCT] || q[D_SLOW])) {
            double t = sim_time_to_s(job_jct_ns(j));
            if (q[D_JCT]) {
                qsel_add(q[D_JCT], t);
            }
            if (q[D_SLOW]) {
                qsel_add(q[D_SLOW], t / j->spec.work_s);
            }
        }
    }
}

static out_dist dist_of(const dist_acc *a)
{
    out_dist d = {.n = a->r.n, .mean = stats_running_mean(&a->r), .sum = a->sum};
    if (d.n) {
        d.p50 = qsel_quantile(a->q, 0);
        d.p95 = qsel_quantile(a->q, 1);
        d.max = qsel_max(a->q);
    }
    return d;
}

/* The pass under way (see out.h). */
struct out_stats_acc {
    const world *w;
    out_stats *s;
    sim_time horizon;
    dist_acc acc[D_N];
    size_t cap, last; /* classes */
    fragstat_acc *frag;
    bool curve;
};

out_stats_acc *out_stats_begin(const world *w, out_stats *s, bool curve)
{
    memset(s, 0, sizeof *s);
    static const double p[2] = {0.5, 0.95};
    out_stats_acc *a = xcalloc(1, sizeof *a, "job statistics");
    a->w = w;
    a->s = s;
    a->horizon = world_get_totals(w).horizon;
    for (int d = 0; d < D_N; d++) {
        a->acc[d] = (dist_acc){stats_running_make(), 0, qsel_create(OUT_QUANTILE_CAP, p, 2)};
    }
    a->curve = curve;
    a->frag = fragstat_acc_create(curve ? world_cluster(w) : NULL, job_table_count(world_jobs(w)));
    return a;
}

void out_stats_add(out_stats_acc *a, const job *j)
{
    out_stats *s = a->s;
    dist_acc *acc = a->acc;
    out_class_stats *c =
        class_of(s, &a->cap, &a->last, j->spec.class_name ? j->spec.class_name : "");
    c->jobs++;
    c->queued += j->state == JOB_QUEUED;
    c->failed += j->state == JOB_FAILED_OOM || j->state == JOB_FAILED_REQUEST;
    s->has_shares |= j->spec.pod.gpu_milli > 0;
    if (j->state == JOB_QUEUED) {
        s->never_started += j->start < 0;
        s->queued_again += j->start >= 0;
    }
    if (j->start >= 0) {
        double wt = sim_time_to_s(job_wait_ns(j));
        acc_add(&acc[D_WAIT], wt);
        acc_add(&acc[D_WAIT_Q], wt);
        c->wait_sum += wt;
        c->n_wait++;
    } else if (j->state == JOB_QUEUED) {
        acc_add(&acc[D_WAIT_Q], sim_time_to_s(a->horizon - j->spec.submit));
        s->n_censored++;
    }
    if (j->state == JOB_DONE) {
        double t = sim_time_to_s(job_jct_ns(j));
        acc_add(&acc[D_JCT], t);
        acc_add(&acc[D_SLOW], t / j->spec.work_s);
        c->done++;
        c->jct_sum += t;
        c->slow_sum += t / j->spec.work_s;
    }
    fragstat_acc_add(a->frag, j);
}

void out_stats_end(out_stats_acc *a)
{
    out_stats *s = a->s;
    dist_acc *acc = a->acc;
    /* quantiles of more values than the cap: the values again, of the open ones only */
    qsel *open[D_N];
    bool more = false;
    for (int d = 0; d < D_N; d++) {
        open[d] = qsel_pass_end(acc[d].q) ? NULL : acc[d].q;
        more |= open[d] != NULL;
    }
    while (more) {
        job_values(world_jobs(a->w), a->horizon, open);
        more = false;
        for (int d = 0; d < D_N; d++) {
            open[d] = open[d] && !qsel_pass_end(open[d]) ? open[d] : NULL;
            more |= open[d] != NULL;
        }
    }
    s->wait = dist_of(&acc[D_WAIT]);
    s->jct = dist_of(&acc[D_JCT]);
    s->wait_queued = dist_of(&acc[D_WAIT_Q]);
    s->slowdown = dist_of(&acc[D_SLOW]);
    for (int d = 0; d < D_N; d++) {
        qsel_destroy(acc[d].q);
    }
    fragstat_acc_finish(a->frag, &s->typical, OUT_CURVE_STEP, a->curve ? &s->curve : NULL,
                        &s->n_curve);
    s->has_curve = a->curve;
    free(a);
}

void out_stats_compute(const world *w, out_stats *s, bool curve)
{
    const job_table *jt = world_jobs(w);
    out_stats_acc *a = out_stats_begin(w, s, curve);
    for (job_id k = 0; k < job_table_count(jt); k++) {
        out_stats_add(a, job_table_get(jt, k));
    }
    out_stats_end(a);
}

void out_stats_fini(out_stats *s)
{
    frag_typical_fini(&s->typical);
    free(s->curve);
    s->curve = NULL;
    s->n_curve = 0;
    free(s->classes);
    s->classes = NULL;
    s->n_classes = 0;
}
