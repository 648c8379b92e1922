#include "model/cluster/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/xalloc.h"

/* One page read back from the store: its jobs, their units pointing into `units`. */
typedef struct spill_slot {
    uint32_t page; /* UINT32_MAX: empty */
    job *jobs;     /* JOB_PAGE */
    dev_id *units;
    size_t cap_units;
} spill_slot;

/* The live jobs of a page that went out: which ids of the page (a bit each) and their records
 * in id order, so a lookup reads two words and one record (a search over the records missed the
 * cache once per step). */
typedef struct orphans {
    uint64_t bits[JOB_PAGE / 64];
    uint16_t before[JOB_PAGE / 64]; /* records of the ids below each word */
    job rec[];
} orphans;

/* What job_table_get changes in a const table: the pages read back. */
typedef struct spill_cache {
    spill_slot slot[JOB_SPILL_CACHE];
    unsigned next; /* the slot the next read replaces */
    void *buf;     /* the page's bytes as stored */
    size_t cap_buf;
} spill_cache;

struct job_table {
    job **pages;          /* per page: JOB_PAGE jobs, or NULL once spilled */
    uint32_t *live;       /* per page: jobs added and not yet ended */
    uint32_t *spill_len;   /* per spilled page: bytes of its latest image */
    uint32_t *key;         /* per spilled page: the store key of its latest image */
    orphans **orph;        /* per page spilled with live jobs: their records (the image holds
                            * them as they were); NULL otherwise */
    uint32_t *n_orph;      /* how many; live[p] of them have not ended */
    uint32_t next_key;
    size_t n, n_pages, cap_pages; /* n: jobs in pages (added or generated) */
    size_t n_total;                /* n plus the jobs the source will still give */
    job_source_fn *next;           /* NULL: no source */
    void *next_ctx;
    uint32_t *ready; /* pages full and all ended, not yet spilled */
    size_t n_ready, cap_ready;
    const job_spill_ops *ops; /* NULL: never spill */
    void *ops_ctx;
    size_t n_spilled;
    spill_cache *cache;
};

/* Free what job j holds for its units (nothing when its one unit is kept in the record). */
static void free_units(job *j)
{
    if (j->units != &j->unit1) {
        free(j->units);
    }
}

/* Record src copied to dst: a unit kept in the record points into the copy. */
static void move_record(job *dst, const job *src)
{
    *dst = *src;
    if (src->units == &src->unit1) {
        dst->units = &dst->unit1;
    }
}

job_table *job_table_create(void)
{
    job_table *t = xcalloc(1, sizeof(job_table), "job table");
    t->cache = xcalloc(1, sizeof *t->cache, "job table");
    for (unsigned i = 0; i < JOB_SPILL_CACHE; i++) {
        t->cache->slot[i].page = UINT32_MAX;
    }
    return t;
}

void job_table_destroy(job_table *t)
{
    if (!t) {
        return;
    }
    for (size_t p = 0; p < t->n_pages; p++) {
        for (size_t i = 0; t->pages[p] && i < JOB_PAGE && p * JOB_PAGE + i < t->n; i++) {
            free_units(&t->pages[p][i]);
        }
        free(t->pages[p]);
        for (uint32_t i = 0; t->orph[p] && i < t->n_orph[p]; i++) {
            free_units(&t->orph[p]->rec[i]);
        }
        free(t->orph[p]);
    }
    for (unsigned i = 0; i < JOB_SPILL_CACHE; i++) {
        free(t->cache->slot[i].jobs);
        free(t->cache->slot[i].units);
    }
    free(t->cache->buf);
    free(t->cache);
    free(t->pages);
    free(t->live);
    free(t->spill_len);
    free(t->key);
    free(t->orph);
    free(t->n_orph);
    free(t->ready);
    free(t);
}

void job_table_set_spill(job_table *t, const job_spill_ops *ops, void *ctx)
{
    t->ops = ops;
    t->ops_ctx = ctx;
}

size_t job_table_n_spilled(const job_table *t)
{
    return t->n_spilled;
}

/* The spec copied member by member into zeroed storage: a struct copy may carry the source's
 * uninitialised padding, which a spilled page would write out. */
static void copy_spec(job_spec *d, const job_spec *s)
{
    d->class_name = s->class_name;
    d->req.resource = s->req.resource;
    d->req.per_worker = s->req.per_worker;
    d->req.n_workers = s->req.n_workers;
    d->submit = s->submit;
    d->work_s = s->work_s;
    d->mem_bytes = s->mem_bytes;
    d->profile = s->profile;
    d->pod.priority = s->pod.priority;
    d->pod.gpu_milli = s->pod.gpu_milli;
    d->pod.cpu_milli = s->pod.cpu_milli;
    d->pod.host_mem_bytes = s->pod.host_mem_bytes;
    d->pod.gpu_spec = s->pod.gpu_spec;
    d->pod.qos = s->pod.qos;
    d->pod.user = s->pod.user;
    d->pod.queue = s->pod.queue;
    d->pod.place = s->pod.place;
    d->pod.node_pin = s->pod.node_pin;
    d->pod.clone = s->pod.clone;
}

/* Append a job (from the caller or the source). */
static job_id append(job_table *t, const job_spec *spec)
{
    SIM_ASSERT(spec->req.n_workers >= 1 && spec->work_s > 0); /* per_worker 0: CPU-only */
    SIM_ASSERT(t->n < UINT32_MAX);
    size_t p = t->n / JOB_PAGE;
    if (p == t->n_pages) {
        if (t->n_pages == t->cap_pages) {
            t->cap_pages = t->cap_pages ? 2 * t->cap_pages : 16;
            t->pages = xrealloc(t->pages, t->cap_pages * sizeof *t->pages, "job table");
            t->live = xrealloc(t->live, t->cap_pages * sizeof *t->live, "job table");
            t->spill_len = xrealloc(t->spill_len, t->cap_pages * sizeof *t->spill_len, "job table");
            t->key = xrealloc(t->key, t->cap_pages * sizeof *t->key, "job table");
            t->orph = xrealloc(t->orph, t->cap_pages * sizeof *t->orph, "job table");
            t->n_orph = xrealloc(t->n_orph, t->cap_pages * sizeof *t->n_orph, "job table");
        }
        /* zeroed: a spilled page writes every byte, padding included */
        t->pages[p] = xcalloc(JOB_PAGE, sizeof(job), "job table page");
        t->live[p] = 0;
        t->spill_len[p] = 0;
        t->key[p] = 0;
        t->orph[p] = NULL;
        t->n_orph[p] = 0;
        t->n_pages++;
    }
    job *j = &t->pages[p][t->n % JOB_PAGE];
    j->id = (job_id)t->n;
    copy_spec(&j->spec, spec);
    j->state = JOB_PENDING;
    j->start = -1;
    j->run_start = -1;
    j->end = -1;
    t->live[p]++;
    return (job_id)t->n++;
}

job_id job_table_add(job_table *t, const job_spec *spec)
{
    SIM_ASSERT(t->n == t->n_total); /* a source's jobs come first */
    t->n_total++;
    return append(t, spec);
}

void job_table_set_source(job_table *t, size_t n, job_source_fn *next, void *ctx)
{
    SIM_ASSERT(t->n == t->n_total && next != NULL);
    t->n_total += n;
    t->next = next;
    t->next_ctx = ctx;
}

size_t job_table_count(const job_table *t)
{
    return t->n_total;
}

/* Generate the source's jobs up to id. The table was created mutable (job_table_create): a
 * lookup through a const pointer may fill it in, as it reads spilled pages back. */
static void generate_to(const job_table *ct, job_id id)
{
    job_table *t = (job_table *)ct;
    while (t->n <= id) {
        job_spec s;
        bool more = t->next(t->next_ctx, &s);
        SIM_ASSERT(more); /* it promised n_total jobs */
        append(t, &s);
    }
}

/* A page's image: its records as 8-byte words, only those not zero (a synthetic job's pod
 * attributes, counters and unused pointers are, about half of its words: half the bytes to
 * write and read back), after a bitmap of which; then the units of its jobs in order. */
_Static_assert(sizeof(job) % sizeof(uint64_t) == 0, "a job is a whole number of words");
#define PAGE_WORDS (JOB_PAGE * sizeof(job) / sizeof(uint64_t))
#define PAGE_BITMAP (PAGE_WORDS / 64)

/* Bytes of an image whose records have nz words not zero and whose jobs hold n_units. */
static size_t image_bytes(size_t nz, size_t n_units)
{
    return (PAGE_BITMAP + nz) * sizeof(uint64_t) + n_units * sizeof(dev_id);
}

/* The records of image img into jobs (JOB_PAGE; units pointers not set); their units (at the
 * image's end) through *units. */
static void unpack_records(const void *img, job *jobs, const dev_id **units)
{
    const uint64_t *bits = img, *in = bits + PAGE_BITMAP;
    unsigned char *out = (unsigned char *)jobs;
    memset(out, 0, PAGE_WORDS * sizeof(uint64_t));
    for (size_t b = 0; b < PAGE_BITMAP; b++) {
        for (uint64_t m = bits[b]; m; m &= m - 1) { /* the words not zero, in order */
            size_t k = (size_t)__builtin_ctzll(m);
            memcpy(out + (b * 64 + k) * sizeof(uint64_t), in++, sizeof(uint64_t));
        }
    }
    *units = (const dev_id *)in;
}

/* Read spilled page p into a cache slot (the least recently filled); its jobs. */
static job *load_page(const job_table *t, uint32_t p)
{
    spill_cache *c = t->cache;
    for (unsigned i = 0; i < JOB_SPILL_CACHE; i++) {
        if (c->slot[i].page == p) {
            return c->slot[i].jobs;
        }
    }
    spill_slot *s = &c->slot[c->next];
    c->next = (c->next + 1) % JOB_SPILL_CACHE;
    size_t n = t->spill_len[p];
    if (n > c->cap_buf) {
        free(c->buf);
        c->buf = xmalloc(n, "spilled job page");
        c->cap_buf = n;
    }
    if (t->ops->get(t->ops_ctx, t->key[p], c->buf, n) != 0) {
        fprintf(stderr, "slicesim: error: cannot read back %zu bytes of spilled jobs\n", n);
        abort();
    }
    if (!s->jobs) {
        s->jobs = xmalloc(JOB_PAGE * sizeof(job), "spilled job page");
    }
    const dev_id *units;
    unpack_records(c->buf, s->jobs, &units);
    size_t n_units = (size_t)((const char *)c->buf + n - (const char *)units) / sizeof(dev_id);
    if (n_units > s->cap_units) {
        free(s->units);
        s->units = xmalloc(n_units * sizeof(dev_id), "spilled job page");
        s->cap_units = n_units;
    }
    if (n_units) {
        memcpy(s->units, units, n_units * sizeof(dev_id));
    }
    size_t at = 0;
    for (size_t i = 0; i < JOB_PAGE; i++) {
        s->jobs[i].units = s->jobs[i].n_units ? s->units + at : NULL;
        at += s->jobs[i].n_units;
    }
    SIM_ASSERT(at == n_units);
    s->page = p;
    return s->jobs;
}

/* Job id's own record when its page went out while it was live, else NULL. */
static job *find_orphan(const job_table *t, job_id id)
{
    orphans *o = t->orph[id / JOB_PAGE];
    uint32_t k = id % JOB_PAGE, w = k / 64, b = k % 64;
    if (!o || !(o->bits[w] >> b & 1u)) {
        return NULL;
    }
    return &o->rec[o->before[w] + (uint32_t)__builtin_popcountll(o->bits[w] &
                                                                  ((UINT64_C(1) << b) - 1))];
}

const job *job_table_get(const job_table *t, job_id id)
{
    SIM_ASSERT(id < t->n_total);
    if (id >= t->n) {
        generate_to(t, id);
    }
    const job *page = t->pages[id / JOB_PAGE];
    if (page) {
        return &page[id % JOB_PAGE];
    }
    job *o = find_orphan(t, id);
    return o ? o : &load_page(t, id / JOB_PAGE)[id % JOB_PAGE];
}

static job *get_mut(job_table *t, job_id id)
{
    SIM_ASSERT(id < t->n_total);
    if (id >= t->n) {
        generate_to(t, id);
    }
    if (t->pages[id / JOB_PAGE]) {
        return &t->pages[id / JOB_PAGE][id % JOB_PAGE];
    }
    job *o = find_orphan(t, id);
    SIM_ASSERT(o != NULL); /* an ended job never changes */
    return o;
}

/* A page goes out when its last job ends, or, full and still in memory, when its live jobs are
 * down to JOB_SPARSE: then its live jobs stay as orphans (their own records) and the page goes
 * out again, whole, when the last of them ends. Stragglers (a long job among a thousand short
 * ones) so hold a record each, not a page. */
#define JOB_SPARSE (JOB_PAGE / 8)

static void push_ready(job_table *t, uint32_t p)
{
    if (t->n_ready == t->cap_ready) {
        t->cap_ready = t->cap_ready ? 2 * t->cap_ready : 16;
        t->ready = xrealloc(t->ready, t->cap_ready * sizeof *t->ready, "job table");
    }
    t->ready[t->n_ready++] = p;
}

/* Job id has ended: its page may become ready to spill. */
static void ended(job_table *t, job_id id)
{
    uint32_t p = id / JOB_PAGE;
    SIM_ASSERT(t->live[p] > 0);
    t->live[p]--;
    bool full = (size_t)(p + 1) * JOB_PAGE <= t->n;
    if (t->ops && full && (t->live[p] == 0 || (t->live[p] == JOB_SPARSE && t->pages[p]))) {
        push_ready(t, p);
    }
}

static int by_page(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The image of jobs[0..JOB_PAGE) into the cache's buffer (see image_bytes); its size. */
static size_t serialise(job_table *t, const job *jobs)
{
    size_t n_units = 0;
    for (size_t i = 0; i < JOB_PAGE; i++) {
        n_units += jobs[i].n_units;
    }
    SIM_ASSERT(n_units <= UINT32_MAX);
    size_t most = image_bytes(PAGE_WORDS, n_units);
    spill_cache *c = t->cache;
    if (most > c->cap_buf) {
        free(c->buf);
        c->buf = xmalloc(most, "spilled job page");
        c->cap_buf = most;
    }
    uint64_t *bits = c->buf, *out = bits + PAGE_BITMAP;
    memset(bits, 0, PAGE_BITMAP * sizeof *bits);
    size_t w = 0;
    for (size_t i = 0; i < JOB_PAGE; i++) {
        job r = jobs[i];
        r.units = NULL; /* rebuilt from n_units when read back */
        const unsigned char *in = (const unsigned char *)&r;
        for (size_t k = 0; k < sizeof r / sizeof(uint64_t); k++, w++) {
            uint64_t x;
            memcpy(&x, in + k * sizeof x, sizeof x);
            if (x) {
                bits[w / 64] |= UINT64_C(1) << (w % 64);
                *out++ = x;
            }
        }
    }
    dev_id *u = (dev_id *)out;
    for (size_t i = 0; i < JOB_PAGE; i++) {
        if (jobs[i].n_units) {
            memcpy(u, jobs[i].units, jobs[i].n_units * sizeof(dev_id));
            u += jobs[i].n_units;
        }
    }
    return (size_t)((char *)u - (char *)c->buf);
}

/* Put the image in the cache's buffer as page p's latest; false when the store failed. */
static bool put_image(job_table *t, uint32_t p, size_t n)
{
    if (t->ops->put(t->ops_ctx, t->next_key, t->cache->buf, n) != 0) {
        return false;
    }
    t->key[p] = t->next_key++;
    SIM_ASSERT(n <= UINT32_MAX);
    t->spill_len[p] = (uint32_t)n;
    for (unsigned i = 0; i < JOB_SPILL_CACHE; i++) { /* a copy read back is out of date */
        t->cache->slot[i].page = t->cache->slot[i].page == p ? UINT32_MAX : t->cache->slot[i].page;
    }
    return true;
}

/* Write resident page p to the store and free it, its live jobs kept as orphans; false when
 * the store failed (p stays). */
static bool spill_page(job_table *t, uint32_t p)
{
    job *page = t->pages[p];
    if (!put_image(t, p, serialise(t, page))) {
        return false;
    }
    uint32_t n_live = t->live[p], k = 0;
    orphans *o = n_live ? xcalloc(1, sizeof(orphans) + n_live * sizeof(job),
                                  "live jobs of a spilled page")
                        : NULL;
    for (size_t i = 0; i < JOB_PAGE; i++) {
        bool live = page[i].state == JOB_PENDING || page[i].state == JOB_QUEUED ||
                    page[i].state == JOB_RUNNING;
        if (i % 64 == 0 && o) {
            o->before[i / 64] = (uint16_t)k;
        }
        if (live) {
            o->bits[i / 64] |= UINT64_C(1) << (i % 64);
            move_record(&o->rec[k++], &page[i]); /* its units go with it */
        } else {
            free_units(&page[i]);
        }
    }
    SIM_ASSERT(k == n_live);
    t->orph[p] = o;
    t->n_orph[p] = n_live;
    free(page);
    t->pages[p] = NULL;
    t->n_spilled += n_live == 0;
    return true;
}

/* Page p went out with live jobs, which have all ended since: its image again with their final
 * records, the orphans freed; false when the store failed (they stay). */
static bool respill_page(job_table *t, uint32_t p)
{
    job *jobs = xmalloc(JOB_PAGE * sizeof(job), "spilled job page");
    memcpy(jobs, load_page(t, p), JOB_PAGE * sizeof(job));
    for (uint32_t i = 0; i < t->n_orph[p]; i++) {
        jobs[t->orph[p]->rec[i].id % JOB_PAGE] = t->orph[p]->rec[i];
    }
    size_t n = serialise(t, jobs);
    free(jobs);
    if (!put_image(t, p, n)) {
        return false;
    }
    for (uint32_t i = 0; i < t->n_orph[p]; i++) {
        free_units(&t->orph[p]->rec[i]);
    }
    free(t->orph[p]);
    t->orph[p] = NULL;
    t->n_orph[p] = 0;
    t->n_spilled++;
    return true;
}

void job_table_spill(job_table *t)
{
    if (t->n_ready > 1) {
        qsort(t->ready, t->n_ready, sizeof *t->ready, by_page);
    }
    for (size_t i = 0; i < t->n_ready && t->ops; i++) {
        uint32_t p = t->ready[i];
        bool ok = true;
        if (t->pages[p]) { /* whole, or down to its last few live jobs */
            ok = spill_page(t, p);
        } else if (t->orph[p] && t->live[p] == 0) { /* its orphans have all ended */
            ok = respill_page(t, p);
        }
        if (!ok) {
            t->ops = NULL; /* the store failed: keep everything in memory from now on */
        }
    }
    t->n_ready = 0;
}

uint32_t job_units(const job_spec *s)
{
    return s->req.per_worker * s->req.n_workers;
}

bool job_any_slice(const job_spec *s)
{
    return s->req.resource && !strcmp(s->req.resource, JOB_RES_MIG_ANY);
}

bool job_pod_admits(const job_pod *p, node_id n, const taint_node *meta)
{
    if (p->node_pin) { /* spec.nodeName bypasses the scheduler: its node, whatever its taints */
        return n == p->node_pin - 1;
    }
    return (!meta && !p->place) || taint_admits(meta, p->place);
}

void job_submit_early(job_table *t, job_id id, sim_time now)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_PENDING && now <= j->spec.submit);
    j->spec.submit = now;
    j->state = JOB_QUEUED;
}

void job_submit(job_table *t, job_id id, sim_time now)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_PENDING && now == j->spec.submit);
    j->state = JOB_QUEUED;
}

static void set_units(job *j, const dev_id *units, uint32_t n_units)
{
    SIM_ASSERT(n_units == job_units(&j->spec) && j->units == NULL);
    if (n_units == 1) {
        j->unit1 = units[0];
        j->units = &j->unit1;
    } else if (n_units > 1) { /* a CPU-only pod holds no unit */
        j->units = xcalloc(n_units, sizeof(dev_id), "job placement");
        memcpy(j->units, units, n_units * sizeof(dev_id));
    }
    j->n_units = n_units;
}

void job_start(job_table *t, job_id id, sim_time now, const dev_id *units, uint32_t n_units)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_QUEUED && now >= j->spec.submit);
    set_units(j, units, n_units);
    j->state = JOB_RUNNING;
    j->run_start = now;
    if (j->start < 0) {
        j->start = now;
    }
}

void job_requeue(job_table *t, job_id id, sim_time now, double done_s)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_RUNNING && now >= j->start);
    SIM_ASSERT(done_s >= 0 && done_s <= j->spec.work_s);
    free_units(j);
    j->units = NULL;
    j->n_units = 0;
    j->unit1 = 0;
    j->done_s = done_s;
    j->n_restarts++;
    j->state = JOB_QUEUED;
}

void job_finish(job_table *t, job_id id, sim_time now)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_RUNNING && now >= j->start);
    j->state = JOB_DONE;
    j->end = now;
    ended(t, id);
}

void job_note_preempted(job_table *t, job_id id)
{
    get_mut(t, id)->n_preempted++;
}

/* QUEUED -> a failed state at `now` on the devices it was given. */
static void fail_at(job_table *t, job_id id, job_state s, sim_time now, const dev_id *units,
                    uint32_t n_units)
{
    job *j = get_mut(t, id);
    SIM_ASSERT(j->state == JOB_QUEUED && now >= j->spec.submit);
    set_units(j, units, n_units);
    j->state = s;
    j->start = now;
    j->end = now;
    ended(t, id);
}

void job_fail_oom(job_table *t, job_id id, sim_time now, const dev_id *units, uint32_t n_units)
{
    fail_at(t, id, JOB_FAILED_OOM, now, units, n_units);
}

void job_fail_request(job_table *t, job_id id, sim_time now, const dev_id *units, uint32_t n_units)
{
    fail_at(t, id, JOB_FAILED_REQUEST, now, units, n_units);
}

sim_time job_wait_ns(const job *j)
{
    return j->start < 0 ? -1 : j->start - j->spec.submit;
}

sim_time job_jct_ns(const job *j)
{
    return j->end < 0 ? -1 : j->end - j->spec.submit;
}

const char *job_state_name(job_state s)
{
    switch (s) {
    case JOB_PENDING:
        return "pending";
    case JOB_QUEUED:
        return "queued";
    case JOB_RUNNING:
        return "running";
    case JOB_DONE:
        return "done";
    case JOB_FAILED_OOM:
        return "failed_oom";
    case JOB_FAILED_REQUEST:
        return "failed_request";
    }
    return "unknown";
}
