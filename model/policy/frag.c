/* model/policy/frag.c - FGD's fragmentation measure (see frag.h). */
#include "model/policy/frag.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"

int frag_type_allowed(const char *spec, const char *name)
{
    if (!spec || !*spec) {
        return 1;
    }
    if (!name) {
        return 0;
    }
    size_t len = strlen(name);
    for (const char *p = spec; *p;) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == len && !strncmp(p, name, n)) {
            return 1;
        }
        p += n + (e != NULL);
    }
    return 0;
}

frag_pod frag_pod_make(uint32_t per_worker, uint32_t gpu_milli, uint64_t cpu_milli,
                       const char *gpu_spec)
{
    frag_pod p = {.cpu_milli = cpu_milli, .gpu_spec = gpu_spec};
    if (per_worker == 0) {
        return p;
    }
    bool share = gpu_milli > 0 && gpu_milli < MILLI_PER_GPU && per_worker == 1;
    p.n_gpu = per_worker;
    p.milli = share ? gpu_milli : MILLI_PER_GPU;
    return p;
}

uint64_t frag_idle(const frag_node *n)
{
    uint64_t s = 0;
    for (uint32_t i = 0; i < n->n_gpus; i++) {
        s += n->milli_left[i];
    }
    return s;
}

/* The fragmentation of node n for every typical pod, weighted by frequency (FGD's definition,
 * frag.go: for one pod shape, a CPU-only pod or one that cannot land here counts all idle GPU
 * share, one that can counts the GPUs each too small for one of its GPUs, class Q3), with the
 * node's idle share summed once and one pass over the GPUs per pod (counting those with enough
 * free and summing those too small). tests/unit/oracle_frag.h states the definition pod by pod
 * and the tests hold this against it. */
double frag_node_amount(const frag_node *n, const frag_typical *t)
{
    uint64_t idle = frag_idle(n);
    double s = 0;
    for (size_t i = 0; i < t->n; i++) {
        const frag_pod *p = &t->pods[i];
        uint64_t f = idle;
        if (p->n_gpu > 0 && n->cpu_left >= p->cpu_milli &&
            frag_type_allowed(p->gpu_spec, n->gpu_type)) {
            uint32_t k = 0;
            uint64_t small = 0;
            for (uint32_t g = 0; g < n->n_gpus; g++) {
                uint32_t left = n->milli_left[g];
                if (left >= p->milli) {
                    k++;
                } else {
                    small += left;
                }
            }
            f = k >= p->n_gpu ? small : idle;
        }
        s += t->freq[i] * (double)f;
    }
    return s;
}

#define FRAG_MEMO_CAP 65536 /* slots (a power of two); about 7 MB */

struct frag_memo_slot {
    frag_node key; /* n_gpus == UINT32_MAX: empty */
    double amount;
};

static uint64_t node_hash(const frag_node *n)
{
    uint64_t h = 1469598103934665603ull;
    h = (h ^ n->n_gpus) * 1099511628211ull;
    for (uint32_t i = 0; i < n->n_gpus; i++) {
        h = (h ^ n->milli_left[i]) * 1099511628211ull;
    }
    h = (h ^ n->cpu_left) * 1099511628211ull;
    h = (h ^ (uint64_t)(uintptr_t)n->gpu_type) * 1099511628211ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull; /* splitmix64's finaliser: every bit counts */
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static int same_node(const frag_node *a, const frag_node *b)
{
    return a->n_gpus == b->n_gpus && a->cpu_left == b->cpu_left && a->gpu_type == b->gpu_type &&
           !memcmp(a->milli_left, b->milli_left, a->n_gpus * sizeof a->milli_left[0]);
}

static void memo_clear(frag_memo *m)
{
    for (size_t i = 0; i < m->cap; i++) {
        m->slots[i].key.n_gpus = UINT32_MAX;
    }
    m->n = 0;
}

double frag_memo_amount(frag_memo *m, const frag_node *n, const frag_typical *t)
{
    if (!m->slots) {
        m->cap = FRAG_MEMO_CAP;
        m->slots = xcalloc(m->cap, sizeof *m->slots, "fragmentation cache");
        memo_clear(m);
    }
    size_t h = (size_t)(node_hash(n) & (m->cap - 1));
    while (m->slots[h].key.n_gpus != UINT32_MAX) {
        if (same_node(&m->slots[h].key, n)) {
            return m->slots[h].amount;
        }
        h = (h + 1) & (m->cap - 1);
    }
    double a = frag_node_amount(n, t);
    if (2 * (m->n + 1) > m->cap) { /* half full: start again */
        memo_clear(m);
        h = (size_t)(node_hash(n) & (m->cap - 1));
    }
    m->slots[h].key = *n;
    m->slots[h].amount = a;
    m->n++;
    return a;
}

size_t frag_memo_bytes(void)
{
    return FRAG_MEMO_CAP * sizeof(struct frag_memo_slot);
}

void frag_memo_fini(frag_memo *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}

static int same_shape(const frag_pod *a, const frag_pod *b)
{
    return a->n_gpu == b->n_gpu && a->milli == b->milli && a->cpu_milli == b->cpu_milli &&
           (a->gpu_spec == b->gpu_spec ||
            (a->gpu_spec && b->gpu_spec && !strcmp(a->gpu_spec, b->gpu_spec)));
}

typedef struct shape_count {
    frag_pod pod;
    size_t count;
    size_t first; /* first occurrence: ties keep the workload's order */
} shape_count;

static int by_count(const void *a, const void *b)
{
    const shape_count *x = a, *y = b;
    if (x->count != y->count) {
        return x->count < y->count ? 1 : -1;
    }
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Hash of a shape, for counting. */
static uint64_t shape_hash(const frag_pod *p)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t v[3] = {p->n_gpu, p->milli, p->cpu_milli};
    for (int i = 0; i < 3; i++) {
        h = (h ^ v[i]) * 1099511628211ull;
    }
    for (const char *s = p->gpu_spec; s && *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return h;
}

struct frag_shapes {
    size_t *slot; /* open addressing: index + 1 into sc, 0 = empty */
    size_t cap;   /* slots, a power of two above twice the shapes */
    shape_count *sc;
    size_t n_sc, cap_sc;
    size_t n_pods; /* pods counted so far */
    size_t last;   /* the shape counted last (consecutive jobs often share one) */
};

frag_shapes *frag_shapes_create(void)
{
    frag_shapes *s = xcalloc(1, sizeof *s, "typical pods");
    s->cap = 16;
    s->slot = xcalloc(s->cap, sizeof *s->slot, "typical pods");
    s->cap_sc = 8;
    s->sc = xcalloc(s->cap_sc, sizeof *s->sc, "typical pods");
    return s;
}

/* The slot of shape p: its own, or the empty one where it goes. */
static size_t shape_slot(const frag_shapes *s, const frag_pod *p)
{
    size_t h = (size_t)(shape_hash(p) & (s->cap - 1));
    while (s->slot[h] && !same_shape(&s->sc[s->slot[h] - 1].pod, p)) {
        h = (h + 1) & (s->cap - 1);
    }
    return h;
}

void frag_shapes_add(frag_shapes *s, const frag_pod *p, size_t n)
{
    if (n == 0) {
        return;
    }
    if (s->n_sc > 0 && same_shape(&s->sc[s->last].pod, p)) {
        s->sc[s->last].count += n;
        s->n_pods += n;
        return;
    }
    size_t h = shape_slot(s, p);
    if (!s->slot[h]) {
        if (2 * (s->n_sc + 1) > s->cap) { /* grow and place every shape again */
            free(s->slot);
            s->cap *= 2;
            s->slot = xcalloc(s->cap, sizeof *s->slot, "typical pods");
            for (size_t i = 0; i < s->n_sc; i++) {
                s->slot[shape_slot(s, &s->sc[i].pod)] = i + 1;
            }
            h = shape_slot(s, p);
        }
        if (s->n_sc == s->cap_sc) {
            s->cap_sc *= 2;
            s->sc = xrealloc(s->sc, s->cap_sc * sizeof *s->sc, "typical pods");
        }
        s->sc[s->n_sc] = (shape_count){*p, 0, s->n_pods};
        s->slot[h] = ++s->n_sc;
    }
    s->last = s->slot[h] - 1;
    s->sc[s->last].count += n;
    s->n_pods += n;
}

void frag_shapes_finish(frag_shapes *s, double threshold, frag_typical *out)
{
    SIM_ASSERT(threshold > 0 && threshold <= 1);
    qsort(s->sc, s->n_sc, sizeof *s->sc, by_count);
    size_t keep = 0, covered = 0;
    while (keep < s->n_sc && (double)covered < threshold * (double)s->n_pods) {
        covered += s->sc[keep++].count;
    }
    out->n = keep;
    out->pods = xcalloc(keep ? keep : 1, sizeof(frag_pod), "typical pods");
    out->freq = xcalloc(keep ? keep : 1, sizeof(double), "typical pods");
    for (size_t i = 0; i < keep; i++) {
        out->pods[i] = s->sc[i].pod;
        out->freq[i] = (double)s->sc[i].count / (double)covered;
    }
    free(s->slot);
    free(s->sc);
    free(s);
}

void frag_typical_build(const frag_pod *pods, size_t n, double threshold, frag_typical *out)
{
    frag_shapes *s = frag_shapes_create();
    for (size_t i = 0; i < n; i++) {
        frag_shapes_add(s, &pods[i], 1);
    }
    frag_shapes_finish(s, threshold, out);
}

void frag_typical_fini(frag_typical *t)
{
    free(t->pods);
    free(t->freq);
    t->pods = NULL;
    t->freq = NULL;
    t->n = 0;
}
