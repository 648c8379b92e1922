#include "workloads/synth.h"

#include <math.h>
#include <stdlib.h>

#include "sim/xalloc.h"

double synth_draw(const synth_dist *d, rng_stream *s)
{
    switch (d->kind) {
    case SYNTH_FIXED:
        return d->a;
    case SYNTH_EXPONENTIAL:
        return rng_exponential(s, d->a);
    case SYNTH_UNIFORM:
        return d->a + (d->b - d->a) * rng_uniform01(s);
    case SYNTH_LOGNORMAL:
        /* median m of exp(N(zeta, sigma)) is exp(zeta) */
        return rng_lognormal(s, log(d->a), d->b);
    }
    SIM_ASSERT(!"unknown distribution");
    return 0;
}

/* One class's process: its streams and the next job it will give (drawn ahead). */
typedef struct class_state {
    rng_stream *arr, *dur;
    double at_s;   /* the last arrival drawn, s */
    size_t seq;    /* the next job's index in its class */
    bool has;      /* a next job is drawn: at, work_s */
    sim_time at;
    double work_s;
} class_state;

struct synth_stream {
    const synth_class *cls; /* borrowed */
    size_t n;
    sim_time horizon_ns;
    class_state *st;
};

/* Draw class c's next arrival (and its duration when it falls in the horizon). The draws are
 * those of the class's own streams in its own order, whatever the other classes do. */
static void draw_next(synth_stream *s, size_t c)
{
    const synth_class *k = &s->cls[c];
    class_state *st = &s->st[c];
    st->has = false;
    if (k->count != 0 && st->seq >= k->count) {
        return;
    }
    st->at_s += synth_draw(&k->interarrival_s, st->arr);
    /* A rate below ~1e-10/s draws an arrival past sim_time's range (+-292 years), so past any
     * horizon: stop before converting it (the conversion asserts). */
    if (!sim_time_s_in_range(st->at_s)) {
        return;
    }
    sim_time at = sim_time_from_s(st->at_s);
    if (at > s->horizon_ns) {
        return;
    }
    double work_s = synth_draw(&k->duration_s, st->dur);
    st->at = at;
    st->work_s = work_s < 1e-9 ? 1e-9 : work_s;
    st->has = true;
}

/* Jobs class k gives before the horizon: its arrivals alone, from a second copy of its stream. */
static size_t count_class(const synth_class *k, const rng_root *root, sim_time horizon_ns)
{
    rng_stream *arr = rng_stream_open(root, SYNTH_STREAM_ARRIVALS, rng_hash64(k->name));
    double at_s = k->start_s;
    size_t n = 0;
    for (size_t seq = 0; k->count == 0 || seq < k->count; seq++) {
        at_s += synth_draw(&k->interarrival_s, arr);
        if (!sim_time_s_in_range(at_s) || sim_time_from_s(at_s) > horizon_ns) {
            break;
        }
        n++;
    }
    rng_stream_close(arr);
    return n;
}

synth_stream *synth_stream_create(const synth_class *classes, size_t n, const rng_root *root,
                                  sim_time horizon_ns, size_t *n_jobs)
{
    synth_stream *s = xcalloc(1, sizeof *s, "synthetic stream");
    s->cls = classes;
    s->n = n;
    s->horizon_ns = horizon_ns;
    s->st = xcalloc(n ? n : 1, sizeof *s->st, "synthetic stream");
    *n_jobs = 0;
    for (size_t c = 0; c < n; c++) {
        const synth_class *k = &classes[c];
        SIM_ASSERT(k->count > 0 || horizon_ns < SIM_TIME_MAX);
        *n_jobs += count_class(k, root, horizon_ns);
        uint64_t idx = rng_hash64(k->name);
        s->st[c].arr = rng_stream_open(root, SYNTH_STREAM_ARRIVALS, idx);
        s->st[c].dur = rng_stream_open(root, SYNTH_STREAM_DURATIONS, idx);
        s->st[c].at_s = k->start_s;
        draw_next(s, c);
    }
    return s;
}

bool synth_stream_next(void *ctx, job_spec *out)
{
    synth_stream *s = ctx;
    size_t best = s->n;
    for (size_t c = 0; c < s->n; c++) { /* the earliest; at equal times the first class */
        if (s->st[c].has && (best == s->n || s->st[c].at < s->st[best].at)) {
            best = c;
        }
    }
    if (best == s->n) {
        return false;
    }
    const synth_class *k = &s->cls[best];
    class_state *st = &s->st[best];
    size_t seq = st->seq++;
    *out = (job_spec){.class_name = k->name,
                      .req = k->req,
                      .submit = st->at,
                      .work_s = st->work_s,
                      .mem_bytes = k->mem_bytes,
                      .profile = k->profile,
                      .pod = {.priority = k->priority,
                              .gpu_spec = k->gpu_spec,
                              .cpu_milli = k->cpu_milli,
                              .host_mem_bytes = k->host_mem_bytes,
                              .place = k->place,
                              .node_pin = seq < k->n_node_pin ? k->node_pin[seq] : 0}};
    draw_next(s, best);
    return true;
}

void synth_stream_destroy(synth_stream *s)
{
    if (!s) {
        return;
    }
    for (size_t c = 0; c < s->n; c++) {
        rng_stream_close(s->st[c].arr);
        rng_stream_close(s->st[c].dur);
    }
    free(s->st);
    free(s);
}
