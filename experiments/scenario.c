#include "experiments/scenario.h"
#include "experiments/scenario_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/calib_json.h"
#include "experiments/cfg.h"
#include "experiments/migparted.h"
#include "experiments/resolve.h"
#include "experiments/timeslicing.h"
#include "experiments/yamlx.h"
#include "model/physics/ddp.h"
#include "model/hw/mig.h"
#include "model/policy/policy.h"
#include "sim/err.h"
#include "sim/xalloc.h"

const char *scenario_resolve(const scenario_spec *s, arena *a, const char *ref)
{
    const char *dir = s->dir;
    if (ref[0] == '/' || !dir[0] || !strcmp(dir, ".")) {
        return arena_strdup(a, ref);
    }
    size_t n = strlen(dir) + strlen(ref) + 2;
    char *p = arena_alloc(a, n);
    snprintf(p, n, "%s/%s", dir, ref);
    return p;
}

/* Reference `ref` resolved against the scenario directory (arena-owned). */
static const char *resolve(load_ctx *c, const char *ref)
{
    return scenario_resolve(c->spec, c->a, ref);
}

void scenario__add_ref(load_ctx *c, const char *path, const char *what, src_loc at)
{
    if (c->n_refs == c->cap_refs) {
        c->cap_refs = c->cap_refs ? 2 * c->cap_refs : 8;
        c->refs = xrealloc(c->refs, c->cap_refs * sizeof *c->refs, "scenario refs");
    }
    c->refs[c->n_refs++] = (scenario_ref){path, what, at};
}

/* ---- device-plugin sharing config (experiments/timeslicing.h reads the file) ---------------- */

/* Read the replicas rules of sh->mode (sharing.timeSlicing or sharing.mps) from the device-plugin
 * config at `path` into `sh`. A missing or unreadable file is bad input of the scenario (a
 * dangling reference), reported at the reference. */
static void load_dp_config(load_ctx *c, scenario_sharing *sh, const char *path, src_loc at,
                           const char *field_path, const char *as_written)
{
    timeslicing_config cfgv;
    int rc = timeslicing_load(path, c->a, &cfgv, c->d);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        diag_error(c->d, at, field_path,
                   "cannot read '%s' (%s); expected a readable device-plugin config, got '%s'",
                   path, strerror(errno), as_written);
        return;
    }
    if (rc) {
        return;
    }
    bool mps = sh->mode == SCN_SHARE_MPS;
    const char *section = mps ? "mps" : "timeSlicing";
    const timeslicing_replicated *r = mps ? &cfgv.mps : &cfgv.time_slicing;
    if (!r->present) {
        diag_error(c->d, at, field_path,
                   "no sharing.%s in '%s'; expected a device-plugin config "
                   "with sharing.%s.resources, got '%s'",
                   section, path, section, as_written);
        return;
    }
    /* The simulator replicates every device of a resource under the plain or .shared name:
     * a rule that renames its resource or picks some devices is refused, not ignored. */
    bool ok = true;
    for (size_t i = 0; i < r->n_resources; i++) {
        const timeslicing_resource *t = &r->resources[i];
        char p[PATH_LEN];
        if (t->rename) {
            snprintf(p, sizeof p, "sharing.%s.resources[%zu].rename", section, i);
            diag_error(c->d, t->rename_loc, p,
                       "renamed resources are not modelled; expected no rename (renameByDefault "
                       "gives <name>.shared), got '%s'",
                       t->rename);
            ok = false;
        }
        if (!t->all_devices) {
            snprintf(p, sizeof p, "sharing.%s.resources[%zu].devices", section, i);
            if (t->device_count) {
                diag_error(c->d, t->devices_loc, p,
                           "device subsets are not modelled; expected all, got '%d'",
                           t->device_count);
            } else {
                diag_error(c->d, t->devices_loc, p,
                           "device subsets are not modelled; expected all, got a list of %zu "
                           "devices",
                           t->n_device_refs);
            }
            ok = false;
        }
    }
    if (!ok) {
        return;
    }
    sh->rename_by_default = r->rename_by_default;
    sh->fail_requests_greater_than_one = r->fail_requests_greater_than_one;
    sh->n_rules = r->n_resources;
    sh->rules = arena_calloc(c->a, r->n_resources, sizeof *sh->rules);
    for (size_t i = 0; i < r->n_resources; i++) {
        const timeslicing_resource *t = &r->resources[i];
        sh->rules[i] = (scenario_replica_rule){t->name, (uint32_t)t->replicas, t->loc};
    }
}

/* ---- sharing: `whole`, or {mig: {...}, timeslice: {...} | mps: {...}} --------------------------
 */

typedef struct replicas_raw {
    uint32_t replicas;
    const char *file;
    bool rename_by_default, fail_gt1;
    src_loc at, file_at, replicas_at;
} replicas_raw;

typedef struct sharing_raw {
    scenario_mig mig;
    replicas_raw ts, mps;
} sharing_raw;

static const char *const mig_strategy_names[] = {"mixed", "single", NULL};

static const cfg_field mig_fields[] = {
    CFG_SELF(scenario_mig, at),
    {"file", CFG_STRING, .required = true, .off = offsetof(scenario_mig, file),
     .expect = "a mig-parted config file", CFG_LOC(scenario_mig, file_at)},
    {"config", CFG_STRING, .required = true, .off = offsetof(scenario_mig, config),
     .expect = "a config name under mig-configs", CFG_LOC(scenario_mig, config_at)},
    {"strategy", CFG_ENUM, .names = mig_strategy_names, .dflt = "mixed",
     .off = offsetof(scenario_mig, strategy)},
    {0},
};

static const cfg_field replicas_fields[] = {
    CFG_SELF(replicas_raw, at),
    {"replicas", CFG_U32, CFG_MIN(1), CFG_MAX(1024), .off = offsetof(replicas_raw, replicas),
     CFG_LOC(replicas_raw, replicas_at)},
    {"file", CFG_STRING, .off = offsetof(replicas_raw, file),
     .expect = "a device-plugin config file", CFG_LOC(replicas_raw, file_at)},
    {"rename_by_default", CFG_BOOL, .dflt = "false",
     .off = offsetof(replicas_raw, rename_by_default)},
    {"fail_requests_greater_than_one", CFG_BOOL, .dflt = "false",
     .off = offsetof(replicas_raw, fail_gt1)},
    {0},
};

static const cfg_field sharing_fields[] = {
    {"mig", CFG_MAP, .sub = mig_fields, .off = offsetof(sharing_raw, mig)},
    {"timeslice", CFG_MAP, .sub = replicas_fields, .off = offsetof(sharing_raw, ts)},
    {"mps", CFG_MAP, .sub = replicas_fields, .off = offsetof(sharing_raw, mps)},
    {0},
};


bool scenario__parse_sharing(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                          void *dst)
{
    (void)f;
    load_ctx *c = w->user;
    scenario_sharing *sh = dst;
    sh->at = cfg_loc(w, node);
    const char *text = yamlx_scalar(node);
    if (text) {
        if (!cfg_visit(w, node, path)) {
            return false;
        }
        if (strcmp(text, "whole") != 0) {
            cfg_error(w, node, path, "unknown sharing; expected %s, got '%s'", SHARING_EXPECT,
                      text);
            return false;
        }
        return true;
    }
    sharing_raw *raw = arena_alloc(w->arena, sizeof *raw);
    if (!cfg_walk_map(w, node, path, sharing_fields, raw)) {
        return false;
    }
    bool ok = true;
    char sub[PATH_LEN];
    if (cfg_present(raw->mig.at)) {
        sh->is_mig = true;
        sh->mig = raw->mig;
        sh->mig.file = resolve(c, raw->mig.file);
        scenario__add_ref(c, sh->mig.file, "mig-parted config", raw->mig.file_at);
        /* the file is read and applied to the GPU type by scenario_validate */
    }
    if (cfg_present(raw->ts.at) && cfg_present(raw->mps.at)) {
        cfg_path_key(sub, sizeof sub, path, "mps");
        diag_error(c->d, raw->mps.at, sub,
                   "conflicting sharing; expected timeslice or mps, not "
                   "both, got mps after timeslice");
        return false;
    }
    const replicas_raw *r = cfg_present(raw->ts.at)    ? &raw->ts
                            : cfg_present(raw->mps.at) ? &raw->mps
                                                       : NULL;
    if (!r) {
        return ok;
    }
    const char *key = r == &raw->ts ? "timeslice" : "mps";
    char rpath[PATH_LEN];
    cfg_path_key(rpath, sizeof rpath, path, key);
    sh->mode = r == &raw->ts ? SCN_SHARE_TIMESLICE : SCN_SHARE_MPS;
    if (r->file && cfg_present(r->replicas_at)) {
        cfg_path_key(sub, sizeof sub, rpath, "replicas");
        diag_error(c->d, r->replicas_at, sub,
                   "replicas given twice; expected replicas or file, "
                   "not both, got replicas beside file '%s'",
                   r->file);
        return false;
    }
    if (r->file) {
        sh->sharing_file = resolve(c, r->file);
        sh->sharing_file_at = r->file_at;
        scenario__add_ref(c, sh->sharing_file, "device-plugin config", r->file_at);
        if (!(c->flags & SCENARIO_NO_FILES)) {
            cfg_path_key(sub, sizeof sub, rpath, "file");
            int before = diag_error_count(c->d);
            load_dp_config(c, sh, sh->sharing_file, r->file_at, sub, r->file);
            ok = ok && diag_error_count(c->d) == before;
        }
        return ok;
    }
    if (!cfg_present(r->replicas_at)) {
        cfg_path_key(sub, sizeof sub, rpath, "replicas");
        diag_error(c->d, r->at, sub,
                   "missing required field; expected an integer from 1 to 1024, "
                   "or a file, got nothing");
        return false;
    }
    sh->rename_by_default = r->rename_by_default;
    sh->fail_requests_greater_than_one = r->fail_gt1;
    sh->n_rules = 1;
    sh->rules = arena_calloc(w->arena, 1, sizeof *sh->rules);
    sh->rules[0] = (scenario_replica_rule){NULL, r->replicas, r->replicas_at};
    return ok;
}

void scenario__write_sharing(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    static const char *const modes[] = {"exclusive", "timeslice", "mps"};
    const scenario_sharing *sh = src;
    char key[64];
    cJSON *j = cJSON_AddObjectToObject(parent, cfg_out_key(f, key, sizeof key));
    cJSON_AddItemToObject(j, "mig",
                          sh->is_mig ? cfg_write_map(o, mig_fields, &sh->mig) : cJSON_CreateNull());
    cJSON_AddStringToObject(j, "mode",
                            sh->mode >= 0 && sh->mode <= 2 ? modes[sh->mode] : "exclusive");
    cJSON_AddItemToObject(j, "sharing_file", cfg_out_string(sh->sharing_file));
    cJSON_AddBoolToObject(j, "rename_by_default", sh->rename_by_default);
    cJSON_AddBoolToObject(j, "fail_requests_greater_than_one", sh->fail_requests_greater_than_one);
    cJSON *rules = cJSON_AddArrayToObject(j, "rules");
    for (size_t i = 0; i < sh->n_rules; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToObject(r, "resource", cfg_out_string(sh->rules[i].resource));
        cJSON_AddItemToObject(r, "replicas", o->number(sh->rules[i].replicas));
        cJSON_AddItemToArray(rules, r);
    }
}

/* ---- Kubernetes labels, taints and tolerations (model/cluster/taint.h) ----------------------------- */

#define LABELS_EXPECT "a mapping of label keys to values like {nvidia.com/gpu.product: A100}"

/* `labels: {key: value, ...}` (and `node_selector:`) -> scenario_labels, keys unique. */
static bool parse_labels(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                         void *dst)
{
    (void)f;
    scenario_labels *l = dst;
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    if (node->type != YAML_MAPPING_NODE) {
        cfg_error(w, node, path, "wrong type; expected %s, got %s", LABELS_EXPECT,
                  yamlx_kind(node));
        return false;
    }
    size_t n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    taint_label *items = arena_calloc(w->arena, n ? n : 1, sizeof *items);
    l->items = items;
    l->at = cfg_loc(w, node);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *k = yamlx_node(w->doc, node->data.mapping.pairs.start[i].key);
        yaml_node_t *v = yamlx_node(w->doc, node->data.mapping.pairs.start[i].value);
        const char *ks = yamlx_scalar(k), *vs = yamlx_scalar(v);
        char lpath[PATH_LEN];
        cfg_path_key(lpath, sizeof lpath, path, ks ? ks : "?");
        if (!ks || !*ks || !vs) {
            cfg_error(w, ks && *ks ? v : k, lpath,
                      "wrong type; expected a label key and a scalar value, got %s",
                      ks && *ks ? yamlx_kind(v) : ks ? "an empty key" : yamlx_kind(k));
            ok = false;
            continue;
        }
        for (size_t j = 0; j < l->n; j++) {
            if (!strcmp(l->items[j].key, ks)) {
                cfg_error(w, k, lpath, "duplicate label; expected each key once, got '%s'", ks);
                ok = false;
            }
        }
        items[l->n++] = (taint_label){arena_strdup(w->arena, ks), arena_strdup(w->arena, vs)};
    }
    return ok;
}

/* A label mapping (labels, node_selector); left out when empty. */
static void write_labels(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    (void)o;
    const scenario_labels *l = src;
    if (l->n == 0) {
        return;
    }
    char key[64];
    cJSON *m = cJSON_AddObjectToObject(parent, cfg_out_key(f, key, sizeof key));
    for (size_t i = 0; i < l->n; i++) {
        cJSON_AddItemToObject(m, l->items[i].key, cfg_out_string(l->items[i].value));
    }
}

static const char *const taint_effect_names[] = {"NoSchedule", "PreferNoSchedule", "NoExecute",
                                                 NULL};
/* a toleration's effect: "" (every effect) then the three, so the index is a taint_effect */
static const char *const toleration_effect_names[] = {"", "NoSchedule", "PreferNoSchedule",
                                                      "NoExecute", NULL};
static const char *const toleration_op_names[] = {"Equal", "Exists", NULL};

static const cfg_field taint_fields[] = {
    CFG_SELF(scenario_taint, at),
    {"key", CFG_STRING, .required = true, .off = offsetof(scenario_taint, key)},
    {"value", CFG_STRING, .dflt = "", .off = offsetof(scenario_taint, value)},
    {"effect", CFG_ENUM, .required = true, .names = taint_effect_names,
     .off = offsetof(scenario_taint, effect)},
    {0},
};

static const cfg_field toleration_fields[] = {
    CFG_SELF(scenario_toleration, at),
    {"key", CFG_STRING, .dflt = "", .off = offsetof(scenario_toleration, key),
     CFG_LOC(scenario_toleration, key_at)},
    {"operator", CFG_ENUM, .dflt = "Equal", .names = toleration_op_names,
     .off = offsetof(scenario_toleration, op)},
    {"value", CFG_STRING, .dflt = "", .off = offsetof(scenario_toleration, value),
     CFG_LOC(scenario_toleration, value_at)},
    {"effect", CFG_ENUM, .dflt = "", .names = toleration_effect_names,
     .off = offsetof(scenario_toleration, effect)},
    {0},
};

/* ---- cluster ------------------------------------------------------------------------------- */

static const cfg_field group_fields[] = {
    CFG_SELF(scenario_node_group, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(scenario_node_group, name)},
    {"count", CFG_U32, CFG_MIN(1), CFG_MAX(100000), .dflt = "1",
     .off = offsetof(scenario_node_group, count)},
    {"gpu", CFG_STRING, .required = true, .off = offsetof(scenario_node_group, gpu),
     .expect = "a GPU type of the catalog, like A100-SXM4-40GB",
     CFG_LOC(scenario_node_group, gpu_at)},
    {"gpus_per_node", CFG_U32, .required = true, CFG_MIN(1), CFG_MAX(64),
     .off = offsetof(scenario_node_group, gpus_per_node)},
    {"sharing", CFG_CUSTOM, .parse = scenario__parse_sharing, .expect = SHARING_EXPECT,
     .off = offsetof(scenario_node_group, sharing), .write = scenario__write_sharing},
    /* absent: the GPU type's links (model/physics/ddp.h ddp_node) */
    {"topology", CFG_STRING, .off = offsetof(scenario_node_group, topology),
     .expect = "a topology of model/physics/comm.yaml, like nvswitch or pcie",
     CFG_LOC(scenario_node_group, topology_at), .out = CFG_OUT_IF_SET},
    /* a group read from cluster.trace: the model the node list names */
    {"trace_model", CFG_STRING, .off = offsetof(scenario_node_group, trace_model),
     .out = CFG_OUT_ONLY | CFG_OUT_IF_SET},
    /* absent: pods' nodes constraints name its GPU type */
    {"label", CFG_STRING, .off = offsetof(scenario_node_group, label),
     .expect = "a name for job classes' nodes constraints", CFG_LOC(scenario_node_group, label_at),
     .out = CFG_OUT_IF_SET},
    {"cpu_milli", CFG_U64, CFG_MAX(1e9), .off = offsetof(scenario_node_group, cpu_milli),
     .out = CFG_OUT_IF_SET},
    {"host_memory", CFG_BYTES, .off = offsetof(scenario_node_group, host_mem_bytes),
     .out = CFG_OUT_IF_SET, .out_key = "host_mem_bytes"},
    {"labels", CFG_CUSTOM, .parse = parse_labels, .expect = LABELS_EXPECT,
     .off = offsetof(scenario_node_group, labels), .write = write_labels},
    {"taints", CFG_SEQ, CFG_MAX(64),
     CFG_SEQ_OF(scenario_node_group, taints, n_taints, scenario_taint, taint_fields),
     .out = CFG_OUT_IF_SET},
    {0},
};

static const cfg_field cluster_fields[] = {
    CFG_SELF(scenario_cluster, at),
    {"driver", CFG_U32, CFG_MAX(9999), .dflt = "0", .off = offsetof(scenario_cluster, driver),
     .expect = "a driver branch like 535 (0: newest)"},
    {"interconnect", CFG_STRING, .off = offsetof(scenario_cluster, interconnect),
     .expect = "a network of model/physics/comm.yaml like eth-100g",
     CFG_LOC(scenario_cluster, interconnect_at), .out = CFG_OUT_IF_SET},
    {"nodes", CFG_SEQ, CFG_MIN(1), CFG_MAX(10000),
     CFG_SEQ_OF(scenario_cluster, groups, n_groups, scenario_node_group, group_fields)},
    {"trace", CFG_MAP, .sub = scenario__cluster_trace_fields,
     .off = offsetof(scenario_cluster, trace), .out = CFG_OUT_IF_SET},
    {"snapshot", CFG_MAP, .sub = scenario__snapshot_fields,
     .off = offsetof(scenario_cluster, snapshot), .out = CFG_OUT_IF_SET},
    {0},
};

/* ---- workload ------------------------------------------------------------------------------ */

static const char *const arrival_names[] = {"poisson", "fixed", NULL};
static const char *const dist_names[] = {"fixed", "exponential", "lognormal", NULL};

static const cfg_field dur_fixed_fields[] = {
    {"dist", CFG_ENUM, .names = dist_names, .off = offsetof(scenario_duration, dist)},
    {"value", CFG_DURATION, .required = true, CFG_ABOVE(0),
     .off = offsetof(scenario_duration, value_ns)},
    {0},
};
static const cfg_field dur_exp_fields[] = {
    {"dist", CFG_ENUM, .names = dist_names, .off = offsetof(scenario_duration, dist)},
    {"mean", CFG_DURATION, .required = true, CFG_ABOVE(0),
     .off = offsetof(scenario_duration, mean_ns)},
    {0},
};
static const cfg_field dur_lognormal_fields[] = {
    {"dist", CFG_ENUM, .names = dist_names, .off = offsetof(scenario_duration, dist)},
    {"median", CFG_DURATION, .required = true, CFG_ABOVE(0),
     .off = offsetof(scenario_duration, median_ns)},
    {"sigma", CFG_DOUBLE, .required = true, CFG_MIN(0), CFG_MAX(10),
     .off = offsetof(scenario_duration, sigma)},
    {0},
};
static const cfg_field *const dur_tables[] = {dur_fixed_fields, dur_exp_fields,
                                              dur_lognormal_fields};


/* `duration: 2h` (fixed) or `duration: {dist: lognormal, median: 30m, sigma: 0.8}`. */
bool scenario__parse_duration(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                           void *dst)
{
    (void)f;
    scenario_duration *dur = dst;
    dur->at = cfg_loc(w, node);
    if (node->type == YAML_SCALAR_NODE) {
        dur->dist = SCN_DUR_FIXED;
        return cfg_walk_field(w, node, path, &dur_fixed_fields[1], dur);
    }
    if (node->type != YAML_MAPPING_NODE) {
        cfg_error(w, node, path, "wrong type; expected %s, got %s", DURATION_EXPECT,
                  yamlx_kind(node));
        return false;
    }
    yaml_node_t *dist = yamlx_map_get(w->doc, node, "dist");
    char dpath[PATH_LEN];
    cfg_path_key(dpath, sizeof dpath, path, "dist");
    if (!dist) {
        cfg_error(w, node, dpath,
                  "missing required field; expected one of [fixed, exponential, "
                  "lognormal], got nothing");
        return false;
    }
    int which = -1;
    const char *t = yamlx_scalar(dist);
    for (int i = 0; t && dist_names[i]; i++) {
        if (!strcmp(t, dist_names[i])) {
            which = i;
        }
    }
    if (which < 0) {
        /* let the walker word the error for this one field */
        return cfg_walk_field(w, dist, dpath, &dur_fixed_fields[0], dur);
    }
    return cfg_walk_map(w, node, path, dur_tables[which], dur);
}

void scenario__write_duration(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    const scenario_duration *dur = src;
    if ((f->out & CFG_OUT_IF_SET) && !cfg_present(dur->at)) {
        return;
    }
    SIM_ASSERT(dur->dist >= SCN_DUR_FIXED && dur->dist <= SCN_DUR_LOGNORMAL);
    char key[64];
    cJSON_AddItemToObject(parent, cfg_out_key(f, key, sizeof key),
                          cfg_write_map(o, dur_tables[dur->dist], dur));
}

static const cfg_field request_count_field = {
    "count", CFG_U32, CFG_MIN(1), CFG_MAX(64), .off = offsetof(scenario_request, count),
};

#define RESOURCE_EXPECT                                                                            \
    "nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-<profile> or nvidia.com/mig-any"

/* Resource names as the NVIDIA device plugin advertises them, and the pseudo-resource of a job
 * asking for any MIG slice (model/cluster/job.h). */
static bool resource_name_ok(const char *r)
{
    if (!strcmp(r, JOB_RES_MIG_ANY)) {
        return true;
    }
    size_t n = strlen(r);
    const char *shared = ".shared";
    size_t sl = strlen(shared);
    size_t base = (n > sl && !strcmp(r + n - sl, shared)) ? n - sl : n;
    if (base == strlen("nvidia.com/gpu") && !strncmp(r, "nvidia.com/gpu", base)) {
        return true;
    }
    const char *mig = "nvidia.com/mig-";
    size_t ml = strlen(mig);
    if (base <= ml || strncmp(r, mig, ml) != 0) {
        return false;
    }
    /* a profile like 1g.5gb, 3g.20gb, 1g.10gb.me: digits 'g' '.' digits "gb", then .suffix */
    const char *p = r + ml, *end = r + base;
    if (p >= end || *p < '1' || *p > '9') {
        return false;
    }
    while (p < end && *p >= '0' && *p <= '9') {
        p++;
    }
    if (end - p < 5 || strncmp(p, "g.", 2) != 0) {
        return false;
    }
    p += 2;
    const char *digits = p;
    while (p < end && *p >= '0' && *p <= '9') {
        p++;
    }
    if (p == digits || end - p < 2 || strncmp(p, "gb", 2) != 0) {
        return false;
    }
    p += 2;
    if (p == end) {
        return true;
    }
    /* "+me" profiles are advertised with '.' ("nvidia.com/mig-1g.5gb.me", model/cluster/cluster.h) */
    if (*p != '.' || end - p < 2) {
        return false;
    }
    for (p++; p < end; p++) {
        if (!(*p >= 'a' && *p <= 'z')) {
            return false;
        }
    }
    return true;
}

/* `request: {nvidia.com/mig-1g.5gb: 1}`: exactly one resource and its count. */
static bool parse_request(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                          void *dst)
{
    (void)f;
    scenario_request *req = dst;
    req->at = cfg_loc(w, node);
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    if (node->type != YAML_MAPPING_NODE) {
        const char *s = yamlx_scalar(node);
        if (s) {
            cfg_error(w, node, path,
                      "wrong type; expected a mapping like {nvidia.com/gpu: 1}, "
                      "got '%s'",
                      s);
        } else {
            cfg_error(w, node, path,
                      "wrong type; expected a mapping like {nvidia.com/gpu: 1}, "
                      "got %s",
                      yamlx_kind(node));
        }
        return false;
    }
    size_t n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    if (n != 1) {
        cfg_error(w, node, path,
                  "wrong number of resources; expected exactly one resource, "
                  "got %zu",
                  n);
        return false;
    }
    yaml_node_t *k = yamlx_node(w->doc, node->data.mapping.pairs.start[0].key);
    yaml_node_t *v = yamlx_node(w->doc, node->data.mapping.pairs.start[0].value);
    const char *name = yamlx_scalar(k);
    if (!name || !resource_name_ok(name)) {
        cfg_error(w, k, path, "unknown resource; expected %s, got '%s'", RESOURCE_EXPECT,
                  name ? name : "(not a scalar)");
        return false;
    }
    req->resource = arena_strdup(w->arena, name);
    char cpath[PATH_LEN];
    cfg_path_key(cpath, sizeof cpath, path, name);
    return cfg_walk_field(w, v, cpath, &request_count_field, req);
}

/* {resource: count} */
static void write_request(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    const scenario_request *req = src;
    char key[64];
    cJSON *m = cJSON_AddObjectToObject(parent, cfg_out_key(f, key, sizeof key));
    if (req->resource) {
        cJSON_AddItemToObject(m, req->resource, o->number(req->count));
    }
}

#define NODES_EXPECT "a list of node group labels or GPU types like [a100-pool, H100-SXM5-80GB]"

/* `nodes: [A, B]` -> "A|B" (job_pod.gpu_spec's form); every item a plain name. */
static bool parse_nodes(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                        void *dst)
{
    (void)f;
    bool ok = node->type == YAML_SEQUENCE_NODE &&
              node->data.sequence.items.top > node->data.sequence.items.start;
    size_t len = 1;
    for (yaml_node_item_t *it = ok ? node->data.sequence.items.start : NULL;
         ok && it < node->data.sequence.items.top; it++) {
        const char *v = yamlx_scalar(yamlx_node(w->doc, *it));
        ok = v && *v && !strchr(v, '|');
        len += v ? strlen(v) + 1 : 0;
    }
    if (!ok) {
        diag_error(w->diag, cfg_loc(w, node), path, "expected %s, got '%s'", NODES_EXPECT,
                   yamlx_kind(node));
        return false;
    }
    char *out = arena_alloc(w->arena, len);
    out[0] = 0;
    for (yaml_node_item_t *it = node->data.sequence.items.start;
         it < node->data.sequence.items.top; it++) {
        if (out[0]) {
            strcat(out, "|");
        }
        strcat(out, yamlx_scalar(yamlx_node(w->doc, *it)));
    }
    *(const char **)dst = out;
    return true;
}

/* "A|B" as read; left out when absent (any node). */
static void write_nodes(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    (void)o;
    const char *nodes = *(const char *const *)src;
    char key[64];
    if (nodes) {
        cJSON_AddStringToObject(parent, cfg_out_key(f, key, sizeof key), nodes);
    }
}

#define NODE_INDEX_EXPECT "a list of node indices within the group `nodes` names, like [0, 0, 3]"

/* `node_index: [i, ...]` -> n_node_index and node_index (dst is &n_node_index; the array follows
 * it in scenario_job_class). */
static bool parse_node_index(cfg_walker *w, yaml_node_t *node, const char *path,
                             const cfg_field *f, void *dst)
{
    (void)f;
    scenario_job_class *j = (scenario_job_class *)((char *)dst -
                                                   offsetof(scenario_job_class, n_node_index));
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    if (node->type != YAML_SEQUENCE_NODE ||
        node->data.sequence.items.top == node->data.sequence.items.start) {
        cfg_error(w, node, path, "wrong type; expected %s, got %s", NODE_INDEX_EXPECT,
                  yamlx_kind(node));
        return false;
    }
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    j->node_index = arena_calloc(w->arena, n, sizeof *j->node_index);
    static const cfg_field item = {"node_index", CFG_U32, CFG_MAX(99999), .off = 0};
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        char ipath[PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        ok &= cfg_walk_field(w, yamlx_node(w->doc, node->data.sequence.items.start[i]), ipath,
                             &item, &j->node_index[i]);
    }
    j->n_node_index = n;
    return ok;
}

/* [i, ...]; left out when empty (src is &n_node_index, as for the parser). */
static void write_node_index(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    const scenario_job_class *j =
        (const scenario_job_class *)((const char *)src - offsetof(scenario_job_class, n_node_index));
    if (j->n_node_index == 0) {
        return;
    }
    char key[64];
    cJSON *a = cJSON_AddArrayToObject(parent, cfg_out_key(f, key, sizeof key));
    for (size_t i = 0; i < j->n_node_index; i++) {
        cJSON_AddItemToArray(a, o->number(j->node_index[i]));
    }
}

static const cfg_field job_fields[] = {
    CFG_SELF(scenario_job_class, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(scenario_job_class, name)},
    {"arrival", CFG_ENUM, .names = arrival_names, .dflt = "poisson",
     .off = offsetof(scenario_job_class, arrival)},
    /* one of rate and interval, as arrival asks */
    {"rate", CFG_RATE, CFG_ABOVE(0), .off = offsetof(scenario_job_class, rate_per_s),
     CFG_LOC(scenario_job_class, rate_at), .out = CFG_OUT_IF_SET},
    {"interval", CFG_DURATION, CFG_ABOVE(0), .off = offsetof(scenario_job_class, interval_ns),
     CFG_LOC(scenario_job_class, interval_at), .out = CFG_OUT_IF_SET},
    {"start", CFG_DURATION, CFG_MIN(0), .dflt = "0s",
     .off = offsetof(scenario_job_class, start_ns)},
    {"count", CFG_U64, CFG_MAX(1e9), .dflt = "0", .off = offsetof(scenario_job_class, count)},
    /* exactly one of duration and samples is given (check_work) */
    {"duration", CFG_CUSTOM, .parse = scenario__parse_duration, .expect = DURATION_EXPECT,
     .off = offsetof(scenario_job_class, duration), CFG_LOC(scenario_job_class, duration_at),
     .write = scenario__write_duration, .out = CFG_OUT_IF_SET},
    {"request", CFG_CUSTOM, .required = true, .parse = parse_request,
     .expect = "a mapping like {nvidia.com/gpu: 1}", .off = offsetof(scenario_job_class, request),
     .write = write_request},
    {"profile", CFG_STRING, .off = offsetof(scenario_job_class, profile),
     CFG_LOC(scenario_job_class, profile_at)},
    {"memory", CFG_BYTES, .off = offsetof(scenario_job_class, memory_bytes)},
    {"priority", CFG_INT, CFG_MIN(-1000), CFG_MAX(1000), .dflt = "0",
     .off = offsetof(scenario_job_class, priority), CFG_LOC(scenario_job_class, priority_at)},
    {"workers", CFG_U32, CFG_MIN(1), CFG_MAX(DDP_MAX_WORKERS), .dflt = "1",
     .off = offsetof(scenario_job_class, workers), CFG_LOC(scenario_job_class, workers_at)},
    /* per_gpu, samples, batch and duration_on: 0 or NULL is "not stated" (scenario.h) */
    {"per_gpu", CFG_U32, CFG_MIN(1), CFG_MAX(64), .off = offsetof(scenario_job_class, per_gpu),
     CFG_LOC(scenario_job_class, per_gpu_at), .out = CFG_OUT_IF_SET},
    {"samples", CFG_DOUBLE, CFG_ABOVE(0), CFG_MAX(1e18),
     .off = offsetof(scenario_job_class, samples), CFG_LOC(scenario_job_class, samples_at),
     .out = CFG_OUT_IF_SET},
    {"batch", CFG_U32, CFG_MIN(1), CFG_MAX(1000000), .off = offsetof(scenario_job_class, batch),
     CFG_LOC(scenario_job_class, batch_at), .out = CFG_OUT_IF_SET},
    {"duration_on", CFG_STRING, .expect = "a MIG profile like 1g.5gb",
     .off = offsetof(scenario_job_class, duration_on), CFG_LOC(scenario_job_class, duration_on_at),
     .out = CFG_OUT_IF_SET},
    {"nodes", CFG_CUSTOM, .parse = parse_nodes, .expect = NODES_EXPECT,
     .off = offsetof(scenario_job_class, nodes), CFG_LOC(scenario_job_class, nodes_at),
     .write = write_nodes},
    {"cpu_milli", CFG_U64, CFG_MAX(4e9), .off = offsetof(scenario_job_class, cpu_milli),
     .out = CFG_OUT_IF_SET},
    {"host_memory", CFG_BYTES, .off = offsetof(scenario_job_class, host_mem_bytes),
     .out = CFG_OUT_IF_SET, .out_key = "host_mem_bytes"},
    {"node_selector", CFG_CUSTOM, .parse = parse_labels, .expect = LABELS_EXPECT,
     .off = offsetof(scenario_job_class, node_selector), .write = write_labels},
    {"tolerations", CFG_SEQ, CFG_MAX(64),
     CFG_SEQ_OF(scenario_job_class, tolerations, n_tolerations, scenario_toleration,
                toleration_fields),
     .out = CFG_OUT_IF_SET},
    {"node_index", CFG_CUSTOM, .parse = parse_node_index, .expect = NODE_INDEX_EXPECT,
     .off = offsetof(scenario_job_class, n_node_index), CFG_LOC(scenario_job_class, node_index_at),
     .write = write_node_index},
    {0},
};

static const cfg_field workload_fields[] = {
    CFG_SELF(scenario_workload, at),
    {"jobs", CFG_SEQ, CFG_MIN(1), CFG_MAX(1000),
     CFG_SEQ_OF(scenario_workload, jobs, n_jobs, scenario_job_class, job_fields)},
    {"trace", CFG_MAP, .sub = scenario__workload_trace_fields,
     .off = offsetof(scenario_workload, trace), .out = CFG_OUT_IF_SET},
    {0},
};

/* ---- policy and outputs -------------------------------------------------------------------- */

/* `params: {key: value, ...}` kept as text for the policy to check. */
static bool parse_params(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                         void *dst)
{
    (void)f;
    scenario_policy *pol = dst; /* the field's offset is 0: dst is the whole policy */
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    if (node->type != YAML_MAPPING_NODE) {
        cfg_error(w, node, path, "wrong type; expected a mapping of names to values, got %s",
                  yamlx_kind(node));
        return false;
    }
    size_t n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    pol->params = n ? arena_calloc(w->arena, n, sizeof *pol->params) : NULL;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *k = yamlx_node(w->doc, node->data.mapping.pairs.start[i].key);
        yaml_node_t *v = yamlx_node(w->doc, node->data.mapping.pairs.start[i].value);
        const char *ks = yamlx_scalar(k), *vs = yamlx_scalar(v);
        char ppath[PATH_LEN];
        cfg_path_key(ppath, sizeof ppath, path, ks ? ks : "?");
        if (!ks || !vs) {
            cfg_error(w, ks ? v : k, ppath, "wrong type; expected a scalar, got %s",
                      yamlx_kind(ks ? v : k));
            ok = false;
            continue;
        }
        for (size_t j = 0; j < pol->n_params; j++) {
            if (!strcmp(pol->params[j].key, ks)) {
                cfg_error(w, k, ppath,
                          "duplicate key (first at line %d); expected each key once, "
                          "got '%s'",
                          pol->params[j].at.line, ks);
                ok = false;
            }
        }
        pol->params[pol->n_params++] =
            (scenario_param){arena_strdup(w->arena, ks), arena_strdup(w->arena, vs), cfg_loc(w, k),
                             cfg_loc(w, v)};
    }
    return ok;
}

static void write_params(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    (void)o;
    const scenario_policy *pol = src;
    char key[64];
    cJSON *m = cJSON_AddObjectToObject(parent, cfg_out_key(f, key, sizeof key));
    for (size_t i = 0; i < pol->n_params; i++) {
        cJSON_AddItemToObject(m, pol->params[i].key, cfg_out_string(pol->params[i].value));
    }
}

static const cfg_field policy_fields[] = {
    CFG_SELF(scenario_policy, at),
    /* checked against the policy registry (model/policy/policy.h) by check_policy */
    {"scheduler", CFG_STRING, .dflt = "fifo", .expect = "a policy name (slicesim policies)",
     .off = offsetof(scenario_policy, scheduler), CFG_LOC(scenario_policy, scheduler_at)},
    {"params", CFG_CUSTOM, .parse = parse_params, .off = 0, .write = write_params},
    {0},
};

/* In SCN_OUT_* bit order. */
static const char *const output_names[SCN_OUT_COUNT + 1] = {
    "run.json", "jobs.csv", "timeseries.csv", "metrics.om", "report.html", NULL};

const char *scenario_output_name(unsigned i)
{
    SIM_ASSERT(i < SCN_OUT_COUNT);
    return output_names[i];
}

/* `files: [run.json, jobs.csv]` -> SCN_OUT_* bits. */
static bool parse_files(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                        void *dst)
{
    (void)f;
    static const cfg_field item = {"files", CFG_ENUM, .names = output_names};
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    if (node->type != YAML_SEQUENCE_NODE) {
        cfg_error(w, node, path, "wrong type; expected a sequence of output file names, got %s",
                  yamlx_kind(node));
        return false;
    }
    unsigned bits = 0;
    bool ok = true;
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    for (size_t i = 0; i < n; i++) {
        char ipath[PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        int which = 0;
        yaml_node_t *it = yamlx_node(w->doc, node->data.sequence.items.start[i]);
        if (cfg_walk_field(w, it, ipath, &item, &which)) {
            bits |= 1u << which;
        } else {
            ok = false;
        }
    }
    *(unsigned *)dst = bits;
    return ok;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* n decimal digits at *p (advanced); -1 when they are not all digits. */
static int64_t digits(const char **p, int n)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9') {
            return -1;
        }
        v = v * 10 + (**p - '0');
    }
    return v;
}

/* RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), year 1970..9999, not
 * before 1970-01-01T00:00:00Z) -> Unix time in ns; false when it is not one. */
static bool rfc3339_ns(const char *s, int64_t *out)
{
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *p = s;
    int64_t y = digits(&p, 4), mo = -1, d = -1, h = -1, mi = -1, se = -1, frac_ns = 0;
    if (y >= 0 && *p++ == '-' && (mo = digits(&p, 2)) >= 0 && *p++ == '-' &&
        (d = digits(&p, 2)) >= 0 && (*p == 'T' || *p == 't') && (p++, true) &&
        (h = digits(&p, 2)) >= 0 && *p++ == ':' && (mi = digits(&p, 2)) >= 0 && *p++ == ':') {
        se = digits(&p, 2);
    }
    if (se < 0 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 ||
        se > 59 || (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))) {
        return false;
    }
    if (*p == '.') {
        p++;
        int n = 0;
        for (int64_t scale = 100000000; *p >= '0' && *p <= '9'; p++, n++, scale /= 10) {
            frac_ns += (*p - '0') * scale;
        }
        if (n == 0) {
            return false;
        }
    }
    int64_t off_s = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int64_t oh = digits(&p, 2), om = -1;
        if (oh < 0 || oh > 23 || *p++ != ':' || (om = digits(&p, 2)) < 0 || om > 59) {
            return false;
        }
        off_s = sign * (oh * 3600 + om * 60);
    } else {
        return false;
    }
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off_s;
    if (*p != '\0' || secs < 0 || y < 1970) {
        return false;
    }
    *out = secs * 1000000000 + frac_ns;
    return true;
}

/* `start_time: 2026-11-28T00:00:00Z` -> Unix time in ns. */
static bool parse_start_time(cfg_walker *w, yaml_node_t *node, const char *path,
                             const cfg_field *f, void *dst)
{
    (void)f;
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    const char *v = node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
    if (!v || !rfc3339_ns(v, (int64_t *)dst)) {
        cfg_error(w, node, path,
                  "not an RFC 3339 date-time; expected a UTC or offset time from 1970 like "
                  "2026-11-28T09:00:00Z or 2026-11-28T10:00:00+01:00, got '%s'",
                  v ? v : yamlx_kind(node));
        return false;
    }
    return true;
}

/* [name, ...] in SCN_OUT_* order */
static void write_files(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    (void)o;
    unsigned bits = *(const unsigned *)src;
    char key[64];
    cJSON *a = cJSON_AddArrayToObject(parent, cfg_out_key(f, key, sizeof key));
    for (unsigned b = 0; b < SCN_OUT_COUNT; b++) {
        if (bits & (1u << b)) {
            cJSON_AddItemToArray(a, cJSON_CreateString(output_names[b]));
        }
    }
}

/* Unix seconds; left out when 0 (absent: simulated time 0 is the Unix epoch). */
static void write_start_time(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    int64_t ns = *(const int64_t *)src;
    char key[64];
    if (ns != 0) {
        cJSON_AddItemToObject(parent, cfg_out_key(f, key, sizeof key),
                              o->number(sim_time_to_s(ns)));
    }
}

static const cfg_field outputs_fields[] = {
    CFG_SELF(scenario_outputs, at),
    {"dir", CFG_STRING, .off = offsetof(scenario_outputs, dir), CFG_LOC(scenario_outputs, dir_at)},
    {"files", CFG_CUSTOM, .parse = parse_files, .off = offsetof(scenario_outputs, files),
     CFG_LOC(scenario_outputs, files_at), .write = write_files},
    {"sample_interval", CFG_DURATION, CFG_ABOVE(0), .dflt = "1m",
     .off = offsetof(scenario_outputs, sample_interval_ns),
     CFG_LOC(scenario_outputs, sample_interval_at)},
    {"start_time", CFG_CUSTOM, .parse = parse_start_time,
     .off = offsetof(scenario_outputs, start_unix_ns), CFG_LOC(scenario_outputs, start_time_at),
     .out_key = "start_unix_s", .write = write_start_time},
    {0},
};

static const cfg_field limits_fields[] = {
    CFG_SELF(scenario_limits, at),
    {"jobs", CFG_U64, CFG_MIN(1), .dflt = "10000000", .off = offsetof(scenario_limits, jobs)},
    {"timeseries_rows", CFG_U64, CFG_MIN(1), .dflt = "10000000",
     .off = offsetof(scenario_limits, timeseries_rows)},
    {"output", CFG_BYTES, CFG_MIN(1), .dflt = "8GiB",
     .off = offsetof(scenario_limits, output_bytes)},
    {"memory", CFG_BYTES, CFG_MIN(1), .dflt = "16GiB",
     .off = offsetof(scenario_limits, memory_bytes)},
    {"events", CFG_U64, CFG_MIN(1), .dflt = "1000000000", .off = offsetof(scenario_limits, events)},
    {0},
};

/* ---- calibration (slicesim fit models) ----------------------------------------------------- */

/* One item as written: `FILE` or `{file: FILE, gpu: NAME}`. */
typedef struct raw_calibration {
    const char *file, *gpu;
    src_loc at, file_at, gpu_at;
} raw_calibration;

static const cfg_field calibration_fields[] = {
    CFG_SELF(raw_calibration, at),
    {"file", CFG_STRING, .required = true, .expect = "a model file (slicesim fit output)",
     .off = offsetof(raw_calibration, file), CFG_LOC(raw_calibration, file_at)},
    {"gpu", CFG_STRING, .expect = "a catalog GPU type", .off = offsetof(raw_calibration, gpu),
     CFG_LOC(raw_calibration, gpu_at)},
    {0},
};

/* Resolve and load one calibration item (node: a scalar or a mapping) into *out. */
static bool parse_one_calibration(cfg_walker *w, yaml_node_t *node, const char *path,
                                  scenario_calibration *out)
{
    load_ctx *c = w->user;
    raw_calibration raw = {0};
    char fpath[PATH_LEN];
    if (node->type == YAML_MAPPING_NODE) {
        if (!cfg_walk_map(w, node, path, calibration_fields, &raw)) {
            return false;
        }
        cfg_path_key(fpath, sizeof fpath, path, "file");
    } else {
        static const cfg_field item = {"calibration", CFG_STRING,
                                       .expect = "a model file (slicesim fit output) or "
                                                 "{file, gpu}"};
        if (!cfg_walk_field(w, node, path, &item, &raw.file)) {
            return false;
        }
        raw.at = raw.file_at = cfg_loc(w, node);
        snprintf(fpath, sizeof fpath, "%s", path);
    }
    *out = (scenario_calibration){.path = arena_strdup(c->a, path),
                                  .file = resolve(c, raw.file),
                                  .gpu = raw.gpu,
                                  .at = raw.at,
                                  .file_at = raw.file_at,
                                  .gpu_at = raw.gpu_at};
    scenario__add_ref(c, out->file, "calibration model", raw.file_at);
    if (c->flags & SCENARIO_NO_FILES) {
        return true;
    }
    cal_fit *fit = arena_calloc(c->a, 1, sizeof *fit);
    calapply_source *src = arena_calloc(c->a, 1, sizeof *src);
    int rc = calmodel_load_source(out->file, fit, src, c->d);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        diag_error(c->d, raw.file_at, fpath,
                   "cannot read '%s' (%s); expected a readable calibration model (slicesim fit "
                   "output), got '%s'",
                   out->file, strerror(errno), raw.file);
        return false;
    }
    if (rc) {
        /* reported in the model file at its position; say which reference it was */
        diag_error(c->d, raw.file_at, fpath,
                   "not a usable calibration model (see the errors in it); expected `slicesim "
                   "fit` output (schema slicesim-calmodel), got '%s'",
                   raw.file);
        return false;
    }
    out->fit = fit;
    out->src = src;
    return true;
}

/* `calibration:` FILE, {file, gpu}, or a sequence of them. */
static bool parse_calibration(cfg_walker *w, yaml_node_t *node, const char *path,
                              const cfg_field *f, void *dst)
{
    (void)f;
    (void)dst;
    load_ctx *c = w->user;
    scenario_spec *s = c->spec;
    if (node->type != YAML_SEQUENCE_NODE) {
        s->calibrations = arena_calloc(c->a, 1, sizeof *s->calibrations);
        bool ok = parse_one_calibration(w, node, path, &s->calibrations[0]);
        s->n_calibrations = ok ? 1 : 0;
        return ok;
    }
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    if (n == 0) {
        cfg_error(w, node, path, "empty sequence; expected at least one model file, got []");
        return false;
    }
    s->calibrations = arena_calloc(c->a, n, sizeof *s->calibrations);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        char ipath[PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        yaml_node_t *it = yamlx_node(w->doc, node->data.sequence.items.start[i]);
        if (parse_one_calibration(w, it, ipath, &s->calibrations[s->n_calibrations])) {
            s->n_calibrations++;
        } else {
            ok = false;
        }
    }
    return ok;
}

/* [{file, gpu, and the model's node identity: device, uuid, driver, date_utc, measurements}] */
static void write_calibration(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    (void)o;
    const scenario_spec *s = src;
    char key[64];
    cJSON *a = cJSON_AddArrayToObject(parent, cfg_out_key(f, key, sizeof key));
    for (size_t i = 0; i < s->n_calibrations; i++) {
        const scenario_calibration *c = &s->calibrations[i];
        cJSON *cj = cJSON_CreateObject();
        cJSON_AddItemToObject(cj, "file", cfg_out_string(c->file));
        /* the type it applies to; under SCENARIO_NO_FILES (no model read) the one given */
        cJSON_AddItemToObject(cj, "gpu", cfg_out_string(c->gpu_type ? c->gpu_type : c->gpu));
        cJSON_AddItemToObject(cj, "device", cfg_out_string(c->src ? c->src->device : NULL));
        cJSON_AddItemToObject(cj, "uuid", cfg_out_string(c->src ? c->src->uuid : NULL));
        cJSON_AddItemToObject(cj, "driver", cfg_out_string(c->src ? c->src->driver : NULL));
        cJSON_AddItemToObject(cj, "date_utc", cfg_out_string(c->src ? c->src->date_utc : NULL));
        cJSON_AddItemToObject(cj, "measurements", cfg_out_string(c->src ? c->src->file : NULL));
        cJSON_AddItemToArray(a, cj);
    }
}

/* ---- top level ----------------------------------------------------------------------------- */

/* `sweep:` and `plan:` are read by their own loaders (experiments/sweep.h, experiments/plan.h),
 * which walk them with their own schemas; a run of the scenario itself only requires a mapping.
 * Their nodes are not visited here: a sweep's values become the scenario's own nodes at a point
 * (yamlx_set_node), and are walked there. */
static bool parse_sweep(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                        void *dst)
{
    (void)f;
    (void)path;
    sweep_spec *s = NULL;
    bool ok = sweep_walk(w, node, &s) == 0;
    *(const sweep_spec **)dst = s;
    return ok;
}

static bool parse_plan(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                       void *dst)
{
    (void)f;
    (void)path;
    plan_spec *p = NULL;
    bool ok = plan_walk(w, node, &p) == 0;
    *(const plan_spec **)dst = p;
    return ok;
}

const cfg_field scenario_schema[] = {
    CFG_SELF(scenario_spec, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(scenario_spec, name),
     CFG_LOC(scenario_spec, name_at)},
    {"description", CFG_STRING, .off = offsetof(scenario_spec, description)},
    {"seed", CFG_U64, .required = true, .off = offsetof(scenario_spec, seed),
     CFG_LOC(scenario_spec, seed_at)},
    {"horizon", CFG_DURATION, .required = true, CFG_ABOVE(0), CFG_MAX(100.0 * 365 * 86400),
     .off = offsetof(scenario_spec, horizon_ns), CFG_LOC(scenario_spec, horizon_at)},
    {"cluster", CFG_MAP, .required = true, .sub = cluster_fields,
     .off = offsetof(scenario_spec, cluster)},
    {"workload", CFG_MAP, .required = true, .sub = workload_fields,
     .off = offsetof(scenario_spec, workload)},
    {"policy", CFG_MAP, .sub = policy_fields, .off = offsetof(scenario_spec, policy)},
    {"outputs", CFG_MAP, .sub = outputs_fields, .off = offsetof(scenario_spec, outputs)},
    {"limits", CFG_MAP, .sub = limits_fields, .off = offsetof(scenario_spec, limits)},
    {"calibration", CFG_CUSTOM, .parse = parse_calibration, .off = 0, .write = write_calibration},
    {"faults", CFG_MAP, .sub = scenario_faults_fields, .off = offsetof(scenario_spec, faults),
     .out = CFG_OUT_IF_SET},
    {"services", CFG_SEQ, CFG_MIN(1), CFG_MAX(1000),
     CFG_SEQ_OF(scenario_spec, services, n_services, scenario_service, scenario_service_fields),
     .out = CFG_OUT_IF_SET},
    /* sweep and plan describe runs of many scenarios, not this one (a point's values are in its
     * own config; point_info.json names the point) */
    {"sweep", CFG_CUSTOM, .parse = parse_sweep, .off = offsetof(scenario_spec, sweep),
     .out = CFG_OUT_HIDDEN},
    {"plan", CFG_CUSTOM, .parse = parse_plan, .off = offsetof(scenario_spec, plan),
     .out = CFG_OUT_HIDDEN},
    {"repartition", CFG_MAP, .sub = scenario_repartition_fields,
     .off = offsetof(scenario_spec, repartition), .out = CFG_OUT_IF_SET},
    {0},
};

cJSON *scenario_config_json(const scenario_spec *s, const cfg_out *o)
{
    return cfg_write_map(o, scenario_schema, s);
}

/* ---- checks across fields ------------------------------------------------------------------ */

static void check_arrivals(load_ctx *c, const scenario_job_class *j, const char *jpath)
{
    char p[PATH_LEN];
    if (j->arrival == SCN_ARRIVAL_POISSON) {
        if (!cfg_present(j->rate_at)) {
            cfg_path_key(p, sizeof p, jpath, "rate");
            diag_error(c->d, j->at, p,
                       "missing required field; expected a rate like 2/h for "
                       "arrival poisson, got nothing");
        }
        if (cfg_present(j->interval_at)) {
            cfg_path_key(p, sizeof p, jpath, "interval");
            diag_error(c->d, j->interval_at, p,
                       "not used by arrival poisson; expected rate, got "
                       "interval");
        }
    } else {
        if (!cfg_present(j->interval_at)) {
            cfg_path_key(p, sizeof p, jpath, "interval");
            diag_error(c->d, j->at, p,
                       "missing required field; expected a duration like 90s for "
                       "arrival fixed, got nothing");
        }
        if (cfg_present(j->rate_at)) {
            cfg_path_key(p, sizeof p, jpath, "rate");
            diag_error(c->d, j->rate_at, p,
                       "not used by arrival fixed; expected interval, got "
                       "rate");
        }
    }
}

/* A job's work: exactly one of duration and samples; samples needs a profile. */
static void check_work(load_ctx *c, const scenario_job_class *j, const char *jpath)
{
    char p[PATH_LEN];
    if (!cfg_present(j->duration_at) && !cfg_present(j->samples_at)) {
        cfg_path_key(p, sizeof p, jpath, "duration");
        diag_error(c->d, j->at, p,
                   "missing required field; expected %s (or samples with a profile), got nothing",
                   DURATION_EXPECT);
    } else if (cfg_present(j->duration_at) && cfg_present(j->samples_at)) {
        cfg_path_key(p, sizeof p, jpath, "samples");
        diag_error(c->d, j->samples_at, p,
                   "conflicts with duration; expected one of duration and samples, got both");
    } else if (cfg_present(j->samples_at) && !cfg_present(j->profile_at)) {
        cfg_path_key(p, sizeof p, jpath, "samples");
        diag_error(c->d, j->samples_at, p,
                   "needs a profile to turn samples into time; expected profile, got none");
    }
}

/* Names of node groups, and of job classes, must be unique. */
static void check_unique(load_ctx *c, const char *what, const char *seq_path, size_t n,
                         const char *(*name_of)(const scenario_spec *, size_t),
                         src_loc (*at_of)(const scenario_spec *, size_t))
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i && name_of(c->spec, i); j++) {
            if (name_of(c->spec, j) && !strcmp(name_of(c->spec, i), name_of(c->spec, j))) {
                char p[PATH_LEN];
                snprintf(p, sizeof p, "%s[%zu].name", seq_path, i);
                diag_error(c->d, at_of(c->spec, i), p,
                           "duplicate %s name (first at line %d); "
                           "expected unique names, got '%s'",
                           what, at_of(c->spec, j).line, name_of(c->spec, i));
                break;
            }
        }
    }
}

static const char *group_name(const scenario_spec *s, size_t i)
{
    return s->cluster.groups[i].name;
}
static src_loc group_at(const scenario_spec *s, size_t i)
{
    return s->cluster.groups[i].at;
}
static const char *job_name(const scenario_spec *s, size_t i)
{
    return s->workload.jobs[i].name;
}
static src_loc job_at(const scenario_spec *s, size_t i)
{
    return s->workload.jobs[i].at;
}
static const char *service_name(const scenario_spec *s, size_t i)
{
    return s->services[i].name;
}
static src_loc service_at(const scenario_spec *s, size_t i)
{
    return s->services[i].at;
}

/* Services and job classes are counted by name (jobs.csv's class, run.json's per-class figures,
 * a service's replicas are pods of its class): two services of one name, or a service named like
 * a job class, would merge their statistics. */
static void check_service_names(load_ctx *c)
{
    const scenario_spec *s = c->spec;
    check_unique(c, "service", "services", s->n_services, service_name, service_at);
    for (size_t i = 0; i < s->n_services; i++) {
        for (size_t j = 0; j < s->workload.n_jobs && s->services[i].name; j++) {
            if (s->workload.jobs[j].name && !strcmp(s->services[i].name, s->workload.jobs[j].name)) {
                char p[PATH_LEN];
                snprintf(p, sizeof p, "services[%zu].name", i);
                diag_error(c->d, s->services[i].at, p,
                           "the name of job class workload.jobs[%zu] (line %d); expected a name no "
                           "job class has (their statistics are kept by name), got '%s'",
                           j, s->workload.jobs[j].at.line, s->services[i].name);
                break;
            }
        }
    }
}

/* A scenario is a sweep or a plan, not both (a plan's candidates are its own axes: a sweep:
 * beside it would be silently ignored); a plan's service SLOs need services. */
static void check_sweep_plan(load_ctx *c)
{
    const scenario_spec *s = c->spec;
    if (s->sweep && s->plan) {
        diag_error(c->d, s->sweep->at, "sweep",
                   "a sweep beside plan: (line %d); expected one of sweep: or plan: (a plan's "
                   "candidates are its plan.axes, with plan.replications), got both",
                   s->plan->at.line);
    }
    for (size_t k = 0; s->plan && k < s->plan->n_slos; k++) {
        const plan_slo *slo = &s->plan->slos[k];
        if (s->n_services == 0 && !strncmp(slo->figure, "service_", 8)) {
            char path[64];
            snprintf(path, sizeof path, "plan.slo.%s", slo->key);
            diag_error(c->d, slo->at, path,
                       "the scenario has no services; expected an SLO on its jobs (wait_mean, "
                       "wait_p95, jct_mean, jct_p95, slowdown_mean, failed), got '%s'",
                       slo->key);
        }
    }
}

/* Is `base` (an un-renamed resource) replicated by the rules of sh? */
static bool rule_covers(const scenario_sharing *sh, const char *base, size_t n)
{
    for (size_t i = 0; i < sh->n_rules; i++) {
        const char *r = sh->rules[i].resource;
        if (!r || (strlen(r) == n && !strncmp(r, base, n))) {
            return true;
        }
    }
    return false;
}

/* Does node group g advertise resource r (device-plugin naming, model/cluster/cluster.h)? */
static bool group_offers(const scenario_node_group *g, const char *r)
{
    const scenario_sharing *sh = &g->sharing;
    if (sh->mode != SCN_SHARE_EXCLUSIVE && sh->n_rules == 0) {
        return true; /* rules of a device-plugin file not read (SCENARIO_NO_FILES): unknown */
    }
    size_t n = strlen(r);
    size_t sl = strlen(".shared");
    bool shared = n > sl && !strcmp(r + n - sl, ".shared");
    size_t base = shared ? n - sl : n;
    bool renamed =
        sh->mode != SCN_SHARE_EXCLUSIVE && sh->rename_by_default && rule_covers(sh, r, base);
    if (shared != renamed) {
        return false;
    }
    bool is_mig_res = !strncmp(r, "nvidia.com/mig-", strlen("nvidia.com/mig-"));
    if (sh->is_mig && sh->mig.strategy == SCN_MIG_MIXED) {
        return is_mig_res;
    }
    return !is_mig_res;
}

static void check_requests(load_ctx *c)
{
    const scenario_spec *s = c->spec;
    for (size_t i = 0; i < s->workload.n_jobs; i++) {
        const scenario_request *rq = &s->workload.jobs[i].request;
        if (!rq->resource || !strcmp(rq->resource, JOB_RES_MIG_ANY)) {
            continue; /* checked by scenario_check_any_slice */
        }
        bool offered = false;
        for (size_t g = 0; g < s->cluster.n_groups && !offered; g++) {
            offered = group_offers(&s->cluster.groups[g], rq->resource) ||
                      scenario_group_reconfigurable(s, g); /* any layout, or a whole GPU */
        }
        if (!offered) {
            char p[PATH_LEN];
            snprintf(p, sizeof p, "workload.jobs[%zu].request", i);
            diag_error(c->d, rq->at, p,
                       "no node group advertises this resource; expected a "
                       "resource of the cluster's sharing settings, got '%s'",
                       rq->resource);
        }
    }
}

/* The scheduler must be registered, and must accept the parameters given to it. */
static void check_policy(load_ctx *c)
{
    const scenario_policy *pol = &c->spec->policy;
    if (!pol->scheduler) {
        return;
    }
    const policy_ops *ops = pol_find(pol->scheduler);
    if (!ops) {
        char names[TEXT_LEN];
        diag_error(c->d, pol->scheduler_at, "policy.scheduler",
                   "unknown scheduler; expected one "
                   "of [%s], got '%s'",
                   pol_names(names, sizeof names), pol->scheduler);
        return;
    }
    /* Priorities act only through the scheduling cycle (policy_ops.pick: queue order and
     * preemption); a scheduler without it would silently ignore them. */
    if (!ops->pick) {
        for (size_t i = 0; i < c->spec->workload.n_jobs; i++) {
            const scenario_job_class *jc = &c->spec->workload.jobs[i];
            if (jc->priority != 0) {
                char p[PATH_LEN];
                snprintf(p, sizeof p, "workload.jobs[%zu].priority", i);
                diag_error(c->d, jc->priority_at, p,
                           "the %s scheduler ignores priorities; expected 0 or a scheduler "
                           "that orders and preempts by priority (e.g. k8s, binpack), got %d",
                           ops->name, jc->priority);
            }
        }
    }
    pol_param *items =
        pol->n_params ? xcalloc(pol->n_params, sizeof *items, "policy params") : NULL;
    for (size_t i = 0; i < pol->n_params; i++) {
        items[i] = (pol_param){pol->params[i].key, pol->params[i].value, pol->params[i].at,
                               pol->params[i].value_at};
    }
    param_set ps = {pol->n_params, items, "policy.params", pol->at};
    void *state = xcalloc(1, ops->state_size ? ops->state_size : 1, "policy state");
    int rc = ops->init(state, &ps, c->d);
    if (rc == 0 && ops->fini) {
        ops->fini(state);
    }
    free(state);
    free(items);
}

/* MPS replicas are for whole GPUs only (model/cluster/cluster.h). */
static void check_sharing(load_ctx *c)
{
    const scenario_cluster *cl = &c->spec->cluster;
    for (size_t i = 0; i < cl->n_groups; i++) {
        const scenario_sharing *sh = &cl->groups[i].sharing;
        if (sh->is_mig && sh->mode == SCN_SHARE_MPS) {
            char p[PATH_LEN];
            snprintf(p, sizeof p, "cluster.nodes[%zu].sharing.mps", i);
            diag_error(c->d, sh->at, p,
                       "MPS on MIG devices is not modelled; expected timeslice "
                       "with mig, or mps on whole GPUs, got mig and mps");
        }
    }
}

/* The name becomes the default output directory results/NAME: one plain path component. */
static void check_name(load_ctx *c)
{
    const char *n = c->spec->name;
    if (!n) {
        return;
    }
    bool ok = n[0] != '\0' && n[0] != '.';
    for (const char *p = n; *p && ok; p++) {
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '.' || *p == '_' || *p == '-';
    }
    if (!ok) {
        diag_error(c->d, c->spec->name_at, "name",
                   "not a plain name (it names the output directory results/NAME); expected "
                   "letters, digits, '.', '_' and '-', not starting with '.', got '%s'",
                   n);
    }
}

/* Every name of a class's `nodes` constraint is a node group's label, or the GPU type of a
 * group without a label (what a placement matches: model/cluster/world.c gpu_allowed). */
static void check_nodes(load_ctx *c, const scenario_job_class *j, const char *jpath)
{
    const scenario_cluster *cl = &c->spec->cluster;
    for (const char *p = j->nodes; p && *p;) {
        size_t n = strcspn(p, "|");
        bool found = false;
        for (size_t g = 0; g < cl->n_groups && !found; g++) {
            const char *name = cl->groups[g].label ? cl->groups[g].label : cl->groups[g].gpu;
            found = name && strlen(name) == n && !strncmp(name, p, n);
        }
        if (!found && !cfg_present(cl->trace.at)) {
            char path[PATH_LEN];
            cfg_path_key(path, sizeof path, jpath, "nodes");
            diag_error(c->d, j->nodes_at, path,
                       "names no node group; expected the label (or, without one, the GPU type) "
                       "of a group of cluster.nodes, got '%.*s'",
                       (int)n, p);
        }
        p += n + (p[n] == '|');
    }
}

bool scenario_group_named(const scenario_node_group *g, const char *nodes)
{
    const char *name = g->label ? g->label : g->gpu;
    for (const char *p = nodes; p && *p;) {
        size_t n = strcspn(p, "|");
        if (name && strlen(name) == n && !strncmp(name, p, n)) {
            return true;
        }
        p += n + (p[n] == '|');
    }
    return !nodes;
}

/* An absent string of a taint or toleration is the empty one. */
static const char *str0(const char *s)
{
    return s ? s : "";
}

/* The group's labels and taints as model/cluster/taint.h sees them (arrays from the arena). */
void scenario_group_meta(const scenario_node_group *g, arena *a, taint_node *out)
{
    taint_entry *t = arena_calloc(a, g->n_taints ? g->n_taints : 1, sizeof *t);
    for (size_t i = 0; i < g->n_taints; i++) {
        t[i] = (taint_entry){str0(g->taints[i].key), str0(g->taints[i].value),
                             (taint_effect)(g->taints[i].effect + TAINT_NO_SCHEDULE)};
    }
    *out = (taint_node){g->labels.n, g->labels.items, g->n_taints, t};
}

void scenario_class_place(const scenario_job_class *j, arena *a, taint_pod *out)
{
    taint_toleration *t = arena_calloc(a, j->n_tolerations ? j->n_tolerations : 1, sizeof *t);
    for (size_t i = 0; i < j->n_tolerations; i++) {
        const scenario_toleration *x = &j->tolerations[i];
        t[i] = (taint_toleration){str0(x->key), x->op == 1, str0(x->value),
                                  (taint_effect)x->effect};
    }
    *out = (taint_pod){j->node_selector.n, j->node_selector.items, j->n_tolerations, t};
}

/* A class's tolerations are well formed, its node_index fits its one group, and some group of
 * its `nodes` admits it (its nodeSelector and tolerations against the groups' labels and
 * NoSchedule/NoExecute taints): else no job of it could ever start. */
static void check_place(load_ctx *c, const scenario_job_class *j, const char *jpath)
{
    char path[PATH_LEN];
    for (size_t i = 0; i < j->n_tolerations; i++) {
        const scenario_toleration *t = &j->tolerations[i];
        char tp[PATH_LEN];
        cfg_path_key(tp, sizeof tp, jpath, "tolerations");
        cfg_path_index(path, sizeof path, tp, i);
        if (!str0(t->key)[0] && t->op == 0) {
            char kp[PATH_LEN];
            cfg_path_key(kp, sizeof kp, path, "operator");
            diag_error(c->d, t->at, kp,
                       "an empty key tolerates every taint only with operator Exists; expected "
                       "operator: Exists, or a key, got operator Equal");
        } else if (t->op == 1 && str0(t->value)[0]) {
            char vp[PATH_LEN];
            cfg_path_key(vp, sizeof vp, path, "value");
            diag_error(c->d, t->value_at, vp,
                       "a toleration with operator Exists matches any value; expected no value, "
                       "got '%s'",
                       str0(t->value));
        }
    }
    const scenario_cluster *cl = &c->spec->cluster;
    if (j->n_node_index) {
        cfg_path_key(path, sizeof path, jpath, "node_index");
        size_t n_named = 0, gi = 0;
        for (size_t g = 0; g < cl->n_groups; g++) {
            if (j->nodes && scenario_group_named(&cl->groups[g], j->nodes)) {
                n_named++;
                gi = g;
            }
        }
        if (n_named != 1) {
            diag_error(c->d, j->node_index_at, path,
                       "needs the one group its nodes are in; expected `nodes` naming exactly "
                       "one node group, got %zu",
                       n_named);
        } else if (j->count != j->n_node_index) {
            diag_error(c->d, j->node_index_at, path,
                       "one node per job; expected %zu entries (count: %zu), got %zu",
                       (size_t)j->count, (size_t)j->count, j->n_node_index);
        } else {
            for (size_t i = 0; i < j->n_node_index; i++) {
                if (j->node_index[i] >= cl->groups[gi].count) {
                    diag_error(c->d, j->node_index_at, path,
                               "entry %zu is past the group; expected a node index below %u "
                               "(group %s has %u nodes), got %u",
                               i, cl->groups[gi].count, cl->groups[gi].name,
                               cl->groups[gi].count, j->node_index[i]);
                    break;
                }
            }
        }
    }
    if (cfg_present(cl->trace.at) || diag_error_count(c->d) > 0 || j->n_node_index) {
        /* traced groups come later; an error before (a bad taint) would mislead; pinned jobs
         * go to their nodes whatever these say */
        return;
    }
    taint_pod p;
    scenario_class_place(j, c->a, &p);
    for (size_t g = 0; g < cl->n_groups; g++) {
        taint_node m;
        scenario_group_meta(&cl->groups[g], c->a, &m);
        if (scenario_group_named(&cl->groups[g], j->nodes) && taint_admits(&m, &p)) {
            return;
        }
    }
    const char *key = j->node_selector.n ? "node_selector" : "tolerations";
    cfg_path_key(path, sizeof path, jpath, key);
    diag_error(c->d, j->node_selector.n ? j->node_selector.at : j->at, path,
               "no node group admits the class; expected a group%s whose labels match its "
               "node_selector and whose NoSchedule/NoExecute taints its tolerations tolerate, "
               "got none of %zu",
               j->nodes ? " of its nodes" : "", cl->n_groups);
}

static void check_spec(load_ctx *c)
{
    check_name(c);
    check_policy(c);
    check_sharing(c);
    scenario_spec *s = c->spec;
    check_unique(c, "node group", "cluster.nodes", s->cluster.n_groups, group_name, group_at);
    check_unique(c, "job class", "workload.jobs", s->workload.n_jobs, job_name, job_at);
    check_service_names(c);
    check_sweep_plan(c);
    scenario_check_repartition(s, c->d);
    scenario_resolve_repartition(s, c->d);
    scenario_check_any_slice(s, c->d);
    for (size_t i = 0; i < s->workload.n_jobs; i++) {
        char jpath[PATH_LEN];
        snprintf(jpath, sizeof jpath, "workload.jobs[%zu]", i);
        check_arrivals(c, &s->workload.jobs[i], jpath);
        check_work(c, &s->workload.jobs[i], jpath);
        check_nodes(c, &s->workload.jobs[i], jpath);
        check_place(c, &s->workload.jobs[i], jpath);
    }
}

/* ---- validation against the catalog and the mig-parted configs ------------------------------ */

/* A growable set of resource names (borrowed or arena strings). */
typedef struct name_set {
    size_t n, cap;
    const char **names;
} name_set;

static void set_add(name_set *ns, const char *name)
{
    for (size_t i = 0; i < ns->n; i++) {
        if (!strcmp(ns->names[i], name)) {
            return;
        }
    }
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? 2 * ns->cap : 8;
        ns->names = xrealloc(ns->names, ns->cap * sizeof *ns->names, "resource names");
    }
    ns->names[ns->n++] = name;
}

static bool set_has(const name_set *ns, const char *name)
{
    for (size_t i = 0; i < ns->n; i++) {
        if (!strcmp(ns->names[i], name)) {
            return true;
        }
    }
    return false;
}

static const char *set_list(const name_set *ns, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ns->n && used + 1 < n; i++) {
        int k = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", ns->names[i]);
        used += k > 0 ? (size_t)k : 0;
    }
    return buf;
}

/* Record the resource a device advertises: `base` (un-renamed), ".shared" when its replicas are
 * renamed (device plugin renameByDefault, model/cluster/cluster.h). */
static void offer(name_set *ns, const scenario_sharing *sh, const char *base, arena *a)
{
    if (sh->mode != SCN_SHARE_EXCLUSIVE && sh->rename_by_default &&
        rule_covers(sh, base, strlen(base))) {
        size_t n = strlen(base) + strlen(".shared") + 1;
        char *r = arena_alloc(a, n);
        snprintf(r, n, "%s.shared", base);
        set_add(ns, r);
    } else {
        set_add(ns, base);
    }
}

/* Resource of a MIG instance of profile `prof` under the mixed strategy: "+me" is advertised as
 * ".me" (model/cluster/cluster.h). */
static const char *mig_resource(const char *prof, arena *a)
{
    size_t n = strlen("nvidia.com/mig-") + strlen(prof) + 1;
    char *r = arena_alloc(a, n);
    snprintf(r, n, "nvidia.com/mig-%s", prof);
    for (char *q = r; *q; q++) {
        *q = *q == '+' ? '.' : *q;
    }
    return r;
}

/* Apply the group's mig-parted config to each of its GPUs under the scenario's driver; record
 * what they advertise, and each GPU's layout in grp->mig_gpus (left NULL when one fails). */
static void validate_mig(scenario_node_group *grp, size_t gi, const gpu_catalog *cat,
                         const gpu_type *t, uint32_t driver, arena *a, diag *d, name_set *ns)
{
    const scenario_mig *m = &grp->sharing.mig;
    char path[PATH_LEN];
    snprintf(path, sizeof path, "cluster.nodes[%zu].sharing.mig.file", gi);
    migparted_config cfg;
    int rc = migparted_load(m->file, a, &cfg, d);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        diag_error(d, m->file_at, path,
                   "cannot read the file (%s); expected a readable "
                   "mig-parted config, got '%s'",
                   strerror(errno), m->file);
        return;
    }
    if (rc) {
        return;
    }
    snprintf(path, sizeof path, "cluster.nodes[%zu].sharing.mig.config", gi);
    if (!migparted_find(&cfg, m->config)) {
        name_set names = {0};
        for (size_t i = 0; i < cfg.n_configs; i++) {
            set_add(&names, cfg.configs[i].name);
        }
        char list[TEXT_LEN];
        diag_error(d, m->config_at, path, "no such config in '%s'; expected one of [%s], got '%s'",
                   m->file, set_list(&names, list, sizeof list), m->config);
        free(names.names);
        return;
    }
    if (migparted_check_devices(t, &cfg, m->config, (int)grp->gpus_per_node, d) != 0) {
        return;
    }
    scenario_gpu_mig *gm = arena_calloc(a, grp->gpus_per_node, sizeof *gm);
    for (uint32_t i = 0; i < grp->gpus_per_node; i++) {
        migparted_result r;
        if (migparted_apply(cat, t, &cfg, m->config, (int)i, (int)driver, &r, d) != 0) {
            return; /* one report per group: its other GPUs would repeat it */
        }
        gm[i].mig_enabled = r.selected && r.mig_enabled;
        if (gm[i].mig_enabled) {
            gm[i].layout = r.layout;
            mig_layout_sort(&gm[i].layout);
        }
        if (!r.mig_enabled) {
            /* MIG off, or no entry selects the GPU (mig-parted leaves it as it is): whole */
            offer(ns, &grp->sharing, "nvidia.com/gpu", a);
            continue;
        }
        for (int k = 0; k < r.layout.n; k++) {
            const char *prof = t->profiles[r.layout.inst[k].profile].name;
            offer(ns, &grp->sharing,
                  m->strategy == SCN_MIG_SINGLE ? "nvidia.com/gpu" : mig_resource(prof, a), a);
        }
    }
    grp->mig_gpus = gm;
}

/* Every calibration applies to a catalog type its model was measured on (calmodel_apply, which
 * makes the calibrated copy), used by some node group; one calibration per type. */
static void validate_calibrations(scenario_spec *s, const gpu_catalog *cat, const phys_params *m,
                                  arena *a, diag *d)
{
    for (size_t i = 0; i < s->n_calibrations; i++) {
        scenario_calibration *cal = &s->calibrations[i];
        if (!cal->fit) {
            continue;
        }
        char file_path[PATH_LEN], gpu_path[PATH_LEN];
        bool is_map = cal->at.line != cal->file_at.line || cal->at.col != cal->file_at.col;
        if (is_map) {
            cfg_path_key(file_path, sizeof file_path, cal->path, "file");
        } else {
            snprintf(file_path, sizeof file_path, "%s", cal->path);
        }
        cfg_path_key(gpu_path, sizeof gpu_path, cal->path, "gpu");
        calmodel_site site = {.gpu = cal->gpu,
                              .file_at = cal->file_at,
                              .file_path = file_path,
                              .gpu_at = cal->gpu_at,
                              .gpu_path = gpu_path};
        gpu_type *t = arena_calloc(a, 1, sizeof *t);
        if (calmodel_apply(cal->fit, cal->src, &site, cat, m, d, t) != 0) {
            continue;
        }
        const gpu_type *g = gpu_catalog_find(cat, t->name);
        src_loc at = cal->gpu ? cal->gpu_at : cal->file_at;
        const char *path = cal->gpu ? gpu_path : file_path;
        bool used = false;
        for (size_t gi = 0; gi < s->cluster.n_groups && !used; gi++) {
            used = s->cluster.groups[gi].gpu && gpu_catalog_find(cat, s->cluster.groups[gi].gpu) == g;
        }
        if (!used) {
            diag_error(d, at, path,
                       "no node group has GPU type %s; expected a calibration of a GPU type of "
                       "the cluster, got '%s'",
                       g->name, cal->gpu ? cal->gpu : cal->src->device);
            continue;
        }
        for (size_t j = 0; j < i; j++) {
            const gpu_type *first = s->calibrations[j].calibrated;
            if (first && !strcmp(first->name, g->name)) {
                diag_error(d, at, path,
                           "second calibration of %s (first at line %d); expected one per GPU "
                           "type, got '%s'",
                           g->name, s->calibrations[j].at.line, cal->file);
                break;
            }
        }
        cal->calibrated = t;
        cal->gpu_type = t->name;
    }
}

int scenario_validate(scenario_spec *s, const gpu_catalog *cat, const phys_params *m, arena *a,
                      diag *d)
{
    int before = diag_error_count(d);
    name_set offered = {0};
    for (size_t gi = 0; gi < s->cluster.n_groups; gi++) {
        scenario_node_group *grp = &s->cluster.groups[gi];
        if (grp->gpus_per_node == 0) {
            continue; /* a traced CPU-only group: no GPU, nothing advertised */
        }
        const gpu_type *t = gpu_catalog_find(cat, grp->gpu);
        if (!t && grp->trace_model) {
            char list[TEXT_LEN];
            diag_error(d, grp->gpu_at, "cluster.trace.gpu_map",
                       "no catalog GPU type for the trace's model; expected a gpu_map entry like "
                       "{%s: A100-SXM4-40GB} naming one of [%s], got '%s'",
                       grp->trace_model, gpu_catalog_names(cat, list, sizeof list), grp->gpu);
            continue;
        }
        if (!t) {
            char list[TEXT_LEN], path[PATH_LEN];
            snprintf(path, sizeof path, "cluster.nodes[%zu].gpu", gi);
            diag_error(d, grp->gpu_at, path, "unknown GPU type; expected one of [%s], got '%s'",
                       gpu_catalog_names(cat, list, sizeof list), grp->gpu);
            continue;
        }
        if (grp->sharing.is_mig) {
            validate_mig(grp, gi, cat, t, s->cluster.driver, a, d, &offered);
        }
        if (grp->sharing.is_mig && scenario_group_reconfigurable(s, gi)) {
            /* a re-partitioned GPU may offer any classic profile, or be a whole GPU */
            offer(&offered, &grp->sharing, "nvidia.com/gpu", a);
            if (cfg_present(s->repartition.timeslice.at)) { /* or time-sliced, renamed */
                offer(&offered, &grp->sharing, "nvidia.com/gpu.shared", a);
            }
            for (int p = 0; p < t->n_profiles; p++) {
                if (mig_profile_is_classic(&t->profiles[p])) {
                    offer(&offered, &grp->sharing, mig_resource(t->profiles[p].name, a), a);
                }
            }
        } else if (!grp->sharing.is_mig) {
            offer(&offered, &grp->sharing, "nvidia.com/gpu", a);
        }
    }
    validate_calibrations(s, cat, m, a, d);
    /* a request is matched only against a cluster without errors (else the list is partial) */
    for (size_t i = 0; i < s->workload.n_jobs && diag_error_count(d) == before; i++) {
        const scenario_request *rq = &s->workload.jobs[i].request;
        if (strcmp(rq->resource, JOB_RES_MIG_ANY) != 0 && !set_has(&offered, rq->resource)) {
            char list[TEXT_LEN], path[PATH_LEN];
            snprintf(path, sizeof path, "workload.jobs[%zu].request", i);
            diag_error(d, rq->at, path,
                       "no node group advertises this resource; expected one of "
                       "[%s], got '%s'",
                       set_list(&offered, list, sizeof list), rq->resource);
        }
    }
    const scenario_trace *tr = &s->workload.trace;
    if (cfg_present(tr->at) && tr->traced_gpu && !gpu_catalog_find(cat, tr->traced_gpu)) {
        char list[TEXT_LEN];
        diag_error(d, tr->traced_gpu_at, "workload.trace.traced_gpu",
                   "unknown GPU type; expected one of [%s], got '%s'",
                   gpu_catalog_names(cat, list, sizeof list), tr->traced_gpu);
    }
    for (size_t i = 0; cfg_present(tr->at) && i <= tr->n_rules && diag_error_count(d) == before;
         i++) {
        const char *res = i < tr->n_rules ? tr->rules[i].resource : tr->resource;
        src_loc at = i < tr->n_rules ? tr->rules[i].resource_at : tr->resource_at;
        if (res && strcmp(res, JOB_RES_MIG_ANY) != 0 && !set_has(&offered, res)) {
            char list[TEXT_LEN], path[PATH_LEN];
            if (i < tr->n_rules) {
                snprintf(path, sizeof path, "workload.trace.map[%zu].request", i);
            } else {
                snprintf(path, sizeof path, "workload.trace.request");
            }
            diag_error(d, cfg_present(at) ? at : tr->at, path,
                       "no node group advertises this resource; expected one of [%s], got '%s'",
                       set_list(&offered, list, sizeof list), res);
        }
    }
    free(offered.names);
    return diag_error_count(d) == before ? 0 : SIM_EINPUT;
}

void scenario_catalog(const scenario_spec *s, const gpu_catalog *cat, arena *a, gpu_catalog *out)
{
    gpu_type *types = arena_calloc(a, s->n_calibrations ? s->n_calibrations : 1, sizeof *types);
    size_t n = 0;
    for (size_t i = 0; i < s->n_calibrations; i++) {
        if (s->calibrations[i].calibrated) {
            types[n++] = *s->calibrations[i].calibrated;
        }
    }
    gpu_catalog_with(cat, types, n, a, out);
}

/* ---- loading ------------------------------------------------------------------------------- */

static const char *dir_of(arena *a, const char *name)
{
    const char *slash = strrchr(name, '/');
    if (!slash) {
        return arena_strdup(a, ".");
    }
    if (slash == name) {
        return arena_strdup(a, "/");
    }
    return arena_strndup(a, name, (size_t)(slash - name));
}

static int load_doc(yamlx_doc *doc, const char *dir, const char *const *sets, size_t n_sets,
                    const scenario_edit *edit, unsigned flags, arena *a, diag *d,
                    scenario_spec **out)
{
    int before = diag_error_count(d);
    for (size_t i = 0; i < n_sets; i++) {
        yamlx_set(doc, sets[i], d);
    }
    if (edit && edit->fn) {
        edit->fn(edit->ctx, doc, d);
    }
    scenario_spec *s = arena_alloc(a, sizeof *s);
    s->file = yamlx_name(doc);
    s->dir = dir ? arena_strdup(a, dir) : dir_of(a, s->file);
    load_ctx c = {.spec = s, .flags = flags, .d = d, .a = a};
    cfg_walker w;
    cfg_walker_init(&w, doc, a, d, &c);
    cfg_walk_root(&w, scenario_schema, s);
    cfg_walker_fini(&w);
    /* Cross-checks run after a failed walk too (every error at once); they skip what the walk
     * left unset. Requests are matched against the cluster only when everything else is sound:
     * after an error the cluster may be incomplete and a mismatch would be noise. */
    scenario__check_traces(&c);
    scenario__add_snapshot(&c);
    check_spec(&c);
    if (diag_error_count(d) == before) {
        if (flags & SCENARIO_NO_FILES) {
            check_requests(&c);
        } else {
            resolve_scenario(s, a, d); /* validated against the embedded data, resolved */
        }
    }
    if (!s->outputs.dir) {
        size_t n = strlen("results/") + (s->name ? strlen(s->name) : 0) + 1;
        char *dirbuf = arena_alloc(a, n);
        snprintf(dirbuf, n, "results/%s", s->name ? s->name : "");
        s->outputs.dir = dirbuf;
    }
    if (!cfg_present(s->outputs.files_at)) {
        s->outputs.files = SCN_OUT_ALL;
    }
    s->n_refs = c.n_refs;
    s->refs = c.n_refs ? arena_calloc(a, c.n_refs, sizeof *s->refs) : NULL;
    if (c.n_refs) {
        memcpy(s->refs, c.refs, c.n_refs * sizeof *s->refs);
    }
    free(c.refs);
    if (diag_error_count(d) != before) {
        return SIM_EINPUT;
    }
    *out = s;
    return 0;
}

int scenario_load_buffer_edit(const char *name, const char *dir, const void *buf, size_t len,
                              const char *const *sets, size_t n_sets, const scenario_edit *edit,
                              unsigned flags, arena *a, diag *d, scenario_spec **out)
{
    *out = NULL;
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_buffer(name, buf, len, a, d, &doc);
    if (rc) {
        return rc;
    }
    rc = load_doc(doc, dir, sets, n_sets, edit, flags, a, d, out);
    yamlx_destroy(doc);
    return rc;
}

int scenario_load_buffer(const char *name, const char *dir, const void *buf, size_t len,
                         const char *const *sets, size_t n_sets, unsigned flags, arena *a, diag *d,
                         scenario_spec **out)
{
    return scenario_load_buffer_edit(name, dir, buf, len, sets, n_sets, NULL, flags, a, d, out);
}

int scenario_load_file_edit(const char *path, const char *const *sets, size_t n_sets,
                            const scenario_edit *edit, unsigned flags, arena *a, diag *d,
                            scenario_spec **out)
{
    *out = NULL;
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_file(path, a, d, &doc);
    if (rc) {
        return rc;
    }
    rc = load_doc(doc, NULL, sets, n_sets, edit, flags, a, d, out);
    yamlx_destroy(doc);
    return rc;
}

int scenario_load_file(const char *path, const char *const *sets, size_t n_sets, unsigned flags,
                       arena *a, diag *d, scenario_spec **out)
{
    return scenario_load_file_edit(path, sets, n_sets, NULL, flags, a, d, out);
}

uint64_t scenario_node_count(const scenario_spec *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->cluster.n_groups; i++) {
        n += s->cluster.groups[i].count;
    }
    return n;
}

uint64_t scenario_gpu_count(const scenario_spec *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->cluster.n_groups; i++) {
        n += (uint64_t)s->cluster.groups[i].count * s->cluster.groups[i].gpus_per_node;
    }
    return n;
}
