/* model/hw/mig.c - MIG layout rules, enumeration and placement (see mig.h). */
#include "model/hw/mig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mig_rule_ids[] = {
    "no_overlap", "max_instances", "compute_budget", "pre_r510_4g_3g", "driver_minimums",
    "auto_placement", NULL,
};

bool mig_profile_is_classic(const mig_profile *p)
{
    return !p->is_media_extension && !(p->compute_slices == 1 && p->mem_slices > 1);
}

static bool driver_at_least(int driver, int need)
{
    return driver == 0 || need == 0 || driver >= need;
}

bool mig_profile_offered(const gpu_type *g, int p, int driver)
{
    return p >= 0 && p < g->n_profiles && driver_at_least(driver, g->profiles[p].min_driver);
}

static bool start_allowed(const mig_profile *p, int start)
{
    for (int i = 0; i < p->n_starts; i++) {
        if (p->starts[i] == start) {
            return true;
        }
    }
    return false;
}

static mig_verdict fail(mig_violation *why, mig_verdict v, int a, int b, int need, int have)
{
    if (why) {
        *why = (mig_violation){v, a, b, need, have};
    }
    return v;
}

/* Is there a 4-compute-slice and a 3-compute-slice instance while the driver forbids the pair? */
static bool pair_4g_3g(const gpu_type *g, int driver, const mig_instance *inst, int n, int *a,
                       int *b)
{
    if (driver_at_least(driver, g->pair_4g_3g_min_driver)) {
        return false;
    }
    int i4 = -1, i3 = -1;
    for (int i = 0; i < n; i++) {
        int cs = g->profiles[inst[i].profile].compute_slices;
        if (cs == 4 && i4 < 0) {
            i4 = i;
        } else if (cs == 3 && i3 < 0) {
            i3 = i;
        }
    }
    *a = i4;
    *b = i3;
    return i4 >= 0 && i3 >= 0;
}

/* The rules that do not depend on where the instances sit. */
static mig_verdict count_rules(const gpu_type *g, int driver, const mig_instance *inst, int n,
                               mig_violation *why)
{
    for (int i = 0; i < n; i++) {
        const mig_profile *p = &g->profiles[inst[i].profile];
        if (!driver_at_least(driver, p->min_driver)) {
            return fail(why, MIG_PROFILE_DRIVER, i, -1, p->min_driver, driver);
        }
    }
    for (int i = 0; i < n; i++) {
        int same = 0;
        for (int j = 0; j < n; j++) {
            same += inst[j].profile == inst[i].profile;
        }
        int max = g->profiles[inst[i].profile].max_instances;
        if (max > 0 && same > max) {
            return fail(why, MIG_MAX_PER_PROFILE, i, -1, max, same);
        }
    }
    int first_me = -1;
    for (int i = 0; i < n; i++) {
        if (g->profiles[inst[i].profile].is_media_extension) {
            if (first_me >= 0) {
                return fail(why, MIG_MEDIA_EXTENSION, first_me, i, 1, 2);
            }
            first_me = i;
        }
    }
    int used = g->compute_slices - mig_idle_compute_slices(g, inst, n);
    if (used > g->compute_slices) {
        return fail(why, MIG_COMPUTE_BUDGET, -1, -1, g->compute_slices, used);
    }
    if (g->max_mig_instances > 0 && n > g->max_mig_instances) {
        return fail(why, MIG_TOO_MANY, -1, -1, g->max_mig_instances, n);
    }
    int a, b;
    if (pair_4g_3g(g, driver, inst, n, &a, &b)) {
        return fail(why, MIG_PAIR_4G_3G, a, b, g->pair_4g_3g_min_driver, driver);
    }
    return fail(why, MIG_OK, -1, -1, 0, 0);
}

/* Profiles exist, the GPU has MIG and the driver offers it. */
static mig_verdict gpu_rules(const gpu_type *g, int driver, const mig_instance *inst, int n,
                             mig_violation *why)
{
    for (int i = 0; i < n; i++) {
        if (inst[i].profile < 0 || inst[i].profile >= g->n_profiles) {
            return fail(why, MIG_BAD_PROFILE, i, -1, g->n_profiles, inst[i].profile);
        }
    }
    if (g->compute_slices <= 0 || g->memory_slices <= 0) {
        return fail(why, MIG_NO_MIG, -1, -1, 0, 0);
    }
    if (!driver_at_least(driver, g->mig_min_driver)) {
        return fail(why, MIG_GPU_DRIVER, -1, -1, g->mig_min_driver, driver);
    }
    return fail(why, MIG_OK, -1, -1, 0, 0);
}

mig_verdict mig_check(const gpu_type *g, int driver, const mig_instance *inst, int n,
                      mig_violation *why)
{
    mig_verdict v = gpu_rules(g, driver, inst, n, why);
    if (v != MIG_OK) {
        return v;
    }
    for (int i = 0; i < n; i++) {
        const mig_profile *p = &g->profiles[inst[i].profile];
        if (!driver_at_least(driver, p->min_driver)) {
            return fail(why, MIG_PROFILE_DRIVER, i, -1, p->min_driver, driver);
        }
    }
    for (int i = 0; i < n; i++) {
        const mig_profile *p = &g->profiles[inst[i].profile];
        if (!start_allowed(p, inst[i].start) || inst[i].start + p->mem_slices > g->memory_slices) {
            return fail(why, MIG_BAD_START, i, -1, 0, inst[i].start);
        }
    }
    for (int i = 0; i < n; i++) {
        const mig_profile *p = &g->profiles[inst[i].profile];
        for (int j = i + 1; j < n; j++) {
            const mig_profile *q = &g->profiles[inst[j].profile];
            if (inst[i].start < inst[j].start + q->mem_slices &&
                inst[j].start < inst[i].start + p->mem_slices) {
                return fail(why, MIG_OVERLAP, i, j, 0, 0);
            }
        }
    }
    return count_rules(g, driver, inst, n, why);
}

static const char *pname(const gpu_type *g, const mig_instance *inst, int i)
{
    return i >= 0 && inst[i].profile >= 0 && inst[i].profile < g->n_profiles
               ? g->profiles[inst[i].profile].name
               : "?";
}

const char *mig_describe(const gpu_type *g, const mig_instance *inst, const mig_violation *v,
                         char *buf, size_t len)
{
    int a = v->a, b = v->b;
    switch (v->verdict) {
    case MIG_OK:
        snprintf(buf, len, "valid");
        break;
    case MIG_BAD_PROFILE:
        snprintf(buf, len, "instance %d has no profile of %s", a, g->name);
        break;
    case MIG_NO_MIG:
        snprintf(buf, len, "%s does not support MIG", g->name);
        break;
    case MIG_GPU_DRIVER:
        snprintf(buf, len, "MIG on %s needs driver R%d or newer, got R%d", g->name, v->need,
                 v->have);
        break;
    case MIG_PROFILE_DRIVER:
        snprintf(buf, len, "profile %s needs driver R%d or newer, got R%d", pname(g, inst, a),
                 v->need, v->have);
        break;
    case MIG_BAD_START: {
        const mig_profile *p = &g->profiles[inst[a].profile];
        int n = snprintf(buf, len, "%s cannot start at memory slice %d; allowed starts {",
                         p->name, inst[a].start);
        for (int i = 0; i < p->n_starts && n >= 0 && (size_t)n < len; i++) {
            n += snprintf(buf + n, len - (size_t)n, "%s%d", i ? "," : "", p->starts[i]);
        }
        if (n >= 0 && (size_t)n < len) {
            snprintf(buf + n, len - (size_t)n, "}:%d", p->mem_slices);
        }
        break;
    }
    case MIG_OVERLAP: {
        const mig_profile *p = &g->profiles[inst[a].profile];
        const mig_profile *q = &g->profiles[inst[b].profile];
        int lo = inst[a].start > inst[b].start ? inst[a].start : inst[b].start;
        int ea = inst[a].start + p->mem_slices, eb = inst[b].start + q->mem_slices;
        int hi = (ea < eb ? ea : eb) - 1;
        snprintf(buf, len, "%s@%d overlaps %s@%d on memory slices %d..%d", p->name, inst[a].start,
                 q->name, inst[b].start, lo, hi);
        break;
    }
    case MIG_MAX_PER_PROFILE:
        snprintf(buf, len, "%d instances of %s; at most %d fit on %s", v->have, pname(g, inst, a),
                 v->need, g->name);
        break;
    case MIG_MEDIA_EXTENSION:
        snprintf(buf, len, "%s and %s both carry media extensions; at most one +me instance per GPU",
                 pname(g, inst, a), pname(g, inst, b));
        break;
    case MIG_TOO_MANY:
        snprintf(buf, len, "%d instances; %s allows at most %d", v->have, g->name, v->need);
        break;
    case MIG_COMPUTE_BUDGET:
        snprintf(buf, len, "needs %d compute slices; %s has %d", v->have, g->name, v->need);
        break;
    case MIG_PAIR_4G_3G:
        snprintf(buf, len, "%s and %s may coexist only from driver R%d, got R%d",
                 pname(g, inst, a), pname(g, inst, b), v->need, v->have);
        break;
    }
    return buf;
}

int mig_idle_compute_slices(const gpu_type *g, const mig_instance *inst, int n)
{
    int used = 0;
    for (int i = 0; i < n; i++) {
        used += g->profiles[inst[i].profile].compute_slices;
    }
    return g->compute_slices - used;
}

int mig_idle_memory_slices(const gpu_type *g, const mig_instance *inst, int n)
{
    int idle = 0;
    for (int s = 0; s < g->memory_slices; s++) {
        bool covered = false;
        for (int i = 0; i < n && !covered; i++) {
            covered = s >= inst[i].start && s < inst[i].start + g->profiles[inst[i].profile].mem_slices;
        }
        idle += !covered;
    }
    return idle;
}

int mig_layout_sms(const gpu_type *g, const mig_instance *inst, int n)
{
    int sms = 0;
    for (int i = 0; i < n; i++) {
        int s = g->profiles[inst[i].profile].sms;
        if (s <= 0) {
            return 0;
        }
        sms += s;
    }
    return sms;
}

/* Profile indices in the order the enumeration and the placement try them: decreasing compute
 * slices, then decreasing memory slices, then catalog order. Returns how many were kept. */
static int profile_order(const gpu_type *g, int driver, bool all_profiles, int *order)
{
    int n = 0;
    for (int p = 0; p < g->n_profiles; p++) {
        const mig_profile *pp = &g->profiles[p];
        if (!mig_profile_offered(g, p, driver) || pp->mem_slices <= 0 || pp->n_starts <= 0 ||
            (!all_profiles && !mig_profile_is_classic(pp))) {
            continue;
        }
        int k = n++;
        while (k > 0) {
            const mig_profile *q = &g->profiles[order[k - 1]];
            bool before = pp->compute_slices > q->compute_slices ||
                          (pp->compute_slices == q->compute_slices && pp->mem_slices > q->mem_slices);
            if (!before) {
                break;
            }
            order[k] = order[k - 1];
            k--;
        }
        order[k] = p;
    }
    return n;
}

typedef struct enum_state {
    const gpu_type *g;
    const mig_enum_opts *opt;
    int order[GPU_MAX_PROFILES];
    int n_order;
    mig_layout cur;
    mig_layout_fn *fn;
    void *ctx;
    long count;
    bool stop;
} enum_state;

static bool valid_with(enum_state *st, int p, int start)
{
    mig_layout *l = &st->cur;
    l->inst[l->n] = (mig_instance){p, start};
    bool ok = l->n < MIG_MAX_INSTANCES &&
              mig_check(st->g, st->opt->driver, l->inst, l->n + 1, NULL) == MIG_OK;
    return ok;
}

static bool is_maximal(enum_state *st)
{
    if (st->cur.n >= MIG_MAX_INSTANCES) {
        return true;
    }
    for (int k = 0; k < st->n_order; k++) {
        const mig_profile *p = &st->g->profiles[st->order[k]];
        for (int s = 0; s < p->n_starts; s++) {
            if (valid_with(st, st->order[k], p->starts[s])) {
                return false;
            }
        }
    }
    return true;
}

static void visit(enum_state *st)
{
    if (st->cur.n == 0 || (st->opt->maximal_only && !is_maximal(st))) {
        return;
    }
    st->count++;
    if (st->fn && st->fn(&st->cur, st->ctx)) {
        st->stop = true;
    }
}

/* Depth-first: every layout is produced once, with its instances in ascending start. */
static void dfs(enum_state *st, int slice)
{
    if (st->stop) {
        return;
    }
    if (slice >= st->g->memory_slices) {
        visit(st);
        return;
    }
    for (int k = 0; k < st->n_order && !st->stop; k++) {
        int p = st->order[k];
        if (st->cur.n < MIG_MAX_INSTANCES && start_allowed(&st->g->profiles[p], slice) &&
            valid_with(st, p, slice)) {
            st->cur.n++;
            dfs(st, slice + st->g->profiles[p].mem_slices);
            st->cur.n--;
        }
    }
    dfs(st, slice + 1);
}

long mig_enumerate(const gpu_type *g, const mig_enum_opts *opt, mig_layout_fn *fn, void *ctx)
{
    if (g->compute_slices <= 0 || g->memory_slices <= 0 || g->memory_slices > GPU_MAX_SLICES ||
        !driver_at_least(opt->driver, g->mig_min_driver)) {
        return 0;
    }
    enum_state st = {.g = g, .opt = opt, .fn = fn, .ctx = ctx};
    st.n_order = profile_order(g, opt->driver, opt->all_profiles, st.order);
    dfs(&st, 0);
    return st.count;
}

/* ---- automatic placement ---- */

typedef struct place_state {
    const gpu_type *g;
    int driver;
    int want[MIG_MAX_INSTANCES]; /* profile of each instance, largest first */
    int n_want;
    mig_layout cur;
} place_state;

static bool place_rec(place_state *ps, int i)
{
    if (i == ps->n_want) {
        return true;
    }
    const mig_profile *p = &ps->g->profiles[ps->want[i]];
    /* Identical instances take decreasing starts, so no permutation is searched twice. */
    int limit = GPU_MAX_SLICES;
    if (i > 0 && ps->want[i - 1] == ps->want[i]) {
        limit = ps->cur.inst[i - 1].start;
    }
    for (int s = p->n_starts - 1; s >= 0; s--) {
        if (p->starts[s] >= limit) {
            continue;
        }
        ps->cur.inst[i] = (mig_instance){ps->want[i], p->starts[s]};
        ps->cur.n = i + 1;
        if (mig_check(ps->g, ps->driver, ps->cur.inst, i + 1, NULL) == MIG_OK &&
            place_rec(ps, i + 1)) {
            return true;
        }
    }
    ps->cur.n = i;
    return false;
}

static bool try_place(place_state *ps)
{
    ps->cur.n = 0;
    return place_rec(ps, 0);
}

mig_verdict mig_place(const gpu_type *g, int driver, const int *counts, mig_layout *out,
                      mig_layout *fit, mig_violation *why)
{
    mig_violation v;
    out->n = 0;
    if (fit) {
        fit->n = 0;
    }
    int total = 0;
    for (int p = 0; p < g->n_profiles; p++) {
        total += counts[p] > 0 ? counts[p] : 0;
    }
    if (gpu_rules(g, driver, NULL, 0, &v) != MIG_OK) {
        return fail(why, v.verdict, -1, -1, v.need, v.have);
    }
    if (total > MIG_MAX_INSTANCES) { /* more than one per memory slice: cannot fit, no subset */
        int used_c = 0;
        for (int p = 0; p < g->n_profiles; p++) {
            used_c += counts[p] > 0 ? counts[p] * g->profiles[p].compute_slices : 0;
        }
        if (used_c > g->compute_slices) {
            return fail(why, MIG_COMPUTE_BUDGET, -1, -1, g->compute_slices, used_c);
        }
        return fail(why, MIG_TOO_MANY, -1, -1, MIG_MAX_INSTANCES, total);
    }
    /* The instances, largest first; each at its profile's first start for the count rules. */
    int order[GPU_MAX_PROFILES];
    int n_order = profile_order(g, 0, true, order);
    mig_layout all = {0};
    for (int k = 0; k < n_order; k++) {
        for (int c = 0; c < counts[order[k]]; c++) {
            all.inst[all.n++] = (mig_instance){order[k], g->profiles[order[k]].starts[0]};
        }
    }
    if (all.n != total) { /* a requested profile has no placement data */
        for (int p = 0; p < g->n_profiles; p++) {
            if (counts[p] > 0 && (g->profiles[p].n_starts <= 0 || g->profiles[p].mem_slices <= 0)) {
                out->inst[0] = (mig_instance){p, 0};
                out->n = 1;
                return fail(why, MIG_BAD_START, 0, -1, 0, 0);
            }
        }
    }
    *out = all;
    mig_verdict pre = count_rules(g, driver, all.inst, all.n, &v);
    if (pre != MIG_OK && pre != MIG_COMPUTE_BUDGET) {
        if (why) {
            *why = v;
        }
        return pre;
    }
    if (pre == MIG_OK) {
        place_state ps = {.g = g, .driver = driver, .n_want = all.n};
        for (int i = 0; i < all.n; i++) {
            ps.want[i] = all.inst[i].profile;
        }
        if (try_place(&ps)) {
            *out = ps.cur;
            return fail(why, MIG_OK, -1, -1, 0, 0);
        }
        int used_m = 0;
        for (int i = 0; i < all.n; i++) {
            used_m += g->profiles[all.inst[i].profile].mem_slices;
        }
        v = (mig_violation){MIG_OVERLAP, -1, -1, g->memory_slices, used_m};
    }
    /* It does not fit: find a maximal subset that does, largest first. */
    if (fit) {
        place_state sub = {.g = g, .driver = driver};
        for (int i = 0; i < all.n; i++) {
            sub.want[sub.n_want++] = all.inst[i].profile;
            if (!try_place(&sub)) {
                sub.n_want--;
            }
        }
        try_place(&sub);
        *fit = sub.cur;
    }
    if (why) {
        *why = v;
    }
    return v.verdict;
}

bool mig_parse_driver(const char *s, int *branch)
{
    if (!s) {
        return false;
    }
    if (s[0] == 'R' || s[0] == 'r') {
        s++;
    }
    if (*s < '0' || *s > '9') {
        return false;
    }
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || v < 1 || v > 9999) {
        return false;
    }
    /* A full version: digits and dots after the branch. */
    if (*end == '.') {
        const char *q = end;
        while (*q == '.' || (*q >= '0' && *q <= '9')) {
            if (q[0] == '.' && (q[1] < '0' || q[1] > '9')) {
                return false;
            }
            q++;
        }
        end = (char *)q;
    }
    if (*end) {
        return false;
    }
    *branch = (int)v;
    return true;
}

void mig_layout_sort(mig_layout *l)
{
    for (int i = 1; i < l->n; i++) {
        mig_instance x = l->inst[i];
        int j = i;
        while (j > 0 && l->inst[j - 1].start > x.start) {
            l->inst[j] = l->inst[j - 1];
            j--;
        }
        l->inst[j] = x;
    }
}

const char *mig_layout_format(const gpu_type *g, const mig_layout *l, char *buf, size_t n)
{
    size_t used = 0;
    if (n == 0) {
        return buf;
    }
    snprintf(buf, n, "%s", l->n ? "" : "(none)");
    for (int i = 0; i < l->n && used + 1 < n; i++) {
        int k = snprintf(buf + used, n - used, "%s%s@%d", i ? " + " : "",
                         g->profiles[l->inst[i].profile].name, l->inst[i].start);
        if (k < 0) {
            break;
        }
        used += (size_t)k;
    }
    return buf;
}
