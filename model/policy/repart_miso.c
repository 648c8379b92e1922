/* model/policy/repart_miso.c - MISO's partitioner (Li et al., "MISO: Exploiting Multi-Instance
 * GPU Capability on Multi-Tenant GPU Clusters", SoCC '22) for jobs asking for any MIG slice
 * (JOB_RES_MIG_ANY).
 *
 * MISO predicts each job's speed on every MIG slice size (from a short run under MPS) and gives
 * each GPU the partition, and each of its jobs the slice, that maximise the sum of the jobs'
 * predicted normalised throughputs, re-partitioning (checkpoint, reconfigure, restart) as jobs
 * arrive and leave. Here the prediction is the model's own physics (pol_job_slice_speed:
 * predict_unit_estimate through model/cluster/jobrate.h), without MISO's profiling run or its prediction
 * error. Normalisation (MISO's): a job's throughput on a slice over its throughput alone on the
 * GPU type's largest classic profile (7g.40gb on an A100), so a job alone on 7g counts 1 and the
 * objective of a GPU is V = sum over its jobs of v(job, slice).
 *
 * Each call (every interval, and at once when an any-slice job is queued, a job ends or is
 * killed, or a layout is in place: repart_ops.reacts):
 *  1. the managed GPUs are the reconfigurable GPUs of the pool's type (the first reconfigurable
 *     GPU's); a GPU being drained or reconfigured (a cordoned device) takes nothing;
 *  2. queued any-slice jobs, oldest first, go to the GPU with the fewest any-slice jobs (MISO's
 *     least-loaded placement; ties: lowest id) that can take them: a free instance of its
 *     current layout gives every job assigned to it so far a slice (keep), or, where the GPU may
 *     change layout, some maximal layout gives all its jobs one (change). A job whose GPU is
 *     being re-laid out for it waits for that GPU, and goes there first;
 *  3. per GPU with jobs: K = the running jobs' v on their instances plus the best assignment of
 *     the new ones to free instances (a job may stay queued); B = the best layout (maximal classic
 *     layouts, `slicesim layouts`, enumeration order on ties) with the best assignment of all its
 *     jobs (every one gets a slice). Assignments are exact (search over the instances, grouped by
 *     profile). When the GPU may change layout and B - K >= min_gain / compute slices of the GPU
 *     (min_gain in compute slices, as the demand policy's: 1 = one seventh of a job at full
 *     speed on an A100), it asks for B (POL_RECONFIGURE, evicting the running jobs when `evict`)
 *     and its jobs wait for it; otherwise it places the new jobs as K says (POL_PLACE).
 * A GPU may change layout when it is not being reconfigured, runs no job of another kind (the
 * scheduler's), was not re-laid out in the last hold_s seconds, and runs no job unless evict
 * (MISO migrates jobs: checkpoint and restart; without evict only an idle GPU is re-laid out);
 * at most max_concurrent GPUs are reconfigured at once. Hysteresis: min_gain and hold_s. The
 * cost (evicted jobs' lost GPU-hours, drain and apply time) is counted by the model
 * (model/cluster/reconf.h, run.json metrics.repartition).
 * Parameters: min_gain (compute slices, default 1), hold_s (default 600), max_concurrent
 * (default 1), evict (0 or 1, default 0).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/hw/mig.h"
#include "model/policy/repart.h"
#include "sim/err.h"
#include "sim/xalloc.h"

#define MAXJ MIG_MAX_INSTANCES /* jobs one GPU holds: one per instance */

typedef struct miso_state {
    double min_gain, hold_s, max_concurrent;
    bool evict;
    repart_layouts layouts;
    bool ready;
    const gpu_type *type; /* the pool's GPU type */
    uint32_t n_gpus;
    sim_time *last; /* per GPU: last reconfiguration asked, or -1 */
    job_id *any;    /* the run's any-slice jobs, in id order */
    uint32_t n_any;
    int32_t *plan;   /* per any-slice job (index into any): GPU re-laid out for it, or -1 */
    double *speed;   /* per any-slice job x profile of type: v, NAN until asked */
    int32_t *idx_of; /* per job id: index into any, or -1 */
} miso_state;

static int miso_init(void *self, const param_set *params, diag *d)
{
    miso_state *s = self;
    s->min_gain = 1;
    s->hold_s = 600;
    s->max_concurrent = 1;
    static const repart_key keys[] = {
        {"min_gain", 0, 1e9, offsetof(miso_state, min_gain), false},
        {"hold_s", 0, 1e12, offsetof(miso_state, hold_s), false},
        {"max_concurrent", 1, 1e9, offsetof(miso_state, max_concurrent), false},
        {"evict", 0, 1, offsetof(miso_state, evict), true},
    };
    return repart_params(params, keys, sizeof keys / sizeof keys[0], s, d);
}

static void miso_fini(void *self)
{
    miso_state *s = self;
    repart_layouts_fini(&s->layouts);
    free(s->last);
    free(s->any);
    free(s->plan);
    free(s->speed);
    free(s->idx_of);
}

/* First call: the pool's type, the any-slice jobs. */
static bool setup(miso_state *s, const cluster_view *cv)
{
    if (s->ready) {
        return s->type != NULL;
    }
    s->ready = true;
    s->n_gpus = pol_n_gpus(cv);
    for (gpu_id g = 0; g < s->n_gpus && !s->type; g++) {
        if (pol_gpu_reconfigurable(cv, g)) {
            s->type = pol_gpu_type(cv, g);
        }
    }
    s->last = xcalloc(s->n_gpus + 1, sizeof *s->last, "miso last");
    for (gpu_id g = 0; g < s->n_gpus; g++) {
        s->last[g] = -1;
    }
    uint32_t n_jobs = pol_n_jobs(cv);
    s->idx_of = xcalloc(n_jobs + 1, sizeof *s->idx_of, "miso index");
    s->any = xcalloc(n_jobs + 1, sizeof *s->any, "miso jobs");
    for (job_id j = 0; j < n_jobs; j++) {
        pol_job pj;
        pol_job_get(cv, j, &pj);
        s->idx_of[j] = -1;
        if (pj.resource && !strcmp(pj.resource, JOB_RES_MIG_ANY)) {
            s->idx_of[j] = (int32_t)s->n_any;
            s->any[s->n_any++] = j;
        }
    }
    s->plan = xcalloc(s->n_any + 1, sizeof *s->plan, "miso plan");
    s->speed = xcalloc((size_t)(s->n_any + 1) * GPU_MAX_PROFILES, sizeof *s->speed, "miso v");
    for (uint32_t k = 0; k < s->n_any; k++) {
        s->plan[k] = -1;
        for (int p = 0; p < GPU_MAX_PROFILES; p++) {
            s->speed[(size_t)k * GPU_MAX_PROFILES + p] = (double)NAN;
        }
    }
    return s->type != NULL;
}

/* v of any-slice job k (index into any) on profile p of GPU g (the pool's type), cached. */
static double speed(miso_state *s, const cluster_view *cv, uint32_t k, gpu_id g, int p)
{
    double *v = &s->speed[(size_t)k * GPU_MAX_PROFILES + p];
    if (isnan(*v)) {
        *v = pol_job_slice_speed(cv, s->any[k], g, p);
    }
    return *v;
}

/* ---- assignment ---------------------------------------------------------------------------- */

/* Best assignment of n jobs (v[i][p]: job i's speed on profile p) to groups of instances (group
 * m: profile prof[m], cnt[m] of them). Every job gets a slice with v > 0 when `all` (else
 * -HUGE_VAL); otherwise a job may stay out (0). pick[i] gets job i's group or -1. */
typedef struct assign_pb {
    int n, m;
    const double (*v)[GPU_MAX_PROFILES];
    const int *prof;
    int cnt[MAXJ + 1];
    bool all;
    int cur[MAXJ], best_pick[MAXJ];
    double best;
    double rest[MAXJ + 1]; /* rest[i]: sum over jobs i.. of their best v (a bound) */
} assign_pb;

static void search(assign_pb *a, int i, double val)
{
    if (val + a->rest[i] <= a->best) {
        return; /* cannot beat the best so far (ties keep the earlier one) */
    }
    if (i == a->n) {
        a->best = val;
        memcpy(a->best_pick, a->cur, sizeof a->cur);
        return;
    }
    for (int m = 0; m < a->m; m++) {
        double v = a->v[i][a->prof[m]];
        if (a->cnt[m] > 0 && v > 0) {
            a->cnt[m]--;
            a->cur[i] = m;
            search(a, i + 1, val + v);
            a->cnt[m]++;
        }
    }
    if (!a->all) {
        a->cur[i] = -1;
        search(a, i + 1, val);
    }
}

static double assign(int n, const double (*v)[GPU_MAX_PROFILES], const int *prof, const int *cnt,
                     int m, bool all, int *pick)
{
    assign_pb a = {.n = n, .m = m, .v = v, .prof = prof, .all = all, .best = -HUGE_VAL};
    memcpy(a.cnt, cnt, (size_t)m * sizeof *cnt);
    a.rest[n] = 0;
    for (int i = n - 1; i >= 0; i--) {
        double top = 0;
        for (int k = 0; k < m; k++) {
            top = fmax(top, v[i][prof[k]]);
        }
        a.rest[i] = a.rest[i + 1] + top;
    }
    search(&a, 0, 0);
    if (a.best == -HUGE_VAL) {
        return -HUGE_VAL;
    }
    memcpy(pick, a.best_pick, (size_t)n * sizeof *pick);
    return a.best;
}

/* ---- per GPU ------------------------------------------------------------------------------- */

typedef struct ginfo {
    gpu_id g;
    bool busy;    /* being drained or reconfigured */
    bool foreign; /* runs a job of the scheduler's */
    bool can_change;
    int n_run, n_new;
    uint32_t run[MAXJ]; /* any-slice jobs running on it (index into any) */
    int run_prof[MAXJ];
    uint32_t new_[MAXJ]; /* queued jobs given to it in this call */
    int n_free;
    dev_id free_dev[MAXJ]; /* free MIG instances of its current layout */
    int free_prof[MAXJ];
    int cur_prof[MAXJ + 1]; /* profiles of its current layout (MIG instances) */
    int n_cur;
} ginfo;

/* Group profiles list[0..n) into distinct prof[] with counts cnt[]; returns the group count. */
static int group(const int *list, int n, int *prof, int *cnt)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < m && prof[k] != list[i]) {
            k++;
        }
        if (k == m) {
            prof[m] = list[i];
            cnt[m++] = 0;
        }
        cnt[k]++;
    }
    return m;
}

/* Keep: the running jobs' v on their instances plus the best assignment of the new jobs (plus
 * `extra` when != UINT32_MAX) to free instances. Fills pick (per new job: index into free_dev,
 * or -1) when not NULL; *n_placed gets how many new jobs got an instance. */
static double keep_value(miso_state *s, const cluster_view *cv, const ginfo *x, uint32_t extra,
                         int *pick, int *n_placed)
{
    double val = 0;
    for (int i = 0; i < x->n_run; i++) {
        val += speed(s, cv, x->run[i], x->g, x->run_prof[i]);
    }
    int n = x->n_new + (extra != UINT32_MAX);
    double v[MAXJ + 1][GPU_MAX_PROFILES];
    for (int i = 0; i < n && i <= MAXJ; i++) {
        uint32_t k = i < x->n_new ? x->new_[i] : extra;
        for (int p = 0; p < s->type->n_profiles; p++) {
            v[i][p] = speed(s, cv, k, x->g, p);
        }
    }
    int prof[MAXJ], cnt[MAXJ], gp[MAXJ + 1];
    int m = group(x->free_prof, x->n_free, prof, cnt);
    *n_placed = 0;
    if (n > MAXJ) {
        return -HUGE_VAL;
    }
    double a = assign(n, (const double(*)[GPU_MAX_PROFILES])v, prof, cnt, m, false, gp);
    if (a == -HUGE_VAL) {
        a = 0;
        for (int i = 0; i < n; i++) {
            gp[i] = -1;
        }
    }
    for (int i = 0; i < n; i++) {
        if (gp[i] >= 0) {
            (*n_placed)++;
            if (pick) { /* the first free instance of that group not yet picked */
                int want = prof[gp[i]];
                for (int f = 0; f < x->n_free; f++) {
                    bool taken = false;
                    for (int q = 0; q < i; q++) {
                        taken |= pick[q] == f;
                    }
                    if (x->free_prof[f] == want && !taken) {
                        pick[i] = f;
                        break;
                    }
                }
            }
        } else if (pick) {
            pick[i] = -1;
        }
    }
    return val + a;
}

/* Change: the best maximal layout for all of x's jobs (plus `extra`); -HUGE_VAL when none holds
 * them all. *layout gets its index. */
static double best_value(miso_state *s, const cluster_view *cv, const ginfo *x, uint32_t extra,
                         int *layout)
{
    int n = x->n_run + x->n_new + (extra != UINT32_MAX);
    if (n > MAXJ || n == 0) {
        return n == 0 ? 0 : -HUGE_VAL;
    }
    double v[MAXJ][GPU_MAX_PROFILES];
    for (int i = 0; i < n; i++) {
        uint32_t k = i < x->n_run              ? x->run[i]
                     : i < x->n_run + x->n_new ? x->new_[i - x->n_run]
                                               : extra;
        for (int p = 0; p < s->type->n_profiles; p++) {
            v[i][p] = speed(s, cv, k, x->g, p);
        }
    }
    int n_layouts;
    const mig_layout *ls = repart_layouts_of(&s->layouts, s->type, &n_layouts);
    double best = -HUGE_VAL;
    *layout = -1;
    for (int li = 0; li < n_layouts; li++) {
        if (ls[li].n < n) {
            continue;
        }
        int list[MAXJ], prof[MAXJ], cnt[MAXJ], pick[MAXJ];
        for (int m = 0; m < ls[li].n; m++) {
            list[m] = ls[li].inst[m].profile;
        }
        int m = group(list, ls[li].n, prof, cnt);
        double a = assign(n, (const double(*)[GPU_MAX_PROFILES])v, prof, cnt, m, true, pick);
        if (a > best) {
            best = a;
            *layout = li;
        }
    }
    return best;
}

/* Is layout l the current layout of x (the same multiset of profiles)? The assignment only
 * depends on the profiles, so the same profiles at other starts would be no gain. */
static bool same_profiles(const ginfo *x, const mig_layout *l)
{
    if (l->n != x->n_cur) {
        return false;
    }
    int a[GPU_MAX_PROFILES] = {0};
    for (int i = 0; i < l->n; i++) {
        a[l->inst[i].profile]++;
    }
    for (int i = 0; i < x->n_cur; i++) {
        a[x->cur_prof[i]]--;
    }
    for (int p = 0; p < GPU_MAX_PROFILES; p++) {
        if (a[p] != 0) {
            return false;
        }
    }
    return true;
}

/* Read GPU g into x (jobs come later). */
static void gpu_read(miso_state *s, const cluster_view *cv, gpu_id g, ginfo *x)
{
    memset(x, 0, sizeof *x);
    x->g = g;
    pol_gpu pg;
    pol_gpu_get(cv, g, &pg);
    for (uint32_t k = 0; k < pg.n_devs; k++) {
        pol_device pd;
        pol_device_get(cv, pg.first_dev + k, &pd);
        if (!pd.active) {
            continue;
        }
        x->busy |= pd.cordoned;
        if (!pd.profile) {
            continue;
        }
        int p = 0;
        while (p < s->type->n_profiles && strcmp(s->type->profiles[p].name, pd.profile) != 0) {
            p++;
        }
        if (x->n_cur < MAXJ) {
            x->cur_prof[x->n_cur++] = p;
        }
        if (pd.free > 0 && x->n_free < MAXJ) {
            x->free_dev[x->n_free] = pd.id;
            x->free_prof[x->n_free++] = p;
        }
    }
}

static int by_load(const void *a, const void *b)
{
    const ginfo *x = *(const ginfo *const *)a, *y = *(const ginfo *const *)b;
    int lx = x->n_run + x->n_new, ly = y->n_run + y->n_new;
    if (lx != ly) {
        return lx < ly ? -1 : 1;
    }
    return (x->g > y->g) - (x->g < y->g);
}

/* Can x take job k (keep, or change)? */
static bool can_take(miso_state *s, const cluster_view *cv, const ginfo *x, uint32_t k)
{
    if (x->busy || x->n_run + x->n_new >= MAXJ) {
        return false;
    }
    pol_job j;
    pol_gpu pg;
    pol_job_get(cv, s->any[k], &j);
    pol_gpu_get(cv, x->g, &pg);
    if (!pol_node_admits(cv, &j, pg.node)) { /* its nodeSelector, tolerations, pinned node */
        return false;
    }
    int placed;
    keep_value(s, cv, x, k, NULL, &placed);
    if (placed == x->n_new + 1) {
        return true;
    }
    int l;
    return x->can_change && best_value(s, cv, x, k, &l) > -HUGE_VAL;
}

static void miso_decide(void *self, const cluster_view *cv, decision_buf *out)
{
    miso_state *s = self;
    if (!setup(s, cv) || s->n_any == 0) {
        return;
    }
    sim_time now = pol_now(cv);
    ginfo *gi = xcalloc(s->n_gpus + 1, sizeof *gi, "miso gpus");
    int32_t *slot = xcalloc(s->n_gpus + 1, sizeof *slot, "miso slots");
    uint32_t n = 0, in_progress = 0;
    for (gpu_id g = 0; g < s->n_gpus; g++) {
        slot[g] = -1;
        if (pol_gpu_reconfigurable(cv, g) && pol_gpu_type(cv, g) == s->type) {
            gpu_read(s, cv, g, &gi[n]);
            in_progress += gi[n].busy;
            slot[g] = (int32_t)n++;
        }
    }
    /* running any-slice jobs, per GPU; their units are not the scheduler's */
    uint32_t *ours = xcalloc(n + 1, sizeof *ours, "miso units");
    for (uint32_t k = 0; k < s->n_any; k++) {
        const dev_id *units;
        bool running;
        if (pol_job_placement(cv, s->any[k], &units, &running) == 0 || !running) {
            continue;
        }
        s->plan[k] = -1;
        pol_device pd;
        pol_device_get(cv, units[0], &pd);
        int32_t at = slot[pd.gpu];
        if (at < 0) {
            continue;
        }
        ginfo *x = &gi[at];
        ours[at]++;
        if (x->n_run < MAXJ) {
            int p = 0;
            while (p < s->type->n_profiles && strcmp(s->type->profiles[p].name, pd.profile)) {
                p++;
            }
            x->run[x->n_run] = k;
            x->run_prof[x->n_run++] = p;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        pol_gpu pg;
        pol_gpu_get(cv, gi[i].g, &pg);
        uint32_t used = 0;
        for (uint32_t d = 0; d < pg.n_devs; d++) {
            pol_device pd;
            pol_device_get(cv, pg.first_dev + d, &pd);
            used += pd.active ? pd.used : 0;
        }
        ginfo *x = &gi[i];
        x->foreign = used > ours[i];
        x->can_change = !x->busy && !x->foreign && (s->evict || x->n_run == 0) &&
                        (s->last[x->g] < 0 || sim_time_to_s(now - s->last[x->g]) >= s->hold_s);
    }
    /* queued jobs: those a GPU was re-laid out for go there first, then the others */
    ginfo **order = xcalloc(n + 1, sizeof *order, "miso order");
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t k = 0; k < s->n_any; k++) {
            if (!pol_job_queued(cv, s->any[k])) {
                continue;
            }
            int32_t at = s->plan[k] >= 0 ? slot[s->plan[k]] : -1;
            if (pass == 0) {
                if (at >= 0 && !gi[at].busy && gi[at].n_run + gi[at].n_new < MAXJ) {
                    gi[at].new_[gi[at].n_new++] = k;
                }
                continue;
            }
            if (at >= 0) {
                if (!gi[at].busy) {
                    s->plan[k] = -1; /* given to it in pass 0 */
                }
                continue; /* its GPU is being re-laid out for it */
            }
            for (uint32_t i = 0; i < n; i++) {
                order[i] = &gi[i];
            }
            qsort(order, n, sizeof *order, by_load);
            for (uint32_t i = 0; i < n; i++) {
                if (can_take(s, cv, order[i], k)) {
                    order[i]->new_[order[i]->n_new++] = k;
                    break;
                }
            }
        }
    }
    /* per GPU: re-lay out, or place the new jobs on free instances */
    double thr = s->min_gain / (double)s->type->compute_slices;
    int n_layouts;
    const mig_layout *ls = repart_layouts_of(&s->layouts, s->type, &n_layouts);
    for (uint32_t i = 0; i < n; i++) {
        ginfo *x = &gi[i];
        if (x->busy || x->n_run + x->n_new == 0) {
            continue;
        }
        int pick[MAXJ + 1], placed, li = -1;
        double keep = keep_value(s, cv, x, UINT32_MAX, pick, &placed);
        double best = x->can_change && in_progress < s->max_concurrent
                          ? best_value(s, cv, x, UINT32_MAX, &li)
                          : -HUGE_VAL;
        if (li >= 0 && best - keep >= thr && !same_profiles(x, &ls[li])) {
            dev_id devs[MIG_MAX_INSTANCES + 1];
            uint32_t nd = repart_layout_devices(cv, x->g, &ls[li], devs);
            pol_reconfigure(out, x->g, devs, nd, s->evict);
            s->last[x->g] = now;
            in_progress++;
            for (int r = 0; r < x->n_run; r++) {
                s->plan[x->run[r]] = (int32_t)x->g;
            }
            for (int r = 0; r < x->n_new; r++) {
                s->plan[x->new_[r]] = (int32_t)x->g;
            }
            continue;
        }
        for (int r = 0; r < x->n_new; r++) {
            if (pick[r] >= 0) {
                pol_place(out, s->any[x->new_[r]], &x->free_dev[pick[r]], 1);
            }
        }
    }
    free(order);
    free(ours);
    free(slot);
    free(gi);
}

const repart_ops repart_miso_ops = {
    .name = "miso",
    .summary = "MISO: place jobs asking for any MIG slice and re-partition their GPUs to "
               "maximise the sum of predicted normalised throughputs, with hysteresis",
    .state_size = sizeof(miso_state),
    .init = miso_init,
    .fini = miso_fini,
    .decide = miso_decide,
    .reacts = true,
};
