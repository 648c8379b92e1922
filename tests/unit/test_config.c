/* tests/unit/test_config.c - run.json's "config": the resolved scenario written from the schema
 * tables that read it (scenario_config_json, experiments/cfg.h "Writing back"; issue 24 item 4).
 *
 * Coverage: every field of every table reachable from scenario_schema appears in the config of
 * at least one of the scenarios below (the shipped ones and the test's own, which set the fields
 * no shipped scenario sets), or is CFG_OUT_HIDDEN and listed in hidden_fields with its reason.
 * A field added to a table without a scenario setting it, or hidden without a reason here,
 * fails.
 *
 * Round trip: the config of a scenario, turned back into scenario YAML and loaded, gives the same
 * config, byte for byte. The config is not itself a scenario (docs/outputs.md), so the test turns
 * it back through the tables: unit keys to values with their unit (horizon_s: 3600 -> horizon:
 * 3600s, KEY_per_s -> N/s, KEY_bytes -> NB), CFG_OUT_ONLY fields dropped, and the custom shapes
 * undone (sharing's resolved form to its YAML form, nodes "A|B" to [A, B], start_unix_s to an
 * RFC 3339 time, gpus_min/gpus_max to gpus, calibration's node identity dropped, an empty
 * sequence the scenario may not give, calibration or workload.jobs, dropped). It holds for
 * scenarios loaded with SCENARIO_NO_FILES: with the files read, what the loader resolves from
 * them is in the config too (the node groups of cluster.trace and cluster.snapshot and the
 * snapshot's job classes beside the written ones, a sharing file's rules, a calibration's node
 * identity), so a config read back as a scenario would add those groups and classes twice; the
 * test checks instead that those resolved values are written
 * (config/writes_what_the_files_resolve).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "experiments/cfg.h"
#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tests/unit/diagfx.h"
#include "tests/unit/sh.h"
#include "tools/out.h"

/* Fields never written, each with its reason (the tables say it too). */
static const char *const hidden_fields[] = {
    "sweep", /* describes runs of many scenarios; a point's values are in its own config */
    "plan",  /* likewise: candidates of a capacity plan, each run with its own config */
    NULL,
};

/* Scenarios setting what no shipped scenario sets (loaded with SCENARIO_NO_FILES: files are
 * named, not read). */
static const char *const own_scenarios[] = {
    /* every field of a node group, a job class, the policy, outputs, limits, calibration, faults,
     * services and repartition */
    "name: everything\n"
    "description: every field once\n"
    "seed: 7\n"
    "horizon: 2h\n"
    "cluster:\n"
    "  driver: 535\n"
    "  interconnect: eth-100g\n"
    "  nodes:\n"
    "    - name: a\n"
    "      count: 2\n"
    "      gpu: A100-SXM4-40GB\n"
    "      gpus_per_node: 8\n"
    "      sharing: {timeslice: {replicas: 4, rename_by_default: true,\n"
    "                fail_requests_greater_than_one: true}}\n"
    "      topology: nvswitch\n"
    "      label: pool-a\n"
    "      cpu_milli: 64000\n"
    "      host_memory: 512GiB\n"
    "      labels: {zone: z1}\n"
    "      taints: [{key: dedicated, value: ml, effect: NoSchedule}]\n"
    "    - name: m\n"
    "      gpu: A100-SXM4-40GB\n"
    "      gpus_per_node: 8\n"
    "      sharing: {mig: {file: mig.yaml, config: all-1g.5gb, strategy: mixed}}\n"
    "workload:\n"
    "  jobs:\n"
    "    - name: train\n"
    "      arrival: poisson\n"
    "      rate: 2/h\n"
    "      start: 10m\n"
    "      count: 5\n"
    "      request: {nvidia.com/gpu.shared: 1}\n"
    "      profile: resnet50\n"
    "      memory: 16GiB\n"
    "      priority: 3\n"
    "      workers: 2\n"
    "      per_gpu: 1\n"
    "      samples: 1e6\n"
    "      batch: 64\n"
    "      nodes: [pool-a]\n"
    "      cpu_milli: 4000\n"
    "      host_memory: 32GiB\n"
    "      node_selector: {zone: z1}\n"
    "      tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]\n"
    "    - name: any-slice\n"
    "      arrival: fixed\n"
    "      interval: 90s\n"
    "      duration: {dist: lognormal, median: 30m, sigma: 0.8}\n"
    "      request: {nvidia.com/mig-any: 1}\n"
    "      duration_on: 1g.5gb\n"
    "      profile: resnet50\n"
    "      nodes: [A100-SXM4-40GB]\n"
    "      node_index: [0, 0]\n"
    "      count: 2\n"
    "policy: {scheduler: k8s, params: {tie_break: random}}\n"
    "outputs:\n"
    "  dir: out\n"
    "  files: [run.json, jobs.csv]\n"
    "  sample_interval: 30s\n"
    "  start_time: 2026-11-28T09:00:00Z\n"
    "limits: {jobs: 1000, timeseries_rows: 2000, output: 1GiB, memory: 2GiB, events: 5000}\n"
    "calibration: [{file: model.json, gpu: A100-SXM4-40GB}]\n"
    "faults:\n"
    "  checkpoint: 30m\n"
    "  process:\n"
    "    gpu: {mtbf: 1000h, repair: 2h}\n"
    "    instance: {mtbf: 500h}\n"
    "    node: {mtbf: 2000h, repair: 4h}\n"
    "    nvlink: {mtbf: 3000h}\n"
    "  events: [{at: 1h, kind: instance, node: m-0, gpu: 1, instance: 2, repair: 10m}]\n"
    "services:\n"
    "  - name: web\n"
    "    replicas: 2\n"
    "    resource: nvidia.com/gpu.shared\n"
    "    profile: resnet50\n"
    "    arrival: diurnal\n"
    "    rate: 50/s\n"
    "    amplitude: 0.5\n"
    "    period: 12h\n"
    "    peak: 3h\n"
    "    batch: 4\n"
    "    slo: 100ms\n"
    "    autoscale: {metric: queue, target: 4, min: 1, max: 8, interval: 30s,\n"
    "                stabilization: 2m}\n"
    "  - name: replay\n"
    "    replicas: 1\n"
    "    resource: nvidia.com/gpu.shared\n"
    "    profile: resnet50\n"
    "    arrival: trace\n"
    "    rate: 1/s\n"
    "    slo: 50ms\n"
    "    trace: {format: dlrm, file: dlrm.csv, app: app_1, spacing: even}\n"
    "repartition:\n"
    "  groups: [m]\n"
    "  policy: miso\n"
    "  interval: 10m\n"
    "  delay: 20s\n"
    "  reset: 40s\n"
    "  min_gain: 1.5\n"
    "  hold: 20m\n"
    "  max_concurrent: 2\n"
    "  evict: true\n"
    "  enabled: true\n"
    "  timeslice: {replicas: 2, restart: 5s}\n",
    /* a node-list trace and a csv job trace with every column, and a mapping rule */
    "name: traced\n"
    "seed: 1\n"
    "horizon: 1d\n"
    "cluster:\n"
    "  nodes: [{name: x, gpu: A100-SXM4-40GB, gpus_per_node: 8}]\n"
    "  trace:\n"
    "    format: openb\n"
    "    file: nodes.csv\n"
    "    gpu_map: {A100: A100-SXM4-40GB}\n"
    "    cpu_nodes: false\n"
    "    sharing: {mps: {replicas: 2}}\n"
    "workload:\n"
    "  trace:\n"
    "    format: csv\n"
    "    file: jobs.csv\n"
    "    mode: arrival-only\n"
    "    start: 1h\n"
    "    length: 2h\n"
    "    limit: 100\n"
    "    request: nvidia.com/gpu\n"
    "    max_per_worker: 4\n"
    "    cpu_pods: false\n"
    "    traced_gpu: A100-SXM4-40GB\n"
    "    inflate: 1.5\n"
    "    shuffle: false\n"
    "    interval: 2s\n"
    "    columns: {name: n, submit: s, duration: d, end: e, gpus: g, gpu_milli: gm,\n"
    "              gpu_type: gt, user: u, queue: q, class: c, cpu: cp, memory: mem, qos: qo,\n"
    "              gpu_spec: gs, time_format: seconds, cpu_unit_milli: 1000,\n"
    "              memory_unit: 1MiB}\n"
    "    map:\n"
    "      - match: {name: 'train-*', gpus: [2, 8], queue: q1, user: u1, class: c1,\n"
    "                gpu_type: A100}\n"
    "        class: big\n"
    "        profile: resnet50\n"
    "        request: nvidia.com/gpu\n",
    /* a helios trace's durations, a snapshot */
    "name: helios\n"
    "seed: 1\n"
    "horizon: 1d\n"
    "cluster:\n"
    "  nodes: [{name: x, gpu: A100-SXM4-40GB, gpus_per_node: 8}]\n"
    "  snapshot: {file: snap.json, mig_parted: mig.yaml, duration: 1h}\n"
    "workload:\n"
    "  trace:\n"
    "    format: helios\n"
    "    file: helios.csv\n"
    "    duration: {dist: exponential, mean: 1h}\n",
};
#define N_OWN (sizeof own_scenarios / sizeof *own_scenarios)

/* Whether the YAML file at path is a scenario (top-level horizon and workload; experiments/ also
 * holds mig-parted, device-plugin and validation files). */
static bool is_scenario(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[512];
    bool horizon = false, workload = false;
    while (fgets(line, sizeof line, f)) {
        horizon = horizon || !strncmp(line, "horizon:", 8);
        workload = workload || !strncmp(line, "workload:", 9);
    }
    fclose(f);
    return horizon && workload;
}

/* The scenario files shipped under experiments/ (sorted). */
static size_t shipped(char ***out)
{
    glob_t g;
    cr_assert_eq(glob("experiments/*.yaml", 0, NULL, &g), 0);
    cr_assert_eq(glob("experiments/*/*.yaml", GLOB_APPEND, NULL, &g), 0);
    char **v = calloc(g.gl_pathc, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (is_scenario(g.gl_pathv[i])) {
            v[n++] = strdup(g.gl_pathv[i]);
        }
    }
    globfree(&g);
    cr_assert_gt(n, 20);
    *out = v;
    return n;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i]);
    }
    free(v);
}

static cJSON *config_of_file(const char *path, unsigned flags)
{
    arena *a = arena_create();
    diag *d = diag_create();
    scenario_spec *s = NULL;
    int rc = scenario_load_file(path, NULL, 0, flags, a, d, &s);
    cr_assert_eq(rc, 0, "%s: %s", path, diag_error_count(d) ? fx_diag_message(d, 0) : "");
    cJSON *c = out_config_json(s);
    arena_destroy(a);
    diag_destroy(d);
    return c;
}

/* The config of scenario text loaded with references resolved against "." (rc 0 asserted). */
static cJSON *config_of_text(const char *name, const char *text, unsigned flags)
{
    arena *a = arena_create();
    diag *d = diag_create();
    scenario_spec *s = NULL;
    int rc = scenario_load_buffer(name, ".", text, strlen(text), NULL, 0, flags, a, d, &s);
    cr_assert_eq(rc, 0, "%s: %s\n%s", name, diag_error_count(d) ? fx_diag_message(d, 0) : "", text);
    cJSON *c = out_config_json(s);
    arena_destroy(a);
    diag_destroy(d);
    return c;
}

/* A JSON value's text (a number as written) in a buffer of the test's; "" for NULL. */
static const char *text_of(const cJSON *j)
{
    static char buf[256];
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    snprintf(buf, sizeof buf, "%s", t ? t : "");
    free(t);
    return buf;
}

/* A scenario whose files are read: a node list (cluster.trace, with a node without GPUs) and the
 * shipped kubectl snapshot (cluster.snapshot). What they resolve is written: the groups (traced
 * ones with their trace_model), the CPU-only node count, the snapshot's groups and job classes. */
static cJSON *resolved_config(void)
{
    char dir[64], nodes[128], text[1024];
    cr_assert(test_tmpdir(dir, sizeof dir, "config"));
    snprintf(nodes, sizeof nodes, "%s/nodes.csv", dir);
    cr_assert(test_write_text(nodes, "sn,cpu_milli,memory_mib,gpu,model\n"
                                     "n0,32000,262144,0,\n"
                                     "n1,96000,786432,8,G2\n"
                                     "n2,96000,786432,8,G2\n"));
    snprintf(text, sizeof text,
             "name: resolved\nseed: 1\nhorizon: 12h\n"
             "cluster:\n"
             "  trace: {file: %s, gpu_map: {G2: A100-SXM4-40GB}, cpu_nodes: false}\n"
             "  snapshot: {file: experiments/k8s/mig-queue-cluster.json,\n"
             "             mig_parted: experiments/mig/config-default.yaml, duration: 2h}\n"
             "workload: {}\n",
             nodes);
    cJSON *c = config_of_text("resolved.yaml", text, 0);
    cr_assert(test_rm_rf(dir));
    return c;
}

/* ---- coverage -------------------------------------------------------------------------------- */

typedef struct objs {
    const cJSON **v;
    size_t n, cap;
} objs;

static void objs_add(objs *o, const cJSON *j)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 16;
        o->v = realloc(o->v, o->cap * sizeof *o->v);
        cr_assert_not_null(o->v);
    }
    o->v[o->n++] = j;
}

/* Whether object j holds key, or (a custom field written as several keys) one named KEY_...:
 * match.gpus as gpus_min and gpus_max. */
static const cJSON *find_key(const cJSON *j, const char *key)
{
    size_t n = strlen(key);
    for (const cJSON *c = j ? j->child : NULL; c; c = c->next) {
        if (!strcmp(c->string, key) || (!strncmp(c->string, key, n) && c->string[n] == '_')) {
            return c;
        }
    }
    return NULL;
}

static bool is_hidden_listed(const char *path)
{
    for (size_t i = 0; hidden_fields[i]; i++) {
        if (!strcmp(hidden_fields[i], path)) {
            return true;
        }
    }
    return false;
}

/* Every field of table appears in one of the objects `in`; the missing ones' paths are appended
 * to missing. */
static void cover(const cfg_field *table, const char *path, const objs *in, char *missing,
                  size_t n_missing, size_t *n_hidden)
{
    for (const cfg_field *f = table; f->key; f++) {
        if (f->type == CFG_SELF_LOC) {
            continue;
        }
        char fpath[256], key[128];
        snprintf(fpath, sizeof fpath, "%s%s%s", path, path[0] ? "." : "", f->key);
        if (f->out & CFG_OUT_HIDDEN) {
            cr_expect(is_hidden_listed(fpath), "%s is hidden without a reason in hidden_fields",
                      fpath);
            ++*n_hidden;
            continue;
        }
        cfg_out_key(f, key, sizeof key);
        objs sub = {0};
        bool seen = false;
        for (size_t i = 0; i < in->n; i++) {
            const cJSON *v = find_key(in->v[i], key);
            if (!v) {
                continue;
            }
            seen = true;
            if (f->type == CFG_MAP) {
                objs_add(&sub, v);
            } else if (f->type == CFG_SEQ && f->sub) {
                for (const cJSON *it = v->child; it; it = it->next) {
                    objs_add(&sub, it);
                }
            }
        }
        if (!seen) {
            size_t len = strlen(missing);
            snprintf(missing + len, n_missing - len, " %s", fpath);
        } else if (f->sub) {
            char spath[300];
            snprintf(spath, sizeof spath, "%s%s", fpath, f->type == CFG_SEQ ? "[]" : "");
            cover(f->sub, spath, &sub, missing, n_missing, n_hidden);
        }
        free(sub.v);
    }
}

/* Every field of every scenario table is written by some scenario, or hidden with a reason. */
Test(config, every_field_of_every_table_is_written)
{
    char **files = NULL;
    size_t n_files = shipped(&files);
    cJSON **cfgs = calloc(n_files + N_OWN + 1, sizeof *cfgs);
    objs roots = {0};
    size_t n = 0;
    for (size_t i = 0; i < n_files; i++) {
        cfgs[n] = config_of_file(files[i], SCENARIO_NO_FILES);
        objs_add(&roots, cfgs[n++]);
    }
    for (size_t i = 0; i < N_OWN; i++) {
        cfgs[n] = config_of_text("own.yaml", own_scenarios[i], SCENARIO_NO_FILES);
        objs_add(&roots, cfgs[n++]);
    }
    cfgs[n] = resolved_config(); /* what only reading the files resolves: trace_model */
    objs_add(&roots, cfgs[n++]);
    char missing[4096] = "";
    size_t n_hidden = 0;
    cover(scenario_schema, "", &roots, missing, sizeof missing, &n_hidden);
    cr_expect_str_empty(missing, "fields no scenario writes:%s", missing);
    size_t n_listed = 0;
    while (hidden_fields[n_listed]) {
        n_listed++;
    }
    cr_expect_eq(n_hidden, n_listed, "hidden_fields lists a field that is not hidden");
    for (size_t i = 0; i < n; i++) {
        cJSON_Delete(cfgs[i]);
    }
    free(cfgs);
    free(roots.v);
    free_list(files, n_files);
}

/* What the loader resolves from the files is written beside what the scenario gives. */
Test(config, writes_what_the_files_resolve)
{
    cJSON *c = resolved_config();
    const cJSON *cl = cJSON_GetObjectItem(c, "cluster");
    const cJSON *nodes = cJSON_GetObjectItem(cl, "nodes");
    /* the node list's GPU nodes (its CPU-only node counted, not modelled: cpu_nodes false), then
     * the snapshot's two groups */
    cr_assert_eq(cJSON_GetArraySize(nodes), 3);
    const cJSON *g0 = cJSON_GetArrayItem(nodes, 0);
    cr_expect_str_eq(cJSON_GetObjectItem(g0, "name")->valuestring, "G2-8g");
    cr_expect_str_eq(cJSON_GetObjectItem(g0, "trace_model")->valuestring, "G2");
    cr_expect_str_eq(cJSON_GetObjectItem(g0, "gpu")->valuestring, "A100-SXM4-40GB");
    cr_expect_str_eq(text_of(cJSON_GetObjectItem(g0, "count")), "2");
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 2), "label")->valuestring,
                     "a100-sxm4-40gb-8g-2");
    const cJSON *tr = cJSON_GetObjectItem(cl, "trace");
    cr_expect_str_eq(text_of(cJSON_GetObjectItem(tr, "cpu_only_nodes")), "1");
    const cJSON *sn = cJSON_GetObjectItem(cl, "snapshot");
    cr_expect_str_eq(text_of(cJSON_GetObjectItem(sn, "duration_s")), "7200");
    const cJSON *jobs = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "workload"), "jobs");
    cr_assert_gt(cJSON_GetArraySize(jobs), 0);
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(jobs, 0), "name")->valuestring,
                     "snapshot-running-1");
    cJSON_Delete(c);
    /* a calibration's node identity, read from its model file */
    c = config_of_file("experiments/examples/calibrated-h100.yaml", 0);
    const cJSON *cal = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "calibration"), 0);
    cr_expect_str_eq(cJSON_GetObjectItem(cal, "gpu")->valuestring, "H100-SXM5-80GB");
    cr_expect_str_eq(cJSON_GetObjectItem(cal, "device")->valuestring, "NVIDIA H100 80GB HBM3");
    cJSON_Delete(c);
}

/* ---- round trip ------------------------------------------------------------------------------ */

/* A number's text as written (raw from out_json_number, or a cJSON number). */
static const char *num_text(const cJSON *j, char *buf, size_t n)
{
    if (cJSON_IsRaw(j)) {
        snprintf(buf, n, "%s", j->valuestring);
    } else {
        cr_assert(cJSON_IsNumber(j));
        snprintf(buf, n, "%.17g", j->valuedouble);
    }
    return buf;
}

/* A number with its unit, as scenario YAML writes it ("3600" + "s" -> "3600s"). */
static cJSON *with_unit(const cJSON *j, const char *unit)
{
    char num[64], text[80];
    snprintf(text, sizeof text, "%s%s", num_text(j, num, sizeof num), unit);
    return cJSON_CreateString(text);
}

/* An object of a custom writer whose keys carry a unit (a duration's value_s, mean_s,
 * median_s): KEY_s -> KEY: Ns; other keys copied. */
static cJSON *units_back(const cJSON *j)
{
    cJSON *o = cJSON_CreateObject();
    for (const cJSON *c = j->child; c; c = c->next) {
        size_t n = strlen(c->string);
        if (n > 2 && !strcmp(c->string + n - 2, "_s")) {
            char key[64];
            snprintf(key, sizeof key, "%.*s", (int)(n - 2), c->string);
            cJSON_AddItemToObject(o, key, with_unit(c, "s"));
        } else {
            cJSON_AddItemToObject(o, c->string, cJSON_Duplicate(c, true));
        }
    }
    return o;
}

/* sharing's resolved form {mig, mode, sharing_file, rename_by_default,
 * fail_requests_greater_than_one, rules} -> its YAML form {mig, timeslice|mps}. */
static cJSON *sharing_back(const cJSON *j)
{
    cJSON *o = cJSON_CreateObject();
    const cJSON *mig = cJSON_GetObjectItem(j, "mig");
    if (!cJSON_IsNull(mig)) {
        cJSON_AddItemToObject(o, "mig", cJSON_Duplicate(mig, true));
    }
    const char *mode = cJSON_GetObjectItem(j, "mode")->valuestring;
    if (strcmp(mode, "exclusive") != 0) {
        cJSON *r = cJSON_AddObjectToObject(o, mode);
        const cJSON *file = cJSON_GetObjectItem(j, "sharing_file");
        if (!cJSON_IsNull(file)) { /* the rules are the file's */
            cJSON_AddItemToObject(r, "file", cJSON_Duplicate(file, true));
        } else {
            const cJSON *rule = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rules"), 0);
            cJSON_AddItemToObject(r, "replicas",
                                  cJSON_Duplicate(cJSON_GetObjectItem(rule, "replicas"), true));
            cJSON_AddItemToObject(
                r, "rename_by_default",
                cJSON_Duplicate(cJSON_GetObjectItem(j, "rename_by_default"), true));
            cJSON_AddItemToObject(
                r, "fail_requests_greater_than_one",
                cJSON_Duplicate(cJSON_GetObjectItem(j, "fail_requests_greater_than_one"), true));
        }
    }
    return o;
}

static cJSON *map_back(const cfg_field *table, const cJSON *j);

/* Field f of the config object j (its value v, found under f's output key) back into `out` as
 * scenario YAML would give it. */
static void field_back(const cfg_field *f, const cJSON *j, const cJSON *v, cJSON *out)
{
    switch (f->type) {
    case CFG_DURATION:
    case CFG_SECONDS:
        cJSON_AddItemToObject(out, f->key, with_unit(v, "s"));
        return;
    case CFG_RATE:
        cJSON_AddItemToObject(out, f->key, with_unit(v, "/s"));
        return;
    case CFG_BYTES:
        cJSON_AddItemToObject(out, f->key, with_unit(v, "B"));
        return;
    case CFG_MAP:
        cJSON_AddItemToObject(out, f->key, map_back(f->sub, v));
        return;
    case CFG_SEQ: {
        if (!v->child && f->has_min && f->min >= 1) { /* written [] when not given */
            return;
        }
        cJSON *a = cJSON_AddArrayToObject(out, f->key);
        for (const cJSON *it = v->child; it; it = it->next) {
            cJSON_AddItemToArray(a, f->sub ? map_back(f->sub, it) : cJSON_Duplicate(it, true));
        }
        return;
    }
    case CFG_CUSTOM:
        break;
    default:
        if (!cJSON_IsNull(v)) { /* a null string is a string not given */
            cJSON_AddItemToObject(out, f->key, cJSON_Duplicate(v, true));
        }
        return;
    }
    /* the custom writers' shapes (experiments/scenario*.c) */
    if (!strcmp(f->key, "sharing")) {
        cJSON_AddItemToObject(out, f->key, sharing_back(v));
    } else if (!strcmp(f->key, "duration")) {
        cJSON_AddItemToObject(out, f->key, units_back(v));
    } else if (!strcmp(f->key, "nodes")) { /* "A|B" -> [A, B] */
        cJSON *a = cJSON_AddArrayToObject(out, f->key);
        char *s = strdup(v->valuestring), *save = NULL;
        for (char *t = strtok_r(s, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
            cJSON_AddItemToArray(a, cJSON_CreateString(t));
        }
        free(s);
    } else if (!strcmp(f->key, "start_time")) { /* Unix seconds -> RFC 3339 */
        char num[64], text[64];
        time_t t = (time_t)strtoll(num_text(v, num, sizeof num), NULL, 10);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
        cJSON_AddStringToObject(out, f->key, text);
    } else if (!strcmp(f->key, "gpus")) { /* gpus_min, gpus_max -> [min, max] */
        const cJSON *lo = cJSON_GetObjectItem(j, "gpus_min"),
                    *hi = cJSON_GetObjectItem(j, "gpus_max");
        char a[32], b[32];
        if (strcmp(num_text(lo, a, sizeof a), "0") || strcmp(num_text(hi, b, sizeof b), "0")) {
            cJSON *r = cJSON_AddArrayToObject(out, f->key);
            cJSON_AddItemToArray(r, cJSON_Duplicate(lo, true));
            cJSON_AddItemToArray(r, cJSON_Duplicate(hi, true));
        }
    } else if (!strcmp(f->key, "calibration")) { /* {file, gpu}; the node identity is resolved */
        if (!v->child) { /* written [] when not given; the scenario may not give [] */
            return;
        }
        cJSON *a = cJSON_AddArrayToObject(out, f->key);
        for (const cJSON *it = v->child; it; it = it->next) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddItemToObject(c, "file",
                                  cJSON_Duplicate(cJSON_GetObjectItem(it, "file"), true));
            const cJSON *gpu = cJSON_GetObjectItem(it, "gpu");
            if (!cJSON_IsNull(gpu)) {
                cJSON_AddItemToObject(c, "gpu", cJSON_Duplicate(gpu, true));
            }
            cJSON_AddItemToArray(a, c);
        }
    } else { /* request, labels, node_selector, node_index, params, files, gpu_map: as read */
        cJSON_AddItemToObject(out, f->key, cJSON_Duplicate(v, true));
    }
}

/* A config object written from `table` back into the scenario mapping it was read from. */
static cJSON *map_back(const cfg_field *table, const cJSON *j)
{
    cJSON *o = cJSON_CreateObject();
    for (const cfg_field *f = table; f->key; f++) {
        if (f->type == CFG_SELF_LOC || (f->out & (CFG_OUT_HIDDEN | CFG_OUT_ONLY))) {
            continue;
        }
        char key[128];
        const cJSON *v = f->type == CFG_CUSTOM
                             ? find_key(j, cfg_out_key(f, key, sizeof key))
                             : cJSON_GetObjectItem(j, cfg_out_key(f, key, sizeof key));
        if (v) {
            field_back(f, j, v, o);
        }
    }
    return o;
}

/* The config of every shipped scenario and of the test's own, turned back into a scenario (JSON
 * is YAML) and loaded, is written again byte for byte (under SCENARIO_NO_FILES: see the top). */
Test(config, read_back_gives_the_same_config)
{
    char **files = NULL;
    size_t n_files = shipped(&files);
    for (size_t i = 0; i < n_files + N_OWN; i++) {
        const char *name = i < n_files ? files[i] : "own.yaml";
        cJSON *c = i < n_files
                       ? config_of_file(files[i], SCENARIO_NO_FILES)
                       : config_of_text(name, own_scenarios[i - n_files], SCENARIO_NO_FILES);
        cJSON *back = map_back(scenario_schema, c);
        char *yaml = cJSON_Print(back);
        cJSON *again = config_of_text(name, yaml, SCENARIO_NO_FILES);
        char *want = cJSON_Print(c), *got = cJSON_Print(again);
        cr_expect_str_eq(got, want, "%s: read back as\n%s", name, yaml);
        free(want);
        free(got);
        free(yaml);
        cJSON_Delete(again);
        cJSON_Delete(back);
        cJSON_Delete(c);
    }
    free_list(files, n_files);
}
