/* model/policy/repart_demand.c - the demand-driven re-partitioner: give reconfigurable GPUs the
 * layout (from the valid maximal classic layouts `slicesim layouts` lists, or MIG off) that best
 * matches the queued and running requests, with hysteresis.
 *
 * Demand: units of `nvidia.com/mig-<profile>`, `nvidia.com/gpu` and `nvidia.com/gpu.shared` (the
 * replicas of a time-sliced GPU) asked for by queued jobs and by jobs running on reconfigurable
 * GPUs. Supply: the active devices of reconfigurable GPUs that
 * are not being drained. For one GPU g, the demand left to it is what the other GPUs do not
 * supply, r_p = max(0, demand_p - (supply_p - on_g_p)); a layout L serves
 * score(L) = sum_p min(count_L(p), r_p) x compute slices of p (a whole GPU serves one
 * nvidia.com/gpu unit worth all the GPU's compute slices; a GPU with a time-sliced candidate of N
 * replicas (model/cluster/cluster.h ts_replicas) may instead serve N nvidia.com/gpu.shared units, each
 * worth 1/N of them): compute slices of demand served. So GPUs turn time-sliced while requests
 * for replicas wait that the other GPUs do not serve, and back to MIG or whole when they stop.
 * The best layout (ties: the enumeration's order, then whole GPU, then time-sliced) replaces
 * g's current one
 * when it serves at least `min_gain` more compute slices (hysteresis), g has not been
 * reconfigured in the last `hold_s` seconds, and fewer than `max_concurrent` GPUs are being
 * reconfigured. GPUs with the fewest running pods are considered first, so idle ones are
 * re-laid out without a drain. Reconfiguration cost is counted by the model (model/cluster/reconf.h);
 * the policy weighs it only through min_gain and hold_s. `evict: 1` evicts the pods of a GPU
 * it reconfigures instead of waiting for them.
 * Parameters (policy params, plain numbers): min_gain (compute slices, default 1), hold_s
 * (seconds, default 600), max_concurrent (default 1), evict (0 or 1, default 0).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/hw/mig.h"
#include "model/policy/repart.h"
#include "sim/err.h"
#include "sim/xalloc.h"

typedef struct demand_state {
    double min_gain, hold_s, max_concurrent;
    bool evict;
    repart_layouts layouts;
    sim_time *last; /* per GPU: last reconfiguration asked, or -1 */
    uint32_t n_gpus;
    double *demand, *supply; /* per profile index, [WHOLE] whole GPUs, [TS] replicas */
    double ts_replicas;      /* replicas of the pool's time-sliced candidates; 0: none */
} demand_state;

#define WHOLE GPU_MAX_PROFILES
#define TS (GPU_MAX_PROFILES + 1) /* a replica of a time-sliced whole GPU */
#define RES_WHOLE "nvidia.com/gpu"
#define RES_SHARED "nvidia.com/gpu.shared" /* renameByDefault */

/* ---- parameters ---------------------------------------------------------------------------- */

static int demand_init(void *self, const param_set *params, diag *d)
{
    demand_state *s = self;
    s->min_gain = 1;
    s->hold_s = 600;
    s->max_concurrent = 1;
    static const repart_key keys[] = {
        {"min_gain", 0, 1e9, offsetof(demand_state, min_gain), false},
        {"hold_s", 0, 1e12, offsetof(demand_state, hold_s), false},
        {"max_concurrent", 1, 1e9, offsetof(demand_state, max_concurrent), false},
        {"evict", 0, 1, offsetof(demand_state, evict), true},
    };
    return repart_params(params, keys, sizeof keys / sizeof keys[0], s, d);
}

static void demand_fini(void *self)
{
    demand_state *s = self;
    repart_layouts_fini(&s->layouts);
    free(s->last);
    free(s->demand);
    free(s->supply);
}

/* ---- layouts ------------------------------------------------------------------------------- */

/* Profile index of a resource name on type g ("nvidia.com/mig-<name>"), WHOLE for
 * "nvidia.com/gpu", TS for "nvidia.com/gpu.shared", -1 otherwise. */
static int profile_of(const gpu_type *g, const char *res)
{
    if (!strcmp(res, RES_WHOLE)) {
        return WHOLE;
    }
    if (!strcmp(res, RES_SHARED)) {
        return TS;
    }
    static const char pre[] = "nvidia.com/mig-";
    if (strncmp(res, pre, sizeof pre - 1) != 0) {
        return -1;
    }
    for (int p = 0; p < g->n_profiles; p++) {
        if (mig_profile_is_classic(&g->profiles[p]) &&
            !strcmp(g->profiles[p].name, res + sizeof pre - 1)) {
            return p;
        }
    }
    return -1;
}

/* ---- deciding ------------------------------------------------------------------------------ */

typedef struct gpu_info {
    gpu_id g;
    uint32_t running;   /* units held */
    bool busy;          /* being drained or reconfigured */
    double on[TS + 1];  /* active units per profile (WHOLE: MIG off; TS: replicas) */
    dev_id ts_dev;      /* its time-sliced candidate */
    double ts_replicas; /* and that candidate's replicas; 0 when it has none */
} gpu_info;

static void gpu_read(const cluster_view *cv, gpu_id g, gpu_info *gi)
{
    memset(gi, 0, sizeof *gi);
    gi->g = g;
    const gpu_type *t = pol_gpu_type(cv, g);
    pol_gpu pg;
    pol_gpu_get(cv, g, &pg);
    for (uint32_t k = 0; k < pg.n_devs; k++) {
        pol_device pd;
        pol_device_get(cv, pg.first_dev + k, &pd);
        int p = profile_of(t, pd.resource_name);
        if (p == TS) {
            gi->ts_dev = pd.id;
            gi->ts_replicas = pd.slots;
        }
        if (!pd.active) {
            continue;
        }
        gi->busy |= pd.cordoned;
        gi->running += pd.used;
        if (p >= 0) {
            gi->on[p] += p == TS ? pd.slots : 1;
        }
    }
}

/* Compute slices of one unit of p (a replica of a time-sliced GPU: 1/n_ts of the GPU's). */
static double slices(const gpu_type *t, int p, double n_ts)
{
    return p == TS      ? (n_ts > 0 ? t->compute_slices / n_ts : 0)
           : p == WHOLE ? t->compute_slices
                        : t->profiles[p].compute_slices;
}

/* Compute slices of the remaining demand r[] that a layout serves. */
static double score(const gpu_type *t, const double *count, const double *r, double n_ts)
{
    double sc = 0;
    for (int p = 0; p <= TS; p++) {
        if (count[p] > 0 && r[p] > 0) {
            sc += fmin(count[p], r[p]) * slices(t, p, n_ts);
        }
    }
    return sc;
}

static int by_running(const void *a, const void *b)
{
    const gpu_info *x = a, *y = b;
    if (x->running != y->running) {
        return x->running < y->running ? -1 : 1;
    }
    return (x->g > y->g) - (x->g < y->g);
}

static void demand_decide(void *self, const cluster_view *cv, decision_buf *out)
{
    demand_state *s = self;
    uint32_t n_gpus = pol_n_gpus(cv);
    if (!s->last) {
        s->n_gpus = n_gpus;
        s->last = xcalloc(n_gpus + 1, sizeof *s->last, "repart last");
        for (uint32_t g = 0; g < n_gpus; g++) {
            s->last[g] = -1;
        }
        s->demand = xcalloc(TS + 1, sizeof(double), "repart demand");
        s->supply = xcalloc(TS + 1, sizeof(double), "repart supply");
    }
    gpu_info *gi = xcalloc(n_gpus + 1, sizeof *gi, "repart gpus");
    uint32_t n = 0, in_progress = 0;
    const gpu_type *type = NULL;
    for (gpu_id g = 0; g < n_gpus; g++) {
        if (!pol_gpu_reconfigurable(cv, g)) {
            continue;
        }
        /* one GPU type per pool: the first reconfigurable GPU's */
        type = type ? type : pol_gpu_type(cv, g);
        if (pol_gpu_type(cv, g) != type) {
            continue;
        }
        gpu_read(cv, g, &gi[n]);
        in_progress += gi[n].busy;
        s->ts_replicas = gi[n].ts_replicas > 0 ? gi[n].ts_replicas : s->ts_replicas;
        n++;
    }
    if (n == 0 || in_progress >= s->max_concurrent) {
        free(gi);
        return;
    }
    memset(s->demand, 0, (TS + 1) * sizeof(double));
    memset(s->supply, 0, (TS + 1) * sizeof(double));
    for (job_id j = 0; j < pol_n_jobs(cv); j++) {
        if (!pol_job_queued(cv, j)) {
            continue;
        }
        pol_job pj;
        pol_job_get(cv, j, &pj);
        int p = profile_of(type, pj.resource);
        if (p >= 0) {
            s->demand[p] += (double)pj.per_worker * pj.n_workers;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        for (int p = 0; p <= TS && !gi[i].busy; p++) {
            s->supply[p] += gi[i].on[p];
        }
    }
    /* pods running on the pool (outside a drain) are demand their devices already serve */
    for (uint32_t i = 0; i < n; i++) {
        if (gi[i].busy) {
            continue;
        }
        pol_gpu pg;
        pol_gpu_get(cv, gi[i].g, &pg);
        for (uint32_t k = 0; k < pg.n_devs; k++) {
            pol_device pd;
            pol_device_get(cv, pg.first_dev + k, &pd);
            int p = profile_of(type, pd.resource_name);
            if (pd.active && p >= 0) {
                s->demand[p] += pd.used;
            }
        }
    }
    qsort(gi, n, sizeof *gi, by_running);
    int n_layouts;
    const mig_layout *layouts = repart_layouts_of(&s->layouts, type, &n_layouts);
    sim_time now = pol_now(cv);
    for (uint32_t i = 0; i < n && in_progress < s->max_concurrent; i++) {
        gpu_info *x = &gi[i];
        if (x->busy || (s->last[x->g] >= 0 && sim_time_to_s(now - s->last[x->g]) < s->hold_s)) {
            continue;
        }
        double r[TS + 1];
        for (int p = 0; p <= TS; p++) {
            r[p] = fmax(0, s->demand[p] - (s->supply[p] - x->on[p]));
        }
        double n_ts = s->ts_replicas;
        double cur = score(type, x->on, r, n_ts), best = cur;
        int best_l = -2; /* -2: keep, -1: whole GPU, -3: time-sliced, >= 0: layout index */
        for (int li = 0; li < n_layouts; li++) {
            double count[TS + 1] = {0};
            for (int m = 0; m < layouts[li].n; m++) {
                count[layouts[li].inst[m].profile] += 1;
            }
            double sc = score(type, count, r, n_ts);
            if (sc > best) {
                best = sc;
                best_l = li;
            }
        }
        double whole[TS + 1] = {0}, shared[TS + 1] = {0};
        whole[WHOLE] = 1;
        shared[TS] = x->ts_replicas;
        if (score(type, whole, r, n_ts) > best) {
            best = score(type, whole, r, n_ts);
            best_l = -1;
        }
        if (x->ts_replicas > 0 && score(type, shared, r, n_ts) > best) {
            best = score(type, shared, r, n_ts);
            best_l = -3;
        }
        if (best_l == -2 || best - cur < s->min_gain) {
            continue;
        }
        dev_id devs[MIG_MAX_INSTANCES + 1];
        const mig_layout *l = best_l >= 0 ? &layouts[best_l] : NULL;
        uint32_t nd = 1;
        if (best_l == -3) {
            devs[0] = x->ts_dev;
        } else {
            nd = repart_layout_devices(cv, x->g, l, devs);
        }
        pol_reconfigure(out, x->g, devs, nd, s->evict);
        s->last[x->g] = now;
        in_progress++;
        /* as if applied: its new devices supply the demand from now on */
        for (int p = 0; p <= TS; p++) {
            s->supply[p] -= x->on[p];
        }
        if (l) {
            for (int m = 0; m < l->n; m++) {
                s->supply[l->inst[m].profile] += 1;
            }
        } else if (best_l == -3) {
            s->supply[TS] += x->ts_replicas;
        } else {
            s->supply[WHOLE] += 1;
        }
    }
    free(gi);
}

const repart_ops repart_demand_ops = {
    .name = "demand",
    .summary = "re-partition reconfigurable GPUs to the layout that best matches queued and "
               "running requests, with hysteresis",
    .state_size = sizeof(demand_state),
    .init = demand_init,
    .fini = demand_fini,
    .decide = demand_decide,
};
