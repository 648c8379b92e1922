/* Unit tests for sim/fluid.h: every expected rate and completion time below is solved by hand
 * in the comment beside it (numbers chosen so the answers are exact in nanoseconds). Rates are
 * read off the remaining work over the next second (tests/unit/fluidfx.h), as the program sees
 * them; the solver itself is tested on its own in test_sim_maxmin.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/fluid.h"
#include "sim/verify.h"
#include "tests/unit/fluidfx.h"
#include "tests/unit/sh.h"

#define S(x) ((sim_time)((x)*1000000000LL))

typedef struct done_log {
    sim_time at[8];
    int n;
} done_log;

static void note_done(fluid_sys *sys, fluid_act_id act, void *user)
{
    (void)act;
    sim_time *slot = user;
    *slot = sim_now(fluid_ctx(sys));
}

static sim_ctx *new_ctx(fluid_sys **sys)
{
    sim_ctx *ctx = sim_create();
    sim_set_verify_every(ctx, 1);
    *sys = fluid_create(ctx);
    return ctx;
}

static fluid_use use1(fluid_res_id r)
{
    return (fluid_use){r, 1.0};
}

/* ---- sharing changes mid-activity ------------------------------------------------------- */

typedef struct late_start {
    fluid_sys *sys;
    fluid_res_id link;
    double work;
    sim_time *done_at;
} late_start;

static void start_later(sim_ctx *ctx, const sim_event *ev)
{
    (void)ctx;
    late_start *ls = ev->user;
    fluid_use u = use1(ls->link);
    fluid_start(ls->sys, ls->work, &u, 1, note_done, ls->done_at);
}

/* Link of 12 units/s. A (60) and B (24) start at 0: 6/s each. At 2 s, C (12) joins: A has 48,
 * B has 12 left, and all three get 4/s. B and C both finish at 2 + 3 = 5 s; A then has
 * 48 - 12 = 36 left alone at 12/s: done at 5 + 3 = 8 s. */
Test(fluid, equal_share_changes_mid_activity)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id link = fluid_resource_add(sys, "link", 12.0);
    sim_time a_at = -1, b_at = -1, c_at = -1;
    fluid_use u = use1(link);
    fluid_act_id a = fluid_start(sys, 60, &u, 1, note_done, &a_at);
    fluid_act_id b = fluid_start(sys, 24, &u, 1, note_done, &b_at);
    late_start ls = {sys, link, 12, &c_at};
    sim_schedule_at(ctx, S(2), 0, start_later, &ls, (sim_payload){{0, 0}});
    fluid_act_id ab[2] = {a, b};
    double r[2];
    fx_fluid_rates(sys, ab, 2, 1, r); /* 0 to 1 s */
    cr_assert_float_eq(r[0], 6.0, 1e-12);
    cr_assert_float_eq(r[1], 6.0, 1e-12);
    cr_assert_eq(sim_run(ctx, S(3)), SIM_RUN_HORIZON);
    cr_assert_float_eq(fluid_remaining(sys, a), 44.0, 1e-9);
    cr_assert_float_eq(fx_fluid_rate(sys, a, 1), 4.0, 1e-9); /* 3 to 4 s */
    cr_assert_eq(sim_run(ctx, SIM_TIME_MAX), SIM_RUN_EMPTY);
    cr_assert_eq(b_at, S(5));
    cr_assert_eq(c_at, S(5));
    cr_assert_eq(a_at, S(8));
    cr_assert(isnan(fluid_remaining(sys, a)), "a completed activity's id is stale");
    sim_destroy(ctx);
}

/* Consumption coefficients: A uses 2 resource units per unit of rate, B 1; equal weights on
 * 9 units/s: lambda = 9 / (2 + 1) = 3, so both run at 3/s and A consumes 6. */
Test(fluid, consumption_coefficients)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 9.0);
    fluid_use ua = {r, 2.0}, ub = use1(r);
    fluid_act_id ab[2] = {fluid_start(sys, 100, &ua, 1, NULL, NULL),
                          fluid_start(sys, 100, &ub, 1, NULL, NULL)};
    double rate[2];
    fx_fluid_rates(sys, ab, 2, 1, rate);
    cr_assert_float_eq(rate[0], 3.0, 1e-12);
    cr_assert_float_eq(rate[1], 3.0, 1e-12);
    cr_assert_eq(sim_verify(ctx, NULL, 0), 0, "usage 2 * 3 + 3 = 9 within the capacity");
    sim_destroy(ctx);
}

/* Five flows over three links (Bertsekas & Gallager style), solved by progressive filling:
 * L1 = 10 {f1, f2, f4}, L2 = 4 {f2, f3}, L3 = 9 {f4, f5}.
 * Levels: L1 10/3, L2 4/2 = 2, L3 9/2 -> L2 saturates first: f2 = f3 = 2.
 * Then L1 (10 - 2) / 2 = 4, L3 9/2 = 4.5 -> L1: f1 = f4 = 4. Then L3 (9 - 4) / 1 = 5: f5 = 5. */
Test(fluid, max_min_fair_over_several_links)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id l1 = fluid_resource_add(sys, "L1", 10);
    fluid_res_id l2 = fluid_resource_add(sys, "L2", 4);
    fluid_res_id l3 = fluid_resource_add(sys, "L3", 9);
    fluid_use p1[] = {use1(l1)}, p2[] = {use1(l1), use1(l2)}, p3[] = {use1(l2)},
              p4[] = {use1(l1), use1(l3)}, p5[] = {use1(l3)};
    fluid_act_id f[5];
    f[0] = fluid_start(sys, 1000, p1, 1, NULL, NULL);
    f[1] = fluid_start(sys, 1000, p2, 2, NULL, NULL);
    f[2] = fluid_start(sys, 1000, p3, 1, NULL, NULL);
    f[3] = fluid_start(sys, 1000, p4, 2, NULL, NULL);
    f[4] = fluid_start(sys, 1000, p5, 1, NULL, NULL);
    double want[5] = {4, 2, 2, 4, 5}, rate[5];
    fx_fluid_rates(sys, f, 5, 1, rate);
    for (int i = 0; i < 5; i++) {
        cr_assert_float_eq(rate[i], want[i], 1e-12, "f%d", i + 1);
    }
    cr_assert_eq(sim_verify(ctx, NULL, 0), 0, "L1, L2, L3 full (10, 4, 9), not over");
    /* Drop f2 at 1 s (2 done, 998 left): L2 now carries f3 alone (4); L1 {f1, f4}: 5 each; L3
     * {f4, f5}: 4.5 each -> L3 saturates first at 4.5: f4 = f5 = 4.5; then f1 = 10 - 4.5 = 5.5. */
    double rem = 0;
    cr_assert(fluid_cancel(sys, f[1], &rem));
    cr_assert_float_eq(rem, 998, 1e-12);
    fluid_act_id rest[4] = {f[0], f[2], f[3], f[4]};
    double want2[4] = {5.5, 4, 4.5, 4.5};
    fx_fluid_rates(sys, rest, 4, 1, rate);
    for (int i = 0; i < 4; i++) {
        cr_assert_float_eq(rate[i], want2[i], 1e-12, "after the cancel: %d", i);
    }
    cr_assert(!fluid_cancel(sys, f[1], NULL), "a cancelled id is stale");
    sim_destroy(ctx);
}

typedef struct cap_change {
    fluid_sys *sys;
    fluid_act_id act;
    double value;
} cap_change;

static void set_cap(sim_ctx *ctx, const sim_event *ev)
{
    (void)ctx;
    cap_change *c = ev->user;
    cr_assert(fluid_set_rate_cap(c->sys, c->act, c->value));
}

/* Cap 2 on A over 10 units/s: A = 2, B = 8. B (work 40) ends at 5 s; A (work 20) has 10 left,
 * still capped at 2: done at 10 s. At 6 s the cap rises to 5: A has 8 left at 5/s: 7.6 s. */
Test(fluid, rate_cap_binds_and_changes)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 10);
    fluid_use u = use1(r);
    sim_time a_at = -1, b_at = -1;
    fluid_act_id a = fluid_start(sys, 20, &u, 1, note_done, &a_at);
    fluid_start(sys, 40, &u, 1, note_done, &b_at);
    fluid_set_rate_cap(sys, a, 2);
    cap_change c = {sys, a, 5};
    cr_assert_float_eq(fx_fluid_rate(sys, a, 1), 2, 1e-12);
    sim_schedule_at(ctx, S(6), 0, set_cap, &c, (sim_payload){{0, 0}});
    sim_run(ctx, SIM_TIME_MAX);
    cr_assert_eq(b_at, S(5));
    cr_assert_eq(a_at, S(7.6));
    sim_destroy(ctx);
}

/* A cap-only activity (no resource) runs at its cap: 6 units at 4/s take 1.5 s. A paused one
 * (cap 0) never completes until resumed. */
Test(fluid, cap_only_and_paused_activities)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    sim_time a_at = -1, b_at = -1;
    fluid_act_id a = fluid_start(sys, 6, NULL, 0, note_done, &a_at);
    fluid_set_rate_cap(sys, a, 4);
    fluid_act_id b = fluid_start(sys, 1, NULL, 0, note_done, &b_at);
    fluid_set_rate_cap(sys, b, 0);
    cr_assert_eq(sim_run(ctx, SIM_TIME_MAX), SIM_RUN_EMPTY);
    cr_assert_eq(a_at, S(1.5));
    cr_assert_eq(b_at, -1);
    cr_assert_float_eq(fluid_remaining(sys, b), 1, 0);
    fluid_set_rate_cap(sys, b, 2); /* resumed at 1.5 s: done 0.5 s later */
    sim_run(ctx, SIM_TIME_MAX);
    cr_assert_eq(b_at, S(2));
    sim_destroy(ctx);
}

/* ---- lazy recomputation ----------------------------------------------------------------- */

typedef struct chain_state {
    fluid_res_id r;
    int left;
    sim_time last;
} chain_state;

static void restart(fluid_sys *sys, fluid_act_id act, void *user)
{
    (void)act;
    chain_state *c = user;
    c->last = sim_now(fluid_ctx(sys));
    if (--c->left > 0) {
        fluid_use u = use1(c->r);
        fluid_start(sys, 5, &u, 1, restart, c);
    }
}

/* A done callback may start the next activity: 4 back-to-back pieces of 5 at 10/s end at
 * 2 s. Ten activities started in one handler cost one solve. */
Test(fluid, done_callback_restarts_and_changes_batch_into_one_solve)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 10);
    chain_state c = {r, 4, -1};
    fluid_use u = use1(r);
    fluid_start(sys, 5, &u, 1, restart, &c);
    sim_run(ctx, SIM_TIME_MAX);
    cr_assert_eq(c.last, S(2));
    cr_assert_eq(c.left, 0);

    fluid_res_id other = fluid_resource_add(sys, "other", 1);
    fluid_use uo = use1(other);
    fluid_act_id lone = fluid_start(sys, 1000, &uo, 1, NULL, NULL);
    fluid_flush(sys);
    uint64_t solves = fluid_n_solves(sys), rerated = fluid_n_rerated(sys);
    for (int i = 0; i < 10; i++) {
        fluid_start(sys, 10, &u, 1, NULL, NULL);
    }
    sim_run(ctx, sim_now(ctx)); /* the flush event, at this instant */
    cr_assert_eq(fluid_n_solves(sys), solves + 1);
    cr_assert_eq(fluid_n_rerated(sys), rerated + 10, "the activity on 'other' is not re-rated");
    cr_assert_float_eq(fx_fluid_rate(sys, lone, 1), 1, 1e-12);
    sim_destroy(ctx);
}

Test(fluid, zero_work_completes_at_once)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 0);
    sim_time at = -1;
    sim_schedule_at(ctx, S(1), 0, start_later, &(late_start){sys, r, 0, &at},
                    (sim_payload){{0, 0}});
    sim_run(ctx, SIM_TIME_MAX);
    cr_assert_eq(at, S(1));
    sim_destroy(ctx);
}

static void start_unbounded_activity(void *arg)
{
    (void)arg;
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_start(sys, 1, NULL, 0, NULL, NULL);
    fluid_flush(sys);
    sim_destroy(ctx);
}

Test(fluid, activity_without_resource_or_cap_is_a_bug)
{
    char msg[512];
    cr_assert_eq(test_death(start_unbounded_activity, NULL, msg, sizeof msg), SIGABRT, "%s", msg);
    cr_assert_not_null(strstr(msg, "assertion failed: a->n_uses > 0 || isfinite(a->cap) at sim/fluid.c:"), "%s",
                       msg);
}
