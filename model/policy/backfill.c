/* model/policy/backfill.c - EASY backfilling (Lifka 1995; Mu'alem and Feitelson 2001) over the
 * pod queue, with first-fit placement, on a reservation profile.
 *
 * Jobs start in submission order while they fit (pol_first_fit, as FIFO). When the oldest queued
 * job H does not fit, it gets a reservation from the profile: the running jobs ordered by their
 * estimated ends (the steps of the availability function, kept sorted as jobs start and end) are
 * released in that order, on a scratch copy of the free units, until H fits; that time is H's
 * shadow time T and the units H would take then are its reserved units R. A later job J may
 * start now (backfill) when it fits now and does not delay H: it is estimated to end by T, or it
 * holds none of the units in R. With exact estimates H therefore starts no later than T.
 * The reservation is made when first needed (a later job fits now) and kept until capacity is
 * given back (a job ends or is killed, the cluster grows) or H starts: an arrival takes capacity
 * and never returns any, so between those events only the arriving job can start, and it is the
 * only one tried (strict EASY: H's reservation is not recomputed, hence never moved, by
 * arrivals). When capacity is given back the whole queue is tried again, from the head.
 * Estimates: a job's remaining solo run time, work_s - done_s (the trace's duration or the
 * synthetic duration; a running job is estimated to end at run_start + work_s - done_s). A job
 * slowed by co-runners (time-slicing, MPS) runs longer than its estimate, which may delay H;
 * an estimate that has already passed counts as ending now.
 * A job that can never fit, even on the empty cluster, has no reservation: it blocks nothing.
 * Placement is pol_first_fit (CPU, host memory and gpu_spec checked; a CPU-only pod on the
 * lowest node with its CPU and memory). The shadow time counts the CPU and memory the released
 * jobs give back, but only units are reserved (a CPU-only pod reserves nothing). A job that
 * never ends (estimated end past what sim_time holds: an open-ended trace pod) is not a step of
 * the profile, so a head that would fit only after one has no reservation, and every later job
 * may start.
 * The model may refuse a placement (OOM at start): the job leaves the queue as with FIFO.
 * Cost: an arrival is one placement tried (and, when it fits behind a waiting head, the
 * reservation once per head); a job's start and end update the profile by binary search
 * (O(log running) to find the step, a memmove of the sorted steps to insert or drop it); an end
 * tries the queue again: O(queued jobs) placements tried, a request that failed not tried again
 * in the same call (capacity only shrinks within a call), plus the reservation (O(steps
 * released) first fits).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/policy/policy.h"
#include "sim/err.h"
#include "sim/xalloc.h"

#define BF_MEMO 32            /* requests that failed, remembered per call */
#define BF_NONE UINT32_MAX    /* no job: the ends of the queue's list */

/* One step of the profile: running job `id` is estimated to end at `at`. */
typedef struct ending {
    sim_time at;
    job_id id;
} ending;

typedef struct bf_state {
    uint32_t n_jobs;      /* of the run, known at the first call (0 before) */
    job_id *next, *prev;  /* the queue: a list in arrival order, per job (BF_NONE ends it) */
    job_id head, tail;    /* BF_NONE when the queue is empty */
    pol_scratch now, later; /* free units now, and at the head's shadow time */
    dev_id *units, *reserved; /* reserved: R sorted, n_reserved of them */
    size_t cap_units, n_reserved;
    node_id *nodes, *res_nodes; /* node of each worker of the job being placed, of the head */
    size_t cap_nodes;
    node_id **nodes_of; /* per job this policy started: its workers' nodes (NULL otherwise) */
    sim_time *end_of;   /* per job this policy started: its estimated end */
    ending *steps;      /* the profile: started jobs that end, by (at, id) ascending */
    uint32_t *avail;    /* per node: units of the head's resource free at the step (reserve) */
    size_t cap_avail;
    size_t n_steps, cap_steps;
    bool has_res;       /* the head's reservation (shadow, reserved) holds */
    sim_time shadow;
    pol_job failed[BF_MEMO]; /* requests that did not fit in this call (a bounded memo) */
} bf_state;

static int bf_init(void *self, const param_set *params, diag *d)
{
    bf_state *s = self;
    s->head = s->tail = BF_NONE;
    return pol_reject_params("backfill", params, d);
}

static void bf_fini(void *self)
{
    bf_state *s = self;
    free(s->next);
    free(s->prev);
    free(s->units);
    free(s->reserved);
    free(s->nodes);
    free(s->res_nodes);
    for (uint32_t j = 0; s->nodes_of && j < s->n_jobs; j++) {
        free(s->nodes_of[j]);
    }
    free(s->nodes_of);
    free(s->end_of);
    free(s->steps);
    free(s->avail);
    pol_scratch_fini(&s->now);
    pol_scratch_fini(&s->later);
}

static void setup(bf_state *s, const cluster_view *cv)
{
    if (s->nodes_of) {
        return;
    }
    s->n_jobs = pol_n_jobs(cv);
    size_t n = s->n_jobs ? s->n_jobs : 1;
    s->next = xcalloc(n, sizeof(job_id), "backfill queue");
    s->prev = xcalloc(n, sizeof(job_id), "backfill queue");
    s->nodes_of = xcalloc(n, sizeof(node_id *), "backfill nodes");
    s->end_of = xcalloc(n, sizeof(sim_time), "backfill ends");
}

/* ---- the queue ------------------------------------------------------------------------------ */

static void push(bf_state *s, job_id j)
{
    s->next[j] = BF_NONE;
    s->prev[j] = s->tail;
    if (s->tail == BF_NONE) {
        s->head = j;
    } else {
        s->next[s->tail] = j;
    }
    s->tail = j;
}

static void unlink_job(bf_state *s, job_id j)
{
    if (s->prev[j] == BF_NONE) {
        s->head = s->next[j];
    } else {
        s->next[s->prev[j]] = s->next[j];
    }
    if (s->next[j] == BF_NONE) {
        s->tail = s->prev[j];
    } else {
        s->prev[s->next[j]] = s->prev[j];
    }
}

/* ---- the profile ---------------------------------------------------------------------------- */

static bool step_before(ending a, ending b)
{
    return a.at != b.at ? a.at < b.at : a.id < b.id;
}

/* Index of the first step not before e. */
static size_t step_find(const bf_state *s, ending e)
{
    size_t lo = 0, hi = s->n_steps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (step_before(s->steps[mid], e)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static void step_add(bf_state *s, ending e)
{
    if (s->n_steps == s->cap_steps) {
        s->cap_steps = s->cap_steps ? 2 * s->cap_steps : 64;
        s->steps = xrealloc(s->steps, s->cap_steps * sizeof *s->steps, "backfill profile");
    }
    size_t i = step_find(s, e);
    memmove(s->steps + i + 1, s->steps + i, (s->n_steps - i) * sizeof *s->steps);
    s->steps[i] = e;
    s->n_steps++;
}

static void step_drop(bf_state *s, ending e)
{
    size_t i = step_find(s, e);
    if (i < s->n_steps && s->steps[i].at == e.at && s->steps[i].id == e.id) {
        memmove(s->steps + i, s->steps + i + 1, (s->n_steps - i - 1) * sizeof *s->steps);
        s->n_steps--;
    }
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
        s->res_nodes = xrealloc(s->res_nodes, j->n_workers * sizeof(node_id), "backfill nodes");
    }
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

static int by_unit(const void *pa, const void *pb)
{
    dev_id a = *(const dev_id *)pa, b = *(const dev_id *)pb;
    return (a > b) - (a < b);
}

/* The head's reservation: s->shadow (SIM_TIME_MAX: never fits) and its reserved units
 * (s->reserved, sorted). The jobs placed earlier in this call hold their units from now (s->now);
 * the running jobs free theirs at their estimated ends, walked in the profile's order. */
static void reserve(bf_state *s, const cluster_view *cv)
{
    pol_job h;
    pol_job_get(cv, s->head, &h);
    grow_for(s, &h);
    sim_time now = pol_now(cv);
    pol_scratch_load(&s->later, cv);
    pol_scratch_copy_taken(&s->later, &s->now); /* this call's placements hold from now */
    sim_time t = now;
    /* the availability of the head's resource over time, per node: an upper bound (free units
     * now, plus those given back step by step) of the workers each node could take; first fit
     * is tried only when they add up to the head's workers */
    res_id r;
    bool counted = h.per_worker > 0 && h.resource && pol_resource_find(cv, h.resource, &r);
    uint64_t room = 0; /* sum over nodes of avail / per_worker */
    if (counted) {
        uint32_t n_nodes = pol_n_nodes(cv);
        if (n_nodes > s->cap_avail) {
            s->cap_avail = n_nodes;
            s->avail = xrealloc(s->avail, n_nodes * sizeof *s->avail, "backfill profile");
        }
        for (node_id n = 0; n < n_nodes; n++) {
            s->avail[n] = pol_node_free(cv, n, r);
            room += s->avail[n] / h.per_worker;
        }
    }
    bool fits = (!counted || room >= h.n_workers) &&
                pol_first_fit(cv, &s->later, &h, s->reserved, s->res_nodes);
    /* jobs that never end (open-ended) are not steps: a head that fits only once they have
     * ended gets the shadow time "never", under which every later job may start */
    bool released = false; /* since the last try */
    for (size_t k = 0; !fits && k < s->n_steps; k++) {
        const dev_id *u;
        bool running;
        uint32_t nu = pol_job_placement(cv, s->steps[k].id, &u, &running);
        if (running) { /* (a job placed in this call is not running yet: its units hold) */
            for (uint32_t x = 0; x < nu; x++) {
                pol_scratch_give(&s->later, u[x]);
                pol_device pd;
                pol_device_get(cv, u[x], &pd);
                if (counted && pd.resource == r) {
                    room -= s->avail[pd.node] / h.per_worker;
                    room += ++s->avail[pd.node] / h.per_worker;
                }
            }
            const node_id *nodes = s->nodes_of[s->steps[k].id];
            pol_job e;
            pol_job_get(cv, s->steps[k].id, &e);
            for (uint32_t w = 0; nodes && w < e.n_workers; w++) { /* and its CPU and memory */
                pol_scratch_give_node(&s->later, nodes[w], e.pod.cpu_milli,
                                      e.pod.host_mem_bytes);
            }
            t = s->steps[k].at > now ? s->steps[k].at : now;
            released = true;
        }
        if (!released || (k + 1 < s->n_steps && s->steps[k + 1].at <= t)) {
            continue; /* release every job ending at t before trying */
        }
        fits = (!counted || room >= h.n_workers) &&
               pol_first_fit(cv, &s->later, &h, s->reserved, s->res_nodes);
        released = false;
    }
    s->n_reserved = fits ? (size_t)h.per_worker * h.n_workers : 0;
    qsort(s->reserved, s->n_reserved, sizeof *s->reserved, by_unit);
    s->shadow = fits ? t : SIM_TIME_MAX;
    s->has_res = true;
}

/* Does placement units[0..n) use a reserved unit? */
static bool uses_reserved(const bf_state *s, const dev_id *units, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s->n_reserved && bsearch(&units[i], s->reserved, s->n_reserved, sizeof *units,
                                     by_unit)) {
            return true;
        }
    }
    return false;
}

/* Start job j (first fit put it in s->units, s->nodes and s->now): decide, leave the queue,
 * become a step of the profile. */
static void place(bf_state *s, const cluster_view *cv, decision_buf *out, const pol_job *j,
                  size_t n)
{
    pol_place_on(out, j->id, s->units, (uint32_t)n, s->nodes, j->n_workers);
    if (j->id == s->head) {
        s->has_res = false; /* a new head gets its own reservation */
    }
    unlink_job(s, j->id);
    s->end_of[j->id] = est_end(j, pol_now(cv)); /* the model starts it now */
    if (s->end_of[j->id] != SIM_TIME_MAX) {
        step_add(s, (ending){s->end_of[j->id], j->id});
    }
    free(s->nodes_of[j->id]);
    s->nodes_of[j->id] = xcalloc(j->n_workers, sizeof(node_id), "backfill nodes");
    memcpy(s->nodes_of[j->id], s->nodes, j->n_workers * sizeof(node_id));
}

/* Job j, behind the head, fits now (first fit in s->units): start it unless it would delay the
 * head's reservation (ends after the shadow time on a reserved unit); then give back what first
 * fit took. */
static bool backfill(bf_state *s, const cluster_view *cv, decision_buf *out, const pol_job *j,
                     size_t n)
{
    if (!s->has_res) { /* made before j takes its units (first fit again: the same ones) */
        s->now.n -= n;
        s->now.n_used -= j->n_workers;
        reserve(s, cv);
        bool again = pol_first_fit(cv, &s->now, j, s->units, s->nodes);
        SIM_ASSERT(again);
    }
    if (est_end(j, pol_now(cv)) > s->shadow && uses_reserved(s, s->units, n)) {
        s->now.n -= n; /* would delay the head: give the units, CPU and memory back */
        s->now.n_used -= j->n_workers;
        return false;
    }
    place(s, cv, out, j, n);
    return true;
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

/* Capacity was given back: start from the head while jobs fit, then a new reservation and the
 * whole queue behind it. */
static void schedule(bf_state *s, const cluster_view *cv, decision_buf *out)
{
    pol_scratch_load(&s->now, cv);
    s->has_res = false;
    while (s->head != BF_NONE) { /* the FIFO part */
        pol_job j;
        pol_job_get(cv, s->head, &j);
        grow_for(s, &j);
        if (!pol_first_fit(cv, &s->now, &j, s->units, s->nodes)) {
            break;
        }
        place(s, cv, out, &j, (size_t)j.per_worker * j.n_workers);
    }
    size_t n_failed = 0;
    for (job_id id = s->head == BF_NONE ? BF_NONE : s->next[s->head]; id != BF_NONE;) {
        job_id after = s->next[id]; /* (id may leave the queue) */
        pol_job j;
        pol_job_get(cv, id, &j);
        grow_for(s, &j);
        if (!failed_before(s, n_failed, &j)) {
            if (pol_first_fit(cv, &s->now, &j, s->units, s->nodes)) {
                backfill(s, cv, out, &j, (size_t)j.per_worker * j.n_workers);
            } else if (n_failed < BF_MEMO) {
                s->failed[n_failed++] = j;
            }
        }
        id = after;
    }
}

/* Job id was given a place, ended or was killed: no longer a step of the profile. */
static void forget(bf_state *s, job_id id)
{
    if (s->nodes_of[id]) {
        if (s->end_of[id] != SIM_TIME_MAX) {
            step_drop(s, (ending){s->end_of[id], id});
        }
        free(s->nodes_of[id]);
        s->nodes_of[id] = NULL;
    }
}

static void bf_on_arrival(void *self, const cluster_view *cv, job_id id, decision_buf *out)
{
    bf_state *s = self;
    setup(s, cv);
    bool was_running = s->nodes_of[id] != NULL; /* a killed job comes back through here */
    forget(s, id);
    push(s, id);
    if (was_running) { /* its units (on nodes that still work) are free again */
        schedule(s, cv, out);
        return;
    }
    /* nothing was given back since the last call, which left the head waiting: only this job
     * can start (as the head of an empty queue, or beside the head's reservation) */
    pol_scratch_load(&s->now, cv);
    pol_job j;
    pol_job_get(cv, id, &j);
    grow_for(s, &j);
    if (!pol_first_fit(cv, &s->now, &j, s->units, s->nodes)) {
        return;
    }
    size_t n = (size_t)j.per_worker * j.n_workers;
    if (s->head == id) {
        place(s, cv, out, &j, n);
    } else {
        backfill(s, cv, out, &j, n);
    }
}

static void bf_on_finish(void *self, const cluster_view *cv, job_id id, decision_buf *out)
{
    bf_state *s = self;
    setup(s, cv);
    forget(s, id);
    schedule(s, cv, out);
}

static void bf_on_capacity(void *self, const cluster_view *cv, decision_buf *out)
{
    setup(self, cv);
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
