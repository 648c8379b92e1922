/* model/policy/fifo.c - strict first-in first-out scheduling with first-fit placement.
 *
 * Jobs start in submission order. Head-of-line blocking: when the oldest queued job cannot be
 * placed, no later job starts, even one that would fit (that is what distinguishes FIFO from
 * backfilling). There is one queue for every resource: a MIG or CPU-only pod waits behind a
 * whole-GPU job that does not fit, as any later job does. Placement is pol_first_fit: the
 * lowest-numbered node that passes the model's checks (free units on GPUs the pod's gpu_spec
 * allows, the worker's CPU and host memory; found through the free-capacity index), then the
 * node's least-used devices; a CPU-only pod (per_worker 0) the lowest node with its CPU and memory
 * free. So the model accepts every placement (a job may still fail with OOM at start; a job that
 * fails leaves the queue like a started one).
 */
#include <stdlib.h>

#include "model/policy/policy.h"
#include "sim/err.h"
#include "sim/xalloc.h"

typedef struct fifo_state {
    job_id *queue; /* queued jobs in submission order, [head, tail) */
    size_t head, tail, cap;
    pol_scratch scratch;
    dev_id *units; /* placement buffer */
    size_t cap_units;
    node_id *nodes; /* node of each worker */
    size_t cap_nodes;
} fifo_state;

static int fifo_init(void *self, const param_set *params, diag *d)
{
    (void)self;
    return pol_reject_params("fifo", params, d);
}

static void fifo_fini(void *self)
{
    fifo_state *s = self;
    free(s->queue);
    free(s->units);
    free(s->nodes);
    pol_scratch_fini(&s->scratch);
}

static void push(fifo_state *s, job_id j)
{
    if (s->head > 0 && s->tail == s->cap) { /* compact before growing */
        for (size_t i = s->head; i < s->tail; i++) {
            s->queue[i - s->head] = s->queue[i];
        }
        s->tail -= s->head;
        s->head = 0;
    }
    if (s->tail == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->queue = xrealloc(s->queue, s->cap * sizeof(job_id), "fifo queue");
    }
    s->queue[s->tail++] = j;
}

/* Place queued jobs from the head until one does not fit. */
static void schedule(fifo_state *s, const cluster_view *cv, decision_buf *out)
{
    if (s->head == s->tail) {
        return;
    }
    pol_scratch_load(&s->scratch, cv);
    while (s->head < s->tail) {
        pol_job j;
        pol_job_get(cv, s->queue[s->head], &j);
        size_t n = (size_t)j.per_worker * j.n_workers;
        if (n > s->cap_units) {
            s->cap_units = n;
            s->units = xrealloc(s->units, n * sizeof(dev_id), "fifo units");
        }
        if (j.n_workers > s->cap_nodes) {
            s->cap_nodes = j.n_workers;
            s->nodes = xrealloc(s->nodes, j.n_workers * sizeof(node_id), "fifo nodes");
        }
        if (!pol_first_fit(cv, &s->scratch, &j, s->units, s->nodes)) {
            return; /* head-of-line blocking */
        }
        pol_place_on(out, j.id, s->units, (uint32_t)n, s->nodes, j.n_workers);
        s->head++;
    }
}

static void fifo_on_arrival(void *self, const cluster_view *cv, job_id j, decision_buf *out)
{
    fifo_state *s = self;
    push(s, j);
    schedule(s, cv, out);
}

static void fifo_on_finish(void *self, const cluster_view *cv, job_id j, decision_buf *out)
{
    (void)j;
    schedule(self, cv, out);
}

static void fifo_on_capacity(void *self, const cluster_view *cv, decision_buf *out)
{
    schedule(self, cv, out);
}

const policy_ops pol_fifo_ops = {
    .name = "fifo",
    .summary = "first in, first out with head-of-line blocking; first-fit placement",
    .state_size = sizeof(fifo_state),
    .init = fifo_init,
    .fini = fifo_fini,
    .on_arrival = fifo_on_arrival,
    .on_finish = fifo_on_finish,
    .on_capacity = fifo_on_capacity,
};
