/* model/jobrate.c - rates of running jobs under device sharing (see jobrate.h). */
#include "model/jobrate.h"

#include "sim/xalloc.h"

double jobrate_rate(void *ctx, const cluster *c, const job_table *jobs, job_id id)
{
    const jobrate_ctx *rc = ctx;
    const job *j = job_table_get(jobs, id);
    SIM_ASSERT(j->state == JOB_RUNNING && j->n_units > 0);
    double rate = 1.0;
    for (uint32_t u = 0; u < j->n_units; u++) {
        const cluster_device *d = cluster_device_get(c, j->units[u]);
        if (d->sharing != CLUSTER_SHARE_TIMESLICE || d->used < 2) {
            continue;
        }
        /* round-robin among k contexts: each gets eta(k)/k of the device */
        int k = (int)d->used;
        double r = phys_eta(rc->phys, rc->ts_class, k) / k;
        rate = r < rate ? r : rate;
    }
    return rate;
}
