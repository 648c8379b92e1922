/* sim/fluid.c - max-min fair rates (sim/maxmin) recomputed lazily per connected component.
 *
 * Why lazy: a scheduler that places 50 jobs at one instant would otherwise re-solve 50 times;
 * here every mutation only records what is dirty and one flush event (same time, highest
 * priority, so it runs right after the handler that made the changes) solves once.
 * Why per component: activities that share no resource with what changed keep their rates, so a
 * change on one link re-solves only the activities that really share something with it
 * (SimGrid's "selective update"). The flush lays the component out as a maxmin_problem
 * (activities in the order the search reached them, resources likewise, a resource's users in
 * their order of arrival) and the solver's arithmetic follows that order, so a run is
 * reproducible bit for bit.
 */
#include "sim/fluid.h"

#include "sim/err.h"
#include "sim/maxmin.h"
#include "sim/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX
/* Relative slack of the verifier's comparisons. */
#define CHECK_EPS 1e-9
/* Longest predicted duration that gets a completion event (s); beyond, the activity just
 * waits for its rate to change (sim_time_from_s's range is about 9.2e9 s). */
#define MAX_ETA_S 9.0e9

typedef struct use_rec {
    fluid_res_id res;
    uint32_t pos; /* index in res->users */
    double coeff;
} use_rec;

typedef struct act {
    uint32_t gen;
    bool live, dirty_listed;
    double left; /* remaining work at t_upd */
    sim_time t_upd;
    double rate, cap;
    use_rec *uses;
    uint32_t n_uses, cap_uses;
    fluid_done_fn *done;
    void *user;
    sim_event_id ev;
    uint64_t mark;
    uint32_t next_free;
    uint32_t idx; /* solver scratch: index in the component */
} act;

typedef struct res_user {
    uint32_t act; /* slot */
    uint32_t use; /* index in that activity's uses */
} res_user;

typedef struct res {
    char *name;
    double capacity;
    res_user *users;
    uint32_t n_users, cap_users;
    bool dirty_listed;
    uint64_t mark;
    uint32_t idx; /* solver scratch: index in the component */
} res;

struct fluid_sys {
    sim_ctx *ctx;
    res *res;
    uint32_t n_res, cap_res;
    act *acts;
    uint32_t n_acts, cap_acts, free_head;
    size_t n_live;
    uint32_t *dirty_acts, n_dirty_acts, cap_dirty_acts;
    uint32_t *dirty_res, n_dirty_res, cap_dirty_res;
    uint32_t *comp_acts, n_comp_acts, cap_comp_acts;
    uint32_t *comp_res, n_comp_res, cap_comp_res;
    /* the component as a maxmin_problem (grown, reused) */
    double *bound, *rate, *capacity, *flow_coeff, *res_coeff;
    uint32_t *flow_start, *flow_res, *res_start, *res_flow;
    size_t cap_pf, cap_pr, cap_pu;
    maxmin_ws ws;
    sim_event_id flush_ev;
    uint64_t epoch;
    uint64_t n_solves, n_rerated;
};

/* Append v to a growable uint32 array. */
static void push_u32(uint32_t **arr, uint32_t *n, uint32_t *cap, uint32_t v, const char *what)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        *arr = xrealloc(*arr, (size_t)*cap * sizeof **arr, what);
    }
    (*arr)[(*n)++] = v;
}

static fluid_act_id make_id(uint32_t slot, uint32_t gen)
{
    return ((uint64_t)gen << 32) | ((uint64_t)slot + 1);
}

/* The slot of a live activity id, or NONE32. */
static uint32_t lookup(const fluid_sys *sys, fluid_act_id id)
{
    uint64_t low = id & 0xffffffffu;
    if (low == 0 || low > sys->n_acts) {
        return NONE32;
    }
    uint32_t s = (uint32_t)(low - 1);
    const act *a = &sys->acts[s];
    return (a->live && a->gen == (uint32_t)(id >> 32)) ? s : NONE32;
}

static void on_flush(sim_ctx *ctx, const sim_event *ev)
{
    (void)ctx;
    fluid_sys *sys = ev->user;
    sys->flush_ev = SIM_EVENT_NONE;
    fluid_flush(sys);
}

static void request_flush(fluid_sys *sys)
{
    if (sys->flush_ev == SIM_EVENT_NONE) {
        sys->flush_ev = sim_schedule_at(sys->ctx, sim_now(sys->ctx), SIM_PRIO_MAX, on_flush, sys,
                                        (sim_payload){{0, 0}});
    }
}

static void dirty_act(fluid_sys *sys, uint32_t s)
{
    if (!sys->acts[s].dirty_listed) {
        sys->acts[s].dirty_listed = true;
        push_u32(&sys->dirty_acts, &sys->n_dirty_acts, &sys->cap_dirty_acts, s, "fluid dirty");
    }
    request_flush(sys);
}

static void dirty_res(fluid_sys *sys, fluid_res_id r)
{
    if (!sys->res[r].dirty_listed) {
        sys->res[r].dirty_listed = true;
        push_u32(&sys->dirty_res, &sys->n_dirty_res, &sys->cap_dirty_res, r, "fluid dirty");
    }
    request_flush(sys);
}

/* Remaining work of a live activity as of time t (>= t_upd), clamped at 0. */
static double left_at(const act *a, sim_time t)
{
    double l = a->left - a->rate * sim_time_to_s(t - a->t_upd);
    return l > 0 ? l : 0;
}

static void integrate(act *a, sim_time now)
{
    if (now != a->t_upd) {
        a->left = left_at(a, now);
        a->t_upd = now;
    }
}

/* ---- completion ---------------------------------------------------------------------- */

static void detach(fluid_sys *sys, uint32_t s)
{
    act *a = &sys->acts[s];
    for (uint32_t k = 0; k < a->n_uses; k++) {
        res *r = &sys->res[a->uses[k].res];
        uint32_t pos = a->uses[k].pos;
        res_user moved = r->users[--r->n_users];
        if (pos != r->n_users) {
            r->users[pos] = moved;
            sys->acts[moved.act].uses[moved.use].pos = pos;
        }
        dirty_res(sys, a->uses[k].res);
    }
    a->n_uses = 0;
}

static void free_act(fluid_sys *sys, uint32_t s)
{
    act *a = &sys->acts[s];
    a->live = false;
    a->done = NULL;
    a->user = NULL;
    a->next_free = sys->free_head;
    sys->free_head = s;
    sys->n_live--;
}

static void on_complete(sim_ctx *ctx, const sim_event *ev)
{
    fluid_sys *sys = ev->user;
    fluid_act_id id = ev->data.u64[0];
    uint32_t s = lookup(sys, id);
    SIM_ASSERT(s != NONE32 && sys->acts[s].ev == ev->id);
    act *a = &sys->acts[s];
    a->ev = SIM_EVENT_NONE;
    a->left = 0;
    a->t_upd = sim_now(ctx);
    fluid_done_fn *done = a->done;
    void *user = a->user;
    detach(sys, s);
    free_act(sys, s);
    request_flush(sys);
    if (done) {
        done(sys, id, user);
    }
}

/* (Re)schedule or cancel the completion event of a after its rate or work changed. */
static void schedule_completion(fluid_sys *sys, uint32_t s)
{
    act *a = &sys->acts[s];
    sim_time now = sim_now(sys->ctx);
    sim_time at = SIM_TIME_MAX;
    if (a->left <= 0) {
        at = now; /* nothing left: completes now whatever its rate */
    } else if (a->rate > 0) {
        double dur_s = a->left / a->rate;
        if (dur_s < MAX_ETA_S) {
            at = now + sim_time_from_s(dur_s);
        }
    }
    if (at == SIM_TIME_MAX) {
        if (a->ev != SIM_EVENT_NONE) {
            sim_cancel(sys->ctx, a->ev);
            a->ev = SIM_EVENT_NONE;
        }
        return;
    }
    if (a->ev != SIM_EVENT_NONE && sim_reschedule(sys->ctx, a->ev, at)) {
        return;
    }
    sim_payload p = {{make_id(s, a->gen), 0}};
    a->ev = sim_schedule_at(sys->ctx, at, SIM_PRIO_DEFAULT, on_complete, sys, p);
}

/* ---- the solver ---------------------------------------------------------------------- */

static void visit_act(fluid_sys *sys, uint32_t s)
{
    act *a = &sys->acts[s];
    if (a->live && a->mark != sys->epoch) {
        a->mark = sys->epoch;
        push_u32(&sys->comp_acts, &sys->n_comp_acts, &sys->cap_comp_acts, s, "fluid comp");
    }
}

static void visit_res(fluid_sys *sys, uint32_t r)
{
    if (sys->res[r].mark != sys->epoch) {
        sys->res[r].mark = sys->epoch;
        push_u32(&sys->comp_res, &sys->n_comp_res, &sys->cap_comp_res, r, "fluid comp");
    }
}

/* Collect the component reachable from the dirty sets into comp_acts / comp_res. */
static void collect(fluid_sys *sys)
{
    sys->epoch++;
    sys->n_comp_acts = sys->n_comp_res = 0;
    for (uint32_t i = 0; i < sys->n_dirty_res; i++) {
        sys->res[sys->dirty_res[i]].dirty_listed = false;
        visit_res(sys, sys->dirty_res[i]);
    }
    for (uint32_t i = 0; i < sys->n_dirty_acts; i++) {
        sys->acts[sys->dirty_acts[i]].dirty_listed = false;
        visit_act(sys, sys->dirty_acts[i]);
    }
    sys->n_dirty_res = sys->n_dirty_acts = 0;
    uint32_t ia = 0, ir = 0;
    while (ia < sys->n_comp_acts || ir < sys->n_comp_res) {
        while (ir < sys->n_comp_res) {
            const res *r = &sys->res[sys->comp_res[ir++]];
            for (uint32_t k = 0; k < r->n_users; k++) {
                visit_act(sys, r->users[k].act);
            }
        }
        while (ia < sys->n_comp_acts) {
            const act *a = &sys->acts[sys->comp_acts[ia++]];
            for (uint32_t k = 0; k < a->n_uses; k++) {
                visit_res(sys, a->uses[k].res);
            }
        }
    }
}

/* Make room for a problem of nf flows, nr resources and nu uses (capacities doubled). */
static void reserve(fluid_sys *sys, size_t nf, size_t nr, size_t nu)
{
    if (nf + 1 > sys->cap_pf) {
        sys->cap_pf = 2 * (nf + 1);
        sys->bound = xrealloc(sys->bound, sys->cap_pf * sizeof *sys->bound, "fluid solve");
        sys->rate = xrealloc(sys->rate, sys->cap_pf * sizeof *sys->rate, "fluid solve");
        sys->flow_start =
            xrealloc(sys->flow_start, sys->cap_pf * sizeof *sys->flow_start, "fluid solve");
    }
    if (nr + 1 > sys->cap_pr) {
        sys->cap_pr = 2 * (nr + 1);
        sys->capacity = xrealloc(sys->capacity, sys->cap_pr * sizeof *sys->capacity, "fluid solve");
        sys->res_start =
            xrealloc(sys->res_start, sys->cap_pr * sizeof *sys->res_start, "fluid solve");
    }
    if (nu + 1 > sys->cap_pu) {
        sys->cap_pu = 2 * (nu + 1);
        sys->flow_res = xrealloc(sys->flow_res, sys->cap_pu * sizeof *sys->flow_res, "fluid solve");
        sys->flow_coeff =
            xrealloc(sys->flow_coeff, sys->cap_pu * sizeof *sys->flow_coeff, "fluid solve");
        sys->res_flow = xrealloc(sys->res_flow, sys->cap_pu * sizeof *sys->res_flow, "fluid solve");
        sys->res_coeff =
            xrealloc(sys->res_coeff, sys->cap_pu * sizeof *sys->res_coeff, "fluid solve");
    }
}

/* Solve the component: lay it out as a maxmin_problem (activities and resources in the order
 * collect() reached them, a resource's users in arrival order) and leave each activity's new
 * rate in sys->rate[a->idx]. */
static void solve(fluid_sys *sys)
{
    uint32_t nf = sys->n_comp_acts, nr = sys->n_comp_res;
    size_t n_uses = 0;
    for (uint32_t i = 0; i < nf; i++) {
        act *a = &sys->acts[sys->comp_acts[i]];
        a->idx = i;
        n_uses += a->n_uses;
        /* an activity needs a resource or a finite cap */
        SIM_ASSERT(a->n_uses > 0 || isfinite(a->cap));
    }
    SIM_ASSERT(n_uses < NONE32);
    reserve(sys, nf, nr, n_uses);
    for (uint32_t j = 0; j < nr; j++) {
        sys->res[sys->comp_res[j]].idx = j;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < nf; i++) {
        const act *a = &sys->acts[sys->comp_acts[i]];
        sys->flow_start[i] = k;
        sys->bound[i] = a->cap;
        for (uint32_t u = 0; u < a->n_uses; u++) {
            sys->flow_res[k] = sys->res[a->uses[u].res].idx;
            sys->flow_coeff[k++] = a->uses[u].coeff;
        }
    }
    sys->flow_start[nf] = k;
    k = 0;
    for (uint32_t j = 0; j < nr; j++) {
        const res *r = &sys->res[sys->comp_res[j]];
        sys->res_start[j] = k;
        sys->capacity[j] = r->capacity;
        for (uint32_t u = 0; u < r->n_users; u++) {
            const act *a = &sys->acts[r->users[u].act];
            sys->res_flow[k] = a->idx;
            sys->res_coeff[k++] = a->uses[r->users[u].use].coeff;
        }
    }
    sys->res_start[nr] = k;
    maxmin_problem p = {nf,
                        nr,
                        sys->bound,
                        sys->capacity,
                        sys->flow_start,
                        sys->flow_res,
                        sys->flow_coeff,
                        sys->res_start,
                        sys->res_flow,
                        sys->res_coeff};
    maxmin_solve(&p, &sys->ws, sys->rate);
}

/* Integrate progress to now at the old rates, then install the solved rates. */
static void apply(fluid_sys *sys)
{
    sim_time now = sim_now(sys->ctx);
    for (uint32_t i = 0; i < sys->n_comp_acts; i++) {
        uint32_t s = sys->comp_acts[i];
        act *a = &sys->acts[s];
        integrate(a, now);
        double x = sys->rate[i];
        if (x != a->rate || a->ev == SIM_EVENT_NONE) {
            a->rate = x;
            sys->n_rerated++;
            schedule_completion(sys, s);
        }
    }
}

void fluid_flush(fluid_sys *sys)
{
    if (sys->flush_ev != SIM_EVENT_NONE) {
        sim_cancel(sys->ctx, sys->flush_ev);
        sys->flush_ev = SIM_EVENT_NONE;
    }
    if (sys->n_dirty_acts == 0 && sys->n_dirty_res == 0) {
        return;
    }
    collect(sys);
    solve(sys);
    apply(sys);
    sys->n_solves++;
}

/* ---- component ----------------------------------------------------------------------- */

static int fluid_init(sim_ctx *ctx, void *state, const void *arg)
{
    (void)arg;
    fluid_sys *sys = state;
    sys->ctx = ctx;
    sys->free_head = NONE32;
    return 0;
}

static void fluid_fini(sim_ctx *ctx, void *state)
{
    (void)ctx;
    fluid_sys *sys = state;
    for (uint32_t i = 0; i < sys->n_res; i++) {
        free(sys->res[i].name);
        free(sys->res[i].users);
    }
    for (uint32_t i = 0; i < sys->n_acts; i++) {
        free(sys->acts[i].uses);
    }
    free(sys->res);
    free(sys->acts);
    free(sys->dirty_acts);
    free(sys->dirty_res);
    free(sys->comp_acts);
    free(sys->comp_res);
    free(sys->bound);
    free(sys->rate);
    free(sys->capacity);
    free(sys->flow_start);
    free(sys->flow_res);
    free(sys->flow_coeff);
    free(sys->res_start);
    free(sys->res_flow);
    free(sys->res_coeff);
    maxmin_ws_fini(&sys->ws);
}

static int fluid_verify(const sim_ctx *ctx, const void *state, char *why, size_t why_len)
{
    const fluid_sys *sys = state;
    sim_time now = sim_now(ctx);
    bool clean = sys->flush_ev == SIM_EVENT_NONE && !sys->n_dirty_acts && !sys->n_dirty_res;
    for (uint32_t s = 0; s < sys->n_acts; s++) {
        const act *a = &sys->acts[s];
        if (!a->live) {
            continue;
        }
        double rate_slack = CHECK_EPS * (a->rate + 1);
        double l = a->left - a->rate * sim_time_to_s(now - a->t_upd);
        if (!(a->left >= 0) || l < -rate_slack - CHECK_EPS * a->left) {
            snprintf(why, why_len, "fluid: activity %u has remaining work %g < 0 at t=%lld ns", s,
                     l, (long long)now);
            return SIM_ERANGE;
        }
        /* a cap lowered at this instant holds from the pending flush on */
        if (!(a->rate >= 0) || (clean && a->rate > a->cap * (1 + CHECK_EPS))) {
            snprintf(why, why_len, "fluid: activity %u rate %g outside [0, cap %g]", s, a->rate,
                     a->cap);
            return SIM_ERANGE;
        }
    }
    if (!clean) {
        return 0; /* allocations are being recomputed at this instant */
    }
    for (uint32_t j = 0; j < sys->n_res; j++) {
        const res *r = &sys->res[j];
        double sum = 0;
        for (uint32_t k = 0; k < r->n_users; k++) {
            const act *a = &sys->acts[r->users[k].act];
            sum += a->uses[r->users[k].use].coeff * a->rate;
        }
        if (sum > r->capacity * (1 + CHECK_EPS) + CHECK_EPS) {
            snprintf(why, why_len, "fluid: resource '%s' allocates %g > capacity %g", r->name, sum,
                     r->capacity);
            return SIM_ERANGE;
        }
    }
    return 0;
}

static const sim_component_ops fluid_component = {
    "fluid", sizeof(fluid_sys), fluid_init, fluid_fini, fluid_verify,
};

fluid_sys *fluid_create(sim_ctx *ctx)
{
    fluid_sys *sys = sim_component_add(ctx, &fluid_component, NULL, NULL);
    SIM_ASSERT(sys != NULL);
    sim_expect_moves(ctx, on_complete); /* rescheduled at every rate change */
    return sys;
}

sim_ctx *fluid_ctx(const fluid_sys *sys)
{
    return sys->ctx;
}

/* ---- resources ----------------------------------------------------------------------- */

fluid_res_id fluid_resource_add(fluid_sys *sys, const char *name, double capacity)
{
    SIM_ASSERT(name && isfinite(capacity) && capacity >= 0);
    SIM_ASSERT(sys->n_res < NONE32 - 1);
    if (sys->n_res == sys->cap_res) {
        sys->cap_res = sys->cap_res ? 2 * sys->cap_res : 16;
        sys->res = xrealloc(sys->res, (size_t)sys->cap_res * sizeof *sys->res, "fluid res");
    }
    fluid_res_id id = sys->n_res++;
    res *r = &sys->res[id];
    memset(r, 0, sizeof *r);
    r->name = xstrdup(name, "fluid res name");
    r->capacity = capacity;
    return id;
}

/* ---- activities ---------------------------------------------------------------------- */

fluid_act_id fluid_start(fluid_sys *sys, double work, const fluid_use *uses, size_t n_uses,
                         fluid_done_fn *done, void *user)
{
    SIM_ASSERT(isfinite(work) && work >= 0);
    SIM_ASSERT(n_uses == 0 || uses != NULL);
    SIM_ASSERT(n_uses < NONE32);
    for (size_t k = 0; k < n_uses; k++) {
        SIM_ASSERT(uses[k].res < sys->n_res);
        SIM_ASSERT(isfinite(uses[k].coeff) && uses[k].coeff > 0);
        for (size_t m = 0; m < k; m++) {
            SIM_ASSERT(uses[m].res != uses[k].res); /* each resource at most once */
        }
    }
    uint32_t s;
    if (sys->free_head != NONE32) {
        s = sys->free_head;
        sys->free_head = sys->acts[s].next_free;
    } else {
        if (sys->n_acts == sys->cap_acts) {
            SIM_ASSERT(sys->cap_acts < NONE32 / 2);
            sys->cap_acts = sys->cap_acts ? 2 * sys->cap_acts : 16;
            sys->acts =
                xrealloc(sys->acts, (size_t)sys->cap_acts * sizeof *sys->acts, "fluid acts");
        }
        s = sys->n_acts++;
        memset(&sys->acts[s], 0, sizeof sys->acts[s]);
    }
    act *a = &sys->acts[s];
    a->gen = a->gen == UINT32_MAX ? 1 : a->gen + 1;
    a->live = true;
    a->left = work;
    a->t_upd = sim_now(sys->ctx);
    a->rate = 0;
    a->cap = FLUID_NO_CAP;
    a->done = done;
    a->user = user;
    a->ev = SIM_EVENT_NONE;
    a->mark = 0;
    if (n_uses > a->cap_uses) {
        a->cap_uses = (uint32_t)n_uses;
        a->uses = xrealloc(a->uses, n_uses * sizeof *a->uses, "fluid uses");
    }
    a->n_uses = (uint32_t)n_uses;
    for (uint32_t k = 0; k < a->n_uses; k++) {
        res *r = &sys->res[uses[k].res];
        if (r->n_users == r->cap_users) {
            r->cap_users = r->cap_users ? 2 * r->cap_users : 4;
            r->users = xrealloc(r->users, (size_t)r->cap_users * sizeof *r->users, "fluid users");
        }
        a->uses[k] = (use_rec){uses[k].res, r->n_users, uses[k].coeff};
        r->users[r->n_users++] = (res_user){s, k};
    }
    sys->n_live++;
    dirty_act(sys, s);
    return make_id(s, a->gen);
}

bool fluid_set_rate_cap(fluid_sys *sys, fluid_act_id id, double cap)
{
    SIM_ASSERT(cap >= 0 && !isnan(cap));
    uint32_t s = lookup(sys, id);
    if (s == NONE32) {
        return false;
    }
    sys->acts[s].cap = cap;
    dirty_act(sys, s);
    return true;
}

bool fluid_cancel(fluid_sys *sys, fluid_act_id id, double *remaining)
{
    uint32_t s = lookup(sys, id);
    if (s == NONE32) {
        return false;
    }
    act *a = &sys->acts[s];
    integrate(a, sim_now(sys->ctx));
    if (remaining) {
        *remaining = a->left;
    }
    if (a->ev != SIM_EVENT_NONE) {
        sim_cancel(sys->ctx, a->ev);
        a->ev = SIM_EVENT_NONE;
    }
    detach(sys, s);
    free_act(sys, s);
    return true;
}

double fluid_remaining(const fluid_sys *sys, fluid_act_id id)
{
    uint32_t s = lookup(sys, id);
    return s == NONE32 ? (double)NAN : left_at(&sys->acts[s], sim_now(sys->ctx));
}

uint64_t fluid_n_solves(const fluid_sys *sys)
{
    return sys->n_solves;
}

uint64_t fluid_n_rerated(const fluid_sys *sys)
{
    return sys->n_rerated;
}
