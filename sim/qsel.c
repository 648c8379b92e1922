/* sim/qsel.c - exact quantiles in bounded memory (see qsel.h). */
#include "sim/qsel.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"

#define QSEL_BITS 16
#define QSEL_BUCKETS (1u << QSEL_BITS)
#define QSEL_WANTS (2 * QSEL_MAX_P)

/* Values whose key's top `known` bits are `prefix`: counted per bucket of the next 16 bits, or
 * gathered whole. */
typedef struct qsel_range {
    int known; /* 0, 16, 32 or 48 */
    uint64_t prefix;
    bool gather;
    uint32_t *count; /* counting: QSEL_BUCKETS each */
    uint64_t *kmin, *kmax;
    uint64_t *vals; /* gathering: the keys */
    size_t n_vals, cap_vals;
} qsel_range;

/* One order statistic wanted: the rank-th smallest value (0-based). */
typedef struct qsel_want {
    uint64_t rank;
    uint64_t below; /* values outside its range with smaller keys */
    int range;      /* its range this pass; -1: known */
    uint64_t key;   /* when known */
} qsel_want;

struct qsel {
    size_t cap;
    int n_p;
    double p[QSEL_MAX_P];
    uint64_t n, max_key;
    int pass;
    uint64_t *kept; /* the first pass's keys while they fit */
    size_t n_kept, cap_kept;
    bool over; /* more than cap values: kept given up */
    qsel_range r[QSEL_WANTS];
    int n_r;
    qsel_want w[QSEL_WANTS];
    int n_w;
    int lhs[QSEL_MAX_P], rhs[QSEL_MAX_P]; /* per p: its wants (rhs -1: none) */
    bool done;
};

/* The order-preserving unsigned key of a double (as sim/stats.c sorts them: -0 before +0). */
static uint64_t key_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b >> 63 ? ~b : b | 0x8000000000000000ULL;
}

static double value_of(uint64_t k)
{
    uint64_t b = k >> 63 ? k & 0x7FFFFFFFFFFFFFFFULL : ~k;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* The k-th smallest of a[0..n) (k < n), a reordered: Hoare's selection, median-of-three pivots
 * (runs of equal keys split evenly, so a million equal waits stay linear). */
static uint64_t select_key(uint64_t *a, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k;
    while (lo < hi) {
        uint64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
        uint64_t piv = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < piv) {
                i++;
            }
            while (a[j] > piv) {
                j--;
            }
            if (i <= j) {
                uint64_t t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (want <= j) {
            hi = j;
        } else if (want >= i) {
            lo = i;
        } else {
            return a[want];
        }
    }
    return a[want];
}

qsel *qsel_create(size_t cap, const double *p, int n_p)
{
    SIM_ASSERT(cap >= 1 && n_p >= 1 && n_p <= QSEL_MAX_P);
    qsel *q = xcalloc(1, sizeof *q, "quantiles");
    q->cap = cap;
    q->n_p = n_p;
    for (int i = 0; i < n_p; i++) {
        SIM_ASSERT(p[i] >= 0 && p[i] <= 1);
        q->p[i] = p[i];
    }
    return q;
}

static void range_free(qsel_range *r)
{
    free(r->count);
    free(r->kmin);
    free(r->kmax);
    free(r->vals);
    memset(r, 0, sizeof *r);
}

void qsel_destroy(qsel *q)
{
    if (!q) {
        return;
    }
    for (int i = 0; i < q->n_r; i++) {
        range_free(&q->r[i]);
    }
    free(q->kept);
    free(q);
}

static void range_count_init(qsel_range *r)
{
    r->count = xcalloc(QSEL_BUCKETS, sizeof *r->count, "quantile counts");
    r->kmin = xmalloc(QSEL_BUCKETS * sizeof *r->kmin, "quantile counts");
    r->kmax = xcalloc(QSEL_BUCKETS, sizeof *r->kmax, "quantile counts");
    memset(r->kmin, 0xFF, QSEL_BUCKETS * sizeof *r->kmin);
}

/* Key k into the ranges it falls in. */
static void range_add(qsel *q, uint64_t k)
{
    for (int i = 0; i < q->n_r; i++) {
        qsel_range *r = &q->r[i];
        if (r->known && k >> (64 - r->known) != r->prefix) {
            continue;
        }
        if (r->gather) {
            if (r->n_vals == r->cap_vals) {
                r->cap_vals = r->cap_vals ? 2 * r->cap_vals : 1024;
                r->vals = xrealloc(r->vals, r->cap_vals * sizeof *r->vals, "quantile values");
            }
            r->vals[r->n_vals++] = k;
            continue;
        }
        uint32_t d = (uint32_t)(k >> (64 - QSEL_BITS - r->known)) & (QSEL_BUCKETS - 1);
        r->count[d]++;
        r->kmin[d] = k < r->kmin[d] ? k : r->kmin[d];
        r->kmax[d] = k > r->kmax[d] ? k : r->kmax[d];
    }
}

void qsel_add(qsel *q, double v)
{
    SIM_ASSERT(isfinite(v) && !q->done);
    uint64_t k = key_of(v);
    if (q->pass > 0) {
        range_add(q, k);
        return;
    }
    q->max_key = q->n == 0 || k > q->max_key ? k : q->max_key;
    q->n++;
    if (q->over) {
        range_add(q, k);
        return;
    }
    if (q->n_kept < q->cap) {
        if (q->n_kept == q->cap_kept) {
            q->cap_kept = q->cap_kept ? 2 * q->cap_kept : 1024;
            q->cap_kept = q->cap_kept < q->cap ? q->cap_kept : q->cap;
            q->kept = xrealloc(q->kept, q->cap_kept * sizeof *q->kept, "quantile values");
        }
        q->kept[q->n_kept++] = k;
        return;
    }
    /* more than cap: count what was kept and go on counting */
    q->over = true;
    q->n_r = 1;
    q->r[0] = (qsel_range){0};
    range_count_init(&q->r[0]);
    for (size_t i = 0; i < q->n_kept; i++) {
        range_add(q, q->kept[i]);
    }
    free(q->kept);
    q->kept = NULL;
    q->n_kept = q->cap_kept = 0;
    range_add(q, k);
}

/* The wants of every p from n (GSL's lhs and lhs + 1), each rank once. */
static void make_wants(qsel *q)
{
    for (int i = 0; i < q->n_p; i++) {
        double index = q->p[i] * (double)(q->n - 1);
        uint64_t lhs = (uint64_t)index;
        uint64_t ranks[2] = {lhs, lhs + 1};
        int *slot[2] = {&q->lhs[i], &q->rhs[i]};
        q->rhs[i] = -1;
        for (int s = 0; s < (lhs == q->n - 1 ? 1 : 2); s++) {
            int k = 0;
            while (k < q->n_w && q->w[k].rank != ranks[s]) {
                k++;
            }
            if (k == q->n_w) {
                q->w[q->n_w++] = (qsel_want){.rank = ranks[s]};
            }
            *slot[s] = k;
        }
    }
}

/* After a pass: settle each want in its range; open the ranges of the next pass. Returns true
 * when every want is known. */
static bool settle(qsel *q)
{
    qsel_range next[QSEL_WANTS];
    int n_next = 0;
    for (int k = 0; k < q->n_w; k++) {
        qsel_want *w = &q->w[k];
        if (w->range < 0) {
            continue;
        }
        qsel_range *r = &q->r[w->range];
        uint64_t at = w->rank - w->below;
        if (r->gather) {
            SIM_ASSERT(at < r->n_vals);
            w->key = select_key(r->vals, r->n_vals, (size_t)at);
            w->range = -1;
            continue;
        }
        uint32_t d = 0;
        uint64_t cum = 0;
        while (cum + r->count[d] <= at) {
            cum += r->count[d++];
            SIM_ASSERT(d < QSEL_BUCKETS);
        }
        w->below += cum;
        if (r->kmin[d] == r->kmax[d]) { /* one value alone in the bucket */
            w->key = r->kmin[d];
            w->range = -1;
            continue;
        }
        int known = r->known + QSEL_BITS;
        uint64_t prefix = r->prefix << QSEL_BITS | d;
        int i = 0;
        while (i < n_next && (next[i].known != known || next[i].prefix != prefix)) {
            i++;
        }
        if (i == n_next) {
            next[n_next] = (qsel_range){.known = known, .prefix = prefix};
            next[n_next].gather = r->count[d] <= q->cap;
            if (!next[n_next].gather) {
                range_count_init(&next[n_next]);
            }
            n_next++;
        }
        w->range = i; /* an index into next */
    }
    for (int i = 0; i < q->n_r; i++) {
        range_free(&q->r[i]);
    }
    memcpy(q->r, next, (size_t)n_next * sizeof *next);
    q->n_r = n_next;
    return n_next == 0;
}

bool qsel_pass_end(qsel *q)
{
    if (q->done) {
        return true;
    }
    if (q->pass++ == 0) {
        if (q->n == 0) {
            q->done = true;
            return true;
        }
        make_wants(q);
        if (!q->over) { /* every value kept: select them there */
            for (int k = 0; k < q->n_w; k++) {
                q->w[k].key = select_key(q->kept, q->n_kept, (size_t)q->w[k].rank);
                q->w[k].range = -1;
            }
            free(q->kept);
            q->kept = NULL;
            q->done = true;
            return true;
        }
        for (int k = 0; k < q->n_w; k++) {
            q->w[k].range = 0;
        }
    }
    q->done = settle(q);
    return q->done;
}

double qsel_quantile(const qsel *q, int i)
{
    SIM_ASSERT(q->done && q->n >= 1 && i >= 0 && i < q->n_p);
    /* gsl_stats_quantile_from_sorted_data's arithmetic */
    double index = q->p[i] * (double)(q->n - 1);
    uint64_t lhs = (uint64_t)index;
    double delta = index - (double)lhs;
    double x = value_of(q->w[q->lhs[i]].key);
    if (q->rhs[i] < 0) {
        return x;
    }
    return (1 - delta) * x + delta * value_of(q->w[q->rhs[i]].key);
}

double qsel_max(const qsel *q)
{
    SIM_ASSERT(q->n >= 1);
    return value_of(q->max_key);
}
