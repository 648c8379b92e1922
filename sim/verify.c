#include "sim/verify.h"

#include "sim/engine_int.h"
#include "sim/err.h"

#include <stdio.h>
#include <stdlib.h>

int sim_verify(const sim_ctx *ctx, char *why, size_t why_len)
{
    char dummy[1];
    if (!why) {
        why = dummy;
        why_len = sizeof dummy;
    }
    int rc = evq_verify(ctx->q, why, why_len);
    if (rc) {
        return rc;
    }
    if (ctx->now < ctx->last_fired) {
        snprintf(why, why_len, "clock went backwards: now %lld ns < last event %lld ns",
                 (long long)ctx->now, (long long)ctx->last_fired);
        return SIM_ERANGE;
    }
    const sim_event *top = evq_peek(ctx->q);
    if (top && top->at < ctx->now) {
        snprintf(why, why_len, "pending event %llu at %lld ns lies before now (%lld ns)",
                 (unsigned long long)top->id, (long long)top->at, (long long)ctx->now);
        return SIM_ERANGE;
    }
    for (size_t i = 0; i < ctx->n_comps; i++) {
        const sim_component *c = &ctx->comps[i];
        if (c->ops->verify && (rc = c->ops->verify(ctx, c->state, why, why_len)) != 0) {
            return rc;
        }
    }
    return 0;
}

void sim_verify_or_die(const sim_ctx *ctx)
{
    char why[512];
    if (sim_verify(ctx, why, sizeof why)) {
        fprintf(stderr, "sim_verify failed at t=%lld ns after event %llu: %s\n",
                (long long)ctx->now, (unsigned long long)ctx->current, why);
        abort();
    }
}
