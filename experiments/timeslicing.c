/* experiments/timeslicing.c - device-plugin config loader (see timeslicing.h). */
#include "experiments/timeslicing.h"

#include <stdio.h>
#include <string.h>

#include "experiments/cfg.h"
#include "experiments/configmap.h"
#include "experiments/yamlx.h"
#include "sim/err.h"

/* ---- flags: checked, then dropped (they do not change what slicesim models) ---- */

typedef struct raw_plugin {
    bool pass_device_specs;
    const char *id_strategy, *cdi_prefix, *ctk_path, *container_root;
} raw_plugin;

typedef struct raw_gfd {
    bool oneshot, no_timestamp;
    double sleep_s;
    const char *output_file, *machine_type_file;
} raw_gfd;

typedef struct raw_flags {
    int mig_strategy;
    src_loc mig_loc;
    bool fail_on_init, restart_unhealthy, gds, mofed;
    const char *driver_root, *dev_root;
    raw_plugin plugin;
    raw_gfd gfd;
} raw_flags;

static const char *const list_strategies[] = {"envvar", "volume-mounts", "cdi-annotations",
                                              "cdi-cri", NULL};

static bool one_list_strategy(cfg_walker *w, yaml_node_t *n, const char *path)
{
    const char *t = yamlx_scalar(n);
    for (size_t i = 0; t && list_strategies[i]; i++) {
        if (!strcmp(t, list_strategies[i])) {
            return true;
        }
    }
    cfg_error(w, n, path, "unknown value; expected one of [envvar, volume-mounts, cdi-annotations, "
                          "cdi-cri], got '%s'", t ? t : yamlx_kind(n));
    return false;
}

static bool parse_list_strategy(cfg_walker *w, yaml_node_t *node, const char *path,
                                const cfg_field *f, void *dst)
{
    (void)f;
    (void)dst;
    if (node->type != YAML_SEQUENCE_NODE) {
        return one_list_strategy(w, node, path);
    }
    bool ok = true;
    size_t i = 0;
    for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top;
         it++, i++) {
        char ip[256];
        cfg_path_index(ip, sizeof ip, path, i);
        yaml_node_t *item = yamlx_node(w->doc, *it);
        ok = cfg_visit(w, item, ip) && one_list_strategy(w, item, ip) && ok;
    }
    return ok;
}

static const char *const id_strategies[] = {"uuid", "index", NULL};
static const char *const mig_strategies[] = {"none", "single", "mixed", NULL};

static const cfg_field plugin_fields[] = {
    {"passDeviceSpecs", CFG_BOOL, .off = offsetof(raw_plugin, pass_device_specs)},
    {"deviceListStrategy", CFG_CUSTOM, .parse = parse_list_strategy,
     .expect = "envvar, volume-mounts, cdi-annotations or cdi-cri, or a list of them"},
    {"deviceIDStrategy", CFG_STRING, .names = id_strategies, .off = offsetof(raw_plugin, id_strategy)},
    {"cdiAnnotationPrefix", CFG_STRING, .off = offsetof(raw_plugin, cdi_prefix)},
    {"nvidiaCTKPath", CFG_STRING, .off = offsetof(raw_plugin, ctk_path)},
    {"containerDriverRoot", CFG_STRING, .off = offsetof(raw_plugin, container_root)},
    {0},
};

static const cfg_field gfd_fields[] = {
    {"oneshot", CFG_BOOL, .off = offsetof(raw_gfd, oneshot)},
    {"noTimestamp", CFG_BOOL, .off = offsetof(raw_gfd, no_timestamp)},
    {"sleepInterval", CFG_SECONDS, CFG_MIN(0), .off = offsetof(raw_gfd, sleep_s)},
    {"outputFile", CFG_STRING, .off = offsetof(raw_gfd, output_file)},
    {"machineTypeFile", CFG_STRING, .off = offsetof(raw_gfd, machine_type_file)},
    {0},
};

static const cfg_field flags_fields[] = {
    {"migStrategy", CFG_ENUM, .names = mig_strategies, .off = offsetof(raw_flags, mig_strategy),
     CFG_LOC(raw_flags, mig_loc)},
    {"failOnInitError", CFG_BOOL, .off = offsetof(raw_flags, fail_on_init)},
    {"restartOnDeviceUnhealthy", CFG_BOOL, .off = offsetof(raw_flags, restart_unhealthy)},
    {"nvidiaDriverRoot", CFG_STRING, .off = offsetof(raw_flags, driver_root)},
    {"nvidiaDevRoot", CFG_STRING, .off = offsetof(raw_flags, dev_root)},
    {"gdsEnabled", CFG_BOOL, .off = offsetof(raw_flags, gds)},
    {"mofedEnabled", CFG_BOOL, .off = offsetof(raw_flags, mofed)},
    {"plugin", CFG_MAP, .sub = plugin_fields, .off = offsetof(raw_flags, plugin)},
    {"gfd", CFG_MAP, .sub = gfd_fields, .off = offsetof(raw_flags, gfd)},
    {0},
};

/* ---- resources / imex: accepted for completeness ---- */

typedef struct raw_named_pattern {
    const char *pattern, *name;
} raw_named_pattern;

typedef struct raw_resources {
    raw_named_pattern *gpus, *mig;
    size_t n_gpus, n_mig;
} raw_resources;

typedef struct raw_imex {
    int *channels;
    size_t n_channels;
    bool required;
} raw_imex;

static const cfg_field pattern_fields[] = {
    {"pattern", CFG_STRING, .required = true, .off = offsetof(raw_named_pattern, pattern)},
    {"name", CFG_STRING, .required = true, .off = offsetof(raw_named_pattern, name)},
    {0},
};

static const cfg_field resources_fields[] = {
    {"gpus", CFG_SEQ, CFG_SEQ_OF(raw_resources, gpus, n_gpus, raw_named_pattern, pattern_fields)},
    {"mig", CFG_SEQ, CFG_SEQ_OF(raw_resources, mig, n_mig, raw_named_pattern, pattern_fields)},
    {0},
};

static const cfg_field imex_fields[] = {
    {"channelIDs", CFG_SEQ, .elem = CFG_INT, .off = offsetof(raw_imex, channels),
     .count_off = offsetof(raw_imex, n_channels)},
    {"required", CFG_BOOL, .off = offsetof(raw_imex, required)},
    {0},
};

/* ---- sharing ---- */

static bool valid_resource_name(const char *s)
{
    if (!strcmp(s, "nvidia.com/gpu")) {
        return true;
    }
    if (strncmp(s, "nvidia.com/mig-", 15)) {
        return false;
    }
    s += 15;
    /* <C>g.<M>gb with an optional .me ('+' becomes '.' in resource names) */
    if (*s < '1' || *s > '9') {
        return false;
    }
    while (*s >= '0' && *s <= '9') {
        s++;
    }
    if (s[0] != 'g' || s[1] != '.' || s[2] < '1' || s[2] > '9') {
        return false;
    }
    s += 2;
    while (*s >= '0' && *s <= '9') {
        s++;
    }
    return !strcmp(s, "gb") || !strcmp(s, "gb.me");
}

static bool is_uint(const char *s)
{
    if (!*s) {
        return false;
    }
    for (; *s; s++) {
        if (*s < '0' || *s > '9') {
            return false;
        }
    }
    return true;
}

/* A device reference: GPU index, "<gpu>:<mig>" index, or a GPU-/MIG- UUID. */
static bool valid_device_ref(const char *s)
{
    const char *colon = strchr(s, ':');
    if (is_uint(s)) {
        return true;
    }
    if (colon && !strchr(colon + 1, ':')) {
        char head[32];
        size_t n = (size_t)(colon - s);
        if (n == 0 || n >= sizeof head) {
            return false;
        }
        memcpy(head, s, n);
        head[n] = '\0';
        return is_uint(head) && is_uint(colon + 1);
    }
    return (!strncmp(s, "GPU-", 4) || !strncmp(s, "MIG-", 4)) && strlen(s) > 8;
}

static bool parse_devices(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                          void *dst)
{
    (void)f;
    timeslicing_resource *r = dst;
    const char *t = yamlx_scalar(node);
    char problem[128];
    int64_t count;
    if (t && !strcmp(t, "all")) {
        r->all_devices = true;
        return true;
    }
    if (t) {
        if (cfg_parse_i64(t, &count, problem, sizeof problem) && count > 0 && count <= 1024) {
            r->all_devices = false;
            r->device_count = (int)count;
            return true;
        }
        cfg_error(w, node, path, "wrong value; expected all, a device count from 1 to 1024, or a "
                                 "list of devices, got '%s'", t);
        return false;
    }
    if (node->type != YAML_SEQUENCE_NODE) {
        cfg_error(w, node, path, "wrong type; expected all, a device count, or a list of devices, "
                                 "got %s", yamlx_kind(node));
        return false;
    }
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    r->all_devices = false;
    r->device_refs = n ? arena_calloc(w->arena, n, sizeof *r->device_refs) : NULL;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        char ip[256];
        cfg_path_index(ip, sizeof ip, path, i);
        yaml_node_t *item = yamlx_node(w->doc, node->data.sequence.items.start[i]);
        const char *it = yamlx_scalar(item);
        if (!cfg_visit(w, item, ip)) {
            ok = false;
        } else if (!it || !valid_device_ref(it)) {
            cfg_error(w, item, ip, "not a device; expected a GPU index, a MIG index like \"0:1\", "
                                   "or a GPU-/MIG- UUID, got '%s'", it ? it : yamlx_kind(item));
            ok = false;
        } else {
            r->device_refs[r->n_device_refs++] = arena_strdup(w->arena, it);
        }
    }
    return ok;
}

static const cfg_field resource_fields[] = {
    CFG_SELF(timeslicing_resource, loc),
    {"name", CFG_STRING, .required = true, .off = offsetof(timeslicing_resource, name)},
    {"rename", CFG_STRING, .off = offsetof(timeslicing_resource, rename),
     CFG_LOC(timeslicing_resource, rename_loc)},
    {"replicas", CFG_INT, .required = true, CFG_MIN(1), CFG_MAX(1024),
     .off = offsetof(timeslicing_resource, replicas)},
    {"devices", CFG_CUSTOM, .parse = parse_devices, .off = 0, .dflt = NULL,
     .expect = "all, a device count, or a list of devices",
     CFG_LOC(timeslicing_resource, devices_loc)},
    {0},
};

static const cfg_field replicated_fields[] = {
    CFG_SELF(timeslicing_replicated, loc),
    {"renameByDefault", CFG_BOOL, .off = offsetof(timeslicing_replicated, rename_by_default)},
    {"failRequestsGreaterThanOne", CFG_BOOL,
     .off = offsetof(timeslicing_replicated, fail_requests_greater_than_one)},
    {"resources", CFG_SEQ, .required = true, CFG_MIN(1),
     CFG_SEQ_OF(timeslicing_replicated, resources, n_resources, timeslicing_resource,
                resource_fields)},
    {0},
};

typedef struct raw_config {
    const char *version;
    raw_flags flags;
    raw_resources resources;
    raw_imex imex;
    timeslicing_replicated ts, mps;
    src_loc loc, ts_loc, mps_loc, flags_loc;
} raw_config;

static const cfg_field sharing_fields[] = {
    {"timeSlicing", CFG_MAP, .sub = replicated_fields, .off = offsetof(raw_config, ts),
     CFG_LOC(raw_config, ts_loc)},
    {"mps", CFG_MAP, .sub = replicated_fields, .off = offsetof(raw_config, mps),
     CFG_LOC(raw_config, mps_loc)},
    {0},
};

static const char *const versions[] = {"v1", NULL};

static const cfg_field root_fields[] = {
    CFG_SELF(raw_config, loc),
    {"version", CFG_STRING, .names = versions, .dflt = "v1", .off = offsetof(raw_config, version)},
    {"flags", CFG_MAP, .sub = flags_fields, .off = offsetof(raw_config, flags),
     CFG_LOC(raw_config, flags_loc)},
    {"resources", CFG_MAP, .sub = resources_fields, .off = offsetof(raw_config, resources)},
    {"imex", CFG_MAP, .sub = imex_fields, .off = offsetof(raw_config, imex)},
    /* offset 0: sharing_fields address raw_config members directly */
    {"sharing", CFG_MAP, .sub = sharing_fields, .off = 0},
    {0},
};

static void check_replicated(diag *d, const timeslicing_replicated *rs, const char *path, bool mps)
{
    for (size_t i = 0; i < rs->n_resources; i++) {
        const timeslicing_resource *r = &rs->resources[i];
        char p[128];
        snprintf(p, sizeof p, "%s.resources[%zu].name", path, i);
        if (!valid_resource_name(r->name)) {
            diag_error(d, r->loc, p, "not a device-plugin resource; expected nvidia.com/gpu or "
                       "nvidia.com/mig-<C>g.<M>gb, got '%s'", r->name);
        } else if (mps && strcmp(r->name, "nvidia.com/gpu")) {
            diag_error(d, r->loc, p, "MPS shares only full GPUs; expected nvidia.com/gpu, got "
                       "'%s'", r->name);
        }
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(rs->resources[j].name, r->name)) {
                diag_error(d, r->loc, p, "resource already listed at resources[%zu]; expected "
                           "each resource once, got '%s'", j, r->name);
            }
        }
    }
}

static int load_doc(yamlx_doc *doc, arena *a, timeslicing_config *out, diag *d)
{
    *out = (timeslicing_config){0};
    int before = diag_error_count(d);
    raw_config *raw = arena_alloc(a, sizeof *raw);
    bool ok = cfg_walk_doc(doc, a, d, root_fields, raw);
    out->file = yamlx_name(doc);
    yamlx_destroy(doc);
    if (!ok) {
        return SIM_EINPUT;
    }
    out->version = raw->version;
    out->mig_strategy = raw->flags.mig_loc.line
                            ? (timeslicing_mig_strategy)(raw->flags.mig_strategy + 1)
                            : TIMESLICING_MIG_UNSET;
    out->loc = raw->loc;
    out->time_slicing = raw->ts;
    out->time_slicing.present = raw->ts_loc.line > 0;
    out->mps = raw->mps;
    out->mps.present = raw->mps_loc.line > 0;
    timeslicing_replicated *both[] = {&out->time_slicing, &out->mps};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < both[k]->n_resources; i++) {
            timeslicing_resource *r = &both[k]->resources[i];
            if (!r->device_count && !r->n_device_refs) {
                r->all_devices = true;
            }
        }
    }
    check_replicated(d, &out->time_slicing, "sharing.timeSlicing", false);
    check_replicated(d, &out->mps, "sharing.mps", true);
    if (out->time_slicing.n_resources && out->mps.n_resources) {
        diag_error(d, raw->mps_loc, "sharing.mps",
                   "time-slicing and MPS are mutually exclusive; expected only one of "
                   "sharing.timeSlicing and sharing.mps, got both");
    }
    return diag_error_count(d) > before ? SIM_EINPUT : 0;
}

int timeslicing_load_buffer(const char *name, const void *buf, size_t len, arena *a,
                            timeslicing_config *out, diag *d)
{
    yamlx_doc *doc = NULL;
    int rc = configmap_load_buffer(name, buf, len, a, d, &doc);
    return rc ? rc : load_doc(doc, a, out, d);
}

int timeslicing_load(const char *path, arena *a, timeslicing_config *out, diag *d)
{
    yamlx_doc *doc = NULL;
    int rc = configmap_load_file(path, a, d, &doc);
    return rc ? rc : load_doc(doc, a, out, d);
}

const timeslicing_replicated *timeslicing_active(const timeslicing_config *c)
{
    if (c->mps.n_resources) {
        return &c->mps;
    }
    return c->time_slicing.n_resources ? &c->time_slicing : NULL;
}

int timeslicing_replicas(const timeslicing_config *c, const char *resource)
{
    const timeslicing_replicated *rs = timeslicing_active(c);
    for (size_t i = 0; rs && resource && i < rs->n_resources; i++) {
        if (!strcmp(rs->resources[i].name, resource)) {
            return rs->resources[i].replicas;
        }
    }
    return 1;
}

const char *timeslicing_advertised(const timeslicing_replicated *rs, const timeslicing_resource *r,
                                   char *buf, size_t n)
{
    if (r->rename) {
        snprintf(buf, n, "%s", r->rename);
    } else if (rs->rename_by_default) {
        snprintf(buf, n, "%s.shared", r->name);
    } else {
        snprintf(buf, n, "%s", r->name);
    }
    return buf;
}
