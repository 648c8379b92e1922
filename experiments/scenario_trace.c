/* experiments/scenario_trace.c - the `trace:` keys of a scenario: `cluster.trace` (node groups
 * from a node-list trace) and `workload.trace` (jobs from a trace), their schema and checks.
 * Part of the scenario loader (scenario.h); the readers are workloads/tracenodes.h and
 * workloads/trace.h. `slicesim check` reads the node list whole (it is small) and the workload
 * trace's header and first SCN_TRACE_CHECK_ROWS rows; `run` reads the rest. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/scenario.h"
#include "experiments/scenario_int.h"
#include "sim/err.h"
#include "workloads/trace.h"
#include "workloads/traceload.h"
#include "workloads/tracenodes.h"

#define SCN_TRACE_CHECK_ROWS 100 /* rows of a workload trace that `check` reads */

static const char *const format_names[] = {"openb", "philly", "helios", "dlrm", "csv", NULL};
static const char *const node_format_names[] = {"openb", NULL};
static const char *const mode_names[] = {"timed", "arrival-only", NULL};
static const char *const time_format_names[] = {"seconds", "datetime", NULL};

/* ---- cluster.trace --------------------------------------------------------------------------- */

/* `gpu_map: {G2: A100-SXM4-40GB, ...}`: the trace's GPU model -> a catalog type. */
static bool parse_gpu_map(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                          void *dst)
{
    (void)f;
    scenario_cluster_trace *ct = dst;
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    if (node->type != YAML_MAPPING_NODE) {
        cfg_error(w, node, path, "wrong type; expected a mapping like {G2: A100-SXM4-40GB}, got %s",
                  yamlx_kind(node));
        return false;
    }
    size_t n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    ct->map = n ? arena_calloc(w->arena, n, sizeof *ct->map) : NULL;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *k = yamlx_node(w->doc, node->data.mapping.pairs.start[i].key);
        yaml_node_t *v = yamlx_node(w->doc, node->data.mapping.pairs.start[i].value);
        const char *ks = yamlx_scalar(k), *vs = yamlx_scalar(v);
        char kpath[PATH_LEN];
        cfg_path_key(kpath, sizeof kpath, path, ks ? ks : "?");
        if (!ks || !vs || !vs[0]) {
            cfg_error(w, ks ? v : k, kpath, "wrong type; expected a catalog GPU name, got %s",
                      ks && vs ? "''" : yamlx_kind(ks ? v : k));
            ok = false;
            continue;
        }
        for (size_t j = 0; j < ct->n_map; j++) {
            if (!strcmp(ct->map[j].model, ks)) {
                cfg_error(w, k, kpath,
                          "duplicate key (first at line %d); expected each model once, got '%s'",
                          ct->map[j].at.line, ks);
                ok = false;
            }
        }
        ct->map[ct->n_map++] = (scenario_gpu_map){arena_strdup(w->arena, ks),
                                                  arena_strdup(w->arena, vs), cfg_loc(w, v)};
    }
    return ok;
}

/* {model: GPU type, ...} */
static void write_gpu_map(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    (void)o;
    const scenario_cluster_trace *ct = src;
    char key[64];
    cJSON *m = cJSON_AddObjectToObject(parent, cfg_out_key(f, key, sizeof key));
    for (size_t i = 0; i < ct->n_map; i++) {
        cJSON_AddItemToObject(m, ct->map[i].model, cfg_out_string(ct->map[i].gpu));
    }
}

const cfg_field scenario__cluster_trace_fields[] = {
    CFG_SELF(scenario_cluster_trace, at),
    {"format", CFG_ENUM, .names = node_format_names, .dflt = "openb",
     .off = offsetof(scenario_cluster_trace, format)},
    {"file", CFG_STRING, .required = true, .expect = "the path of a node-list CSV",
     .off = offsetof(scenario_cluster_trace, file), CFG_LOC(scenario_cluster_trace, file_at)},
    {"gpu_map", CFG_CUSTOM, .parse = parse_gpu_map, .off = 0, .write = write_gpu_map},
    {"cpu_nodes", CFG_BOOL, .dflt = "true", .off = offsetof(scenario_cluster_trace, cpu_nodes)},
    /* nodes of the file without GPUs (read by add_node_groups) */
    {"cpu_only_nodes", CFG_U64, .off = offsetof(scenario_cluster_trace, n_cpu_nodes),
     .out = CFG_OUT_ONLY},
    {"sharing", CFG_CUSTOM, .parse = scenario__parse_sharing, .expect = SHARING_EXPECT,
     .off = offsetof(scenario_cluster_trace, sharing), .write = scenario__write_sharing},
    {0},
};

/* ---- workload.trace ------------------------------------------------------------------------ */

/* `gpus: 8` or `gpus: [2, 8]` (inclusive; [16, 0]: 16 or more). */
static bool parse_gpus(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                       void *dst)
{
    (void)f;
    scenario_trace_rule *r = dst;
    static const cfg_field one = {"gpus", CFG_U32, CFG_MAX(1e6),
                                  .off = offsetof(scenario_trace_rule, gpus_min)};
    static const cfg_field hi = {"gpus", CFG_U32, CFG_MAX(1e6),
                                 .off = offsetof(scenario_trace_rule, gpus_max)};
    if (node->type == YAML_SCALAR_NODE) {
        bool ok = cfg_walk_field(w, node, path, &one, r);
        r->gpus_max = r->gpus_min;
        return ok;
    }
    if (node->type != YAML_SEQUENCE_NODE ||
        node->data.sequence.items.top - node->data.sequence.items.start != 2) {
        if (!cfg_visit(w, node, path)) {
            return false;
        }
        cfg_error(w, node, path,
                  "wrong shape; expected a GPU count like 8 or a range like [2, 8], got %s",
                  yamlx_kind(node));
        return false;
    }
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    yaml_node_t *a = yamlx_node(w->doc, node->data.sequence.items.start[0]);
    yaml_node_t *b = yamlx_node(w->doc, node->data.sequence.items.start[1]);
    char p0[PATH_LEN], p1[PATH_LEN];
    cfg_path_index(p0, sizeof p0, path, 0);
    cfg_path_index(p1, sizeof p1, path, 1);
    bool ok = cfg_walk_field(w, a, p0, &one, r);
    ok = cfg_walk_field(w, b, p1, &hi, r) && ok;
    if (ok && r->gpus_max > 0 && r->gpus_max < r->gpus_min) {
        cfg_error(w, b, p1,
                  "range ends below its start; expected at least %" PRIu32 ", got '%" PRIu32 "'",
                  r->gpus_min, r->gpus_max);
        ok = false;
    }
    return ok;
}

/* gpus_min and gpus_max (equal for `gpus: 8`; 0 and 0 when absent: any) */
static void write_gpus(const cfg_out *o, cJSON *parent, const cfg_field *f, const void *src)
{
    (void)f;
    const scenario_trace_rule *r = src;
    cJSON_AddItemToObject(parent, "gpus_min", o->number(r->gpus_min));
    cJSON_AddItemToObject(parent, "gpus_max", o->number(r->gpus_max));
}

static const cfg_field match_fields[] = {
    {"name", CFG_STRING, .expect = "a job-name pattern like 'train-*'",
     .off = offsetof(scenario_trace_rule, name)},
    {"gpus", CFG_CUSTOM, .parse = parse_gpus, .off = 0, .write = write_gpus},
    {"queue", CFG_STRING, .off = offsetof(scenario_trace_rule, queue)},
    {"user", CFG_STRING, .off = offsetof(scenario_trace_rule, user)},
    {"class", CFG_STRING, .off = offsetof(scenario_trace_rule, klass)},
    {"gpu_type", CFG_STRING, .off = offsetof(scenario_trace_rule, gpu_type)},
    {0},
};

static const cfg_field rule_fields[] = {
    CFG_SELF(scenario_trace_rule, at),
    {"match", CFG_MAP, .sub = match_fields, .off = 0},
    {"class", CFG_STRING, .off = offsetof(scenario_trace_rule, class_name)},
    {"profile", CFG_STRING, .off = offsetof(scenario_trace_rule, profile),
     CFG_LOC(scenario_trace_rule, profile_at)},
    {"request", CFG_STRING, .expect = "a resource like nvidia.com/mig-3g.20gb",
     .off = offsetof(scenario_trace_rule, resource), CFG_LOC(scenario_trace_rule, resource_at)},
    {0},
};

#define COL(key, member)                                                                           \
    {                                                                                              \
        key, CFG_STRING, .off = offsetof(scenario_trace_columns, member)                           \
    }

static const cfg_field column_fields[] = {
    CFG_SELF(scenario_trace_columns, at),
    COL("name", name),
    COL("submit", submit),
    COL("duration", duration),
    COL("end", end),
    COL("gpus", gpus),
    COL("gpu_milli", gpu_milli),
    COL("gpu_type", gpu_type),
    COL("user", user),
    COL("queue", queue),
    COL("class", klass),
    COL("cpu", cpu),
    COL("memory", memory),
    COL("qos", qos),
    COL("gpu_spec", gpu_spec),
    {"time_format", CFG_ENUM, .names = time_format_names, .dflt = "seconds",
     .off = offsetof(scenario_trace_columns, time_format)},
    {"cpu_unit_milli", CFG_DOUBLE, CFG_ABOVE(0), CFG_MAX(1e6), .dflt = "1000",
     .off = offsetof(scenario_trace_columns, cpu_unit_milli)},
    {"memory_unit", CFG_BYTES, CFG_MIN(1), .dflt = "1MiB",
     .off = offsetof(scenario_trace_columns, mem_unit_bytes)},
    {0},
};

const cfg_field scenario__workload_trace_fields[] = {
    CFG_SELF(scenario_trace, at),
    {"format", CFG_ENUM, .required = true, .names = format_names,
     .off = offsetof(scenario_trace, format)},
    {"file", CFG_STRING, .required = true, .expect = "the path of a trace CSV",
     .off = offsetof(scenario_trace, file), CFG_LOC(scenario_trace, file_at)},
    {"mode", CFG_ENUM, .names = mode_names, .dflt = "timed", .off = offsetof(scenario_trace, mode)},
    {"start", CFG_DURATION, CFG_MIN(0), .dflt = "0s", .off = offsetof(scenario_trace, start_ns)},
    {"length", CFG_DURATION, CFG_MIN(0), .dflt = "0s", .off = offsetof(scenario_trace, length_ns)},
    {"limit", CFG_U64, CFG_MAX(1e9), .dflt = "0", .off = offsetof(scenario_trace, limit)},
    {"request", CFG_STRING, .dflt = "nvidia.com/gpu", .expect = "a resource like nvidia.com/gpu",
     .off = offsetof(scenario_trace, resource), CFG_LOC(scenario_trace, resource_at)},
    {"max_per_worker", CFG_U32, CFG_MIN(1), CFG_MAX(64), .dflt = "8",
     .off = offsetof(scenario_trace, max_per_worker)},
    {"cpu_pods", CFG_BOOL, .dflt = "true", .off = offsetof(scenario_trace, cpu_pods)},
    {"traced_gpu", CFG_STRING, .expect = "a GPU type of the catalog",
     .off = offsetof(scenario_trace, traced_gpu), CFG_LOC(scenario_trace, traced_gpu_at)},
    {"inflate", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(10), .dflt = "0",
     .off = offsetof(scenario_trace, inflate)},
    {"shuffle", CFG_BOOL, .dflt = "true", .off = offsetof(scenario_trace, shuffle)},
    {"interval", CFG_DURATION, CFG_ABOVE(0), CFG_MAX(60), .dflt = "1s",
     .off = offsetof(scenario_trace, interval_ns)},
    /* helios only */
    {"duration", CFG_CUSTOM, .parse = scenario__parse_duration, .expect = DURATION_EXPECT,
     .off = offsetof(scenario_trace, duration), .write = scenario__write_duration,
     .out = CFG_OUT_IF_SET},
    /* given for format csv only (check_workload_trace) */
    {"columns", CFG_MAP, .sub = column_fields, .off = offsetof(scenario_trace, columns),
     .out = CFG_OUT_IF_SET},
    {"map", CFG_SEQ, CFG_MAX(1000),
     CFG_SEQ_OF(scenario_trace, rules, n_rules, scenario_trace_rule, rule_fields)},
    {0},
};

/* ---- checks and files ---------------------------------------------------------------------- */

/* Node groups of cluster.trace, appended to the cluster's groups. */
static void add_node_groups(load_ctx *c)
{
    scenario_cluster *cl = &c->spec->cluster;
    scenario_cluster_trace *ct = &cl->trace;
    ct->file = scenario_resolve(c->spec, c->a, ct->file);
    scenario__add_ref(c, ct->file, "node-list trace", ct->file_at);
    ct->first_group = cl->n_groups;
    if (c->flags & SCENARIO_NO_FILES) {
        return;
    }
    FILE *f = scenario_open_trace(ct->file, "node list", ct->file_at, "cluster.trace.file", c->d);
    if (!f) {
        return;
    }
    tracenodes tn;
    int rc = tracenodes_read(f, ct->file, c->a, c->d, &tn);
    fclose(f);
    if (rc == SIM_EIO) {
        diag_error(c->d, ct->file_at, "cluster.trace.file",
                   "read error; expected a readable file, got '%s'", ct->file);
    }
    if (rc) {
        return;
    }
    ct->n_cpu_nodes = tn.n_cpu_nodes;
    scenario_node_group *g = arena_calloc(c->a, cl->n_groups + tn.n_groups, sizeof *g);
    if (cl->n_groups) {
        memcpy(g, cl->groups, cl->n_groups * sizeof *g);
    }
    size_t added = 0;
    for (size_t i = 0; i < tn.n_groups; i++) {
        const tracenodes_group *t = &tn.groups[i];
        bool cpu = t->gpus == 0;
        if (cpu && !ct->cpu_nodes) {
            continue;
        }
        size_t same = 0; /* earlier groups of this model and GPU count */
        for (size_t j = 0; j < i; j++) {
            same += tn.groups[j].gpus == t->gpus && !strcmp(tn.groups[j].model, t->model);
        }
        char name[160];
        if (cpu) {
            snprintf(name, sizeof name, same ? "cpu-%zu" : "cpu", same);
        } else if (same) {
            snprintf(name, sizeof name, "%s-%" PRIu32 "g-%zu", t->model, t->gpus, same);
        } else {
            snprintf(name, sizeof name, "%s-%" PRIu32 "g", t->model, t->gpus);
        }
        const char *gpu = t->model;
        src_loc at = {ct->file, t->line, 1};
        for (size_t k = 0; k < ct->n_map; k++) {
            if (!strcmp(ct->map[k].model, t->model)) {
                gpu = ct->map[k].gpu;
                at = ct->map[k].at;
            }
        }
        g[cl->n_groups + added++] = (scenario_node_group){
            .name = arena_strdup(c->a, name),
            .count = t->count,
            .gpu = cpu ? NULL : gpu,
            .gpus_per_node = t->gpus,
            .sharing = cpu ? (scenario_sharing){0} : ct->sharing,
            .cpu_milli = t->cpu_milli,
            .host_mem_bytes = t->mem_bytes,
            .trace_model = cpu ? NULL : t->model,
            .at = {ct->file, t->line, 1},
            .gpu_at = at,
        };
    }
    cl->groups = g;
    cl->n_groups += added;
}

/* The trace_src of a workload trace (columns: the preset, or the scenario's for csv). */
static trace_src source_of(const scenario_spec *s)
{
    const scenario_trace *t = &s->workload.trace;
    trace_src src = {.format = (trace_format)t->format,
                     .file = t->file,
                     .need_times = t->mode == SCN_TRACE_TIMED,
                     .seed = s->seed};
    if (t->format == TRACE_CSV) {
        const scenario_trace_columns *k = &t->columns;
        src.columns = (trace_columns){k->name,
                                      k->submit,
                                      k->duration,
                                      k->end,
                                      k->gpus,
                                      k->gpu_milli,
                                      k->gpu_type,
                                      k->user,
                                      k->queue,
                                      k->klass,
                                      k->cpu,
                                      k->memory,
                                      k->qos,
                                      k->gpu_spec,
                                      (trace_time_format)k->time_format,
                                      k->cpu_unit_milli,
                                      (double)k->mem_unit_bytes};
    } else {
        src.columns = trace_preset(src.format);
    }
    return src;
}

trace_src scenario_trace_source(const scenario_spec *s)
{
    trace_src src = source_of(s);
    const scenario_duration *du = &s->workload.trace.duration;
    switch (du->dist) {
    case SCN_DUR_EXPONENTIAL:
        src.duration_s = (synth_dist){SYNTH_EXPONENTIAL, sim_time_to_s(du->mean_ns), 0};
        break;
    case SCN_DUR_LOGNORMAL:
        src.duration_s = (synth_dist){SYNTH_LOGNORMAL, sim_time_to_s(du->median_ns), du->sigma};
        break;
    default:
        src.duration_s = (synth_dist){SYNTH_FIXED, sim_time_to_s(du->value_ns), 0};
        break;
    }
    return src;
}

trace_src scenario_service_trace_source(const scenario_spec *s, size_t i)
{
    const scenario_svc_trace *t = &s->services[i].trace;
    return (trace_src){.format = TRACE_DLRM,
                       .file = t->file,
                       .columns = trace_preset(TRACE_DLRM),
                       .need_times = true,
                       .seed = s->seed};
}

/* services[i].trace: present exactly with arrival: trace; the file resolved, its header read. */
static void check_service_trace(load_ctx *c, size_t i)
{
    scenario_service *sv = &c->spec->services[i];
    scenario_svc_trace *t = &sv->trace;
    char path[64];
    snprintf(path, sizeof path, "services[%zu].trace", i);
    if (sv->arrival == SCN_SVC_TRACE && !cfg_present(t->at)) {
        diag_error(c->d, sv->at, path,
                   "missing for arrival: trace; expected a mapping like {format: dlrm, file: "
                   "instances.csv}, got nothing");
        return;
    }
    if (!cfg_present(t->at)) {
        return;
    }
    if (sv->arrival != SCN_SVC_TRACE) {
        diag_error(c->d, t->at, path,
                   "only arrival: trace takes a trace; expected arrival: trace, got arrival: %s",
                   sv->arrival == SCN_SVC_DIURNAL ? "diurnal" : "poisson");
        return;
    }
    if (!t->file) {
        return;
    }
    t->file = scenario_resolve(c->spec, c->a, t->file);
    scenario__add_ref(c, t->file, "service arrival trace", t->file_at);
    if ((c->flags & SCENARIO_NO_FILES) || diag_error_count(c->d) > 0) {
        return;
    }
    snprintf(path, sizeof path, "services[%zu].trace.file", i);
    FILE *f = scenario_open_trace(t->file, "trace", t->file_at, path, c->d);
    if (!f) {
        return;
    }
    trace_src src = scenario_service_trace_source(c->spec, i);
    trace_reader *r = NULL;
    if (trace_open(&src, f, c->d, &r) == SIM_EIO) {
        diag_error(c->d, t->file_at, path, "read error; expected a readable file, got '%s'",
                   t->file);
    }
    trace_close(r);
    fclose(f);
}

static void check_workload_trace(load_ctx *c)
{
    scenario_trace *t = &c->spec->workload.trace;
    bool helios = t->format == TRACE_HELIOS;
    if (helios && !cfg_present(t->duration.at)) {
        diag_error(c->d, t->at, "workload.trace.duration",
                   "missing for a helios trace (its series has no run times); expected %s, got "
                   "nothing",
                   DURATION_EXPECT);
    } else if (!helios && cfg_present(t->duration.at)) {
        diag_error(c->d, t->duration.at, "workload.trace.duration",
                   "only a helios trace takes a duration; expected the run times of the %s "
                   "trace, got a duration",
                   format_names[t->format]);
    }
    if (t->format != TRACE_CSV && cfg_present(t->columns.at)) {
        diag_error(c->d, t->columns.at, "workload.trace.columns",
                   "only format csv takes a column mapping; expected format: csv, got format: %s",
                   format_names[t->format]);
    }
    if (t->format == TRACE_CSV && !cfg_present(t->columns.at)) {
        diag_error(c->d, t->at, "workload.trace.columns",
                   "missing for format csv; expected a mapping like {submit: time, duration: "
                   "run_s, gpus: gpus}, got nothing");
    }
    if (t->mode == SCN_TRACE_ARRIVAL_ONLY && (helios || t->format == TRACE_PHILLY)) {
        diag_error(c->d, t->at, "workload.trace.mode",
                   "arrival-only is FGD's replay of pod lists; expected timed for a %s trace, "
                   "got arrival-only",
                   format_names[t->format]);
    }
    t->file = scenario_resolve(c->spec, c->a, t->file);
    scenario__add_ref(c, t->file, "workload trace", t->file_at);
    if ((c->flags & SCENARIO_NO_FILES) || diag_error_count(c->d) > 0) {
        return;
    }
    FILE *f = scenario_open_trace(t->file, "trace", t->file_at, "workload.trace.file", c->d);
    if (!f) {
        return;
    }
    trace_src src = scenario_trace_source(c->spec);
    trace_reader *r = NULL;
    int rc = trace_open(&src, f, c->d, &r);
    if (rc == 0) {
        rc = traceload_check(r, SCN_TRACE_CHECK_ROWS);
    }
    if (rc == SIM_EIO) {
        diag_error(c->d, t->file_at, "workload.trace.file",
                   "read error; expected a readable file, got '%s'", t->file);
    }
    trace_close(r);
    fclose(f);
}

FILE *scenario_open_trace(const char *file, const char *what, src_loc at, const char *path,
                          diag *d)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        diag_error(d, at, path, "cannot read the %s (%s); expected a readable file, got '%s'",
                   what, strerror(errno), file);
    }
    return f;
}

void scenario__check_traces(load_ctx *c)
{
    scenario_spec *s = c->spec;
    /* `nodes: []` and the like were reported by the walk: no second message for them */
    bool walked_clean = diag_error_count(c->d) == 0;
    if (walked_clean && s->cluster.n_groups == 0 && !cfg_present(s->cluster.trace.at) &&
        !cfg_present(s->cluster.snapshot.at) && cfg_present(s->cluster.at)) {
        diag_error(c->d, s->cluster.at, "cluster.nodes",
                   "missing required field; expected nodes, or a trace with a node list, got "
                   "nothing");
    }
    if (walked_clean && s->workload.n_jobs == 0 && !cfg_present(s->workload.trace.at) &&
        !cfg_present(s->cluster.snapshot.at) && cfg_present(s->workload.at)) {
        diag_error(c->d, s->workload.at, "workload.jobs",
                   "missing required field; expected jobs, or a trace, got nothing");
    }
    if (cfg_present(s->cluster.trace.at) && s->cluster.trace.file) {
        add_node_groups(c);
    }
    if (cfg_present(s->workload.trace.at) && s->workload.trace.file) {
        check_workload_trace(c);
    }
    for (size_t i = 0; i < s->n_services; i++) {
        check_service_trace(c, i);
    }
}
