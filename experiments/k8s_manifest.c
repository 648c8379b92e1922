/* experiments/k8s_manifest.c - Job, Pod and PyTorchJob manifests -> job classes (see
 * k8s_manifest.h). */
#include "experiments/k8s_manifest.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "experiments/fileio.h"
#include "experiments/k8s_snapshot.h"
#include "experiments/yamlx.h"
#include "sim/err.h"
#include "sim/xalloc.h"

#define LBL "nvidia.com/"
#define PATH_LEN 384
#define K8S_MAX_CLASSES 10000

typedef struct mctx {
    const char *file; /* arena copy */
    yaml_document_t *doc;
    arena *a;
    diag *d;
    int errors;
    k8s_workload *out;
    size_t cap;
    /* priority classes defined, and the classes naming one (resolved at the end) */
    const char **pc_name;
    int32_t *pc_value;
    size_t n_pc, cap_pc;
    src_loc *pc_ref_at; /* per class, where it names its priority class */
    const char **pc_ref_path; /* per class, the field path there (doc[N]....priorityClassName) */
} mctx;

static yaml_node_t *node_of(const mctx *c, int id)
{
    return id ? yaml_document_get_node(c->doc, id) : NULL;
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *get(const mctx *c, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) {
        return NULL;
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = scalar(node_of(c, p->key));
        if (k && !strcmp(k, key)) {
            return node_of(c, p->value);
        }
    }
    return NULL;
}

static src_loc loc(const mctx *c, const yaml_node_t *n)
{
    return n ? yamlx_loc_from_mark(c->file, n->start_mark) : (src_loc){c->file, 0, 0};
}

static void bad(mctx *c, const yaml_node_t *at, const char *path, const char *expect,
                const yaml_node_t *got)
{
    const char *g = got ? scalar(got) : NULL;
    diag_error(c->d, loc(c, at), path, "expected %s, got '%s'", expect,
               g     ? g
               : got ? yamlx_kind(got)
                     : "nothing");
    c->errors++;
}

/* Duration "45m" (ms, s, m, h, d), rate "2/h" (/s, /min, /m, /h, /d), count "10". */
static bool number_unit(const char *s, const char *const *units)
{
    errno = 0;
    char *end;
    double v = s ? strtod(s, &end) : 0;
    if (!s || end == s || errno || !(v > 0 || (units == NULL && v == 0)) ||
        isspace((unsigned char)*s)) {
        return false;
    }
    if (!units) { /* an integer count: cast only what fits (1e15 jobs is past any horizon) */
        return !*end && v <= 1e15 && v == (double)(uint64_t)v;
    }
    for (const char *const *u = units; *u; u++) {
        if (!strcmp(end, *u)) {
            return true;
        }
    }
    return false;
}

static const char *const dur_units[] = {"ms", "s", "m", "h", "d", NULL};
static const char *const rate_units[] = {"/s", "/min", "/m", "/h", "/d", NULL};

static const char *annotation(mctx *c, const yaml_node_t *meta, const char *base, const char *key,
                              const char *const *units, const char *expect)
{
    const yaml_node_t *ann = get(c, meta, "annotations");
    char k[64];
    snprintf(k, sizeof k, "slicesim.io/%s", key);
    const yaml_node_t *v = get(c, ann, k);
    if (!v) {
        return NULL;
    }
    const char *s = scalar(v);
    if (!number_unit(s, units)) {
        char p[PATH_LEN];
        snprintf(p, sizeof p, "%s.metadata.annotations.%s", base, k);
        bad(c, v, p, expect, v);
        return NULL;
    }
    return arena_strdup(c->a, s);
}

/* A pod's GPU request (one nvidia.com/ resource), CPU and memory. */
typedef struct podreq {
    const char *resource;
    uint64_t count, cpu_milli, mem_bytes;
    const yaml_node_t *at;
} podreq;

static uint64_t qty(mctx *c, const yaml_node_t *v, const char *path, double scale)
{
    uint64_t q = 0;
    if (v && !k8s_quantity(scalar(v), scale, &q)) {
        bad(c, v, path, "a Kubernetes quantity like 32Gi, 500m or 8", v);
    }
    return q;
}

static void read_podspec(mctx *c, const yaml_node_t *spec, const char *base, podreq *q)
{
    *q = (podreq){0};
    const yaml_node_t *cs = get(c, spec, "containers");
    char p[PATH_LEN + 64];
    if (!cs || cs->type != YAML_SEQUENCE_NODE) {
        snprintf(p, sizeof p, "%s.containers", base);
        bad(c, cs ? cs : spec, p, "a list of containers", cs);
        return;
    }
    int i = 0;
    for (yaml_node_item_t *it = cs->data.sequence.items.start; it < cs->data.sequence.items.top;
         it++, i++) {
        const yaml_node_t *res = get(c, node_of(c, *it), "resources");
        const yaml_node_t *req = get(c, res, "requests"), *lim = get(c, res, "limits");
        snprintf(p, sizeof p, "%s.containers[%d].resources.requests.cpu", base, i);
        q->cpu_milli += qty(c, get(c, req, "cpu"), p, 1000);
        snprintf(p, sizeof p, "%s.containers[%d].resources.requests.memory", base, i);
        q->mem_bytes += qty(c, get(c, req, "memory"), p, 1);
        for (int pass = 0; pass < 2; pass++) {
            const yaml_node_t *src = pass ? lim : req;
            if (!src || src->type != YAML_MAPPING_NODE) {
                continue;
            }
            for (yaml_node_pair_t *pr = src->data.mapping.pairs.start;
                 pr < src->data.mapping.pairs.top; pr++) {
                const char *k = scalar(node_of(c, pr->key));
                if (!k || strncmp(k, LBL, strlen(LBL)) || (pass && get(c, req, k))) {
                    continue;
                }
                snprintf(p, sizeof p, "%s.containers[%d].resources.%s.%s", base, i,
                         pass ? "limits" : "requests", k);
                uint64_t n = qty(c, node_of(c, pr->value), p, 1);
                if (q->resource && strcmp(q->resource, k)) {
                    bad(c, node_of(c, pr->key), p, "one kind of nvidia.com/ resource per pod",
                        node_of(c, pr->key));
                    continue;
                }
                q->resource = k;
                q->at = node_of(c, pr->value);
                q->count += n;
            }
        }
    }
}

static k8s_job_class *new_class(mctx *c, const yaml_node_t *meta, const char *base,
                                const char *kind)
{
    k8s_workload *w = c->out;
    if (w->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        k8s_job_class *nc = arena_calloc(c->a, c->cap, sizeof *nc);
        src_loc *nl = xrealloc(c->pc_ref_at, c->cap * sizeof *nl, "classes");
        const char **np = xrealloc(c->pc_ref_path, c->cap * sizeof *np, "classes");
        if (w->n) {
            memcpy(nc, w->classes, w->n * sizeof *nc);
        }
        w->classes = nc;
        c->pc_ref_at = nl;
        c->pc_ref_path = np;
    }
    k8s_job_class *k = &w->classes[w->n];
    memset(k, 0, sizeof *k);
    c->pc_ref_at[w->n] = (src_loc){0};
    c->pc_ref_path[w->n] = NULL;
    const yaml_node_t *name = get(c, meta, "name");
    char p[PATH_LEN];
    snprintf(p, sizeof p, "%s.metadata.name", base);
    if (!scalar(name) || !*scalar(name)) {
        bad(c, name ? name : meta, p, "the object's name", name);
        return NULL;
    }
    k->name = arena_strdup(c->a, scalar(name));
    k->kind = kind;
    k->file = c->file;
    k->workers = 1;
    k->jobs = 1;
    k->rate = annotation(c, meta, base, "rate", rate_units, "a rate like 2/h (per s, min, h, d)");
    k->interval = annotation(c, meta, base, "interval", dur_units, "a duration like 30m");
    k->count = annotation(c, meta, base, "count", NULL, "an integer like 10 (0: to the horizon)");
    k->duration = annotation(c, meta, base, "duration", dur_units, "a duration like 45m");
    const yaml_node_t *prof = get(c, get(c, meta, "annotations"), "slicesim.io/profile");
    k->profile = scalar(prof) ? arena_strdup(c->a, scalar(prof)) : NULL;
    return k;
}

/* The class's priority class (priorityClassName of its pod spec, at field path `path`). */
static void note_priority(mctx *c, k8s_job_class *k, const yaml_node_t *podspec,
                          const char *path)
{
    const yaml_node_t *pc = get(c, podspec, "priorityClassName");
    if (scalar(pc)) {
        k->priority_class = arena_strdup(c->a, scalar(pc));
        c->pc_ref_at[c->out->n] = loc(c, pc);
        char p[PATH_LEN + 32];
        snprintf(p, sizeof p, "%s.priorityClassName", path);
        c->pc_ref_path[c->out->n] = arena_strdup(c->a, p);
    }
}

static const char *const effect_expect = "NoSchedule, PreferNoSchedule, NoExecute or empty";

/* One toleration (mapping t at path p) into *out; false after reporting a malformed one. */
static bool read_toleration(mctx *c, const yaml_node_t *t, const char *p, taint_toleration *out)
{
    char fp[PATH_LEN + 256];
    if (!t || t->type != YAML_MAPPING_NODE) {
        bad(c, t, p, "a toleration {key, operator, value, effect}", t);
        return false;
    }
    const yaml_node_t *kn = get(c, t, "key"), *on = get(c, t, "operator");
    const yaml_node_t *vn = get(c, t, "value"), *en = get(c, t, "effect");
    const char *k = scalar(kn), *op = scalar(on), *v = scalar(vn), *e = scalar(en);
    const yaml_node_t *fields[] = {kn, on, vn, en};
    static const char *const names[] = {"key", "operator", "value", "effect"};
    for (int i = 0; i < 4; i++) {
        if (fields[i] && !scalar(fields[i])) {
            snprintf(fp, sizeof fp, "%s.%s", p, names[i]);
            bad(c, fields[i], fp, "a string", fields[i]);
            return false;
        }
    }
    taint_effect eff = TAINT_ANY;
    bool exists = op && !strcmp(op, "Exists");
    if (op && !exists && strcmp(op, "Equal")) {
        snprintf(fp, sizeof fp, "%s.operator", p);
        bad(c, on, fp, "Equal or Exists", on);
        return false;
    }
    if (e && *e && !taint_effect_parse(e, &eff)) {
        snprintf(fp, sizeof fp, "%s.effect", p);
        bad(c, en, fp, effect_expect, en);
        return false;
    }
    if ((!k || !*k) && !exists) {
        snprintf(fp, sizeof fp, "%s.operator", p);
        bad(c, on ? on : t, fp, "Exists with an empty key (it tolerates every taint), or a key",
            on);
        return false;
    }
    if (exists && v && *v) {
        snprintf(fp, sizeof fp, "%s.value", p);
        bad(c, vn, fp, "no value with operator Exists (it matches any value)", vn);
        return false;
    }
    *out = (taint_toleration){arena_strdup(c->a, k ? k : ""), exists,
                              arena_strdup(c->a, exists || !v ? "" : v), eff};
    return true;
}

/* The pod spec's nodeSelector and tolerations (ps at field path `path`) into *out. */
static void read_place(mctx *c, const yaml_node_t *ps, const char *path, taint_pod *out)
{
    *out = (taint_pod){0};
    char p[PATH_LEN + 64];
    const yaml_node_t *sel = get(c, ps, "nodeSelector");
    snprintf(p, sizeof p, "%s.nodeSelector", path);
    if (sel && sel->type != YAML_MAPPING_NODE) {
        bad(c, sel, p, "a mapping of label keys to values", sel);
    } else if (sel) {
        size_t n = (size_t)(sel->data.mapping.pairs.top - sel->data.mapping.pairs.start);
        taint_label *ls = arena_calloc(c->a, n + 1, sizeof *ls);
        for (yaml_node_pair_t *pr = sel->data.mapping.pairs.start;
             pr < sel->data.mapping.pairs.top; pr++) {
            const char *k = scalar(node_of(c, pr->key)), *v = scalar(node_of(c, pr->value));
            if (!k || !*k || !v) {
                char lp[PATH_LEN + 128];
                snprintf(lp, sizeof lp, "%s.%s", p, k ? k : "?");
                bad(c, k ? node_of(c, pr->value) : node_of(c, pr->key), lp,
                    "a label key and a string value", k ? node_of(c, pr->value) : NULL);
                continue;
            }
            ls[out->n_selector++] =
                (taint_label){arena_strdup(c->a, k), arena_strdup(c->a, v)};
        }
        out->selector = ls;
    }
    const yaml_node_t *tols = get(c, ps, "tolerations");
    snprintf(p, sizeof p, "%s.tolerations", path);
    if (tols && tols->type != YAML_SEQUENCE_NODE) {
        bad(c, tols, p, "a list of tolerations", tols);
    } else if (tols) {
        size_t n = (size_t)(tols->data.sequence.items.top - tols->data.sequence.items.start);
        taint_toleration *ts = arena_calloc(c->a, n + 1, sizeof *ts);
        int i = 0;
        for (yaml_node_item_t *it = tols->data.sequence.items.start;
             it < tols->data.sequence.items.top; it++, i++) {
            char tp[PATH_LEN + 96];
            snprintf(tp, sizeof tp, "%s[%d]", p, i);
            out->n_tolerations += read_toleration(c, node_of(c, *it), tp, &ts[out->n_tolerations]);
        }
        out->tolerations = ts;
    }
}

/* Keep class k when it asks for a GPU (and nothing went wrong reading it). */
static void keep(mctx *c, k8s_job_class *k, const podreq *q, const char *base,
                 const yaml_node_t *at)
{
    if (!q->resource || q->count == 0) {
        c->out->n_skipped++;
        return;
    }
    if (q->count > 64) {
        char p[PATH_LEN];
        snprintf(p, sizeof p, "%s: %s", base, q->resource);
        bad(c, q->at ? q->at : at, p, "at most 64 units of a GPU resource per pod", q->at);
        return;
    }
    k->resource = arena_strdup(c->a, q->resource);
    k->per_worker = (uint32_t)q->count;
    k->cpu_milli = q->cpu_milli;
    k->mem_bytes = q->mem_bytes;
    c->out->n++;
}

static void read_pytorchjob(mctx *c, const yaml_node_t *obj, const char *base)
{
    const yaml_node_t *meta = get(c, obj, "metadata"), *spec = get(c, obj, "spec");
    k8s_job_class *k = new_class(c, meta, base, "PyTorchJob");
    const yaml_node_t *reps = get(c, spec, "pytorchReplicaSpecs");
    char p[PATH_LEN + 64];
    snprintf(p, sizeof p, "%s.spec.pytorchReplicaSpecs", base);
    if (!k || !reps || reps->type != YAML_MAPPING_NODE) {
        if (k) {
            bad(c,
                reps   ? reps
                : spec ? spec
                       : obj,
                p, "a mapping of Master and Worker replicas", reps);
        }
        return;
    }
    podreq all = {0};
    uint64_t workers = 0;
    const yaml_node_t *first_spec = NULL;
    char first_path[PATH_LEN + 128] = "";
    const char *first_type = "";
    for (yaml_node_pair_t *pr = reps->data.mapping.pairs.start; pr < reps->data.mapping.pairs.top;
         pr++) {
        const char *type = scalar(node_of(c, pr->key));
        const yaml_node_t *rs = node_of(c, pr->value);
        char rp[PATH_LEN + 96];
        snprintf(rp, sizeof rp, "%s.%s", p, type ? type : "?");
        if (!type || (strcmp(type, "Master") && strcmp(type, "Worker"))) {
            bad(c, node_of(c, pr->key), rp, "Master or Worker (pytorchReplicaSpecs)",
                node_of(c, pr->key));
            continue;
        }
        const yaml_node_t *n = get(c, rs, "replicas");
        uint64_t r = 1;
        char np[PATH_LEN + 128];
        snprintf(np, sizeof np, "%s.replicas", rp);
        if (n &&
            (!number_unit(scalar(n), NULL) || !(r = strtoull(scalar(n), NULL, 10)) || r > 4096)) {
            bad(c, n, np, "an integer from 1 to 4096", n);
            continue;
        }
        const yaml_node_t *ps = get(c, get(c, rs, "template"), "spec");
        snprintf(np, sizeof np, "%s.template.spec", rp);
        podreq q;
        read_podspec(c, ps, np, &q);
        taint_pod pl;
        read_place(c, ps, np, &pl);
        if (!first_spec) {
            first_spec = ps;
            snprintf(first_path, sizeof first_path, "%s", np);
            first_type = type;
            k->place = pl;
        } else if (!taint_pod_same(&pl, &k->place)) {
            diag_error(c->d, loc(c, ps), np,
                       "expected every replica with the same nodeSelector and tolerations (the "
                       "workers of one job are placed alike), got other ones than %s's",
                       first_type);
            c->errors++;
            continue;
        }
        if (workers && (q.count != all.count ||
                        (q.resource && all.resource && strcmp(q.resource, all.resource)))) {
            bad(c, q.at ? q.at : ps, np,
                "every replica asking for the same GPUs (the workers of one data-parallel job)",
                q.at);
            continue;
        }
        all.resource = q.resource;
        all.count = q.count;
        all.at = q.at;
        all.cpu_milli = q.cpu_milli > all.cpu_milli ? q.cpu_milli : all.cpu_milli;
        all.mem_bytes = q.mem_bytes > all.mem_bytes ? q.mem_bytes : all.mem_bytes;
        workers += r;
    }
    const yaml_node_t *nproc = get(c, spec, "nprocPerNode");
    k->nproc = scalar(nproc) ? arena_strdup(c->a, scalar(nproc)) : NULL;
    k->workers = (uint32_t)(workers ? workers : 1);
    note_priority(c, k, first_spec, first_path);
    keep(c, k, &all, base, obj);
}

static void read_job_or_pod(mctx *c, const yaml_node_t *obj, const char *base, bool job)
{
    const yaml_node_t *meta = get(c, obj, "metadata"), *spec = get(c, obj, "spec");
    k8s_job_class *k = new_class(c, meta, base, job ? "Job" : "Pod");
    if (!k) {
        return;
    }
    const yaml_node_t *ps = job ? get(c, get(c, spec, "template"), "spec") : spec;
    char p[PATH_LEN];
    snprintf(p, sizeof p, "%s.spec%s", base, job ? ".template.spec" : "");
    if (job) {
        const yaml_node_t *comp = get(c, spec, "completions");
        if (comp &&
            (!number_unit(scalar(comp), NULL) || !(k->jobs = strtoull(scalar(comp), NULL, 10)))) {
            char cp[PATH_LEN + 16];
            snprintf(cp, sizeof cp, "%s.spec.completions", base);
            bad(c, comp, cp, "a positive integer", comp);
            return;
        }
    }
    podreq q;
    read_podspec(c, ps, p, &q);
    read_place(c, ps, p, &k->place);
    note_priority(c, k, ps, p);
    keep(c, k, &q, base, obj);
}

static void read_priority_class(mctx *c, const yaml_node_t *obj, const char *base)
{
    const char *name = scalar(get(c, get(c, obj, "metadata"), "name"));
    const yaml_node_t *v = get(c, obj, "value");
    char *end = NULL;
    long x = scalar(v) ? strtol(scalar(v), &end, 10) : 0;
    if (!name || !scalar(v) || *end || x < -2147483647L || x > 2147483647L) {
        char p[PATH_LEN];
        snprintf(p, sizeof p, "%s.value", base);
        bad(c, v ? v : obj, p, "a PriorityClass with a name and an integer value", v);
        return;
    }
    if (c->n_pc == c->cap_pc) {
        c->cap_pc = c->cap_pc ? 2 * c->cap_pc : 8;
        c->pc_name = xrealloc(c->pc_name, c->cap_pc * sizeof *c->pc_name, "priority classes");
        c->pc_value = xrealloc(c->pc_value, c->cap_pc * sizeof *c->pc_value, "priority classes");
    }
    c->pc_name[c->n_pc] = arena_strdup(c->a, name);
    c->pc_value[c->n_pc++] = (int32_t)x;
    c->out->n_priority_classes++;
}

static void read_object(mctx *c, const yaml_node_t *obj, const char *base)
{
    const yaml_node_t *api = get(c, obj, "apiVersion"), *kind = get(c, obj, "kind");
    const char *a = scalar(api), *k = scalar(kind);
    static const char *const known =
        "batch/v1 Job, v1 Pod, kubeflow.org/v1 PyTorchJob or scheduling.k8s.io/v1 PriorityClass";
    char p[PATH_LEN];
    if (!obj || obj->type != YAML_MAPPING_NODE) {
        bad(c, obj, base, "a Kubernetes object (a mapping with apiVersion and kind)", obj);
        return;
    }
    if (!k || (strcmp(k, "Job") && strcmp(k, "Pod") && strcmp(k, "PyTorchJob") &&
               strcmp(k, "PriorityClass"))) {
        snprintf(p, sizeof p, "%s.kind", base);
        bad(c, kind ? kind : obj, p, known, kind);
        return;
    }
    const char *want = !strcmp(k, "Job")          ? "batch/v1"
                       : !strcmp(k, "Pod")        ? "v1"
                       : !strcmp(k, "PyTorchJob") ? "kubeflow.org/v1"
                                                  : "scheduling.k8s.io/v1";
    if (!a || strcmp(a, want)) {
        snprintf(p, sizeof p, "%s.apiVersion", base);
        char e[96];
        snprintf(e, sizeof e, "%s for kind %s", want, k);
        bad(c, api ? api : obj, p, e, api);
        return;
    }
    if (c->out->n >= K8S_MAX_CLASSES) {
        bad(c, obj, base, "at most 10000 job classes", obj);
        return;
    }
    if (!strcmp(k, "PyTorchJob")) {
        read_pytorchjob(c, obj, base);
    } else if (!strcmp(k, "PriorityClass")) {
        read_priority_class(c, obj, base);
    } else {
        read_job_or_pod(c, obj, base, !strcmp(k, "Job"));
    }
}

static void read_text(mctx *c, const char *buf, size_t len, size_t *n_docs)
{
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    for (;;) {
        yaml_document_t doc;
        if (!yaml_parser_load(&parser, &doc)) {
            diag_error(c->d, yamlx_loc_from_mark(c->file, parser.problem_mark), NULL,
                       "invalid YAML (%s); expected Kubernetes manifests, got text libyaml "
                       "cannot read",
                       parser.problem ? parser.problem : "syntax error");
            c->errors++;
            break;
        }
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (!root) {
            yaml_document_delete(&doc);
            break;
        }
        c->doc = &doc;
        char base[32];
        snprintf(base, sizeof base, "doc[%zu]", (*n_docs)++);
        if (root->type != YAML_SCALAR_NODE || (scalar(root) && *scalar(root))) {
            read_object(c, root, base);
        }
        yaml_document_delete(&doc);
        c->doc = NULL;
        if (c->errors >= DIAG_MAX_ERRORS) {
            break;
        }
    }
    yaml_parser_delete(&parser);
}

/* Every class naming a priority class gets its value; one nobody defines is an error. */
static void resolve_priorities(mctx *c)
{
    for (size_t i = 0; i < c->out->n; i++) {
        k8s_job_class *k = &c->out->classes[i];
        if (!k->priority_class) {
            continue;
        }
        size_t j = 0;
        while (j < c->n_pc && strcmp(c->pc_name[j], k->priority_class)) {
            j++;
        }
        if (j < c->n_pc) {
            k->priority = c->pc_value[j];
        } else {
            diag_error(c->d, c->pc_ref_at[i], c->pc_ref_path[i],
                       "no PriorityClass of that name among the manifests; expected one defined "
                       "beside them (scheduling.k8s.io/v1, with its value), got '%s'",
                       k->priority_class);
            c->errors++;
        }
    }
}

static int finish(mctx *c)
{
    if (c->errors == 0) {
        resolve_priorities(c);
    }
    free(c->pc_name);
    free(c->pc_value);
    free(c->pc_ref_at);
    free(c->pc_ref_path);
    return c->errors ? SIM_EINPUT : 0;
}

int k8s_manifests_load_buffer(const char *name, const char *buf, size_t len, arena *a, diag *d,
                              k8s_workload *out)
{
    *out = (k8s_workload){0};
    mctx c = {.file = arena_strdup(a, name), .a = a, .d = d, .out = out};
    size_t n_docs = 0;
    read_text(&c, buf, len, &n_docs);
    return finish(&c);
}

int k8s_manifests_load(const char *const *paths, size_t n_paths, arena *a, diag *d,
                       k8s_workload *out)
{
    *out = (k8s_workload){0};
    mctx c = {.a = a, .d = d, .out = out};
    for (size_t i = 0; i < n_paths; i++) {
        char *buf;
        size_t len;
        int rc = fileio_read_all(paths[i], FILEIO_MAX_BYTES, &buf, &len);
        if (rc) {
            int e = errno;
            diag_error(d, (src_loc){paths[i], 0, 0}, NULL,
                       "cannot read the manifest (%s); expected a readable YAML file", strerror(e));
            finish(&c);
            errno = e;
            return rc;
        }
        c.file = arena_strdup(a, paths[i]);
        size_t n_docs = 0;
        read_text(&c, buf, len, &n_docs);
        free(buf);
    }
    return finish(&c);
}
