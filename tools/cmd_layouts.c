/* tools/cmd_layouts.c - `slicesim layouts GPU ...`: every valid maximal MIG layout of a GPU,
 * enumerated from the catalog's placement rules (model/hw/mig.h), or the layouts that a mig-parted
 * config file gives that GPU (experiments/migparted.h).
 *
 * Profiles enumerated by default: the classic set (no +me, no 1-compute-slice profile spanning
 * two memory slices), which is what NVIDIA's "Profile Placements on A100" figure draws (MIG user
 * guide, concepts page: 18 or 19 combinations by driver); --all-profiles adds the others. */
#include "tools/cli.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/migparted.h"
#include "experiments/timeslicing.h"
#include "model/hw/catalog.h"
#include "model/cluster/cluster.h"
#include "model/hw/mig.h"
#include "sim/arena.h"
#include "sim/diag.h"

typedef struct opts {
    const char *gpu, *catalog, *mig_config, *name, *sharing;
    int driver;
    bool json, all_profiles, all_layouts;
    int gpu_index;
} opts;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: slicesim layouts GPU [--driver R510] [--format text|json] [--all-profiles]\n"
            "                            [--non-maximal] [--catalog FILE]\n"
            "       slicesim layouts GPU --mig-config FILE [--name CONFIG] [--gpu-index N]\n"
            "                            [--sharing FILE] [--driver R510] [--format text|json]\n"
            "  Lists every valid maximal MIG layout of GPU (no instance can be added), enumerated\n"
            "  from the placement rules in the catalog. Default profiles: the classic set (no +me,\n"
            "  no 1g profile spanning two memory slices), as in NVIDIA's A100 placement figure.\n"
            "  --driver        driver branch (R470, R510, 525.85.12...); default: newest\n"
            "  --all-profiles  also enumerate +me and 1g double-memory profiles\n"
            "  --non-maximal   list every non-empty valid layout, not only maximal ones\n"
            "  --mig-config    check a mig-parted file: print the placement each named config\n"
            "                  gives GPU number --gpu-index (default 0), or a precise error\n"
            "  --name          only this named config (then a config not for GPU is an error)\n"
            "  --sharing       a k8s device-plugin config (time-slicing or MPS replicas): print\n"
            "                  what each config's GPU advertises under it\n");
}

static int parse_args(int argc, char **argv, opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "--driver") || !strcmp(a, "--format") || !strcmp(a, "--catalog") ||
                     !strcmp(a, "--mig-config") || !strcmp(a, "--name") || !strcmp(a, "--sharing") ||
                     !strcmp(a, "--gpu-index");
        if (takes && !val) {
            return cli_usage_error("layouts", "%s needs a value", a);
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(a, "--driver")) {
            if (!strcmp(val, "newest")) {
                o->driver = 0;
            } else if (!mig_parse_driver(val, &o->driver)) {
                return cli_usage_error("layouts", "--driver: expected a branch like R510 or a "
                                                  "version like 525.85.12, got '%s'", val);
            }
        } else if (!strcmp(a, "--format")) {
            if (strcmp(val, "text") && strcmp(val, "json")) {
                return cli_usage_error("layouts", "--format: expected text or json, got '%s'", val);
            }
            o->json = !strcmp(val, "json");
        } else if (!strcmp(a, "--catalog")) {
            o->catalog = val;
        } else if (!strcmp(a, "--mig-config")) {
            o->mig_config = val;
        } else if (!strcmp(a, "--name")) {
            o->name = val;
        } else if (!strcmp(a, "--sharing")) {
            o->sharing = val;
        } else if (!strcmp(a, "--gpu-index")) {
            uint64_t v;
            if (!cli_parse_u64(val, 0, 1023, &v)) {
                return cli_usage_error("layouts", "--gpu-index: expected 0 to 1023, got '%s'", val);
            }
            o->gpu_index = (int)v;
        } else if (!strcmp(a, "--all-profiles")) {
            o->all_profiles = true;
            continue;
        } else if (!strcmp(a, "--non-maximal")) {
            o->all_layouts = true;
            continue;
        } else if (a[0] == '-') {
            return cli_usage_error("layouts", "unknown option '%s'; see slicesim layouts --help", a);
        } else if (o->gpu) {
            return cli_usage_error("layouts", "one GPU at a time; got '%s' and '%s'", o->gpu, a);
        } else {
            o->gpu = a;
            continue;
        }
        i++;
    }
    if (!o->gpu) {
        return cli_usage_error("layouts", "which GPU? expected a catalog name like A100-40GB "
                                          "(slicesim profiles lists them)");
    }
    if ((o->name || o->sharing) && !o->mig_config) {
        return cli_usage_error("layouts", "%s needs --mig-config FILE", o->name ? "--name" : "--sharing");
    }
    return 0;
}

static const char *driver_text(int driver, char *buf, size_t n)
{
    if (driver == 0) {
        snprintf(buf, n, "newest");
    } else {
        snprintf(buf, n, "R%d", driver);
    }
    return buf;
}

/* ---- enumeration output ---- */

typedef struct enum_out {
    const gpu_type *g;
    bool json;
    cJSON *arr;
    long n;
} enum_out;

static cJSON *instances_json(const gpu_type *g, const mig_layout *l)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < l->n; i++) {
        const mig_profile *p = &g->profiles[l->inst[i].profile];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "profile", p->name);
        cJSON_AddNumberToObject(o, "start", l->inst[i].start);
        cJSON_AddNumberToObject(o, "memory_slices", p->mem_slices);
        cJSON_AddNumberToObject(o, "compute_slices", p->compute_slices);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static int on_layout(const mig_layout *l, void *ctx)
{
    enum_out *e = ctx;
    const gpu_type *g = e->g;
    int idle_c = mig_idle_compute_slices(g, l->inst, l->n);
    int idle_m = mig_idle_memory_slices(g, l->inst, l->n);
    int sms = mig_layout_sms(g, l->inst, l->n);
    e->n++;
    if (e->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "instances", instances_json(g, l));
        cJSON_AddNumberToObject(o, "compute_slices_used", g->compute_slices - idle_c);
        cJSON_AddNumberToObject(o, "idle_compute_slices", idle_c);
        cJSON_AddNumberToObject(o, "idle_memory_slices", idle_m);
        if (sms > 0) {
            cJSON_AddNumberToObject(o, "sms", sms);
        } else {
            cJSON_AddNullToObject(o, "sms");
        }
        cJSON_AddItemToArray(e->arr, o);
        return 0;
    }
    char text[512], smstxt[16];
    mig_layout_format(g, l, text, sizeof text);
    snprintf(smstxt, sizeof smstxt, sms > 0 ? "%d" : "-", sms);
    printf("%4ld  %-72s %3d/%-3d %3d/%-3d %5s\n", e->n, text, g->compute_slices - idle_c,
           g->compute_slices, g->memory_slices - idle_m, g->memory_slices, smstxt);
    return 0;
}

static int print_json(cJSON *root)
{
    char *s = cJSON_Print(root);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(root);
    return CLI_EXIT_OK;
}

static int enumerate(const gpu_type *g, const opts *o)
{
    mig_enum_opts eo = {.driver = o->driver, .all_profiles = o->all_profiles,
                        .maximal_only = !o->all_layouts};
    char drv[16], names[512] = "";
    size_t used = 0;
    cJSON *root = NULL, *profiles = NULL;
    if (o->json) {
        root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "gpu", g->name);
        cJSON_AddStringToObject(root, "driver", driver_text(o->driver, drv, sizeof drv));
        cJSON_AddStringToObject(root, "profile_set", o->all_profiles ? "all" : "classic");
        cJSON_AddBoolToObject(root, "maximal_only", !o->all_layouts);
        profiles = cJSON_AddArrayToObject(root, "profiles");
    }
    for (int p = 0; p < g->n_profiles; p++) {
        const mig_profile *mp = &g->profiles[p];
        if (mig_profile_offered(g, p, o->driver) && (o->all_profiles || mig_profile_is_classic(mp))) {
            if (profiles) {
                cJSON_AddItemToArray(profiles, cJSON_CreateString(mp->name));
            }
            int k = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", mp->name);
            used += k > 0 && (size_t)k < sizeof names - used ? (size_t)k : 0;
        }
    }
    if (g->mig_min_driver > 0 && o->driver > 0 && o->driver < g->mig_min_driver) {
        cJSON_Delete(root);
        return cli_usage_error("layouts", "MIG on %s needs driver R%d or newer; got --driver R%d",
                               g->name, g->mig_min_driver, o->driver);
    }
    enum_out e = {.g = g, .json = o->json};
    if (o->json) {
        e.arr = cJSON_AddArrayToObject(root, "layouts");
    } else {
        printf("%s: %s MIG layouts, %s profiles (%s), driver %s\n", g->name,
               o->all_layouts ? "all valid" : "maximal", o->all_profiles ? "all" : "classic", names,
               driver_text(o->driver, drv, sizeof drv));
        printf("%4s  %-72s %7s %7s %5s\n", "#", "instances (profile@start memory slice)", "compute",
               "memory", "SMs");
    }
    mig_enumerate(g, &eo, on_layout, &e);
    if (o->json) {
        cJSON_AddNumberToObject(root, "count", (double)e.n);
        return print_json(root);
    }
    printf("layouts=%ld\n", e.n);
    return CLI_EXIT_OK;
}

/* ---- what the device plugin advertises ---- */

typedef struct advert {
    int n;
    char name[MIG_MAX_INSTANCES + 1][96];
    int units[MIG_MAX_INSTANCES + 1];
} advert;

static void advert_add(advert *ad, const timeslicing_config *ts, const char *resource)
{
    const timeslicing_replicated *rs = timeslicing_active(ts);
    char name[96];
    snprintf(name, sizeof name, "%s", resource);
    for (size_t i = 0; rs && i < rs->n_resources; i++) {
        if (!strcmp(rs->resources[i].name, resource)) {
            timeslicing_advertised(rs, &rs->resources[i], name, sizeof name);
        }
    }
    int units = timeslicing_replicas(ts, resource);
    for (int k = 0; k < ad->n; k++) {
        if (!strcmp(ad->name[k], name)) {
            ad->units[k] += units;
            return;
        }
    }
    snprintf(ad->name[ad->n], sizeof ad->name[0], "%s", name);
    ad->units[ad->n++] = units;
}

/* "4 x nvidia.com/gpu.shared" etc. for one GPU laid out as r, under the sharing config ts
 * (naming as model/cluster/cluster.h: nvidia.com/mig-<profile> with '+' -> '.', mixed strategy). */
static const char *advertises(const gpu_type *g, const migparted_result *r,
                              const timeslicing_config *ts, char *buf, size_t n)
{
    advert ad = {0};
    char res[96];
    if (!r->selected || !r->mig_enabled) {
        advert_add(&ad, ts, "nvidia.com/gpu");
    } else if (ts->mig_strategy == TIMESLICING_MIG_UNSET || ts->mig_strategy == TIMESLICING_MIG_NONE) {
        snprintf(buf, n, "no MIG devices (flags.migStrategy is none)");
        return buf;
    } else {
        for (int i = 0; i < r->layout.n; i++) {
            const mig_profile *p = &g->profiles[r->layout.inst[i].profile];
            bool single = ts->mig_strategy == TIMESLICING_MIG_SINGLE;
            if (!cluster_resource_name_for(single ? NULL : p, false, res, sizeof res)) {
                continue;
            }
            advert_add(&ad, ts, res);
        }
    }
    size_t used = 0;
    snprintf(buf, n, "%s", ad.n ? "" : "nothing");
    for (int k = 0; k < ad.n && used + 1 < n; k++) {
        int w = snprintf(buf + used, n - used, "%s%d x %s", k ? " + " : "", ad.units[k], ad.name[k]);
        used += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* ---- mig-parted file ---- */

static int check_config(const gpu_catalog *cat, const gpu_type *g, const migparted_config *cfg,
                        const timeslicing_config *ts, const opts *o)
{
    arena *a = arena_create();
    diag *d = diag_create();
    char drv[16];
    int errors = 0, applied = 0, skipped = 0;
    cJSON *root = NULL, *arr = NULL;
    if (o->json) {
        root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "file", cfg->file);
        cJSON_AddStringToObject(root, "gpu", g->name);
        cJSON_AddNumberToObject(root, "gpu_index", o->gpu_index);
        cJSON_AddStringToObject(root, "driver", driver_text(o->driver, drv, sizeof drv));
        cJSON_AddStringToObject(root, "placement",
                                "largest profile first, each at its highest free allowed start");
        arr = cJSON_AddArrayToObject(root, "configs");
    } else {
        printf("%s on %s (GPU %d, driver %s); placement: largest first, highest free start\n",
               cfg->file, g->name, o->gpu_index, driver_text(o->driver, drv, sizeof drv));
    }
    for (size_t i = 0; i < cfg->n_configs; i++) {
        const migparted_named *nc = &cfg->configs[i];
        if (o->name && strcmp(o->name, nc->name)) {
            continue;
        }
        const char *missing = NULL;
        const char *status;
        char detail[600] = "";
        migparted_result r = {0};
        if (!o->name && migparted_not_for(g, nc, o->gpu_index, &missing)) {
            status = "not-for-gpu";
            snprintf(detail, sizeof detail, "not for this GPU: it has no profile %s", missing);
            skipped++;
        } else if (migparted_apply(cat, g, cfg, nc->name, o->gpu_index, o->driver, &r, d)) {
            status = "error";
            snprintf(detail, sizeof detail, "error (see below)");
            errors++;
        } else if (!r.selected) {
            status = "not-selected";
            snprintf(detail, sizeof detail, "no entry selects GPU %d of this type%s",
                     o->gpu_index, g->n_pci_ids ? "" : " (its PCI id is unsourced)");
            skipped++;
        } else if (!r.mig_enabled) {
            status = "mig-disabled";
            snprintf(detail, sizeof detail, "entry %d: MIG off, whole GPU", r.entry);
            applied++;
        } else {
            status = "applied";
            mig_layout sorted = r.layout;
            mig_layout_sort(&sorted);
            char text[512];
            int idle = mig_idle_compute_slices(g, r.layout.inst, r.layout.n);
            snprintf(detail, sizeof detail, "entry %d: %s%s", r.entry,
                     r.layout.n ? mig_layout_format(g, &sorted, text, sizeof text)
                                : "MIG on, no instances",
                     idle > 0 && r.layout.n ? " (compute slices idle: " : "");
            if (idle > 0 && r.layout.n) {
                size_t k = strlen(detail);
                snprintf(detail + k, sizeof detail - k, "%d)", idle);
            }
            applied++;
        }
        char adv[512] = "";
        bool show_adv = ts && (!strcmp(status, "applied") || !strcmp(status, "mig-disabled"));
        if (show_adv) {
            advertises(g, &r, ts, adv, sizeof adv);
        }
        if (o->json) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "name", nc->name);
            if (show_adv) {
                cJSON_AddStringToObject(c, "advertises", adv);
            }
            cJSON_AddStringToObject(c, "status", status);
            if (r.entry >= 0) {
                cJSON_AddNumberToObject(c, "entry", r.entry);
            }
            if (!strcmp(status, "applied")) {
                mig_layout sorted = r.layout;
                mig_layout_sort(&sorted);
                cJSON_AddItemToObject(c, "instances", instances_json(g, &sorted));
                cJSON_AddNumberToObject(c, "idle_compute_slices",
                                        mig_idle_compute_slices(g, r.layout.inst, r.layout.n));
            } else if (missing) {
                cJSON_AddStringToObject(c, "missing_profile", missing);
            }
            cJSON_AddItemToArray(arr, c);
        } else {
            printf("  %-20s %s\n", nc->name, detail);
            if (show_adv) {
                printf("  %-20s advertises %s\n", "", adv);
            }
        }
    }
    int status = CLI_EXIT_OK;
    if (o->name && applied + errors + skipped == 0) {
        migparted_result r;
        migparted_apply(cat, g, cfg, o->name, o->gpu_index, o->driver, &r, d);
        errors++;
    }
    if (o->json) {
        cJSON_AddNumberToObject(root, "applied", applied);
        cJSON_AddNumberToObject(root, "skipped", skipped);
        cJSON_AddNumberToObject(root, "errors", errors);
        print_json(root);
    } else {
        printf("configs applied=%d skipped=%d errors=%d\n", applied, skipped, errors);
    }
    if (errors) {
        diag_print(d, stderr);
        status = CLI_EXIT_INPUT;
    }
    diag_destroy(d);
    arena_destroy(a);
    return status;
}

/* Layouts of GPU g: every valid one, or a mig-parted config checked (under a device-plugin
 * sharing config when --sharing). Returns the exit status, messages printed. */
static int layouts_of(const gpu_catalog *cat, const gpu_type *g, const opts *o, arena *a, diag *d)
{
    if (g->compute_slices <= 0) {
        return cli_usage_error("layouts", "%s does not support MIG", g->name);
    }
    if (!o->mig_config) {
        return enumerate(g, o);
    }
    migparted_config cfg;
    int status =
        cli_load_status("layouts", o->mig_config, migparted_load(o->mig_config, a, &cfg, d), d);
    if (status != CLI_EXIT_OK) {
        return status;
    }
    timeslicing_config ts;
    if (o->sharing) {
        status = cli_load_status("layouts", o->sharing, timeslicing_load(o->sharing, a, &ts, d), d);
    }
    return status == CLI_EXIT_OK ? check_config(cat, g, &cfg, o->sharing ? &ts : NULL, o) : status;
}

int cmd_layouts(int argc, char **argv)
{
    opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    arena *a = arena_create();
    diag *d = diag_create();
    gpu_catalog cat;
    const gpu_type *g = NULL;
    int status = cli_load_catalog("layouts", o.catalog, o.gpu, a, d, &cat, &g);
    if (status == CLI_EXIT_OK) {
        status = layouts_of(&cat, g, &o, a, d);
    }
    diag_destroy(d);
    arena_destroy(a);
    return status;
}
