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
 * Placement is pol_first_fit (CPU, host memory and gpu_spec checked; a CPU-only pod on the
 * lowest node with its CPU and memory). The shadow time counts the CPU and memory the released
 * jobs give back, but only units are reserved (a CPU-only pod reserves nothing). A job that
 * never ends (estimated end past what sim_time holds: an open-ended trace pod) is never released,
 * so a head that would fit only after one has no reservation, and every later job may start.
 * The model may refuse a placement (OOM at start): the job leaves the queue as with FIFO.
 * Cost per decision: O(queued jobs x nodes x devices) placements tried (a request that failed
 * is not tried again in the same call: capacity only shrinks within a call), and
 * O(running log running) to order the ends.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/policy/policy.h"
#include "sim/err.h"
#include "sim/xalloc.h"

#define BF_MEMO 32 /* requests that failed, remembered per call */

typedef struct bf_state {
    job_id *queue; /* queued jobs in submission order */
    size_t n_queue, cap_queue;
    job_id *running; /* jobs this policy started (some may have ended since) */
    size_t n_running, cap_running;
    pol_scratch now, later; /* free units now, and at the head's shadow time */
    dev_id *units, *reserved;
    size_t cap_units, n_reserved;
    node_id *nodes; /* node of each worker of the job being placed */
    size_t cap_nodes;
    node_id **nodes_of; /* per job this policy started: its workers' nodes (NULL otherwise) */
    uint32_t n_jobs;
    sim_time *end_of;   /* per job this policy started: its estimated end */
    pol_job failed[BF_MEMO]; /* requests that did not fit in this call (a bounded memo) */
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
    free(s->nodes);
    for (uint32_t j = 0; s->nodes_of && j < s->n_jobs; j++) {
        free(s->nodes_of[j]);
    }
    free(s->nodes_of);
    free(s->end_of);
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

/* Room for job j's units and worker nodes. */
static void grow_for(bf_state *s, const pol_job *j)
{
    size_t n = (size_t)j->per_worker * j->n_workers;
    if (n > s->cap_units) {
        s->cap_units = n;
        s->units = xrealloc(s->units, n * sizeof(dev_id), "backfill units");
        s->reserved = xrealloc(s->reserved, n * sizeof(dev_id), "backfill reservation");
    }
    if (j->n_workers > s->cap_nodes) {
        s->cap_nodes = j->n_workers;
        s->nodes = xrealloc(s->nodes, j->n_workers * sizeof(node_id), "backfill nodes");
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
    double left_s = j->work_s - j->done_s;
    /* past what sim_time holds (about 292 years: an open-ended trace pod): never */
    if (sim_time_to_s(t0) + left_s >= 9.2e9) {
        return SIM_TIME_MAX;
    }
    return t0 + sim_time_from_s(left_s);
}

/* H's shadow time (SIM_TIME_MAX: never fits) and reserved units (s->reserved). The jobs placed
 * earlier in this call hold their units from now (s->now); the running jobs free theirs at their
 * estimated ends. */
static sim_time reserve(bf_state *s, const cluster_view *cv, const pol_job *h)
{
    sim_time now = pol_now(cv);
    pol_scratch_load(&s->later, cv);
    pol_scratch_copy_taken(&s->later, &s->now); /* this call's placements hold from now */
    ending *ends = xcalloc(s->n_running + 1, sizeof *ends, "backfill ends");
    size_t n_ends = 0;
    for (size_t i = 0; i < s->n_running; i++) {
        job_id id = s->running[i];
        sim_time e = s->end_of[id];
        if (e == SIM_TIME_MAX) { /* jobs that never end are never released (below) */
            continue;
        }
        const dev_id *u;
        bool running;
        pol_job_placement(cv, id, &u, &running);
        if (running) {
            ends[n_ends++] = (ending){e > now ? e : now, id};
        }
    }
    qsort(ends, n_ends, sizeof *ends, by_end);
    sim_time t = now;
    bool fits = pol_first_fit(cv, &s->later, h, s->reserved, s->nodes);
    /* a job that fits only once jobs that never end (open-ended) have ended gets the shadow time
     * "never", under which every later job may start (none ends after it): those are not
     * released, and H then has no reservation */
    for (size_t k = 0; !fits && k < n_ends; k++) {
        const dev_id *u;
        bool running;
        uint32_t nu = pol_job_placement(cv, ends[k].id, &u, &running);
        for (uint32_t x = 0; x < nu; x++) {
            pol_scratch_give(&s->later, u[x]);
        }
        const node_id *nodes = s->nodes_of[ends[k].id];
        pol_job e;
        pol_job_get(cv, ends[k].id, &e);
        for (uint32_t w = 0; nodes && w < e.n_workers; w++) { /* and its CPU and memory */
            pol_scratch_give_node(&s->later, nodes[w], e.pod.cpu_milli, e.pod.host_mem_bytes);
        }
        t = ends[k].at;
        if (k + 1 < n_ends && ends[k + 1].at == t) {
            continue; /* release every job ending at t before trying */
        }
        fits = pol_first_fit(cv, &s->later, h, s->reserved, s->nodes);
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

static void place(bf_state *s, const cluster_view *cv, decision_buf *out, const pol_job *j,
                  size_t n)
{
    pol_place_on(out, j->id, s->units, (uint32_t)n, s->nodes, j->n_workers);
    add(&s->running, &s->n_running, &s->cap_running, j->id, "backfill running");
    if (!s->nodes_of) {
        s->n_jobs = pol_n_jobs(cv);
        s->nodes_of = xcalloc(s->n_jobs ? s->n_jobs : 1, sizeof(node_id *), "backfill nodes");
        s->end_of = xcalloc(s->n_jobs ? s->n_jobs : 1, sizeof(sim_time), "backfill ends");
    }
    s->end_of[j->id] = est_end(j, pol_now(cv)); /* the model starts it now */
    free(s->nodes_of[j->id]);
    s->nodes_of[j->id] = xcalloc(j->n_workers, sizeof(node_id), "backfill nodes");
    memcpy(s->nodes_of[j->id], s->nodes, j->n_workers * sizeof(node_id));
}

/* Do the two jobs ask for the same (everything first fit looks at)? */
static bool same_request(const pol_job *a, const pol_job *b)
{
    return a->per_worker == b->per_worker && a->n_workers == b->n_workers &&
           a->pod.cpu_milli == b->pod.cpu_milli &&
           a->pod.host_mem_bytes == b->pod.host_mem_bytes && a->pod.node_pin == b->pod.node_pin &&
           taint_pod_same(a->pod.place, b->pod.place) &&
           (a->resource == b->resource ||
            !strcmp(a->resource ? a->resource : "", b->resource ? b->resource : "")) &&
           (a->pod.gpu_spec == b->pod.gpu_spec ||
            !strcmp(a->pod.gpu_spec ? a->pod.gpu_spec : "", b->pod.gpu_spec ? b->pod.gpu_spec : ""));
}

/* Did a job asking for the same as j fail to fit earlier in this call (s->failed[0..n))? Within
 * a call the free capacity only shrinks, so j would fail too. */
static bool failed_before(const bf_state *s, size_t n, const pol_job *j)
{
    for (size_t i = 0; i < n; i++) {
        if (same_request(&s->failed[i], j)) {
            return true;
        }
    }
    return false;
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
        grow_for(s, &j);
        if (!pol_first_fit(cv, &s->now, &j, s->units, s->nodes)) {
            break;
        }
        place(s, cv, out, &j, n);
        drop(s->queue, &s->n_queue, 0);
    }
    if (s->n_queue < 2) {
        return;
    }
    pol_job h;
    pol_job_get(cv, s->queue[0], &h);
    grow_for(s, &h);
    sim_time shadow = reserve(s, cv, &h);
    size_t n_failed = 0;
    for (size_t i = 1; i < s->n_queue;) {
        pol_job j;
        pol_job_get(cv, s->queue[i], &j);
        size_t n = (size_t)j.per_worker * j.n_workers;
        grow_for(s, &j);
        if (failed_before(s, n_failed, &j)) {
            i++;
            continue;
        }
        if (!pol_first_fit(cv, &s->now, &j, s->units, s->nodes)) {
            if (n_failed < BF_MEMO) {
                s->failed[n_failed++] = j;
            }
            i++;
            continue;
        }
        if (est_end(&j, now) > shadow && uses_reserved(s, s->units, n)) {
            s->now.n -= n; /* would delay the head: give the units, CPU and memory back */
            s->now.n_used -= j.n_workers;
            i++;
            continue;
        }
        place(s, cv, out, &j, n);
        drop(s->queue, &s->n_queue, i);
    }
}

/* Forget job j in the running list (it ended, or was killed and is queued again). */
static void forget(bf_state *s, job_id j)
{
    for (size_t i = 0; i < s->n_running; i++) {
        if (s->running[i] == j) {
            drop(s->running, &s->n_running, i);
            free(s->nodes_of[j]);
            s->nodes_of[j] = NULL;
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
