#include "sim/engine.h"

#include "sim/engine_int.h"
#include "sim/verify.h"
#include "sim/xalloc.h"

#include <stdlib.h>

sim_ctx *sim_create(void)
{
    sim_ctx *ctx = xcalloc(1, sizeof *ctx, "sim_ctx");
    ctx->q = evq_create(64);
    return ctx;
}

void sim_destroy(sim_ctx *ctx)
{
    if (!ctx) {
        return;
    }
    for (size_t i = ctx->n_comps; i-- > 0;) {
        if (ctx->comps[i].ops->fini) {
            ctx->comps[i].ops->fini(ctx, ctx->comps[i].state);
        }
        free(ctx->comps[i].state);
    }
    free(ctx->comps);
    evq_destroy(ctx->q);
    free(ctx);
}

sim_time sim_now(const sim_ctx *ctx)
{
    return ctx->now;
}

sim_event_id sim_schedule_at(sim_ctx *ctx, sim_time at, int prio, sim_handler *fn, void *user,
                             sim_payload data)
{
    SIM_ASSERT(at >= ctx->now);
    SIM_ASSERT(fn != NULL);
    SIM_ASSERT(prio >= SIM_PRIO_MIN && prio <= SIM_PRIO_MAX);
    sim_event ev = {.at = at, .fn = fn, .user = user, .data = data, .prio = (int32_t)prio};
    sim_event_id id = evq_push(ctx->q, &ev);
    ctx->c.n_scheduled++;
    /* every event enters through here and leaves by firing or sim_cancel */
    uint64_t n = ctx->c.n_scheduled - ctx->c.n_executed - ctx->c.n_cancelled;
    if (n > ctx->c.max_pending) {
        ctx->c.max_pending = n;
    }
    return id;
}

sim_event_id sim_schedule_in(sim_ctx *ctx, sim_time delay, int prio, sim_handler *fn, void *user,
                             sim_payload data)
{
    SIM_ASSERT(delay >= 0 && delay <= SIM_TIME_MAX - ctx->now);
    return sim_schedule_at(ctx, ctx->now + delay, prio, fn, user, data);
}

bool sim_cancel(sim_ctx *ctx, sim_event_id id)
{
    bool ok = evq_cancel(ctx->q, id);
    ctx->c.n_cancelled += ok;
    return ok;
}

bool sim_reschedule(sim_ctx *ctx, sim_event_id id, sim_time at)
{
    SIM_ASSERT(at >= ctx->now);
    bool ok = evq_reschedule(ctx->q, id, at);
    ctx->c.n_rescheduled += ok;
    return ok;
}

void sim_expect_moves(sim_ctx *ctx, sim_handler *fn)
{
    evq_expect_moves(ctx->q, fn);
}

static inline void fire(sim_ctx *ctx, const sim_event *ev)
{
    SIM_ASSERT(ev->at >= ctx->now); /* time never goes backwards */
    ctx->now = ev->at;
    ctx->last_fired = ev->at;
    ctx->current = ev->id;
    ctx->c.n_executed++;
    ev->fn(ctx, ev);
    if (ctx->verify_every && --ctx->until_verify == 0) {
        ctx->until_verify = ctx->verify_every;
        sim_verify_or_die(ctx);
    }
    if (ctx->observe_every && --ctx->until_observe == 0) {
        ctx->until_observe = ctx->observe_every;
        ctx->observer(ctx, ctx->observer_user);
    }
}

sim_run_status sim_run(sim_ctx *ctx, sim_time until)
{
    SIM_ASSERT(until >= ctx->now);
    evq *q = ctx->q;
    sim_event ev;
    for (;;) {
        if (ctx->stop) {
            ctx->stop = false;
            return SIM_RUN_STOPPED;
        }
        if (!evq_pop_until(q, until, &ev)) {
            if (until != SIM_TIME_MAX) {
                ctx->now = until;
            }
            return evq_size(q) ? SIM_RUN_HORIZON : SIM_RUN_EMPTY;
        }
        fire(ctx, &ev);
    }
}

void sim_stop(sim_ctx *ctx)
{
    ctx->stop = true;
}

const sim_counters *sim_get_counters(const sim_ctx *ctx)
{
    return &ctx->c;
}

void *sim_component_add(sim_ctx *ctx, const sim_component_ops *ops, const void *arg, int *err)
{
    SIM_ASSERT(ops != NULL);
    void *state = xcalloc(1, ops->state_size ? ops->state_size : 1, ops->name);
    int rc = ops->init ? ops->init(ctx, state, arg) : 0;
    if (err) {
        *err = rc;
    }
    if (rc < 0) {
        free(state);
        return NULL;
    }
    if (ctx->n_comps == ctx->cap_comps) {
        ctx->cap_comps = ctx->cap_comps ? 2 * ctx->cap_comps : 4;
        ctx->comps = xrealloc(ctx->comps, ctx->cap_comps * sizeof *ctx->comps, "components");
    }
    ctx->comps[ctx->n_comps++] = (sim_component){ops, state};
    return state;
}

void sim_set_verify_every(sim_ctx *ctx, uint64_t every)
{
    ctx->verify_every = every;
    ctx->until_verify = every;
}

void sim_set_observer(sim_ctx *ctx, uint64_t every, sim_observer_fn *fn, void *user)
{
    SIM_ASSERT(every == 0 || fn != NULL);
    ctx->observe_every = every;
    ctx->until_observe = every;
    ctx->observer = fn;
    ctx->observer_user = user;
}
