/* model/policy/repart.c - the layout-policy registry (see repart.h). */
#include "model/policy/repart.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"

/* The registry, in name order. Add a layout policy here. */
extern const repart_ops repart_demand_ops;
extern const repart_ops repart_miso_ops;

static const repart_ops *const registry[] = {
    &repart_demand_ops,
    &repart_miso_ops,
};

#define N_REGISTRY (sizeof registry / sizeof registry[0])

const repart_ops *repart_find(const char *name)
{
    for (size_t i = 0; i < N_REGISTRY; i++) {
        if (!strcmp(registry[i]->name, name)) {
            return registry[i];
        }
    }
    return NULL;
}

/* ---- layouts ------------------------------------------------------------------------------- */

#define MAX_LAYOUTS 512

typedef struct collect_ctx {
    mig_layout *l;
    int n;
} collect_ctx;

static int collect(const mig_layout *l, void *ctx)
{
    collect_ctx *c = ctx;
    if (c->n < MAX_LAYOUTS) {
        c->l[c->n++] = *l;
    }
    return 0;
}

const mig_layout *repart_layouts_of(repart_layouts *c, const gpu_type *g, int *n)
{
    for (int i = 0; i < c->n_types; i++) {
        if (c->type[i] == g) {
            *n = c->n[i];
            return c->l[i];
        }
    }
    SIM_ASSERT(c->n_types < REPART_MAX_TYPES);
    int i = c->n_types++;
    collect_ctx cc = {xcalloc(MAX_LAYOUTS, sizeof(mig_layout), "layouts"), 0};
    mig_enum_opts o = {.driver = 0, .all_profiles = false, .maximal_only = true};
    mig_enumerate(g, &o, collect, &cc);
    c->type[i] = g;
    c->l[i] = cc.l;
    c->n[i] = cc.n;
    *n = cc.n;
    return cc.l;
}

void repart_layouts_fini(repart_layouts *c)
{
    for (int i = 0; i < c->n_types; i++) {
        free(c->l[i]);
    }
    memset(c, 0, sizeof *c);
}

uint32_t repart_layout_devices(const cluster_view *cv, gpu_id g, const mig_layout *l, dev_id *out)
{
    const gpu_type *t = pol_gpu_type(cv, g);
    pol_gpu pg;
    pol_gpu_get(cv, g, &pg);
    uint32_t k = 0;
    for (uint32_t i = 0; i < pg.n_devs; i++) {
        pol_device pd;
        pol_device_get(cv, pg.first_dev + i, &pd);
        if (!l) { /* the whole GPU, not its time-sliced candidate (nvidia.com/gpu.shared) */
            if (!pd.profile && !strcmp(pd.resource_name, "nvidia.com/gpu")) {
                out[k++] = pd.id;
            }
            continue;
        }
        for (int m = 0; pd.profile && m < l->n; m++) {
            if (pd.mig_start == l->inst[m].start &&
                !strcmp(pd.profile, t->profiles[l->inst[m].profile].name)) {
                out[k++] = pd.id;
            }
        }
    }
    return k;
}

/* ---- parameters ---------------------------------------------------------------------------- */

static bool parse_num(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v)) {
        return false;
    }
    *out = v;
    return true;
}

int repart_params(const param_set *params, const repart_key *keys, size_t n, void *state, diag *d)
{
    char names[256] = "";
    for (size_t k = 0, used = 0; k < n && used < sizeof names; k++) {
        int w = snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "", keys[k].key);
        used += w > 0 ? (size_t)w : 0;
    }
    int rc = 0;
    for (size_t i = 0; params && i < params->n; i++) {
        const pol_param *p = &params->items[i];
        char path[256];
        snprintf(path, sizeof path, "%s.%s", params->path ? params->path : "params", p->key);
        size_t k = 0;
        while (k < n && strcmp(keys[k].key, p->key) != 0) {
            k++;
        }
        if (k == n) {
            diag_error(d, p->at, path, "unknown parameter; expected one of [%s], got '%s'", names,
                       p->key);
            rc = SIM_EINPUT;
            continue;
        }
        double v;
        if (!parse_num(p->value, &v) || v < keys[k].lo || v > keys[k].hi ||
            (keys[k].is_bool && v != 0 && v != 1)) {
            diag_error(d, p->at, path, "bad value; expected a number from %g to %g, got '%s'",
                       keys[k].lo, keys[k].hi, p->value);
            rc = SIM_EINPUT;
            continue;
        }
        if (keys[k].is_bool) {
            *(bool *)((char *)state + keys[k].off) = v == 1;
        } else {
            *(double *)((char *)state + keys[k].off) = v;
        }
    }
    return rc;
}
