/* tools/bench_engine.c - `bench engine` and `bench fluid`: the same workloads through the
 * real engine (sim/engine.h, sim/fluid.h), with every check that a simulation has (time
 * conversion, priority and handle bookkeeping) left on. */
#include "tools/bench.h"

#include "sim/engine.h"
#include "sim/fluid.h"
#include "sim/rng.h"
#include "sim/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct hold_state {
    rng_stream *s;
    uint64_t left; /* steps still to run */
} hold_state;

static void hold(sim_ctx *ctx, const sim_event *ev)
{
    hold_state *h = ev->user;
    sim_schedule_in(ctx, sim_time_from_s(rng_exponential(h->s, 1.0)), SIM_PRIO_DEFAULT, hold, h,
                    ev->data);
    if (--h->left == 0) {
        sim_stop(ctx);
    }
}

bench_result bench_hold_engine(uint64_t pending, uint64_t events, uint64_t seed)
{
    rng_root root = rng_root_make(seed);
    hold_state h = {rng_stream_open(&root, "bench.hold", 0), events};
    sim_ctx *ctx = sim_create();
    for (uint64_t i = 0; i < pending; i++) {
        sim_schedule_at(ctx, sim_time_from_s(rng_exponential(h.s, 1.0)), SIM_PRIO_DEFAULT, hold, &h,
                        (sim_payload){{i, 0}});
    }
    double t0 = bench_now_s(), c0 = bench_cpu_s();
    sim_run(ctx, SIM_TIME_MAX);
    double t1 = bench_now_s(), c1 = bench_cpu_s();
    SIM_ASSERT(h.left == 0 && sim_get_counters(ctx)->n_executed == events);
    bench_result r = {t1 - t0, c1 - c0, events, sim_time_to_s(sim_now(ctx)), 0, 0};
    sim_destroy(ctx);
    rng_stream_close(h.s);
    return r;
}

typedef struct churn {
    rng_stream *s;
    fluid_res_id *links;
    uint64_t n_links;
    uint64_t left;
} churn;

static void start_one(fluid_sys *sys, churn *c);

static void churn_done(fluid_sys *sys, fluid_act_id act, void *user)
{
    (void)act;
    churn *c = user;
    start_one(sys, c);
    if (--c->left == 0) {
        sim_stop(fluid_ctx(sys));
    }
}

static void start_one(fluid_sys *sys, churn *c)
{
    fluid_use u = {c->links[rng_uniform_int(c->s, c->n_links)], 1.0};
    fluid_start(sys, rng_exponential(c->s, 1.0), &u, 1, churn_done, c);
}

bench_result bench_fluid(uint64_t pending, uint64_t events, uint64_t seed)
{
    rng_root root = rng_root_make(seed);
    churn c = {rng_stream_open(&root, "bench.fluid", 0), NULL, pending / 10 ? pending / 10 : 1,
               events};
    sim_ctx *ctx = sim_create();
    fluid_sys *sys = fluid_create(ctx);
    c.links = xcalloc((size_t)c.n_links, sizeof *c.links, "bench links");
    for (uint64_t i = 0; i < c.n_links; i++) {
        char name[32];
        snprintf(name, sizeof name, "link%llu", (unsigned long long)i);
        c.links[i] = fluid_resource_add(sys, name, 1.0);
    }
    for (uint64_t i = 0; i < pending; i++) {
        start_one(sys, &c);
    }
    fluid_flush(sys);
    double t0 = bench_now_s(), c0 = bench_cpu_s();
    sim_run(ctx, SIM_TIME_MAX);
    double t1 = bench_now_s(), c1 = bench_cpu_s();
    SIM_ASSERT(c.left == 0);
    bench_result r = {t1 - t0,
                      c1 - c0,
                      events,
                      sim_time_to_s(sim_now(ctx)),
                      fluid_n_solves(sys),
                      fluid_n_rerated(sys)};
    sim_destroy(ctx);
    free(c.links);
    rng_stream_close(c.s);
    return r;
}
