#include "model/cluster/job.h"

#include <stdlib.h>
#include <string.h>

#include "sim/xalloc.h"

struct job_table {
    job *jobs;
    size_t n, cap;
};

job_table *job_table_create(void)
{
    return xcalloc(1, sizeof(job_table), "job table");
}

void job_table_destroy(job_table *t)
{
    if (!t) {
        return;
    }
    for (size_t i = 0; i < t->n; i++) {
        free(t->jobs[i].units);
    }
    free(t->jobs);
    free(t);
}

job_id job_table_add(job_table *t, const job_spec *spec)
{
    SIM_ASSERT(spec->req.n_workers >= 1 && spec->work_s > 0); /* per_worker 0: CPU-only */
    SIM_ASSERT(t->n < UINT32_MAX);
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->jobs = xrealloc(t->jobs, t->cap * sizeof(job), "job table");
    }
    job *j = &t->jobs[t->n];
    memset(j, 0, sizeof *j);
    j->id = (job_id)t->n;
    j->spec = *spec;
    j->state = JOB_PENDING;
    j->start = -1;
    j->run_start = -1;
    j->end = -1;
    return (job_id)t->n++;
}

size_t job_table_count(const job_table *t)
{
    return t->n;
}

const job *job_table_get(const job_table *t, job_id id)
{
    SIM_ASSERT(id < t->n);
    return &t->jobs[id];
}

static job *get_mut(job_table *t, job_id id)
{
    SIM_ASSERT(id < t->n);
    return &t->jobs[id];
}

uint32_t job_units(const job_spec *s)
{
    return s->req.per_worker * s->req.n_workers;
}

bool job_any_slice(const job_spec *s)
{
    return s->req.resource && !strcmp(s->req.resource, JOB_RES_MIG_ANY);
}

bool job_pod_admits(const job_pod *p, node_id n, const taint_node *meta)
{
    if (p->node_pin) { /* spec.nodeName bypasses the scheduler: its node, whatever its taints */
        return n == p->node_pin - 1;
    }
    return (!meta && !p->place) || taint_admits(meta, p->place);
}

void job_submit_early(job_table *t, job_id id, sim_time now)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_PENDING && now <= j->spec.submit);
    j->spec.submit = now;
    j->state = JOB_QUEUED;
}

void job_submit(job_table *t, job_id id, sim_time now)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_PENDING && now == j->spec.submit);
    j->state = JOB_QUEUED;
}

static void set_units(job *j, const dev_id *units, uint32_t n_units)
{
    SIM_ASSERT(n_units == job_units(&j->spec) && j->units == NULL);
    if (n_units > 0) { /* a CPU-only pod holds no unit */
        j->units = xcalloc(n_units, sizeof(dev_id), "job placement");
        memcpy(j->units, units, n_units * sizeof(dev_id));
    }
    j->n_units = n_units;
}

void job_start(job_table *t, job_id id, sim_time now, const dev_id *units, uint32_t n_units)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_QUEUED && now >= j->spec.submit);
    set_units(j, units, n_units);
    j->state = JOB_RUNNING;
    j->run_start = now;
    if (j->start < 0) {
        j->start = now;
    }
}

void job_requeue(job_table *t, job_id id, sim_time now, double done_s)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_RUNNING && now >= j->start);
    SIM_ASSERT(done_s >= 0 && done_s <= j->spec.work_s);
    free(j->units);
    j->units = NULL;
    j->n_units = 0;
    j->done_s = done_s;
    j->n_restarts++;
    j->state = JOB_QUEUED;
}

void job_finish(job_table *t, job_id id, sim_time now)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_RUNNING && now >= j->start);
    j->state = JOB_DONE;
    j->end = now;
}

void job_note_preempted(job_table *t, job_id id)
{
    get_mut(t, id)->n_preempted++;
}

/* QUEUED -> a failed state at `now` on the devices it was given. */
static void fail_at(job_table *t, job_id id, job_state s, sim_time now, const dev_id *units,
                    uint32_t n_units)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_QUEUED && now >= j->spec.submit);
    set_units(j, units, n_units);
    j->state = s;
    j->start = now;
    j->end = now;
}

void job_fail_oom(job_table *t, job_id id, sim_time now, const dev_id *units, uint32_t n_units)
{
    fail_at(t, id, JOB_FAILED_OOM, now, units, n_units);
}

void job_fail_request(job_table *t, job_id id, sim_time now, const dev_id *units, uint32_t n_units)
{
    fail_at(t, id, JOB_FAILED_REQUEST, now, units, n_units);
}

sim_time job_wait_ns(const job *j)
{
    return j->start < 0 ? -1 : j->start - j->spec.submit;
}

sim_time job_jct_ns(const job *j)
{
    return j->end < 0 ? -1 : j->end - j->spec.submit;
}

const char *job_state_name(job_state s)
{
    switch (s) {
    case JOB_PENDING:
        return "pending";
    case JOB_QUEUED:
        return "queued";
    case JOB_RUNNING:
        return "running";
    case JOB_DONE:
        return "done";
    case JOB_FAILED_OOM:
        return "failed_oom";
    case JOB_FAILED_REQUEST:
        return "failed_request";
    }
    return "unknown";
}
