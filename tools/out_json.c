/* tools/out_json.c - run.json and run_info.json (see out.h and docs/outputs.md). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "sim/err.h"
#include "sim/stats.h"
#include "sim/xalloc.h"
#include "tools/buildinfo.h"
#include "tools/jsonw.h"
#include "tools/out.h"

cJSON *out_json_number(double v)
{
    char buf[JSONW_NUM_LEN];
    return cJSON_CreateRaw(jsonw_format_number(buf, v));
}

cJSON *out_config_json(const scenario_spec *s)
{
    const cfg_out o = {out_json_number};
    return scenario_config_json(s, &o);
}

cJSON *out_json_u64(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateRaw(buf);
}

static void add_num(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, out_json_number(v));
}

/* Seconds of a sim_time, or null when t < 0 (not happened). */
static void add_time(cJSON *o, const char *k, sim_time t)
{
    if (t < 0) {
        cJSON_AddNullToObject(o, k);
    } else {
        add_num(o, k, sim_time_to_s(t));
    }
}

/* The streaming counterparts: member k of the object being written. */
static void put_num(jsonw *jw, const char *k, double v)
{
    jsonw_key(jw, k);
    jsonw_number(jw, v);
}

static void put_str(jsonw *jw, const char *k, const char *v)
{
    jsonw_key(jw, k);
    jsonw_string(jw, v);
}

static void put_null(jsonw *jw, const char *k)
{
    jsonw_key(jw, k);
    jsonw_null(jw);
}

static const char *sharing_name(const cluster_gpu *g)
{
    switch (g->sharing) {
    case CLUSTER_SHARE_TIMESLICE:
        return "timeslice";
    case CLUSTER_SHARE_MPS:
        return "mps";
    case CLUSTER_SHARE_NONE:
        break;
    }
    return "none";
}

/* Units of resource r that the whole cluster advertises. */
static uint32_t res_capacity(const cluster *c, res_id r)
{
    uint32_t cap = 0;
    for (node_id n = 0; n < cluster_n_nodes(c); n++) {
        cap += cluster_capacity(c, n, r);
    }
    return cap;
}

static void write_gpu(jsonw *jw, const cluster *c, const cluster_gpu *cg)
{
    jsonw_object_begin(jw);
    put_num(jw, "index", cg->index);
    put_str(jw, "type", cg->type->name);
    jsonw_key(jw, "mig");
    jsonw_bool(jw, cg->mig_enabled);
    put_str(jw, "sharing", sharing_name(cg));
    jsonw_key(jw, "devices");
    jsonw_array_begin(jw);
    for (dev_id d = cg->first_dev; d < cg->first_dev + cg->n_devs; d++) {
        const cluster_device *cd = cluster_device_get(c, d);
        if (!cd->active) { /* a re-partitioned GPU's candidates outside its final layout */
            continue;
        }
        jsonw_object_begin(jw);
        put_str(jw, "resource", cluster_resource_name(c, cd->resource));
        if (cd->profile) {
            put_str(jw, "profile", cd->profile->name);
            put_num(jw, "start", cd->mig_start);
        } else {
            put_null(jw, "profile");
            put_null(jw, "start");
        }
        put_num(jw, "slots", cd->slots);
        put_num(jw, "sms", cd->sms);
        put_num(jw, "mem_bytes", (double)cd->mem_bytes);
        jsonw_object_end(jw);
    }
    jsonw_array_end(jw);
    jsonw_object_end(jw);
}

/* run.json's "cluster": one pass over the GPUs, which are node-major (cluster.h), so the
 * section is linear in nodes + GPUs + devices. */
static void write_cluster(jsonw *jw, const cluster *c)
{
    jsonw_object_begin(jw);
    jsonw_key(jw, "nodes");
    jsonw_array_begin(jw);
    gpu_id g = 0;
    for (node_id n = 0; n < cluster_n_nodes(c); n++) {
        jsonw_object_begin(jw);
        put_str(jw, "name", cluster_node_name(c, n));
        jsonw_key(jw, "gpus");
        jsonw_array_begin(jw);
        for (; g < cluster_n_gpus(c) && cluster_gpu_get(c, g)->node == n; g++) {
            write_gpu(jw, c, cluster_gpu_get(c, g));
        }
        jsonw_array_end(jw);
        jsonw_object_end(jw);
    }
    SIM_ASSERT(g == cluster_n_gpus(c));
    jsonw_array_end(jw);
    jsonw_key(jw, "resources");
    jsonw_array_begin(jw);
    for (res_id r = 0; r < cluster_n_resources(c); r++) {
        jsonw_object_begin(jw);
        put_str(jw, "name", cluster_resource_name(c, r));
        put_num(jw, "capacity", res_capacity(c, r));
        jsonw_object_end(jw);
    }
    jsonw_array_end(jw);
    jsonw_object_end(jw);
}

/* run.json's jobs, each object written as one piece of text (jsonw_raw_value) in jsonw's layout:
 * the members' key prefixes made once for the array's depth, each device's placement entry made
 * once and copied for every job placed on it, the names (class, resource, outcome) quoted once
 * per distinct string. The bytes are those of writing each member through jsonw (test
 * runjson/jobs_as_jsonw_writes_them). */
enum {
    JK_ID,
    JK_CLASS,
    JK_REQUEST,
    JK_RESOURCE,
    JK_PER_WORKER,
    JK_WORKERS,
    JK_MEM,
    JK_REQ_END,
    JK_WORK,
    JK_SUBMIT,
    JK_START,
    JK_END,
    JK_WAIT,
    JK_JCT,
    JK_PLACEMENT,
    JK_OUTCOME,
    JK_PREEMPTED,
    JK_OBJ_END,
    JK_N
};

#define JOB_TEXT_NAMES 16 /* quoted names kept (direct-mapped by pointer) */
/* Names longer than this are written, not kept: the entries are made in a buffer that is never
 * flushed (tmp), and a quoted name is at most 6 bytes per byte. */
#define JOB_TEXT_LONG (BUFW_LEN / 16)

typedef struct job_text {
    const cluster *c;
    char key[JK_N][64]; /* ",\n" + indent + "\"name\":\t" (the first without ",\n") */
    uint8_t key_len[JK_N];
    /* A placement entry is its head ("{\n" + indent + "\"node\":\t", the same for all), the
     * node's name quoted and its tail (the GPU's index, the instance, profile and start, and the
     * closing line): each node's name and each distinct tail are kept once in arena (a few dozen
     * tails at synth-10k-1m), a device's unit as its node and tail, 8 bytes, where whole
     * entries of ~20 000 devices were 2 MB reached in no order (a cache miss per job). */
    char head[64];
    uint8_t head_len;
    char *arena; /* quoted node names and tails, one after another (WIDE bytes more allocated) */
    size_t n_arena, cap_arena;
    uint32_t *node_off; /* per node: its quoted name in arena; UINT32_MAX: not made yet */
    uint32_t *node_len;
    struct {
        uint32_t off, len;
    } *tail;
    size_t n_tail, cap_tail;
    uint32_t *tail_slot; /* open addressing over tails by text: index + 1, 0 = empty */
    size_t cap_slot;
    uint64_t *dev_unit; /* per device: node << 32 | tail; UINT64_MAX: not made yet */
    struct {
        const char *s; /* borrowed */
        char *q;       /* quoted; owned */
        size_t n;
    } names[JOB_TEXT_NAMES];
    bufw tmp; /* where entries are made (no FILE: never flushed) */
} job_text;

static void key_make(job_text *t, int k, bool first, unsigned tabs, const char *name)
{
    int n = snprintf(t->key[k], sizeof t->key[k], "%s%.*s\"%s\":\t", first ? "" : ",\n", (int)tabs,
                     jsonw_tabs, name);
    SIM_ASSERT(n > 0 && (size_t)n < sizeof t->key[k] && tabs <= JSONW_MAX_DEPTH);
    t->key_len[k] = (uint8_t)n;
}

/* Ready for the elements of a jobs array at depth (containers open, the array included). */
static job_text *job_text_create(const cluster *c, unsigned depth)
{
    job_text *t = xcalloc(1, sizeof *t, "run.json jobs");
    t->c = c;
    unsigned m = depth + 1, r = depth + 2; /* a job's members, its request's */
    key_make(t, JK_ID, true, m, "id");
    key_make(t, JK_CLASS, false, m, "class");
    key_make(t, JK_REQUEST, false, m, "request");
    key_make(t, JK_RESOURCE, true, r, "resource");
    key_make(t, JK_PER_WORKER, false, r, "per_worker");
    key_make(t, JK_WORKERS, false, r, "workers");
    key_make(t, JK_MEM, false, r, "mem_bytes");
    key_make(t, JK_WORK, false, m, "work_s");
    key_make(t, JK_SUBMIT, false, m, "submit_s");
    key_make(t, JK_START, false, m, "start_s");
    key_make(t, JK_END, false, m, "end_s");
    key_make(t, JK_WAIT, false, m, "wait_s");
    key_make(t, JK_JCT, false, m, "jct_s");
    key_make(t, JK_PLACEMENT, false, m, "placement");
    key_make(t, JK_OUTCOME, false, m, "outcome");
    key_make(t, JK_PREEMPTED, false, m, "preempted");
    /* the request's and the job's closing lines */
    int n = snprintf(t->key[JK_REQ_END], sizeof t->key[JK_REQ_END], "\n%.*s}", (int)m,
                     jsonw_tabs);
    t->key_len[JK_REQ_END] = (uint8_t)n;
    n = snprintf(t->key[JK_OBJ_END], sizeof t->key[JK_OBJ_END], "\n%.*s}", (int)depth,
                 jsonw_tabs);
    t->key_len[JK_OBJ_END] = (uint8_t)n;
    n = snprintf(t->head, sizeof t->head, "{\n%.*s\"node\":\t", (int)(depth + 3), jsonw_tabs);
    SIM_ASSERT(n > 0 && (size_t)n < sizeof t->head && depth + 3 <= JSONW_MAX_DEPTH);
    t->head_len = (uint8_t)n;
    dev_id n_dev = cluster_n_devices(c);
    node_id n_node = cluster_n_nodes(c);
    t->dev_unit = xmalloc((n_dev ? n_dev : 1) * sizeof *t->dev_unit, "run.json jobs");
    memset(t->dev_unit, 0xFF, (n_dev ? n_dev : 1) * sizeof *t->dev_unit);
    t->node_off = xmalloc((n_node ? n_node : 1) * sizeof *t->node_off, "run.json jobs");
    t->node_len = xcalloc(n_node ? n_node : 1, sizeof *t->node_len, "run.json jobs");
    memset(t->node_off, 0xFF, (n_node ? n_node : 1) * sizeof *t->node_off);
    t->cap_slot = 64;
    t->tail_slot = xcalloc(t->cap_slot, sizeof *t->tail_slot, "run.json jobs");
    bufw_init(&t->tmp, NULL);
    return t;
}

static void job_text_destroy(job_text *t)
{
    for (int i = 0; i < JOB_TEXT_NAMES; i++) {
        free(t->names[i].q);
    }
    free(t->arena);
    free(t->node_off);
    free(t->node_len);
    free(t->tail);
    free(t->tail_slot);
    free(t->dev_unit);
    free(t);
}

/* A job's text is written in a few segments, each into room reserved once (bufw_room) with the
 * pieces copied at a pointer: keys, quoted names and placement entries 64 bytes wide from
 * arrays that hold that much (one or two vector moves, where a bufw_put per piece called memcpy
 * with the length and checked the room each time: ~17 keys a job were 9 % of the writers'
 * CPU), the pointer then moved by the piece's length. SEG_ROOM is a segment's reservation:
 * its keys, its numbers and the 64 bytes a last wide copy may write past the text. */
#define WIDE 64
#define SEG_ROOM(n_keys, n_nums)                                                                   \
    ((n_keys) * (size_t)WIDE + (n_nums) * (size_t)JSONW_NUM_LEN + WIDE + 8)

_Static_assert(sizeof(((job_text *)0)->key[0]) == WIDE, "a key is copied WIDE bytes wide");

/* Key k at p. */
static char *key_at(char *p, const job_text *t, int k)
{
    memcpy(p, t->key[k], WIDE);
    return p + t->key_len[k];
}

static char *number_at(char *p, double v)
{
    return p + jsonw_number_text(p, v);
}

static char *null_at(char *p)
{
    memcpy(p, "null", 4);
    return p + 4;
}

/* Seconds of ns, or null when ns < 0 (not happened): the text number_at gives sim_time_to_s(ns),
 * without its test for a whole number (a floor and a compare) below 2^53 ns (~104 days), where
 * (double)ns is exact: a whole second's count by its digits, any other count by numfmt_g17 (its
 * quotient by 1e9 is never whole: 1e-9 from the nearest whole number, over half its spacing). */
static char *seconds_at(char *p, sim_time ns)
{
    if (ns < 0) {
        return null_at(p);
    }
    if (ns >= ((sim_time)1 << 53)) {
        return number_at(p, sim_time_to_s(ns));
    }
    if (ns % 1000000000 == 0) {
        return p + numfmt_u64(p, (uint64_t)(ns / 1000000000));
    }
    return p + numfmt_g17(p, (double)ns / 1e9);
}

/* The end of a segment begun at p0 with room reserved for n_keys keys and n_nums numbers. */
static void seg_end(bufw *b, const char *p0, const char *p, size_t room)
{
    SIM_ASSERT((size_t)(p - p0) + WIDE <= room);
    bufw_used(b, (size_t)(p - p0));
}

static void put_number(bufw *b, double v)
{
    bufw_used(b, jsonw_number_text(bufw_room(b, JSONW_NUM_LEN), v));
}

/* s quoted, from the cache of names by pointer. */
static void put_name(bufw *b, job_text *t, const char *s)
{
    uintptr_t h = (uintptr_t)s;
    h = (h >> 4 ^ h >> 12) % JOB_TEXT_NAMES;
    if (t->names[h].s != s || !t->names[h].q) {
        if (strlen(s) > JOB_TEXT_LONG) { /* a name this long is written, not kept */
            jsonw_put_quoted(b, s);
            return;
        }
        t->tmp.n = 0;
        jsonw_put_quoted(&t->tmp, s);
        free(t->names[h].q);
        t->names[h].q = xcalloc(t->tmp.n > WIDE ? t->tmp.n : WIDE, 1, "run.json names");
        memcpy(t->names[h].q, t->tmp.buf, t->tmp.n);
        t->names[h].n = t->tmp.n;
        t->names[h].s = s;
    }
    if (t->names[h].n <= WIDE) {
        memcpy(bufw_room(b, WIDE), t->names[h].q, WIDE);
        bufw_used(b, t->names[h].n);
    } else {
        bufw_put(b, t->names[h].q, t->names[h].n);
    }
}

/* s quoted, or null. */
static void put_name_or_null(bufw *b, job_text *t, const char *s)
{
    if (s) {
        put_name(b, t, s);
    } else {
        bufw_put(b, "null", 4);
    }
}

/* A member of an entry whose members are indented u levels: the separator unless first, the
 * indent and `"key":<TAB>`. */
static void put_member(bufw *e, unsigned u, bool first, const char *key)
{
    if (!first) {
        bufw_put(e, ",\n", 2);
    }
    bufw_put(e, jsonw_tabs, u);
    bufw_c(e, '"');
    bufw_put(e, key, strlen(key));
    bufw_put(e, "\":\t", 3);
}

/* v, or null when the device is a whole GPU (no MIG profile). */
static void put_mig_number(bufw *e, const cluster_device *cd, double v)
{
    if (cd->profile) {
        put_number(e, v);
    } else {
        bufw_put(e, "null", 4);
    }
}

/* Device cd's placement entry into e (a job array at depth). */
static void unit_entry(bufw *e, const cluster *c, const cluster_device *cd, unsigned depth)
{
    const cluster_gpu *cg = cluster_gpu_get(c, cd->gpu);
    unsigned u = depth + 3; /* the entry's members */
    SIM_ASSERT(u <= JSONW_MAX_DEPTH);
    bufw_put(e, "{\n", 2);
    put_member(e, u, true, "node");
    jsonw_put_quoted(e, cluster_node_name(c, cd->node));
    put_member(e, u, false, "gpu");
    put_number(e, cg->index);
    put_member(e, u, false, "instance");
    put_mig_number(e, cd, cd->index);
    put_member(e, u, false, "profile");
    if (cd->profile) {
        jsonw_put_quoted(e, cd->profile->name);
    } else {
        bufw_put(e, "null", 4);
    }
    put_member(e, u, false, "start");
    put_mig_number(e, cd, cd->mig_start);
    bufw_c(e, '\n');
    bufw_put(e, jsonw_tabs, u - 1);
    bufw_c(e, '}');
}

/* n bytes appended to the arena; their offset. */
static uint32_t arena_add(job_text *t, const char *p, size_t n)
{
    SIM_ASSERT(t->n_arena + n < UINT32_MAX);
    if (t->n_arena + n > t->cap_arena) {
        t->cap_arena = 2 * (t->n_arena + n);
        /* WIDE bytes more: the last text is copied WIDE bytes at a time */
        t->arena = xrealloc(t->arena, t->cap_arena + WIDE, "run.json placements");
    }
    memcpy(t->arena + t->n_arena, p, n);
    t->n_arena += n;
    return (uint32_t)(t->n_arena - n);
}

static uint64_t text_hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    }
    return h;
}

/* The slot of tail text p[0..n): its own, or the empty one where it goes. */
static size_t tail_slot(const job_text *t, const char *p, size_t n)
{
    size_t h = (size_t)(text_hash(p, n) & (t->cap_slot - 1));
    while (t->tail_slot[h]) {
        const char *q = t->arena + t->tail[t->tail_slot[h] - 1].off;
        if (t->tail[t->tail_slot[h] - 1].len == n && !memcmp(q, p, n)) {
            break;
        }
        h = (h + 1) & (t->cap_slot - 1);
    }
    return h;
}

/* The index of tail text p[0..n), kept on first sight. */
static uint32_t tail_of(job_text *t, const char *p, size_t n)
{
    size_t h = tail_slot(t, p, n);
    if (t->tail_slot[h]) {
        return t->tail_slot[h] - 1;
    }
    if (2 * (t->n_tail + 1) > t->cap_slot) { /* grow and place every tail again */
        free(t->tail_slot);
        t->cap_slot *= 2;
        t->tail_slot = xcalloc(t->cap_slot, sizeof *t->tail_slot, "run.json jobs");
        for (size_t i = 0; i < t->n_tail; i++) {
            const char *q = t->arena + t->tail[i].off;
            t->tail_slot[tail_slot(t, q, t->tail[i].len)] = (uint32_t)i + 1;
        }
        h = tail_slot(t, p, n);
    }
    if (t->n_tail == t->cap_tail) {
        t->cap_tail = t->cap_tail ? 2 * t->cap_tail : 32;
        t->tail = xrealloc(t->tail, t->cap_tail * sizeof *t->tail, "run.json jobs");
    }
    SIM_ASSERT(t->n_tail < UINT32_MAX);
    uint32_t off = arena_add(t, p, n); /* before the slot: p may not point into the arena */
    t->tail[t->n_tail].off = off;
    t->tail[t->n_tail].len = (uint32_t)n;
    t->tail_slot[h] = (uint32_t)++t->n_tail;
    return (uint32_t)(t->n_tail - 1);
}

/* Device d's unit (node << 32 | tail), made from its whole entry (unit_entry); UINT64_MAX when
 * a name is too long to keep (the entry is then written to b here). */
static uint64_t make_unit(bufw *b, job_text *t, dev_id d, unsigned depth)
{
    const cluster_device *cd = cluster_device_get(t->c, d);
    const char *node = cluster_node_name(t->c, cd->node);
    if (strlen(node) > JOB_TEXT_LONG || (cd->profile && strlen(cd->profile->name) > JOB_TEXT_LONG)) {
        unit_entry(b, t->c, cd, depth); /* names this long: written, not kept */
        return UINT64_MAX;
    }
    bufw *e = &t->tmp; /* the quoted name, then the whole entry */
    e->n = 0;
    jsonw_put_quoted(e, node);
    size_t n_q = e->n;
    unit_entry(e, t->c, cd, depth);
    const char *entry = e->buf + n_q;
    size_t skip = t->head_len + n_q;
    SIM_ASSERT(e->n < BUFW_LEN / 2 && e->n - n_q > skip && !memcmp(entry, t->head, t->head_len) &&
               !memcmp(entry + t->head_len, e->buf, n_q));
    if (t->node_off[cd->node] == UINT32_MAX) {
        t->node_off[cd->node] = arena_add(t, e->buf, n_q);
        t->node_len[cd->node] = (uint32_t)n_q;
    }
    uint32_t k = tail_of(t, entry + skip, e->n - n_q - skip);
    return t->dev_unit[d] = (uint64_t)cd->node << 32 | k;
}

/* p[0..n) at q (room for n + WIDE), copied WIDE bytes at a time (p readable that far). */
static char *wide_at(char *q, const char *p, size_t n)
{
    for (size_t at = 0; at < n; at += WIDE) {
        memcpy(q + at, p + at, WIDE);
    }
    return q + n;
}

/* Device d's placement entry: its head, its node's name and its tail. */
static void put_unit(bufw *b, job_text *t, dev_id d, unsigned depth)
{
    uint64_t u = t->dev_unit[d];
    if (u == UINT64_MAX && (u = make_unit(b, t, d, depth)) == UINT64_MAX) {
        return;
    }
    node_id n = (node_id)(u >> 32);
    const char *tail = t->arena + t->tail[(uint32_t)u].off;
    size_t n_tail = t->tail[(uint32_t)u].len;
    size_t room = t->head_len + t->node_len[n] + n_tail + 2 * WIDE;
    char *p0 = bufw_room(b, room), *p = p0; /* room < BUFW_LEN / 2: the names are kept */
    memcpy(p, t->head, WIDE);
    p = wide_at(p + t->head_len, t->arena + t->node_off[n], t->node_len[n]);
    p = wide_at(p, tail, n_tail);
    bufw_used(b, (size_t)(p - p0));
}

/* Job j's first unit, when made, into the cache ahead of its copy: the units of ~20 000
 * devices are reached in no order. */
static void prefetch_entry(const job_text *t, const job *j)
{
    if (j->n_units) {
        __builtin_prefetch(&t->dev_unit[j->units[0]]);
    }
}

static void write_job(jsonw *jw, job_text *t, const job *j, const out_job_text *tx)
{
    unsigned depth = jsonw_depth(jw);
    bufw *b = jsonw_raw_value(jw);
    size_t room = SEG_ROOM(2, 1);
    char *p0 = bufw_room(b, room), *p = p0;
    memcpy(p, "{\n", 2);
    p = key_at(p + 2, t, JK_ID);
    p = number_at(p, j->id);
    p = key_at(p, t, JK_CLASS);
    seg_end(b, p0, p, room);
    put_name_or_null(b, t, j->spec.class_name);
    room = SEG_ROOM(2, 0);
    p0 = p = bufw_room(b, room);
    p = key_at(p, t, JK_REQUEST);
    memcpy(p, "{\n", 2);
    p = key_at(p + 2, t, JK_RESOURCE);
    seg_end(b, p0, p, room);
    put_name_or_null(b, t, j->spec.req.resource);
    room = SEG_ROOM(11, 9);
    p0 = p = bufw_room(b, room);
    p = key_at(p, t, JK_PER_WORKER);
    p = number_at(p, j->spec.req.per_worker);
    p = key_at(p, t, JK_WORKERS);
    p = number_at(p, j->spec.req.n_workers);
    p = key_at(p, t, JK_MEM);
    p = j->spec.mem_bytes ? number_at(p, (double)j->spec.mem_bytes) : null_at(p);
    p = key_at(p, t, JK_REQ_END);
    p = key_at(p, t, JK_WORK);
    if (tx && tx->n_work) {
        memcpy(p, tx->work, sizeof tx->work);
        p += tx->n_work;
    } else {
        p = number_at(p, j->spec.work_s);
    }
    p = key_at(p, t, JK_SUBMIT);
    char *submit = p;
    p = seconds_at(p, j->spec.submit);
    p = key_at(p, t, JK_START);
    if (j->start == j->spec.submit) { /* started on arrival (most jobs): the same text */
        size_t n = (size_t)(p - submit) - t->key_len[JK_START];
        memmove(p, submit, n); /* n <= JSONW_NUM_LEN */
        p += n;
    } else {
        p = seconds_at(p, j->start);
    }
    p = key_at(p, t, JK_END);
    p = seconds_at(p, j->end);
    p = key_at(p, t, JK_WAIT);
    p = seconds_at(p, job_wait_ns(j));
    p = key_at(p, t, JK_JCT);
    p = seconds_at(p, j->state == JOB_DONE ? job_jct_ns(j) : -1);
    p = key_at(p, t, JK_PLACEMENT);
    *p++ = '[';
    seg_end(b, p0, p, room);
    for (uint32_t k = 0; k < j->n_units; k++) {
        if (k) {
            bufw_put(b, ", ", 2);
        }
        put_unit(b, t, j->units[k], depth);
    }
    room = SEG_ROOM(1, 0);
    p0 = p = bufw_room(b, room);
    *p++ = ']';
    p = key_at(p, t, JK_OUTCOME);
    seg_end(b, p0, p, room);
    put_name(b, t, job_state_name(j->state));
    room = SEG_ROOM(2, 1);
    p0 = p = bufw_room(b, room);
    p = key_at(p, t, JK_PREEMPTED);
    p = number_at(p, j->n_preempted);
    p = key_at(p, t, JK_OBJ_END);
    seg_end(b, p0, p, room);
}

cJSON *out_dist_json(const out_dist *d)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "n", (double)d->n);
    if (d->n == 0) {
        cJSON_AddNullToObject(o, "mean");
        cJSON_AddNullToObject(o, "p50");
        cJSON_AddNullToObject(o, "p95");
        cJSON_AddNullToObject(o, "max");
        return o;
    }
    add_num(o, "mean", d->mean);
    add_num(o, "p50", d->p50);
    add_num(o, "p95", d->p95);
    add_num(o, "max", d->max);
    return o;
}

/* The time-weighted means over [0, horizon] of metrics' sample series, from one pass over the
 * samples (a million-job run has millions; a pass per series read them eight times): each series
 * is accumulated exactly as a pass of its own over that series would, so the figures are the same
 * bits. */
typedef struct tw_set {
    double units, gpus, sms, queued; /* units_used, gpus_busy, sms_busy, queued */
    double *res;                     /* units held of each resource; owned, free() */
} tw_set;

enum { TW_UNITS, TW_GPUS, TW_SMS, TW_QUEUED, TW_N };

/* The four sample fields and the units of each resource, in the order of tw_means' series. */
static void tw_values(const world_sample *s, const uint32_t *ru, res_id n_res, double *v)
{
    v[TW_UNITS] = (double)s->units_used;
    v[TW_GPUS] = (double)s->gpus_busy;
    v[TW_SMS] = (double)s->sms_busy;
    v[TW_QUEUED] = (double)s->queued;
    for (res_id k = 0; k < n_res; k++) {
        v[TW_N + k] = (double)ru[k];
    }
}

/* The means into out; the samples also to g (timeseries.csv's rows) when not NULL. */
static void tw_means(const world *w, tw_set *out, out_grid *g)
{
    size_t n = world_n_samples(w);
    res_id n_res = cluster_n_resources(world_cluster(w));
    sim_time horizon = world_get_totals(w).horizon;
    SIM_ASSERT(n > 0);
    /* every series changes at every sample: one stats_timeavg_set_all per sample, a block of
     * samples at a time (blocks may be read back from the store) */
    size_t n_ser = TW_N + (size_t)n_res;
    stats_timeavg *f = xcalloc(n_ser, sizeof *f, "time means");
    double *v = xcalloc(n_ser, sizeof *v, "time means");
    size_t m;
    const uint32_t *ru;
    const world_sample *s = world_sample_span(w, 0, &m, &ru);
    tw_values(s, ru, n_res, v);
    for (size_t k = 0; k < n_ser; k++) {
        f[k] = stats_timeavg_make(s->t, v[k]);
    }
    if (g) {
        out_grid_span(g, s, ru, 1);
    }
    for (size_t i = 1; i < n; i += m) {
        s = world_sample_span(w, i, &m, &ru);
        if (g) {
            out_grid_span(g, s, ru, m);
        }
        for (size_t k = 0; k < m; k++, ru += n_res) {
            tw_values(&s[k], ru, n_res, v);
            stats_timeavg_set_all(f, n_ser, s[k].t, v);
        }
    }
    if (g) {
        out_grid_finish(g);
    }
    out->units = stats_timeavg_mean(&f[TW_UNITS], horizon);
    out->gpus = stats_timeavg_mean(&f[TW_GPUS], horizon);
    out->sms = stats_timeavg_mean(&f[TW_SMS], horizon);
    out->queued = stats_timeavg_mean(&f[TW_QUEUED], horizon);
    out->res = xcalloc(n_res ? n_res : 1, sizeof *out->res, "resource means");
    for (res_id k = 0; k < n_res; k++) {
        out->res[k] = stats_timeavg_mean(&f[TW_N + k], horizon);
    }
    free(f);
    free(v);
}

void out_time_means(const world *w, out_means *m)
{
    tw_set tw;
    tw_means(w, &tw, NULL);
    *m = (out_means){tw.units, tw.gpus, tw.sms, tw.queued};
    free(tw.res);
}

/* run.json's "metrics": small, so built as a tree. */
static cJSON *metrics_json(const world *w, const out_stats *st, const cJSON *extra,
                           out_grid *grid)
{
    const cluster *c = world_cluster(w);
    size_t n_jobs = job_table_count(world_jobs(w));
    world_totals tot = world_get_totals(w);

    cJSON *m = cJSON_CreateObject();
    cJSON *counts = cJSON_AddObjectToObject(m, "counts");
    add_num(counts, "jobs", (double)n_jobs);
    add_num(counts, "done", tot.n_done);
    add_num(counts, "failed_oom", tot.n_oom);
    add_num(counts, "failed_request", tot.n_failed_request);
    add_num(counts, "running", tot.n_running);
    add_num(counts, "queued", tot.n_queued);
    add_num(counts, "not_submitted", tot.n_pending);
    add_num(counts, "preemptions", (double)tot.n_preemptions);
    add_num(counts, "decisions_rejected", (double)tot.n_rejected);
    add_num(counts, "events", (double)tot.n_events);
    add_time(m, "end_s", tot.end);
    add_time(m, "horizon_s", tot.horizon);
    cJSON_AddItemToObject(m, "wait_s", out_dist_json(&st->wait));
    cJSON_AddItemToObject(m, "jct_s", out_dist_json(&st->jct));

    cJSON *alloc = cJSON_AddObjectToObject(m, "allocation");
    uint32_t units = cluster_units_total(c);
    add_num(alloc, "units_total", units);
    add_num(alloc, "gpus_total", cluster_n_gpus(c));
    bool sms_known = tot.n_gpus_no_sms == 0; /* else SM figures are null (not known) */
    if (sms_known) {
        add_num(alloc, "sms_total", tot.sms_total);
    } else {
        cJSON_AddNullToObject(alloc, "sms_total");
    }
    tw_set tw;
    tw_means(w, &tw, grid);
    add_num(alloc, "units_mean", units ? tw.units / units : 0);
    add_num(alloc, "gpus_busy_mean", cluster_n_gpus(c) ? tw.gpus / cluster_n_gpus(c) : 0);
    if (sms_known) {
        add_num(alloc, "sms_busy_mean", tot.sms_total ? tw.sms / tot.sms_total : 0);
    } else {
        cJSON_AddNullToObject(alloc, "sms_busy_mean");
    }
    add_num(alloc, "queued_mean", tw.queued);
    cJSON *per = cJSON_AddObjectToObject(alloc, "per_resource");
    for (res_id r = 0; r < cluster_n_resources(c); r++) {
        uint32_t cap = res_capacity(c, r);
        add_num(per, cluster_resource_name(c, r), cap ? tw.res[r] / cap : 0);
    }
    free(tw.res);
    cJSON_AddItemToObject(m, "scheduling", out_sched_json(w, st));
    const cJSON *x;
    cJSON_ArrayForEach(x, extra)
    {
        cJSON_AddItemToObject(m, x->string, cJSON_Duplicate(x, true));
    }
    return m;
}

/* Member k: a subtree (taken: freed here) written in place; NULL (cJSON out of memory) is an
 * error. */
static int put_tree(jsonw *jw, const char *k, cJSON *item)
{
    jsonw_key(jw, k);
    int rc = item ? jsonw_tree(jw, item) : SIM_ENOMEM;
    cJSON_Delete(item);
    if (rc != 0) {
        jsonw_null(jw); /* keep the writer balanced; the caller discards the file */
    }
    return rc;
}

struct out_run_json {
    FILE *f;
    const world *w;
    const out_run_meta *meta;
    jsonw *jw;
    job_text *text;
    int rc; /* of the config and trace trees */
};

out_run_json *out_run_json_begin(FILE *f, const world *w, const out_run_meta *meta)
{
    out_run_json *r = xcalloc(1, sizeof *r, "run.json writer");
    r->f = f;
    r->w = w;
    r->meta = meta;
    jsonw *jw = r->jw = xmalloc(sizeof *jw, "json writer"); /* 64 KiB: not on the stack */
    jsonw_init(jw, f);
    jsonw_object_begin(jw);
    put_num(jw, "schema_version", OUT_SCHEMA_VERSION);
    jsonw_key(jw, "seed");
    jsonw_u64(jw, meta->seed);
    jsonw_key(jw, "config");
    int rc = 0;
    if (meta->config) {
        rc = jsonw_tree(jw, meta->config);
    }
    if (!meta->config || rc != 0) {
        jsonw_null(jw);
    }
    put_str(jw, "policy", meta->policy);
    if (meta->trace && rc == 0) {
        jsonw_key(jw, "trace");
        rc = jsonw_tree(jw, meta->trace);
        if (rc != 0) {
            jsonw_null(jw);
        }
    }
    r->rc = rc;
    jsonw_key(jw, "cluster");
    write_cluster(jw, world_cluster(w));
    jsonw_key(jw, "jobs");
    jsonw_array_begin(jw);
    r->text = job_text_create(world_cluster(w), jsonw_depth(jw));
    return r;
}

void out_run_json_prefetch(const out_run_json *r, const job *ahead)
{
    prefetch_entry(r->text, ahead);
}

void out_run_json_job(out_run_json *r, const job *j, const out_job_text *tx)
{
    write_job(r->jw, r->text, j, tx);
}

int out_run_json_end(out_run_json *r)
{
    jsonw *jw = r->jw;
    job_text_destroy(r->text);
    jsonw_array_end(jw);
    int rc_m =
        put_tree(jw, "metrics", metrics_json(r->w, r->meta->stats, r->meta->metrics_extra, r->meta->grid));
    jsonw_object_end(jw);
    int rc_w = jsonw_finish(jw);
    free(jw);
    putc('\n', r->f);
    rc_w = rc_w ? rc_w : ferror(r->f) ? SIM_EIO : 0;
    int rc = r->rc ? r->rc : rc_m ? rc_m : rc_w;
    free(r);
    return rc;
}

cJSON *out_run_info(uint64_t seed, const char *scenario_path, const char *argv_line)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "schema_version", OUT_SCHEMA_VERSION);
    cJSON_AddItemToObject(o, "seed", out_json_u64(seed));
    cJSON_AddStringToObject(o, "scenario", scenario_path);
    cJSON_AddStringToObject(o, "command", argv_line);
    time_t now = time(NULL);
    struct tm tm;
    char ts[40] = "unknown";
    if (gmtime_r(&now, &tm)) {
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    cJSON_AddStringToObject(o, "wall_clock_utc", ts);
    struct utsname u;
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(o, "host", u.nodename);
        char os[256];
        snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
        cJSON_AddStringToObject(o, "os", os);
    }
#if defined(__clang__)
    cJSON_AddStringToObject(o, "compiler", "clang " __VERSION__);
#elif defined(__GNUC__)
    cJSON_AddStringToObject(o, "compiler", "gcc " __VERSION__);
#endif
    cJSON_AddStringToObject(o, "version", buildinfo_version());
    cJSON_AddStringToObject(o, "build", buildinfo_flavour());
    char cflags[512];
    snprintf(cflags, sizeof cflags, "-std=c11 -ffp-contract=off %s", buildinfo_opt_flags());
    cJSON_AddStringToObject(o, "cflags", cflags);
    cJSON_AddStringToObject(o, "git_revision", buildinfo_git_rev());
    return o;
}

int out_write_json(FILE *f, const cJSON *root)
{
    char *s = cJSON_Print(root);
    if (!s) {
        return SIM_ENOMEM;
    }
    int rc = fputs(s, f) < 0 || fputc('\n', f) == EOF ? SIM_EIO : 0;
    cJSON_free(s);
    return rc;
}
