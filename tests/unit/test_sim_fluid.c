/* Unit tests for sim/fluid.h: every expected rate and completion time below is solved by hand
 * in the comment beside it (numbers chosen so the answers are exact in nanoseconds). */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/fluid.h"
#include "sim/verify.h"
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
    return (fluid_use){r, 1.0, 0.0};
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
    fluid_res_id link = fluid_resource_add(sys, "link", 12.0, &fluid_sharing_fair, NULL);
    sim_time a_at = -1, b_at = -1, c_at = -1;
    fluid_use u = use1(link);
    fluid_act_id a = fluid_start(sys, 60, &u, 1, note_done, &a_at);
    fluid_start(sys, 24, &u, 1, note_done, &b_at);
    cr_assert_float_eq(fluid_rate(sys, a), 6.0, 1e-12);
    late_start ls = {sys, link, 12, &c_at};
    sim_schedule_at(ctx, S(2), 0, start_later, &ls, (sim_payload){{0, 0}});
    cr_assert_eq(sim_run(ctx, S(3)), SIM_RUN_HORIZON);
    cr_assert_float_eq(fluid_rate(sys, a), 4.0, 1e-12);
    cr_assert_float_eq(fluid_remaining(sys, a), 44.0, 1e-9);
    cr_assert_float_eq(fluid_resource_usage(sys, link), 12.0, 1e-9);
    cr_assert_eq(sim_run(ctx, SIM_TIME_MAX), SIM_RUN_EMPTY);
    cr_assert_eq(b_at, S(5));
    cr_assert_eq(c_at, S(5));
    cr_assert_eq(a_at, S(8));
    cr_assert(!fluid_is_active(sys, a));
    cr_assert_eq(fluid_n_active(sys), 0);
    sim_destroy(ctx);
}

/* Weights 3:1 on 10 units/s: 7.5 and 2.5. B (work 5) ends at 2 s; A (work 30) has 15 left,
 * alone at 10/s: done at 3.5 s. */
Test(fluid, weighted_share)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 10.0, &fluid_sharing_fair, NULL);
    fluid_use u = use1(r);
    sim_time a_at = -1, b_at = -1;
    fluid_act_id a = fluid_start(sys, 30, &u, 1, note_done, &a_at);
    fluid_act_id b = fluid_start(sys, 5, &u, 1, note_done, &b_at);
    cr_assert(fluid_set_weight(sys, a, 3.0));
    cr_assert_float_eq(fluid_rate(sys, a), 7.5, 1e-12);
    cr_assert_float_eq(fluid_rate(sys, b), 2.5, 1e-12);
    sim_run(ctx, SIM_TIME_MAX);
    cr_assert_eq(b_at, S(2));
    cr_assert_eq(a_at, S(3.5));
    sim_destroy(ctx);
}

/* Consumption coefficients: A uses 2 resource units per unit of rate, B 1; equal weights on
 * 9 units/s: lambda = 9 / (2 + 1) = 3, so both run at 3/s and A consumes 6. */
Test(fluid, consumption_coefficients)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 9.0, &fluid_sharing_fair, NULL);
    fluid_use ua = {r, 2.0, 0}, ub = use1(r);
    fluid_act_id a = fluid_start(sys, 100, &ua, 1, NULL, NULL);
    fluid_act_id b = fluid_start(sys, 100, &ub, 1, NULL, NULL);
    cr_assert_float_eq(fluid_rate(sys, a), 3.0, 1e-12);
    cr_assert_float_eq(fluid_rate(sys, b), 3.0, 1e-12);
    cr_assert_float_eq(fluid_resource_usage(sys, r), 9.0, 1e-12);
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
    fluid_res_id l1 = fluid_resource_add(sys, "L1", 10, &fluid_sharing_fair, NULL);
    fluid_res_id l2 = fluid_resource_add(sys, "L2", 4, &fluid_sharing_fair, NULL);
    fluid_res_id l3 = fluid_resource_add(sys, "L3", 9, &fluid_sharing_fair, NULL);
    fluid_use p1[] = {use1(l1)}, p2[] = {use1(l1), use1(l2)}, p3[] = {use1(l2)},
              p4[] = {use1(l1), use1(l3)}, p5[] = {use1(l3)};
    fluid_act_id f[5];
    f[0] = fluid_start(sys, 1000, p1, 1, NULL, NULL);
    f[1] = fluid_start(sys, 1000, p2, 2, NULL, NULL);
    f[2] = fluid_start(sys, 1000, p3, 1, NULL, NULL);
    f[3] = fluid_start(sys, 1000, p4, 2, NULL, NULL);
    f[4] = fluid_start(sys, 1000, p5, 1, NULL, NULL);
    double want[5] = {4, 2, 2, 4, 5};
    for (int i = 0; i < 5; i++) {
        cr_assert_float_eq(fluid_rate(sys, f[i]), want[i], 1e-12, "f%d", i + 1);
    }
    cr_assert_float_eq(fluid_resource_usage(sys, l1), 10, 1e-12);
    cr_assert_float_eq(fluid_resource_usage(sys, l2), 4, 1e-12);
    cr_assert_float_eq(fluid_resource_usage(sys, l3), 9, 1e-12);
    cr_assert_eq(sim_verify(ctx, NULL, 0), 0);
    /* Drop f2: L2 now carries f3 alone (4); L1 {f1, f4}: 5 each; L3 {f4, f5}: 4.5 each ->
     * L3 saturates first at 4.5: f4 = f5 = 4.5; then f1 = 10 - 4.5 = 5.5. */
    double rem = 0;
    cr_assert(fluid_cancel(sys, f[1], &rem));
    cr_assert_float_eq(rem, 1000, 1e-12);
    cr_assert_float_eq(fluid_rate(sys, f[0]), 5.5, 1e-12);
    cr_assert_float_eq(fluid_rate(sys, f[2]), 4, 1e-12);
    cr_assert_float_eq(fluid_rate(sys, f[3]), 4.5, 1e-12);
    cr_assert_float_eq(fluid_rate(sys, f[4]), 4.5, 1e-12);
    cr_assert(!fluid_cancel(sys, f[1], NULL), "a cancelled id is stale");
    sim_destroy(ctx);
}

/* Weighted max-min over two links: L1 = 10 {A w1, B w2}, L2 = 3 {B w2, C w1}.
 * Levels: L1 10 / (1 + 2) = 3.33, L2 3 / (2 + 1) = 1 -> L2 saturates: B = 2 * 1, C = 1 * 1.
 * Then L1 (10 - 2) / 1 = 8: A = 8. */
Test(fluid, weighted_max_min_over_two_links)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id l1 = fluid_resource_add(sys, "L1", 10, &fluid_sharing_fair, NULL);
    fluid_res_id l2 = fluid_resource_add(sys, "L2", 3, &fluid_sharing_fair, NULL);
    fluid_use pa[] = {use1(l1)}, pb[] = {use1(l1), use1(l2)}, pc[] = {use1(l2)};
    fluid_act_id a = fluid_start(sys, 100, pa, 1, NULL, NULL);
    fluid_act_id b = fluid_start(sys, 100, pb, 2, NULL, NULL);
    fluid_act_id c = fluid_start(sys, 100, pc, 1, NULL, NULL);
    fluid_set_weight(sys, b, 2);
    cr_assert_float_eq(fluid_rate(sys, a), 8, 1e-12);
    cr_assert_float_eq(fluid_rate(sys, b), 2, 1e-12);
    cr_assert_float_eq(fluid_rate(sys, c), 1, 1e-12);
    sim_destroy(ctx);
}

/* Weights 10^12 : 1 on 10 units/s: 10 * 10^12 / (10^12 + 1) and 10 / (10^12 + 1); the small
 * share must stay positive and the total must be the capacity. */
Test(fluid, extreme_weights_keep_their_proportion)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 10, &fluid_sharing_fair, NULL);
    fluid_use u = use1(r);
    fluid_act_id a = fluid_start(sys, 100, &u, 1, NULL, NULL);
    fluid_act_id b = fluid_start(sys, 100, &u, 1, NULL, NULL);
    fluid_set_weight(sys, a, 1e12);
    double ra = fluid_rate(sys, a), rb = fluid_rate(sys, b);
    cr_assert_float_eq(rb, 10 / (1e12 + 1), 1e-20);
    cr_assert_float_eq(ra + rb, 10, 1e-12);
    sim_destroy(ctx);
}

typedef struct cap_change {
    fluid_sys *sys;
    fluid_act_id act;
    fluid_res_id res;
    double value;
} cap_change;

static void set_cap(sim_ctx *ctx, const sim_event *ev)
{
    (void)ctx;
    cap_change *c = ev->user;
    cr_assert(fluid_set_rate_cap(c->sys, c->act, c->value));
}

static void set_capacity(sim_ctx *ctx, const sim_event *ev)
{
    (void)ctx;
    cap_change *c = ev->user;
    fluid_resource_set_capacity(c->sys, c->res, c->value);
}

/* Cap 2 on A over 10 units/s: A = 2, B = 8. B (work 40) ends at 5 s; A (work 20) has 10 left,
 * still capped at 2: done at 10 s. At 6 s the cap rises to 5: A has 8 left at 5/s: 7.6 s. */
Test(fluid, rate_cap_binds_and_changes)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 10, &fluid_sharing_fair, NULL);
    fluid_use u = use1(r);
    sim_time a_at = -1, b_at = -1;
    fluid_act_id a = fluid_start(sys, 20, &u, 1, note_done, &a_at);
    fluid_start(sys, 40, &u, 1, note_done, &b_at);
    fluid_set_rate_cap(sys, a, 2);
    cr_assert_float_eq(fluid_rate(sys, a), 2, 1e-12);
    cr_assert_eq(fluid_eta(sys, a), S(10));
    cap_change c = {sys, a, r, 5};
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
    cr_assert_eq(fluid_eta(sys, b), SIM_TIME_MAX);
    cr_assert_float_eq(fluid_remaining(sys, b), 1, 0);
    fluid_set_rate_cap(sys, b, 2); /* resumed at 1.5 s: done 0.5 s later */
    sim_run(ctx, SIM_TIME_MAX);
    cr_assert_eq(b_at, S(2));
    sim_destroy(ctx);
}

/* Capacity change at runtime: A (100) alone on 10/s; at 4 s the capacity halves: 60 left at
 * 5/s -> done at 16 s. An isolated resource gives each user the whole capacity. */
Test(fluid, capacity_change_and_isolation)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 10, &fluid_sharing_fair, NULL);
    fluid_res_id iso = fluid_resource_add(sys, "iso", 3, &fluid_sharing_isolated, NULL);
    fluid_use u = use1(r), ui = use1(iso);
    sim_time a_at = -1, i1_at = -1, i2_at = -1;
    fluid_start(sys, 100, &u, 1, note_done, &a_at);
    fluid_act_id i1 = fluid_start(sys, 6, &ui, 1, note_done, &i1_at);
    fluid_act_id i2 = fluid_start(sys, 9, &ui, 1, note_done, &i2_at);
    cr_assert_float_eq(fluid_rate(sys, i1), 3, 0);
    cr_assert_float_eq(fluid_rate(sys, i2), 3, 0);
    cap_change c = {sys, 0, r, 5};
    sim_schedule_at(ctx, S(4), 0, set_capacity, &c, (sim_payload){{0, 0}});
    sim_run(ctx, SIM_TIME_MAX);
    cr_assert_eq(a_at, S(16));
    cr_assert_eq(i1_at, S(2));
    cr_assert_eq(i2_at, S(3));
    sim_destroy(ctx);
}

/* ---- pluggable sharing models ----------------------------------------------------------- */

typedef struct eta_params {
    double eta_shared; /* efficiency once two or more users share (a test value) */
} eta_params;

static double eta_capacity(const void *params, double capacity, const fluid_user *users, size_t n)
{
    (void)users;
    const eta_params *p = params;
    return n >= 2 ? capacity * p->eta_shared : capacity;
}

static const fluid_sharing_ops eta_sharing = {"test-eta", true, eta_capacity, NULL};

/* Capacity 10 with efficiency 0.8 when shared: A (40) and B (20) get 4/s each. B ends at 5 s;
 * A has 20 left, alone at the full 10/s: done at 7 s. */
Test(fluid, custom_capacity_model_efficiency)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    eta_params p = {0.8};
    fluid_res_id r = fluid_resource_add(sys, "ts", 10, &eta_sharing, &p);
    fluid_use u = use1(r);
    sim_time a_at = -1, b_at = -1;
    fluid_act_id a = fluid_start(sys, 40, &u, 1, note_done, &a_at);
    fluid_start(sys, 20, &u, 1, note_done, &b_at);
    cr_assert_float_eq(fluid_rate(sys, a), 4, 1e-12);
    cr_assert_float_eq(fluid_resource_effective_capacity(sys, r), 8, 1e-12);
    sim_run(ctx, SIM_TIME_MAX);
    cr_assert_eq(b_at, S(5));
    cr_assert_eq(a_at, S(7));
    sim_destroy(ctx);
}

static double pct_bound(const void *params, double capacity, const fluid_user *users, size_t n,
                        size_t i)
{
    (void)params;
    (void)n;
    return users[i].param > 0 ? capacity * users[i].param : capacity;
}

static const fluid_sharing_ops pct_sharing = {"test-pct", true, NULL, pct_bound};

/* Per-user bound from the use's param (like a thread percentage): A limited to 30 % of 10 ->
 * 3; B unlimited takes the remaining 7. */
Test(fluid, custom_user_bound_model)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "pct", 10, &pct_sharing, NULL);
    fluid_use ua = {r, 1, 0.3}, ub = {r, 1, 0};
    fluid_act_id a = fluid_start(sys, 100, &ua, 1, NULL, NULL);
    fluid_act_id b = fluid_start(sys, 100, &ub, 1, NULL, NULL);
    cr_assert_float_eq(fluid_rate(sys, a), 3, 1e-12);
    cr_assert_float_eq(fluid_rate(sys, b), 7, 1e-12);
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
    fluid_res_id r = fluid_resource_add(sys, "r", 10, &fluid_sharing_fair, NULL);
    chain_state c = {r, 4, -1};
    fluid_use u = use1(r);
    fluid_start(sys, 5, &u, 1, restart, &c);
    sim_run(ctx, SIM_TIME_MAX);
    cr_assert_eq(c.last, S(2));
    cr_assert_eq(c.left, 0);

    fluid_res_id other = fluid_resource_add(sys, "other", 1, &fluid_sharing_fair, NULL);
    fluid_use uo = use1(other);
    fluid_act_id lone = fluid_start(sys, 1000, &uo, 1, NULL, NULL);
    fluid_flush(sys);
    uint64_t solves = fluid_n_solves(sys), rerated = fluid_n_rerated(sys);
    for (int i = 0; i < 10; i++) {
        fluid_start(sys, 10, &u, 1, NULL, NULL);
    }
    sim_step(ctx); /* the flush event */
    cr_assert_eq(fluid_n_solves(sys), solves + 1);
    cr_assert_eq(fluid_n_rerated(sys), rerated + 10, "the activity on 'other' is not re-rated");
    cr_assert_float_eq(fluid_rate(sys, lone), 1, 0);
    sim_destroy(ctx);
}

Test(fluid, zero_work_completes_at_once)
{
    fluid_sys *sys;
    sim_ctx *ctx = new_ctx(&sys);
    fluid_res_id r = fluid_resource_add(sys, "r", 0, &fluid_sharing_fair, NULL);
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
    cr_assert_not_null(strstr(msg, "assertion failed: isfinite(a->bound) at sim/fluid.c:"), "%s",
                       msg);
}
