/* model/cluster/service.c - inference services (see service.h). */
#include "model/cluster/service.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/physics/predict.h"
#include "sim/err.h"
#include "sim/xalloc.h"

/* Latency histogram: HIST_PER_DECADE bins per decade from HIST_MIN_S. */
#define HIST_MIN_S 1e-6
#define HIST_PER_DECADE 1000
#define HIST_DECADES 13
#define HIST_BINS (HIST_PER_DECADE * HIST_DECADES)

/* Timer tags: kind in bits 62-63, replica in bits 40-61, generation in bits 0-39. */
#define TAG_ARRIVAL 0ull
#define TAG_DONE 1ull
#define TAG_SCALE 2ull
#define HPA_TOLERANCE 0.1 /* kube-controller-manager --horizontal-pod-autoscaler-tolerance */
#define GEN_MASK ((1ull << 40) - 1)

static const double TWO_PI = 6.283185307179586477;

typedef struct replica {
    bool running, busy;
    bool spare;        /* a pending pod the autoscaler has not submitted */
    bool stopped;      /* ended by a scale-down */
    double busy_s;     /* time spent serving batches, for the utilisation rule */
    sim_time batch_t0; /* start of the batch in flight */
    uint64_t gen;      /* bumped when a batch is abandoned: its completion timer is stale */
    sim_time since;    /* running since */
    double share;      /* GPU share of its units */
    uint32_t n_batch;  /* requests in the batch */
    sim_time *batch;   /* their arrival times (max_batch) */
} replica;

struct service {
    world *w;
    service_spec spec;
    rng_stream *rng;
    uint32_t client;
    replica *rep;
    sim_time *q; /* FCFS queue of arrival times: ring buffer */
    size_t q_head, q_n, q_cap;
    size_t next_trace;
    double t_arr_s; /* time of the last arrival drawn, s */
    uint64_t *hist;
    service_stats st;
    double sum_latency, sum_batch;
    uint32_t n_running; /* replicas running now */
    double running_s;   /* integral of n_running over time */
    sim_time running_t; /* time of the last change of n_running */
    sim_time low_since; /* autoscaler: recommendations below the count since, or -1 */
    uint32_t low_max;   /* the highest of those recommendations */
    double busy_prev_s; /* busy time summed at the last autoscaler step */
};

static job_id replica_job(const service *s, uint32_t i)
{
    return s->spec.replica_ids ? s->spec.replica_ids[i] : s->spec.first_replica + i;
}

/* Index of replica job j, or n_replicas when j serves no replica of s. */
static uint32_t replica_of(const service *s, job_id j)
{
    uint32_t i = 0;
    while (i < s->spec.n_replicas && replica_job(s, i) != j) {
        i++;
    }
    return i;
}

static void count_running(service *s, sim_time now, int delta)
{
    s->running_s += sim_time_to_s(now - s->running_t) * s->n_running;
    s->running_t = now;
    s->n_running = (uint32_t)((int)s->n_running + delta);
    s->st.max_running = s->n_running > s->st.max_running ? s->n_running : s->st.max_running;
}

/* ---- queue --------------------------------------------------------------------------------- */

static void q_grow(service *s)
{
    size_t cap = s->q_cap ? 2 * s->q_cap : 256;
    sim_time *q = xcalloc(cap, sizeof *q, "service queue");
    for (size_t i = 0; i < s->q_n; i++) {
        q[i] = s->q[(s->q_head + i) % s->q_cap];
    }
    free(s->q);
    s->q = q;
    s->q_cap = cap;
    s->q_head = 0;
}

static void q_push_back(service *s, sim_time t)
{
    if (s->q_n == s->q_cap) {
        q_grow(s);
    }
    s->q[(s->q_head + s->q_n++) % s->q_cap] = t;
}

static void q_push_front(service *s, sim_time t)
{
    if (s->q_n == s->q_cap) {
        q_grow(s);
    }
    s->q_head = (s->q_head + s->q_cap - 1) % s->q_cap;
    s->q[s->q_head] = t;
    s->q_n++;
}

static sim_time q_pop(service *s)
{
    SIM_ASSERT(s->q_n > 0);
    sim_time t = s->q[s->q_head];
    s->q_head = (s->q_head + 1) % s->q_cap;
    s->q_n--;
    return t;
}

/* ---- arrivals ------------------------------------------------------------------------------ */

double service_steps_next(const double *step_t, const double *step_level, size_t n_steps,
                          double rate_per_s, double from_s, double need, size_t *k)
{
    double t = from_s;
    while (*k < n_steps && step_t[*k] <= t) {
        (*k)++;
    }
    for (;;) {
        double rate = *k ? rate_per_s * step_level[*k - 1] : 0;
        double seg_end = *k < n_steps ? step_t[*k] : (double)INFINITY;
        if (rate > 0) {
            double dt = need / rate;
            if (t + dt < seg_end) {
                return t + dt;
            }
            need -= rate * (seg_end - t);
            if (need <= 0) {
                return seg_end;
            }
        }
        if (*k == n_steps) {
            return (double)INFINITY;
        }
        t = seg_end;
        (*k)++;
    }
}

/* Next arrival time after the last one, seconds; INFINITY when there is none. */
static double next_arrival_s(service *s)
{
    const service_spec *sp = &s->spec;
    switch (sp->arrival) {
    case SERVICE_TRACE:
        return s->next_trace < sp->n_trace ? sp->trace_s[s->next_trace++] : (double)INFINITY;
    case SERVICE_STEPS: {
        double need = sp->even ? 1.0 : rng_exponential(s->rng, 1.0);
        return service_steps_next(sp->step_t, sp->step_level, sp->n_steps, sp->rate_per_s,
                                  s->t_arr_s, need, &s->next_trace);
    }
    case SERVICE_DIURNAL: {
        /* thinning (Lewis and Shedler 1979): candidates at the peak rate, kept with
         * probability rate(t) / peak rate */
        double peak = sp->rate_per_s * (1 + sp->amplitude);
        double t = s->t_arr_s;
        for (;;) {
            t += rng_exponential(s->rng, 1.0 / peak);
            double r = sp->rate_per_s *
                       (1 + sp->amplitude * cos(TWO_PI * (t - sp->peak_s) / sp->period_s));
            if (rng_uniform01(s->rng) * peak < r || t >= sim_time_to_s(sp->end)) {
                return t;
            }
        }
    }
    case SERVICE_POISSON:
        break;
    }
    return s->t_arr_s + rng_exponential(s->rng, 1.0 / sp->rate_per_s);
}

static void schedule_arrival(service *s)
{
    double t = next_arrival_s(s);
    s->t_arr_s = t;
    if (!(t < sim_time_to_s(s->spec.end))) {
        return;
    }
    sim_time at = sim_time_from_s(t);
    if (at < world_now(s->w)) { /* a trace may list equal times; rounding never goes back */
        at = world_now(s->w);
    }
    if (at >= s->spec.end) {
        return;
    }
    world_at(s->w, at, s->client, TAG_ARRIVAL << 62);
}

/* ---- serving ------------------------------------------------------------------------------- */

static void record_latency(service *s, double lat)
{
    s->st.n_done++;
    s->sum_latency += lat;
    s->st.max_s = lat > s->st.max_s ? lat : s->st.max_s;
    s->st.n_met += lat <= s->spec.slo_s;
    long k = lat > HIST_MIN_S ? lround(floor(log10(lat / HIST_MIN_S) * HIST_PER_DECADE)) : 0;
    k = k < 0 ? 0 : k >= HIST_BINS ? HIST_BINS - 1 : k;
    s->hist[k]++;
}

static void dispatch(service *s)
{
    for (uint32_t i = 0; i < s->spec.n_replicas && s->q_n > 0; i++) {
        replica *r = &s->rep[i];
        if (!r->running || r->busy) {
            continue;
        }
        uint32_t b = s->q_n < s->spec.max_batch ? (uint32_t)s->q_n : s->spec.max_batch;
        for (uint32_t k = 0; k < b; k++) {
            r->batch[k] = q_pop(s);
        }
        r->n_batch = b;
        r->busy = true;
        r->batch_t0 = world_now(s->w);
        job_id j = replica_job(s, i);
        double t = s->spec.batch_time ? s->spec.batch_time(s->spec.batch_ctx, s->w, j, b)
                                      : service_physics_batch_time(&s->spec, s->w, j, b);
        SIM_ASSERT(t > 0 && isfinite(t));
        world_at(s->w, world_now(s->w) + sim_time_from_s(t), s->client,
                 TAG_DONE << 62 | (uint64_t)i << 40 | (r->gen & GEN_MASK));
    }
}

/* Replicas submitted and not ended (queued or running). */
static uint32_t active(const service *s)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->spec.n_replicas; i++) {
        n += !s->rep[i].spare && !s->rep[i].stopped;
    }
    return n;
}

/* One autoscaler step (see service.h). */
static void autoscale(service *s)
{
    const service_autoscale *a = &s->spec.autoscale;
    sim_time now = world_now(s->w);
    uint32_t cur = active(s);
    double busy = 0;
    for (uint32_t i = 0; i < s->spec.n_replicas; i++) {
        const replica *r = &s->rep[i];
        busy += r->busy_s + (r->busy ? sim_time_to_s(now - r->batch_t0) : 0);
    }
    double want;
    if (a->metric == SERVICE_SCALE_QUEUE) {
        want = ceil((double)s->q_n / a->target);
    } else {
        double util = s->n_running ? (busy - s->busy_prev_s) / (a->interval_s * s->n_running) : 0;
        double ratio = util / a->target;
        want = fabs(ratio - 1) <= HPA_TOLERANCE ? cur : ceil(s->n_running * ratio);
    }
    s->busy_prev_s = busy;
    uint32_t desired = want < a->min ? a->min : want > a->max ? a->max : (uint32_t)want;
    if (desired >= cur) {
        s->low_since = -1;
    }
    for (uint32_t i = 0; i < s->spec.n_replicas && cur < desired; i++) {
        if (s->rep[i].spare) {
            s->rep[i].spare = false;
            world_submit_now(s->w, replica_job(s, i));
            s->st.n_scale_up++;
            cur++;
        }
    }
    if (cur < desired) {
        s->st.n_scale_denied++;
    }
    if (desired >= cur) {
        return;
    }
    if (s->low_since < 0) {
        s->low_since = now;
        s->low_max = desired;
    }
    s->low_max = desired > s->low_max ? desired : s->low_max;
    if (sim_time_to_s(now - s->low_since) < a->stabilization_s) {
        return;
    }
    for (uint32_t i = s->spec.n_replicas; i-- > 0 && cur > s->low_max;) {
        replica *r = &s->rep[i];
        if (r->running && !r->busy && !r->stopped) {
            r->stopped = true;
            world_end_job(s->w, replica_job(s, i));
            s->st.n_scale_down++;
            cur--;
        }
    }
    if (cur <= s->low_max) { /* done; busy replicas are tried again at the next step */
        s->low_since = -1;
    }
}

static void on_timer(world *w, void *ctx, uint64_t tag)
{
    service *s = ctx;
    sim_time now = world_now(w);
    if (tag >> 62 == TAG_SCALE) {
        autoscale(s);
        world_settle(w);
        world_at(w, now + sim_time_from_s(s->spec.autoscale.interval_s), s->client,
                 TAG_SCALE << 62);
        return;
    }
    if (tag >> 62 == TAG_ARRIVAL) {
        s->st.n_arrived++;
        q_push_back(s, now);
        schedule_arrival(s);
        dispatch(s);
        return;
    }
    uint32_t i = (uint32_t)((tag >> 40) & ((1u << 22) - 1));
    SIM_ASSERT(i < s->spec.n_replicas);
    replica *r = &s->rep[i];
    if ((tag & GEN_MASK) != (r->gen & GEN_MASK) || !r->busy) {
        return; /* the batch was abandoned (its replica was killed) */
    }
    for (uint32_t k = 0; k < r->n_batch; k++) {
        record_latency(s, sim_time_to_s(now - r->batch[k]));
    }
    s->st.n_batches++;
    s->sum_batch += r->n_batch;
    r->busy_s += sim_time_to_s(now - r->batch_t0);
    r->busy = false;
    r->n_batch = 0;
    dispatch(s);
}

static void on_job(world *w, void *ctx, job_id j, world_job_event ev)
{
    service *s = ctx;
    uint32_t idx = replica_of(s, j);
    if (idx == s->spec.n_replicas) {
        return;
    }
    replica *r = &s->rep[idx];
    sim_time now = world_now(w);
    if (ev == WORLD_JOB_STARTED) {
        const job *jb = job_table_get(world_jobs(w), j);
        r->share = 0;
        for (uint32_t u = 0; u < jb->n_units; u++) {
            r->share += cluster_unit_gpu_share(world_cluster(w), jb->units[u]);
        }
        r->running = true;
        r->since = now;
        count_running(s, now, +1);
        dispatch(s);
        return;
    }
    if (r->running) {
        s->st.gpu_s += sim_time_to_s(now - r->since) * r->share;
        count_running(s, now, -1);
    }
    r->running = false;
    if (r->busy) { /* its batch goes back to the head of the queue, oldest first */
        for (uint32_t k = r->n_batch; k-- > 0;) {
            q_push_front(s, r->batch[k]);
        }
        s->st.n_requeued += r->n_batch;
        r->busy = false;
        r->n_batch = 0;
        r->gen++;
    }
}

double service_physics_batch_time(void *ctx, const world *w, job_id r, uint32_t batch)
{
    const service_spec *sp = ctx;
    const job *j = job_table_get(world_jobs(w), r);
    const cluster *c = world_cluster(w);
    const cluster_device *d = cluster_device_get(c, j->units[0]);
    partition_cfg pc;
    partition_cfg_init(&pc, cluster_gpu_get(c, d->gpu)->type);
    pc.mig = d->profile;
    speed_result res;
    predict_unit_estimate(sp->profile, batch, &pc, sp->phys, &res);
    /* the run refuses a service whose profile does not fit its partition
     * (experiments/build_service.c) */
    SIM_ASSERT(res.outcome == SPEED_OK);
    return res.unit_time_s * wl_units_per_iter(sp->profile, batch) / world_job_rate(w, r);
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

service *service_create(world *w, const service_spec *spec, const rng_root *root)
{
    SIM_ASSERT(spec->max_batch >= 1 && spec->n_replicas >= 1 && spec->slo_s > 0);
    service *s = xcalloc(1, sizeof *s, "service");
    s->w = w;
    s->spec = *spec;
    s->rng = rng_stream_open(root, SERVICE_STREAM_ARRIVALS, spec->index);
    s->rep = xcalloc(spec->n_replicas, sizeof *s->rep, "service replicas");
    for (uint32_t i = 0; i < spec->n_replicas; i++) {
        s->rep[i].batch = xcalloc(spec->max_batch, sizeof(sim_time), "service batch");
    }
    s->hist = xcalloc(HIST_BINS, sizeof *s->hist, "service histogram");
    for (uint32_t i = spec->n_start ? spec->n_start : spec->n_replicas; i < spec->n_replicas; i++) {
        s->rep[i].spare = true;
    }
    s->low_since = -1;
    s->client = world_timer_client(w, on_timer, s);
    world_observe(w, on_job, s);
    if (spec->autoscale.metric != SERVICE_SCALE_NONE) {
        SIM_ASSERT(spec->autoscale.interval_s > 0 && spec->autoscale.target > 0 &&
                   spec->autoscale.min >= 1 && spec->autoscale.min <= spec->autoscale.max);
        world_at(w, world_now(w) + sim_time_from_s(spec->autoscale.interval_s), s->client,
                 TAG_SCALE << 62);
    }
    s->t_arr_s = sim_time_to_s(world_now(w));
    schedule_arrival(s);
    return s;
}

void service_destroy(service *s)
{
    if (!s) {
        return;
    }
    for (uint32_t i = 0; i < s->spec.n_replicas; i++) {
        free(s->rep[i].batch);
    }
    free(s->rep);
    free(s->q);
    free(s->hist);
    rng_stream_close(s->rng);
    free(s);
}

/* Latency at quantile q of the completed requests: the geometric middle of its bin. */
static double quantile(const service *s, double q)
{
    if (s->st.n_done == 0) {
        return 0;
    }
    uint64_t rank = (uint64_t)ceil(q * (double)s->st.n_done), seen = 0;
    rank = rank < 1 ? 1 : rank;
    for (int k = 0; k < HIST_BINS; k++) {
        seen += s->hist[k];
        if (seen >= rank) {
            return HIST_MIN_S * pow(10.0, (k + 0.5) / HIST_PER_DECADE);
        }
    }
    return s->st.max_s;
}

service_stats service_get_stats(const service *s)
{
    service_stats st = s->st;
    sim_time now = world_now(s->w);
    for (uint32_t i = 0; i < s->spec.n_replicas; i++) {
        if (s->rep[i].running) {
            st.gpu_s += sim_time_to_s(now - s->rep[i].since) * s->rep[i].share;
        }
    }
    st.mean_s = st.n_done ? s->sum_latency / (double)st.n_done : 0;
    st.p50_s = quantile(s, 0.50);
    st.p95_s = quantile(s, 0.95);
    st.p99_s = quantile(s, 0.99);
    st.attainment = st.n_arrived ? (double)st.n_met / (double)st.n_arrived : 1.0;
    double run_s = s->running_s + sim_time_to_s(now - s->running_t) * s->n_running;
    st.mean_running = now > 0 ? run_s / sim_time_to_s(now) : 0;
    st.mean_batch = st.n_batches ? s->sum_batch / (double)st.n_batches : 0;
    return st;
}
