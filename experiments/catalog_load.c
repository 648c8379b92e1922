/* experiments/catalog_load.c - GPU catalog loader (see catalog_load.h).
 *
 * Two passes: the schema walk (experiments/cfg.h) fills raw_* structs that mirror the YAML, then
 * build_* checks what a schema cannot (cross-references, consistency, unsourced lists) and
 * converts units into the model's gpu_catalog. */
#include "experiments/catalog_load.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "experiments/cfg.h"
#include "experiments/embedded.h"
#include "experiments/yamlx.h"
#include "model/hw/mig.h"
#include "sim/err.h"

/* ---- a list of strings that keeps each item's location ---- */

typedef struct strlist {
    const char **v;
    src_loc *loc;
    size_t n;
} strlist;

static bool parse_strlist(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                          void *dst)
{
    (void)f;
    strlist *out = dst;
    if (node->type != YAML_SEQUENCE_NODE) {
        cfg_error(w, node, path, "wrong type; expected a list of names like [A, B], got %s",
                  yamlx_kind(node));
        return false;
    }
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    out->v = n ? arena_calloc(w->arena, n, sizeof *out->v) : NULL;
    out->loc = n ? arena_calloc(w->arena, n, sizeof *out->loc) : NULL;
    out->n = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        char ipath[256];
        cfg_path_index(ipath, sizeof ipath, path, i);
        yaml_node_t *item = yamlx_node(w->doc, node->data.sequence.items.start[i]);
        if (!cfg_visit(w, item, ipath)) {
            ok = false;
            continue;
        }
        const char *t = yamlx_scalar(item);
        if (!t || !t[0]) {
            cfg_error(w, item, ipath, "wrong type; expected a non-empty name, got %s",
                      t ? "an empty string" : yamlx_kind(item));
            ok = false;
            continue;
        }
        out->v[out->n] = arena_strdup(w->arena, t);
        out->loc[out->n++] = cfg_loc(w, item);
    }
    return ok;
}

#define STRLIST(key, type, member, req)                                                         \
    {key, CFG_CUSTOM, .required = req, .off = offsetof(type, member), .parse = parse_strlist,    \
     .expect = "a list of names like [A, B]"}

/* ---- raw structs: the YAML as written ---- */

typedef struct raw_source {
    const char *tag, *text;
    src_loc loc, tag_loc;
} raw_source;

typedef struct raw_rule {
    const char *id, *text;
    strlist src;
    src_loc loc, id_loc;
} raw_rule;

typedef struct raw_count {
    int profiles; /* 0 classic, 1 all */
    bool maximal;
    const char *driver;
    int64_t count;
    strlist src;
    src_loc loc, driver_loc;
} raw_count;

typedef struct raw_profile {
    const char *name, *placements, *min_driver, *note;
    int id, compute_slices, sms, copy_engines, nvdec, nvenc, jpeg, ofa, max_instances;
    double mem_gib;
    strlist unsourced, src;
    src_loc loc, name_loc, placements_loc, min_driver_loc, id_loc, ce_loc, nvdec_loc, nvenc_loc,
        jpeg_loc, ofa_loc;
} raw_profile;

typedef struct raw_peak {
    double v[GPU_FMT_COUNT];
} raw_peak;

typedef struct raw_gpu {
    const char *name, *arch, *mig_min_driver, *pair_driver, *note;
    strlist aliases, pci, unsourced, src;
    int sms_total, sms_mig_full, compute_slices, memory_slices, max_mig_instances;
    int64_t memory_mib_smi;
    double memory_gb, bw_gb_s, l2_mb, clock_mhz, tdp_w, nvlink_gb_s, pcie_gb_s;
    raw_peak peak;
    raw_count *counts;
    size_t n_counts;
    raw_profile *profiles;
    size_t n_profiles;
    src_loc loc, name_loc, mig_driver_loc, pair_driver_loc, compute_loc, memory_slices_loc,
        sms_mig_full_loc, counts_loc, profiles_loc, max_inst_loc;
} raw_gpu;

typedef struct raw_catalog {
    int schema_version;
    raw_source *sources;
    size_t n_sources;
    raw_rule *rules;
    size_t n_rules;
    raw_gpu *gpus;
    size_t n_gpus;
    src_loc loc;
} raw_catalog;

const char *const catalog_arch_names[] = {"Pascal", "Volta",  "Turing",
                                          "Ampere", "Hopper", "Blackwell", NULL};
static const char *const count_profile_names[] = {"classic", "all", NULL};

static const cfg_field source_fields[] = {
    CFG_SELF(raw_source, loc),
    {"tag", CFG_STRING, .required = true, .off = offsetof(raw_source, tag),
     CFG_LOC(raw_source, tag_loc)},
    {"text", CFG_STRING, .required = true, .off = offsetof(raw_source, text)},
    {0},
};

static const cfg_field rule_fields[] = {
    CFG_SELF(raw_rule, loc),
    {"id", CFG_STRING, .required = true, .off = offsetof(raw_rule, id), CFG_LOC(raw_rule, id_loc)},
    {"text", CFG_STRING, .required = true, .off = offsetof(raw_rule, text)},
    STRLIST("src", raw_rule, src, true),
    {0},
};

static const cfg_field count_fields[] = {
    CFG_SELF(raw_count, loc),
    {"profiles", CFG_ENUM, .required = true, .names = count_profile_names,
     .off = offsetof(raw_count, profiles)},
    {"maximal", CFG_BOOL, .required = true, .off = offsetof(raw_count, maximal)},
    {"driver", CFG_STRING, .required = true, .off = offsetof(raw_count, driver),
     CFG_LOC(raw_count, driver_loc), .expect = "newest or a driver branch like R510"},
    {"count", CFG_I64, .required = true, CFG_MIN(1), .off = offsetof(raw_count, count)},
    STRLIST("src", raw_count, src, true),
    {0},
};

#define PINT(key, member, lo, hi)                                                               \
    {key, CFG_INT, CFG_MIN(lo), CFG_MAX(hi), .off = offsetof(raw_profile, member)}

static const cfg_field profile_fields[] = {
    CFG_SELF(raw_profile, loc),
    {"name", CFG_STRING, .required = true, .off = offsetof(raw_profile, name),
     CFG_LOC(raw_profile, name_loc)},
    {"id", CFG_INT, CFG_MIN(0), CFG_MAX(255), .off = offsetof(raw_profile, id),
     CFG_LOC(raw_profile, id_loc)},
    {"compute_slices", CFG_INT, .required = true, CFG_MIN(1), CFG_MAX(GPU_MAX_SLICES),
     .off = offsetof(raw_profile, compute_slices)},
    {"placements", CFG_STRING, .required = true, .off = offsetof(raw_profile, placements),
     CFG_LOC(raw_profile, placements_loc),
     .expect = "nvidia-smi -lgipp notation like \"{0,2,4}:2\""},
    PINT("sms", sms, 1, 1000),
    {"mem_gib", CFG_DOUBLE, CFG_MIN(0.01), CFG_MAX(10000), .off = offsetof(raw_profile, mem_gib)},
    {"copy_engines", CFG_INT, CFG_MIN(0), CFG_MAX(64), .off = offsetof(raw_profile, copy_engines),
     CFG_LOC(raw_profile, ce_loc)},
    {"nvdec", CFG_INT, CFG_MIN(0), CFG_MAX(64), .off = offsetof(raw_profile, nvdec),
     CFG_LOC(raw_profile, nvdec_loc)},
    {"nvenc", CFG_INT, CFG_MIN(0), CFG_MAX(64), .off = offsetof(raw_profile, nvenc),
     CFG_LOC(raw_profile, nvenc_loc)},
    {"jpeg", CFG_INT, CFG_MIN(0), CFG_MAX(64), .off = offsetof(raw_profile, jpeg),
     CFG_LOC(raw_profile, jpeg_loc)},
    {"ofa", CFG_INT, CFG_MIN(0), CFG_MAX(64), .off = offsetof(raw_profile, ofa),
     CFG_LOC(raw_profile, ofa_loc)},
    {"max_instances", CFG_INT, .required = true, CFG_MIN(1), CFG_MAX(GPU_MAX_SLICES),
     .off = offsetof(raw_profile, max_instances)},
    {"min_driver", CFG_STRING, .off = offsetof(raw_profile, min_driver),
     CFG_LOC(raw_profile, min_driver_loc), .expect = "a driver branch like R470"},
    {"note", CFG_STRING, .off = offsetof(raw_profile, note)},
    STRLIST("unsourced", raw_profile, unsourced, false),
    STRLIST("src", raw_profile, src, true),
    {0},
};

/* Keys are the format names gpu_format_from_name() reads. */
static const cfg_field peak_fields[] = {
    {"fp64", CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(1e6), .off = offsetof(raw_peak, v[GPU_FMT_FP64])},
    {"fp32", CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(1e6), .off = offsetof(raw_peak, v[GPU_FMT_FP32])},
    {"fp16", CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(1e6), .off = offsetof(raw_peak, v[GPU_FMT_FP16])},
    {"fp64_tensor", CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(1e6),
     .off = offsetof(raw_peak, v[GPU_FMT_FP64_TENSOR])},
    {"tf32_tensor", CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(1e6),
     .off = offsetof(raw_peak, v[GPU_FMT_TF32_TENSOR])},
    {"fp16_tensor", CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(1e6),
     .off = offsetof(raw_peak, v[GPU_FMT_FP16_TENSOR])},
    {"bf16_tensor", CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(1e6),
     .off = offsetof(raw_peak, v[GPU_FMT_BF16_TENSOR])},
    {"fp8_tensor", CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(1e6),
     .off = offsetof(raw_peak, v[GPU_FMT_FP8_TENSOR])},
    {"int8_tensor", CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(1e6),
     .off = offsetof(raw_peak, v[GPU_FMT_INT8_TENSOR])},
    {0},
};

#define GPOS(key, member, hi) {key, CFG_DOUBLE, CFG_MIN(0.001), CFG_MAX(hi), .off = offsetof(raw_gpu, member)}

static const cfg_field gpu_fields[] = {
    CFG_SELF(raw_gpu, loc),
    {"name", CFG_STRING, .required = true, .off = offsetof(raw_gpu, name),
     CFG_LOC(raw_gpu, name_loc)},
    STRLIST("aliases", raw_gpu, aliases, false),
    {"arch", CFG_STRING, .required = true, .names = catalog_arch_names, .off = offsetof(raw_gpu, arch)},
    STRLIST("pci_device_ids", raw_gpu, pci, false),
    {"mig_min_driver", CFG_STRING, .off = offsetof(raw_gpu, mig_min_driver),
     CFG_LOC(raw_gpu, mig_driver_loc), .expect = "a driver branch like R450"},
    {"pair_4g_3g_min_driver", CFG_STRING, .off = offsetof(raw_gpu, pair_driver),
     CFG_LOC(raw_gpu, pair_driver_loc), .expect = "a driver branch like R510"},
    {"sms_total", CFG_INT, CFG_MIN(1), CFG_MAX(1000), .off = offsetof(raw_gpu, sms_total)},
    {"sms_mig_full", CFG_INT, CFG_MIN(1), CFG_MAX(1000), .off = offsetof(raw_gpu, sms_mig_full),
     CFG_LOC(raw_gpu, sms_mig_full_loc)},
    {"compute_slices", CFG_INT, CFG_MIN(1), CFG_MAX(GPU_MAX_SLICES),
     .off = offsetof(raw_gpu, compute_slices), CFG_LOC(raw_gpu, compute_loc)},
    {"memory_slices", CFG_INT, CFG_MIN(1), CFG_MAX(GPU_MAX_SLICES),
     .off = offsetof(raw_gpu, memory_slices), CFG_LOC(raw_gpu, memory_slices_loc)},
    {"max_mig_instances", CFG_INT, CFG_MIN(1), CFG_MAX(GPU_MAX_SLICES),
     .off = offsetof(raw_gpu, max_mig_instances), CFG_LOC(raw_gpu, max_inst_loc)},
    GPOS("memory_gb", memory_gb, 1e5),
    {"memory_mib_smi", CFG_I64, CFG_MIN(1), CFG_MAX(1e8), .off = offsetof(raw_gpu, memory_mib_smi)},
    GPOS("mem_bandwidth_gb_s", bw_gb_s, 1e6),
    GPOS("l2_mb", l2_mb, 1e4),
    GPOS("sm_clock_boost_mhz", clock_mhz, 1e5),
    {"peak_tflops", CFG_MAP, .sub = peak_fields, .off = offsetof(raw_gpu, peak)},
    GPOS("tdp_w", tdp_w, 1e5),
    GPOS("nvlink_gb_s_total", nvlink_gb_s, 1e6),
    GPOS("pcie_gb_s_per_direction", pcie_gb_s, 1e6),
    STRLIST("unsourced", raw_gpu, unsourced, false),
    {"note", CFG_STRING, .off = offsetof(raw_gpu, note)},
    STRLIST("src", raw_gpu, src, true),
    {"layout_counts", CFG_SEQ, CFG_MAX(GPU_MAX_LAYOUT_COUNTS),
     CFG_SEQ_OF(raw_gpu, counts, n_counts, raw_count, count_fields), CFG_LOC(raw_gpu, counts_loc)},
    {"profiles", CFG_SEQ, CFG_MIN(1), CFG_MAX(GPU_MAX_PROFILES),
     CFG_SEQ_OF(raw_gpu, profiles, n_profiles, raw_profile, profile_fields),
     CFG_LOC(raw_gpu, profiles_loc)},
    {0},
};

static const cfg_field root_fields[] = {
    CFG_SELF(raw_catalog, loc),
    {"schema_version", CFG_INT, .required = true, CFG_MIN(1), CFG_MAX(1),
     .off = offsetof(raw_catalog, schema_version)},
    {"sources", CFG_SEQ, .required = true, CFG_MIN(1),
     CFG_SEQ_OF(raw_catalog, sources, n_sources, raw_source, source_fields)},
    {"validity_rules", CFG_SEQ, .required = true,
     CFG_SEQ_OF(raw_catalog, rules, n_rules, raw_rule, rule_fields)},
    {"gpus", CFG_SEQ, .required = true, CFG_MIN(1),
     CFG_SEQ_OF(raw_catalog, gpus, n_gpus, raw_gpu, gpu_fields)},
    {0},
};

/* ---- checks and conversion ---- */

typedef struct ctx {
    arena *a;
    diag *d;
    const raw_catalog *raw;
} ctx;

static bool in_list(const strlist *l, const char *name, size_t *at)
{
    for (size_t i = 0; i < l->n; i++) {
        if (!strcmp(l->v[i], name)) {
            if (at) {
                *at = i;
            }
            return true;
        }
    }
    return false;
}

/* Join the items of l with `sep` into an arena string; NULL when empty. */
static const char *join(arena *a, const strlist *l, const char *sep)
{
    if (l->n == 0) {
        return NULL;
    }
    size_t len = 1;
    for (size_t i = 0; i < l->n; i++) {
        len += strlen(l->v[i]) + strlen(sep);
    }
    char *s = arena_alloc(a, len);
    for (size_t i = 0; i < l->n; i++) {
        if (i) {
            strcat(s, sep);
        }
        strcat(s, l->v[i]);
    }
    return s;
}

static void check_src(ctx *c, const strlist *src, const char *path)
{
    for (size_t i = 0; i < src->n; i++) {
        bool known = false;
        for (size_t k = 0; k < c->raw->n_sources && !known; k++) {
            known = !strcmp(c->raw->sources[k].tag, src->v[i]);
        }
        if (!known) {
            char p[256];
            cfg_path_index(p, sizeof p, path, i);
            diag_error(c->d, src->loc[i], p,
                       "unknown source tag; expected a tag defined under sources, got '%s'",
                       src->v[i]);
        }
    }
}

/* A driver field: "R510" etc., or (when allow_newest) "newest" = 0. Absent gives 0. */
static int driver_of(ctx *c, const char *text, src_loc at, const char *path, bool allow_newest)
{
    int b = 0;
    if (!text || (allow_newest && !strcmp(text, "newest"))) {
        return 0;
    }
    if (!mig_parse_driver(text, &b)) {
        diag_error(c->d, at, path, "not a driver branch; expected %s like R510, got '%s'",
                   allow_newest ? "newest or a branch" : "a branch", text);
        return 0;
    }
    return b;
}

/* Parse "{0,2,4}:2" into p->starts / p->n_starts / p->mem_slices. */
static void parse_placements(ctx *c, const char *t, src_loc at, const char *path, int mem_slices,
                             mig_profile *p)
{
    const char *s = t;
    const char *problem = NULL;
    int n = 0, starts[GPU_MAX_SLICES];
    long size = 0;
    if (*s++ != '{') {
        problem = "does not open with '{'";
    }
    while (!problem) {
        if (*s < '0' || *s > '9') {
            problem = "a start is not a number";
            break;
        }
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || v >= GPU_MAX_SLICES) {
            problem = "a start is past the last memory slice";
            break;
        }
        if (n > 0 && v <= starts[n - 1]) {
            problem = "starts are not in ascending order";
            break;
        }
        starts[n++] = (int)v;
        s = end;
        if (*s == ',') {
            s++;
            if (n == GPU_MAX_SLICES) {
                problem = "too many starts";
            }
            continue;
        }
        if (*s++ != '}' || *s++ != ':') {
            problem = "a start list must end in '}:' and the size";
            break;
        }
        if (*s < '1' || *s > '9') {
            problem = "the size is not a positive number";
            break;
        }
        errno = 0;
        size = strtol(s, &end, 10);
        if (errno || *end) {
            problem = "trailing text after the size";
        } else if (starts[n - 1] + size > mem_slices) {
            problem = "a placement runs past the GPU's memory slices";
        }
        break;
    }
    if (problem) {
        diag_error(c->d, at, path, "%s; expected nvidia-smi -lgipp notation like \"{0,2,4}:2\" "
                   "within %d memory slices, got '%s'", problem, mem_slices, t);
        return;
    }
    p->n_starts = n;
    memcpy(p->starts, starts, (size_t)n * sizeof starts[0]);
    p->mem_slices = (int)size;
}

/* Names of the optional figures of a profile and whether each is present. */
static void check_unsourced(ctx *c, const strlist *uns, const char *const *names,
                            const bool *present, size_t n_names, src_loc owner, const char *path,
                            const char *extra_ok)
{
    for (size_t i = 0; i < uns->n; i++) {
        size_t k = 0;
        while (k < n_names && strcmp(names[k], uns->v[i])) {
            k++;
        }
        char p[256];
        cfg_path_index(p, sizeof p, path, i);
        bool extra = extra_ok && gpu_format_from_name(uns->v[i]) != GPU_FMT_COUNT;
        if (k == n_names && !extra) {
            char list[512] = "";
            for (size_t j = 0; j < n_names; j++) {
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%s", j ? ", " : "", names[j]);
            }
            diag_error(c->d, uns->loc[i], p, "unknown field; expected one of %s%s, got '%s'",
                       list, extra_ok ? extra_ok : "", uns->v[i]);
        } else if (k < n_names && present[k]) {
            diag_error(c->d, uns->loc[i], p,
                       "listed as unsourced but given; expected a field that is absent, got '%s'",
                       uns->v[i]);
        }
    }
    for (size_t k = 0; k < n_names; k++) {
        if (!present[k] && !in_list(uns, names[k], NULL)) {
            char p[256];
            cfg_path_key(p, sizeof p, path[0] ? path : "", names[k]);
            /* path ends in ".unsourced": name the field beside it instead */
            char *dot = strstr(p, ".unsourced.");
            if (dot) {
                memmove(dot, dot + strlen(".unsourced"), strlen(dot + strlen(".unsourced")) + 1);
            }
            diag_error(c->d, owner, p,
                       "missing; expected a value with its source, or the key listed under "
                       "unsourced, got nothing");
        }
    }
}

static void build_profile(ctx *c, const raw_gpu *rg, const raw_profile *rp, const char *path,
                          gpu_type *g, mig_profile *p)
{
    char fp[256];
    p->name = rp->name;
    p->id = rp->id_loc.line ? rp->id : -1;
    p->compute_slices = rp->compute_slices;
    p->sms = rp->sms;
    p->mem_bytes = (uint64_t)llround(rp->mem_gib * 1073741824.0);
    p->copy_engines = rp->copy_engines;
    p->nvdec = rp->nvdec;
    p->nvenc = rp->nvenc;
    p->jpeg = rp->jpeg;
    p->ofa = rp->ofa;
    p->max_instances = rp->max_instances;
    p->note = rp->note;
    p->src = join(c->a, &rp->src, " ");
    p->unsourced = join(c->a, &rp->unsourced, ",");

    /* Name: <C>g.<M>gb with an optional +me, C matching compute_slices. */
    const char *n = rp->name;
    char *end;
    errno = 0;
    long cs = strtol(n, &end, 10);
    bool shape = n[0] >= '1' && n[0] <= '9' && !errno && end[0] == 'g' && end[1] == '.';
    if (shape) {
        const char *m = end + 2;
        long mem = strtol(m, &end, 10);
        shape = m[0] >= '1' && m[0] <= '9' && mem > 0 && !strncmp(end, "gb", 2) &&
                (end[2] == '\0' || !strcmp(end + 2, "+me"));
        p->is_media_extension = shape && !strcmp(end + 2, "+me");
    }
    cfg_path_key(fp, sizeof fp, path, "name");
    if (!shape) {
        diag_error(c->d, rp->name_loc, fp,
                   "not a GPU-instance profile name; expected <C>g.<M>gb or <C>g.<M>gb+me, got '%s'",
                   rp->name);
    } else if (cs != rp->compute_slices) {
        diag_error(c->d, rp->name_loc, fp,
                   "name disagrees with compute_slices %d; expected %dg.*, got '%s'",
                   rp->compute_slices, rp->compute_slices, rp->name);
    }
    if (rp->compute_slices > rg->compute_slices) {
        cfg_path_key(fp, sizeof fp, path, "compute_slices");
        diag_error(c->d, rp->loc, fp, "more than the GPU's compute slices; expected at most %d, got '%d'",
                   rg->compute_slices, rp->compute_slices);
    }
    cfg_path_key(fp, sizeof fp, path, "placements");
    parse_placements(c, rp->placements, rp->placements_loc, fp, rg->memory_slices, p);
    cfg_path_key(fp, sizeof fp, path, "min_driver");
    p->min_driver = driver_of(c, rp->min_driver, rp->min_driver_loc, fp, false);
    cfg_path_key(fp, sizeof fp, path, "src");
    check_src(c, &rp->src, fp);

    static const char *const names[] = {"id", "sms", "mem_gib", "copy_engines", "nvdec",
                                        "nvenc", "jpeg", "ofa"};
    bool present[] = {rp->id_loc.line > 0, rp->sms > 0, rp->mem_gib > 0, rp->ce_loc.line > 0,
                      rp->nvdec_loc.line > 0, rp->nvenc_loc.line > 0, rp->jpeg_loc.line > 0,
                      rp->ofa_loc.line > 0};
    cfg_path_key(fp, sizeof fp, path, "unsourced");
    check_unsourced(c, &rp->unsourced, names, present, sizeof names / sizeof names[0], rp->loc, fp,
                    NULL);
    (void)g;
}

static void build_gpu(ctx *c, const raw_gpu *rg, const char *path, gpu_type *g)
{
    char fp[256];
    g->name = rg->name;
    g->arch = rg->arch;
    g->sms_total = rg->sms_total;
    g->sms_mig_full = rg->sms_mig_full;
    g->compute_slices = rg->compute_slices;
    g->memory_slices = rg->memory_slices;
    g->max_mig_instances = rg->max_mig_instances;
    g->mem_bytes = rg->memory_mib_smi > 0 ? (uint64_t)rg->memory_mib_smi * 1048576u
                                          : (uint64_t)llround(rg->memory_gb * 1073741824.0);
    g->mem_bw_bytes_per_s = rg->bw_gb_s * 1e9;
    g->l2_bytes = rg->l2_mb * 1048576.0;
    for (int f = 0; f < GPU_FMT_COUNT; f++) {
        g->peak_flops[f] = rg->peak.v[f] * 1e12;
    }
    g->sm_clock_boost_hz = rg->clock_mhz * 1e6;
    g->tdp_w = rg->tdp_w;
    g->nvlink_bytes_per_s = rg->nvlink_gb_s * 1e9;
    g->pcie_bytes_per_s = rg->pcie_gb_s * 1e9;
    g->unsourced = join(c->a, &rg->unsourced, ",");
    g->src = join(c->a, &rg->src, " ");
    g->note = rg->note;

    cfg_path_key(fp, sizeof fp, path, "mig_min_driver");
    g->mig_min_driver = driver_of(c, rg->mig_min_driver, rg->mig_driver_loc, fp, false);
    cfg_path_key(fp, sizeof fp, path, "pair_4g_3g_min_driver");
    g->pair_4g_3g_min_driver = driver_of(c, rg->pair_driver, rg->pair_driver_loc, fp, false);
    cfg_path_key(fp, sizeof fp, path, "src");
    check_src(c, &rg->src, fp);

    if (rg->compute_slices > rg->memory_slices) {
        cfg_path_key(fp, sizeof fp, path, "compute_slices");
        diag_error(c->d, rg->compute_loc, fp,
                   "more compute than memory slices; expected at most %d, got '%d'",
                   rg->memory_slices, rg->compute_slices);
    }
    if (rg->aliases.n > GPU_MAX_ALIASES) {
        cfg_path_key(fp, sizeof fp, path, "aliases");
        diag_error(c->d, rg->aliases.loc[GPU_MAX_ALIASES], fp,
                   "too many aliases; expected at most %d, got %zu", GPU_MAX_ALIASES, rg->aliases.n);
    }
    for (size_t i = 0; i < rg->aliases.n && i < GPU_MAX_ALIASES; i++) {
        g->aliases[g->n_aliases++] = rg->aliases.v[i];
    }
    for (size_t i = 0; i < rg->pci.n; i++) {
        char ip[256], pp[256];
        cfg_path_key(pp, sizeof pp, path, "pci_device_ids");
        cfg_path_index(ip, sizeof ip, pp, i);
        const char *t = rg->pci.v[i];
        char *end = NULL;
        errno = 0;
        unsigned long v = (t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && strlen(t) == 6)
                              ? strtoul(t + 2, &end, 16)
                              : 0;
        if (!end || *end || errno) {
            diag_error(c->d, rg->pci.loc[i], ip,
                       "not a PCI device id; expected 0x and four hex digits like \"0x20B0\", got '%s'",
                       t);
        } else if (g->n_pci_ids >= GPU_MAX_PCI_IDS) {
            diag_error(c->d, rg->pci.loc[i], ip, "too many PCI ids; expected at most %d, got %zu",
                       GPU_MAX_PCI_IDS, rg->pci.n);
        } else {
            g->pci_device_ids[g->n_pci_ids++] = (uint16_t)v;
        }
    }

    int max_sms = 0;
    bool all_sms = true;
    for (size_t i = 0; i < rg->n_profiles && i < GPU_MAX_PROFILES; i++) {
        char pp[256], ip[256];
        cfg_path_key(pp, sizeof pp, path, "profiles");
        cfg_path_index(ip, sizeof ip, pp, i);
        mig_profile *p = &g->profiles[g->n_profiles++];
        build_profile(c, rg, &rg->profiles[i], ip, g, p);
        all_sms = all_sms && p->sms > 0;
        max_sms = p->sms > max_sms ? p->sms : max_sms;
        for (int j = 0; j + 1 < g->n_profiles; j++) {
            const mig_profile *q = &g->profiles[j];
            if (q->name && p->name && !strcmp(q->name, p->name)) {
                cfg_path_key(ip + strlen(ip), sizeof ip - strlen(ip), "", "name");
                diag_error(c->d, rg->profiles[i].name_loc, ip,
                           "duplicate profile; expected a name not used above, got '%s'", p->name);
            } else if (q->id >= 0 && q->id == p->id) {
                char idp[300];
                cfg_path_key(idp, sizeof idp, ip, "id");
                diag_error(c->d, rg->profiles[i].id_loc, idp,
                           "duplicate profile id (also %s); expected an id not used above, got '%d'",
                           q->name, p->id);
            }
        }
    }
    if (rg->sms_mig_full > 0 && all_sms && max_sms != rg->sms_mig_full) {
        cfg_path_key(fp, sizeof fp, path, "sms_mig_full");
        diag_error(c->d, rg->sms_mig_full_loc, fp,
                   "disagrees with the largest profile; expected %d, got '%d'", max_sms,
                   rg->sms_mig_full);
    }

    for (size_t i = 0; i < rg->n_counts; i++) {
        const raw_count *rc = &rg->counts[i];
        char pp[256], ip[256], dp[300];
        cfg_path_key(pp, sizeof pp, path, "layout_counts");
        cfg_path_index(ip, sizeof ip, pp, i);
        cfg_path_key(dp, sizeof dp, ip, "driver");
        gpu_layout_count *lc = &g->layout_counts[g->n_layout_counts++];
        lc->all_profiles = rc->profiles == 1;
        lc->maximal_only = rc->maximal;
        lc->driver = driver_of(c, rc->driver, rc->driver_loc, dp, true);
        lc->count = (long)rc->count;
        lc->src = join(c->a, &rc->src, " ");
        cfg_path_key(dp, sizeof dp, ip, "src");
        check_src(c, &rc->src, dp);
    }

    /* A GPU without MIG (T4, V100, ...) gives no profiles and none of the MIG geometry; a MIG
     * GPU gives all of it. */
    bool has_mig = rg->n_profiles > 0;
    static const char *const mig_keys[] = {"compute_slices", "memory_slices", "max_mig_instances",
                                           "profiles"};
    const src_loc mig_locs[] = {rg->compute_loc, rg->memory_slices_loc, rg->max_inst_loc,
                                rg->profiles_loc};
    for (size_t k = 0; k < sizeof mig_keys / sizeof mig_keys[0]; k++) {
        cfg_path_key(fp, sizeof fp, path, mig_keys[k]);
        if (has_mig && !cfg_present(mig_locs[k])) {
            diag_error(c->d, rg->loc, fp,
                       "missing on a GPU with MIG profiles; expected a value, got nothing");
        } else if (!has_mig && k < 3 && cfg_present(mig_locs[k])) {
            diag_error(c->d, mig_locs[k], fp,
                       "MIG geometry on a GPU without profiles; expected profiles with it, or "
                       "neither, got '%s'",
                       mig_keys[k]);
        }
    }
    static const char *const names[] = {
        "pci_device_ids", "mig_min_driver", "sms_total",  "sms_mig_full", "mem_bandwidth_gb_s",
        "l2_mb",          "peak_tflops",    "tdp_w",      "nvlink_gb_s_total",
        "pcie_gb_s_per_direction", "sm_clock_boost_mhz",
    };
    bool any_peak = false;
    for (int f = 0; f < GPU_FMT_COUNT; f++) {
        any_peak = any_peak || rg->peak.v[f] > 0;
    }
    bool present[] = {rg->pci.n > 0,    rg->mig_min_driver != NULL, rg->sms_total > 0,
                      rg->sms_mig_full > 0, rg->bw_gb_s > 0,      rg->l2_mb > 0,
                      any_peak,          rg->tdp_w > 0,             rg->nvlink_gb_s > 0,
                      rg->pcie_gb_s > 0, rg->clock_mhz > 0};
    if (!has_mig) { /* MIG driver and SM count do not apply */
        present[1] = present[3] = true;
    }
    cfg_path_key(fp, sizeof fp, path, "unsourced");
    check_unsourced(c, &rg->unsourced, names, present, sizeof names / sizeof names[0], rg->loc, fp,
                    ", or a peak_tflops format");
}

static void build(ctx *c, const raw_catalog *raw, gpu_catalog *out)
{
    *out = (gpu_catalog){0};
    out->n_sources = raw->n_sources;
    out->source_tags = arena_calloc(c->a, raw->n_sources, sizeof(char *));
    out->source_texts = arena_calloc(c->a, raw->n_sources, sizeof(char *));
    for (size_t i = 0; i < raw->n_sources; i++) {
        out->source_tags[i] = raw->sources[i].tag;
        out->source_texts[i] = raw->sources[i].text;
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(raw->sources[j].tag, raw->sources[i].tag)) {
                char p[64];
                snprintf(p, sizeof p, "sources[%zu].tag", i);
                diag_error(c->d, raw->sources[i].tag_loc, p,
                           "duplicate tag; expected a tag not defined above, got '%s'",
                           raw->sources[i].tag);
            }
        }
    }
    out->n_rules = raw->n_rules;
    out->rule_ids = arena_calloc(c->a, raw->n_rules + 1, sizeof(char *));
    out->rule_texts = arena_calloc(c->a, raw->n_rules + 1, sizeof(char *));
    out->rule_srcs = arena_calloc(c->a, raw->n_rules + 1, sizeof(char *));
    for (size_t i = 0; i < raw->n_rules; i++) {
        const raw_rule *r = &raw->rules[i];
        char p[64];
        bool known = false;
        for (size_t k = 0; mig_rule_ids[k] && !known; k++) {
            known = !strcmp(mig_rule_ids[k], r->id);
        }
        if (!known) {
            char list[256] = "";
            for (size_t k = 0; mig_rule_ids[k]; k++) {
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", mig_rule_ids[k]);
            }
            snprintf(p, sizeof p, "validity_rules[%zu].id", i);
            diag_error(c->d, r->id_loc, p,
                       "not a rule model/hw/mig.c implements; expected one of %s, got '%s'", list, r->id);
        }
        snprintf(p, sizeof p, "validity_rules[%zu].src", i);
        check_src(c, &r->src, p);
        out->rule_ids[i] = r->id;
        out->rule_texts[i] = r->text;
        out->rule_srcs[i] = join(c->a, &r->src, " ");
    }
    out->n_gpus = raw->n_gpus;
    out->gpus = arena_calloc(c->a, raw->n_gpus ? raw->n_gpus : 1, sizeof(gpu_type));
    for (size_t i = 0; i < raw->n_gpus; i++) {
        char p[64];
        snprintf(p, sizeof p, "gpus[%zu]", i);
        build_gpu(c, &raw->gpus[i], p, &out->gpus[i]);
    }
    /* Names and aliases are unique across the catalog (case-insensitively, as lookups are). */
    for (size_t i = 0; i < raw->n_gpus; i++) {
        const raw_gpu *gi = &raw->gpus[i];
        for (size_t a = 0; a <= gi->aliases.n; a++) {
            const char *name = a == 0 ? gi->name : gi->aliases.v[a - 1];
            src_loc at = a == 0 ? gi->name_loc : gi->aliases.loc[a - 1];
            for (size_t j = 0; j <= i; j++) {
                const raw_gpu *gj = &raw->gpus[j];
                size_t lim = j == i ? a : gj->aliases.n + 1;
                for (size_t b = 0; b < lim; b++) {
                    const char *other = b == 0 ? gj->name : gj->aliases.v[b - 1];
                    if (name && other && !strcasecmp(name, other)) {
                        char p[64];
                        if (a == 0) {
                            snprintf(p, sizeof p, "gpus[%zu].name", i);
                        } else {
                            snprintf(p, sizeof p, "gpus[%zu].aliases[%zu]", i, a - 1);
                        }
                        diag_error(c->d, at, p,
                                   "name already used by %s; expected a unique name, got '%s'",
                                   gj->name, name);
                    }
                }
            }
        }
    }
}

/* Walk and build a parsed document; takes ownership of doc. */
static int load_doc(yamlx_doc *doc, arena *a, gpu_catalog *out, diag *d)
{
    int before = diag_error_count(d);
    raw_catalog *raw = arena_alloc(a, sizeof *raw);
    bool ok = cfg_walk_doc(doc, a, d, root_fields, raw);
    yamlx_destroy(doc);
    if (!ok) {
        return SIM_EINPUT;
    }
    ctx c = {a, d, raw};
    build(&c, raw, out);
    return diag_error_count(d) > before ? SIM_EINPUT : 0;
}

int catalog_load_buffer(const char *name, const void *buf, size_t len, arena *a, gpu_catalog *out,
                        diag *d)
{
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_buffer(name, buf, len, a, d, &doc);
    return rc ? rc : load_doc(doc, a, out, d);
}

int catalog_load_file(const char *path, arena *a, gpu_catalog *out, diag *d)
{
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_file(path, a, d, &doc);
    return rc ? rc : load_doc(doc, a, out, d);
}

int catalog_load_default(arena *a, gpu_catalog *out, diag *d)
{
    const unsigned char *data;
    size_t len;
    if (!embedded_get(CATALOG_DEFAULT_PATH, &data, &len)) {
        diag_error(d, (src_loc){CATALOG_DEFAULT_PATH, 0, 0}, NULL,
                   "not embedded in this build; expected the catalog, got nothing");
        return SIM_EINPUT;
    }
    return catalog_load_buffer(CATALOG_DEFAULT_PATH, data, len, a, out, d);
}
