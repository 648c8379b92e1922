/* model/jobrate.c - rates of running jobs under device sharing (see jobrate.h). */
#include "model/jobrate.h"

#include <math.h>
#include <string.h>

#include "sim/xalloc.h"

static const jobrate_profile *find_profile(const jobrate_ctx *rc, const char *name)
{
    for (size_t i = 0; name && i < rc->n_profiles; i++) {
        if (!strcmp(rc->profiles[i].name, name)) {
            return &rc->profiles[i];
        }
    }
    return NULL;
}

/* MIG instances of d's GPU that hold a job (d included). */
static int busy_instances(const cluster *c, const cluster_device *d)
{
    const cluster_gpu *g = cluster_gpu_get(c, d->gpu);
    int n = 0;
    for (dev_id k = g->first_dev; k < g->first_dev + g->n_devs; k++) {
        n += cluster_device_get(c, k)->used > 0;
    }
    return n;
}

/* Rate of a profiled job on device d with its current co-runners, or NAN when the physics
 * cannot say (the speed model reports OOM or an invalid setup). */
static double profiled_rate(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                            const jobrate_profile *jp)
{
    partition_cfg pc;
    partition_cfg_init(&pc, cluster_gpu_get(c, d->gpu)->type);
    pc.mig = d->profile;
    if (d->sharing == CLUSTER_SHARE_MPS) {
        /* an MPS replica is what the job asked for, alone or not: the control daemon caps every
         * client at the default active thread percentage, 100 / replicas */
        pc.sharing = SHARE_MPS;
        pc.mps_percent = (double)(100 / d->slots);
    }
    speed_result alone, now;
    speed_unit_time(jp->p, jp->batch, &pc, rc->phys, &alone);
    if (d->sharing != CLUSTER_SHARE_NONE && d->used >= 2) {
        pc.sharing = d->sharing == CLUSTER_SHARE_MPS ? SHARE_MPS : SHARE_TIMESLICE;
        pc.peers = (int)d->used;
    }
    pc.mig_busy = d->profile ? busy_instances(c, d) : 0;
    speed_unit_time(jp->p, jp->batch, &pc, rc->phys, &now);
    if (alone.outcome != SPEED_OK || now.outcome != SPEED_OK || !(now.unit_time_s > 0)) {
        return (double)NAN;
    }
    return alone.unit_time_s / now.unit_time_s;
}

double jobrate_rate(void *ctx, const cluster *c, const job_table *jobs, job_id id)
{
    const jobrate_ctx *rc = ctx;
    const job *j = job_table_get(jobs, id);
    SIM_ASSERT(j->state == JOB_RUNNING && j->n_units > 0);
    const jobrate_profile *jp = find_profile(rc, j->spec.profile);
    double rate = HUGE_VAL;
    for (uint32_t u = 0; u < j->n_units; u++) {
        const cluster_device *d = cluster_device_get(c, j->units[u]);
        double r = (double)NAN;
        if (jp) {
            r = profiled_rate(rc, c, d, jp);
        }
        if (isnan(r)) {
            /* GPU-bound: round-robin among k contexts gives each eta(k)/k of the device */
            int k = (int)d->used;
            r = d->sharing == CLUSTER_SHARE_TIMESLICE && k >= 2
                    ? speed_eta(cluster_gpu_get(c, d->gpu)->type, rc->phys,
                                jp ? jp->p->ts_class : rc->ts_class, k) /
                          k
                    : 1.0;
        }
        rate = r < rate ? r : rate;
    }
    SIM_ASSERT(rate > 0 && isfinite(rate));
    return rate;
}
