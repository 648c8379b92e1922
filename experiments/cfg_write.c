/* experiments/cfg_write.c - a walked struct written back as JSON from its own table (cfg.h,
 * "Writing back"): the generic half of run.json's "config". */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "experiments/cfg.h"
#include "sim/simtime.h"
#include "sim/xalloc.h"

cJSON *cfg_out_u64(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateRaw(buf);
}

cJSON *cfg_out_string(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

const char *cfg_out_key(const cfg_field *f, char *buf, size_t n)
{
    const char *unit = f->type == CFG_DURATION || f->type == CFG_SECONDS ? "_s"
                       : f->type == CFG_RATE                             ? "_per_s"
                       : f->type == CFG_BYTES                            ? "_bytes"
                                                                         : "";
    snprintf(buf, n, "%s%s", f->out_key ? f->out_key : f->key, f->out_key ? "" : unit);
    return buf;
}

/* Whether the section a CFG_MAP field holds was given: its table's CFG_SELF location, or true
 * when the table has none. */
static bool section_given(const cfg_field *sub, const unsigned char *src)
{
    for (const cfg_field *f = sub; f->key; f++) {
        if (f->type == CFG_SELF_LOC) {
            return cfg_present(*(const src_loc *)(src + f->off));
        }
    }
    return true;
}

/* A scalar of type t at p (a field's member, or one item of a scalar sequence). */
static cJSON *scalar_json(const cfg_out *o, const cfg_field *f, cfg_type t, const void *p)
{
    switch (t) {
    case CFG_STRING: {
        return cfg_out_string(*(const char *const *)p);
    }
    case CFG_BOOL:
        return cJSON_CreateBool(*(const bool *)p);
    case CFG_ENUM: {
        int i = *(const int *)p, n = 0;
        while (f->names[n]) {
            n++;
        }
        SIM_ASSERT(i >= 0 && i < n);
        return cJSON_CreateString(f->names[i]);
    }
    case CFG_INT:
        return o->number(*(const int *)p);
    case CFG_I64:
        return o->number((double)*(const int64_t *)p);
    case CFG_U32:
        return o->number(*(const uint32_t *)p);
    case CFG_U64:
    case CFG_BYTES:
        return cfg_out_u64(*(const uint64_t *)p);
    case CFG_DOUBLE:
    case CFG_SECONDS:
    case CFG_RATE:
        return o->number(*(const double *)p);
    case CFG_DURATION:
        return o->number(sim_time_to_s(*(const int64_t *)p));
    case CFG_MAP:
    case CFG_SEQ:
    case CFG_CUSTOM:
    case CFG_SELF_LOC:
        break;
    }
    SIM_ASSERT(!"cfg write: not a scalar type");
    return NULL;
}

/* Whether a scalar member is zero (CFG_OUT_IF_SET). */
static bool scalar_zero(cfg_type t, const void *p)
{
    switch (t) {
    case CFG_STRING:
        return *(const char *const *)p == NULL;
    case CFG_BOOL:
        return !*(const bool *)p;
    case CFG_INT:
    case CFG_ENUM:
        return *(const int *)p == 0;
    case CFG_U32:
        return *(const uint32_t *)p == 0;
    case CFG_I64:
    case CFG_DURATION:
        return *(const int64_t *)p == 0;
    case CFG_U64:
    case CFG_BYTES:
        return *(const uint64_t *)p == 0;
    default:
        return *(const double *)p == 0;
    }
}

static cJSON *seq_json(const cfg_out *o, const cfg_field *f, const unsigned char *base)
{
    const unsigned char *items = *(const void *const *)(base + f->off);
    size_t n = *(const size_t *)(base + f->count_off);
    size_t size = f->sub ? f->elem_size : 0;
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        if (f->sub) {
            cJSON_AddItemToArray(a, cfg_write_map(o, f->sub, items + i * size));
        } else {
            SIM_ASSERT(f->elem == CFG_STRING); /* the only scalar sequence the tables hold */
            cJSON_AddItemToArray(a, scalar_json(o, f, f->elem, items + i * sizeof(char *)));
        }
    }
    return a;
}

void cfg_write_field(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *base)
{
    if (f->type == CFG_SELF_LOC || (f->out & CFG_OUT_HIDDEN)) {
        return;
    }
    const unsigned char *b = base, *src = b + f->off;
    if (f->type == CFG_CUSTOM) {
        SIM_ASSERT(f->write && "a custom field needs a writer or CFG_OUT_HIDDEN");
        f->write(o, parent, f, src);
        return;
    }
    bool if_set = f->out & CFG_OUT_IF_SET;
    cJSON *v = NULL;
    if (f->type == CFG_MAP) {
        if (if_set && !section_given(f->sub, src)) {
            return;
        }
        v = cfg_write_map(o, f->sub, src);
    } else if (f->type == CFG_SEQ) {
        if (if_set && *(const size_t *)(b + f->count_off) == 0) {
            return;
        }
        v = seq_json(o, f, b);
    } else {
        if (if_set && scalar_zero(f->type, src)) {
            return;
        }
        v = scalar_json(o, f, f->type, src);
    }
    char key[128];
    cJSON_AddItemToObject(parent, cfg_out_key(f, key, sizeof key), v);
}

cJSON *cfg_write_map(const cfg_out *o, const cfg_field *table, const void *src)
{
    cJSON *obj = cJSON_CreateObject();
    for (const cfg_field *f = table; f->key; f++) {
        cfg_write_field(o, obj, f, src);
    }
    return obj;
}
