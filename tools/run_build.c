/* tools/run_build.c - scenario -> cluster config (see run_build.h). */
#include "tools/run_build.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/yamlx.h"
#include "model/mig.h"
#include "sim/err.h"

/* ---- MIG layouts from a mig-parted config ------------------------------------------------- */

/* Does a mig-parted `device-filter` (a string or a list of "0xDDDDVVVV" PCI ids, device id then
 * vendor id) name GPU type g? An absent filter matches every GPU. */
static bool filter_matches(const yaml_node_t *filter, yamlx_doc *doc, const gpu_type *g)
{
    if (!filter) {
        return true;
    }
    const yaml_node_t *items[64];
    size_t n = 0;
    if (filter->type == YAML_SCALAR_NODE) {
        items[n++] = filter;
    } else if (filter->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = filter->data.sequence.items.start;
             it < filter->data.sequence.items.top && n < 64; it++) {
            items[n++] = yamlx_node(doc, *it);
        }
    }
    for (size_t i = 0; i < n; i++) {
        const char *t = yamlx_scalar(items[i]);
        char *end = NULL;
        errno = 0;
        unsigned long long v = t ? strtoull(t, &end, 16) : 0;
        if (!t || errno || end == t || *end) {
            continue;
        }
        uint16_t dev = (uint16_t)(v >> 16);
        for (int k = 0; k < g->n_pci_ids; k++) {
            if (g->pci_device_ids[k] == dev) {
                return true;
            }
        }
    }
    return false;
}

/* Does a mig-parted `devices` value (`all` or a list of indices) name GPU index idx? */
static bool devices_match(const yaml_node_t *devs, yamlx_doc *doc, uint32_t idx)
{
    const char *t = yamlx_scalar(devs);
    if (!devs || (t && !strcmp(t, "all"))) {
        return true;
    }
    if (devs->type != YAML_SEQUENCE_NODE) {
        return false;
    }
    for (yaml_node_item_t *it = devs->data.sequence.items.start;
         it < devs->data.sequence.items.top; it++) {
        const char *s = yamlx_scalar(yamlx_node(doc, *it));
        char *end = NULL;
        errno = 0;
        unsigned long v = s ? strtoul(s, &end, 10) : 0;
        if (s && !errno && end != s && !*end && v == idx) {
            return true;
        }
    }
    return false;
}

/* Layout of GPU index idx of type g under config `name` of the mig-parted document: sets
 * gc->mig_enabled and its instances. Reports problems at the mig-parted file's own lines. */
static void mig_layout_for(yamlx_doc *doc, const scenario_mig *m, const gpu_type *g, uint32_t idx,
                           diag *d, cluster_gpu_cfg *gc)
{
    yaml_node_t *configs = yamlx_map_get(doc, yamlx_root(doc), "mig-configs");
    yaml_node_t *cfg = yamlx_map_get(doc, configs, m->config);
    if (!cfg || cfg->type != YAML_SEQUENCE_NODE) {
        diag_error(d, yamlx_loc(doc, cfg ? cfg : configs), "mig-configs",
                   "wrong type; expected a sequence of device entries for '%s', got %s",
                   m->config, cfg ? yamlx_kind(cfg) : "nothing");
        return;
    }
    char path[256];
    size_t k = 0;
    for (yaml_node_item_t *it = cfg->data.sequence.items.start; it < cfg->data.sequence.items.top;
         it++, k++) {
        yaml_node_t *e = yamlx_node(doc, *it);
        if (!e || e->type != YAML_MAPPING_NODE) {
            continue;
        }
        if (!filter_matches(yamlx_map_get(doc, e, "device-filter"), doc, g) ||
            !devices_match(yamlx_map_get(doc, e, "devices"), doc, idx)) {
            continue;
        }
        snprintf(path, sizeof path, "mig-configs.%s[%zu]", m->config, k);
        const char *en = yamlx_scalar(yamlx_map_get(doc, e, "mig-enabled"));
        gc->mig_enabled = en && !strcmp(en, "true");
        if (!gc->mig_enabled) {
            return;
        }
        yaml_node_t *devs = yamlx_map_get(doc, e, "mig-devices");
        int counts[GPU_MAX_PROFILES] = {0};
        if (devs && devs->type == YAML_MAPPING_NODE) {
            for (yaml_node_pair_t *p = devs->data.mapping.pairs.start;
                 p < devs->data.mapping.pairs.top; p++) {
                yaml_node_t *kn = yamlx_node(doc, p->key), *vn = yamlx_node(doc, p->value);
                const char *prof = yamlx_scalar(kn), *cnt = yamlx_scalar(vn);
                int pi = prof ? gpu_profile_index(g, prof) : -1;
                char *end = NULL;
                errno = 0;
                long v = cnt ? strtol(cnt, &end, 10) : -1;
                if (pi < 0) {
                    diag_error(d, yamlx_loc(doc, kn), path,
                               "unknown MIG profile for %s; expected a profile of the catalog, "
                               "got '%s'", g->name, prof ? prof : "");
                } else if (!cnt || errno || end == cnt || *end || v < 0 || v > 8) {
                    diag_error(d, yamlx_loc(doc, vn), path,
                               "bad instance count; expected an integer from 0 to 8, got '%s'",
                               cnt ? cnt : "");
                } else {
                    counts[pi] += (int)v;
                }
            }
        }
        mig_layout lay, fit;
        mig_violation why;
        if (mig_place(g, 0, counts, &lay, &fit, &why) != MIG_OK) {
            char buf[160];
            diag_error(d, yamlx_loc(doc, devs ? devs : e), path,
                       "the MIG devices do not fit on one %s; expected a valid layout, got %s",
                       g->name, mig_describe(g, lay.inst, &why, buf, sizeof buf));
            return;
        }
        mig_layout_sort(&lay);
        gc->n_mig = (uint32_t)lay.n;
        for (int i = 0; i < lay.n; i++) {
            gc->mig[i] = &g->profiles[lay.inst[i].profile];
            gc->mig_start[i] = lay.inst[i].start;
        }
        return;
    }
    /* no entry names this GPU: mig-parted leaves it as it is; we take that as MIG off */
    gc->mig_enabled = false;
}

/* ---- cluster -------------------------------------------------------------------------------- */

void run_build_cluster(arena *a, diag *d, const scenario_spec *s, const gpu_catalog *cat,
                       cluster_cfg *out)
{
    uint64_t n_nodes = scenario_node_count(s);
    cluster_node_cfg *nodes = arena_calloc(a, n_nodes ? n_nodes : 1, sizeof *nodes);
    uint32_t n = 0;
    for (size_t gi = 0; gi < s->cluster.n_groups; gi++) {
        const scenario_node_group *grp = &s->cluster.groups[gi];
        char path[128];
        snprintf(path, sizeof path, "cluster.nodes[%zu].gpu", gi);
        const gpu_type *t = gpu_catalog_find(cat, grp->gpu);
        if (!t) {
            diag_error(d, grp->gpu_at, path, "unknown GPU type; expected a GPU of the catalog "
                       "(slicesim profiles lists them), got '%s'", grp->gpu);
            continue;
        }
        const scenario_sharing *sh = &grp->sharing;
        cluster_share_rule *rules = arena_calloc(a, sh->n_rules ? sh->n_rules : 1, sizeof *rules);
        for (size_t r = 0; r < sh->n_rules; r++) {
            rules[r] = (cluster_share_rule){sh->rules[r].resource, sh->rules[r].replicas};
        }
        /* every node of the group has the same GPUs: one array shared by its nodes */
        cluster_gpu_cfg *gpus = arena_calloc(a, grp->gpus_per_node, sizeof *gpus);
        yamlx_doc *doc = NULL;
        if (sh->is_mig && yamlx_load_file(sh->mig.file, a, d, &doc) != 0) {
            if (doc == NULL && diag_error_count(d) == 0) {
                diag_error(d, sh->mig.file_at, "mig.file", "cannot read '%s': %s", sh->mig.file,
                           strerror(errno));
            }
            continue;
        }
        for (uint32_t i = 0; i < grp->gpus_per_node; i++) {
            cluster_gpu_cfg *gc = &gpus[i];
            gc->type = t;
            gc->sharing = sh->mode == SCN_SHARE_TIMESLICE ? CLUSTER_SHARE_TIMESLICE
                          : sh->mode == SCN_SHARE_MPS     ? CLUSTER_SHARE_MPS
                                                          : CLUSTER_SHARE_NONE;
            gc->rename_by_default = sh->rename_by_default;
            gc->n_rules = (uint32_t)sh->n_rules;
            gc->rules = rules;
            if (doc) {
                gc->mig_single = sh->mig.strategy == SCN_MIG_SINGLE;
                mig_layout_for(doc, &sh->mig, t, i, d, gc);
            }
        }
        yamlx_destroy(doc);
        for (uint32_t k = 0; k < grp->count; k++) {
            char name[160];
            snprintf(name, sizeof name, "%s-%" PRIu32, grp->name, k);
            nodes[n++] = (cluster_node_cfg){arena_strdup(a, name), grp->gpus_per_node, gpus};
        }
    }
    *out = (cluster_cfg){.n_nodes = n, .nodes = nodes};
}

bool run_build_request_fits(const cluster *c, const job_request *req)
{
    res_id r;
    if (!cluster_resource_find(c, req->resource, &r)) {
        return false;
    }
    uint32_t workers = 0;
    for (node_id n = 0; n < cluster_n_nodes(c) && workers < req->n_workers; n++) {
        workers += cluster_capacity(c, n, r) / req->per_worker;
    }
    return workers >= req->n_workers;
}

const char *run_build_advertised(const cluster *c, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (res_id r = 0; r < cluster_n_resources(c) && used < len; r++) {
        uint32_t most = 0;
        for (node_id n = 0; n < cluster_n_nodes(c); n++) {
            uint32_t cap = cluster_capacity(c, n, r);
            most = cap > most ? cap : most;
        }
        int k = snprintf(buf + used, len - used, "%s%s x%" PRIu32, r ? ", " : "",
                         cluster_resource_name(c, r), most);
        if (k < 0) {
            break;
        }
        used += (size_t)k;
    }
    return buf;
}
