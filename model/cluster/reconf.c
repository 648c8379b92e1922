/* model/cluster/reconf.c - drain, apply, advertise: dynamic MIG re-partitioning (see reconf.h). */
#include "model/cluster/reconf.h"

#include <stdlib.h>
#include <string.h>

#include "model/hw/mig.h"
#include "sim/err.h"
#include "sim/xalloc.h"

#define TAG_POLICY (1ull << 63)
#define TAG_POKE (1ull << 62) /* run a reacting policy now (repart_ops.reacts) */

typedef enum gstate { G_IDLE, G_DRAINING, G_APPLYING } gstate;

typedef struct rgpu {
    gstate st;
    sim_time t_req, t_idle;
    bool evict;
    uint32_t n_target;
    dev_id target[MIG_MAX_INSTANCES + 1];
} rgpu;

struct reconf {
    world *w;
    reconf_cfg cfg;
    uint32_t client;
    rgpu *g; /* per GPU */
    const repart_ops *pol;
    void *pol_state;
    uint32_t n_draining;
    bool poked; /* a TAG_POKE timer is pending */
    reconf_stats st;
};

/* Run a reacting layout policy at the current time (once, however often it is asked). */
static void poke(reconf *r)
{
    if (r->pol && r->pol->reacts && !r->poked) {
        r->poked = true;
        world_at(r->w, world_now(r->w), r->client, TAG_POKE);
    }
}

/* Units held on GPU g's devices. */
static uint32_t gpu_used(const cluster *c, gpu_id g)
{
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    uint32_t n = 0;
    for (uint32_t k = 0; k < cg->n_devs; k++) {
        n += cluster_device_get(c, cg->first_dev + k)->used;
    }
    return n;
}

/* Is target the current layout of g (same set of active devices)? */
static bool is_current(const cluster *c, gpu_id g, const dev_id *t, uint32_t n)
{
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    uint32_t n_active = 0;
    for (uint32_t k = 0; k < cg->n_devs; k++) {
        n_active += cluster_device_get(c, cg->first_dev + k)->active;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!cluster_device_get(c, t[i])->active) {
            return false;
        }
    }
    return n == n_active;
}

/* The checks of reconf.h on decision d; true when it may start. */
static bool valid(const reconf *r, const pol_decision *d)
{
    const cluster *c = world_cluster(r->w);
    if (d->gpu >= cluster_n_gpus(c) || d->n_units == 0 || d->n_units > MIG_MAX_INSTANCES) {
        return false;
    }
    const cluster_gpu *cg = cluster_gpu_get(c, d->gpu);
    if (!cg->reconfigurable || r->g[d->gpu].st != G_IDLE) {
        return false;
    }
    mig_instance inst[MIG_MAX_INSTANCES];
    int n_mig = 0;
    bool whole = false;
    for (uint32_t i = 0; i < d->n_units; i++) {
        dev_id dv = d->units[i];
        if (dv < cg->first_dev || dv >= cg->first_dev + cg->n_devs) {
            return false;
        }
        for (uint32_t k = 0; k < i; k++) {
            if (d->units[k] == dv) {
                return false;
            }
        }
        const cluster_device *cd = cluster_device_get(c, dv);
        if (!cd->profile) {
            whole = true;
            continue;
        }
        inst[n_mig++] = (mig_instance){(int)(cd->profile - cg->type->profiles), cd->mig_start};
    }
    if (whole && d->n_units != 1) {
        return false;
    }
    if (!whole && mig_check(cg->type, 0, inst, n_mig, NULL) != MIG_OK) {
        return false;
    }
    return !is_current(c, d->gpu, d->units, d->n_units);
}

/* GPU g holds no pod: schedule the new layout. */
static void start_apply(reconf *r, gpu_id g)
{
    rgpu *rg = &r->g[g];
    const cluster *c = world_cluster(r->w);
    sim_time now = world_now(r->w);
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    const cluster_device *first = cluster_device_get(c, rg->target[0]);
    bool to_mig = first->profile != NULL;
    bool to_ts = first->sharing == CLUSTER_SHARE_TIMESLICE;
    bool from_ts = cg->sharing == CLUSTER_SHARE_TIMESLICE;
    double t = r->cfg.delay_s;
    if (to_mig != cg->mig_enabled) {
        t += r->cfg.reset_s;
        r->st.n_mode_changes++;
    } else if (!to_mig) { /* whole <-> time-sliced: the device plugin's restart only */
        t = r->cfg.restart_s;
    }
    r->st.n_timeslice_on += to_ts && !from_ts;
    r->st.n_timeslice_off += from_ts && !to_ts;
    rg->st = G_APPLYING;
    rg->t_idle = now;
    r->n_draining--;
    r->st.drain_gpu_s += sim_time_to_s(now - rg->t_req);
    r->st.apply_gpu_s += t;
    world_at(r->w, now + sim_time_from_s(t), r->client, g);
}

/* The delay is over: withdraw the old devices, advertise the new ones. */
static void finish_apply(reconf *r, gpu_id g)
{
    rgpu *rg = &r->g[g];
    const cluster *c = world_cluster(r->w);
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    SIM_ASSERT(rg->st == G_APPLYING && gpu_used(c, g) == 0);
    for (uint32_t k = 0; k < cg->n_devs; k++) {
        dev_id d = cg->first_dev + k;
        if (cluster_device_get(c, d)->active) {
            world_set_cordoned(r->w, d, false);
            world_set_active(r->w, d, false);
        }
    }
    for (uint32_t i = 0; i < rg->n_target; i++) {
        world_set_active(r->w, rg->target[i], true);
    }
    world_set_mig_mode(r->w, g, cluster_device_get(c, rg->target[0])->profile != NULL);
    rg->st = G_IDLE;
    r->st.n_applied++;
    world_settle(r->w);
    poke(r);
}

static bool on_reconfigure(world *w, void *ctx, const pol_decision *d)
{
    reconf *r = ctx;
    if (!valid(r, d)) {
        r->st.n_rejected++;
        return false;
    }
    r->st.n_requested++;
    const cluster *c = world_cluster(w);
    const cluster_gpu *cg = cluster_gpu_get(c, d->gpu);
    rgpu *rg = &r->g[d->gpu];
    rg->st = G_DRAINING;
    r->n_draining++;
    rg->t_req = world_now(w);
    rg->evict = d->evict;
    rg->n_target = d->n_units;
    memcpy(rg->target, d->units, d->n_units * sizeof(dev_id));
    for (uint32_t k = 0; k < cg->n_devs; k++) {
        if (cluster_device_get(c, cg->first_dev + k)->active) {
            world_set_cordoned(w, cg->first_dev + k, true);
        }
    }
    if (d->evict) { /* kill in id order (the GPU's index is unordered) */
        uint32_t n;
        const job_id *on = world_gpu_jobs(w, d->gpu, &n);
        while (n > 0) {
            job_id first = on[0];
            for (uint32_t i = 1; i < n; i++) {
                first = on[i] < first ? on[i] : first;
            }
            const job *j = job_table_get(world_jobs(w), first);
            double share = 0;
            for (uint32_t u = 0; u < j->n_units; u++) {
                share += cluster_unit_gpu_share(c, j->units[u]);
            }
            world_kill_info info;
            world_kill(w, first, &info);
            r->st.n_evicted++;
            r->st.evicted_gpu_s += info.lost_wall_s * share;
            on = world_gpu_jobs(w, d->gpu, &n);
        }
    }
    if (rg->st == G_DRAINING && gpu_used(c, d->gpu) == 0) { /* the observer may have seen the
                                                             * last eviction already */
        start_apply(r, d->gpu);
    }
    return true;
}

/* A pod ended or was killed: a draining GPU may now be idle. */
static void on_job(world *w, void *ctx, job_id j, world_job_event ev)
{
    (void)j;
    reconf *r = ctx;
    if (ev != WORLD_JOB_STARTED) {
        poke(r);
    }
    if (ev == WORLD_JOB_STARTED || r->n_draining == 0) {
        return;
    }
    const cluster *c = world_cluster(w);
    for (gpu_id g = 0; g < cluster_n_gpus(c); g++) {
        if (r->g[g].st == G_DRAINING && gpu_used(c, g) == 0) {
            start_apply(r, g);
        }
    }
}

/* A job asking for any MIG slice was queued: the reacting policy places it. */
static void on_slice(world *w, void *ctx, job_id j)
{
    (void)w;
    (void)j;
    poke(ctx);
}

static void on_timer(world *w, void *ctx, uint64_t tag)
{
    reconf *r = ctx;
    if (tag & TAG_POKE) {
        r->poked = false;
        r->pol->decide(r->pol_state, world_view(w), world_decisions(w));
        world_settle(w);
        return;
    }
    if (tag & TAG_POLICY) {
        r->pol->decide(r->pol_state, world_view(w), world_decisions(w));
        world_settle(w);
        world_at(w, world_now(w) + sim_time_from_s(r->cfg.interval_s), r->client, TAG_POLICY);
        return;
    }
    finish_apply(r, (gpu_id)tag);
}

int reconf_create(world *w, const reconf_cfg *cfg, diag *d, reconf **out)
{
    reconf *r = xcalloc(1, sizeof *r, "reconf");
    r->w = w;
    r->cfg = *cfg;
    r->cfg.params = NULL;
    r->g = xcalloc(cluster_n_gpus(world_cluster(w)) + 1, sizeof *r->g, "reconf gpus");
    r->pol = cfg->policy;
    if (r->pol) {
        r->pol_state = xcalloc(1, r->pol->state_size ? r->pol->state_size : 1, "repart state");
        if (r->pol->init && r->pol->init(r->pol_state, cfg->params, d) != 0) {
            free(r->pol_state);
            r->pol_state = NULL;
            r->pol = NULL;
            reconf_destroy(r);
            return SIM_EINPUT;
        }
    }
    r->client = world_timer_client(w, on_timer, r);
    world_observe(w, on_job, r);
    world_set_reconfigure_handler(w, on_reconfigure, r);
    if (r->pol && r->pol->reacts) {
        world_set_slice_handler(w, on_slice, r);
    }
    if (r->pol) {
        SIM_ASSERT(cfg->interval_s > 0);
        world_at(w, world_now(w) + sim_time_from_s(cfg->interval_s), r->client, TAG_POLICY);
    }
    *out = r;
    return 0;
}

void reconf_destroy(reconf *r)
{
    if (!r) {
        return;
    }
    if (r->pol && r->pol->fini) {
        r->pol->fini(r->pol_state);
    }
    free(r->pol_state);
    free(r->g);
    free(r);
}

reconf_stats reconf_get_stats(const reconf *r)
{
    return r->st;
}
