/* experiments/sweep.c - the `sweep:` section of a scenario (see sweep.h). */
#include "experiments/sweep.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "experiments/cfg.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "sim/xalloc.h"

#define LABEL_LEN 160

/* Append printf text to buf (len bytes, *used so far); silently truncated at len - 1. */
static void put(char *buf, size_t len, size_t *used, const char *s, size_t n)
{
    if (*used + 1 >= len) {
        return;
    }
    size_t room = len - 1 - *used;
    n = n < room ? n : room;
    memcpy(buf + *used, s, n);
    *used += n;
    buf[*used] = '\0';
}

/* A node as one-line YAML flow text: scalars plain (double-quoted when they hold flow
 * indicators), mappings {k: v, ...}, sequences [a, b]. */
static void flow(yamlx_doc *doc, const yaml_node_t *n, char *buf, size_t len, size_t *used,
                 int depth)
{
    if (!n || depth > 16) {
        put(buf, len, used, "...", 3);
        return;
    }
    if (n->type == YAML_SCALAR_NODE) {
        const char *s = yamlx_scalar(n);
        bool quote = s[0] == '\0' || strpbrk(s, ",:{}[]#\"'\n") != NULL;
        if (quote) {
            put(buf, len, used, "\"", 1);
            for (; *s; s++) {
                if (*s == '"' || *s == '\\') {
                    put(buf, len, used, "\\", 1);
                }
                put(buf, len, used, *s == '\n' ? " " : s, 1);
            }
            put(buf, len, used, "\"", 1);
        } else {
            put(buf, len, used, s, strlen(s));
        }
    } else if (n->type == YAML_SEQUENCE_NODE) {
        put(buf, len, used, "[", 1);
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            if (it != n->data.sequence.items.start) {
                put(buf, len, used, ", ", 2);
            }
            flow(doc, yamlx_node(doc, *it), buf, len, used, depth + 1);
        }
        put(buf, len, used, "]", 1);
    } else if (n->type == YAML_MAPPING_NODE) {
        put(buf, len, used, "{", 1);
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            if (p != n->data.mapping.pairs.start) {
                put(buf, len, used, ", ", 2);
            }
            flow(doc, yamlx_node(doc, p->key), buf, len, used, depth + 1);
            put(buf, len, used, ": ", 2);
            flow(doc, yamlx_node(doc, p->value), buf, len, used, depth + 1);
        }
        put(buf, len, used, "}", 1);
    }
}

/* `values:` a non-empty sequence of any nodes; their ids and labels are kept, the nodes
 * themselves are walked by the scenario's schema at each point. */
static bool parse_values(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                         void *dst)
{
    (void)f;
    sweep_axis *ax = dst;
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    size_t n = node->type == YAML_SEQUENCE_NODE
                   ? (size_t)(node->data.sequence.items.top - node->data.sequence.items.start)
                   : 0;
    if (n == 0) {
        cfg_error(w, node, path, "no values; expected a non-empty sequence of values, got %s",
                  node->type == YAML_SEQUENCE_NODE ? "[]" : yamlx_kind(node));
        return false;
    }
    ax->n_values = n;
    ax->value_ids = arena_calloc(w->arena, n, sizeof *ax->value_ids);
    ax->labels = arena_calloc(w->arena, n, sizeof *ax->labels);
    for (size_t i = 0; i < n; i++) {
        ax->value_ids[i] = node->data.sequence.items.start[i];
        char buf[LABEL_LEN];
        size_t used = 0;
        buf[0] = '\0';
        flow(w->doc, yamlx_node(w->doc, ax->value_ids[i]), buf, sizeof buf, &used, 0);
        ax->labels[i] = arena_strdup(w->arena, buf);
    }
    return true;
}

const cfg_field sweep_axis_fields[] = {
    {"path", CFG_STRING, .required = true, .expect = "a scenario path like cluster.nodes[0].count",
     .off = offsetof(sweep_axis, path), CFG_LOC(sweep_axis, at)},
    {"values", CFG_CUSTOM, .required = true, .parse = parse_values, .off = 0},
    {0},
};

static const cfg_field sweep_fields[] = {
    CFG_SELF(sweep_spec, at),
    {"replications", CFG_U32, CFG_MIN(1), CFG_MAX(100000), .dflt = "1",
     .off = offsetof(sweep_spec, replications)},
    {"axes", CFG_SEQ, CFG_MAX(SWEEP_MAX_AXES),
     CFG_SEQ_OF(sweep_spec, axes, n_axes, sweep_axis, sweep_axis_fields)},
    {0},
};

/* Each axis names a scenario path once, and none inside the sweep: or plan: sections (which a
 * point never reads: `sweep.replications` as an axis would change nothing). */
static void check_axis_paths(const sweep_spec *s, const char *section, diag *d)
{
    for (size_t i = 0; i < s->n_axes; i++) {
        const sweep_axis *ax = &s->axes[i];
        char p[96];
        snprintf(p, sizeof p, "%s.axes[%zu].path", section, i);
        if (!ax->path) {
            continue;
        }
        size_t n = strcspn(ax->path, ".[");
        if ((n == 5 && !strncmp(ax->path, "sweep", 5)) || (n == 4 && !strncmp(ax->path, "plan", 4))) {
            diag_error(d, ax->at, p,
                       "names the %.*s: section, which no point reads; expected a scenario path "
                       "like cluster.nodes[0].count (the replications are %s.replications), got "
                       "'%s'",
                       (int)n, ax->path, section, ax->path);
            continue;
        }
        for (size_t j = 0; j < i; j++) {
            if (s->axes[j].path && !strcmp(s->axes[j].path, ax->path)) {
                diag_error(d, ax->at, p,
                           "the same path as %s.axes[%zu] (line %d); expected each path in one "
                           "axis (list all its values there), got '%s'",
                           section, j, s->axes[j].at.line, ax->path);
                break;
            }
        }
    }
}

int sweep_count(sweep_spec *s, const char *section, int before, diag *d)
{
    check_axis_paths(s, section, d);
    s->n_combos = 1;
    for (size_t i = 0; i < s->n_axes && diag_error_count(d) == before; i++) {
        if (s->axes[i].n_values > SWEEP_MAX_POINTS / s->n_combos) {
            diag_error(d, s->at, "sweep",
                       "too many points; expected at most %d combinations, got more at axis %zu",
                       SWEEP_MAX_POINTS, i);
            break;
        }
        s->n_combos *= s->axes[i].n_values;
    }
    if (diag_error_count(d) == before && s->replications > SWEEP_MAX_POINTS / s->n_combos) {
        diag_error(d, s->at, "sweep.replications",
                   "too many points; expected combinations x replications at most %d, got %zu x "
                   "%u",
                   SWEEP_MAX_POINTS, s->n_combos, s->replications);
    }
    if (diag_error_count(d) != before) {
        return SIM_EINPUT;
    }
    s->n_points = s->n_combos * s->replications;
    return 0;
}

int sweep_walk(cfg_walker *w, yaml_node_t *node, sweep_spec **out)
{
    int before = diag_error_count(w->diag);
    sweep_spec *s = arena_calloc(w->arena, 1, sizeof *s);
    cfg_walk_map(w, node, "sweep", sweep_fields, s);
    int rc = sweep_count(s, "sweep", before, w->diag);
    *out = rc == 0 ? s : NULL;
    return rc;
}

static int walk_section(cfg_walker *w, yaml_node_t *node, void *out)
{
    return sweep_walk(w, node, out);
}

int sweep_load_buffer(const char *name, const void *buf, size_t len, arena *a, diag *d,
                      sweep_spec **out)
{
    *out = NULL;
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_buffer(name, buf, len, a, d, &doc);
    return rc ? rc : cfg_load_section(doc, a, d, "sweep", walk_section, out);
}

void sweep_combo_values(const sweep_spec *s, size_t combo, size_t *idx)
{
    SIM_ASSERT(combo < s->n_combos);
    for (size_t i = s->n_axes; i-- > 0;) {
        idx[i] = combo % s->axes[i].n_values;
        combo /= s->axes[i].n_values;
    }
}

int sweep_apply(const sweep_spec *s, size_t combo, yamlx_doc *doc, diag *d)
{
    size_t idx[SWEEP_MAX_AXES];
    sweep_combo_values(s, combo, idx);
    int rc = 0;
    for (size_t i = 0; i < s->n_axes; i++) {
        const sweep_axis *ax = &s->axes[i];
        if (yamlx_set_node(doc, ax->path, ax->value_ids[idx[i]], ax->at, d) != 0) {
            rc = SIM_EINPUT;
        }
    }
    return rc;
}

int sweep_combo_edit(void *ctx, yamlx_doc *doc, diag *d)
{
    const sweep_combo *c = ctx;
    return sweep_apply(c->sw, c->combo, doc, d);
}

uint64_t sweep_seed(uint64_t master, uint32_t r)
{
    return r == 0 ? master : rng_mix64(master ^ rng_hash64(SWEEP_STREAM_REPLICATION), r);
}
