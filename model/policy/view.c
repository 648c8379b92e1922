/* model/policy/view.c - the read-only view accessors of policy.h over the model's state. */
#include "model/policy/view.h"

#include "sim/xalloc.h"

sim_time pol_now(const cluster_view *cv)
{
    return cv->now;
}

uint32_t pol_n_nodes(const cluster_view *cv)
{
    return cluster_n_nodes(cv->c);
}

void pol_node_devices(const cluster_view *cv, node_id n, dev_id *first, uint32_t *count)
{
    cluster_node_devices(cv->c, n, first, count);
}

void pol_device_get(const cluster_view *cv, dev_id d, pol_device *out)
{
    const cluster_device *cd = cluster_device_get(cv->c, d);
    out->id = d;
    out->node = cd->node;
    out->gpu = cd->gpu;
    out->resource = cd->resource;
    out->resource_name = cluster_resource_name(cv->c, cd->resource);
    out->profile = cd->profile ? cd->profile->name : NULL;
    out->slots = cd->slots;
    out->free = cd->cordoned || !cd->active ? 0 : cd->slots - cd->used;
    out->active = cd->active;
    out->cordoned = cd->cordoned;
    out->used = cd->used;
    out->mig_start = cd->mig_start;
    out->sms = cd->sms;
    out->mem_bytes = cd->mem_bytes;
    out->mem_used_bytes = cd->mem_used_bytes;
}

res_id pol_device_resource(const cluster_view *cv, dev_id d)
{
    return cluster_device_resource(cv->c, d);
}

void pol_job_get(const cluster_view *cv, job_id id, pol_job *out)
{
    const job *j = job_table_get(cv->jobs, id);
    out->id = id;
    out->class_name = j->spec.class_name;
    out->resource = j->spec.req.resource;
    out->per_worker = j->spec.req.per_worker;
    out->n_workers = j->spec.req.n_workers;
    out->mem_bytes = j->spec.mem_bytes;
    out->work_s = j->spec.work_s;
    out->submit = j->spec.submit;
    out->done_s = j->done_s;
    out->run_start = j->state == JOB_RUNNING ? j->run_start : -1;
    out->pod = j->spec.pod;
}

uint32_t pol_node_free(const cluster_view *cv, node_id n, res_id r)
{
    return cluster_free(cv->c, n, r);
}

bool pol_resource_find(const cluster_view *cv, const char *name, res_id *out)
{
    return cluster_resource_find(cv->c, name, out);
}

uint32_t pol_n_jobs(const cluster_view *cv)
{
    return (uint32_t)job_table_count(cv->jobs);
}

double pol_job_slice_speed(const cluster_view *cv, job_id j, gpu_id g, int p)
{
    const gpu_type *t = cluster_gpu_get(cv->c, g)->type;
    const job *jb = job_table_get(cv->jobs, j);
    if (!cv->slice_speed || p < 0 || p >= t->n_profiles ||
        jb->spec.mem_bytes > t->profiles[p].mem_bytes) {
        return 0;
    }
    double v = cv->slice_speed(cv->slice_ctx, &jb->spec, t, &t->profiles[p]);
    return v > 0 ? v : 0;
}

uint32_t pol_n_gpus(const cluster_view *cv)
{
    return cluster_n_gpus(cv->c);
}

const gpu_type *pol_gpu_type(const cluster_view *cv, gpu_id g)
{
    return cluster_gpu_get(cv->c, g)->type;
}

bool pol_gpu_reconfigurable(const cluster_view *cv, gpu_id g)
{
    return cluster_gpu_get(cv->c, g)->reconfigurable;
}

bool pol_job_queued(const cluster_view *cv, job_id j)
{
    return job_table_get(cv->jobs, j)->state == JOB_QUEUED;
}

uint64_t pol_seed(const cluster_view *cv)
{
    return cv->seed;
}

void pol_node_gpus(const cluster_view *cv, node_id n, gpu_id *first, uint32_t *count)
{
    cluster_node_gpus(cv->c, n, first, count);
}

void pol_gpu_get(const cluster_view *cv, gpu_id g, pol_gpu *out)
{
    const cluster_gpu *cg = cluster_gpu_get(cv->c, g);
    const cluster_device *first = cluster_device_get(cv->c, cg->first_dev);
    out->id = g;
    out->node = cg->node;
    out->type_name = cg->label ? cg->label : cg->type->name;
    out->first_dev = cg->first_dev;
    out->n_devs = cg->n_devs;
    out->shareable = cg->n_devs == 1 && first->shareable;
    if (out->shareable) {
        out->milli_free = cluster_share_free(cv->c, cg->first_dev);
    } else {
        bool idle = true;
        for (dev_id d = cg->first_dev; d < cg->first_dev + cg->n_devs && idle; d++) {
            idle = cluster_device_get(cv->c, d)->used == 0;
        }
        out->milli_free = idle ? MILLI_PER_GPU : 0;
    }
}

uint64_t pol_node_cpu_capacity(const cluster_view *cv, node_id n)
{
    return cluster_node_cpu_capacity(cv->c, n);
}

uint64_t pol_node_cpu_free(const cluster_view *cv, node_id n)
{
    return cluster_node_cpu_free(cv->c, n);
}

uint64_t pol_node_mem_capacity(const cluster_view *cv, node_id n)
{
    return cluster_node_mem_capacity(cv->c, n);
}

uint64_t pol_node_mem_free(const cluster_view *cv, node_id n)
{
    return cluster_node_mem_free(cv->c, n);
}

uint64_t pol_node_version(const cluster_view *cv, node_id n)
{
    return cluster_node_version(cv->c, n);
}

node_id pol_next_node(const cluster_view *cv, res_id r, uint32_t k, node_id from)
{
    return cluster_next_node(cv->c, r, k, from);
}

node_id pol_next_node_share(const cluster_view *cv, uint32_t milli, node_id from)
{
    return cluster_next_node_share(cv->c, milli, from);
}

uint32_t pol_n_classes(const cluster_view *cv)
{
    return cluster_n_classes(cv->c);
}

uint32_t pol_node_class(const cluster_view *cv, node_id n)
{
    return cluster_node_class(cv->c, n);
}

bool pol_node_idle(const cluster_view *cv, node_id n)
{
    return cluster_node_idle(cv->c, n);
}

uint64_t pol_idle_seq(const cluster_view *cv)
{
    return cluster_idle_seq(cv->c);
}

bool pol_idle_changed(const cluster_view *cv, uint64_t i, node_id *n)
{
    return cluster_idle_changed(cv->c, i, n);
}

node_id pol_next_busy_node(const cluster_view *cv, res_id r, uint32_t k, node_id from)
{
    return cluster_next_busy_node(cv->c, r, k, from);
}

node_id pol_next_busy_node_share(const cluster_view *cv, uint32_t milli, node_id from)
{
    return cluster_next_busy_node_share(cv->c, milli, from);
}

node_id pol_next_busy(const cluster_view *cv, node_id from)
{
    return cluster_next_busy(cv->c, from);
}

uint32_t pol_job_placement(const cluster_view *cv, job_id id, const dev_id **units, bool *running)
{
    const job *j = job_table_get(cv->jobs, id);
    *running = j->state == JOB_RUNNING;
    *units = *running ? j->units : NULL;
    return *running ? j->n_units : 0;
}

bool pol_node_admits(const cluster_view *cv, const pol_job *j, node_id n)
{
    return job_pod_admits(&j->pod, n, cluster_node_meta(cv->c, n));
}

uint32_t pol_node_prefer_penalty(const cluster_view *cv, const pol_job *j, node_id n)
{
    return taint_prefer_count(cluster_node_meta(cv->c, n), j->pod.place);
}
