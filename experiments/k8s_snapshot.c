/* experiments/k8s_snapshot.c - kubectl nodes and pods -> node groups and pod classes (see
 * k8s_snapshot.h). */
#include "experiments/k8s_snapshot.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "experiments/fileio.h"
#include "experiments/jsonrd.h"
#include "sim/err.h"
#include "sim/xalloc.h"

#define LBL "nvidia.com/"
#define PATH_LEN 320
#define K8S_MAX_ITEMS 200000u

/* One GPU node as read, before grouping. */
typedef struct node_rec {
    const cJSON *item, *labels;
    const char *name;
    k8s_group g;      /* its would-be group (name, nodes unset) */
    const cJSON *adv; /* status.allocatable */
    size_t group;     /* index into the groups once grouped */
    uint32_t index;   /* its index within the group */
} node_rec;

typedef struct ctx {
    jsonrd r;
    const gpu_catalog *cat;
    arena *a;
    const char **sel_keys; /* label keys some pod selects on (borrowed from the tree) */
    size_t n_sel, cap_sel;
    node_rec *nodes;
    size_t n_nodes;
    k8s_snapshot *out;
} ctx;

/* ------------------------------------------------------------------ small helpers */

/* An arena copy of a string of the tree (the tree goes when the loader returns), or NULL. */
static const char *keep(ctx *c, const char *s)
{
    return s ? arena_strdup(c->a, s) : NULL;
}

static void bad(ctx *c, const char *path, const char *expect, const cJSON *v, const cJSON *in)
{
    jsonrd_bad(&c->r, path, expect, v, in);
}

static const char *str_at(const cJSON *o, const char *key)
{
    const cJSON *v = jsonrd_get(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The string at o.key, reported when present and not a string, or when missing and required. */
static const char *get_str(ctx *c, const cJSON *o, const char *base, const char *key,
                           bool required)
{
    const cJSON *v = jsonrd_get(o, key);
    if ((v || required) && !cJSON_IsString(v)) {
        char p[PATH_LEN];
        snprintf(p, sizeof p, "%s.%s", base, key);
        bad(c, p, "a string", v, o);
        return NULL;
    }
    return v ? v->valuestring : NULL;
}

bool k8s_quantity(const char *s, double scale, uint64_t *out)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {{"Ki", 1024.0},   {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                 {"Pi", 1125899906842624.0}, {"Ei", 1152921504606846976.0},
                 {"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
                 {"E", 1e18}, {"", 1.0}};
    if (!s || !*s || isspace((unsigned char)*s) || *s == '-') {
        return false;
    }
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || v < 0) {
        return false;
    }
    /* strtod reads "1E3" as a number with an exponent; "1E" alone is the exa suffix */
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!strcmp(end, units[i].suffix)) {
            double x = ceil(v * units[i].mult * scale - 1e-9);
            if (x > 1.8e19) {
                return false;
            }
            *out = x > 0 ? (uint64_t)x : 0;
            return true;
        }
    }
    return false;
}

/* A quantity at o.key (absent: 0); reported when not one. */
static uint64_t get_qty(ctx *c, const cJSON *o, const char *base, const char *key, double scale)
{
    const cJSON *v = jsonrd_get(o, key);
    uint64_t q = 0;
    if (v && !(cJSON_IsString(v) && k8s_quantity(v->valuestring, scale, &q)) &&
        !(cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e18 &&
          (q = (uint64_t)ceil(v->valuedouble * scale), true))) {
        char p[PATH_LEN];
        snprintf(p, sizeof p, "%s.%s", base, key);
        bad(c, p, "a Kubernetes quantity like 32Gi, 500m or 8", v, o);
    }
    return q;
}

/* An unsigned integer label value ("8"); reported when present and not one. */
static bool label_u32(ctx *c, const cJSON *labels, const char *base, const char *key,
                      uint32_t min, uint32_t *out)
{
    const cJSON *v = jsonrd_get(labels, key);
    if (!v) {
        return false;
    }
    const char *s = cJSON_IsString(v) ? v->valuestring : "";
    char *end = NULL;
    errno = 0;
    unsigned long x = isdigit((unsigned char)*s) ? strtoul(s, &end, 10) : 0;
    if (!end || *end || errno || x < min || x > 4096) {
        char p[PATH_LEN], e[64];
        snprintf(p, sizeof p, "%s.%s", base, key);
        snprintf(e, sizeof e, "an integer from %u to 4096 as a string", (unsigned)min);
        bad(c, p, e, v, labels);
        return false;
    }
    *out = (uint32_t)x;
    return true;
}

static void add_sel_key(ctx *c, const char *k)
{
    for (size_t i = 0; i < c->n_sel; i++) {
        if (!strcmp(c->sel_keys[i], k)) {
            return;
        }
    }
    if (c->n_sel == c->cap_sel) {
        c->cap_sel = c->cap_sel ? 2 * c->cap_sel : 16;
        c->sel_keys = xrealloc(c->sel_keys, c->cap_sel * sizeof *c->sel_keys, "label keys");
    }
    c->sel_keys[c->n_sel++] = k;
}

/* The required node affinity's terms (an array), or NULL. */
static const cJSON *affinity_terms(const cJSON *spec)
{
    const cJSON *na = jsonrd_get(jsonrd_get(spec, "affinity"), "nodeAffinity");
    return jsonrd_get(jsonrd_get(na, "requiredDuringSchedulingIgnoredDuringExecution"),
                      "nodeSelectorTerms");
}

/* ------------------------------------------------------------------ nodes */

/* The catalog type of a GPU feature discovery product label: "NVIDIA-A100-SXM4-40GB",
 * "A100-SXM4-40GB-MIG-1g.5gb", "Tesla-T4-SHARED", "NVIDIA-H100-80GB-HBM3". The sharing and MIG
 * suffixes and a vendor prefix go; then the name and its shorter prefixes (dropping trailing
 * '-' parts) are looked up. *mig_profile gets the MIG profile of a single-strategy label. */
static const gpu_type *product_type(const gpu_catalog *cat, const char *product, char *profile,
                                    size_t n)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", product);
    for (char *p = buf; *p; p++) {
        *p = *p == ' ' ? '-' : *p;
    }
    size_t len = strlen(buf);
    if (len > 7 && !strcmp(buf + len - 7, "-SHARED")) {
        buf[len - 7] = 0;
    }
    char *mig = strstr(buf, "-MIG-");
    profile[0] = 0;
    if (mig) {
        snprintf(profile, n, "%s", mig + 5);
        *mig = 0;
    }
    char *name = buf;
    if (!strncmp(name, "NVIDIA-", 7)) {
        name += 7;
    } else if (!strncmp(name, "Tesla-", 6)) {
        name += 6;
    }
    for (;;) {
        const gpu_type *t = gpu_catalog_find(cat, name);
        char *dash = strrchr(name, '-');
        if (t || !dash) {
            return t;
        }
        *dash = 0;
    }
}

static bool has_gpu_resource(const cJSON *adv)
{
    for (const cJSON *r = adv ? adv->child : NULL; r; r = r->next) {
        uint64_t q = 0;
        if (!strncmp(r->string, LBL, strlen(LBL)) && cJSON_IsString(r) &&
            k8s_quantity(r->valuestring, 1, &q) && q > 0) {
            return true;
        }
    }
    return false;
}

/* Read node item i into rec; false for a node without GPUs (left out) or a bad one. */
static bool read_node(ctx *c, const cJSON *it, const char *base, node_rec *rec)
{
    char p[PATH_LEN + 64], lp[PATH_LEN];
    const cJSON *meta = jsonrd_get(it, "metadata");
    snprintf(p, sizeof p, "%s.metadata", base);
    rec->item = it;
    rec->name = keep(c, get_str(c, meta, p, "name", true));
    const cJSON *labels = jsonrd_get(meta, "labels");
    snprintf(lp, sizeof lp, "%s.metadata.labels", base);
    if (labels && !cJSON_IsObject(labels)) {
        bad(c, lp, "an object of labels", labels, meta);
        return false;
    }
    rec->labels = labels;
    const cJSON *status = jsonrd_get(it, "status");
    rec->adv = jsonrd_get(status, "allocatable");
    if (!rec->adv) {
        rec->adv = jsonrd_get(status, "capacity");
    }
    const cJSON *product = jsonrd_get(labels, LBL "gpu.product");
    const cJSON *count = jsonrd_get(labels, LBL "gpu.count");
    if (!product && !count) {
        if (has_gpu_resource(rec->adv)) {
            diag_error(c->r.d, jsonrd_loc(&c->r, labels ? labels : meta), lp,
                       "a node that advertises nvidia.com/ resources without GPU labels; expected "
                       "GPU feature discovery's nvidia.com/gpu.product and nvidia.com/gpu.count, "
                       "got neither");
            c->r.errors++;
        } else {
            c->out->n_cpu_nodes++;
        }
        return false;
    }
    k8s_group *g = &rec->g;
    char prof[64];
    const gpu_type *t = NULL;
    if (!cJSON_IsString(product)) {
        snprintf(p, sizeof p, "%s." LBL "gpu.product", lp);
        bad(c, p, "a GPU product label like NVIDIA-A100-SXM4-40GB", product, labels);
    } else if (!(t = product_type(c->cat, product->valuestring, prof, sizeof prof))) {
        snprintf(p, sizeof p, "%s." LBL "gpu.product", lp);
        bad(c, p, "a GPU product of the catalog (slicesim layouts lists them), like "
                  "NVIDIA-A100-SXM4-40GB",
            product, labels);
    }
    uint32_t n_gpu = 0;
    if (!count) {
        snprintf(p, sizeof p, "%s." LBL "gpu.count", lp);
        bad(c, p, "the number of GPUs (GPU feature discovery's label)", NULL, labels);
    } else {
        label_u32(c, labels, lp, LBL "gpu.count", 1, &n_gpu);
    }
    if (!t || !n_gpu) {
        return false;
    }
    g->gpu = t->name;
    g->product = keep(c, product->valuestring);
    const char *strategy = str_at(labels, LBL "mig.strategy");
    const char *config = str_at(labels, LBL "mig.config");
    g->mig_strategy = !strategy || !strcmp(strategy, "none") ? K8S_MIG_NONE
                      : !strcmp(strategy, "single")           ? K8S_MIG_SINGLE
                      : !strcmp(strategy, "mixed")            ? K8S_MIG_MIXED
                                                              : -1;
    if (g->mig_strategy < 0) {
        snprintf(p, sizeof p, "%s." LBL "mig.strategy", lp);
        bad(c, p, "none, single or mixed", jsonrd_get(labels, LBL "mig.strategy"), labels);
        return false;
    }
    g->mig_config = config && strcmp(config, "all-disabled") ? keep(c, config) : NULL;
    if (g->mig_config && g->mig_strategy == K8S_MIG_NONE) {
        g->mig_strategy = K8S_MIG_MIXED; /* the GPU operator's default strategy is single, but a
                                          * node without the label advertises per profile only
                                          * under mixed: the resources decide below */
    }
    if (g->mig_config && g->mig_strategy == K8S_MIG_SINGLE) {
        /* gpu.count counts MIG devices: each GPU holds the profile's maximum under an all-<P>
         * config (the only layout the single strategy can advertise as one product) */
        const mig_profile *mp = prof[0] ? gpu_find_profile(t, prof) : NULL;
        if (!mp || n_gpu % (uint32_t)mp->max_instances) {
            snprintf(p, sizeof p, "%s." LBL "gpu.count", lp);
            bad(c, p,
                "under the single MIG strategy, a product naming its MIG profile "
                "(A100-SXM4-40GB-MIG-1g.5gb) and a count of whole GPUs' worth of its instances",
                count, labels);
            return false;
        }
        n_gpu /= (uint32_t)mp->max_instances;
    }
    g->gpus_per_node = n_gpu;
    g->replicas = 1;
    label_u32(c, labels, lp, LBL "gpu.replicas", 1, &g->replicas);
    const char *share = str_at(labels, LBL "gpu.sharing-strategy");
    if (g->replicas > 1) {
        g->sharing = share && !strcmp(share, "mps") ? K8S_SHARE_MPS : K8S_SHARE_TIMESLICE;
    }
    for (const cJSON *r = rec->adv ? rec->adv->child : NULL; r; r = r->next) {
        size_t n = strlen(r->string);
        g->rename_by_default |= n > 7 && !strcmp(r->string + n - 7, ".shared");
    }
    snprintf(p, sizeof p, "%s.status.allocatable", base);
    g->cpu_milli = get_qty(c, rec->adv, p, "cpu", 1000);
    g->mem_bytes = get_qty(c, rec->adv, p, "memory", 1);
    const cJSON *taints = jsonrd_get(jsonrd_get(it, "spec"), "taints");
    snprintf(p, sizeof p, "%s.spec.taints", base);
    if (taints && !cJSON_IsArray(taints)) {
        bad(c, p, "an array of taints", taints, it);
        return false;
    }
    size_t nt = (size_t)cJSON_GetArraySize(taints);
    g->taints = arena_calloc(c->a, nt ? nt : 1, sizeof *g->taints);
    int i = 0;
    for (const cJSON *tn = taints ? taints->child : NULL; tn; tn = tn->next, i++) {
        char tp[PATH_LEN + 80];
        snprintf(tp, sizeof tp, "%s[%d]", p, i);
        const char *key = get_str(c, tn, tp, "key", true);
        const char *effect = get_str(c, tn, tp, "effect", true);
        const char *value = get_str(c, tn, tp, "value", false);
        taint_effect e;
        if (effect && !taint_effect_parse(effect, &e)) {
            char ep[PATH_LEN + 96];
            snprintf(ep, sizeof ep, "%s.effect", tp);
            bad(c, ep, "NoSchedule, PreferNoSchedule or NoExecute", jsonrd_get(tn, "effect"), tn);
        } else if (key && effect) {
            g->taints[g->n_taints++] =
                (k8s_taint){keep(c, key), keep(c, value ? value : ""), keep(c, effect)};
        }
    }
    return c->r.errors == 0;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Same group: everything the simulation and the pods' constraints can see. */
static bool same_node(const ctx *c, const node_rec *a, const node_rec *b)
{
    const k8s_group *x = &a->g, *y = &b->g;
    if (x->gpu != y->gpu || x->gpus_per_node != y->gpus_per_node ||
        !same_str(x->mig_config, y->mig_config) || x->mig_strategy != y->mig_strategy ||
        x->sharing != y->sharing || x->replicas != y->replicas ||
        x->rename_by_default != y->rename_by_default || x->cpu_milli != y->cpu_milli ||
        x->mem_bytes != y->mem_bytes || x->n_taints != y->n_taints ||
        strcmp(x->product, y->product)) {
        return false;
    }
    for (size_t i = 0; i < x->n_taints; i++) {
        if (strcmp(x->taints[i].key, y->taints[i].key) ||
            strcmp(x->taints[i].value, y->taints[i].value) ||
            strcmp(x->taints[i].effect, y->taints[i].effect)) {
            return false;
        }
    }
    for (size_t i = 0; i < c->n_sel; i++) {
        if (!same_str(str_at(a->labels, c->sel_keys[i]), str_at(b->labels, c->sel_keys[i]))) {
            return false;
        }
    }
    return true;
}

static void group_nodes(ctx *c)
{
    k8s_snapshot *o = c->out;
    o->groups = arena_calloc(c->a, c->n_nodes ? c->n_nodes : 1, sizeof *o->groups);
    size_t *first = xcalloc(c->n_nodes ? c->n_nodes : 1, sizeof *first, "node groups");
    for (size_t i = 0; i < c->n_nodes; i++) {
        size_t g = 0;
        while (g < o->n_groups && !same_node(c, &c->nodes[first[g]], &c->nodes[i])) {
            g++;
        }
        if (g == o->n_groups) {
            first[o->n_groups] = i;
            o->groups[o->n_groups] = c->nodes[i].g;
            o->groups[o->n_groups].nodes = arena_calloc(c->a, c->n_nodes, sizeof(const char *));
            o->n_groups++;
        }
        k8s_group *grp = &o->groups[g];
        c->nodes[i].index = (uint32_t)grp->n_nodes;
        grp->nodes[grp->n_nodes++] = c->nodes[i].name;
        c->nodes[i].group = g;
    }
    /* a group's labels: those of its first node that every node of it has, with that value */
    for (size_t g = 0; g < o->n_groups; g++) {
        const cJSON *l0 = c->nodes[first[g]].labels;
        k8s_group *grp = &o->groups[g];
        grp->labels = arena_calloc(c->a, (size_t)cJSON_GetArraySize(l0) + 1, sizeof *grp->labels);
        for (const cJSON *l = l0 ? l0->child : NULL; l; l = l->next) {
            bool all = cJSON_IsString(l);
            for (size_t i = first[g] + 1; i < c->n_nodes && all; i++) {
                const char *v = c->nodes[i].group == g ? str_at(c->nodes[i].labels, l->string)
                                                       : l->valuestring;
                all = v && !strcmp(v, l->valuestring);
            }
            if (all) {
                grp->labels[grp->n_labels++] =
                    (taint_label){keep(c, l->string), keep(c, l->valuestring)};
            }
        }
    }
    free(first);
    /* names: the GPU type in lower case and the GPUs per node; "-2", "-3" for groups alike */
    for (size_t g = 0; g < o->n_groups; g++) {
        char base[96];
        snprintf(base, sizeof base, "%s-%ug", o->groups[g].gpu, o->groups[g].gpus_per_node);
        for (char *p = base; *p; p++) {
            *p = (char)tolower((unsigned char)*p);
        }
        size_t k = 1;
        for (size_t h = 0; h < g; h++) {
            char hb[96];
            snprintf(hb, sizeof hb, "%s-%ug", o->groups[h].gpu, o->groups[h].gpus_per_node);
            k += !strcasecmp(hb, base);
        }
        char name[128];
        if (k > 1) {
            snprintf(name, sizeof name, "%s-%zu", base, k);
        } else {
            snprintf(name, sizeof name, "%s", base);
        }
        o->groups[g].name = arena_strdup(c->a, name);
    }
}

/* ------------------------------------------------------------------ pods */

/* Does pod place p tolerate taint t of a node? */
static bool tolerates(const taint_pod *p, const k8s_taint *t)
{
    taint_entry x = {t->key, t->value, TAINT_NO_SCHEDULE};
    taint_effect_parse(t->effect, &x.effect);
    for (size_t i = 0; i < p->n_tolerations; i++) {
        if (taint_tolerates(&p->tolerations[i], &x)) {
            return true;
        }
    }
    return false;
}

/* One matchExpression against a node's labels. */
static bool expr_matches(const cJSON *e, const cJSON *labels)
{
    const char *key = str_at(e, "key"), *op = str_at(e, "operator");
    const char *have = key ? str_at(labels, key) : NULL;
    const cJSON *values = jsonrd_get(e, "values");
    bool in = false;
    for (const cJSON *v = values ? values->child : NULL; v && have; v = v->next) {
        in |= cJSON_IsString(v) && !strcmp(v->valuestring, have);
    }
    if (!op) {
        return false;
    }
    if (!strcmp(op, "In")) {
        return in;
    }
    if (!strcmp(op, "NotIn")) {
        return !in;
    }
    if (!strcmp(op, "Exists")) {
        return have != NULL;
    }
    if (!strcmp(op, "DoesNotExist")) {
        return have == NULL;
    }
    return false; /* Gt, Lt: refused when read (check_pod_selectors) */
}

/* May a pending pod (spec, its nodeSelector and tolerations p) use the nodes of record n? */
static bool pod_fits_node(const cJSON *spec, const taint_pod *p, const node_rec *n)
{
    for (size_t i = 0; i < n->g.n_taints; i++) {
        if (strcmp(n->g.taints[i].effect, "PreferNoSchedule") && !tolerates(p, &n->g.taints[i])) {
            return false;
        }
    }
    for (size_t i = 0; i < p->n_selector; i++) {
        const char *have = str_at(n->labels, p->selector[i].key);
        if (!have || strcmp(have, p->selector[i].value)) {
            return false;
        }
    }
    const cJSON *terms = affinity_terms(spec);
    if (!terms || !terms->child) {
        return true;
    }
    for (const cJSON *t = terms->child; t; t = t->next) { /* terms are ORed */
        bool all = true;
        const cJSON *exprs = jsonrd_get(t, "matchExpressions");
        for (const cJSON *e = exprs ? exprs->child : NULL; e && all; e = e->next) {
            all = expr_matches(e, n->labels);
        }
        if (all) {
            return true;
        }
    }
    return false;
}

/* Record the label keys a pod selects on, refusing what this reader cannot evaluate. */
static void note_selectors(ctx *c, const cJSON *spec, const char *base)
{
    char p[PATH_LEN];
    const cJSON *sel = jsonrd_get(spec, "nodeSelector");
    if (sel && !cJSON_IsObject(sel)) {
        snprintf(p, sizeof p, "%s.spec.nodeSelector", base);
        bad(c, p, "an object of labels", sel, spec);
    }
    for (const cJSON *s = sel && cJSON_IsObject(sel) ? sel->child : NULL; s; s = s->next) {
        add_sel_key(c, s->string);
    }
    const cJSON *terms = affinity_terms(spec);
    int ti = 0;
    for (const cJSON *t = terms ? terms->child : NULL; t; t = t->next, ti++) {
        const cJSON *exprs = jsonrd_get(t, "matchExpressions");
        int ei = 0;
        for (const cJSON *e = exprs ? exprs->child : NULL; e; e = e->next, ei++) {
            const char *key = str_at(e, "key"), *op = str_at(e, "operator");
            snprintf(p, sizeof p,
                     "%s.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                     "Execution.nodeSelectorTerms[%d].matchExpressions[%d]",
                     base, ti, ei);
            if (!key || !op ||
                (strcmp(op, "In") && strcmp(op, "NotIn") && strcmp(op, "Exists") &&
                 strcmp(op, "DoesNotExist"))) {
                char pp[PATH_LEN + 16];
                snprintf(pp, sizeof pp, "%s.operator", p);
                bad(c, pp, "a key and an operator In, NotIn, Exists or DoesNotExist",
                    jsonrd_get(e, "operator"), e);
                continue;
            }
            add_sel_key(c, key);
        }
    }
}

/* A pending pod's nodeSelector and tolerations into *p (arena), and their text into *key;
 * false after reporting a malformed one. */
static bool read_place(ctx *c, const cJSON *spec, const char *base, taint_pod *p,
                       const char **key)
{
    char path[PATH_LEN + 96];
    char text[2048];
    size_t w = 0;
    text[0] = 0;
    *p = (taint_pod){0};
    const cJSON *sel = jsonrd_get(spec, "nodeSelector");
    taint_label *ls = arena_calloc(c->a, (size_t)cJSON_GetArraySize(sel) + 1, sizeof *ls);
    for (const cJSON *x = cJSON_IsObject(sel) ? sel->child : NULL; x; x = x->next) {
        if (!cJSON_IsString(x)) {
            snprintf(path, sizeof path, "%s.spec.nodeSelector.%s", base, x->string);
            bad(c, path, "a label value (a string)", x, sel);
            return false;
        }
        ls[p->n_selector++] = (taint_label){keep(c, x->string), keep(c, x->valuestring)};
        w += (size_t)snprintf(text + w, w < sizeof text ? sizeof text - w : 0, "s:%s=%s;",
                              x->string, x->valuestring);
        w = w < sizeof text ? w : sizeof text - 1;
    }
    p->selector = ls;
    const cJSON *tols = jsonrd_get(spec, "tolerations");
    if (tols && !cJSON_IsArray(tols)) {
        snprintf(path, sizeof path, "%s.spec.tolerations", base);
        bad(c, path, "an array of tolerations", tols, spec);
        return false;
    }
    taint_toleration *ts = arena_calloc(c->a, (size_t)cJSON_GetArraySize(tols) + 1, sizeof *ts);
    int i = 0;
    for (const cJSON *x = tols ? tols->child : NULL; x; x = x->next, i++) {
        char tp[PATH_LEN + 64];
        snprintf(tp, sizeof tp, "%s.spec.tolerations[%d]", base, i);
        const char *k = get_str(c, x, tp, "key", false), *op = get_str(c, x, tp, "operator", false);
        const char *v = get_str(c, x, tp, "value", false), *e = get_str(c, x, tp, "effect", false);
        taint_effect eff = TAINT_ANY;
        if (op && strcmp(op, "Equal") && strcmp(op, "Exists")) {
            snprintf(path, sizeof path, "%s.operator", tp);
            bad(c, path, "Equal or Exists", jsonrd_get(x, "operator"), x);
            return false;
        }
        if (e && *e && !taint_effect_parse(e, &eff)) {
            snprintf(path, sizeof path, "%s.effect", tp);
            bad(c, path, "NoSchedule, PreferNoSchedule, NoExecute or empty (every effect)",
                jsonrd_get(x, "effect"), x);
            return false;
        }
        bool exists = op && !strcmp(op, "Exists");
        if ((!k || !*k) && !exists) {
            snprintf(path, sizeof path, "%s.operator", tp);
            bad(c, path, "Exists with an empty key (it tolerates every taint), or a key",
                jsonrd_get(x, "operator") ? jsonrd_get(x, "operator") : x, x);
            return false;
        }
        if (exists && v && *v) {
            snprintf(path, sizeof path, "%s.value", tp);
            bad(c, path, "no value with operator Exists (it matches any value)",
                jsonrd_get(x, "value"), x);
            return false;
        }
        ts[p->n_tolerations++] = (taint_toleration){keep(c, k ? k : ""), exists,
                                                    keep(c, exists || !v ? "" : v), eff};
        w += (size_t)snprintf(text + w, w < sizeof text ? sizeof text - w : 0, "t:%s|%d|%s|%d;",
                              k ? k : "", exists, v ? v : "", (int)eff);
        w = w < sizeof text ? w : sizeof text - 1;
    }
    p->tolerations = ts;
    *key = arena_strdup(c->a, text);
    return true;
}

/* Sum of the containers' requests (limits where a request is absent) of resource `name`... per
 * resource: writes the nvidia.com/ resource (one kind at most) and the CPU and memory. */
typedef struct pod_req {
    const char *resource;
    const cJSON *resource_at; /* where it is asked for */
    uint64_t count, cpu_milli, mem_bytes;
} pod_req;

static void read_requests(ctx *c, const cJSON *spec, const char *base, pod_req *q)
{
    const cJSON *cs = jsonrd_get(spec, "containers");
    int i = 0;
    for (const cJSON *ct = cs ? cs->child : NULL; ct; ct = ct->next, i++) {
        const cJSON *res = jsonrd_get(ct, "resources");
        const cJSON *req = jsonrd_get(res, "requests"), *lim = jsonrd_get(res, "limits");
        char p[PATH_LEN];
        snprintf(p, sizeof p, "%s.spec.containers[%d].resources.requests", base, i);
        q->cpu_milli += get_qty(c, req, p, "cpu", 1000);
        q->mem_bytes += get_qty(c, req, p, "memory", 1);
        for (int pass = 0; pass < 2; pass++) {
            const cJSON *src = pass ? lim : req;
            snprintf(p, sizeof p, "%s.spec.containers[%d].resources.%s", base, i,
                     pass ? "limits" : "requests");
            for (const cJSON *r = src ? src->child : NULL; r; r = r->next) {
                if (strncmp(r->string, LBL, strlen(LBL)) || (pass && jsonrd_get(req, r->string))) {
                    continue; /* not a GPU resource, or a limit beside its request */
                }
                uint64_t n = get_qty(c, src, p, r->string, 1);
                if (q->resource && strcmp(q->resource, r->string)) {
                    char rp[PATH_LEN + 64];
                    snprintf(rp, sizeof rp, "%s.%s", p, r->string);
                    char e[160];
                    snprintf(e, sizeof e, "one kind of nvidia.com/ resource per pod (it asks for "
                                          "%.60s too)",
                             q->resource);
                    bad(c, rp, e, r, src);
                    continue;
                }
                q->resource = r->string;
                q->resource_at = r;
                q->count += n;
            }
        }
    }
}

/* Does node n advertise resource r? */
static bool node_advertises(const node_rec *n, const char *r)
{
    uint64_t q = 0;
    const char *v = str_at(n->adv, r);
    return v && k8s_quantity(v, 1, &q) && q > 0;
}

/* Does some GPU node advertise resource r? */
static bool advertised(const ctx *c, const char *r)
{
    for (size_t i = 0; i < c->n_nodes; i++) {
        if (node_advertises(&c->nodes[i], r)) {
            return true;
        }
    }
    return false;
}

static void list_advertised(const ctx *c, char *out, size_t n)
{
    size_t w = 0;
    out[0] = 0;
    for (size_t i = 0; i < c->n_nodes; i++) {
        for (const cJSON *r = c->nodes[i].adv ? c->nodes[i].adv->child : NULL; r; r = r->next) {
            if (strncmp(r->string, LBL, strlen(LBL)) || (strstr(out, r->string) != NULL)) {
                continue;
            }
            int k = snprintf(out + w, n - w, "%s%s", w ? ", " : "", r->string);
            if (k < 0 || (size_t)k >= n - w) {
                return;
            }
            w += (size_t)k;
        }
    }
}

static void add_pod(ctx *c, const k8s_pod_class *key, const char *who, uint32_t node_index)
{
    k8s_snapshot *o = c->out;
    size_t i = 0;
    for (; i < o->n_classes; i++) {
        const k8s_pod_class *k = &o->classes[i];
        if (k->running == key->running && !strcmp(k->resource, key->resource) &&
            k->count == key->count && k->priority == key->priority &&
            same_str(k->priority_class, key->priority_class) && k->cpu_milli == key->cpu_milli &&
            k->mem_bytes == key->mem_bytes && same_str(k->groups, key->groups) &&
            same_str(k->place_key, key->place_key)) {
            break;
        }
    }
    if (i == o->n_classes) {
        o->classes[o->n_classes++] = *key;
        o->classes[i].pods = NULL;
        o->classes[i].node_index = NULL;
    }
    k8s_pod_class *k = &o->classes[i];
    const char **pods = arena_calloc(c->a, k->n_pods + 1, sizeof *pods);
    if (k->n_pods) {
        memcpy(pods, k->pods, k->n_pods * sizeof *pods);
    }
    if (k->running) { /* each pod's node, in pod order */
        uint32_t *ix = arena_calloc(c->a, k->n_pods + 1, sizeof *ix);
        if (k->n_pods) {
            memcpy(ix, k->node_index, k->n_pods * sizeof *ix);
        }
        ix[k->n_pods] = node_index;
        k->node_index = ix;
    }
    pods[k->n_pods++] = arena_strdup(c->a, who);
    k->pods = pods;
    o->n_pods++;
}

static void read_pod(ctx *c, const cJSON *it, const char *base)
{
    char p[PATH_LEN];
    const cJSON *meta = jsonrd_get(it, "metadata"), *spec = jsonrd_get(it, "spec");
    snprintf(p, sizeof p, "%s.metadata", base);
    const char *name = get_str(c, meta, p, "name", true);
    const char *ns = get_str(c, meta, p, "namespace", false);
    snprintf(p, sizeof p, "%s.status", base);
    const char *phase = get_str(c, jsonrd_get(it, "status"), p, "phase", false);
    if (!phase || (strcmp(phase, "Running") && strcmp(phase, "Pending"))) {
        c->out->n_pods_skipped++; /* finished (Succeeded, Failed) or unknown: holds nothing */
        return;
    }
    pod_req q = {0};
    read_requests(c, spec, base, &q);
    if (!q.resource || q.count == 0) {
        c->out->n_pods_skipped++; /* asks for no GPU */
        return;
    }
    if (!advertised(c, q.resource)) {
        char have[512], e[600];
        list_advertised(c, have, sizeof have);
        snprintf(e, sizeof e, "a resource some node advertises (%s)", have[0] ? have : "none");
        snprintf(p, sizeof p, "%s.spec.containers.resources.%s", base, q.resource);
        diag_error(c->r.d, jsonrd_loc(&c->r, q.resource_at), p,
                   "no node advertises it; expected %s, got '%s'", e, q.resource);
        c->r.errors++;
        return;
    }
    if (q.count > 64) {
        snprintf(p, sizeof p, "%s.spec.containers.resources.%s", base, q.resource);
        bad(c, p, "at most 64 units of a GPU resource per pod", q.resource_at, NULL);
        return;
    }
    k8s_pod_class k = {.running = !strcmp(phase, "Running"),
                       .resource = q.resource,
                       .count = (uint32_t)q.count,
                       .cpu_milli = q.cpu_milli,
                       .mem_bytes = q.mem_bytes};
    const cJSON *prio = jsonrd_get(spec, "priority");
    if (prio && (!cJSON_IsNumber(prio) || prio->valuedouble != floor(prio->valuedouble) ||
                 fabs(prio->valuedouble) > 2147483647.0)) {
        snprintf(p, sizeof p, "%s.spec.priority", base);
        bad(c, p, "a 32-bit integer", prio, spec);
        return;
    }
    k.priority = prio ? (int32_t)prio->valuedouble : 0;
    snprintf(p, sizeof p, "%s.spec", base);
    k.priority_class = get_str(c, spec, p, "priorityClassName", false);
    const char *node = get_str(c, spec, p, "nodeName", false);
    if (!node && !read_place(c, spec, base, &k.place, &k.place_key)) {
        return;
    }
    char groups[2048];
    size_t w = 0;
    groups[0] = 0;
    bool *allowed = xcalloc(c->out->n_groups ? c->out->n_groups : 1, sizeof *allowed, "groups");
    bool found_node = false;
    uint32_t node_index = 0;
    for (size_t i = 0; i < c->n_nodes; i++) {
        const node_rec *n = &c->nodes[i];
        if (node) {
            if (!strcmp(n->name, node)) {
                allowed[n->group] = found_node = true;
                node_index = n->index;
            }
        } else if (pod_fits_node(spec, &k.place, n) && node_advertises(n, q.resource)) {
            allowed[n->group] = true;
        }
    }
    for (size_t g = 0; g < c->out->n_groups; g++) {
        if (allowed[g] && w + strlen(c->out->groups[g].name) + 2 < sizeof groups) {
            w += (size_t)snprintf(groups + w, sizeof groups - w, "%s%s", w ? "|" : "",
                                  c->out->groups[g].name);
        }
    }
    free(allowed);
    if (node && !found_node) {
        snprintf(p, sizeof p, "%s.spec.nodeName", base);
        bad(c, p, "a GPU node of the snapshot (the pod asks for a GPU)",
            jsonrd_get(spec, "nodeName"), spec);
        return;
    }
    if (!groups[0]) {
        size_t offering = 0;
        for (size_t i = 0; i < c->n_nodes; i++) {
            offering += node_advertises(&c->nodes[i], q.resource);
        }
        snprintf(p, sizeof p, "%s.spec", base);
        diag_error(c->r.d, jsonrd_loc(&c->r, spec), p,
                   "no GPU node admits the pod; expected a node advertising %s whose "
                   "NoSchedule/NoExecute taints it tolerates and whose labels match its "
                   "nodeSelector and required node affinity, got %zu such node%s, none admitting",
                   q.resource, offering, offering == 1 ? "" : "s");
        c->r.errors++;
        return;
    }
    /* a bound pod: its node's group; a pending one: the groups only where its required node
     * affinity (which the scenario cannot state) narrows them */
    const cJSON *terms = affinity_terms(spec);
    k.groups = node || (terms && terms->child) ? arena_strdup(c->a, groups) : NULL;
    k.resource = keep(c, k.resource);
    k.priority_class = keep(c, k.priority_class);
    char who[PATH_LEN];
    snprintf(who, sizeof who, "%s/%s", ns ? ns : "default", name ? name : "?");
    add_pod(c, &k, who, node_index);
}

/* ------------------------------------------------------------------ the document */

/* The item's kind ("Node", "Pod"), checked with its apiVersion; NULL after reporting. */
static const char *item_kind(ctx *c, const cJSON *it, const char *base, const char *list_kind)
{
    char p[PATH_LEN];
    if (!cJSON_IsObject(it)) {
        bad(c, base, "an object of kind Node or Pod", it, NULL);
        return NULL;
    }
    const cJSON *kind = jsonrd_get(it, "kind");
    const char *k = cJSON_IsString(kind) ? kind->valuestring : NULL;
    if (!kind && strcmp(list_kind, "List")) { /* NodeList and PodList items may omit it */
        k = !strcmp(list_kind, "NodeList") ? "Node" : "Pod";
    }
    if (!k || (strcmp(k, "Node") && strcmp(k, "Pod"))) {
        snprintf(p, sizeof p, "%s.kind", base);
        bad(c, p, "Node or Pod (kubectl get nodes,pods -A -o json)", kind, it);
        return NULL;
    }
    const cJSON *api = jsonrd_get(it, "apiVersion");
    if (api && !(cJSON_IsString(api) && !strcmp(api->valuestring, "v1"))) {
        snprintf(p, sizeof p, "%s.apiVersion", base);
        bad(c, p, "v1 (the core API of Node and Pod)", api, it);
        return NULL;
    }
    return k;
}

static void read_doc(ctx *c, const cJSON *root)
{
    const cJSON *kind = jsonrd_get(root, "kind");
    const char *k = cJSON_IsString(kind) ? kind->valuestring : "";
    if (!cJSON_IsObject(root)) {
        bad(c, "", "an object: kubectl's List of nodes and pods", root, NULL);
        return;
    }
    if (strcmp(k, "List") && strcmp(k, "NodeList") && strcmp(k, "PodList")) {
        bad(c, "kind", "List, NodeList or PodList (kubectl get nodes,pods -A -o json)", kind, root);
        return;
    }
    const cJSON *items = jsonrd_get(root, "items");
    if (!cJSON_IsArray(items) || (size_t)cJSON_GetArraySize(items) > K8S_MAX_ITEMS) {
        bad(c, "items", "an array of at most 200000 nodes and pods", items, root);
        return;
    }
    size_t n_items = (size_t)cJSON_GetArraySize(items);
    const char **kinds = xcalloc(n_items ? n_items : 1, sizeof *kinds, "items");
    size_t i = 0;
    for (const cJSON *it = items->child; it; it = it->next, i++) {
        char base[64];
        snprintf(base, sizeof base, "items[%zu]", i);
        kinds[i] = item_kind(c, it, base, k);
        if (kinds[i] && !strcmp(kinds[i], "Pod")) {
            note_selectors(c, jsonrd_get(it, "spec"), base);
        }
    }
    c->nodes = xcalloc(n_items ? n_items : 1, sizeof *c->nodes, "nodes");
    i = 0;
    for (const cJSON *it = items->child; it; it = it->next, i++) {
        char base[64];
        snprintf(base, sizeof base, "items[%zu]", i);
        if (kinds[i] && !strcmp(kinds[i], "Node")) {
            node_rec *rec = &c->nodes[c->n_nodes];
            if (read_node(c, it, base, rec)) {
                c->n_nodes++;
            }
        }
    }
    c->out->n_gpu_nodes = c->n_nodes;
    if (c->r.errors == 0 && c->n_nodes == 0) {
        bad(c, "items", "at least one node with GPU feature discovery labels", items, root);
    }
    if (c->r.errors == 0) {
        group_nodes(c);
        c->out->classes = arena_calloc(c->a, n_items ? n_items : 1, sizeof *c->out->classes);
        i = 0;
        for (const cJSON *it = items->child; it; it = it->next, i++) {
            char base[64];
            snprintf(base, sizeof base, "items[%zu]", i);
            if (kinds[i] && !strcmp(kinds[i], "Pod")) {
                read_pod(c, it, base);
            }
        }
    }
    free(kinds);
}

int k8s_snapshot_load_buffer(const char *name, const char *buf, size_t len, const gpu_catalog *cat,
                             arena *a, diag *d, k8s_snapshot *out)
{
    *out = (k8s_snapshot){0};
    ctx c = {.r = {.file = name, .d = d, .text = buf, .len = len}, .cat = cat, .a = a, .out = out};
    cJSON *root = jsonrd_parse(&c.r);
    if (root) {
        jsonrd_check_duplicates(&c.r, root, "");
        if (c.r.errors == 0) {
            read_doc(&c, root);
        }
        cJSON_Delete(root);
    }
    /* every string kept points into the tree: copy them before it goes */
    int errors = c.r.errors;
    jsonrd_fini(&c.r);
    free(c.sel_keys);
    free(c.nodes);
    return errors ? SIM_EINPUT : 0;
}

int k8s_snapshot_load_file(const char *path, const gpu_catalog *cat, arena *a, diag *d,
                           k8s_snapshot *out)
{
    char *buf;
    size_t len;
    int rc = fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len);
    if (rc) {
        return rc;
    }
    rc = k8s_snapshot_load_buffer(path, buf, len, cat, a, d, out);
    free(buf);
    return rc;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int k8s_priority_rank(const k8s_snapshot *s, int32_t p)
{
    int32_t *v = xcalloc(s->n_classes ? s->n_classes : 1, sizeof *v, "priorities");
    for (size_t i = 0; i < s->n_classes; i++) {
        v[i] = s->classes[i].priority;
    }
    qsort(v, s->n_classes, sizeof *v, cmp_i32);
    int rank = 0;
    for (size_t i = 0; i < s->n_classes && v[i] < p; i++) {
        rank += i == 0 || v[i] != v[i - 1];
    }
    free(v);
    return rank;
}

size_t k8s_running_most(const k8s_snapshot *s)
{
    size_t most = 0;
    for (size_t c = 0; c < s->n_classes; c++) {
        most = s->classes[c].running && s->classes[c].n_pods > most ? s->classes[c].n_pods : most;
    }
    return most;
}
