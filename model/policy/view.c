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

uint32_t pol_n_devices(const cluster_view *cv)
{
    return cluster_n_devices(cv->c);
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
    out->free = cd->cordoned ? 0 : cd->slots - cd->used;
    out->sms = cd->sms;
    out->mem_bytes = cd->mem_bytes;
    out->mem_used_bytes = cd->mem_used_bytes;
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
