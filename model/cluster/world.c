/* model/cluster/world.c - the event-driven cluster world (see world.h).
 *
 * Progress is delegated to the fluid solver (sim/fluid.h): every running job is one activity
 * whose work is its solo run time (seconds) and whose rate cap is the rate function's answer
 * (1 without one). The solver integrates progress between changes and moves the completion event
 * whenever a cap changes, so the physics can slow co-runners (time-slicing eta(k), MPS bandwidth
 * contention, a MIG GPU's shared power budget) without any change here: it only has to answer
 * "how fast does job j run now".
 */
#include "model/cluster/world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/policy/frag.h"
#include "model/policy/view.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/fluid.h"
#include "sim/xalloc.h"

/* Priorities at equal times: the fluid solver flushes at SIM_PRIO_MAX; completions fire at the
 * fluid's priority; arrivals come last so that units freed at t are free for jobs arriving at t. */
#define PRIO_ARRIVAL (SIM_PRIO_MIN + 1)
/* Component timers (faults, repairs, reconfigurations): after completions, before arrivals. */
#define PRIO_TIMER (SIM_PRIO_MIN + 2)

typedef struct wjob {
    struct world *w;
    job_id id;
    fluid_act_id act;
    double rate;    /* current rate cap */
    /* checkpoints (world_cfg.checkpoint_s): progress is linear between rate changes, so the
     * time a checkpoint was written follows from the segment it fell in */
    sim_time seg_t, ckpt_t; /* start of the current rate segment; time of the last checkpoint */
    double seg_p, ckpt_p;   /* progress (work seconds, done_s included) at those times */
    node_id *nodes;         /* node of each worker while running (owned unless it is &node1),
                             * else NULL */
    node_id node1;          /* the node of a job of one worker (nodes points here) */
    bool alone;             /* its rate stands alone (world_cfg.rate_alone): set once */
} wjob;

/* The running jobs holding a unit on one GPU (unordered): up to GPU_JOBS_IN in the entry itself
 * (one cache line's half: a GPU's list costs one miss, where three arrays cost three), more in
 * ext (ext[0] its room, the list after it). */
#define GPU_JOBS_IN 4u
typedef struct gpu_jobs {
    uint32_t n;
    uint32_t n_shared; /* of them, jobs whose rate does not stand alone (wjob.alone false) */
    job_id *ext;
    job_id in[GPU_JOBS_IN];
} gpu_jobs;

static job_id *gpu_jobs_list(gpu_jobs *g)
{
    return g->ext ? g->ext + 1 : g->in;
}

static const job_id *gpu_jobs_clist(const gpu_jobs *g)
{
    return g->ext ? g->ext + 1 : g->in;
}

/* A slot of the map of running jobs' states: key and value side by side (one miss a lookup). */
typedef struct wj_entry {
    job_id key;
    wjob *val;
} wj_entry;

typedef struct wtimer {
    world_timer_fn *fn;
    void *ctx;
} wtimer;

typedef struct wobserver {
    world_observer_fn *fn;
    void *ctx;
} wobserver;

struct world {
    sim_ctx *ctx;
    fluid_sys *fluid;
    cluster *c;
    job_table *jobs;
    cluster_view view;
    const policy_ops *pol;
    void *pol_state;
    decision_buf *dec;
    /* the state of each running job (placed until it stops), by id: an open-addressing map of
     * cap_wj slots (a power of two, at most half full), so memory follows the running jobs */
    wj_entry *wj; /* key WJ_EMPTY: a free slot */
    size_t n_wj, cap_wj;
    wjob **wj_spare; /* states of jobs that stopped, for reuse */
    size_t n_wj_spare, cap_wj_spare;
    job_id *gang; /* running jobs with two or more workers, in start order */
    size_t n_gang, cap_gang;
    gpu_jobs *gpu_run; /* per GPU: running jobs holding a unit on it */
    world_rate_fn *rate;
    void *rate_ctx;
    world_rate_alone_fn *rate_alone;
    sim_time until;
    job_id next_arrival; /* jobs are chronological: the next one to submit */
    /* failure notifications waiting for the policy (jobs that failed with OOM) */
    job_id *ended;
    size_t n_ended, cap_ended;
    uint32_t *count; /* validation scratch: units asked per device */
    double checkpoint_s;
    wtimer *timers; /* registered timer clients */
    uint32_t n_timers;
    job_id *killed; /* jobs killed since the last settle, in kill order */
    size_t n_killed, cap_killed;
    wobserver *obs; /* job start/end/kill observers */
    uint32_t n_obs;
    world_progress_fn *progress; /* progress display, or NULL */
    void *progress_user;
    uint64_t progress_every; /* events between progress calls */
    uint64_t max_events;     /* stop the run after this many events (0: no bound) */
    world_reconfigure_fn *reconf_fn; /* handles POL_RECONFIGURE; NULL: refused */
    void *reconf_ctx;
    world_active_change *act; /* world_set_active's changes, in order */
    size_t n_act, cap_act;
    world_killed_unit *ku; /* the units of the runs requeue_running ended, in kill order */
    size_t n_ku, cap_ku;
    world_slice_fn *slice_fn; /* told of queued any-slice jobs; NULL: nobody */
    void *slice_ctx;
    /* samples in blocks of SAMPLE_BLOCK (each with its n_res units per sample after it); a full
     * block goes to the sample store when the next begins, NULL here from then on */
    world_sample **sblk;
    size_t n_sblk, cap_sblk, n_samples;
    uint32_t *sblk_len; /* per block gone to the store: bytes of its image */
    unsigned char *pack; /* a block's image being written or read */
    const job_spill_ops *sops; /* NULL: every block stays */
    void *sops_ctx;
    bool sops_failed; /* a put failed: the blocks from then on stay */
    struct sample_slot {
        size_t blk; /* SIZE_MAX: empty */
        world_sample *s;
    } sslot[2]; /* blocks read back, the older replaced first */
    unsigned sslot_next;
    world_totals tot;
};

#define WJ_EMPTY UINT32_MAX

static size_t wj_slot(const world *w, job_id id)
{
    size_t m = w->cap_wj - 1, i = ((uint64_t)id * 0x9E3779B97F4A7C15u >> 32) & m;
    while (w->wj[i].key != WJ_EMPTY && w->wj[i].key != id) {
        i = (i + 1) & m;
    }
    return i;
}

static void wj_grow(world *w)
{
    wj_entry *e = w->wj;
    size_t old = w->cap_wj;
    w->cap_wj = old ? 2 * old : 64;
    w->wj = xcalloc(w->cap_wj, sizeof *w->wj, "running jobs' state");
    for (size_t i = 0; i < w->cap_wj; i++) {
        w->wj[i].key = WJ_EMPTY;
    }
    for (size_t i = 0; i < old; i++) {
        if (e[i].key != WJ_EMPTY) {
            w->wj[wj_slot(w, e[i].key)] = e[i];
        }
    }
    free(e);
}

/* The world's state of job id, made on first use (a job being placed). Stable until wj_drop
 * (the fluid solver keeps a pointer to it while the job runs). */
static wjob *wj_of(world *w, job_id id)
{
    if (2 * (w->n_wj + 1) > w->cap_wj) {
        wj_grow(w);
    }
    size_t i = wj_slot(w, id);
    if (w->wj[i].key == WJ_EMPTY) {
        wjob *wj = w->n_wj_spare ? w->wj_spare[--w->n_wj_spare]
                                 : xmalloc(sizeof(wjob), "running job");
        *wj = (wjob){.w = w, .id = id, .act = FLUID_ACT_NONE};
        w->wj[i] = (wj_entry){id, wj};
        w->n_wj++;
    }
    return w->wj[i].val;
}

/* The state of a job known to have one (running). */
static const wjob *wj_get(const world *w, job_id id)
{
    size_t i = w->cap_wj ? wj_slot(w, id) : 0;
    SIM_ASSERT(w->cap_wj && w->wj[i].key == id);
    return w->wj[i].val;
}

/* Job id stopped running: its state goes (backward-shift deletion keeps every probe chain); the
 * struct is kept for the next job placed (at most as many as ran at once). */
static void wj_drop(world *w, job_id id)
{
    size_t m = w->cap_wj - 1, i = wj_slot(w, id);
    SIM_ASSERT(w->wj[i].key == id && w->wj[i].val->nodes == NULL);
    if (w->n_wj_spare == w->cap_wj_spare) {
        w->cap_wj_spare = w->cap_wj_spare ? 2 * w->cap_wj_spare : 64;
        w->wj_spare = xrealloc(w->wj_spare, w->cap_wj_spare * sizeof *w->wj_spare,
                               "running jobs' state");
    }
    w->wj_spare[w->n_wj_spare++] = w->wj[i].val;
    w->n_wj--;
    for (size_t j = (i + 1) & m;; j = (j + 1) & m) {
        if (w->wj[j].key == WJ_EMPTY) {
            break;
        }
        size_t home = ((uint64_t)w->wj[j].key * 0x9E3779B97F4A7C15u >> 32) & m;
        /* move j back to i when its home is not in (i, j] (cyclically) */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            w->wj[i] = w->wj[j];
            i = j;
        }
    }
    w->wj[i] = (wj_entry){WJ_EMPTY, NULL};
}

/* ---- sampling ------------------------------------------------------------------------------ */

#define SAMPLE_BLOCK 4096u

/* Bytes of a block: its samples, then n_res units per sample. */
static size_t block_bytes(const world *w)
{
    return SAMPLE_BLOCK * (sizeof(world_sample) + cluster_n_resources(w->c) * sizeof(uint32_t));
}

static uint32_t *block_res(world_sample *blk)
{
    return (uint32_t *)(blk + SAMPLE_BLOCK);
}

/* A block's image in the store: each sample's fields (t, then the five counts, then the units
 * of each resource) as the difference from the sample before (0 before the first), zigzag
 * varints: consecutive samples differ by an event, so most fields take a byte (52 bytes a
 * sample on synth-10k-1m's five resources -> about 15). */
static unsigned char *put_varint(unsigned char *o, int64_t d)
{
    uint64_t z = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
    while (z >= 0x80) {
        *o++ = (unsigned char)(z | 0x80);
        z >>= 7;
    }
    *o++ = (unsigned char)z;
    return o;
}

static const unsigned char *get_varint(const unsigned char *in, int64_t *d)
{
    uint64_t z = 0;
    for (unsigned sh = 0;; sh += 7) {
        z |= (uint64_t)(*in & 0x7f) << sh;
        if (!(*in++ & 0x80)) {
            break;
        }
    }
    *d = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
    return in;
}

#define SAMPLE_FIELDS 5u /* queued, running, units_used, gpus_busy, sms_busy */

static void sample_fields(const world_sample *s, uint32_t *f)
{
    f[0] = s->queued;
    f[1] = s->running;
    f[2] = s->units_used;
    f[3] = s->gpus_busy;
    f[4] = s->sms_busy;
}

/* Most bytes of a block's image. */
static size_t pack_most(const world *w)
{
    return SAMPLE_BLOCK * (10 + (SAMPLE_FIELDS + cluster_n_resources(w->c)) * 5);
}

/* Block blk's image into w->pack; its length. */
static size_t pack_block(world *w, world_sample *blk)
{
    uint32_t n_res = cluster_n_resources(w->c), f[SAMPLE_FIELDS], pf[SAMPLE_FIELDS] = {0};
    const uint32_t *ru = block_res(blk), *pr = NULL;
    unsigned char *o = w->pack;
    sim_time pt = 0;
    for (size_t i = 0; i < SAMPLE_BLOCK; i++, ru += n_res) {
        o = put_varint(o, blk[i].t - pt);
        pt = blk[i].t;
        sample_fields(&blk[i], f);
        for (unsigned k = 0; k < SAMPLE_FIELDS; k++) {
            o = put_varint(o, (int64_t)f[k] - pf[k]);
            pf[k] = f[k];
        }
        for (uint32_t r = 0; r < n_res; r++) {
            o = put_varint(o, (int64_t)ru[r] - (pr ? pr[r] : 0));
        }
        pr = ru;
    }
    return (size_t)(o - w->pack);
}

/* The samples of image in into blk. */
static void unpack_block(const world *w, const unsigned char *in, world_sample *blk)
{
    uint32_t n_res = cluster_n_resources(w->c), f[SAMPLE_FIELDS] = {0};
    uint32_t *ru = block_res(blk), *pr = NULL;
    sim_time t = 0;
    for (size_t i = 0; i < SAMPLE_BLOCK; i++, ru += n_res) {
        int64_t d;
        in = get_varint(in, &d);
        t += d;
        for (unsigned k = 0; k < SAMPLE_FIELDS; k++) {
            in = get_varint(in, &d);
            f[k] = (uint32_t)((int64_t)f[k] + d);
        }
        memset(&blk[i], 0, sizeof blk[i]);
        blk[i].t = t;
        blk[i].queued = f[0];
        blk[i].running = f[1];
        blk[i].units_used = f[2];
        blk[i].gpus_busy = f[3];
        blk[i].sms_busy = f[4];
        for (uint32_t r = 0; r < n_res; r++) {
            in = get_varint(in, &d);
            ru[r] = (uint32_t)((pr ? (int64_t)pr[r] : 0) + d);
        }
        pr = ru;
    }
}

static void record(world *w)
{
    sim_time now = sim_now(w->ctx);
    uint32_t n_res = cluster_n_resources(w->c);
    /* the last sample is in the newest block, which stays in memory */
    if (w->n_samples > 0 &&
        w->sblk[(w->n_samples - 1) / SAMPLE_BLOCK][(w->n_samples - 1) % SAMPLE_BLOCK].t == now) {
        w->n_samples--; /* the state at a time is its last state */
    }
    size_t i = w->n_samples, b = i / SAMPLE_BLOCK;
    if (b == w->n_sblk) { /* a new block: the one before is final, it may go */
        if (w->sops && !w->sops_failed && b > 0) {
            SIM_ASSERT(b - 1 <= UINT32_MAX);
            if (!w->pack) {
                w->pack = xmalloc(pack_most(w), "samples");
            }
            size_t n = pack_block(w, w->sblk[b - 1]);
            if (w->sops->put(w->sops_ctx, (uint32_t)(b - 1), w->pack, n) == 0) {
                w->sblk_len[b - 1] = (uint32_t)n;
                free(w->sblk[b - 1]);
                w->sblk[b - 1] = NULL;
            } else {
                w->sops_failed = true;
            }
        }
        if (w->n_sblk == w->cap_sblk) {
            w->cap_sblk = w->cap_sblk ? 2 * w->cap_sblk : 16;
            w->sblk = xrealloc(w->sblk, w->cap_sblk * sizeof *w->sblk, "samples");
            w->sblk_len = xrealloc(w->sblk_len, w->cap_sblk * sizeof *w->sblk_len, "samples");
        }
        /* zeroed: a block written out carries every byte, padding included */
        w->sblk[w->n_sblk++] = xcalloc(1, block_bytes(w), "samples");
    }
    world_sample *s = &w->sblk[b][i % SAMPLE_BLOCK];
    uint32_t *ru = block_res(w->sblk[b]) + (i % SAMPLE_BLOCK) * n_res;
    memset(s, 0, sizeof *s);
    s->t = now;
    s->queued = w->tot.n_queued;
    s->running = w->tot.n_running;
    s->units_used = cluster_units_used(w->c);
    s->gpus_busy = cluster_gpus_busy(w->c);
    s->sms_busy = cluster_sms_busy(w->c);
    for (res_id r = 0; r < n_res; r++) {
        ru[r] = cluster_res_used(w->c, r);
    }
    w->n_samples++;
    w->tot.end = now;
}

/* The block holding sample i, read back from the store when it went there. The world was
 * created mutable: a read through a const pointer may fill the read-back slots. */
static world_sample *sample_block(const world *cw, size_t i)
{
    world *w = (world *)cw;
    size_t b = i / SAMPLE_BLOCK;
    if (w->sblk[b]) {
        return w->sblk[b];
    }
    for (unsigned k = 0; k < 2; k++) {
        if (w->sslot[k].blk == b) {
            return w->sslot[k].s;
        }
    }
    struct sample_slot *sl = &w->sslot[w->sslot_next];
    w->sslot_next ^= 1u;
    if (!sl->s) {
        sl->s = xmalloc(block_bytes(w), "samples");
    }
    if (w->sops->get(w->sops_ctx, (uint32_t)b, w->pack, w->sblk_len[b]) != 0) {
        fprintf(stderr, "slicesim: error: cannot read back %u bytes of samples\n",
                (unsigned)w->sblk_len[b]);
        abort();
    }
    unpack_block(w, w->pack, sl->s);
    sl->blk = b;
    return sl->s;
}

/* ---- progress ------------------------------------------------------------------------------ */

static void on_done(fluid_sys *sys, fluid_act_id act, void *user);

static double job_rate(world *w, job_id id)
{
    if (!w->rate) {
        return 1.0;
    }
    double r = w->rate(w->rate_ctx, w, id);
    SIM_ASSERT(r > 0 && isfinite(r));
    return r;
}

/* Distinct GPUs of job j into g (at most j->n_units); returns how many. */
static uint32_t job_gpus(const world *w, const job *j, gpu_id *g)
{
    uint32_t n = 0;
    for (uint32_t u = 0; u < j->n_units; u++) {
        gpu_id x = cluster_device_get(w->c, j->units[u])->gpu;
        bool seen = false;
        for (uint32_t k = 0; k < n && !seen; k++) {
            seen = g[k] == x;
        }
        if (!seen) {
            g[n++] = x;
        }
    }
    return n;
}

/* Add (on) or remove (off) job j, whose rate stands alone or not, in the running lists of its
 * GPUs. */
static void index_gpus(world *w, const job *j, bool alone, bool on)
{
    gpu_id small[16];
    gpu_id *g = j->n_units <= 16 ? small : xcalloc(j->n_units, sizeof *g, "job gpus");
    uint32_t n = job_gpus(w, j, g);
    for (uint32_t k = 0; k < n; k++) {
        gpu_id x = g[k];
        gpu_jobs *gj = &w->gpu_run[x];
        gj->n_shared = on ? gj->n_shared + !alone : gj->n_shared - !alone;
        if (on) {
            if (gj->n == (gj->ext ? gj->ext[0] : GPU_JOBS_IN)) {
                uint32_t cap = 2 * gj->n;
                job_id *ext = xmalloc((cap + 1) * sizeof(job_id), "gpu jobs");
                memcpy(ext + 1, gpu_jobs_list(gj), gj->n * sizeof(job_id));
                free(gj->ext);
                gj->ext = ext;
                gj->ext[0] = cap;
            }
            gpu_jobs_list(gj)[gj->n++] = j->id;
        } else {
            job_id *l = gpu_jobs_list(gj);
            uint32_t i = 0;
            while (l[i] != j->id) {
                i++;
            }
            l[i] = l[--gj->n];
        }
    }
    if (g != small) {
        free(g);
    }
}

/* Progress of running job id now: work seconds done, done_s of earlier runs included. */
static double progress_now(const world *w, job_id id)
{
    double left = fluid_remaining(w->fluid, wj_get(w, id)->act);
    SIM_ASSERT(isfinite(left));
    return job_table_get(w->jobs, id)->spec.work_s - left;
}

/* Close the current rate segment of a job's state wj at now: note the last checkpoint written
 * in it. */
static void advance_checkpoint(world *w, wjob *wj)
{
    sim_time now = sim_now(w->ctx);
    if (wj->rate <= 0) { /* not started yet */
        return;
    }
    double p = progress_now(w, wj->id);
    if (w->checkpoint_s > 0) {
        double b = floor(p / w->checkpoint_s) * w->checkpoint_s;
        if (b > wj->ckpt_p) { /* written at seg_t + (b - seg_p) / rate, inside this segment */
            sim_time at = wj->seg_t + sim_time_from_s((b - wj->seg_p) / wj->rate);
            wj->ckpt_t = at < wj->seg_t ? wj->seg_t : at > now ? now : at;
            wj->ckpt_p = b;
        }
    }
    wj->seg_t = now;
    wj->seg_p = p;
}

static void set_rate(world *w, job_id id)
{
    wjob *wj = wj_of(w, id);
    if (wj->alone && wj->rate > 0) { /* set at its start, and it cannot change */
        return;
    }
    double r = job_rate(w, id);
    if (r != wj->rate) { /* an unchanged cap costs the solver nothing */
        advance_checkpoint(w, wj);
        wj->rate = r;
        fluid_set_rate_cap(w->fluid, wj->act, r);
    }
}

static void start_progress(world *w, job_id id)
{
    const job *j = job_table_get(w->jobs, id);
    sim_time now = sim_now(w->ctx);
    wjob *wj = wj_of(w, id);
    wj->act = fluid_start(w->fluid, j->spec.work_s - j->done_s, NULL, 0, on_done, wj);
    wj->seg_t = wj->ckpt_t = now;
    wj->seg_p = wj->ckpt_p = j->done_s;
    wj->alone = w->rate_alone && w->rate_alone(w->rate_ctx, w, id);
    index_gpus(w, j, wj->alone, true);
    if (j->spec.req.n_workers > 1) {
        if (w->n_gang == w->cap_gang) {
            w->cap_gang = w->cap_gang ? 2 * w->cap_gang : 8;
            w->gang = xrealloc(w->gang, w->cap_gang * sizeof *w->gang, "gang jobs");
        }
        w->gang[w->n_gang++] = id;
    }
    wj->rate = -1;
    set_rate(w, id);
}

static void stop_progress(world *w, job_id id)
{
    wjob *wj = wj_of(w, id);
    wj->act = FLUID_ACT_NONE;
    index_gpus(w, job_table_get(w->jobs, id), wj->alone, false);
    for (size_t i = 0; i < w->n_gang; i++) {
        if (w->gang[i] == id) {
            memmove(&w->gang[i], &w->gang[i + 1], (w->n_gang - i - 1) * sizeof *w->gang);
            w->n_gang--;
            break;
        }
    }
    wj_drop(w, id);
}

/* Re-apply the rate function to the running jobs that share a GPU with job j (which just
 * started or ended): their co-runners changed. */
static void rerate_neighbours(world *w, const job *j)
{
    if (!w->rate) {
        return;
    }
    gpu_id small[16];
    gpu_id *g = j->n_units <= 16 ? small : xcalloc(j->n_units, sizeof *g, "job gpus");
    uint32_t n = job_gpus(w, j, g);
    for (uint32_t k = 0; k < n; k++) {
        if (w->gpu_run[g[k]].n_shared == 0) {
            continue; /* every rate there stands alone: none can change */
        }
        const job_id *l = gpu_jobs_clist(&w->gpu_run[g[k]]);
        for (uint32_t i = 0; i < w->gpu_run[g[k]].n; i++) {
            job_id o = l[i];
            if (o != j->id) {
                set_rate(w, o);
            }
        }
    }
    if (g != small) {
        free(g);
    }
    if (j->spec.req.n_workers > 1) { /* gangs share links beyond their GPUs */
        for (size_t i = 0; i < w->n_gang; i++) {
            if (w->gang[i] != j->id) {
                set_rate(w, w->gang[i]);
            }
        }
    }
}

/* ---- applying decisions -------------------------------------------------------------------- */

static void notify(world *w, job_id id, world_job_event ev)
{
    for (uint32_t i = 0; i < w->n_obs; i++) {
        w->obs[i].fn(w, w->obs[i].ctx, id, ev);
    }
}

/* Milli-GPU share each unit of job spec s holds, or 0 for whole units. */
static uint32_t share_of(const job_spec *s)
{
    return s->pod.gpu_milli > 0 && s->pod.gpu_milli < MILLI_PER_GPU ? s->pod.gpu_milli : 0;
}

/* May a pod with this gpu_spec use GPU g? (its label, or else its catalog name) */
static bool gpu_allowed(const char *spec, const cluster_gpu *g)
{
    return frag_type_allowed(spec, g->label ? g->label : g->type->name);
}

/* Node of worker k of placement d of job j. */
static node_id worker_node(const world *w, const job *j, const pol_decision *d, uint32_t k)
{
    if (d->n_nodes > 0) {
        return d->nodes[k];
    }
    return cluster_device_get(w->c, d->units[k * j->spec.req.per_worker])->node;
}

/* CPU and host memory of the workers placed on node n by d fit there. */
static bool node_room(const world *w, const job *j, const pol_decision *d, node_id n)
{
    uint64_t cpu = 0, mem = 0;
    for (uint32_t k = 0; k < j->spec.req.n_workers; k++) {
        if (worker_node(w, j, d, k) == n) {
            cpu += j->spec.pod.cpu_milli;
            mem += j->spec.pod.host_mem_bytes;
        }
    }
    return cpu <= cluster_node_cpu_free(w->c, n) && mem <= cluster_node_mem_free(w->c, n);
}

/* Check a placement against the real state; true when it may be applied. */
static bool valid_place(world *w, const pol_decision *d)
{
    if (d->job >= job_table_count(w->jobs)) {
        return false;
    }
    const job *j = job_table_get(w->jobs, d->job);
    if (j->state != JOB_QUEUED || d->n_units != job_units(&j->spec) ||
        (d->n_nodes != 0 && d->n_nodes != j->spec.req.n_workers) ||
        (j->spec.req.per_worker == 0 && d->n_nodes == 0)) {
        return false;
    }
    if (job_any_slice(&j->spec)) { /* one unit on a MIG instance of a reconfigurable GPU */
        const cluster_device *cd = d->n_units == 1 && d->units[0] < cluster_n_devices(w->c)
                                       ? cluster_device_get(w->c, d->units[0])
                                       : NULL;
        const cluster_gpu *cg = cd ? cluster_gpu_get(w->c, cd->gpu) : NULL;
        return cd && d->n_nodes == 0 && cd->profile && cd->active && !cd->cordoned &&
               cd->used < cd->slots && cg->reconfigurable && node_room(w, j, d, cd->node) &&
               job_pod_admits(&j->spec.pod, cd->node, cluster_node_meta(w->c, cd->node)) &&
               pol_job_slice_speed(&w->view, d->job, cd->gpu,
                                   (int)(cd->profile - cg->type->profiles)) > 0;
    }
    res_id r = 0;
    if (d->n_units > 0 && !cluster_resource_find(w->c, j->spec.req.resource, &r)) {
        return false;
    }
    uint32_t n_devs = cluster_n_devices(w->c), milli = share_of(&j->spec);
    if (milli && j->spec.req.per_worker != 1) {
        return false;
    }
    for (uint32_t k = 0; k < j->spec.req.n_workers; k++) {
        node_id n = worker_node(w, j, d, k);
        if (n >= cluster_n_nodes(w->c) || !node_room(w, j, d, n) ||
            !job_pod_admits(&j->spec.pod, n, cluster_node_meta(w->c, n))) {
            return false;
        }
    }
    bool ok = true;
    for (uint32_t k = 0; k < d->n_units && ok; k++) {
        dev_id dv = d->units[k];
        if (dv >= n_devs) {
            ok = false;
            break;
        }
        const cluster_device *cd = cluster_device_get(w->c, dv);
        node_id want = worker_node(w, j, d, k / j->spec.req.per_worker);
        ok = cd->resource == r && cd->node == want && !cd->cordoned && cd->active &&
             gpu_allowed(j->spec.pod.gpu_spec, cluster_gpu_get(w->c, cd->gpu));
        if (ok && milli) {
            w->count[dv] += milli;
            ok = w->count[dv] <= cluster_share_free(w->c, dv);
        } else if (ok) {
            ok = ++w->count[dv] <= cd->slots - cd->used;
        }
    }
    for (uint32_t k = 0; k < d->n_units; k++) { /* reset the scratch counts */
        if (d->units[k] < n_devs) {
            w->count[d->units[k]] = 0;
        }
    }
    return ok;
}

/* True when the device plugin refuses placement d: a worker asks for more than one unit and
 * is given a device that allows one per request. */
static bool refused_request(const world *w, const pol_decision *d)
{
    const job *j = job_table_get(w->jobs, d->job);
    if (j->spec.req.per_worker <= 1) {
        return false;
    }
    for (uint32_t k = 0; k < d->n_units; k++) {
        if (cluster_device_get(w->c, d->units[k])->one_per_request) {
            return true;
        }
    }
    return false;
}

static void push_ended(world *w, job_id id)
{
    if (w->n_ended == w->cap_ended) {
        w->cap_ended = w->cap_ended ? 2 * w->cap_ended : 16;
        w->ended = xrealloc(w->ended, w->cap_ended * sizeof(job_id), "ended jobs");
    }
    w->ended[w->n_ended++] = id;
}

/* Give back what running (or just-placed) job j holds: its units or shares, and its workers'
 * CPU and memory. */
static void release(world *w, const job *j)
{
    uint32_t milli = share_of(&j->spec);
    for (uint32_t k = 0; k < j->n_units; k++) {
        if (milli) {
            cluster_give_share(w->c, j->units[k], milli, j->spec.mem_bytes);
        } else {
            cluster_give(w->c, j->units[k], j->spec.mem_bytes);
        }
    }
    wjob *wj = wj_of(w, j->id);
    node_id *nodes = wj->nodes;
    for (uint32_t k = 0; nodes && k < j->spec.req.n_workers; k++) {
        cluster_node_give(w->c, nodes[k], j->spec.pod.cpu_milli, j->spec.pod.host_mem_bytes);
    }
    if (nodes != &wj->node1) {
        free(nodes);
    }
    wj->nodes = NULL;
}

/* Preempt running job id: it gives everything back and is queued again. */
static void requeue_running(world *w, job_id id, world_kill_info *info);

static void preempt(world *w, job_id id)
{
    requeue_running(w, id, NULL);
    job_note_preempted(w->jobs, id);
    w->tot.n_preemptions++;
}

static void apply(world *w)
{
    sim_time now = sim_now(w->ctx);
    for (size_t i = 0; i < decision_buf_count(w->dec); i++) {
        pol_decision d;
        decision_buf_get(w->dec, i, &d);
        if (d.kind == POL_PREEMPT) {
            if (d.job < job_table_count(w->jobs) &&
                job_table_get(w->jobs, d.job)->state == JOB_RUNNING) {
                preempt(w, d.job);
            } else {
                w->tot.n_rejected++;
            }
            continue;
        }
        if (d.kind == POL_EVICT) { /* valid while the job runs */
            bool ok = d.job < job_table_count(w->jobs) &&
                      job_table_get(w->jobs, d.job)->state == JOB_RUNNING;
            if (ok) {
                world_kill(w, d.job, NULL);
            }
            w->tot.n_rejected += !ok;
            continue;
        }
        if (d.kind == POL_RECONFIGURE) { /* the reconfiguration component checks and applies */
            w->tot.n_rejected += !(w->reconf_fn && w->reconf_fn(w, w->reconf_ctx, &d));
            continue;
        }
        if (d.kind != POL_PLACE || !valid_place(w, &d)) {
            w->tot.n_rejected++;
            continue;
        }
        if (refused_request(w, &d)) {
            w->tot.n_queued--;
            job_fail_request(w->jobs, d.job, now, d.units, d.n_units);
            w->tot.n_failed_request++;
            push_ended(w, d.job);
            continue;
        }
        const job *j = job_table_get(w->jobs, d.job);
        uint64_t mem = j->spec.mem_bytes;
        uint32_t taken = 0, milli = share_of(&j->spec);
        bool oom = false;
        for (; taken < d.n_units; taken++) {
            if (!cluster_mem_fits(w->c, d.units[taken], mem) ||
                (milli && !cluster_share_mem_fits(w->c, d.units[taken], milli, mem))) {
                oom = true;
                break;
            }
            if (milli) {
                cluster_take_share(w->c, d.units[taken], milli, mem);
            } else {
                cluster_take(w->c, d.units[taken], mem);
            }
        }
        w->tot.n_queued--;
        if (oom) {
            for (uint32_t k = 0; k < taken; k++) {
                if (milli) {
                    cluster_give_share(w->c, d.units[k], milli, mem);
                } else {
                    cluster_give(w->c, d.units[k], mem);
                }
            }
            job_fail_oom(w->jobs, d.job, now, d.units, d.n_units);
            w->tot.n_oom++;
            push_ended(w, d.job);
            continue;
        }
        wjob *wj = wj_of(w, d.job);
        node_id *nodes = j->spec.req.n_workers == 1
                             ? &wj->node1
                             : xcalloc(j->spec.req.n_workers, sizeof(node_id), "worker nodes");
        for (uint32_t k = 0; k < j->spec.req.n_workers; k++) {
            nodes[k] = worker_node(w, j, &d, k);
            cluster_node_take(w->c, nodes[k], j->spec.pod.cpu_milli, j->spec.pod.host_mem_bytes);
        }
        wj->nodes = nodes;
        job_start(w->jobs, d.job, now, d.units, d.n_units);
        w->tot.n_running++;
        start_progress(w, d.job);
        rerate_neighbours(w, job_table_get(w->jobs, d.job));
        notify(w, d.job, WORLD_JOB_STARTED);
    }
    decision_buf_clear(w->dec);
}

/* Job id was queued (submitted, or killed and queued again): the scheduler hears of it, or,
 * for a job asking for any MIG slice, the component that places those. */
static void tell_queued(world *w, job_id id)
{
    w->view.now = sim_now(w->ctx);
    if (job_any_slice(&job_table_get(w->jobs, id)->spec)) {
        if (w->slice_fn) {
            w->slice_fn(w, w->slice_ctx, id);
        }
        return;
    }
    w->pol->on_arrival(w->pol_state, &w->view, id, w->dec);
}

/* Job id ended: the scheduler hears of it; of an any-slice job's end only that capacity
 * changed (it never placed it). */
static void tell_ended(world *w, job_id id)
{
    w->view.now = sim_now(w->ctx);
    if (!job_any_slice(&job_table_get(w->jobs, id)->spec)) {
        w->pol->on_finish(w->pol_state, &w->view, id, w->dec);
    } else if (w->pol->on_capacity) {
        w->pol->on_capacity(w->pol_state, &w->view, w->dec);
    }
}

/* Tell the policy about jobs that ended while applying decisions, until none is left. */
/* Jobs killed (a fault, an eviction) are queued again: the policy hears of them as arrivals,
 * in kill order. */
static void drain_killed(world *w)
{
    for (size_t i = 0; i < w->n_killed; i++) { /* apply may kill more: n_killed grows */
        tell_queued(w, w->killed[i]);
        apply(w);
    }
    w->n_killed = 0;
}

static void drain_ended(world *w)
{
    while (w->n_ended > 0 || w->n_killed > 0) {
        if (w->n_ended == 0) {
            drain_killed(w);
            continue;
        }
        job_id id = w->ended[--w->n_ended];
        tell_ended(w, id);
        apply(w);
    }
}

/* Scheduling cycles of a policy with `pick`, until it has nothing more to do now. */
static void run_cycles(world *w)
{
    if (!w->pol->pick) {
        return;
    }
    for (;;) {
        w->view.now = sim_now(w->ctx);
        if (!w->pol->pick(w->pol_state, &w->view, w->dec)) {
            decision_buf_clear(w->dec);
            return;
        }
        apply(w);
        drain_ended(w);
    }
}

/* ---- events -------------------------------------------------------------------------------- */

/* Running job id is done now: its units go back and the policy hears of it. */
static void finish_job(world *w, job_id id)
{
    sim_time now = sim_now(w->ctx);
    const job *j = job_table_get(w->jobs, id);
    release(w, j);
    job_finish(w->jobs, id, now);
    stop_progress(w, id);
    w->tot.n_running--;
    w->tot.n_done++;
    rerate_neighbours(w, j);
    notify(w, id, WORLD_JOB_ENDED);
    tell_ended(w, id);
    apply(w);
    drain_ended(w);
    run_cycles(w);
    record(w);
}

static void on_done(fluid_sys *sys, fluid_act_id act, void *user)
{
    (void)sys;
    (void)act;
    wjob *wj = user;
    finish_job(wj->w, wj->id);
}

/* Jobs submitted early (world_submit_now) are no longer pending: the arrivals skip them. */
static void skip_submitted(world *w)
{
    while (w->next_arrival < job_table_count(w->jobs) &&
           job_table_get(w->jobs, w->next_arrival)->state != JOB_PENDING) {
        w->next_arrival++;
    }
}

static void schedule_next_arrival(world *w);

static void on_arrival(sim_ctx *ctx, const sim_event *ev)
{
    world *w = ev->user;
    sim_time now = sim_now(ctx);
    /* between events nobody holds an ended job: their full pages may leave memory */
    job_table_spill(w->jobs);
    /* every job submitted at this instant, in id order */
    skip_submitted(w);
    while (w->next_arrival < job_table_count(w->jobs) &&
           job_table_get(w->jobs, w->next_arrival)->spec.submit == now) {
        job_id id = w->next_arrival++;
        job_submit(w->jobs, id, now);
        w->tot.n_pending--;
        w->tot.n_queued++;
        tell_queued(w, id);
        apply(w);
        drain_ended(w);
        run_cycles(w);
        skip_submitted(w);
    }
    record(w);
    schedule_next_arrival(w);
}

static void schedule_next_arrival(world *w)
{
    skip_submitted(w);
    if (w->next_arrival >= job_table_count(w->jobs)) {
        return;
    }
    sim_time at = job_table_get(w->jobs, w->next_arrival)->spec.submit;
    SIM_ASSERT(at >= sim_now(w->ctx)); /* jobs are chronological */
    sim_schedule_at(w->ctx, at, PRIO_ARRIVAL, on_arrival, w, (sim_payload){{0, 0}});
}

/* ---- invariants (sim_verify) ---------------------------------------------------------------- */

typedef struct world_comp {
    const world *w;
} world_comp;

static int comp_init(sim_ctx *ctx, void *state, const void *arg)
{
    (void)ctx;
    ((world_comp *)state)->w = arg;
    return 0;
}

static int comp_verify(const sim_ctx *ctx, const void *state, char *why, size_t why_len)
{
    (void)ctx;
    const world *w = ((const world_comp *)state)->w;
    uint32_t n_devs = cluster_n_devices(w->c);
    uint32_t *held = xcalloc(n_devs ? n_devs : 1, sizeof(uint32_t), "verify");
    uint32_t by_state[JOB_FAILED_REQUEST + 1] = {0};
    uint32_t *share = xcalloc(n_devs ? n_devs : 1, sizeof(uint32_t), "verify");
    for (job_id k = 0; k < job_table_count(w->jobs); k++) {
        const job *j = job_table_get(w->jobs, k);
        by_state[j->state]++;
        for (uint32_t u = 0; j->state == JOB_RUNNING && u < j->n_units; u++) {
            if (share_of(&j->spec)) {
                share[j->units[u]] += share_of(&j->spec);
            } else {
                held[j->units[u]]++;
            }
        }
    }
    for (dev_id d = 0; d < n_devs; d++) { /* shares of a GPU hold one unit together */
        const cluster_device *cd = cluster_device_get(w->c, d);
        held[d] += share[d] > 0;
        if (cd->shareable && cd->milli_used != share[d] + (held[d] && !share[d] ? MILLI_PER_GPU : 0u)) {
            snprintf(why, why_len, "device %u: %u milli-GPU held, running jobs hold %u",
                     (unsigned)d, (unsigned)cd->milli_used, (unsigned)share[d]);
            free(share);
            free(held);
            return SIM_ERANGE;
        }
    }
    int rc = 0;
    uint32_t sms_busy = 0;
    for (dev_id d = 0; d < n_devs; d++) {
        const cluster_device *cd = cluster_device_get(w->c, d);
        sms_busy += cd->used > 0 ? (uint32_t)cd->sms : 0;
    }
    if (sms_busy != cluster_sms_busy(w->c)) {
        snprintf(why, why_len, "busy SMs %u, the cluster counts %u", (unsigned)sms_busy,
                 (unsigned)cluster_sms_busy(w->c));
        rc = SIM_ERANGE;
    }
    for (dev_id d = 0; d < n_devs && rc == 0; d++) {
        const cluster_device *cd = cluster_device_get(w->c, d);
        if (cd->used != held[d] || cd->used > cd->slots) {
            snprintf(why, why_len, "device %u: %u units in use, running jobs hold %u, slots %u",
                     (unsigned)d, (unsigned)cd->used, (unsigned)held[d], (unsigned)cd->slots);
            rc = SIM_ERANGE;
        }
    }
    /* the per-GPU index of running jobs (world_gpu_jobs) accounts for every unit in use */
    memset(held, 0, (n_devs ? n_devs : 1) * sizeof(uint32_t));
    for (job_id k = 0; k < job_table_count(w->jobs); k++) { /* share: GPU not yet counted */
        const job *j = job_table_get(w->jobs, k);
        for (uint32_t u = 0; j->state == JOB_RUNNING && u < j->n_units; u++) {
            share[j->units[u]] = 1;
        }
    }
    for (gpu_id g = 0; g < cluster_n_gpus(w->c) && rc == 0; g++) {
        uint32_t n_shared = 0;
        for (uint32_t i = 0; i < w->gpu_run[g].n && rc == 0; i++) {
            const job *j = job_table_get(w->jobs, gpu_jobs_clist(&w->gpu_run[g])[i]);
            n_shared += j->state == JOB_RUNNING && !wj_get(w, j->id)->alone;
            uint32_t on_g = 0;
            for (uint32_t u = 0; u < j->n_units; u++) {
                dev_id x = j->units[u];
                if (cluster_device_get(w->c, x)->gpu == g) {
                    /* shares of a GPU hold one unit together: count the first only */
                    held[x] += share_of(&j->spec) ? share[x] != 0 : 1;
                    share[x] = share_of(&j->spec) ? 0 : share[x];
                    on_g++;
                }
            }
            if (j->state != JOB_RUNNING || on_g == 0) {
                snprintf(why, why_len, "GPU %u lists job %u, which holds no unit on it",
                         (unsigned)g, (unsigned)j->id);
                rc = SIM_ERANGE;
            }
        }
        if (rc == 0 && n_shared != w->gpu_run[g].n_shared) {
            snprintf(why, why_len, "GPU %u counts %u jobs whose rate does not stand alone, its "
                     "list %u", (unsigned)g, (unsigned)w->gpu_run[g].n_shared, (unsigned)n_shared);
            rc = SIM_ERANGE;
        }
    }
    for (dev_id d = 0; d < n_devs && rc == 0; d++) {
        if (cluster_device_get(w->c, d)->used != held[d]) {
            snprintf(why, why_len, "device %u: %u units in use, its GPU's job index holds %u",
                     (unsigned)d, (unsigned)cluster_device_get(w->c, d)->used, (unsigned)held[d]);
            rc = SIM_ERANGE;
        }
    }
    if (rc == 0 &&
        (by_state[JOB_RUNNING] != w->tot.n_running || w->n_wj != w->tot.n_running ||
         by_state[JOB_QUEUED] != w->tot.n_queued || by_state[JOB_DONE] != w->tot.n_done ||
         by_state[JOB_FAILED_OOM] != w->tot.n_oom ||
         by_state[JOB_FAILED_REQUEST] != w->tot.n_failed_request ||
         by_state[JOB_PENDING] != w->tot.n_pending)) {
        snprintf(why, why_len, "job counts disagree with job states");
        rc = SIM_ERANGE;
    }
    free(held);
    free(share);
    return rc;
}

static const sim_component_ops world_comp_ops = {
    .name = "world",
    .state_size = sizeof(world_comp),
    .init = comp_init,
    .verify = comp_verify,
};

/* ---- lifecycle ----------------------------------------------------------------------------- */

int world_create(const world_cfg *cfg, job_table *jobs, diag *d, src_loc at, world **out)
{
    char why[256];
    cluster *c = NULL;
    int rc = cluster_create(cfg->cluster, &c, why, sizeof why);
    if (rc) {
        diag_error(d, at, "cluster", "%s", why);
        job_table_destroy(jobs);
        return rc;
    }
    world *w = xcalloc(1, sizeof *w, "world");
    w->c = c;
    w->jobs = jobs;
    w->pol = cfg->policy;
    w->pol_state = xcalloc(1, cfg->policy->state_size ? cfg->policy->state_size : 1, "policy");
    if (cfg->policy->init && cfg->policy->init(w->pol_state, cfg->params, d) != 0) {
        free(w->pol_state);
        w->pol_state = NULL; /* init failed: fini must not run */
        world_destroy(w);
        return SIM_EINPUT;
    }
    w->ctx = sim_create();
    w->fluid = fluid_create(w->ctx);
    sim_component_add(w->ctx, &world_comp_ops, w, NULL);
    sim_set_verify_every(w->ctx, cfg->verify_every);
    w->dec = decision_buf_create();
    w->rate = cfg->rate;
    w->rate_ctx = cfg->rate_ctx;
    w->rate_alone = cfg->rate_alone;
    w->until = cfg->until;
    w->checkpoint_s = cfg->checkpoint_s > 0 ? cfg->checkpoint_s : 0;
    w->view = (cluster_view){.c = c,
                             .jobs = jobs,
                             .now = 0,
                             .seed = cfg->seed,
                             .slice_speed = cfg->slice_speed,
                             .slice_ctx = cfg->slice_ctx};
    uint32_t n_devs = cluster_n_devices(c);
    w->count = xcalloc(n_devs ? n_devs : 1, sizeof(uint32_t), "validation counts");
    w->sslot[0].blk = w->sslot[1].blk = SIZE_MAX;
    size_t n_jobs = job_table_count(jobs);
    uint32_t n_gpus = cluster_n_gpus(c);
    w->gpu_run = xcalloc(n_gpus ? n_gpus : 1, sizeof *w->gpu_run, "gpu jobs");
    w->tot.n_pending = (uint32_t)n_jobs;
    for (gpu_id g = 0; g < cluster_n_gpus(c); g++) {
        const gpu_type *t = cluster_gpu_get(c, g)->type;
        w->tot.sms_total += (uint32_t)t->sms_total;
        if (t->sms_total <= 0) {
            w->tot.no_sms_type = w->tot.n_gpus_no_sms++ ? w->tot.no_sms_type : t->name;
        }
    }
    *out = w;
    return 0;
}

void world_destroy(world *w)
{
    if (!w) {
        return;
    }
    if (w->pol_state && w->pol->fini) {
        w->pol->fini(w->pol_state);
    }
    free(w->pol_state);
    free(w->act);
    free(w->ku);
    sim_destroy(w->ctx);
    decision_buf_destroy(w->dec);
    for (size_t i = 0; i < w->cap_wj; i++) {
        if (w->wj[i].key != WJ_EMPTY) {
            if (w->wj[i].val->nodes != &w->wj[i].val->node1) {
                free(w->wj[i].val->nodes);
            }
            free(w->wj[i].val);
        }
    }
    job_table_destroy(w->jobs);
    for (gpu_id g = 0; w->gpu_run && g < cluster_n_gpus(w->c); g++) {
        free(w->gpu_run[g].ext);
    }
    cluster_destroy(w->c);
    free(w->wj);
    for (size_t i = 0; i < w->n_wj_spare; i++) {
        free(w->wj_spare[i]);
    }
    free(w->wj_spare);
    free(w->gang);
    free(w->gpu_run);
    free(w->ended);
    free(w->killed);
    free(w->timers);
    free(w->obs);
    free(w->count);
    for (size_t b = 0; b < w->n_sblk; b++) {
        free(w->sblk[b]);
    }
    free(w->sblk);
    free(w->sslot[0].s);
    free(w->sslot[1].s);
    free(w->sblk_len);
    free(w->pack);
    free(w);
}

static void report_progress(const sim_ctx *ctx, void *user)
{
    world *w = user;
    uint64_t n = sim_get_counters(ctx)->n_executed;
    if (w->max_events > 0 && n >= w->max_events) {
        sim_stop(w->ctx);
    }
    if (!w->progress || (w->progress_every > 0 && n % w->progress_every != 0)) {
        return;
    }
    world_progress p = {.now = sim_now(ctx),
                        .until = w->until,
                        .n_events = sim_get_counters(ctx)->n_executed,
                        .n_jobs = job_table_count(w->jobs),
                        .n_ended = w->tot.n_done + w->tot.n_oom + w->tot.n_failed_request,
                        .n_running = w->tot.n_running,
                        .n_queued = w->tot.n_queued};
    w->progress(w->progress_user, &p);
}

/* The engine's observer: every event while a bound is set (it must stop on the event that
 * reaches it), else every progress_every events while a display is set, else none. */
static void arm_observer(world *w)
{
    uint64_t every = w->max_events > 0 ? 1 : w->progress ? w->progress_every : 0;
    sim_set_observer(w->ctx, every, report_progress, w);
}

void world_set_progress(world *w, uint64_t every_events, world_progress_fn *fn, void *user)
{
    w->progress = fn;
    w->progress_user = user;
    w->progress_every = fn ? every_events : 0;
    arm_observer(w);
}

void world_set_max_events(world *w, uint64_t n)
{
    w->max_events = n;
    arm_observer(w);
}

void world_stop(world *w)
{
    sim_stop(w->ctx);
}

void world_run(world *w)
{
    record(w); /* the empty cluster at t = 0 */
    schedule_next_arrival(w);
    sim_run(w->ctx, w->until);
    w->tot.horizon = w->until != SIM_TIME_MAX && w->until > w->tot.end ? w->until : w->tot.end;
    w->tot.n_events = sim_get_counters(w->ctx)->n_executed;
}

const cluster *world_cluster(const world *w)
{
    return w->c;
}

const job_table *world_jobs(const world *w)
{
    return w->jobs;
}

const job_id *world_gang_jobs(const world *w, size_t *n)
{
    *n = w->n_gang;
    return w->gang;
}

const job_id *world_gpu_jobs(const world *w, gpu_id g, uint32_t *n)
{
    SIM_ASSERT(g < cluster_n_gpus(w->c));
    *n = w->gpu_run[g].n;
    return gpu_jobs_clist(&w->gpu_run[g]);
}

size_t world_n_samples(const world *w)
{
    return w->n_samples;
}

const world_sample *world_sample_get(const world *w, size_t i)
{
    SIM_ASSERT(i < w->n_samples);
    return &sample_block(w, i)[i % SAMPLE_BLOCK];
}

const world_sample *world_sample_span(const world *w, size_t i, size_t *n, const uint32_t **res)
{
    SIM_ASSERT(i < w->n_samples);
    world_sample *blk = sample_block(w, i);
    size_t k = i % SAMPLE_BLOCK, end = i - k + SAMPLE_BLOCK;
    *n = (end < w->n_samples ? end : w->n_samples) - i;
    *res = block_res(blk) + k * cluster_n_resources(w->c);
    return blk + k;
}

void world_set_sample_spill(world *w, const job_spill_ops *ops, void *ctx)
{
    w->sops = ops;
    w->sops_ctx = ctx;
}

world_totals world_get_totals(const world *w)
{
    return w->tot;
}

/* ---- component hooks (faults, re-partitioning) --------------------------------------------- */

static void on_timer(sim_ctx *ctx, const sim_event *ev)
{
    (void)ctx;
    world *w = ev->user;
    uint64_t client = ev->data.u64[0];
    SIM_ASSERT(client < w->n_timers);
    w->timers[client].fn(w, w->timers[client].ctx, ev->data.u64[1]);
}

sim_time world_now(const world *w)
{
    return sim_now(w->ctx);
}

uint32_t world_timer_client(world *w, world_timer_fn *fn, void *ctx)
{
    w->timers = xrealloc(w->timers, (w->n_timers + 1) * sizeof *w->timers, "world timers");
    w->timers[w->n_timers] = (wtimer){fn, ctx};
    return w->n_timers++;
}

void world_at(world *w, sim_time t, uint32_t client, uint64_t tag)
{
    SIM_ASSERT(client < w->n_timers && t >= sim_now(w->ctx));
    sim_schedule_at(w->ctx, t, PRIO_TIMER, on_timer, w, (sim_payload){.u64 = {client, tag}});
}

/* Stop running job id, give back what it holds and queue it again with the work of its last
 * checkpoint kept (info as world_kill's). */
static void requeue_running(world *w, job_id id, world_kill_info *info)
{
    const job *j = job_table_get(w->jobs, id);
    SIM_ASSERT(j->state == JOB_RUNNING);
    sim_time now = sim_now(w->ctx);
    advance_checkpoint(w, wj_of(w, id));
    const wjob *wj = wj_get(w, id);
    double p = wj->seg_p, kept = wj->ckpt_p;
    if (info) {
        *info = (world_kill_info){.kept_s = kept,
                                  .lost_work_s = p - kept,
                                  .lost_wall_s = sim_time_to_s(now - wj->ckpt_t)};
    }
    SIM_ASSERT(fluid_cancel(w->fluid, wj->act, NULL));
    for (uint32_t u = 0; u < j->n_units; u++) { /* the run's units, before they are lost */
        if (w->n_ku == w->cap_ku) {
            w->cap_ku = w->cap_ku ? 2 * w->cap_ku : 64;
            w->ku = xrealloc(w->ku, w->cap_ku * sizeof *w->ku, "killed runs");
        }
        w->ku[w->n_ku++] = (world_killed_unit){j->run_start, now, j->units[u], id};
    }
    release(w, j);
    stop_progress(w, id);
    rerate_neighbours(w, j); /* before the requeue forgets the placement */
    job_requeue(w->jobs, id, now, kept);
    w->tot.n_running--;
    w->tot.n_queued++;
    notify(w, id, WORLD_JOB_KILLED);
}

void world_kill(world *w, job_id id, world_kill_info *info)
{
    requeue_running(w, id, info);
    if (w->n_killed == w->cap_killed) {
        w->cap_killed = w->cap_killed ? 2 * w->cap_killed : 16;
        w->killed = xrealloc(w->killed, w->cap_killed * sizeof(job_id), "killed jobs");
    }
    w->killed[w->n_killed++] = id;
}

void world_set_cordoned(world *w, dev_id d, bool on)
{
    cluster_set_cordoned(w->c, d, on);
}

void world_settle(world *w)
{
    w->view.now = sim_now(w->ctx);
    apply(w); /* decisions a component's policy left in world_decisions */
    drain_ended(w);
    if (w->pol->on_capacity) {
        w->pol->on_capacity(w->pol_state, &w->view, w->dec);
        apply(w);
        drain_ended(w);
    }
    run_cycles(w);
    record(w);
}

void world_observe(world *w, world_observer_fn *fn, void *ctx)
{
    w->obs = xrealloc(w->obs, (w->n_obs + 1) * sizeof *w->obs, "world observers");
    w->obs[w->n_obs++] = (wobserver){fn, ctx};
}

double world_job_rate(const world *w, job_id j)
{
    SIM_ASSERT(j < job_table_count(w->jobs) && job_table_get(w->jobs, j)->state == JOB_RUNNING);
    return wj_get(w, j)->rate;
}

void world_set_slice_handler(world *w, world_slice_fn *fn, void *ctx)
{
    w->slice_fn = fn;
    w->slice_ctx = ctx;
}

void world_set_reconfigure_handler(world *w, world_reconfigure_fn *fn, void *ctx)
{
    w->reconf_fn = fn;
    w->reconf_ctx = ctx;
}

decision_buf *world_decisions(world *w)
{
    return w->dec;
}

const cluster_view *world_view(world *w)
{
    w->view.now = sim_now(w->ctx);
    return &w->view;
}

void world_set_mig_mode(world *w, gpu_id g, bool on)
{
    cluster_set_mig_mode(w->c, g, on);
}

void world_set_active(world *w, dev_id d, bool on)
{
    if (cluster_device_get(w->c, d)->active == on) {
        return;
    }
    cluster_set_active(w->c, d, on);
    if (w->n_act == w->cap_act) {
        w->cap_act = w->cap_act ? 2 * w->cap_act : 64;
        w->act = xrealloc(w->act, w->cap_act * sizeof *w->act, "layout changes");
    }
    w->act[w->n_act++] = (world_active_change){sim_now(w->ctx), d, on};
}

const world_active_change *world_active_log(const world *w, size_t *n)
{
    *n = w->n_act;
    return w->act;
}

const world_killed_unit *world_killed_units(const world *w, size_t *n)
{
    *n = w->n_ku;
    return w->ku;
}

void world_submit_now(world *w, job_id id)
{
    job_submit_early(w->jobs, id, sim_now(w->ctx));
    w->tot.n_pending--;
    w->tot.n_queued++;
    tell_queued(w, id);
    apply(w);
    drain_ended(w);
}

void world_end_job(world *w, job_id id)
{
    SIM_ASSERT(job_table_get(w->jobs, id)->state == JOB_RUNNING);
    SIM_ASSERT(fluid_cancel(w->fluid, wj_get(w, id)->act, NULL));
    finish_job(w, id);
}
