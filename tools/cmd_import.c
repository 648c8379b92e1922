/* tools/cmd_import.c - `slicesim import cluster SNAPSHOT.json -o SCENARIO.yaml`: a scenario from
 * the cluster a team has, as `kubectl get nodes,pods -A -o json` prints it
 * (experiments/k8s_snapshot.h reads it).
 *
 * The scenario holds one node group per set of identical GPU nodes (each with a `label` its
 * pods' `nodes` constraints name, the labels its nodes share and their taints) and one job class
 * per set of alike GPU pods: running pods are submitted in the first milliseconds (one every
 * millisecond, in snapshot order), each on its node (`nodes` and `node_index`: spec.nodeName);
 * pending pods follow with their nodeSelector and tolerations (and, where a required node
 * affinity narrows them, the `nodes` it admits). A snapshot does not say when a pod ends: each runs for --duration
 * (default: the horizon, i.e. to the end). The scheduler is k8s (kube-scheduler's default), and
 * pods' priorities keep their order (spec.priority values ranked from 0). The text is loaded as a
 * scenario before it is written (a MIG config the --mig-parted file lacks is refused there); on
 * any error nothing is written. Exit 0, 2 on bad input or usage, 1 when a file cannot be read or
 * written. */
#include "tools/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/fileio.h"
#include "experiments/k8s_snapshot.h"
#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"

#define CMD "import"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: slicesim import cluster SNAPSHOT.json -o SCENARIO.yaml [--name NAME]\n"
            "                       [--mig-parted FILE] [--horizon DURATION]\n"
            "                       [--duration DURATION] [--seed N]\n"
            "  Writes a scenario of the cluster in SNAPSHOT.json (kubectl get nodes,pods -A -o\n"
            "  json):"
            " node groups of identical GPU nodes (GPU feature discovery labels, allocatable CPU\n"
            "  and memory, taints) and job classes of the running and pending GPU pods, placed\n"
            "  where their node, tolerations, nodeSelector and node affinity allow.\n"
            "  --name NAME          scenario name (default: the output file's name less .yaml)\n"
            "  --mig-parted FILE    the mig-parted config the nodes' nvidia.com/mig.config labels\n"
            "                       name, written as given (resolved against SCENARIO.yaml's\n"
            "                       directory); needed when a node has MIG on\n"
            "  --horizon DURATION   simulated time (default 24h)\n"
            "  --duration DURATION  how long each imported pod runs (default: the horizon)\n"
            "  --seed N             the scenario's seed (default 1)\n"
            "\n"
            "usage: slicesim import workload MANIFEST|DIR... --cluster SCENARIO.yaml -o OUT.yaml\n"
            "                       [--rate R | --interval D] [--count N] [--duration D]\n"
            "  Writes SCENARIO.yaml with its workload replaced by one job class per batch/v1 Job,\n"
            "  v1 Pod and kubeflow.org/v1 PyTorchJob of the manifests (YAML files, several\n"
            "  documents each; a directory: its *.yaml and *.yml): requests, workers (Master and\n"
            "  Worker replicas as one gang), priority (the manifests' PriorityClass values).\n"
            "  Arrivals, count and run time from the annotations slicesim.io/rate or interval,\n"
            "  slicesim.io/count, slicesim.io/duration (and slicesim.io/profile), else the\n"
            "  options.\n");
}

typedef struct opts {
    const char *snapshot, *out, *name, *mig_parted, *horizon, *duration, *seed;
} opts;

/* A duration the scenario language reads: a positive number and one of ms, s, m, h, d. */
static bool duration_ok(const char *s)
{
    double v;
    char *end;
    errno = 0;
    v = strtod(s, &end);
    return end != s && errno == 0 && v > 0 && v < 1e9 &&
           (!strcmp(end, "ms") || !strcmp(end, "s") || !strcmp(end, "m") || !strcmp(end, "h") ||
            !strcmp(end, "d"));
}

static void put_bytes(FILE *f, const char *key, uint64_t b)
{
    static const struct {
        const char *unit;
        uint64_t size;
    } u[] = {{"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10}, {"B", 1}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        if (b % u[i].size == 0) {
            fprintf(f, "%s: %" PRIu64 "%s\n", key, b / u[i].size, u[i].unit);
            return;
        }
    }
}

/* Up to `max` names of a list, then "and N more". */
static void put_names(FILE *f, const char *const *names, size_t n, size_t max)
{
    for (size_t i = 0; i < n && i < max; i++) {
        fprintf(f, "%s%s", i ? ", " : "", names[i]);
    }
    if (n > max) {
        fprintf(f, " and %zu more", n - max);
    }
}

/* A YAML double-quoted scalar (labels and taints may hold any text in a snapshot). */
static void put_q(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\x%02X", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* `key: {"k": "v", ...}` of a label mapping (nothing when empty). */
static void put_labels(FILE *f, const char *indent, const char *key, const taint_label *l, size_t n)
{
    if (n == 0) {
        return;
    }
    fprintf(f, "%s%s:\n", indent, key);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s  ", indent);
        put_q(f, l[i].key);
        fputs(": ", f);
        put_q(f, l[i].value);
        fputc('\n', f);
    }
}

void import_put_place(FILE *f, const taint_pod *p)
{
    put_labels(f, "      ", "node_selector", p->selector, p->n_selector);
    if (p->n_tolerations) {
        fprintf(f, "      tolerations:\n");
        for (size_t q = 0; q < p->n_tolerations; q++) {
            const taint_toleration *t = &p->tolerations[q];
            fprintf(f, "        - {");
            if (t->key[0]) { /* absent: every key (with Exists) */
                fprintf(f, "key: ");
                put_q(f, t->key);
                fprintf(f, ", ");
            }
            fprintf(f, "operator: %s", t->exists ? "Exists" : "Equal");
            if (!t->exists && t->value[0]) {
                fprintf(f, ", value: ");
                put_q(f, t->value);
            }
            if (t->effect != TAINT_ANY) {
                fprintf(f, ", effect: %s", taint_effect_name(t->effect));
            }
            fprintf(f, "}\n");
        }
    }
}

static void write_group(FILE *f, const k8s_group *g, const opts *o)
{
    fprintf(f, "    - name: %s\n", g->name);
    fprintf(f, "      # %zu node%s: ", g->n_nodes, g->n_nodes == 1 ? "" : "s");
    put_names(f, g->nodes, g->n_nodes, 6);
    fprintf(f, "\n      # nvidia.com/gpu.product %s", g->product);
    for (size_t t = 0; t < g->n_taints; t++) {
        fprintf(f, "%s%s%s%s:%s", t ? ", " : "; taints ", g->taints[t].key,
                g->taints[t].value[0] ? "=" : "", g->taints[t].value, g->taints[t].effect);
    }
    fprintf(f, "\n      label: %s\n      count: %zu\n      gpu: %s\n      gpus_per_node: %u\n",
            g->name, g->n_nodes, g->gpu, g->gpus_per_node);
    if (!g->mig_config && g->sharing == K8S_SHARE_NONE) {
        fprintf(f, "      sharing: whole\n");
    } else {
        fprintf(f, "      sharing:\n");
        if (g->mig_config) {
            fprintf(f, "        mig: {file: %s, config: %s, strategy: %s}\n", o->mig_parted,
                    g->mig_config, g->mig_strategy == K8S_MIG_SINGLE ? "single" : "mixed");
        }
        if (g->sharing != K8S_SHARE_NONE) {
            fprintf(f, "        %s: {replicas: %u, rename_by_default: %s}\n",
                    g->sharing == K8S_SHARE_MPS ? "mps" : "timeslice", g->replicas,
                    g->rename_by_default ? "true" : "false");
        }
    }
    if (g->cpu_milli) {
        fprintf(f, "      cpu_milli: %" PRIu64 "\n", g->cpu_milli);
    }
    if (g->mem_bytes) {
        fprintf(f, "      ");
        put_bytes(f, "host_memory", g->mem_bytes);
    }
    put_labels(f, "      ", "labels", g->labels, g->n_labels);
    if (g->n_taints) {
        fprintf(f, "      taints:\n");
        for (size_t t = 0; t < g->n_taints; t++) {
            fprintf(f, "        - {key: ");
            put_q(f, g->taints[t].key);
            if (g->taints[t].value[0]) { /* absent: the empty value */
                fprintf(f, ", value: ");
                put_q(f, g->taints[t].value);
            }
            fprintf(f, ", effect: %s}\n", g->taints[t].effect);
        }
    }
}

static void write_class(FILE *f, const k8s_snapshot *s, size_t i, int serial, const opts *o)
{
    const k8s_pod_class *k = &s->classes[i];
    fprintf(f, "    - name: %s-%d\n      # %zu pod%s: ", k->running ? "running" : "pending", serial,
            k->n_pods, k->n_pods == 1 ? "" : "s");
    put_names(f, k->pods, k->n_pods, 4);
    fprintf(f, "\n");
    if (k->priority_class || k->priority) {
        fprintf(f, "      # priority %" PRId32 "%s%s\n", k->priority,
                k->priority_class ? ", class " : "", k->priority_class ? k->priority_class : "");
    }
    fprintf(f, "      arrival: fixed\n      interval: 1ms\n");
    if (!k->running) { /* after every running pod: those hold their nodes from the start */
        fprintf(f, "      start: %zums\n", k8s_running_most(s));
    }
    fprintf(f, "      count: %zu\n", k->n_pods);
    fprintf(f, "      duration: %s\n", o->duration ? o->duration : o->horizon);
    fprintf(f, "      request: {%s: %u}\n", k->resource, k->count);
    fprintf(f, "      priority: %d\n", k8s_priority_rank(s, k->priority));
    if (k->groups) { /* a running pod's group, or what a pending one's node affinity admits */
        fprintf(f, "      nodes: [");
        for (const char *p = k->groups; *p; p++) {
            fputs(*p == '|' ? ", " : (char[]){*p, 0}, f);
        }
        fprintf(f, "]\n");
    }
    if (k->node_index) { /* each running pod on its node (spec.nodeName) */
        fprintf(f, "      node_index: [");
        for (size_t q = 0; q < k->n_pods; q++) {
            fprintf(f, "%s%" PRIu32, q ? ", " : "", k->node_index[q]);
        }
        fprintf(f, "]\n");
    }
    import_put_place(f, &k->place);
    if (k->cpu_milli) {
        fprintf(f, "      cpu_milli: %" PRIu64 "\n", k->cpu_milli);
    }
    if (k->mem_bytes) {
        fprintf(f, "      ");
        put_bytes(f, "host_memory", k->mem_bytes);
    }
}

static void write_scenario(FILE *f, const k8s_snapshot *s, const opts *o)
{
    size_t running = 0;
    for (size_t i = 0; i < s->n_classes; i++) {
        running += s->classes[i].running ? s->classes[i].n_pods : 0;
    }
    fprintf(f,
            "# Written by `slicesim import cluster %s` from kubectl get nodes,pods -A -o json.\n"
            "# %zu GPU node%s in %zu group%s (%zu node%s without GPUs left out); %zu GPU pod%s in "
            "%zu class%s\n# (%zu running, %zu pending; %zu pod%s left out: finished or asking for "
            "no GPU).\n"
            "# Running pods arrive one a millisecond, each on its node (node_index), pending ones\n"
            "# after them, where their nodeSelector and tolerations allow; a snapshot does not say\n"
            "# when a pod ends: each runs for the duration below.\n",
            o->snapshot, s->n_gpu_nodes, s->n_gpu_nodes == 1 ? "" : "s", s->n_groups,
            s->n_groups == 1 ? "" : "s", s->n_cpu_nodes, s->n_cpu_nodes == 1 ? "" : "s",
            s->n_pods, s->n_pods == 1 ? "" : "s", s->n_classes, s->n_classes == 1 ? "" : "es",
            running, s->n_pods - running, s->n_pods_skipped, s->n_pods_skipped == 1 ? "" : "s");
    fprintf(f, "name: %s\nseed: %s\nhorizon: %s\n\ncluster:\n  nodes:\n", o->name, o->seed,
            o->horizon);
    for (size_t g = 0; g < s->n_groups; g++) {
        write_group(f, &s->groups[g], o);
    }
    if (s->n_classes) {
        fprintf(f, "\nworkload:\n  jobs:\n");
        int serial[2] = {0, 0};
        for (int pass = 1; pass >= 0; pass--) { /* running pods first */
            for (size_t i = 0; i < s->n_classes; i++) {
                if (s->classes[i].running == (pass == 1)) {
                    write_class(f, s, i, ++serial[pass], o);
                }
            }
        }
    }
    fprintf(f, "\npolicy:\n  scheduler: k8s\n");
}

typedef struct text {
    const char *buf;
    size_t len;
} text;

static void write_text(FILE *f, const void *arg)
{
    const text *t = arg;
    fwrite(t->buf, 1, t->len, f);
}

static int parse_args(int argc, char **argv, opts *o)
{
    static const char *const names[] = {"-o", "--name", "--mig-parted", "--horizon",
                                        "--duration", "--seed"};
    const char **const dst[] = {&o->out, &o->name, &o->mig_parted, &o->horizon, &o->duration,
                                &o->seed};
    if (argc < 2 || strcmp(argv[1], "cluster")) {
        return cli_usage_error(CMD, "expected: import cluster SNAPSHOT.json -o SCENARIO.yaml, or "
                                    "import workload MANIFEST... --cluster SCENARIO.yaml -o "
                                    "OUT.yaml, got '%s'",
                               argc < 2 ? "" : argv[1]);
    }
    for (int i = 2; i < argc; i++) {
        int r = cli_option_value(CMD, argc, argv, &i, names, dst, 6);
        if (r < 0) {
            return CLI_EXIT_INPUT;
        }
        if (r == 0) {
            if (argv[i][0] == '-' || o->snapshot) {
                return cli_usage_error(CMD, "unexpected argument '%s'; expected: import cluster "
                                            "SNAPSHOT.json -o SCENARIO.yaml [options]",
                                       argv[i]);
            }
            o->snapshot = argv[i];
        }
    }
    if (!o->snapshot || !o->out) {
        return cli_usage_error(CMD, "expected: import cluster SNAPSHOT.json -o SCENARIO.yaml");
    }
    uint64_t seed;
    if (o->seed && !cli_parse_u64(o->seed, 0, UINT64_MAX, &seed)) {
        return cli_usage_error(CMD, "--seed: expected an unsigned integer, got '%s'", o->seed);
    }
    const char *const *durs[] = {&o->horizon, &o->duration};
    for (int k = 0; k < 2; k++) {
        if (*durs[k] && !duration_ok(*durs[k])) {
            return cli_usage_error(CMD, "%s: expected a duration like 90m or 24h, got '%s'",
                                   k ? "--duration" : "--horizon", *durs[k]);
        }
    }
    return CLI_EXIT_OK;
}

/* The default name: the output's base name less .yaml/.yml. */
static const char *default_name(const char *out, arena *a)
{
    const char *b = strrchr(out, '/');
    b = b ? b + 1 : out;
    size_t n = strlen(b);
    if (n > 5 && !strcmp(b + n - 5, ".yaml")) {
        n -= 5;
    } else if (n > 4 && !strcmp(b + n - 4, ".yml")) {
        n -= 4;
    }
    return arena_strndup(a, b, n);
}

static int import_cluster(const opts *o, arena *a, diag *d)
{
    gpu_catalog cat;
    int st = cli_load_catalog(CMD, NULL, NULL, a, d, &cat, NULL);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    k8s_snapshot snap;
    int rc = k8s_snapshot_load_file(o->snapshot, &cat, a, d, &snap);
    if (rc != 0) {
        return cli_load_status(CMD, o->snapshot, rc, d);
    }
    for (size_t g = 0; g < snap.n_groups; g++) {
        if (snap.groups[g].mig_config && !o->mig_parted) {
            return cli_usage_error(CMD,
                                   "the nodes of group %s have MIG on (nvidia.com/mig.config=%s); "
                                   "expected --mig-parted FILE, the mig-parted config it names",
                                   snap.groups[g].name, snap.groups[g].mig_config);
        }
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        fprintf(stderr, "slicesim %s: error: %s\n", CMD, strerror(errno));
        return CLI_EXIT_ENV;
    }
    write_scenario(f, &snap, o);
    fclose(f);
    /* what was written must load: a MIG config missing from --mig-parted, a class no group can
     * hold, are refused here, naming the line of the scenario text */
    scenario_spec *spec;
    char *dir = arena_strdup(a, o->out);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
    }
    rc = scenario_load_buffer(o->out, slash ? dir : ".", buf, len, NULL, 0, 0, a, d, &spec);
    if (rc == 0) {
        text t = {buf, len};
        rc = fileio_write_atomic(o->out, write_text, &t);
        if (rc != 0) {
            fprintf(stderr, "slicesim %s: error: cannot write '%s': %s\n", CMD, o->out,
                    strerror(errno));
            free(buf);
            return CLI_EXIT_ENV;
        }
        printf("%s: %zu node group(s), %zu job class(es) of %zu pod(s); left out: %zu node(s) "
               "without GPUs, %zu pod(s)\n",
               o->out, snap.n_groups, snap.n_classes, snap.n_pods, snap.n_cpu_nodes,
               snap.n_pods_skipped);
    } else {
        fprintf(stderr, "slicesim %s: error: the scenario written from '%s' does not load:\n",
                CMD, o->snapshot);
        diag_print(d, stderr);
    }
    free(buf);
    return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}

int cmd_import(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "workload")) {
        for (int i = 2; i < argc; i++) {
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                usage(stdout);
                return CLI_EXIT_OK;
            }
        }
        return cmd_import_workload(argc, argv);
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
    }
    opts o = {0};
    int st = parse_args(argc, argv, &o);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    o.horizon = o.horizon ? o.horizon : "24h";
    o.seed = o.seed ? o.seed : "1";
    arena *a = arena_create();
    diag *d = diag_create();
    if (!o.name) {
        o.name = default_name(o.out, a);
    }
    st = import_cluster(&o, a, d);
    diag_destroy(d);
    arena_destroy(a);
    return st;
}
