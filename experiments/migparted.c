/* experiments/migparted.c - mig-parted config loader and application (see migparted.h). */
#include "experiments/migparted.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/cfg.h"
#include "experiments/configmap.h"
#include "experiments/yamlx.h"
#include "sim/err.h"

#define PCI_VENDOR_NVIDIA 0x10DEu

static size_t seq_len(const yaml_node_t *n)
{
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static size_t map_len(const yaml_node_t *n)
{
    return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
}

/* "0x20B010DE" -> 0x20B010DE; false unless 0x and exactly 8 hex digits. */
static bool parse_pci_filter(const char *t, uint32_t *out)
{
    if (!t || t[0] != '0' || (t[1] != 'x' && t[1] != 'X') || strlen(t) != 10) {
        return false;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(t + 2, &end, 16);
    if (errno || *end || end != t + 10) {
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static bool filter_item(cfg_walker *w, yaml_node_t *item, const char *path, uint32_t *out)
{
    const char *t = yamlx_scalar(item);
    if (!t || !parse_pci_filter(t, out)) {
        cfg_error(w, item, path,
                  "not a PCI id; expected 0x, the device id and the vendor id in 8 hex digits "
                  "like \"0x20B010DE\", got '%s'",
                  t ? t : yamlx_kind(item));
        return false;
    }
    return true;
}

static bool parse_filter(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                         void *dst)
{
    (void)f;
    migparted_entry *e = dst;
    if (node->type == YAML_SCALAR_NODE) {
        e->filters = arena_alloc(w->arena, sizeof *e->filters);
        e->n_filters = 1;
        return filter_item(w, node, path, &e->filters[0]);
    }
    if (node->type != YAML_SEQUENCE_NODE || seq_len(node) == 0) {
        cfg_error(w, node, path,
                  "wrong type; expected a PCI id or a non-empty list of them like "
                  "[\"0x20B010DE\"], got %s",
                  node->type == YAML_SEQUENCE_NODE ? "an empty list" : yamlx_kind(node));
        return false;
    }
    size_t n = seq_len(node);
    e->filters = arena_calloc(w->arena, n, sizeof *e->filters);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        char ip[256];
        cfg_path_index(ip, sizeof ip, path, i);
        yaml_node_t *item = yamlx_node(w->doc, node->data.sequence.items.start[i]);
        ok = cfg_visit(w, item, ip) && filter_item(w, item, ip, &e->filters[e->n_filters++]) && ok;
    }
    return ok;
}

static bool parse_devices(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                          void *dst)
{
    (void)f;
    migparted_entry *e = dst;
    const char *t = yamlx_scalar(node);
    if (t && !strcmp(t, "all")) {
        e->all_devices = true;
        return true;
    }
    if (node->type != YAML_SEQUENCE_NODE) {
        cfg_error(w, node, path, "wrong value; expected all or a list of GPU indices like [0, 1], "
                                 "got '%s'", t ? t : yamlx_kind(node));
        return false;
    }
    size_t n = seq_len(node);
    e->devices = n ? arena_calloc(w->arena, n, sizeof *e->devices) : NULL;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        char ip[256], problem[128];
        cfg_path_index(ip, sizeof ip, path, i);
        yaml_node_t *item = yamlx_node(w->doc, node->data.sequence.items.start[i]);
        if (!cfg_visit(w, item, ip)) {
            ok = false;
            continue;
        }
        const char *it = yamlx_scalar(item);
        int64_t v = -1;
        if (!it || !cfg_parse_i64(it, &v, problem, sizeof problem) || v < 0 || v > 1023) {
            cfg_error(w, item, ip, "not a GPU index; expected an integer from 0 to 1023, got '%s'",
                      it ? it : yamlx_kind(item));
            ok = false;
            continue;
        }
        e->devices[e->n_devices++] = (int)v;
    }
    return ok;
}

/* mig-parted profile names: [<c>c.]<C>g.<M>gb[+me|+me.all|-me|+gfx]. */
static bool profile_shape(const char *s, bool *is_ci)
{
    char *end;
    *is_ci = false;
    if (s[0] < '1' || s[0] > '9') {
        return false;
    }
    strtol(s, &end, 10);
    if (end[0] == 'c' && end[1] == '.') {
        *is_ci = true;
        s = end + 2;
        if (s[0] < '1' || s[0] > '9') {
            return false;
        }
        strtol(s, &end, 10);
    }
    if (end[0] != 'g' || end[1] != '.' || end[2] < '1' || end[2] > '9') {
        return false;
    }
    strtol(end + 2, &end, 10);
    if (strncmp(end, "gb", 2)) {
        return false;
    }
    end += 2;
    return !*end || !strcmp(end, "+me") || !strcmp(end, "+me.all") || !strcmp(end, "-me") ||
           !strcmp(end, "+gfx");
}

static bool parse_mig_devices(cfg_walker *w, yaml_node_t *node, const char *path,
                              const cfg_field *f, void *dst)
{
    (void)f;
    migparted_entry *e = dst;
    if (node->type != YAML_MAPPING_NODE) {
        cfg_error(w, node, path,
                  "wrong type; expected a map of profile counts like {\"1g.5gb\": 7}, got %s",
                  yamlx_kind(node));
        return false;
    }
    size_t n = map_len(node);
    e->mig_devices = n ? arena_calloc(w->arena, n, sizeof *e->mig_devices) : NULL;
    bool ok = true;
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yamlx_node(w->doc, p->key), *v = yamlx_node(w->doc, p->value);
        const char *name = yamlx_scalar(k);
        char kp[256];
        cfg_path_key(kp, sizeof kp, path, name ? name : "?");
        bool is_ci = false;
        if (!name || !profile_shape(name, &is_ci)) {
            cfg_error(w, k, kp, "not a MIG profile name; expected a name like 1g.5gb, 1g.5gb+me "
                                "or 1c.2g.10gb, got '%s'", name ? name : yamlx_kind(k));
            ok = false;
            continue;
        }
        for (size_t j = 0; j < e->n_mig_devices; j++) {
            if (!strcmp(e->mig_devices[j].profile, name)) {
                cfg_error(w, k, kp, "duplicate key; expected each profile once, got '%s'", name);
                ok = false;
            }
        }
        const char *vt = yamlx_scalar(v);
        char problem[128];
        int64_t count = -1;
        if (!cfg_visit(w, v, kp)) {
            ok = false;
            continue;
        }
        if (!vt || !cfg_parse_i64(vt, &count, problem, sizeof problem) || count < 0 ||
            count > 64) {
            cfg_error(w, v, kp, "not a count; expected an integer from 0 to 64, got '%s'",
                      vt ? vt : yamlx_kind(v));
            ok = false;
            continue;
        }
        migparted_device *md = &e->mig_devices[e->n_mig_devices++];
        md->profile = arena_strdup(w->arena, name);
        md->count = (int)count;
        md->is_compute_instance = is_ci;
        md->loc = cfg_loc(w, k);
    }
    return ok;
}

static const cfg_field entry_fields[] = {
    CFG_SELF(migparted_entry, loc),
    {"device-filter", CFG_CUSTOM, .off = 0, .parse = parse_filter,
     CFG_LOC(migparted_entry, filter_loc)},
    {"devices", CFG_CUSTOM, .required = true, .off = 0, .parse = parse_devices,
     CFG_LOC(migparted_entry, devices_loc), .expect = "all or a list of GPU indices like [0, 1]"},
    {"mig-enabled", CFG_BOOL, .required = true, .off = offsetof(migparted_entry, mig_enabled)},
    {"mig-devices", CFG_CUSTOM, .off = 0, .parse = parse_mig_devices,
     CFG_LOC(migparted_entry, mig_devices_loc)},
    {0},
};

static bool parse_configs(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                          void *dst)
{
    (void)f;
    migparted_config *cfg = dst;
    if (node->type != YAML_MAPPING_NODE || map_len(node) == 0) {
        cfg_error(w, node, path, "wrong type; expected a non-empty map of named configs, got %s",
                  node->type == YAML_MAPPING_NODE ? "an empty map" : yamlx_kind(node));
        return false;
    }
    size_t n = map_len(node);
    cfg->configs = arena_calloc(w->arena, n, sizeof *cfg->configs);
    bool ok = true;
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yamlx_node(w->doc, p->key), *v = yamlx_node(w->doc, p->value);
        const char *name = yamlx_scalar(k);
        char kp[256];
        cfg_path_key(kp, sizeof kp, path, name ? name : "?");
        if (!name || !name[0]) {
            cfg_error(w, k, kp, "wrong type; expected a config name, got %s",
                      name ? "an empty string" : yamlx_kind(k));
            ok = false;
            continue;
        }
        for (size_t j = 0; j < cfg->n_configs; j++) {
            if (!strcmp(cfg->configs[j].name, name)) {
                cfg_error(w, k, kp, "duplicate config name; expected each name once, got '%s'",
                          name);
                ok = false;
            }
        }
        if (!cfg_visit(w, v, kp)) {
            ok = false;
            continue;
        }
        if (v->type != YAML_SEQUENCE_NODE || seq_len(v) == 0) {
            cfg_error(w, v, kp, "wrong type; expected a non-empty list of entries, got %s",
                      v->type == YAML_SEQUENCE_NODE ? "an empty list" : yamlx_kind(v));
            ok = false;
            continue;
        }
        migparted_named *nc = &cfg->configs[cfg->n_configs++];
        nc->name = arena_strdup(w->arena, name);
        nc->loc = cfg_loc(w, k);
        nc->entries = arena_calloc(w->arena, seq_len(v), sizeof *nc->entries);
        for (size_t i = 0; i < seq_len(v); i++) {
            char ip[256];
            cfg_path_index(ip, sizeof ip, kp, i);
            yaml_node_t *item = yamlx_node(w->doc, v->data.sequence.items.start[i]);
            migparted_entry *e = &nc->entries[nc->n_entries++];
            if (!cfg_walk_map(w, item, ip, entry_fields, e)) {
                ok = false;
                continue;
            }
            char mp[300];
            cfg_path_key(mp, sizeof mp, ip, "mig-devices");
            if (e->mig_enabled && e->mig_devices_loc.line == 0) {
                diag_error(w->diag, e->loc, mp,
                           "missing; required when mig-enabled is true; expected a map of "
                           "profile counts like {\"1g.5gb\": 7}, got nothing");
                ok = false;
            } else if (!e->mig_enabled && e->n_mig_devices > 0) {
                diag_error(w->diag, e->mig_devices_loc, mp,
                           "MIG devices given while mig-enabled is false; expected {} or no "
                           "mig-devices, got %zu profile%s",
                           e->n_mig_devices, e->n_mig_devices == 1 ? "" : "s");
                ok = false;
            }
        }
    }
    return ok;
}

static const char *const versions[] = {"v1", NULL};

static const cfg_field root_fields[] = {
    CFG_SELF(migparted_config, loc),
    {"version", CFG_STRING, .required = true, .names = versions,
     .off = offsetof(migparted_config, version)},
    {"mig-configs", CFG_CUSTOM, .required = true, .off = 0, .parse = parse_configs,
     CFG_LOC(migparted_config, configs_loc), .expect = "a map of named configs"},
    {0},
};

static int load_doc(yamlx_doc *doc, arena *a, migparted_config *out, diag *d)
{
    *out = (migparted_config){0};
    bool ok = cfg_walk_doc(doc, a, d, root_fields, out);
    out->file = yamlx_name(doc);
    yamlx_destroy(doc);
    return ok ? 0 : SIM_EINPUT;
}

int migparted_load_buffer(const char *name, const void *buf, size_t len, arena *a,
                          migparted_config *out, diag *d)
{
    yamlx_doc *doc = NULL;
    int rc = configmap_load_buffer(name, buf, len, a, d, &doc);
    return rc ? rc : load_doc(doc, a, out, d);
}

int migparted_load(const char *path, arena *a, migparted_config *out, diag *d)
{
    yamlx_doc *doc = NULL;
    int rc = configmap_load_file(path, a, d, &doc);
    return rc ? rc : load_doc(doc, a, out, d);
}

const migparted_named *migparted_find(const migparted_config *cfg, const char *name)
{
    for (size_t i = 0; cfg && name && i < cfg->n_configs; i++) {
        if (!strcmp(cfg->configs[i].name, name)) {
            return &cfg->configs[i];
        }
    }
    return NULL;
}

/* ---- application ---- */

/* Does the entry's device-filter admit GPU type g (no filter admits every type)? */
static bool filter_admits(const gpu_type *g, const migparted_entry *e)
{
    if (e->n_filters == 0) {
        return true;
    }
    for (size_t i = 0; i < e->n_filters; i++) {
        uint32_t dev_id = e->filters[i] >> 16, vendor = e->filters[i] & 0xFFFFu;
        for (int k = 0; k < g->n_pci_ids; k++) {
            if (vendor == PCI_VENDOR_NVIDIA && dev_id == g->pci_device_ids[k]) {
                return true;
            }
        }
    }
    return false;
}

static bool entry_selects(const gpu_type *g, const migparted_entry *e, int gpu_index)
{
    bool dev = e->all_devices;
    for (size_t i = 0; i < e->n_devices && !dev; i++) {
        dev = e->devices[i] == gpu_index;
    }
    return dev && filter_admits(g, e);
}

bool migparted_not_for(const gpu_type *g, const migparted_named *n, int gpu_index,
                       const char **profile)
{
    for (size_t i = 0; i < n->n_entries; i++) {
        const migparted_entry *e = &n->entries[i];
        if (!entry_selects(g, e, gpu_index) || !e->mig_enabled) {
            continue;
        }
        for (size_t k = 0; k < e->n_mig_devices; k++) {
            if (gpu_profile_index(g, e->mig_devices[k].profile) < 0) {
                if (profile) {
                    *profile = e->mig_devices[k].profile;
                }
                return true;
            }
        }
    }
    return false;
}

static void entry_path(char *buf, size_t n, const migparted_named *nc, size_t i, const char *key)
{
    char base[256], ip[300];
    cfg_path_key(base, sizeof base, "mig-configs", nc->name);
    cfg_path_index(ip, sizeof ip, base, i);
    cfg_path_key(buf, n, ip, key);
}

int migparted_check_devices(const gpu_type *g, const migparted_config *cfg,
                            const char *config_name, int n_gpus, diag *d)
{
    const migparted_named *nc = migparted_find(cfg, config_name);
    int before = diag_error_count(d);
    for (size_t i = 0; nc && i < nc->n_entries; i++) {
        const migparted_entry *e = &nc->entries[i];
        if (!filter_admits(g, e)) {
            continue; /* an entry for another GPU family */
        }
        for (size_t k = 0; k < e->n_devices; k++) {
            if (e->devices[k] >= n_gpus) {
                char path[400];
                entry_path(path, sizeof path, nc, i, "devices");
                diag_error(d, e->devices_loc, path,
                           "no such GPU on a node of %d %s; expected GPU indices 0..%d, got '%d'",
                           n_gpus, g->name, n_gpus - 1, e->devices[k]);
            }
        }
    }
    return diag_error_count(d) > before ? SIM_EINPUT : 0;
}

static const char *profile_list(const gpu_type *g, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->n_profiles && used + 1 < n; i++) {
        int k = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", g->profiles[i].name);
        used += k > 0 ? (size_t)k : 0;
    }
    return buf;
}

/* "2g.10gb x1 + 1g.5gb x5" for a layout (largest first, grouped). */
static const char *count_text(const gpu_type *g, const mig_layout *l, char *buf, size_t n)
{
    size_t used = 0;
    snprintf(buf, n, "%s", l->n ? "" : "nothing");
    for (int i = 0; i < l->n && used + 1 < n; i++) {
        if (i > 0 && l->inst[i].profile == l->inst[i - 1].profile) {
            continue;
        }
        int c = 0;
        for (int j = i; j < l->n && l->inst[j].profile == l->inst[i].profile; j++) {
            c++;
        }
        int k = snprintf(buf + used, n - used, "%s%s x%d", used ? " + " : "",
                         g->profiles[l->inst[i].profile].name, c);
        used += k > 0 ? (size_t)k : 0;
    }
    return buf;
}

static int apply_entry(const gpu_catalog *c, const gpu_type *g, const migparted_named *nc,
                       size_t ei, int driver, migparted_result *out, diag *d)
{
    const migparted_entry *e = &nc->entries[ei];
    int counts[GPU_MAX_PROFILES] = {0};
    int errors = diag_error_count(d);
    char path[400], asked[512];
    size_t used = 0;
    asked[0] = '\0';
    for (size_t k = 0; k < e->n_mig_devices; k++) {
        const migparted_device *md = &e->mig_devices[k];
        entry_path(path, sizeof path, nc, ei, "mig-devices");
        char kp[500];
        cfg_path_key(kp, sizeof kp, path, md->profile);
        if (md->is_compute_instance) {
            diag_error(d, md->loc, kp,
                       "compute-instance profiles are not modelled; expected a GPU-instance "
                       "profile of %s like %s, got '%s'",
                       g->name, g->profiles[0].name, md->profile);
            continue;
        }
        int p = gpu_profile_index(g, md->profile);
        if (p < 0) {
            char list[512];
            const char *other = NULL;
            for (size_t i = 0; c && i < c->n_gpus && !other; i++) {
                if (gpu_profile_index(&c->gpus[i], md->profile) >= 0) {
                    other = c->gpus[i].name;
                }
            }
            diag_error(d, md->loc, kp, "not a profile of %s%s%s; expected one of %s, got '%s'",
                       g->name, other ? " but of " : "", other ? other : "",
                       profile_list(g, list, sizeof list), md->profile);
            continue;
        }
        counts[p] += md->count;
        if (md->count > 0) {
            int k2 = snprintf(asked + used, sizeof asked - used, "%s%s x%d", used ? " + " : "",
                              md->profile, md->count);
            used += k2 > 0 && (size_t)k2 < sizeof asked - used ? (size_t)k2 : 0;
        }
    }
    if (diag_error_count(d) > errors) {
        return SIM_EINPUT;
    }
    out->mig_enabled = true;
    mig_layout fit;
    mig_violation why;
    mig_verdict v = mig_place(g, driver, counts, &out->layout, &fit, &why);
    if (v == MIG_OK) {
        return 0;
    }
    entry_path(path, sizeof path, nc, ei, "mig-devices");
    char text[300];
    mig_describe(g, out->layout.inst, &why, text, sizeof text);
    if (v == MIG_OVERLAP && why.a < 0) {
        snprintf(text, sizeof text, "needs %d memory slices in allowed placements; %s has %d",
                 why.have, g->name, why.need);
    }
    if (v == MIG_COMPUTE_BUDGET || v == MIG_OVERLAP) {
        char fits[512], placed[512];
        count_text(g, &fit, fits, sizeof fits); /* fit is largest first, grouped by profile */
        mig_layout_sort(&fit);
        mig_layout_format(g, &fit, placed, sizeof placed);
        diag_error(d, e->mig_devices_loc, path,
                   "does not fit %s: %s; expected instances that fit, e.g. %s (%s), got '%s'",
                   g->name, text, fits, placed, asked);
    } else {
        diag_error(d, e->mig_devices_loc, path, "invalid on %s: %s; expected a valid MIG layout, "
                   "got '%s'", g->name, text, asked);
    }
    out->layout.n = 0;
    return SIM_EINPUT;
}

int migparted_apply(const gpu_catalog *c, const gpu_type *g, const migparted_config *cfg,
                    const char *config_name, int gpu_index, int driver, migparted_result *out,
                    diag *d)
{
    *out = (migparted_result){.entry = -1};
    const migparted_named *nc = migparted_find(cfg, config_name);
    if (!nc) {
        char list[1024];
        size_t used = 0;
        list[0] = '\0';
        for (size_t i = 0; i < cfg->n_configs && used + 1 < sizeof list; i++) {
            int k = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                             cfg->configs[i].name);
            used += k > 0 ? (size_t)k : 0;
        }
        diag_error(d, cfg->configs_loc, "mig-configs",
                   "no config named so; expected one of %s, got '%s'", list,
                   config_name ? config_name : "");
        return SIM_EINPUT;
    }
    for (size_t i = 0; i < nc->n_entries; i++) {
        if (!entry_selects(g, &nc->entries[i], gpu_index)) {
            continue;
        }
        if (out->selected) {
            char path[400];
            entry_path(path, sizeof path, nc, i, "devices");
            diag_error(d, nc->entries[i].devices_loc, path,
                       "GPU %d (%s) is already selected by entry %d; expected one entry per GPU, "
                       "got a second",
                       gpu_index, g->name, out->entry);
            return SIM_EINPUT;
        }
        out->selected = true;
        out->entry = (int)i;
    }
    if (!out->selected || !nc->entries[out->entry].mig_enabled) {
        return 0;
    }
    return apply_entry(c, g, nc, (size_t)out->entry, driver, out, d);
}
