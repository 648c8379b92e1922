/* model/policy/backfill.c - EASY backfilling (Lifka 1995; Mu'alem and Feitelson 2001) over the
 * pod queue, with first-fit placement.
 *
 * Jobs start in submission order while they fit (pol_first_fit, as FIFO). When the oldest queued
 * job H does not fit, it gets a reservation: the running jobs are released in the order of their
 * estimated ends, on a scratch copy of the free units, until H fits; that time is H's shadow time
 * T and the units H would take then are its reserved units R. A later job J may start now
 * (backfill) when it fits now and does not delay H: it is estimated to end by T, or it holds none
 * of the units in R. With exact estimates H therefore starts no later than T.
 * Estimates: a job's remaining solo run time, work_s - done_s (the trace's duration or the
 * synthetic duration; a running job is estimated to end at run_start + work_s - done_s). A job
 * slowed by co-runners (time-slicing, MPS) runs longer than its estimate, which may delay H;
 * an estimate that has already passed counts as ending now.
 * A job that can never fit, even on the empty cluster, has no reservation: it blocks nothing.
 * The model may refuse a placement (OOM at start): the job leaves the queue as with FIFO.
 * Cost per decision: O(queued jobs x nodes x devices) placements tried, and O(running log running)
 * to order the ends.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/policy/policy.h"
#include "sim/err.h"
#include "sim/xalloc.h"

typedef struct bf_state {
    job_id *queue; /* queued jobs in submission order */
    size_t n_queue, cap_queue;
    job_id *running; /* jobs this policy started (some may have ended since) */
    size_t n_running, cap_running;
    pol_scratch now, later; /* free units now, and at the head's shadow time */
    dev_id *units, *reserved;
    size_t cap_units, n_reserved;
} bf_state;

typedef struct ending {
    sim_time at;
    job_id id;
} ending;

static int bf_init(void *self, const param_set *params, diag *d)
{
    (void)self;
    return pol_reject_params("backfill", params, d);
}

static void bf_fini(void *self)
{
    bf_state *s = self;
    free(s->queue);
    free(s->running);
    free(s->units);
    free(s->reserved);
    pol_scratch_fini(&s->now);
    pol_scratch_fini(&s->later);
}

static void add(job_id **a, size_t *n, size_t *cap, job_id j, const char *what)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *a = xrealloc(*a, *cap * sizeof(job_id), what);
    }
    (*a)[(*n)++] = j;
}

static void drop(job_id *a, size_t *n, size_t i)
{
    memmove(a + i, a + i + 1, (*n - i - 1) * sizeof *a);
    (*n)--;
}

static void grow_units(bf_state *s, size_t n)
{
    if (n > s->cap_units) {
        s->cap_units = n;
        s->units = xrealloc(s->units, n * sizeof(dev_id), "backfill units");
        s->reserved = xrealloc(s->reserved, n * sizeof(dev_id), "backfill reservation");
    }
}

static int by_end(const void *pa, const void *pb)
{
    const ending *a = pa, *b = pb;
    if (a->at != b->at) {
        return a->at < b->at ? -1 : 1;
    }
    return (a->id > b->id) - (a->id < b->id);
}

/* Estimated end of job j starting (or started) at t0. */
static sim_time est_end(const pol_job *j, sim_time t0)
{
    return t0 + sim_time_from_s(j->work_s - j->done_s);
}

/* H's shadow time (SIM_TIME_MAX: never fits) and reserved units (s->reserved). The jobs placed
 * earlier in this call hold their units from now (s->now); the running jobs free theirs at their
 * estimated ends. */
static sim_time reserve(bf_state *s, const cluster_view *cv, const pol_job *h)
{
    sim_time now = pol_now(cv);
    pol_scratch_load(&s->later, cv);
    if (s->now.n > s->later.cap) { /* this call's placements hold their units from now */
        s->later.cap = s->now.n;
        s->later.taken = xrealloc(s->later.taken, s->later.cap * sizeof(dev_id), "taken");
    }
    if (s->now.n) {
        memcpy(s->later.taken, s->now.taken, s->now.n * sizeof(dev_id));
    }
    s->later.n = s->now.n;
    ending *ends = xcalloc(s->n_running + 1, sizeof *ends, "backfill ends");
    size_t n_ends = 0;
    for (size_t i = 0; i < s->n_running; i++) {
        const dev_id *u;
        bool running;
        pol_job_placement(cv, s->running[i], &u, &running);
        if (running) {
            pol_job j;
            pol_job_get(cv, s->running[i], &j);
            sim_time e = est_end(&j, j.run_start);
            ends[n_ends++] = (ending){e > now ? e : now, j.id};
        }
    }
    qsort(ends, n_ends, sizeof *ends, by_end);
    sim_time t = now;
    bool fits = pol_first_fit(cv, &s->later, h, s->reserved);
    for (size_t k = 0; !fits && k < n_ends; k++) {
        const dev_id *u;
        bool running;
        uint32_t nu = pol_job_placement(cv, ends[k].id, &u, &running);
        for (uint32_t x = 0; x < nu; x++) {
            pol_scratch_give(&s->later, u[x]);
        }
        t = ends[k].at;
        if (k + 1 < n_ends && ends[k + 1].at == t) {
            continue; /* release every job ending at t before trying */
        }
        fits = pol_first_fit(cv, &s->later, h, s->reserved);
    }
    free(ends);
    s->n_reserved = fits ? (size_t)h->per_worker * h->n_workers : 0;
    return fits ? t : SIM_TIME_MAX;
}

/* Does placement units[0..n) use a reserved unit? */
static bool uses_reserved(const bf_state *s, const dev_id *units, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < s->n_reserved; k++) {
            if (units[i] == s->reserved[k]) {
                return true;
            }
        }
    }
    return false;
}

static void place(bf_state *s, decision_buf *out, const pol_job *j, size_t n)
{
    pol_place(out, j->id, s->units, (uint32_t)n);
    add(&s->running, &s->n_running, &s->cap_running, j->id, "backfill running");
}

static void schedule(bf_state *s, const cluster_view *cv, decision_buf *out)
{
    pol_scratch_load(&s->now, cv);
    sim_time now = pol_now(cv);
    /* FIFO part: start from the head while jobs fit */
    while (s->n_queue > 0) {
        pol_job j;
        pol_job_get(cv, s->queue[0], &j);
        size_t n = (size_t)j.per_worker * j.n_workers;
        grow_units(s, n);
        if (!pol_first_fit(cv, &s->now, &j, s->units)) {
            break;
        }
        place(s, out, &j, n);
        drop(s->queue, &s->n_queue, 0);
    }
    if (s->n_queue < 2) {
        return;
    }
    pol_job h;
    pol_job_get(cv, s->queue[0], &h);
    grow_units(s, (size_t)h.per_worker * h.n_workers);
    sim_time shadow = reserve(s, cv, &h);
    for (size_t i = 1; i < s->n_queue;) {
        pol_job j;
        pol_job_get(cv, s->queue[i], &j);
        size_t n = (size_t)j.per_worker * j.n_workers;
        grow_units(s, n);
        if (!pol_first_fit(cv, &s->now, &j, s->units)) {
            i++;
            continue;
        }
        if (est_end(&j, now) > shadow && uses_reserved(s, s->units, n)) {
            s->now.n -= n; /* would delay the head: give the units back */
            i++;
            continue;
        }
        place(s, out, &j, n);
        drop(s->queue, &s->n_queue, i);
    }
}

/* Forget job j in the running list (it ended, or was killed and is queued again). */
static void forget(bf_state *s, job_id j)
{
    for (size_t i = 0; i < s->n_running; i++) {
        if (s->running[i] == j) {
            drop(s->running, &s->n_running, i);
            return;
        }
    }
}

static void bf_on_arrival(void *self, const cluster_view *cv, job_id j, decision_buf *out)
{
    bf_state *s = self;
    forget(s, j); /* a killed job comes back through here */
    add(&s->queue, &s->n_queue, &s->cap_queue, j, "backfill queue");
    schedule(s, cv, out);
}

static void bf_on_finish(void *self, const cluster_view *cv, job_id j, decision_buf *out)
{
    bf_state *s = self;
    forget(s, j);
    schedule(s, cv, out);
}

static void bf_on_capacity(void *self, const cluster_view *cv, decision_buf *out)
{
    schedule(self, cv, out);
}

const policy_ops pol_backfill_ops = {
    .name = "backfill",
    .summary = "EASY backfilling: FIFO order, later jobs start early when they do not delay the "
               "head job's reservation; first-fit placement",
    .state_size = sizeof(bf_state),
    .init = bf_init,
    .fini = bf_fini,
    .on_arrival = bf_on_arrival,
    .on_finish = bf_on_finish,
    .on_capacity = bf_on_capacity,
};
