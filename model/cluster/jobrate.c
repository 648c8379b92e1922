/* model/cluster/jobrate.c - rates of running jobs under device sharing (see jobrate.h). */
#include "model/cluster/jobrate.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/physics/ddp.h"
#include "model/hw/mig.h"
#include "model/physics/predict.h"
#include "model/physics/share.h"
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

/* The partition of device d as the speed model sees it, alone: sharing mode exclusive or, on
 * MPS, one client capped at 100 / replicas % of the SMs (what the job asked for). */
static void alone_cfg(const cluster *c, const cluster_device *d, partition_cfg *pc)
{
    partition_cfg_init(pc, cluster_gpu_get(c, d->gpu)->type);
    pc->mig = d->profile;
    if (d->sharing == CLUSTER_SHARE_MPS) {
        /* an MPS replica is what the job asked for, alone or not: the control daemon caps every
         * client at the default active thread percentage, 100 / replicas */
        pc->sharing = SHARE_MPS;
        pc->mps_percent = (double)(100 / d->slots);
    }
}

/* Time per unit of work of profile jp alone on device d (see alone_cfg), or NAN when the
 * physics cannot say (OOM or an invalid setup). */
static double alone_unit_time(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                              const jobrate_profile *jp)
{
    partition_cfg pc;
    alone_cfg(c, d, &pc);
    speed_result alone;
    predict_unit_estimate(jp->p, jp->batch, &pc, rc->phys, &alone);
    return alone.outcome == SPEED_OK ? alone.unit_time_s : (double)NAN;
}

/* The partition of device d for a job of profile jp whose co-runners are like it (peers): what
 * it asked for (alone_cfg), its d->used contexts sharing it, and on a MIG GPU its busy
 * instances sharing the power budget. */
static void peers_cfg(const cluster *c, const cluster_device *d, partition_cfg *pc)
{
    alone_cfg(c, d, pc);
    if (d->sharing != CLUSTER_SHARE_NONE && d->used >= 2) {
        pc->sharing = d->sharing == CLUSTER_SHARE_MPS ? SHARE_MPS : SHARE_TIMESLICE;
        pc->peers = (int)d->used;
    }
    pc->mig_busy = d->profile ? busy_instances(c, d) : 0;
}

/* Rate of a profiled job on device d when its co-runners are like it (peers), or NAN when the
 * physics cannot say (the speed model reports OOM or an invalid setup). */
static double profiled_rate(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                            const jobrate_profile *jp)
{
    double t_alone = alone_unit_time(rc, c, d, jp);
    if (isnan(t_alone)) {
        return (double)NAN;
    }
    partition_cfg pc;
    peers_cfg(c, d, &pc);
    speed_result now;
    predict_unit_estimate(jp->p, jp->batch, &pc, rc->phys, &now);
    if (now.outcome != SPEED_OK || !(now.unit_time_s > 0)) {
        return (double)NAN;
    }
    return t_alone / now.unit_time_s;
}

/* The time-slice class of a co-runner class on GPU g: a profile's own; for jobs without a
 * profile, the node's calibration when the GPU has one (the measured back-to-back eta of the
 * physics class with the longest kernel it applied to: an unknown job is taken to be
 * GPU-bound), else the context's default class. */
static int class_ts(const jobrate_ctx *rc, const gpu_type *g, const jobrate_profile *jp)
{
    if (jp) {
        return jp->p->ts_class;
    }
    int best = -1;
    for (int cl = 0; g && cl < rc->phys->n_ts && cl < GPU_MEAS_MAX_TS; cl++) {
        if (g->meas.has_eta[cl] &&
            (best < 0 || rc->phys->ts[cl].kernel_ms > rc->phys->ts[best].kernel_ms)) {
            best = cl;
        }
    }
    return best >= 0 ? best : rc->ts_class;
}

/* Rate of a job with profile jp (NULL: GPU-bound) on device d when every context there is like
 * it: the speed model with k peers, else round-robin's eta(k)/k. */
static double peers_rate(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                         const jobrate_profile *jp)
{
    double r = jp ? profiled_rate(rc, c, d, jp) : (double)NAN;
    if (isnan(r)) {
        /* GPU-bound: round-robin among k contexts gives each eta(k)/k of the device */
        int k = (int)d->used;
        r = d->sharing == CLUSTER_SHARE_TIMESLICE && k >= 2
                ? speed_eta(cluster_gpu_get(c, d->gpu)->type, rc->phys,
                            class_ts(rc, cluster_gpu_get(c, d->gpu)->type, jp), k) / k
                : 1.0;
    }
    return r;
}

/* One class of co-runners on a device: the jobs carrying one profile (NULL: without one, i.e.
 * GPU-bound) and, on a fractional GPU, one milli-GPU share; the contexts (units) they hold
 * there. */
typedef struct corun {
    const jobrate_profile *jp;
    uint32_t milli; /* share of each context on a fractional GPU (pod gpu_milli); else 0 */
    int n;
} corun;

/* Co-runner classes on device dv from the per-GPU index of running jobs: cls[0] is the class
 * of profile `self` with share `milli` (it holds at least one context there; milli 0 unless dv
 * is a fractional GPU). On a fractional GPU every pod is a context and classes are told apart
 * by share too. *total gets the contexts counted, *milli_sum the shares they hold. Returns the
 * number of classes, or 0 when there are more than SHARE_MAX_CLASSES. */
static int corunners(const jobrate_ctx *rc, const world *w, dev_id dv, const jobrate_profile *self,
                     uint32_t milli, corun *cls, uint32_t *total_out, uint32_t *milli_sum)
{
    const cluster *c = world_cluster(w);
    const job_table *jobs = world_jobs(w);
    uint32_t n_on = 0, total = 0;
    const job_id *on = world_gpu_jobs(w, cluster_device_get(c, dv)->gpu, &n_on);
    int n_cls = 1;
    cls[0] = (corun){self, milli, 0};
    bool overflow = false;
    *milli_sum = 0;
    for (uint32_t i = 0; i < n_on; i++) {
        const job *o = job_table_get(jobs, on[i]);
        int units = 0;
        for (uint32_t u = 0; u < o->n_units; u++) {
            units += o->units[u] == dv;
        }
        if (units == 0) {
            continue; /* on another device of the same GPU (a MIG instance) */
        }
        total += (uint32_t)units;
        uint32_t om = milli ? o->spec.pod.gpu_milli : 0;
        *milli_sum += om * (uint32_t)units;
        const jobrate_profile *jp = find_profile(rc, o->spec.profile);
        int k = 0;
        while (k < n_cls && (cls[k].jp != jp || cls[k].milli != om)) {
            k++;
        }
        if (k == n_cls) {
            if (n_cls == SHARE_MAX_CLASSES) {
                overflow = true;
                continue;
            }
            cls[n_cls++] = (corun){jp, om, 0};
        }
        cls[k].n += units;
    }
    SIM_ASSERT((milli ? *milli_sum == cluster_device_get(c, dv)->milli_used
                      : total == cluster_device_get(c, dv)->used) &&
               cls[0].n >= 1);
    *total_out = total;
    return overflow ? 0 : n_cls;
}

/* True when the physics can place profile jp (NULL: none) on device d for a mixed time-slice
 * rate: alone there, and on a MIG GPU with mig_busy > 1 busy instances at the power budget they
 * share, with GPU work to slice. Else the class is GPU-bound. */
static bool ts_placed(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                      const jobrate_profile *jp, int mig_busy)
{
    if (!jp) {
        return false;
    }
    partition_cfg pc;
    speed_result r;
    alone_cfg(c, d, &pc);
    predict_unit_estimate(jp->p, jp->batch, &pc, rc->phys, &r);
    if (r.outcome == SPEED_OK && mig_busy > 1) {
        pc.sharing = SHARE_TIMESLICE;
        pc.mig_busy = mig_busy;
        predict_unit_estimate(jp->p, jp->batch, &pc, rc->phys, &r);
    }
    return r.outcome == SPEED_OK && r.iter_gpu_s > 0;
}

/* The partition of time-sliced device d shared by the mixed classes cls as one context of class
 * cls[0] sees it: cls[0]'s contexts as peers and the other classes as co-runners
 * (partition_cfg.with, with_n). A class without a profile, or whose profile the physics cannot
 * place there (ts_placed), is GPU-bound (with[i] NULL) of its time-slice class (class_ts).
 * Returns whether cls[0]'s own profile is placed (else it is to be predicted without one). */
static bool mixed_ts_cfg(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                         const corun *cls, int n_cls, partition_cfg *pc)
{
    const gpu_type *g = cluster_gpu_get(c, d->gpu)->type;
    int mig_busy = d->profile ? busy_instances(c, d) : 0;
    alone_cfg(c, d, pc);
    pc->sharing = SHARE_TIMESLICE;
    pc->mig_busy = mig_busy;
    pc->peers = cls[0].n;
    pc->n_with = n_cls - 1;
    for (int i = 1; i < n_cls; i++) {
        const jobrate_profile *jp = cls[i].jp;
        bool placed = ts_placed(rc, c, d, jp, mig_busy);
        pc->with[i - 1] = placed ? jp->p : NULL;
        pc->with_batch[i - 1] = placed ? jp->batch : 1.0;
        pc->with_n[i - 1] = cls[i].n;
        pc->with_ts_class[i - 1] = class_ts(rc, g, jp);
        pc->with_share[i - 1] = cls[i].milli / (double)MILLI_PER_GPU;
    }
    pc->ts_class = class_ts(rc, g, cls[0].jp);
    pc->share = cls[0].milli / (double)MILLI_PER_GPU;
    return ts_placed(rc, c, d, cls[0].jp, mig_busy);
}

/* Rate of one context of class cls[0] on time-sliced device d shared by the mixed classes cls
 * (mixed_ts_cfg): a job whose profile is not placed is predicted without one (1 s of GPU work
 * per unit alone, which cancels out of its rate). The rate is the time per unit alone on what
 * the job asked for divided by the time per unit now; NAN when the prediction cannot say. */
static double mixed_ts_rate(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                            const corun *cls, int n_cls)
{
    partition_cfg pc;
    const jobrate_profile *self = cls[0].jp;
    bool placed = mixed_ts_cfg(rc, c, d, cls, n_cls, &pc);
    double t_alone = placed ? alone_unit_time(rc, c, d, self) : 1.0;
    speed_result now;
    predict_unit_estimate(placed ? self->p : NULL, placed ? self->batch : 1.0, &pc, rc->phys,
                          &now);
    if (now.outcome != SPEED_OK || !(now.unit_time_s > 0) || !isfinite(now.unit_time_s)) {
        return (double)NAN;
    }
    return t_alone / now.unit_time_s;
}

/* The partition of MPS device d shared by the mixed classes cls as a client of profile
 * cls[0].jp sees it (every client capped at 100 / replicas % of the SMs): cls[0]'s clients as
 * peers and the other classes as co-runners (partition_cfg.with, with_n). Clients without a
 * profile, or whose profile the physics cannot place there, are counted as clients like the job
 * (MPS needs a profile's SM and bandwidth demand). */
static void mixed_mps_cfg(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                          const corun *cls, int n_cls, partition_cfg *pc)
{
    alone_cfg(c, d, pc);
    pc->peers = cls[0].n;
    for (int i = 1; i < n_cls; i++) {
        const jobrate_profile *jp = cls[i].jp;
        if (jp && !isnan(alone_unit_time(rc, c, d, jp))) {
            pc->with[pc->n_with] = jp->p;
            pc->with_batch[pc->n_with] = jp->batch;
            pc->with_n[pc->n_with++] = cls[i].n;
        } else {
            pc->peers += cls[i].n;
        }
    }
}

/* Rate of one client of profile cls[0].jp on MPS device d shared by the mixed classes cls
 * (mixed_mps_cfg). NAN when the job's own profile cannot be placed or the prediction cannot
 * say. */
static double mixed_mps_rate(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                             const corun *cls, int n_cls)
{
    const jobrate_profile *self = cls[0].jp;
    double t_alone = alone_unit_time(rc, c, d, self);
    if (isnan(t_alone)) {
        return (double)NAN;
    }
    partition_cfg pc;
    mixed_mps_cfg(rc, c, d, cls, n_cls, &pc);
    speed_result now;
    predict_unit_estimate(self->p, self->batch, &pc, rc->phys, &now);
    if (now.outcome != SPEED_OK || !(now.unit_time_s > 0) || !isfinite(now.unit_time_s)) {
        return (double)NAN; /* not converged or out of range */
    }
    return t_alone / now.unit_time_s;
}

/* Rate of a pod holding share `milli` of fractional GPU d with its co-runner classes cls
 * (total contexts, milli_sum their shares; n_cls 0: more classes than the solvers take). Each
 * pod is a time-sliced context guaranteed its share of the GPU's time, work-conserving, and
 * holds its share of the memory (alibaba/clusterdata issue 193; model/physics/share_ts.h). Alone it
 * has the GPU to itself: 1. With a profile somewhere among the pods: the prediction entry point
 * (mixed_ts_rate with the shares). When every pod is GPU-bound (no profile, or one the physics
 * cannot place), or the prediction cannot take the mix: weighted processor sharing of always
 * busy contexts, eta(n) milli / milli_sum, eta the lowest of the classes' (class_ts: the node's
 * time-slice calibration for pods without a profile), which is what the prediction's mean
 * field gives for GPU-bound contexts, without its class limit. */
static double fractional_rate(const jobrate_ctx *rc, const cluster *c, const cluster_device *d,
                              const corun *cls, int n_cls, uint32_t total, uint32_t milli_sum)
{
    if (total <= 1) {
        return 1.0;
    }
    bool profiled = false;
    for (int i = 0; i < n_cls; i++) {
        profiled = profiled || cls[i].jp;
    }
    double r = (double)NAN;
    if (profiled && total <= SHARE_MAX_JOBS) {
        r = mixed_ts_rate(rc, c, d, cls, n_cls);
    }
    if (isnan(r)) {
        const gpu_type *g = cluster_gpu_get(c, d->gpu)->type;
        double eta = HUGE_VAL;
        for (int i = 0; i < (n_cls > 0 ? n_cls : 1); i++) {
            eta = fmin(eta, speed_eta(g, rc->phys, class_ts(rc, g, cls[i].jp), (int)total));
        }
        r = eta * cls[0].milli / milli_sum;
    }
    return r;
}

/* ---- data-parallel gangs ---- */

static int cmp_dev(const void *a, const void *b)
{
    dev_id x = *(const dev_id *)a, y = *(const dev_id *)b;
    return x < y ? -1 : x > y;
}

/* True when job j is a data-parallel gang the communication model can cost. */
static bool is_ddp(const jobrate_ctx *rc, const job *j, const jobrate_profile *jp)
{
    return rc->comm && j->spec.req.n_workers > 1 && jp && jp->p->grad_bytes > 0;
}

/* The ddp_job and ring of gang j as placed: one rank per worker (its first unit), ordered by
 * device id. Returns 0, or -1 when the ring cannot be built (two workers on one whole GPU). */
static int placed_ring(const jobrate_ctx *rc, const cluster *c, const job *j,
                       const jobrate_profile *jp, ddp_job *dj, comm_ring *ring)
{
    uint32_t n = j->spec.req.n_workers, per = j->spec.req.per_worker;
    dev_id *devs = xcalloc(n, sizeof *devs, "gang devices");
    for (uint32_t k = 0; k < n; k++) {
        devs[k] = j->units[k * per];
    }
    qsort(devs, n, sizeof *devs, cmp_dev);
    comm_node *nodes = xcalloc(n, sizeof *nodes, "gang nodes");
    comm_rank *ranks = xcalloc(n, sizeof *ranks, "gang ranks");
    memset(dj, 0, sizeof *dj);
    const cluster_device *d0 = cluster_device_get(c, devs[0]);
    dj->profile = jp->p;
    dj->batch = jp->batch;
    dj->grad_bytes = jp->p->grad_bytes;
    dj->gpu = cluster_gpu_get(c, d0->gpu)->type;
    dj->mig = d0->profile;
    dj->workers = (int)n;
    dj->nic_bytes_per_s = rc->nic_bytes_per_s;
    dj->nics = rc->nics;
    node_id last_node = UINT32_MAX;
    gpu_id last_gpu = UINT32_MAX;
    int n_nodes = 0, on_gpu = 0;
    for (uint32_t k = 0; k < n; k++) {
        const cluster_device *d = cluster_device_get(c, devs[k]);
        if (d->node != last_node) {
            gpu_id first;
            uint32_t count;
            cluster_node_gpus(c, d->node, &first, &count);
            const gpu_type *t = cluster_gpu_get(c, d->gpu)->type;
            const comm_topo *topo =
                rc->node_topo && d->node < rc->n_node_topo ? rc->node_topo[d->node] : NULL;
            nodes[n_nodes] =
                ddp_node(rc->comm, topo, t, (int)count, rc->nic_bytes_per_s, rc->nics);
            if (n_nodes < DDP_MAX_NODES) {
                dj->topology[n_nodes] = 0;
            }
            dj->gpus_per_node = (int)count > dj->gpus_per_node ? (int)count : dj->gpus_per_node;
            n_nodes++;
            last_node = d->node;
        }
        on_gpu = d->gpu == last_gpu ? on_gpu + 1 : 1;
        last_gpu = d->gpu;
        dj->per_gpu = on_gpu > dj->per_gpu ? on_gpu : dj->per_gpu;
        if (n_nodes <= DDP_MAX_NODES) {
            dj->topology[n_nodes - 1]++;
        }
        ranks[k] = (comm_rank){n_nodes - 1, (int)cluster_gpu_get(c, d->gpu)->index,
                               d->profile != NULL};
    }
    dj->n_nodes = n_nodes < DDP_MAX_NODES ? n_nodes : DDP_MAX_NODES;
    char why[256];
    int rc2 = comm_ring_build(rc->comm, nodes, n_nodes, ranks, (int)n, ring, why, sizeof why);
    free(devs);
    free(nodes);
    free(ranks);
    return rc2;
}

/* The partition of gang worker device dv as the sharing physics sees it now for profile jp, by
 * the rules of jobrate_rate's co-runner rates, into *pc. False when the job's own profile cannot
 * be placed there beside its co-runners (a mixed time-sliced device, ts_placed). */
static bool worker_cfg(const jobrate_ctx *rc, const world *w, dev_id dv, const jobrate_profile *jp,
                       partition_cfg *pc)
{
    const cluster *c = world_cluster(w);
    const cluster_device *d = cluster_device_get(c, dv);
    if (d->sharing != CLUSTER_SHARE_NONE && d->used >= 2) {
        corun cls[SHARE_MAX_CLASSES];
        uint32_t total = 0, milli_sum = 0;
        int n_cls = corunners(rc, w, dv, jp, 0, cls, &total, &milli_sum);
        if (n_cls >= 2 && d->sharing == CLUSTER_SHARE_TIMESLICE) {
            return mixed_ts_cfg(rc, c, d, cls, n_cls, pc);
        }
        if (n_cls >= 2) {
            mixed_mps_cfg(rc, c, d, cls, n_cls, pc);
            return true;
        }
    }
    peers_cfg(c, d, pc);
    return true;
}

/* The partition of gang j's slowest worker now (the largest time per unit over its devices,
 * worker_cfg), into *slow. False when a device's physics cannot say. */
static bool slowest_worker(const jobrate_ctx *rc, const world *w, const job *j,
                           const jobrate_profile *jp, partition_cfg *slow)
{
    double worst = -1;
    for (uint32_t u = 0; u < j->n_units; u++) {
        partition_cfg pc;
        speed_result r;
        if (!worker_cfg(rc, w, j->units[u], jp, &pc)) {
            return false;
        }
        predict_unit_estimate(jp->p, jp->batch, &pc, rc->phys, &r);
        if (r.outcome != SPEED_OK || !(r.unit_time_s > 0) || !isfinite(r.unit_time_s)) {
            return false;
        }
        if (r.unit_time_s > worst) {
            worst = r.unit_time_s;
            *slow = pc;
        }
    }
    return worst > 0;
}

/* Rate of gang id: the time of one worker's solo iteration, exclusive on its partition (the
 * whole GPU or MIG instance: an MPS replica's cap is sharing, not what the work is counted on),
 * over the step of model/physics/ddp.h with the slowest worker's sharing (slowest_worker) and the ring's
 * rate under the current link sharing; NAN when the model cannot say. */
static double ddp_rate(const jobrate_ctx *rc, const world *w, job_id id,
                       const jobrate_profile *jp)
{
    const cluster *c = world_cluster(w);
    const job_table *jobs = world_jobs(w);
    const job *j = job_table_get(jobs, id);
    partition_cfg slow;
    if (!slowest_worker(rc, w, j, jp, &slow)) {
        return (double)NAN;
    }
    size_t n_gang = 0;
    const job_id *gang = world_gang_jobs(w, &n_gang);
    comm_ring *rings = xcalloc(n_gang + 1, sizeof *rings, "gang rings");
    const comm_ring **use = xcalloc(n_gang + 1, sizeof *use, "gang ring list");
    double *x = xcalloc(n_gang + 1, sizeof *x, "gang rates");
    size_t n_use = 0, self = SIZE_MAX;
    ddp_job self_job;
    for (size_t i = 0; i < n_gang; i++) {
        const job *o = job_table_get(jobs, gang[i]);
        const jobrate_profile *op = find_profile(rc, o->spec.profile);
        ddp_job dj;
        if (!is_ddp(rc, o, op) || placed_ring(rc, c, o, op, &dj, &rings[n_use]) != 0) {
            comm_ring_fini(&rings[n_use]);
            continue;
        }
        if (gang[i] == id) {
            self = n_use;
            self_job = dj;
        }
        use[n_use] = &rings[n_use];
        n_use++;
    }
    double rate = (double)NAN;
    if (self != SIZE_MAX) {
        comm_share(use, n_use, x);
        self_job.share = &slow;
        ddp_result r;
        ddp_step(&self_job, rc->comm, rc->phys, &rings[self], x[self], &r);
        partition_cfg excl;
        partition_cfg_init(&excl, self_job.gpu);
        excl.mig = self_job.mig;
        speed_result t1;
        predict_unit_estimate(jp->p, jp->batch, &excl, rc->phys, &t1);
        if (r.outcome == SPEED_OK && r.step_s > 0 && t1.outcome == SPEED_OK) {
            rate = t1.unit_time_s * wl_units_per_iter(jp->p, jp->batch) / r.step_s;
        }
    }
    for (size_t i = 0; i < n_use; i++) {
        comm_ring_fini(&rings[i]);
    }
    free(rings);
    free(use);
    free(x);
    return rate;
}

const mig_profile *jobrate_reference(const gpu_type *g)
{
    const mig_profile *best = NULL;
    for (int i = 0; i < g->n_profiles; i++) {
        const mig_profile *p = &g->profiles[i];
        if (mig_profile_is_classic(p) &&
            (!best || p->compute_slices > best->compute_slices ||
             (p->compute_slices == best->compute_slices && p->mem_bytes > best->mem_bytes))) {
            best = p;
        }
    }
    return best;
}

/* Time per unit of profile jp alone on MIG profile p of g, or NAN. */
static double slice_unit_time(const jobrate_ctx *rc, const jobrate_profile *jp, const gpu_type *g,
                              const mig_profile *p)
{
    partition_cfg pc;
    partition_cfg_init(&pc, g);
    pc.mig = p;
    speed_result r;
    predict_unit_estimate(jp->p, jp->batch, &pc, rc->phys, &r);
    return r.outcome == SPEED_OK && r.unit_time_s > 0 ? r.unit_time_s : (double)NAN;
}

double jobrate_slice_speed(void *ctx, const job_spec *js, const gpu_type *g, const mig_profile *p)
{
    const jobrate_ctx *rc = ctx;
    const jobrate_profile *jp = find_profile(rc, js->profile);
    const mig_profile *ref = jobrate_reference(g);
    if (!jp || !ref || !p) {
        return 0;
    }
    double v = slice_unit_time(rc, jp, g, ref) / slice_unit_time(rc, jp, g, p);
    return v > 0 && isfinite(v) ? v : 0;
}

void jobrate_solo_activity(const jobrate_ctx *rc, const cluster *c, const job_spec *js, dev_id d,
                           double *gpu_frac, double *sm_frac)
{
    *gpu_frac = 1.0;
    *sm_frac = 1.0;
    const jobrate_profile *jp = find_profile(rc, js->profile);
    if (!jp) {
        return;
    }
    partition_cfg pc;
    alone_cfg(c, cluster_device_get(c, d), &pc);
    speed_result r;
    predict_unit_estimate(jp->p, jp->batch, &pc, rc->phys, &r);
    int sms = speed_partition_sms(&pc);
    if (r.outcome == SPEED_OK && r.gpu_util >= 0 && r.gpu_util <= 1 && sms > 0) {
        *gpu_frac = r.gpu_util;
        *sm_frac = fmin(1.0, r.sms_used / sms);
    }
}


/* Rate of job j from its devices' co-runners: the slowest device's (a job spread over several
 * devices runs at the pace of its slowest one). */
/* A pod asking for a fraction of a shareable GPU (FGD's gpu_milli) shares it with other
 * fractions; corunner_rate and jobrate_alone both ask. */
static bool unit_fractional(const cluster_device *d, uint32_t milli)
{
    return d->shareable && milli > 0 && milli < MILLI_PER_GPU;
}

static double corunner_rate(const jobrate_ctx *rc, const world *w, const job *j,
                            const jobrate_profile *jp)
{
    const cluster *c = world_cluster(w);
    double rate = HUGE_VAL;
    for (uint32_t u = 0; u < j->n_units; u++) {
        const cluster_device *d = cluster_device_get(c, j->units[u]);
        double r = (double)NAN;
        uint32_t milli = j->spec.pod.gpu_milli;
        if (unit_fractional(d, milli)) {
            corun cls[SHARE_MAX_CLASSES];
            uint32_t total = 0, milli_sum = 0;
            int n_cls = corunners(rc, w, j->units[u], jp, milli, cls, &total, &milli_sum);
            r = fractional_rate(rc, c, d, cls, n_cls, total, milli_sum);
        } else if (d->sharing != CLUSTER_SHARE_NONE && d->used >= 2) {
            corun cls[SHARE_MAX_CLASSES];
            uint32_t total = 0, milli_sum = 0;
            int n_cls = corunners(rc, w, j->units[u], jp, 0, cls, &total, &milli_sum);
            if (n_cls >= 2 && d->sharing == CLUSTER_SHARE_TIMESLICE) {
                r = mixed_ts_rate(rc, c, d, cls, n_cls);
            } else if (n_cls >= 2 && jp) {
                r = mixed_mps_rate(rc, c, d, cls, n_cls);
            }
        }
        if (isnan(r)) {
            /* alone, isolated, every co-runner like it, or a mix the solvers cannot take */
            r = peers_rate(rc, c, d, jp);
        }
        rate = r < rate ? r : rate;
    }
    return rate;
}

bool jobrate_alone(void *ctx, const world *w, job_id id)
{
    const jobrate_ctx *rc = ctx;
    const cluster *c = world_cluster(w);
    const job *j = job_table_get(world_jobs(w), id);
    if (find_profile(rc, j->spec.profile)) {
        return false; /* profiled_rate counts busy MIG instances; DDP shares links */
    }
    uint32_t milli = j->spec.pod.gpu_milli;
    for (uint32_t u = 0; u < j->n_units; u++) { /* corunner_rate's branches, none taken */
        const cluster_device *d = cluster_device_get(c, j->units[u]);
        if (unit_fractional(d, milli) || d->sharing != CLUSTER_SHARE_NONE) {
            return false;
        }
    }
    return true;
}

double jobrate_rate(void *ctx, const world *w, job_id id)
{
    const jobrate_ctx *rc = ctx;
    const cluster *c = world_cluster(w);
    const job *j = job_table_get(world_jobs(w), id);
    SIM_ASSERT(j->state == JOB_RUNNING);
    if (j->n_units == 0) {
        return 1.0; /* a CPU-only pod: no GPU to share */
    }
    const jobrate_profile *jp = find_profile(rc, j->spec.profile);
    /* a gang's step holds its slowest worker's sharing; else (or when the model cannot give
     * the step) the co-runners' rate */
    double rate = is_ddp(rc, j, jp) ? ddp_rate(rc, w, id, jp) : (double)NAN;
    if (isnan(rate)) {
        rate = corunner_rate(rc, w, j, jp);
    }
    if (job_any_slice(&j->spec)) { /* work is stated on the reference profile */
        const cluster_device *d = cluster_device_get(c, j->units[0]);
        double v = jobrate_slice_speed(ctx, &j->spec, cluster_gpu_get(c, d->gpu)->type, d->profile);
        /* the layout policy places it only where v > 0 (pol_job_slice_speed) */
        SIM_ASSERT(v > 0);
        rate *= v;
    }
    SIM_ASSERT(rate > 0 && isfinite(rate));
    return rate;
}
